// SPDX-License-Identifier: GPL-2.0
/*
 * The fork child's check of a live round's chunk (stress/fork_live.c), on a
 * copy built here: each worker's stores seen are a prefix of its order (a
 * page a partner zeroed may have lost one), every value is the round's,
 * and the child's own stamps read back.
 */
#include "check.h"

#include "../../stress/fork_live.h"

#include <stdlib.h>

#define OWN (PMD_PAGE_SLOTS - 1)

static unsigned found[4], last_page, last_other;

static void note(void *ctx, const struct pmd_fork_live_finding *f)
{
	(void)ctx;
	found[f->kind]++;
	last_page = f->page;
	last_other = f->other_page;
}

static unsigned run(const struct pmd_fork_live *l, uint64_t key, bool mine, const uint64_t *raced)
{
	memset(found, 0, sizeof(found));
	return pmd_fork_live_check(l, key, OWN, mine, raced, note, NULL);
}

/* Worker @wk's @i-th store goes to this page (the round log's order). */
static unsigned page_of(const struct pmd_fork_live *l, unsigned wk, unsigned i)
{
	/* a seed round's worker starts at its own page of the window */
	unsigned at0 = l->own_first ? wk % l->win : 0;

	return (l->first + (unsigned)((at0 + (uint64_t)(i % l->win) * l->step[wk]) % l->win)) %
	       PMD_CHUNK_PAGES;
}

/* Worker @wk's first @n stores of the round, into @l's copy. */
static void store_prefix(const struct pmd_fork_live *l, uint64_t key, unsigned wk, unsigned n)
{
	unsigned i, p;

	for (i = 0; i < n; i++) {
		p = page_of(l, wk, i);
		pmd_store(pmd_page_slot(l->addr, p, wk),
			  pmd_stamp(key, PMD_STAMP_DOMAIN_RUN, l->lbase + p, l->gen, wk));
	}
}

