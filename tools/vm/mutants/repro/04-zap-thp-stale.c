/* 04-zap-thp-stale — write all pages of PMD-mapped THPs, read them back (TLB
 * warm), MADV_DONTNEED whole 2 MiB ranges, then read immediately: every byte
 * must be zero.  An old stamp after the zap is NONZERO_AFTER_ZAP (and STALE:
 * that generation's data survived the zap).  Mutant 04 skips the TLB flush for
 * zapped huge PMDs, so this CPU keeps reading the freed THP.  A second thread
 * can do the same on its own THPs (PMD_REPRO_THREADS=2), but concurrent
 * zaps in one mm make tlb_finish_mmu() flush everything (mm_tlb_flush_nested)
 * and hide the bug, so the default is one thread. */
#include "common.h"

#define NHUGE 2
#define LEN (NHUGE * HPAGE_SZ)
#define NPAGES (LEN / PAGE_SZ)
#define NTHREADS 2
#define WARM 64
static int nthreads = 1;

static double end;
static long total_bad[NTHREADS], total_gen[NTHREADS], huge_seen[NTHREADS];

static void *run(void *arg)
{
    long id = (long)arg;
    char *r = map_aligned(LEN);
    madv(r, LEN, MADV_HUGEPAGE);
    for (uint64_t g = 1; now_s() < end; g++) {
        uint64_t sum = 0;
        for (uint64_t p = 0; p < NPAGES; p++)
            ((volatile uint64_t *)(r + p * PAGE_SZ))[0] = stamp(g, p, id);
        if (g == 1 || (g & 63) == 0) {
            /* smaps only now and then: its syscalls and allocations can
             * cause TLB flushes of their own, hiding the bug */
            long kb = anon_huge_kb(r);
            if (kb > huge_seen[id])
                huge_seen[id] = kb;
        }
        /* Re-read a small warm set right before the zap: a (direct-mapped,
         * a few hundred entries on TCG) TLB cannot hold all NPAGES
         * translations, and checking page p after the zap faults in a new
         * translation that evicts the stale entry of page p+256. */
        for (uint64_t p = 0; p < WARM; p++)
            sum += ((volatile uint64_t *)(r + p * PAGE_SZ))[0];
        (void)sum;
        madv(r, LEN, MADV_DONTNEED);
        for (uint64_t p = 0; p < NPAGES; p++) {
            uint64_t v = ((volatile uint64_t *)(r + p * PAGE_SZ))[0];
            if (v) {
                if (repro_verbose || total_bad[id] < 3)
                    printf("thread %ld gen %" PRIu64 " page %" PRIu64 ": NONZERO_AFTER_ZAP 0x%" PRIx64 "%s\n",
                           id, g, p, v, v == stamp(g, p, id) ? " (STALE: this generation's stamp)" : "");
                total_bad[id]++;
            }
        }
        total_gen[id]++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    repro_init("04-zap-thp-stale", argc, argv);
    if (!thp_available())
        skip("transparent hugepages disabled");
    end = now_s() + repro_seconds;
    if (getenv("PMD_REPRO_THREADS"))
        nthreads = atoi(getenv("PMD_REPRO_THREADS")) == 2 ? 2 : 1;
    pthread_t t[NTHREADS];
    for (long i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, run, (void *)i);
    long bad = 0, gens = 0, huge = 0;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(t[i], NULL);
        bad += total_bad[i];
        gens += total_gen[i];
        huge = huge_seen[i] > huge ? huge_seen[i] : huge;
    }
    if (huge <= 0)
        skip("no THP was ever mapped");
    return finish(bad, "(NONZERO_AFTER_ZAP pages %ld in %ld zaps of %lu MiB; max AnonHugePages %ld kB)",
                  bad, gens, LEN >> 20, huge);
}
