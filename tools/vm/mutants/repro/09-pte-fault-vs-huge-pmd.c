/* 09-pte-fault-vs-huge-pmd — make a 4 KiB anonymous fault and a huge-PMD
 * fault race on the same empty PMD of a MADV_HUGEPAGE range:
 *   writer: writes slot 0 of page 1 of each 2 MiB range.  The process runs
 *           in a memory cgroup whose limit leaves < 2 MiB of headroom, so the
 *           THP charge fails and every write fault falls back to the 4 KiB
 *           path (do_anonymous_page);
 *   reader: reads page 0 of the same range -> maps the huge zero page (huge
 *           PMD, not charged), after a random delay so that over many tries
 *           it lands inside the writer's fallback window.
 * (Without cgroup2 a toggler thread flips the THP "enabled" mode instead.)
 * Afterwards page 0 must be all zero and page 1 must hold only the writer's
 * stamp.  Anything else is FOREIGN (mutant 09: the PTE fault used the huge
 * page's data as a page table and wrote a PTE into it).  At the end a fresh
 * mapping is read through the huge zero page: it must be zero
 * (NONZERO_AFTER_ZAP otherwise: the huge zero page itself got corrupted).
 * Needs root. */
#include "common.h"
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>

#define NRANGES 32
#define LEN (NRANGES * HPAGE_SZ)
#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"

static char *region;
static volatile int stop;
static volatile long w_at, r_at;     /* lock-step progress of the two faulters */
static volatile double w_fault_s = 50e-6;  /* EMA of the writer's fault time */
static pthread_barrier_t bar;
static uint64_t gen;
static long toggles;

static int write_file(const char *path, const char *val)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return -1;
    int r = write(fd, val, strlen(val)) == (ssize_t)strlen(val) ? 0 : -1;
    close(fd);
    return r;
}

