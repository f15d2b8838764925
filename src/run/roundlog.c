// SPDX-License-Identifier: GPL-2.0
/*
 * The round log (struct pmd_round_log, arena.h): how a fault round writes a
 * chunk, and when. Each worker publishes the step it takes through the
 * window and, every `per` stores, a mark of the run clock; its n-th store
 * then ran between two marks. That is what turns "a partner zeroed these
 * pages during the round" into a rule per slot: a store that ran before a
 * MADV_DONTNEED must read zero, one that ran after any zap must hold its
 * stamp, and only a store that overlapped the zap may read either. Marks,
 * not a clock read per store: a read costs about as much as a store to a
 * mapped page, so 16 blocks per worker and chunk keep the touch loop what
 * it measures.
 */
#include <pmdstress/arena.h>

#include "run.h"

#include <string.h>

/* @a's inverse modulo @m (@a prime to @m, m >= 2): extended Euclid. */
static uint32_t inverse_mod(uint32_t a, uint32_t m)
{
	int64_t t = 0, nt = 1, r = m, nr = a % m;

	while (nr) {
		int64_t q = r / nr, x;

		x = t - q * nt;
		t = nt;
		nt = x;
		x = r - q * nr;
		r = nr;
		nr = x;
	}
	return (uint32_t)(t < 0 ? t + m : t);
}

void pmd_round_log_start(struct pmd_round_log *log, unsigned wk, unsigned step, uint64_t t0,
			 struct pmd_round_clock *k)
{
	uint64_t *mark;

	memset(k, 0, sizeof(*k));
	if (!log || wk >= log->nworkers)
		return;
	mark = &log->mark[(size_t)wk * PMD_ROUND_MARKS];
	__atomic_store_n(&log->step[wk], step, __ATOMIC_RELAXED);
	__atomic_store_n(&log->inv[wk], log->win > 1 ? inverse_mod(step, log->win) : 0,
			 __ATOMIC_RELAXED);
	/* release: whoever sees the first mark sees the step and its inverse */
	__atomic_store_n(&mark[0], t0, __ATOMIC_RELEASE);
	k->mark = mark;
	k->per = log->per;
	k->left = log->per;
}

void pmd_round_clock_mark(struct pmd_round_clock *k)
{
	k->left = k->per;
	/* release: whoever sees the mark sees every store before it done */
	if (++k->j < PMD_ROUND_MARKS - 1)
		__atomic_store_n(&k->mark[k->j], pmd_now_ns(), __ATOMIC_RELEASE);
}

void pmd_round_clock_end(struct pmd_round_clock *k)
{
	unsigned j = k->j < PMD_ROUND_MARKS - 1 ? k->j + 1 : PMD_ROUND_MARKS - 1;
	uint64_t t;

	if (!k->mark)
		return;
	t = pmd_now_ns();
	for (; j < PMD_ROUND_MARKS; j++)
		__atomic_store_n(&k->mark[j], t, __ATOMIC_RELEASE);
}

long pmd_round_store_index(const struct pmd_round_log *log, unsigned wk, unsigned pass, unsigned p)
{
	uint32_t at, inv;

	if (!log || wk >= log->nworkers || pass >= log->passes || p >= PMD_CHUNK_PAGES)
		return -1;
	at = (p + (uint32_t)PMD_CHUNK_PAGES - log->first) % (uint32_t)PMD_CHUNK_PAGES;
	if (at >= log->win)
		return -1;
	/* a seed round's worker starts at its own page: count from there */
	if (log->own_first)
		at = (at + log->win - wk % log->win) % log->win;
	inv = __atomic_load_n(&log->inv[wk], __ATOMIC_RELAXED);
	/* pass 0's k-th store went to at = k * step % win, so k = at * step^-1 % win */
	return (long)pass * log->win + (long)((uint64_t)at * inv % log->win);
}

bool pmd_round_store_time(const struct pmd_round_log *log, unsigned wk, unsigned pass, unsigned p,
			  uint64_t *lo, uint64_t *hi)
{
	const uint64_t *mark;
	long n;
	unsigned b;

	if (!log || wk >= log->nworkers || !log->per)
		return false;
	mark = &log->mark[(size_t)wk * PMD_ROUND_MARKS];
	/* acquire: the worker's step, published before its first mark */
	if (!__atomic_load_n(&mark[0], __ATOMIC_ACQUIRE))
		return false;
	n = pmd_round_store_index(log, wk, pass, p);
	if (n < 0)
		return false;
	b = (unsigned)(n / log->per);
	if (b >= PMD_ROUND_MARKS - 1)
		return false;
	*lo = __atomic_load_n(&mark[b], __ATOMIC_ACQUIRE);
	*hi = __atomic_load_n(&mark[b + 1], __ATOMIC_ACQUIRE);
	return *lo && *hi;
}

bool pmd_round_store_done(const struct pmd_round_log *log, unsigned wk, unsigned pass, unsigned p)
{
	uint64_t lo, hi;

	return pmd_round_store_time(log, wk, pass, p, &lo, &hi);
}

bool pmd_round_page_done(const struct pmd_round_log *log, unsigned p)
{
	unsigned wk;

	if (!log || !log->passes || pmd_round_store_index(log, 0, 0, p) < 0)
		return log && log->passes; /* outside the window: nobody stores there */
	for (wk = 0; wk < log->nworkers; wk++)
		if (!pmd_round_store_done(log, wk, log->passes - 1, p))
			return false;
	return true;
}
