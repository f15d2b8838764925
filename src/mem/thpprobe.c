// SPDX-License-Identifier: GPL-2.0
/*
 * How a chunk is mapped right now: one PMD-mapped huge page, small pages,
 * a mix, or nothing. Best source first:
 *   1. PAGEMAP_SCAN (Linux 6.7+): PAGE_IS_HUGE marks PMD-mapped pages, and
 *      one ioctl covers the chunk unless it is sparse;
 *   2. pagemap PFNs + /proc/kpageflags (root): a huge page is 512 present,
 *      contiguous PFNs from an aligned head with KPF_THP set (it cannot tell
 *      a PMD mapping from an intact PTE-mapped one);
 *   3. pagemap present bits + /proc/self/smaps (not root, before 6.7): the
 *      VMA holding the chunk says THP if all of its Rss is AnonHugePages, PTE
 *      if none is; a VMA with some of each cannot say which chunk: UNKNOWN.
 * Reading pagemap never faults the chunk in, so probing does not disturb
 * the race it is observing.
 */
#include "compat.h"
#include "run.h"
#include "smaps.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

void pmd_thp_probe_init(struct pmd_run *run)
{
	unsigned want = run->cfg->thp_probe;
	struct page_region r;
	struct pm_scan_arg arg;

	run->pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	run->kpageflags_fd = -1;
	if (want == PMD_PROBE_AUTO || want == PMD_PROBE_KPAGEFLAGS || want == PMD_PROBE_SCAN)
		run->kpageflags_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	run->scan_ok = false;
	if (run->pagemap_fd < 0 || (want != PMD_PROBE_AUTO && want != PMD_PROBE_SCAN))
		return;
	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.start = (uintptr_t)run->arena.base;
	arg.end = arg.start + PMD_PAGE_SIZE;
	arg.vec = (uintptr_t)&r;
	arg.vec_len = 1;
	arg.category_anyof_mask = PAGE_IS_PRESENT | PAGE_IS_HUGE;
	arg.return_mask = PAGE_IS_PRESENT | PAGE_IS_HUGE;
	run->scan_ok = ioctl(run->pagemap_fd, PAGEMAP_SCAN, &arg) >= 0;
}

/* The method asked for cannot work here: why, or NULL. */
const char *pmd_thp_probe_unavailable(const struct pmd_run *run)
{
	switch (run->cfg->thp_probe) {
	case PMD_PROBE_SCAN:
		return run->scan_ok ? NULL : "PAGEMAP_SCAN is not supported by this kernel (6.7+)";
	case PMD_PROBE_KPAGEFLAGS:
		return run->kpageflags_fd >= 0 ? NULL : "/proc/kpageflags is not readable (root)";
	default:
		return run->pagemap_fd >= 0 ? NULL : "/proc/self/pagemap is not readable";
	}
}

void pmd_thp_probe_fini(struct pmd_run *run)
{
	if (run->pagemap_fd >= 0)
		close(run->pagemap_fd);
	if (run->kpageflags_fd >= 0)
		close(run->kpageflags_fd);
	run->pagemap_fd = run->kpageflags_fd = -1;
}

static uint64_t kpageflags(const struct pmd_run *run, uint64_t pfn)
{
	uint64_t f = 0;

	if (run->kpageflags_fd < 0 || !pfn ||
	    pread(run->kpageflags_fd, &f, sizeof(f), (off_t)(pfn * sizeof(f))) != sizeof(f))
		return 0;
	return f;
}

uint64_t pmd_page_pfn(struct pmd_run *run, const void *addr)
{
	uint64_t e = 0;

	if (run->pagemap_fd < 0 ||
	    pread(run->pagemap_fd, &e, sizeof(e),
		  (off_t)(((uintptr_t)addr >> PMD_PAGE_SHIFT) * sizeof(e))) != sizeof(e))
		return 0;
	return (e & PMD_PM_PRESENT) ? (e & PMD_PM_PFN_MASK) : 0;
}

/*
 * Regions per PAGEMAP_SCAN call. A chunk in a few runs of like pages takes
 * one call; a sparse one (every other page present) takes several, each
 * resuming where the last stopped. Small, so that the probe fits the
 * workers' small stacks (--stack-size): a vector for all 512 pages was 12 KiB.
 */
#define SCAN_VEC 32

