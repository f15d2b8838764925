// SPDX-License-Identifier: GPL-2.0
/*
 * The verifier: every slot of every page against what its owner recorded.
 * Slots 0..nslots-1 of a page hold the stamps of the chunk's generation,
 * except slots whose worker skipped the round; every other slot, and every
 * page a partner zeroed, must read zero. A page under MADV_FREE and clean
 * since (the kernel may drop it whole) reads exactly that, or all zero. A
 * page a partner raced while the round wrote it (the chunk's race records,
 * arena.h) is judged slot by slot by when that slot's store ran (the round
 * log): zero only where the race allows it (stored before a MADV_DONTNEED:
 * must read zero; stored after any zap: must hold its stamp; overlapping
 * it: either), never anything else. One event per bad page carries its
 * first bad slot; a page reported is not judged again until the chunk is
 * reset, the chunk's other pages are.
 *
 * The owner's look at the whole chunk then settles what it found, so that
 * every later look (the next round's, zap's, split's, fork's) is exact
 * again: a raced page found all zero must read zero from then on; one that
 * lost some slots gets them written back, so it holds every stamp again; an
 * intact page a MADV_FREE raced and no store is known to have followed is
 * still clean and may read all zero later. Then the races are forgotten.
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
 * fault allocates (no zero page: src/mem/zeropage.c), a page, charged to the
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

/* What a raced slot may hold, by when its store ran against the races on its page. */
enum slot_rule {
	RULE_STAMP,  /* stored after every race on the page (or none touched it) */
	RULE_ZERO,   /* stored before a MADV_DONTNEED or unmap: the zap took it */
	RULE_EITHER, /* stored before a MADV_FREE, or its time overlaps a race */
	RULE_DROP,   /* (a finding) zero, though stored after a slot its clean page kept */
};

/* One page's look: counts and its first bad slot. */
struct page_look {
	unsigned bad, first, stamps, zeroed, nonzero;
	uint64_t first_exp, first_act;
	const struct pmd_chunk_race *why; /* the race that ruled the first bad slot */
	enum slot_rule rule;	    /* and how */
	bool freed;		    /* a MADV_FREE raced the page */
	bool dirtied;		    /* a store known to have followed every such MADV_FREE */
};

static void note_bad(struct page_look *pl, unsigned s, uint64_t exp, uint64_t act,
		     const struct pmd_chunk_race *why, enum slot_rule rule)
{
	if (!pl->bad++) {
		pl->first = s;
		pl->first_exp = exp;
		pl->first_act = act;
		pl->why = why;
		pl->rule = rule;
	}
}

/* When slot @s's store to page @p ran, from the round's log: [*lo, *hi]; false if unknown. */
static bool store_time(const struct pmd_chunk *c, unsigned p, unsigned s, uint64_t *lo,
		       uint64_t *hi)
{
	const struct pmd_round_log *log = __atomic_load_n(&c->log, __ATOMIC_ACQUIRE);

	*lo = *hi = 0;
	return log && log->nworkers &&
	       pmd_round_store_time(log, s % log->nworkers, s / log->nworkers, p, lo, hi);
}

/*
 * The rule for a slot of raced page @p (a slot that must hold a stamp had
 * nobody raced it) whose store ran in [lo, hi] if @known; *why gets the race
 * that decided it. The store's time is a block of the worker's stores
 * between two marks: after a race means the block began after the race's
 * syscall returned, before means it ended before the syscall began;
 * anything else overlaps.
 */
static enum slot_rule race_rule(const struct pmd_chunk *c, unsigned nr, unsigned p, bool known,
				uint64_t lo, uint64_t hi, const struct pmd_chunk_race **why,
				bool *after_free)
{
	enum slot_rule rule = RULE_STAMP;
	unsigned i;

	*why = NULL;
	*after_free = false;
	for (i = 0; i < nr; i++) {
		const struct pmd_chunk_race *r = &c->race[i];

		if (p < r->lo || p >= r->hi)
			continue;
		if (known && lo > r->t_end) {
			if (rule == RULE_STAMP)
				*why = r;
			continue;
		}
		if (known && hi < r->t_begin && r->kind != PMD_RACE_FREE) {
			*why = r;
			return RULE_ZERO;
		}
		rule = RULE_EITHER;
		*why = r;
	}
	for (i = 0; known && i < nr; i++)
		if (c->race[i].kind == PMD_RACE_FREE && p >= c->race[i].lo && p < c->race[i].hi) {
			*after_free = lo > c->race[i].t_end;
			if (!*after_free)
				break;
		}
	return rule;
}