static long read_long(const char *path)
{
    FILE *f = fopen(path, "r");
    long v = -1;
    if (f) {
        if (fscanf(f, "%ld", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

/* Put this process in a memory cgroup with < 2 MiB headroom. */
static int setup_memcg(void)
{
    char buf[64];
    mkdir("/sys/fs/cgroup", 0755);
    mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL);   /* EBUSY if mounted */
    write_file("/sys/fs/cgroup/cgroup.subtree_control", "+memory");
    mkdir("/sys/fs/cgroup/pmd-repro09", 0755);
    snprintf(buf, sizeof buf, "%d", getpid());
    if (write_file("/sys/fs/cgroup/pmd-repro09/cgroup.procs", buf))
        return -1;
    long cur = read_long("/sys/fs/cgroup/pmd-repro09/memory.current");
    if (cur < 0)
        return -1;
    snprintf(buf, sizeof buf, "%ld", cur + (3L << 19));   /* +1.5 MiB */
    return write_file("/sys/fs/cgroup/pmd-repro09/memory.max", buf);
}

static void leave_memcg(void)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%d", getpid());
    write_file("/sys/fs/cgroup/cgroup.procs", buf);
    rmdir("/sys/fs/cgroup/pmd-repro09");
}

static void *toggler(void *arg)
{
    int fd = *(int *)arg;
    for (long n = 0; !stop; n++) {
        const char *m = (n & 1) ? "never" : "madvise";
        if (pwrite(fd, m, strlen(m), 0) > 0)
            toggles++;
    }
    return NULL;
}

static void *writer(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_barrier_wait(&bar);
        if (stop)
            return NULL;
        for (long h = 0; h < NRANGES; h++) {
            while (r_at < h)
                ;
            w_at = h + 1;   /* release the reader, then fault */
            double t0 = now_s();
            ((volatile uint64_t *)(region + h * HPAGE_SZ + PAGE_SZ))[0] = stamp(gen, h, 0);
            w_fault_s = 0.9 * w_fault_s + 0.1 * (now_s() - t0);
        }
        pthread_barrier_wait(&bar);
    }
}

static void *reader(void *arg)
{
    (void)arg;
    uint64_t sum = 0, rnd = 88172645463325252ULL;
    for (;;) {
        pthread_barrier_wait(&bar);
        if (stop)
            return NULL;
        for (long h = 0; h < NRANGES; h++) {
            while (w_at < h + 1)     /* the writer is about to fault range h */
                ;
            /* random delay in [0, 1.2 x writer's fault time]: sweeps the
             * reader's huge-PMD install across the writer's fallback path */
            rnd ^= rnd << 13; rnd ^= rnd >> 7; rnd ^= rnd << 17;
            double until = now_s() + (rnd % 1024) / 1024.0 * 1.2 * w_fault_s;
            while (now_s() < until)
                ;
            sum += ((volatile uint64_t *)(region + h * HPAGE_SZ))[0];
            r_at = h + 1;
        }
        pthread_barrier_wait(&bar);
    }
    return (void *)(uintptr_t)sum;
}

int main(int argc, char **argv)
{
    repro_init("09-pte-fault-vs-huge-pmd", argc, argv);
    char saved[128] = "madvise";
    FILE *f = fopen(THP_ENABLED, "r");
    if (!f)
        skip("no %s", THP_ENABLED);
    if (fgets(saved, sizeof saved, f)) {
        char *b = strchr(saved, '['), *e = b ? strchr(b, ']') : NULL;
        if (b && e) {
            *e = 0;
            memmove(saved, b + 1, strlen(b + 1) + 1);
        }
    }
    fclose(f);
    if (!strcmp(saved, "never"))
        skip("transparent hugepages disabled");
    int fd = open(THP_ENABLED, O_WRONLY);
    if (fd < 0)
        skip("cannot write %s (need root): %s", THP_ENABLED, strerror(errno));

    int memcg = setup_memcg() == 0;
    printf("mode: %s\n", memcg ? "memcg (THP charge fails -> 4 KiB fallback)" : "THP mode toggler");
    region = map_aligned(LEN);
    madv(region, LEN, MADV_HUGEPAGE);
    pthread_barrier_init(&bar, NULL, 3);
    pthread_t tt, tw, tr;
    if (!memcg)
        pthread_create(&tt, NULL, toggler, &fd);
    pthread_create(&tw, NULL, writer, NULL);
    pthread_create(&tr, NULL, reader, NULL);

    long foreign = 0, rounds = 0;
    double end = now_s() + repro_seconds;
    for (gen = 1; now_s() < end; gen++, rounds++) {
        w_at = r_at = 0;
        pthread_barrier_wait(&bar);
        pthread_barrier_wait(&bar);
        for (long h = 0; h < NRANGES; h++) {
            uint64_t *p0 = (uint64_t *)(region + h * HPAGE_SZ);
            uint64_t *p1 = (uint64_t *)(region + h * HPAGE_SZ + PAGE_SZ);
            for (unsigned i = 0; i < SLOTS_PER_PAGE; i++) {
                uint64_t want1 = i == 0 ? stamp(gen, h, 0) : 0;
                if (p0[i] == 0 && p1[i] == want1)
                    continue;
                if (repro_verbose || foreign < 5)
                    printf("gen %" PRIu64 " range %ld word %u: page0 0x%" PRIx64 " page1 0x%" PRIx64
                           " (want 0x%" PRIx64 "): FOREIGN\n", gen, h, i, p0[i], p1[i], want1);
                foreign++;
            }
        }
        madv(region, LEN, MADV_DONTNEED);
        if (foreign > 50)
            break;
    }
    stop = 1;
    pthread_barrier_wait(&bar);
    pthread_join(tw, NULL);
    pthread_join(tr, NULL);
    if (!memcg)
        pthread_join(tt, NULL);
    if (pwrite(fd, saved, strlen(saved), 0) < 0)
        printf("warning: could not restore THP mode '%s'\n", saved);
    close(fd);

    /* The huge zero page must still be zero. */
    long nonzero = 0;
    char *fresh = map_aligned(4 * HPAGE_SZ);
    madv(fresh, 4 * HPAGE_SZ, MADV_HUGEPAGE);
    for (size_t off = 0; off < 4 * HPAGE_SZ; off += sizeof(uint64_t))
        if (*(volatile uint64_t *)(fresh + off)) {
            if (nonzero < 3)
                printf("fresh mapping offset 0x%zx: 0x%" PRIx64 ": NONZERO_AFTER_ZAP (huge zero page corrupted?)\n",
                       off, *(uint64_t *)(fresh + off));
            nonzero++;
        }
    if (memcg)
        leave_memcg();
    return finish(foreign + nonzero, "(FOREIGN %ld in %ld rounds x %d ranges, writer fault ~%.0f us, %ld THP mode toggles; non-zero fresh words %ld)",
                  foreign, rounds, NRANGES, w_fault_s * 1e6, toggles, nonzero);
}
