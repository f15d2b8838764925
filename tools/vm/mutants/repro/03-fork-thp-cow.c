/* 03-fork-thp-cow — fork with PMD-mapped THPs, then check COW isolation in
 * both directions:
 *   parent writes generation g+1 after fork -> child must still read g;
 *   child writes its own marker            -> parent must not see it.
 * Seeing the other side's post-fork stamp is a COW_LEAK (mutant 03: the
 * parent's huge PMD was not write-protected at fork). */
#include "common.h"

#define NHUGE 4
#define LEN (NHUGE * HPAGE_SZ)
#define NPAGES (LEN / PAGE_SZ)

static long check(char *r, uint64_t g, uint64_t slot, const char *who)
{
    long bad = 0;
    for (uint64_t p = 0; p < NPAGES; p++) {
        uint64_t v = ((volatile uint64_t *)(r + p * PAGE_SZ))[slot];
        if (v != stamp(g, p, slot)) {
            if (repro_verbose || bad < 3)
                printf("%s: page %" PRIu64 " slot %" PRIu64 " has 0x%" PRIx64 " want gen %" PRIu64 "%s\n",
                       who, p, slot, v, g, v == stamp(g + 1, p, slot) ? " (COW_LEAK: other side's write)" : "");
            bad++;
        }
    }
    return bad;
}

static void fill(char *r, uint64_t g, uint64_t slot)
{
    for (uint64_t p = 0; p < NPAGES; p++)
        ((volatile uint64_t *)(r + p * PAGE_SZ))[slot] = stamp(g, p, slot);
}

int main(int argc, char **argv)
{
    repro_init("03-fork-thp-cow", argc, argv);
    if (!thp_available())
        skip("transparent hugepages disabled");
    char *r = NULL;
    long leaks = 0, rounds = 0, huge_min = -1;
    double end = now_s() + repro_seconds;
    for (uint64_t g = 2; now_s() < end && rounds < 50; g += 2, rounds++) {
        /* fresh VMA each round: a split THP keeps its page table after a
         * zap, so only a new mapping gets huge PMDs again */
        if (r)
            munmap(r, LEN);
        r = map_aligned(LEN);
        madv(r, LEN, MADV_HUGEPAGE);
        fill(r, g, 0);
        fill(r, g, 1);
        long kb = anon_huge_kb(r);
        if (huge_min < 0 || kb < huge_min)
            huge_min = kb;
        int p2c[2], c2p[2];
        if (pipe(p2c) || pipe(c2p))
            skip("pipe");
        pid_t pid = fork();
        if (pid < 0)
            skip("fork: %s", strerror(errno));
        char c;
        if (pid == 0) {
            long bad;
            /* child: wait until the parent wrote g+1, then check it still sees g */
            if (read(p2c[0], &c, 1) != 1)
                _exit(3);
            bad = check(r, g, 0, "child");
            fill(r, g + 1, 1);          /* child's own post-fork write */
            if (write(c2p[1], "x", 1) != 1)
                _exit(3);
            if (read(p2c[0], &c, 1) != 1)
                _exit(3);
            _exit(bad ? 1 : 0);
        }
        fill(r, g + 1, 0);              /* parent's post-fork write */
        if (write(p2c[1], "x", 1) != 1 || read(c2p[0], &c, 1) != 1)
            skip("pipe io");
        long bad = check(r, g, 1, "parent");
        if (write(p2c[1], "x", 1) != 1)
            skip("pipe io");
        int st;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) > 1)
            printf("round %ld: child died (status 0x%x)\n", rounds, st);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 1)
            bad++;
        leaks += bad;
        close(p2c[0]); close(p2c[1]); close(c2p[0]); close(c2p[1]);
    }
    if (huge_min <= 0)
        printf("note: AnonHugePages dropped to %ld kB before some fork\n", huge_min);
    return finish(leaks, "(COW_LEAK %ld (pages seen by the parent + rounds whose child saw a leak) in %ld fork rounds; min AnonHugePages at fork %ld kB)",
                  leaks, rounds, huge_min);
}
