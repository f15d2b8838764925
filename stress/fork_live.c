// SPDX-License-Identifier: GPL-2.0
/* The live round a fork copies, and its child's check (see stress/fork_live.h). */
#include "fork_live.h"

#include <string.h>

bool pmd_fork_live_take(struct pmd_worker *w, struct pmd_fork_live *l, unsigned start)
{
	struct pmd_arena *a = w->si->arena;
	unsigned i, wk;

	l->c = NULL;
	l->held = false;
	for (i = 0; i < a->nchunks; i++) {
		struct pmd_chunk *c = &a->chunks[(start + i) % a->nchunks];
		const struct pmd_round_log *log;
		char *addr;

		if (pmd_chunk_state(c) != PMD_CHUNK_ROUND ||
		    !__atomic_load_n(&c->log, __ATOMIC_ACQUIRE))
			continue;
		if (!pmd_chunk_disturb_begin(c))
			continue;
		/* the child writes every page: not while split holds one read-only */
		if (!pmd_chunk_flag_unless(c, PMD_CF_FORKING, PMD_CF_RO_HOLE | PMD_CF_FORKING)) {
			pmd_chunk_disturb_end(c);
			continue;
		}
		/* inside the bracket the round's log and expectations hold until we end it */
		log = __atomic_load_n(&c->log, __ATOMIC_ACQUIRE);
		if (!log || log->nworkers > PMD_PAGE_SLOTS || !(addr = pmd_chunk_enter(c))) {
			pmd_chunk_flag_clear(c, PMD_CF_FORKING);
			pmd_chunk_disturb_end(c);
			continue;
		}
		l->c = c;
		l->held = true;
		l->addr = addr;
		l->lbase = c->index * (uint32_t)PMD_CHUNK_PAGES;
		l->gen = __atomic_load_n(&c->gen, __ATOMIC_RELAXED);
		l->nslots = c->nslots;
		l->domain = c->domain;
		l->first = log->first;
		l->win = log->win;
		l->own_first = log->own_first;
		l->nworkers = log->nworkers;
		l->passes = log->passes;
		for (wk = 0; wk < PMD_MASK_WORDS; wk++)
			l->zero[wk] = __atomic_load_n(&c->zero_pages[wk], __ATOMIC_RELAXED);
		for (wk = 0; wk < log->nworkers; wk++) {
			/* acquire: a worker's first mark is published after its step */
			l->started[wk] = __atomic_load_n(&log->mark[(size_t)wk * PMD_ROUND_MARKS],
							 __ATOMIC_ACQUIRE) != 0;
			l->step[wk] = __atomic_load_n(&log->step[wk], __ATOMIC_RELAXED);
		}
		return true;
	}
	return false;
}

void pmd_fork_live_release(struct pmd_fork_live *l, uint64_t raced[PMD_MASK_WORDS])
{
	unsigned i;

	if (!l->held)
		return;
	/*
	 * A zap that changed what fork() copied marked its pages before its
	 * syscall, and its syscall and fork() take the mmap lock in turn: the
	 * marks it made are here now. Later ones only make the child laxer.
	 */
	for (i = 0; i < PMD_MASK_WORDS; i++)
		raced[i] = __atomic_load_n(&l->c->race_pages[i], __ATOMIC_ACQUIRE);
	pmd_chunk_exit(l->c);
	pmd_chunk_flag_clear(l->c, PMD_CF_FORKING);
	pmd_chunk_disturb_end(l->c);
	l->held = false;
}

/* ---- the child: plain loops, no lock, no malloc -------------------------------- */

static bool bit(const uint64_t *mask, unsigned b)
{
	return mask[b / 64] & (1ull << (b % 64));
}

/* What the round writes into slot @s of page @p (0: nothing). */
static uint64_t expect(const struct pmd_fork_live *l, uint64_t key, unsigned p, unsigned s)
{
	if (bit(l->zero, p) || s >= l->nslots)
		return 0;
	return pmd_stamp(key, l->domain, l->lbase + p, l->gen, s);
}