/* The slow look: a page raced this round (@nr races), or clean after MADV_FREE (@maybe). */
static void look_page(const struct pmd_arena *a, const struct pmd_chunk *c, const char *addr,
		      unsigned p, bool zero, bool maybe, unsigned nr, struct page_look *pl,
		      struct pmd_verify_tally *t)
{
	uint32_t lpage = c->index * (uint32_t)PMD_CHUNK_PAGES + p;
	unsigned s, i, first_zero = 0, late_zero = 0;
	uint64_t first_zero_exp = 0, late_exp = 0, zero_lo = 0, stamp_hi = UINT64_MAX;
	bool raced = nr && pmd_mask_test(c->race_pages, p), zapped = false;
	const struct pmd_chunk_race *freed_by = NULL;

	for (i = 0; raced && i < nr; i++) {
		const struct pmd_chunk_race *r = &c->race[i];

		if (p < r->lo || p >= r->hi)
			continue;
		if (r->kind == PMD_RACE_FREE)
			freed_by = r;
		else
			zapped = true;
	}
	pl->freed = freed_by;
	for (s = 0; s < PMD_PAGE_SLOTS; s++) {
		uint64_t act = pmd_load(pmd_page_slot((char *)addr, p, s));
		uint64_t exp = expected_at(a, c, lpage, s, zero);
		enum slot_rule rule = RULE_STAMP;
		const struct pmd_chunk_race *why = NULL;
		bool after_free = false, known = false;
		uint64_t lo = 0, hi = 0;

		pl->nonzero += act != 0;
		if (!exp) {
			if (act)
				note_bad(pl, s, 0, act, NULL, RULE_STAMP);
			continue;
		}
		pl->stamps++;
		if (raced) {
			known = store_time(c, p, s, &lo, &hi);
			rule = race_rule(c, nr, p, known, lo, hi, &why, &after_free);
			pl->dirtied |= after_free;
			t->timed += rule == RULE_ZERO || (rule == RULE_STAMP && why);
			t->either += rule == RULE_EITHER;
		}
		if (act == exp) {
			/* stored before a zap of its page, yet still there: the zap missed it */
			if (rule == RULE_ZERO)
				note_bad(pl, s, 0, act, why, rule);
			if (known && hi < stamp_hi)
				stamp_hi = hi;
			continue;
		}
		if (!act && (rule != RULE_STAMP || maybe)) {
			if (!pl->zeroed++) {
				first_zero = s;
				first_zero_exp = exp;
			}
			if (known && lo >= zero_lo) {
				zero_lo = lo;
				late_zero = s;
				late_exp = exp;
			}
			continue;
		}
		note_bad(pl, s, exp, act, why, rule);
	}
	/*
	 * Only MADV_FREE on the page: the kernel drops a clean page whole, and
	 * no store may have dirtied it since the MADV_FREE, so what a drop took
	 * is every slot stored before it. A slot read zero whose store began
	 * after another's that the page kept ended was not taken by a drop.
	 */
	if (freed_by && !zapped && zero_lo && stamp_hi < zero_lo)
		note_bad(pl, late_zero, late_exp, 0, freed_by, RULE_DROP);
	t->raced_pages += raced;
	/* a clean page is dropped whole or kept whole: never a part of it */
	if (maybe && !raced && pl->zeroed && pl->nonzero)
		note_bad(pl, first_zero, first_zero_exp, 0, NULL, RULE_STAMP);
}

/*
 * Write back the stamps page @p lost to a race, until it holds all of them.
 * Returns -1, or the first slot that will not hold its stamp (noted in @pl).
 */
