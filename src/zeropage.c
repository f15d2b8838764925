// SPDX-License-Identifier: GPL-2.0
/*
 * Does a read fault on private anonymous memory map the shared zero page, or
 * allocate a page? Mainline maps the zero page (the huge zero page on a
 * THP-enabled PMD, with use_zero_page). Some kernels do not: a virtualised
 * guest whose host cannot share one zero page (this project's development
 * VM boots with pvm_no_zero_page=1) backs every read fault with a fresh,
 * charged, resident page. Then reading memory is allocating it: the
 * verifier's reads of untouched pages would fill the arena, and under
 * --memcg-headroom be charged to the run's cgroup until it OOM-kills.
 *
 * The probe reads 64 fresh pages and asks smaps for the Rss of that mapping:
 * the zero page is never counted in Rss, allocated pages are.
 */
#include "sysinfo.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define PROBE_PAGES 64

/* Rss of the mapping starting at @start, in bytes; -1 if smaps cannot say. */
static long long mapping_rss(uintptr_t start)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[512];
	bool in = false;
	long long rss = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, kb;

		if ((isdigit((unsigned char)line[0]) || (line[0] >= 'a' && line[0] <= 'f')) &&
		    sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
			if (in)
				break;
			in = lo == start;
			continue;
		}
		if (in && sscanf(line, "Rss: %lu kB", &kb) == 1) {
			rss = (long long)kb << 10;
			break;
		}
	}
	fclose(f);
	return rss;
}

int pmd_probe_zero_page_reads(void)
{
	const long psz = sysconf(_SC_PAGESIZE);
	const size_t len = (size_t)PROBE_PAGES * (size_t)psz;
	volatile const char *p;
	long long rss;
	unsigned i;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	/* 4 KiB read faults: a huge zero PMD would say nothing of the PTE path */
	(void)madvise((void *)p, len, MADV_NOHUGEPAGE);
	for (i = 0; i < PROBE_PAGES; i++)
		(void)p[(size_t)i * (size_t)psz];
	rss = mapping_rss((uintptr_t)p);
	munmap((void *)p, len);
	if (rss < 0)
		return -1;
	/* all or nothing in practice; half is the line between the two */
	return rss < (long long)len / 2;
}
