/* 07-split-cow-leak — fork with PMD-mapped THPs, then one side splits its
 * huge PMD (mprotect a 4 KiB hole read-only and back, as pmdstress's
 * mprotect stressor does) and writes into the now PTE-mapped THP.  The other
 * side still maps the THP with its huge PMD and must keep seeing the
 * pre-fork data.  Seeing the writer's post-fork stamp is a COW_LEAK
 * (mutant 07: do_wp_page reuses a subpage whose only PTE mapping is ours,
 * ignoring the other process's PMD mapping).  Both directions are tried:
 * parent splits+writes, then child splits+writes. */
#include "common.h"

#define NHUGE 2
#define LEN (NHUGE * HPAGE_SZ)
#define NPAGES (LEN / PAGE_SZ)

static char *r;

static void fill(uint64_t g, uint64_t slot)
{
    for (uint64_t p = 0; p < NPAGES; p++)
        ((volatile uint64_t *)(r + p * PAGE_SZ))[slot] = stamp(g, p, slot);
}

static long check(uint64_t g, uint64_t slot)
{
    long bad = 0;
    for (uint64_t p = 0; p < NPAGES; p++)
        bad += ((volatile uint64_t *)(r + p * PAGE_SZ))[slot] != stamp(g, p, slot);
    return bad;
}

static void split_all(void)
{
    for (int h = 0; h < NHUGE; h++) {
        char *hole = r + h * HPAGE_SZ + 17 * PAGE_SZ;
        if (mprotect(hole, PAGE_SZ, PROT_READ) || mprotect(hole, PAGE_SZ, PROT_READ | PROT_WRITE))
            skip("mprotect: %s", strerror(errno));
    }
}

int main(int argc, char **argv)
{
    repro_init("07-split-cow-leak", argc, argv);
    if (!thp_available())
        skip("transparent hugepages disabled");
    r = map_aligned(LEN);
    madv(r, LEN, MADV_HUGEPAGE);
    long leaks = 0, rounds = 0, huge_min = -1;
    double end = now_s() + repro_seconds;
    for (uint64_t g = 2; now_s() < end && rounds < 40; g += 2, rounds++) {
        int child_splits = rounds & 1;
        /* fresh VMA each round: a split THP keeps its page table after a
         * zap, so only a new mapping gets huge PMDs again */
        munmap(r, LEN);
        r = map_aligned(LEN);
        madv(r, LEN, MADV_HUGEPAGE);
        fill(g, 0);
        long kb = anon_huge_kb(r);
        if (huge_min < 0 || kb < huge_min)
            huge_min = kb;
        int p2c[2], c2p[2];
        char c;
        if (pipe(p2c) || pipe(c2p))
            skip("pipe");
        pid_t pid = fork();
        if (pid < 0)
            skip("fork: %s", strerror(errno));
        if (pid == 0) {
            long bad = 0;
            if (child_splits) {
                split_all();
                fill(g + 1, 0);
                if (write(c2p[1], "x", 1) != 1 || read(p2c[0], &c, 1) != 1)
                    _exit(3);
            } else {
                if (read(p2c[0], &c, 1) != 1)
                    _exit(3);
                bad = check(g, 0);
            }
            _exit(bad ? 1 : 0);
        }
        long bad = 0;
        if (child_splits) {
            if (read(c2p[0], &c, 1) != 1)
                skip("pipe io");
            bad = check(g, 0);
            if (write(p2c[1], "x", 1) != 1)
                skip("pipe io");
        } else {
            split_all();
            fill(g + 1, 0);
            if (write(p2c[1], "x", 1) != 1)
                skip("pipe io");
        }
        int st;
        waitpid(pid, &st, 0);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 1)
            bad++;
        if (bad && (repro_verbose || leaks < 5))
            printf("round %ld (%s split+wrote): COW_LEAK, %ld pages changed on the other side\n",
                   rounds, child_splits ? "child" : "parent", bad);
        leaks += bad;
        close(p2c[0]); close(p2c[1]); close(c2p[0]); close(c2p[1]);
    }
    if (huge_min <= 0)
        printf("note: some round had no THP at fork (AnonHugePages %ld kB)\n", huge_min);
    return finish(leaks, "(COW_LEAK pages %ld in %ld rounds; min AnonHugePages at fork %ld kB)",
                  leaks, rounds, huge_min);
}
