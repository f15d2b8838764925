// SPDX-License-Identifier: GPL-2.0
/*
 * The verifier: every slot of every page against what its owner recorded.
 * Slots 0..nslots-1 of a page hold the stamps of the chunk's generation,
 * except slots whose worker skipped the round; every other slot, and every
 * page a partner zeroed, must read zero. A round a zap raced (DISTURBED) and
 * pages under MADV_FREE may read zero where a stamp was written, never
 * anything else. One event per bad page carries its first bad slot.
 */
#include "compat.h"
#include "run.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static uint64_t expected_at(const struct pmd_arena *a, const struct pmd_chunk *c, uint32_t lpage,
			    unsigned slot, bool zero_page)
{
	if (zero_page || slot >= c->nslots || pmd_mask_test(c->skipped, slot))
		return 0;
	return pmd_stamp(a->tag_key, c->domain, lpage, c->gen, slot);
}

static void post_bad_page(struct pmd_worker *w, struct pmd_chunk *c, unsigned page,
			  unsigned slot, uint64_t expected, uint64_t actual, enum pmd_class cls,
			  unsigned bad, const char *when)
{
	struct pmd_run *run = w->si->run;
	struct pmd_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = PMD_EV_CORRUPTION;
	ev.class = cls;
	ev.t_ns = pmd_now_ns();
	ev.worker = (int)w->id;
	ev.stressor = w->si->st->name;
	pmd_event_at_chunk(&ev, c, page, slot);
	ev.expected = expected;
	ev.actual = actual;
	ev.bad_slots = bad;
	ev.thp = pmd_thp_probe(run, c, NULL);
	ev.pfn = pmd_page_pfn(run, (const void *)(uintptr_t)(ev.addr & ~(PMD_PAGE_SIZE - 1)));
	snprintf(ev.text, sizeof(ev.text), "%s at chunk %u page %u slot %u%s: expected %#llx, "
		 "read %#llx (%u bad slots in the page)", pmd_class_name(cls), c->index, page, slot,
		 when, (unsigned long long)expected, (unsigned long long)actual, bad);
	pmd_event_post(run, &ev);
}

/*
 * Reading a page nobody wrote faults it in: a zero-page mapping, a fault per
 * page of a PTE-mapped chunk a seed round left mostly empty; where a read
 * fault allocates (no zero page: src/zeropage.c), a page, charged to the
 * run's cgroup under --memcg-headroom. A private anonymous page with
 * neither a PTE nor a swap entry reads zero by definition, so a page that must read zero and is not
 * there is left unread; a page that is there is read as always. Sets bit p
 * of @absent for such pages of [@lo, @hi); false if none is known absent.
 * Shared (shmem) pages can sit in the page cache with no PTE: never left
 * unread. Called in the run's process only (pagemap_fd is its /proc/self).
 */
static bool absent_zero_pages(struct pmd_worker *w, const struct pmd_chunk *c, const char *addr,
			      unsigned lo, unsigned hi, uint64_t absent[PMD_MASK_WORDS])
{
	const struct pmd_arena *a = w->si->arena;
	const int fd = w->si->run->pagemap_fd;
	uint64_t pm[64];
	bool any = false;
	unsigned p, i;

	memset(absent, 0, PMD_MASK_WORDS * sizeof(uint64_t));
	if (a->shared || fd < 0)
		return false;
	if (hi > PMD_CHUNK_PAGES)
		hi = PMD_CHUNK_PAGES;
	for (p = lo & ~63u; p < hi; p += 64) {
		uint64_t want = __atomic_load_n(&c->zero_pages[p / 64], __ATOMIC_RELAXED);
		off_t off = (off_t)((((uintptr_t)addr >> PMD_PAGE_SHIFT) + p) * sizeof(uint64_t));

		if (!want)
			continue;
		if (pread(fd, pm, sizeof(pm), off) != (ssize_t)sizeof(pm))
			return any;
		for (i = 0; i < 64; i++)
			if ((want >> i & 1) && !(pm[i] & (PMD_PM_PRESENT | PMD_PM_SWAP)))
				absent[p / 64] |= 1ull << i;
		any |= absent[p / 64] != 0;
	}
	return any;
}

unsigned pmd_verify_pages(struct pmd_worker *w, struct pmd_chunk *c, char *addr, unsigned lo,
			  unsigned hi)
{
	const struct pmd_arena *a = w->si->arena;
	uint32_t flags = __atomic_load_n(&c->flags, __ATOMIC_ACQUIRE);
	bool disturbed = flags & PMD_CF_DISTURBED;
	uint64_t absent[PMD_MASK_WORDS];
	bool skip_absent;
	unsigned p, s, total = 0;

	/* one corruption is one report, not one per later look at the chunk */
	if (flags & PMD_CF_REPORTED)
		return 0;

	skip_absent = absent_zero_pages(w, c, addr, lo, hi, absent);
	for (p = lo; p < hi && p < PMD_CHUNK_PAGES; p++) {
		uint32_t lpage = c->index * (uint32_t)PMD_CHUNK_PAGES + p;
		bool zero = pmd_mask_test(c->zero_pages, p);
		bool maybe = disturbed || pmd_mask_test(c->maybe_pages, p);
		unsigned bad = 0, first = 0;
		uint64_t first_exp = 0, first_act = 0;

		if (skip_absent && pmd_mask_test(absent, p))
			continue;
		for (s = 0; s < PMD_PAGE_SLOTS; s++) {
			uint64_t act = pmd_load(pmd_page_slot(addr, p, s));
			uint64_t exp;

			/* the common case first: an unwritten slot reading zero */
			if (!act && (s >= c->nslots || zero))
				continue;
			exp = expected_at(a, c, lpage, s, zero);
			if (act == exp || (!act && maybe))
				continue;
			if (!bad++) {
				first = s;
				first_exp = exp;
				first_act = act;
			}
		}
		if (bad) {
			enum pmd_class cls = pmd_stamp_classify(a->tag_key, first_act, first_exp,
								lpage, c->gen, first, c->domain);

			post_bad_page(w, c, p, first, first_exp, first_act, cls, bad, "");
			total += bad;
		}
	}
	if (total)
		__atomic_or_fetch(&c->flags, PMD_CF_REPORTED, __ATOMIC_RELAXED);
	return total;
}

unsigned pmd_verify_in_round(struct pmd_worker *w, struct pmd_chunk *c, char *addr, unsigned page)
{
	const struct pmd_arena *a = w->si->arena;
	uint32_t lpage = c->index * (uint32_t)PMD_CHUNK_PAGES + page;
	unsigned s, bad = 0, first = 0;
	uint64_t first_exp = 0, first_act = 0;

	if (__atomic_load_n(&c->flags, __ATOMIC_ACQUIRE) & PMD_CF_REPORTED)
		return 0;
	for (s = 0; s < PMD_PAGE_SLOTS; s++) {
		uint64_t act = pmd_load(pmd_page_slot(addr, page, s));
		uint64_t exp = expected_at(a, c, lpage, s, false);

		/* not written yet, or written by its worker: nothing else */
		if (!act || act == exp)
			continue;
		if (!bad++) {
			first = s;
			first_exp = exp;
			first_act = act;
		}
	}
	if (bad) {
		post_bad_page(w, c, page, first, first_exp, first_act,
			      pmd_stamp_classify(a->tag_key, first_act, first_exp, lpage, c->gen,
						 first, c->domain),
			      bad, ", read while the round wrote");
		__atomic_or_fetch(&c->flags, PMD_CF_REPORTED, __ATOMIC_RELAXED);
	}
	return bad;
}