int main(void)
{
	static const unsigned steps[] = {1, 511, 3, 77};
	static const unsigned seen[] = {512, 0, 200, 37}; /* each worker's prefix */
	const uint64_t key = pmd_stamp_mix(99);
	uint64_t raced[PMD_MASK_WORDS] = {0};
	struct pmd_fork_live *l = calloc(1, sizeof(*l));
	char *chunk = aligned_alloc(PMD_PAGE_SIZE, PMD_CHUNK_SIZE);
	unsigned wk, p;

	memset(chunk, 0, PMD_CHUNK_SIZE);
	l->addr = chunk;
	l->lbase = 7 * PMD_CHUNK_PAGES;
	l->gen = 42;
	l->nslots = 4;
	l->domain = PMD_STAMP_DOMAIN_RUN;
	l->first = 300;
	l->win = PMD_CHUNK_PAGES;
	l->nworkers = 4;
	l->passes = 1;
	for (wk = 0; wk < 4; wk++) {
		l->step[wk] = steps[wk];
		l->started[wk] = 1;
		store_prefix(l, key, wk, seen[wk]);
	}
	CHECK(run(l, key, false, NULL) == 0, "a prefix of each worker's stores: clean");
	CHECK(run(l, key, false, raced) == 0, "and in the order check too");

	/* worker 2's 10th store missing while its 199th is seen: torn */
	p = page_of(l, 2, 10);
	pmd_store(pmd_page_slot(chunk, p, 2), 0);
	CHECK(run(l, key, false, NULL) == 0, "the value check alone cannot tell");
	CHECK(run(l, key, false, raced) == 1 && found[PMD_FORK_LIVE_TORN] == 1 &&
		  last_page == page_of(l, 2, 199) && last_other == p,
	      "an earlier store missing behind a later one: torn (seen page %u, missing %u)",
	      last_page, last_other);
	/* ...unless a partner zeroed that page before the fork */
	pmd_mask_set(raced, p);
	CHECK(run(l, key, false, raced) == 0, "in a page raced before the fork it may be gone");
	memset(raced, 0, sizeof(raced));
	pmd_store(pmd_page_slot(chunk, p, 2),
		  pmd_stamp(key, PMD_STAMP_DOMAIN_RUN, l->lbase + p, l->gen, 2));

	/* a worker whose order the parent did not know: values only */
	l->started[3] = 0;
	pmd_store(pmd_page_slot(chunk, page_of(l, 3, 3), 3), 0);
	CHECK(run(l, key, false, raced) == 0, "a worker not started at the copy: values only");
	l->started[3] = 1;
	CHECK(run(l, key, false, raced) == 1 && found[PMD_FORK_LIVE_TORN] == 1,
	      "the same, its order known: torn");
	pmd_store(pmd_page_slot(chunk, page_of(l, 3, 3), 3),
		  pmd_stamp(key, PMD_STAMP_DOMAIN_RUN, l->lbase + page_of(l, 3, 3), l->gen, 3));

	/* a value the round does not write: another page's stamp, a post-round gen */
	p = page_of(l, 0, 5);
	pmd_store(pmd_page_slot(chunk, p, 0),
		  pmd_stamp(key, PMD_STAMP_DOMAIN_RUN, l->lbase + p + 1, l->gen, 0));
	CHECK(run(l, key, false, NULL) == 1 && found[PMD_FORK_LIVE_WRONG] == 1 && last_page == p,
	      "another page's stamp: wrong, at page %u", last_page);
	pmd_store(pmd_page_slot(chunk, p, 0),
		  pmd_stamp(key, PMD_STAMP_DOMAIN_RUN, l->lbase + p, l->gen, 0));
	pmd_store(pmd_page_slot(chunk, 9, 5), 1);
	CHECK(run(l, key, false, NULL) == 1 && found[PMD_FORK_LIVE_WRONG] == 1,
	      "data in a slot the round does not write: wrong");
	pmd_store(pmd_page_slot(chunk, 9, 5), 0);

	/* the child's own stamps: zero before it writes, its stamps after */
	pmd_fork_live_write(l, key, OWN);
	CHECK(run(l, key, true, raced) == 0, "its own stamps read back");
	CHECK(run(l, key, false, NULL) == PMD_CHUNK_PAGES &&
		  found[PMD_FORK_LIVE_WRONG] == PMD_CHUNK_PAGES,
	      "before its write, its slot must be zero");
	pmd_store(pmd_page_slot(chunk, 17, OWN), 0);
	CHECK(run(l, key, true, raced) == 1 && found[PMD_FORK_LIVE_OWN] == 1 && last_page == 17,
	      "its own write lost: own, at page %u", last_page);

	/*
	 * A seed round: a window of 32 pages wrapping past the chunk's end,
	 * each worker's first store to a page of its own (stress/fault.c), the
	 * rest of the chunk left empty.
	 */
	memset(chunk, 0, PMD_CHUNK_SIZE);
	l->first = 500;
	l->win = 32;
	l->own_first = true;
	memset(l->zero, 0, sizeof(l->zero));
	for (p = 0; p < PMD_CHUNK_PAGES; p++)
		if ((p + PMD_CHUNK_PAGES - l->first) % PMD_CHUNK_PAGES >= l->win)
			pmd_mask_set(l->zero, p);
	for (wk = 0; wk < 4; wk++) {
		static const unsigned seed_steps[] = {1, 31, 3, 5}, seed_seen[] = {32, 1, 20, 5};

		l->step[wk] = seed_steps[wk];
		store_prefix(l, key, wk, seed_seen[wk]);
	}
	CHECK(run(l, key, false, raced) == 0,
	      "a seed round's prefixes, each from the worker's own page: clean");
	/* worker 2's first store (its own page, 502) missing behind its 19th: torn */
	p = page_of(l, 2, 0);
	pmd_store(pmd_page_slot(chunk, p, 2), 0);
	CHECK(p == 502 && run(l, key, false, raced) == 1 && found[PMD_FORK_LIVE_TORN] == 1 &&
		  last_other == p,
	      "a seed round's first store missing: torn (missing page %u)", last_other);

	free(chunk);
	free(l);
	printf("1..%d\n", check_count);
	return check_failed != 0;
}