static int write_back(const struct pmd_arena *a, const struct pmd_chunk *c, char *addr, unsigned p,
		      bool zero, struct page_look *pl)
{
	uint32_t lpage = c->index * (uint32_t)PMD_CHUNK_PAGES + p;
	unsigned tries, s;
	uint64_t exp = 0, act = 0;

	/*
	 * Twice at most: a page a MADV_FREE left clean may be dropped while we
	 * write (its other stamps with it); our first store made the fresh page
	 * dirty, so the second pass finds it kept.
	 */
	for (tries = 0; tries < 2; tries++) {
		for (s = 0; s < PMD_PAGE_SLOTS; s++) {
			exp = expected_at(a, c, lpage, s, zero);
			if (exp && pmd_load(pmd_page_slot(addr, p, s)) != exp)
				pmd_store(pmd_page_slot(addr, p, s), exp);
		}
		for (s = 0; s < PMD_PAGE_SLOTS; s++) {
			exp = expected_at(a, c, lpage, s, zero);
			act = pmd_load(pmd_page_slot(addr, p, s));
			if (act != exp)
				break;
		}
		if (s == PMD_PAGE_SLOTS)
			return -1;
	}
	note_bad(pl, s, exp, act, NULL, RULE_STAMP);
	return (int)s;
}

/*
 * The owner, after a clean look at raced or MADV_FREE'd page @p: what it
 * holds from now on. A stamp it cannot write back is noted in @pl.
 */
static void settle_page(const struct pmd_arena *a, struct pmd_chunk *c, char *addr, unsigned p,
			bool zero, struct page_look *pl)
{
	if (!pl->zeroed) {
		/* intact; still clean if no store is known to have followed the MADV_FREE */
		if (pl->freed && !pl->dirtied)
			pmd_mask_set(c->maybe_pages, p);
		return;
	}
	pmd_mask_clear(c->maybe_pages, p);
	if (pl->zeroed == pl->stamps) {
		pmd_mask_set(c->zero_pages, p);
		return;
	}
	write_back(a, c, addr, p, zero, pl);
}

/* ", stored after MADV_DONTNEED of pages 3..3 raced the round": why a raced slot was judged so. */
static void race_text(char *buf, size_t len, const struct page_look *pl)
{
	static const char *const how[] = {
		[RULE_STAMP] = "stored after",
		[RULE_ZERO] = "stored before",
		[RULE_EITHER] = "in the page of",
		[RULE_DROP] = "stored after a slot the page kept, in the page of",
	};
	static const char *const so[] = {
		[RULE_STAMP] = " (a write after it must stay)",
		[RULE_ZERO] = " (the zap must have taken it)",
		[RULE_EITHER] = "",
		[RULE_DROP] = " (a clean page is dropped whole)",
	};
	static const char *const names[] = { [PMD_RACE_DONTNEED] = "MADV_DONTNEED",
					     [PMD_RACE_FREE] = "MADV_FREE",
					     [PMD_RACE_UNMAP] = "an unmap" };
	const struct pmd_chunk_race *r = pl->why;
	const char *name = r && r->kind < sizeof(names) / sizeof(names[0]) && names[r->kind] ?
				   names[r->kind] : "a race";

	buf[0] = 0;
	if (!r)
		return;
	snprintf(buf, len, ", %s %s of pages %u..%u that raced the round%s", how[pl->rule], name,
		 r->lo, r->hi - 1u, so[pl->rule]);
}

/*
 * The OR of slots @from.. of page @p: zero when none of them holds
 * anything. Eight loads to a step and one branch at the end: a branch per
 * slot made the zero pages of a huge-mapped chunk most of a round's
 * verification.
 */
static uint64_t tail_or(char *addr, unsigned p, unsigned from)
{
	const uint64_t *v = pmd_page_slot(addr, p, 0);
	uint64_t acc = 0;
	unsigned s = from;

	for (; s < PMD_PAGE_SLOTS && (s & 7); s++)
		acc |= pmd_load(&v[s]);
	for (; s < PMD_PAGE_SLOTS; s += 8)
		acc |= pmd_load(&v[s]) | pmd_load(&v[s + 1]) | pmd_load(&v[s + 2]) |
		       pmd_load(&v[s + 3]) | pmd_load(&v[s + 4]) | pmd_load(&v[s + 5]) |
		       pmd_load(&v[s + 6]) | pmd_load(&v[s + 7]);
	return acc;
}