static uint64_t own_stamp(const struct pmd_fork_live *l, uint64_t key, unsigned p, unsigned own)
{
	return pmd_stamp(key, PMD_STAMP_DOMAIN_CHILD, l->lbase + p, l->gen, own);
}

/* The page of worker @wk's @i-th store (the round log's order, arena.h). */
static unsigned page_of(const struct pmd_fork_live *l, unsigned wk, unsigned i)
{
	unsigned at = l->win > 1 ? (unsigned)((uint64_t)(i % l->win) * l->step[wk] % l->win) : 0;

	/* a seed round's worker starts at its own page of the window */
	if (l->own_first)
		at = (at + wk % l->win) % l->win;

	return (l->first + at) % (unsigned)PMD_CHUNK_PAGES;
}

void pmd_fork_live_write(const struct pmd_fork_live *l, uint64_t key, unsigned own)
{
	unsigned p;

	if (l->nslots > own)
		return;
	for (p = 0; p < PMD_CHUNK_PAGES; p++)
		pmd_store(pmd_page_slot(l->addr, p, own), own_stamp(l, key, p, own));
}

/* Worker @wk's stores seen must be a prefix of its order; 1 if they are not (noted). */
static unsigned check_prefix(const struct pmd_fork_live *l, uint64_t key, unsigned wk,
			     const uint64_t *raced, pmd_fork_live_note note, void *ctx)
{
	const unsigned n = l->win * l->passes;
	struct pmd_fork_live_finding f;
	unsigned i, last = 0, missing = 0;
	bool seen = false;

	for (i = 0; i < n; i++) {
		unsigned p = page_of(l, wk, i), s = wk + i / l->win * l->nworkers;
		uint64_t v = pmd_load(pmd_page_slot(l->addr, p, s));

		if (v && v == expect(l, key, p, s)) {
			last = i;
			seen = true;
		}
	}
	memset(&f, 0, sizeof(f));
	for (i = 0; seen && i < last; i++) {
		unsigned p = page_of(l, wk, i), s = wk + i / l->win * l->nworkers;
		uint64_t v = pmd_load(pmd_page_slot(l->addr, p, s)), exp = expect(l, key, p, s);

		/* a page a partner zeroed before the fork may have lost it */
		if (v == exp || (!v && bit(raced, p)))
			continue;
		if (!missing++) {
			f.other_page = p;
			f.seq_missing = i;
			f.expected = exp;
			f.actual = v;
		}
	}
	if (!missing)
		return 0;
	f.kind = PMD_FORK_LIVE_TORN;
	f.page = page_of(l, wk, last);
	f.slot = wk + last / l->win * l->nworkers;
	f.seq_seen = last;
	f.bad = missing;
	note(ctx, &f);
	return 1;
}

unsigned pmd_fork_live_check(const struct pmd_fork_live *l, uint64_t key, unsigned own, bool mine,
			     const uint64_t *raced, pmd_fork_live_note note, void *ctx)
{
	unsigned p, s, wk, bad = 0;

	for (p = 0; p < PMD_CHUNK_PAGES; p++) {
		struct pmd_fork_live_finding f;

		memset(&f, 0, sizeof(f));
		for (s = 0; s < PMD_PAGE_SLOTS; s++) {
			uint64_t v = pmd_load(pmd_page_slot(l->addr, p, s)), exp;
			enum pmd_fork_live_kind kind = PMD_FORK_LIVE_WRONG;

			if (s == own && l->nslots <= own) {
				exp = mine ? own_stamp(l, key, p, own) : 0;
				kind = mine ? PMD_FORK_LIVE_OWN : PMD_FORK_LIVE_WRONG;
			} else {
				exp = expect(l, key, p, s);
				/* not stored before the fork: the order is judged below */
				if (!v)
					continue;
			}
			if (v == exp || f.bad++)
				continue;
			f.kind = kind;
			f.slot = s;
			f.expected = exp;
			f.actual = v;
		}
		if (f.bad) {
			f.page = p;
			note(ctx, &f);
			bad++;
		}
	}
	for (wk = 0; raced && wk < l->nworkers; wk++)
		if (l->started[wk])
			bad += check_prefix(l, key, wk, raced, note, ctx);
	return bad;
}
