// SPDX-License-Identifier: GPL-2.0
/*
 * The THP probe on real mappings, run on a worker's smallest stack
 * (PMD_STACK_MIN): a probe that kept a vector for all 512 pages of a chunk
 * on the stack overflowed it. A sparse chunk (every other page present, 256
 * regions) makes PAGEMAP_SCAN resume several times; it must still add up.
 */
#include "check.h"
#include "config.h"
#include "run.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>

static struct pmd_config cfg;
static struct pmd_run run;

static const char *const names[] = { "unknown", "none", "thp", "pte", "mixed" };

static enum pmd_thp_state probe(char *addr)
{
	struct pmd_chunk c;

	memset(&c, 0, sizeof(c));
	c.addr = (uintptr_t)addr;
	return pmd_thp_probe(&run, &c, NULL);
}

/* Both methods this machine has: PAGEMAP_SCAN (6.7+) and plain pagemap. */
static void check_methods(char *addr, enum pmd_thp_state want, const char *what)
{
	bool scan = run.scan_ok;
	enum pmd_thp_state s;

	if (scan) {
		s = probe(addr);
		CHECK(s == want, "%s, PAGEMAP_SCAN: %s (want %s)", what, names[s], names[want]);
	}
	run.scan_ok = false;
	s = probe(addr);
	CHECK(s == want, "%s, pagemap (%s): %s (want %s)", what,
	      run.kpageflags_fd >= 0 ? "kpageflags" : "smaps", names[s], names[want]);
	run.scan_ok = scan;
}

static void *probe_all(void *arg)
{
	char *chunk = arg;
	unsigned p;

	check_methods(chunk, PMD_THPS_NONE, "an untouched chunk");
	for (p = 0; p < PMD_CHUNK_PAGES; p += 2)
		chunk[(size_t)p << PMD_PAGE_SHIFT] = 1;
	check_methods(chunk, PMD_THPS_PTE, "every other page of a nohuge chunk");
	for (p = 1; p < PMD_CHUNK_PAGES; p += 2)
		chunk[(size_t)p << PMD_PAGE_SHIFT] = 1;
	check_methods(chunk, PMD_THPS_PTE, "every page of a nohuge chunk");
	return NULL;
}

int main(void)
{
	char err[PMD_ERRLEN], *m, *chunk;
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	if (pmd_config_init(&cfg, err, sizeof(err))) {
		fprintf(stderr, "config: %s\n", err);
		return 1;
	}
	m = mmap(NULL, 2 * PMD_CHUNK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	CHECK(m != MAP_FAILED, "mmap of two chunks");
	if (m == MAP_FAILED)
		return 1;
	chunk = (char *)(((uintptr_t)m + PMD_CHUNK_SIZE - 1) & ~(uintptr_t)(PMD_CHUNK_SIZE - 1));
	/* small pages only, so that the every-other-page layout stays one */
	CHECK(!madvise(chunk, PMD_CHUNK_SIZE, MADV_NOHUGEPAGE), "MADV_NOHUGEPAGE");
	run.cfg = &cfg;
	run.arena.base = chunk;
	pmd_thp_probe_init(&run);
	if (run.pagemap_fd < 0) {
		fprintf(stderr, "/proc/self/pagemap is not readable: skipped\n");
		return 77;
	}
	printf("# PAGEMAP_SCAN %s, kpageflags %s\n", run.scan_ok ? "yes" : "no",
	       run.kpageflags_fd >= 0 ? "yes" : "no");

	pthread_attr_init(&attr);
	rc = pthread_attr_setstacksize(&attr, PMD_STACK_MIN);
	CHECK(rc == 0, "a thread stack of PMD_STACK_MIN (%u) bytes is allowed: %s", PMD_STACK_MIN,
	      strerror(rc));
	rc = pthread_create(&t, &attr, probe_all, chunk);
	CHECK(rc == 0, "pthread_create: %s", strerror(rc));
	if (!rc)
		pthread_join(t, NULL);
	pthread_attr_destroy(&attr);
	pmd_thp_probe_fini(&run);
	munmap(m, 2 * PMD_CHUNK_SIZE);
	pmd_config_free(&cfg);
	return check_done();
}
