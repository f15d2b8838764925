/* 06-fork-vs-migrate — a migrator thread keeps bouncing PMD-mapped THPs
 * between NUMA nodes 0 and 1 (move_pages, which does not hold mmap_lock while
 * migrating) while the main thread forks repeatedly.  After each fork the
 * parent writes a new generation; the child must still see the old one, and
 * the child's own writes must not show up in the parent.  A leak either way
 * is a COW_LEAK (mutant 06: fork copied a writable PMD migration entry, so
 * both processes end up with a writable mapping of the migrated THP).  With
 * CONFIG_DEBUG_VM the mutant instead trips a VM_BUG_ON in page_add_anon_rmap
 * ("kernel BUG at mm/rmap.c"), which the runner sees in the console log. */
#include "common.h"

#define NHUGE 4
#define LEN (NHUGE * HPAGE_SZ)
#define NPAGES (LEN / PAGE_SZ)

static char *volatile region;
static volatile int stop;
static long moves_ok;

static void *migrator(void *arg)
{
    (void)arg;
    void *pages[NHUGE];
    int nodes[NHUGE], status[NHUGE];
    for (int target = 1; !stop; target ^= 1) {
        char *r = region;              /* main remaps it every round */
        for (int h = 0; h < NHUGE; h++) {
            pages[h] = r + h * HPAGE_SZ;
            nodes[h] = target;
        }
        move_pages_sys(NHUGE, pages, nodes, status);
        for (int h = 0; h < NHUGE; h++)
            moves_ok += status[h] == target;
    }
    return NULL;
}

static long check(uint64_t g, uint64_t slot)
{
    long bad = 0;
    for (uint64_t p = 0; p < NPAGES; p++)
        bad += ((volatile uint64_t *)(region + p * PAGE_SZ))[slot] != stamp(g, p, slot);
    return bad;
}

static void fill(uint64_t g, uint64_t slot)
{
    for (uint64_t p = 0; p < NPAGES; p++)
        ((volatile uint64_t *)(region + p * PAGE_SZ))[slot] = stamp(g, p, slot);
}

int main(int argc, char **argv)
{
    repro_init("06-fork-vs-migrate", argc, argv);
    if (!thp_available())
        skip("transparent hugepages disabled");
    if (numa_nodes() < 2)
        skip("needs >= 2 NUMA nodes");
    region = map_aligned(LEN);
    madv(region, LEN, MADV_HUGEPAGE);
    fill(1, 0);
    fill(1, 1);
    long huge0 = anon_huge_kb(region), huge_min = huge0;
    pthread_t m;
    pthread_create(&m, NULL, migrator, NULL);
    long leaks = 0, forks = 0;
    double end = now_s() + repro_seconds;
    for (uint64_t g = 2; now_s() < end; g += 2, forks++) {
        /* Fresh PMD-mapped THPs every round: the parent's post-fork write
         * splits its huge PMDs (COW of a shared THP falls back to PTEs), so
         * only a new mapping is PMD-mapped again.  The old mapping is kept
         * until the new one is populated so the addresses differ. */
        char *old = region;
        char *nr = map_aligned(LEN);
        madv(nr, LEN, MADV_HUGEPAGE);
        for (uint64_t p = 0; p < NPAGES; p++)
            ((volatile uint64_t *)(nr + p * PAGE_SZ))[0] = stamp(g, p, 0);
        region = nr;
        munmap(old, LEN);
        fill(g, 0);
        fill(g, 1);
        long kb = anon_huge_kb(region);
        if (kb < huge_min)
            huge_min = kb;
        usleep(1000);   /* let the migrator pick the new mapping up */
        int p2c[2], c2p[2];
        char c;
        if (pipe(p2c) || pipe(c2p))
            skip("pipe");
        pid_t pid = fork();
        if (pid < 0)
            skip("fork: %s", strerror(errno));
        if (pid == 0) {
            if (read(p2c[0], &c, 1) != 1)
                _exit(3);
            long bad = check(g, 0);        /* parent wrote g+1 into slot 0 */
            fill(g + 1, 1);                /* child writes g+1 into slot 1 */
            if (write(c2p[1], "x", 1) != 1)
                _exit(3);
            _exit(bad ? 1 : 0);
        }
        fill(g + 1, 0);
        if (write(p2c[1], "x", 1) != 1 || read(c2p[0], &c, 1) != 1)
            skip("pipe io");
        long bad = check(g, 1);            /* must not see the child's g+1 */
        int st;
        waitpid(pid, &st, 0);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 1)
            bad++;
        if (bad && (repro_verbose || leaks < 5))
            printf("fork %ld: COW_LEAK (%ld pages / child status %d)\n", forks, bad, WEXITSTATUS(st));
        leaks += bad;
        close(p2c[0]); close(p2c[1]); close(c2p[0]); close(c2p[1]);
    }
    stop = 1;
    pthread_join(m, NULL);
    if (moves_ok == 0)
        skip("move_pages never moved a THP");
    return finish(leaks, "(COW_LEAK %ld in %ld forks; %ld THP moves; AnonHugePages at start %ld kB, min at fork %ld kB)",
                  leaks, forks, moves_ok, huge0, huge_min);
}
