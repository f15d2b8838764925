/* thp-migrate-smoke - does THP migration between NUMA nodes work here?
 *
 * Maps 8 MiB of anonymous memory (2 MiB aligned, MADV_HUGEPAGE), faults it in
 * on node 0 (MPOL_BIND), fills it with a pattern, checks AnonHugePages > 0 in
 * /proc/self/smaps, move_pages(2)s it all to the target node (default 1),
 * then checks: every 4 KiB page reports the target node, the pattern is
 * intact, AnonHugePages is still > 0 (migrated as THPs, not split), and
 * /proc/vmstat thp_migration_success went up (skipped where the kernel has
 * no vm event counters).
 *
 * Raw syscalls only (no libnuma): gcc -O2 -std=c11 -Wall -o thp-migrate-smoke
 * thp-migrate-smoke.c  (-static works too).
 *
 * Usage: thp-migrate-smoke [TARGET_NODE]
 * Exit: 0 pass, 1 fail, 2 cannot test here (one node, no THP, ...).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MiB (1024UL * 1024UL)
#define HPAGE (2 * MiB)
#define LEN (8 * MiB)
#define PAGE 4096UL
#define NPAGES (LEN / PAGE)
#define NHPAGES (LEN / HPAGE)

#define MPOL_DEFAULT 0
#define MPOL_BIND 2
#define MPOL_MF_MOVE (1 << 1)

static const char *vmstat_keys[] = {
	"thp_migration_success", "thp_migration_fail", "thp_migration_split",
	"pgmigrate_success", "pgmigrate_fail", "thp_fault_alloc", NULL,
};

static void read_vmstat(long *vals)
{
	char key[64];
	long v;
	FILE *f = fopen("/proc/vmstat", "r");

	for (int i = 0; vmstat_keys[i]; i++)
		vals[i] = -1; /* -1: counter absent in this kernel */
	if (!f)
		return;
	while (fscanf(f, "%63s %ld", key, &v) == 2)
		for (int i = 0; vmstat_keys[i]; i++)
			if (!strcmp(key, vmstat_keys[i]))
				vals[i] = v;
	fclose(f);
}