static unsigned verify_pages(struct pmd_worker *w, struct pmd_chunk *c, char *addr, unsigned lo,
			     unsigned hi, struct pmd_verify_tally *t)
{
	const struct pmd_arena *a = w->si->arena;
	/* the owner's look at the whole chunk settles what it finds */
	const bool settle = lo == 0 && hi >= PMD_CHUNK_PAGES;
	uint32_t nr = __atomic_load_n(&c->nraces, __ATOMIC_ACQUIRE);
	uint64_t absent[PMD_MASK_WORDS];
	bool skip_absent;
	unsigned p, s, total = 0;

	if (nr > PMD_RACES)
		nr = PMD_RACES;
	skip_absent = absent_zero_pages(w, c, addr, lo, hi, absent);
	for (p = lo; p < hi && p < PMD_CHUNK_PAGES; p++) {
		uint32_t lpage = c->index * (uint32_t)PMD_CHUNK_PAGES + p;
		bool zero = pmd_mask_test(c->zero_pages, p);
		bool maybe = pmd_mask_test(c->maybe_pages, p);
		struct page_look pl;
		char when[160];

		/* one corruption is one report, not one per later look at the page */
		if (pmd_mask_test(c->reported_pages, p))
			continue;
		if (skip_absent && pmd_mask_test(absent, p))
			continue;
		memset(&pl, 0, sizeof(pl));
		if (maybe || (nr && pmd_mask_test(c->race_pages, p))) {
			look_page(a, c, addr, p, zero, maybe, nr, &pl, t);
			if (!pl.bad && settle)
				settle_page(a, c, addr, p, zero, &pl);
		} else {
			/* the slots no store wrote, all zero in the common case: one look */
			unsigned from = zero ? 0 : c->nslots < PMD_PAGE_SLOTS ? c->nslots
									  : PMD_PAGE_SLOTS;
			unsigned end = tail_or(addr, p, from) ? PMD_PAGE_SLOTS : from;

			for (s = 0; s < end; s++) {
				uint64_t act = pmd_load(pmd_page_slot(addr, p, s));
				uint64_t exp;

				if (!act && s >= from)
					continue;
				exp = expected_at(a, c, lpage, s, zero);
				if (act != exp)
					note_bad(&pl, s, exp, act, NULL, RULE_STAMP);
			}
		}
		if (!pl.bad)
			continue;
		race_text(when, sizeof(when), &pl);
		post_bad_page(w, c, p, pl.first, pl.first_exp, pl.first_act,
			      pmd_stamp_classify(a->tag_key, pl.first_act, pl.first_exp, lpage,
						 c->gen, pl.first, c->domain),
			      pl.bad, when);
		pmd_mask_set(c->reported_pages, p);
		total += pl.bad;
	}
	if (total)
		__atomic_or_fetch(&c->flags, PMD_CF_REPORTED, __ATOMIC_RELAXED);
	if (settle && (nr || __atomic_load_n(&c->log, __ATOMIC_RELAXED)))
		pmd_chunk_races_clear(c);
	return total;
}

unsigned pmd_verify_pages(struct pmd_worker *w, struct pmd_chunk *c, char *addr, unsigned lo,
			  unsigned hi)
{
	struct pmd_verify_tally t = { 0 };

	return verify_pages(w, c, addr, lo, hi, &t);
}

unsigned pmd_verify_chunk(struct pmd_worker *w, struct pmd_chunk *c, char *addr,
			  struct pmd_verify_tally *t)
{
	struct pmd_verify_tally none = { 0 };

	return verify_pages(w, c, addr, 0, PMD_CHUNK_PAGES, t ? t : &none);
}

bool pmd_verify_may_read_zero(const struct pmd_arena *a, const struct pmd_chunk *c, unsigned page,
			      unsigned slot)
{
	uint32_t nr = __atomic_load_n(&c->nraces, __ATOMIC_ACQUIRE);
	const struct pmd_chunk_race *why;
	bool after_free;

	uint64_t lo, hi;
	bool known;

	if (nr > PMD_RACES)
		nr = PMD_RACES;
	if (!expected_at(a, c, c->index * (uint32_t)PMD_CHUNK_PAGES + page, slot,
			 pmd_mask_test(c->zero_pages, page)))
		return true;
	if (!nr || !pmd_mask_test(c->race_pages, page))
		return false;
	known = store_time(c, page, slot, &lo, &hi);
	return race_rule(c, nr, page, known, lo, hi, &why, &after_free) != RULE_STAMP;
}

/*
 * Page @page of live chunk @c as read while its round writes it: @v holds
 * its 512 words, the mapped page itself (@mem: loaded atomically) or a copy
 * another path took of it (a pipe's vmsplice'd page, process_vm_readv).
 */