static enum pmd_thp_state by_scan(struct pmd_run *run, uintptr_t addr, uint64_t first_pfn)
{
	struct page_region r[SCAN_VEC];
	struct pm_scan_arg arg;
	unsigned present = 0, huge = 0;
	long n, i;

	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.start = addr;
	arg.end = addr + PMD_CHUNK_SIZE;
	arg.vec = (uintptr_t)r;
	arg.vec_len = SCAN_VEC;
	arg.category_anyof_mask = PAGE_IS_PRESENT | PAGE_IS_HUGE;
	arg.return_mask = PAGE_IS_PRESENT | PAGE_IS_HUGE;
	do {
		n = ioctl(run->pagemap_fd, PAGEMAP_SCAN, &arg);
		/* walk_end: where a full vector stopped the walk (end if it did not) */
		if (n < 0 || arg.walk_end <= arg.start || arg.walk_end > arg.end)
			return PMD_THPS_UNKNOWN;
		for (i = 0; i < n; i++) {
			unsigned pages = (unsigned)((r[i].end - r[i].start) >> PMD_PAGE_SHIFT);

			if (r[i].categories & PAGE_IS_PRESENT)
				present += pages;
			if (r[i].categories & PAGE_IS_HUGE)
				huge += pages;
		}
		arg.start = arg.walk_end;
	} while (arg.start < arg.end);
	if (!present)
		return PMD_THPS_NONE;
	if (huge == PMD_CHUNK_PAGES)
		return PMD_THPS_THP;
	if (huge)
		return PMD_THPS_MIXED;
	/* small mappings of (part of) a huge page: a split PMD */
	if (kpageflags(run, first_pfn) & (1ull << PMD_KPF_THP))
		return PMD_THPS_MIXED;
	return PMD_THPS_PTE;
}

/* The fallback: what the VMA holding @addr says about all of it. */
static enum pmd_thp_state by_smaps(uintptr_t addr, unsigned present)
{
	struct pmd_smaps_vma v;

	if (pmd_smaps_vma(addr, &v) || !v.rss)
		return PMD_THPS_UNKNOWN;
	if (v.huge == v.rss && present == PMD_CHUNK_PAGES)
		return PMD_THPS_THP;
	if (!v.huge)
		return PMD_THPS_PTE;
	return PMD_THPS_UNKNOWN;
}

#define PAGEMAP_BATCH 64 /* pagemap entries per read */

static enum pmd_thp_state by_pagemap(struct pmd_run *run, uintptr_t addr, uint64_t *first_pfn)
{
	uint64_t e[PAGEMAP_BATCH]; /* a batch, not the chunk: small stacks (--stack-size) */
	unsigned i, present = 0, thp = 0;
	bool contiguous = true, pfns = false;
	uint64_t pfn0 = 0;

	for (i = 0; i < PMD_CHUNK_PAGES; i++) {
		uint64_t ent, pfn;

		if (i % PAGEMAP_BATCH == 0 &&
		    pread(run->pagemap_fd, e, sizeof(e), (off_t)(((addr >> PMD_PAGE_SHIFT) + i) * 8)) !=
			    sizeof(e))
			return PMD_THPS_UNKNOWN;
		ent = e[i % PAGEMAP_BATCH];
		pfn = ent & PMD_PM_PFN_MASK;
		if (!(ent & PMD_PM_PRESENT)) {
			contiguous = false;
			continue;
		}
		if (!present++)
			pfn0 = pfn - i;
		pfns |= pfn != 0;
		if (pfn != pfn0 + i)
			contiguous = false;
		if (kpageflags(run, pfn) & (1ull << PMD_KPF_THP))
			thp++;
	}
	*first_pfn = pfn0;
	if (!present)
		return PMD_THPS_NONE;
	if (!pfns || run->kpageflags_fd < 0 || run->cfg->thp_probe == PMD_PROBE_SMAPS)
		return by_smaps(addr, present);
	if (thp == PMD_CHUNK_PAGES && contiguous && pfn0 % PMD_CHUNK_PAGES == 0)
		return PMD_THPS_THP;
	return thp ? PMD_THPS_MIXED : PMD_THPS_PTE;
}

enum pmd_thp_state pmd_thp_probe(struct pmd_run *run, const struct pmd_chunk *c, uint64_t *pfn)
{
	uintptr_t addr = __atomic_load_n(&c->addr, __ATOMIC_ACQUIRE);
	uint64_t first = 0;
	enum pmd_thp_state s;

	if (run->pagemap_fd < 0)
		return PMD_THPS_UNKNOWN;
	if (run->scan_ok) {
		first = pmd_page_pfn(run, (const void *)addr);
		s = by_scan(run, addr, first);
	} else {
		s = by_pagemap(run, addr, &first);
	}
	if (pfn)
		*pfn = first;
	return s;
}

const char *pmd_thp_probe_method(const struct pmd_run *run)
{
	if (run->pagemap_fd < 0)
		return "none (pagemap unreadable)";
	if (run->scan_ok)
		return "pagemap_scan";
	if (run->kpageflags_fd >= 0)
		return "pagemap+kpageflags";
	return "pagemap+smaps (per VMA)";
}

struct arena_sums {
	uintptr_t lo, hi;
	uint64_t rss, huge, outside;
};

static int add_vma(const struct pmd_smaps_vma *v, void *arg)
{
	struct arena_sums *a = arg;

	if (v->start >= a->lo && v->end <= a->hi) {
		a->rss += v->rss;
		a->huge += v->huge;
	} else {
		a->outside += v->rss;
	}
	return 0;
}

int pmd_arena_smaps(const struct pmd_arena *a, uint64_t *rss, uint64_t *huge, uint64_t *other)
{
	struct arena_sums s = { (uintptr_t)a->base,
				(uintptr_t)a->base + a->size + (size_t)a->nspare * PMD_CHUNK_SIZE };
	int rc = pmd_smaps_walk(add_vma, &s);

	*rss = s.rss;
	*huge = s.huge;
	if (other)
		*other = s.outside;
	return rc;
}
