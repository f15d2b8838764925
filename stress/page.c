// SPDX-License-Identifier: GPL-2.0
/*
 * page: AIM9 page_test. Move the program break up by --page-size, write
 * every page gained (one first-touch fault each), move it back, again and
 * again, while the storm faults in the same mm.
 *
 * The race and the cost: every cycle faults a run of fresh 4 KiB pages into
 * the heap VMA (do_anonymous_page(), and __pte_alloc() for each new page
 * table), then brk() takes the mmap write lock to shrink the VMA, zapping
 * the PTEs and freeing the pages and page tables. The fault half is where
 * "mm: Check if PTE is already allocated during page fault" (2011) bought
 * page_test +9.4%: handle_mm_fault() called __pte_alloc() without checking
 * pmd_none() first, taking the page-table lock for nothing. AIM9 reports
 * "System Allocations & Pages/second"; here ops are cycles and "pages" the
 * pages touched (docs/benchmarks.md relates the two).
 *
 * How to tell it fired: cycles/s, pages/s and faults/s (one fault per page
 * touched), the expand, touch and shrink latencies; a fresh page that is
 * not zero is NONZERO_AFTER_ZAP (data outlived the last shrink), a write
 * that does not read back LOST_WRITE. The break is shared with the brk
 * stressor and kept away from malloc as stress/brk.c explains.
 */
#include <pmdstress/stressor.h>

#include "brk.h"

struct page_opts {
	uint64_t size;
	uint64_t rate;
};

#define O(f) offsetof(struct page_opts, f)
static const struct pmd_option page_options[] = {
	{ "size", PMD_OPT_SIZE, O(size), "1M", PMD_PAGE_SIZE, 1ull << 30, NULL,
	  "bytes the break moves up (and every page of them is written) and back each cycle" },
	{ "rate", PMD_OPT_UINT, O(rate), "0", 0, 100000000, NULL,
	  "cycles per second, all page workers together (0: back to back)" },
	PMD_OPT_END,
};

static const char *page_supported(struct pmd_sinst *si)
{
	return pmd_brk_supported(si, ((const struct page_opts *)si->opts)->size);
}

static int page_run(struct pmd_worker *w)
{
	const struct page_opts *o = w->si->opts;
	struct pmd_brk_loop l = { .size = o->size, .touch = true, .rate = o->rate };

	return pmd_brk_run(w, &l);
}

const struct pmd_stressor pmd_stressor_page = {
	.abi = PMD_STRESSOR_ABI,
	.name = "page",
	.summary = "grow the break, touch every page, shrink it, while the storm faults (AIM9 "
		   "page_test)",
	.options = page_options,
	.opts_size = sizeof(struct page_opts),
	.metrics = pmd_brk_metrics,
	.workers = "1",
	.supported = page_supported,
	.setup = pmd_brk_setup,
	.run = page_run,
	.teardown = pmd_brk_teardown,
};
