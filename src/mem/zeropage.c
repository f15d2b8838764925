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
#include "smaps.h"
#include "sysinfo.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#define PROBE_PAGES 64

int pmd_probe_zero_page_reads(void)
{
	const long psz = sysconf(_SC_PAGESIZE);
	const size_t len = (size_t)PROBE_PAGES * (size_t)psz;
	struct pmd_smaps_vma v;
	volatile const char *p;
	unsigned i;
	int rc;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	/* 4 KiB read faults: a huge zero PMD would say nothing of the PTE path */
	(void)madvise((void *)p, len, MADV_NOHUGEPAGE);
	for (i = 0; i < PROBE_PAGES; i++)
		(void)p[(size_t)i * (size_t)psz];
	rc = pmd_smaps_vma((uintptr_t)p, &v);
	munmap((void *)p, len);
	if (rc)
		return -1;
	/* all or nothing in practice; half is the line between the two */
	return v.rss < len / 2;
}