static unsigned judge_in_round(struct pmd_worker *w, struct pmd_chunk *c, unsigned page,
			       const uint64_t *v, bool mem, const char *when)
{
	const struct pmd_arena *a = w->si->arena;
	uint32_t lpage = c->index * (uint32_t)PMD_CHUNK_PAGES + page;
	unsigned s, bad = 0, first = 0;
	uint64_t first_exp = 0, first_act = 0;

	if (pmd_mask_test(c->reported_pages, page))
		return 0;
	for (s = 0; s < PMD_PAGE_SLOTS; s++) {
		uint64_t act = mem ? pmd_load(&v[s]) : v[s];
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
			      bad, when);
		pmd_mask_set(c->reported_pages, page);
		__atomic_or_fetch(&c->flags, PMD_CF_REPORTED, __ATOMIC_RELAXED);
	}
	return bad;
}

unsigned pmd_verify_in_round(struct pmd_worker *w, struct pmd_chunk *c, char *addr, unsigned page)
{
	return judge_in_round(w, c, page, pmd_page_slot(addr, page, 0), true,
			      ", read while the round wrote");
}

unsigned pmd_verify_copy_in_round(struct pmd_worker *w, struct pmd_chunk *c, unsigned page,
				  const uint64_t *words, const char *when)
{
	return judge_in_round(w, c, page, words, false, when);
}

unsigned pmd_verify_live(struct pmd_worker *w, struct pmd_chunk *c, char *addr, unsigned lo,
			 unsigned hi, unsigned *pages)
{
	const struct pmd_arena *a = w->si->arena;
	const struct pmd_round_log *log = __atomic_load_n(&c->log, __ATOMIC_ACQUIRE);
	unsigned p, s, total = 0;

	*pages = 0;
	if (!log || !log->nworkers)
		return 0;
	for (p = lo; p < hi && p < PMD_CHUNK_PAGES; p++) {
		uint32_t lpage = c->index * (uint32_t)PMD_CHUNK_PAGES + p;
		bool zero = pmd_mask_test(c->zero_pages, p);
		struct page_look pl;

		unsigned wk;

		/* a raced page is the round's owner's to judge, once its races are over */
		if (pmd_mask_test(c->reported_pages, p) || pmd_mask_test(c->race_pages, p))
			continue;
		/*
		 * Only a page some worker has stored to: reading one nobody has
		 * touched would fault it in (a zero page, or where reads allocate
		 * a page of its own) under the workers' first stores, and change
		 * the race it is there to watch.
		 */
		for (wk = 0; wk < log->nworkers && !pmd_round_store_done(log, wk, 0, p); wk++)
			;
		if (wk == log->nworkers)
			continue;
		memset(&pl, 0, sizeof(pl));
		for (s = 0; s < PMD_PAGE_SLOTS; s++) {
			uint64_t act = pmd_load(pmd_page_slot(addr, p, s));
			uint64_t exp = expected_at(a, c, lpage, s, zero);

			if (act == exp)
				continue;
			/*
			 * A store still to come, or made since we read: the mark
			 * that says it is done is read with acquire, so a read
			 * after it sees the store.
			 */
			if (!act) {
				unsigned wk2 = s % log->nworkers, pass = s / log->nworkers;

				if (!pmd_round_store_done(log, wk2, pass, p))
					continue;
				act = pmd_load(pmd_page_slot(addr, p, s));
				if (act == exp)
					continue;
			}
			note_bad(&pl, s, exp, act, NULL, RULE_STAMP);
		}
		/*
		 * A zap that raced us marked the page before its syscall: seen
		 * here if what we read is its doing (the syscall orders the mark
		 * before the zap, this fence our reads before the look).
		 */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (pmd_mask_test(c->race_pages, p))
			continue;
		(*pages)++;
		if (!pl.bad)
			continue;
		post_bad_page(w, c, p, pl.first, pl.first_exp, pl.first_act,
			      pmd_stamp_classify(a->tag_key, pl.first_act, pl.first_exp, lpage,
						 c->gen, pl.first, c->domain),
			      pl.bad, ", read while the round wrote");
		pmd_mask_set(c->reported_pages, p);
		__atomic_or_fetch(&c->flags, PMD_CF_REPORTED, __ATOMIC_RELAXED);
		total += pl.bad;
	}
	return total;
}
