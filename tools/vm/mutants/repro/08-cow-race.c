/* 08-cow-race — two threads write the same COW-shared 4 KiB pages at the same
 * time, each into its own slot, so both take the write-protect (COW) fault
 * on the same page concurrently.  Two flavours alternate:
 *   zero: pages were read first (mapped to the shared zero page);
 *   fork: pages were written by the main thread, then a child was forked
 *         (and is kept alive) so every page is COW-shared.
 * Afterwards every slot must hold its stamp; a slot that lost its stamp is a
 * LOST_WRITE (mutant 08: wp_page_copy accepts any present PTE after
 * re-taking the lock, so the losing thread installs a copy of the *old* page
 * over the winner's copy). */
#include "common.h"

#define NPAGES 256
#define NTHREADS 2
#define LEN (NPAGES * PAGE_SZ)

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
    repro_init("08-cow-race", argc, argv);
    region = map_aligned(LEN);
    madv(region, LEN, MADV_NOHUGEPAGE);
    pthread_barrier_init(&bar, NULL, NTHREADS + 1);
    pthread_t t[NTHREADS];
    for (long i = 0; i < NTHREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    long lost[2] = {0, 0}, gens[2] = {0, 0};
    double end = now_s() + repro_seconds;
    for (gen = 1; now_s() < end; gen++) {
        int fork_mode = gen & 1;
        pid_t child = -1;
        madv(region, LEN, MADV_DONTNEED);
        if (fork_mode) {
            for (uint64_t p = 0; p < NPAGES; p++)
                ((volatile uint64_t *)(region + p * PAGE_SZ))[NTHREADS] = stamp(gen, p, NTHREADS);
            child = fork();
            if (child < 0)
                skip("fork: %s", strerror(errno));
            if (child == 0) {
                pause();
                _exit(0);
            }
        } else {
            uint64_t sum = 0;
            for (uint64_t p = 0; p < NPAGES; p++)
                sum += ((volatile uint64_t *)(region + p * PAGE_SZ))[0];
            if (sum)
                printf("gen %" PRIu64 ": zero page not zero?\n", gen);
        }
        double tb = now_s();
        pthread_barrier_wait(&bar);
        pthread_barrier_wait(&bar);
        if (repro_verbose)
            printf("gen %" PRIu64 " (%s) write phase %.3fs\n", gen, fork_mode ? "fork" : "zero", now_s() - tb);
        for (uint64_t p = 0; p < NPAGES; p++)
            for (long id = 0; id < NTHREADS; id++) {
                uint64_t v = ((uint64_t *)(region + p * PAGE_SZ))[id];
                if (v == stamp(gen, p, id))
                    continue;
                if (lost[0] + lost[1] < 5)
                    printf("gen %" PRIu64 " (%s) page %" PRIu64 " slot %ld: LOST_WRITE (0x%" PRIx64 ")\n",
                           gen, fork_mode ? "fork" : "zero", p, id, v);
                lost[fork_mode]++;
            }
        gens[fork_mode]++;
        double t0 = now_s();
        if (child > 0) {
            kill(child, SIGKILL);
            waitpid(child, NULL, 0);
        }
        if (repro_verbose)
            printf("gen %" PRIu64 " kill+wait %.3fs\n", gen, now_s() - t0);
    }
    stop = 1;
    pthread_barrier_wait(&bar);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(t[i], NULL);
    return finish(lost[0] + lost[1], "(LOST_WRITE zero-page %ld in %ld gens, after-fork %ld in %ld gens)",
                  lost[0], gens[0], lost[1], gens[1]);
}
