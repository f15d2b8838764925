/* 05-migrate-thp-write — a writer thread keeps incrementing a per-page
 * counter in PMD-mapped THPs (reads it back first: it must equal the value it
 * last wrote) while a migrator thread bounces the THPs between NUMA nodes
 * 0 and 1 with move_pages() and, after each move, zaps a small populated
 * scratch area (a >33-page MADV_DONTNEED forces a full TLB flush of the mm,
 * as pmdstress's zap stressor would).  Reading back an older value is a
 * LOST_WRITE/STALE: a write went to the old copy of a migrated page
 * (mutant 05: no TLB flush when the PMD migration entry is installed). */
#include "common.h"

#define NHUGE 2
#define LEN (NHUGE * HPAGE_SZ)
#define NPAGES (LEN / PAGE_SZ)
#define SCRATCH (64 * PAGE_SZ)

static char *region, *scratch;
static volatile int stop;
static long lost, writes, moves, move_errs, moved_ok;

static void *writer(void *arg)
{
    (void)arg;
    static uint64_t expect[NPAGES];
    while (!stop) {
        for (uint64_t p = 0; p < NPAGES; p++) {
            volatile uint64_t *s = (volatile uint64_t *)(region + p * PAGE_SZ);
            uint64_t v = *s;
            if (v != expect[p]) {
                if (repro_verbose || lost < 5)
                    printf("page %" PRIu64 ": read %" PRIu64 ", last wrote %" PRIu64 " (%s)\n", p, v,
                           expect[p], v < expect[p] ? "LOST_WRITE/STALE" : "FOREIGN");
                lost++;
            }
            expect[p] = v + 1 > expect[p] + 1 ? v + 1 : expect[p] + 1;
            *s = expect[p];
            writes++;
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    repro_init("05-migrate-thp-write", argc, argv);
    if (!thp_available())
        skip("transparent hugepages disabled");
    if (numa_nodes() < 2)
        skip("needs >= 2 NUMA nodes");
    region = map_aligned(LEN);
    madv(region, LEN, MADV_HUGEPAGE);
    memset(region, 0, LEN);
    scratch = map_aligned(SCRATCH);
    madv(scratch, SCRATCH, MADV_NOHUGEPAGE);
    long huge0 = anon_huge_kb(region);
    pthread_t w;
    pthread_create(&w, NULL, writer, NULL);

    void *pages[NHUGE];
    int nodes[NHUGE], status[NHUGE];
    double end = now_s() + repro_seconds;
    for (int target = 1; now_s() < end; target ^= 1) {
        for (int h = 0; h < NHUGE; h++) {
            pages[h] = region + h * HPAGE_SZ;
            nodes[h] = target;
        }
        long r = move_pages_sys(NHUGE, pages, nodes, status);
        if (r < 0) {
            if (errno == ENOSYS)
                skip("move_pages: ENOSYS");
            move_errs++;
        }
        for (int h = 0; h < NHUGE; h++)
            moved_ok += status[h] == target;
        moves++;
        memset(scratch, 1, SCRATCH);
        madvise(scratch, SCRATCH, MADV_DONTNEED);
        usleep(2000);
    }
    stop = 1;
    pthread_join(w, NULL);
    long huge1 = anon_huge_kb(region);
    if (moved_ok == 0)
        skip("move_pages never moved anything (errors %ld)", move_errs);
    return finish(lost, "(LOST_WRITE/STALE %ld in %ld writes; %ld move_pages calls, %ld THP moves; AnonHugePages %ld -> %ld kB)",
                  lost, writes, moves, moved_ok, huge0, huge1);
}
