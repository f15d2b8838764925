/* common.h — tiny helpers shared by the mutant reproducers.
 *
 * Each reproducer is a single static C11 program run inside the guest.  It
 * exercises one race for a bounded time and prints one final line
 *   REPRO <name>: BUG <what> (<n> anomalies ...)   exit 1
 *   REPRO <name>: clean (<details>)                 exit 0
 *   REPRO <name>: SKIP <why>                        exit 2 (setup impossible)
 * Options (all reproducers): -t SECONDS (default 20), -v (verbose).
 */
#ifndef PMD_REPRO_COMMON_H
#define PMD_REPRO_COMMON_H

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE_SZ 4096UL
#define HPAGE_SZ (2UL << 20)
#define SLOTS_PER_PAGE (PAGE_SZ / sizeof(uint64_t))

#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE 14
#endif
#ifndef MADV_NOHUGEPAGE
#define MADV_NOHUGEPAGE 15
#endif
#ifndef MPOL_MF_MOVE
#define MPOL_MF_MOVE (1 << 1)
#endif

static const char *repro_name = "?";
static double repro_seconds = 20.0;
static int repro_verbose;

static __attribute__((unused)) double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static __attribute__((unused)) void repro_init(const char *name, int argc, char **argv)
{
    int c;
    repro_name = name;
    while ((c = getopt(argc, argv, "t:v")) != -1) {
        if (c == 't')
            repro_seconds = atof(optarg);
        else if (c == 'v')
            repro_verbose = 1;
        else {
            fprintf(stderr, "usage: %s [-t seconds] [-v]\n", argv[0]);
            exit(2);
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
}

__attribute__((format(printf, 1, 2), noreturn)) static void skip(const char *fmt, ...)
{
    va_list ap;
    printf("REPRO %s: SKIP ", repro_name);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    exit(2);
}

__attribute__((format(printf, 2, 3))) static int finish(long anomalies, const char *fmt, ...)
{
    va_list ap;
    printf("REPRO %s: %s ", repro_name, anomalies ? "BUG" : "clean");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    return anomalies ? 1 : 0;
}

/* A stamp is never zero and encodes (generation, page, slot). */
static __attribute__((unused)) inline uint64_t stamp(uint64_t gen, uint64_t page, uint64_t slot)
{
    return (gen << 40) ^ (page << 12) ^ (slot << 1) ^ 0x8000000000000001ULL;
}

/* Anonymous private mapping of len bytes aligned to 2 MiB. */
static __attribute__((unused)) char *map_aligned(size_t len)
{
    size_t big = len + HPAGE_SZ;
    char *p = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        skip("mmap %zu: %s", big, strerror(errno));
    uintptr_t a = ((uintptr_t)p + HPAGE_SZ - 1) & ~(HPAGE_SZ - 1);
    if (a > (uintptr_t)p)
        munmap(p, a - (uintptr_t)p);
    uintptr_t end = (uintptr_t)p + big, want_end = a + len;
    if (end > want_end)
        munmap((void *)want_end, end - want_end);
    return (char *)a;
}

static __attribute__((unused)) void madv(void *p, size_t len, int advice)
{
    if (madvise(p, len, advice))
        skip("madvise(%d): %s", advice, strerror(errno));
}

/* kB of AnonHugePages in the VMA containing addr (from /proc/self/smaps). */
static __attribute__((unused)) long anon_huge_kb(const void *addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int in = 0;
    long kb = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
            continue;
        }
        if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
            break;
    }
    fclose(f);
    return kb;
}

static __attribute__((unused)) int thp_available(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char buf[128] = "";
    if (!f)
        return 0;
    if (!fgets(buf, sizeof buf, f))
        buf[0] = 0;
    fclose(f);
    return strstr(buf, "[never]") == NULL && buf[0];
}

static __attribute__((unused)) long move_pages_sys(unsigned long count, void **pages, const int *nodes, int *status)
{
    return syscall(SYS_move_pages, 0, count, pages, nodes, status, MPOL_MF_MOVE);
}

static __attribute__((unused)) int numa_nodes(void)
{
    FILE *f = fopen("/sys/devices/system/node/online", "r");
    int a = 0, b = 0, n;
    if (!f)
        return 1;
    n = fscanf(f, "%d-%d", &a, &b);
    fclose(f);
    return n == 2 ? b - a + 1 : 1;
}

#endif