/* AnonHugePages (kB) of the VMA containing addr, -1 if not found. */
static long anon_huge_kb(void *addr)
{
	char line[512];
	uintptr_t a = (uintptr_t)addr, lo, hi;
	int in = 0;
	long kb = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = a >= lo && a < hi;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

static long move_pages(unsigned long count, void **pages, const int *nodes, int *status, int flags)
{
	return syscall(SYS_move_pages, 0, count, pages, nodes, status, flags);
}

static int max_node(void)
{
	int n = -1;
	char path[64];

	for (int i = 0; i < 1024; i++) {
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", i);
		if (access(path, F_OK) == 0)
			n = i;
	}
	return n;
}

/* Histogram of page nodes; returns how many pages are on node `want`. */
static unsigned long query_nodes(void **pages, int *status, int want, const char *label)
{
	unsigned long on = 0, other = 0, err = 0;

	if (move_pages(NPAGES, pages, NULL, status, 0) != 0) {
		perror("move_pages(query)");
		return 0;
	}
	for (unsigned long i = 0; i < NPAGES; i++) {
		if (status[i] == want)
			on++;
		else if (status[i] < 0)
			err++;
		else
			other++;
	}
	printf("%s: %lu/%lu pages on node %d, %lu on other nodes, %lu errors (first status %d)\n",
	       label, on, (unsigned long)NPAGES, want, other, err, status[0]);
	return on;
}

static uint64_t pattern(unsigned long i)
{
	return (i * 0x9e3779b97f4a7c15ULL) ^ 0x5ca1ab1e;
}

int main(int argc, char **argv)
{
	int target = argc > 1 ? atoi(argv[1]) : 1;
	long before[8], after[8];
	int fails = 0;

	int maxn = max_node();
	if (maxn < 1 || target > maxn || target == 0) {
		printf("SKIP: need nodes 0 and %d (max node %d)\n", target, maxn);
		return 2;
	}
	char *raw = mmap(NULL, LEN + HPAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	char *buf = (char *)(((uintptr_t)raw + HPAGE - 1) & ~(HPAGE - 1));
	if (madvise(buf, LEN, MADV_HUGEPAGE) != 0) {
		perror("madvise(MADV_HUGEPAGE)");
		return 2;
	}

	/* fault everything in on node 0 so that the move is a real migration */
	unsigned long mask0 = 1;
	if (syscall(SYS_set_mempolicy, MPOL_BIND, &mask0, sizeof(mask0) * 8) != 0)
		perror("set_mempolicy(BIND node 0)");
	uint64_t *w = (uint64_t *)buf;
	for (unsigned long i = 0; i < LEN / sizeof(*w); i++)
		w[i] = pattern(i);
	syscall(SYS_set_mempolicy, MPOL_DEFAULT, NULL, 0);

	static void *pages[NPAGES];
	static int nodes[NPAGES], status[NPAGES];
	for (unsigned long i = 0; i < NPAGES; i++)
		pages[i] = buf + i * PAGE;

	long thp0 = anon_huge_kb(buf);
	printf("AnonHugePages before: %ld kB (of %lu kB)\n", thp0, LEN / 1024);
	query_nodes(pages, status, 0, "before");
	if (thp0 <= 0) {
		printf("SKIP: no THP backing the region (transparent_hugepage/enabled = never?)\n");
		return 2;
	}

	read_vmstat(before);
	/* pass 1: one address per 2 MiB: each THP migrates as a whole */
	void *heads[NHPAGES];
	int hnodes[NHPAGES], hstatus[NHPAGES];
	for (unsigned long i = 0; i < NHPAGES; i++) {
		heads[i] = buf + i * HPAGE;
		hnodes[i] = target;
	}
	long r = move_pages(NHPAGES, heads, hnodes, hstatus, MPOL_MF_MOVE);
	printf("move_pages(%lu THP heads -> node %d) = %ld%s%s; status:", (unsigned long)NHPAGES, target, r,
	       r < 0 ? " " : "", r < 0 ? strerror(errno) : "");
	for (unsigned long i = 0; i < NHPAGES; i++)
		printf(" %d", hstatus[i]);
	printf("\n");
	/* pass 2: any 4 KiB page not yet there (non-THP parts) */
	unsigned long n = 0;
	move_pages(NPAGES, pages, NULL, status, 0);
	for (unsigned long i = 0; i < NPAGES; i++)
		if (status[i] != target) {
			pages[n] = buf + i * PAGE;
			nodes[n++] = target;
		}
	if (n) {
		r = move_pages(n, pages, nodes, status, MPOL_MF_MOVE);
		printf("move_pages(%lu leftover 4K pages) = %ld\n", n, r);
		for (unsigned long i = 0; i < NPAGES; i++)
			pages[i] = buf + i * PAGE;
	}
	read_vmstat(after);

	if (query_nodes(pages, status, target, "after") != NPAGES) {
		printf("FAIL: not all pages on node %d\n", target);
		fails++;
	}
	unsigned long bad = 0;
	for (unsigned long i = 0; i < LEN / sizeof(*w); i++)
		bad += w[i] != pattern(i);
	printf("pattern check: %lu bad words\n", bad);
	if (bad) {
		printf("FAIL: data corrupted by migration\n");
		fails++;
	}
	long thp1 = anon_huge_kb(buf);
	printf("AnonHugePages after: %ld kB\n", thp1);
	if (thp1 <= 0) {
		printf("FAIL: THPs were split by migration\n");
		fails++;
	}
	for (int i = 0; vmstat_keys[i]; i++) {
		if (before[i] < 0 || after[i] < 0)
			printf("vmstat %-22s n/a (no such counter: CONFIG_VM_EVENT_COUNTERS off?)\n", vmstat_keys[i]);
		else
			printf("vmstat %-22s before %8ld after %8ld delta %ld\n", vmstat_keys[i], before[i],
			       after[i], after[i] - before[i]);
	}
	if (before[0] >= 0 && after[0] - before[0] <= 0) {
		printf("FAIL: thp_migration_success did not increase\n");
		fails++;
	}
	printf("%s\n", fails ? "RESULT: FAIL" : "RESULT: PASS (THP migrated as THP)");
	return fails ? 1 : 0;
}
