/* 01-anon-pte-race — two threads first-touch (write-fault) the same 4 KiB
 * pages of a MADV_NOHUGEPAGE region at the same time; each writes its own
 * 8-byte slot.  After a barrier every slot must hold its stamp.  A zero slot
 * is a LOST_WRITE: the loser of the first-touch race replaced the winner's
 * PTE (mutant 01).  Then the region is zapped (MADV_DONTNEED) and the next
 * generation starts. */
#include "common.h"

#define NPAGES 256
#define NTHREADS 2

static char *region;
static pthread_barrier_t bar;
static volatile int stop;
static uint64_t gen;

static void *worker(void *arg)
{
    long id = (long)arg;
    for (;;) {
        pthread_barrier_wait(&bar);            /* start of a generation */
        if (stop)
            return NULL;
        for (uint64_t p = 0; p < NPAGES; p++)
            ((volatile uint64_t *)(region + p * PAGE_SZ))[id] = stamp(gen, p, id);
        pthread_barrier_wait(&bar);            /* generation written */
    }
}

int main(int argc, char **argv)
{
    repro_init("01-anon-pte-race", argc, argv);
    region = map_aligned(NPAGES * PAGE_SZ);
    madv(region, NPAGES * PAGE_SZ, MADV_NOHUGEPAGE);
    pthread_barrier_init(&bar, NULL, NTHREADS + 1);
    pthread_t t[NTHREADS];
    for (long i = 0; i < NTHREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);

    long lost = 0, foreign = 0, gens = 0;
    double end = now_s() + repro_seconds;
    for (gen = 1; now_s() < end; gen++, gens++) {
        pthread_barrier_wait(&bar);
        pthread_barrier_wait(&bar);
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
        madv(region, NPAGES * PAGE_SZ, MADV_DONTNEED);
    }
    stop = 1;
    pthread_barrier_wait(&bar);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(t[i], NULL);
    return finish(lost + foreign, "(LOST_WRITE %ld, FOREIGN %ld in %ld generations x %d pages x %d threads)",
                  lost, foreign, gens, NPAGES, NTHREADS);
}
