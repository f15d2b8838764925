/* 02-thp-fault-race — two threads write-fault the same empty 2 MiB ranges of
 * a MADV_HUGEPAGE region at the same time (thread i writes slot i of every
 * 4 KiB page, both starting at the same huge page), so both take the huge
 * PMD first-touch fault concurrently.  After a barrier every slot must hold
 * its stamp; a zero slot is a LOST_WRITE (mutant 02: the loser overwrote the
 * winner's huge PMD).  The region is zapped between generations. */
#include "common.h"

#define NHUGE 4
#define NTHREADS 2
#define LEN (NHUGE * HPAGE_SZ)
#define NPAGES (LEN / PAGE_SZ)

static char *region;
static pthread_barrier_t bar;
static volatile int stop;
static uint64_t gen;

static void *worker(void *arg)
{
    long id = (long)arg;
    for (;;) {
        pthread_barrier_wait(&bar);
        if (stop)
            return NULL;
        for (uint64_t p = 0; p < NPAGES; p++)
            ((volatile uint64_t *)(region + p * PAGE_SZ))[id] = stamp(gen, p, id);
        pthread_barrier_wait(&bar);
    }
}

int main(int argc, char **argv)
{
    repro_init("02-thp-fault-race", argc, argv);
    if (!thp_available())
        skip("transparent hugepages disabled");
    region = map_aligned(LEN);
    madv(region, LEN, MADV_HUGEPAGE);
    pthread_barrier_init(&bar, NULL, NTHREADS + 1);
    pthread_t t[NTHREADS];
    for (long i = 0; i < NTHREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);

    long lost = 0, foreign = 0, gens = 0, huge_seen = 0, bad_gens = 0;
    double end = now_s() + repro_seconds;
    for (gen = 1; now_s() < end && bad_gens < 20; gen++, gens++) {
        long before = lost + foreign;
        pthread_barrier_wait(&bar);
        pthread_barrier_wait(&bar);
        long kb = anon_huge_kb(region);
        if (kb > huge_seen)
            huge_seen = kb;
        for (uint64_t p = 0; p < NPAGES; p++)
            for (long id = 0; id < NTHREADS; id++) {
                uint64_t v = ((uint64_t *)(region + p * PAGE_SZ))[id];
                if (v == stamp(gen, p, id))
                    continue;
                if (v == 0)
                    lost++;
                else
                    foreign++;
                if (repro_verbose || lost + foreign <= 5)
                    printf("gen %" PRIu64 " page %" PRIu64 " slot %ld: %s (0x%" PRIx64 ")\n",
                           gen, p, id, v ? "FOREIGN" : "LOST_WRITE", v);
            }
        if (lost + foreign > before)
            bad_gens++;   /* each hit leaks a THP in the mutant: stop early */
        madv(region, LEN, MADV_DONTNEED);
    }
    stop = 1;
    pthread_barrier_wait(&bar);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(t[i], NULL);
    if (huge_seen <= 0)
        skip("no THP was ever mapped (AnonHugePages 0): the huge fault path was not exercised");
    return finish(lost + foreign, "(LOST_WRITE %ld, FOREIGN %ld in %ld generations; max AnonHugePages %ld kB)",
                  lost, foreign, gens, huge_seen);
}
