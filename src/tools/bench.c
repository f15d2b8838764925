// SPDX-License-Identifier: GPL-2.0
/*
 * Bench mode (--rounds N): the same measurement N times in one process, a
 * fresh arena and fresh workers each time, after one warm-up round that is
 * reported apart (memory this VM handed back to its host costs many times
 * more to touch the first time). One row per round, then mean, stddev, min
 * and max over the measured rounds: the shape of the before/after tables in
 * the threads that motivated the tool. The same rows go into the JSON.
 */
#include "bench.h"

#include <pmdstress/pool.h>

#include "report.h"
#include "run.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * Room for one more round. The rounds live in the pool (pmdstress/pool.h),
 * which no fork child gets, not on the heap, where, kept to the end, they
 * were resident pages that every fork of the fork and exec stressors
 * copied and every child's exit dropped again, so that each round forked a
 * little slower than the one before it (bench/run.py forkexec measures the
 * round after the warm-up). 0, or -errno.
 */
static int rounds_room(struct pmd_run *run)
{
	const size_t one = sizeof(*run->rounds);
	unsigned cap;
	void *p;

	if (run->nrounds < run->rounds_cap)
		return 0;
	cap = run->rounds_cap ? 2 * run->rounds_cap : 8;
	p = pmd_pool_realloc(run->rounds, one * run->rounds_cap, one * cap);
	if (!p)
		return -errno;
	run->rounds = p;
	run->rounds_cap = cap;
	return 0;
}

void pmd_lat_digest(const struct pmd_hist *h, struct pmd_lat_digest *d)
{
	d->count = h->count;
	d->mean = pmd_hist_mean(h);
	d->min = h->count ? h->min : 0;
	d->p50 = pmd_hist_quantile(h, 0.5);
	d->p90 = pmd_hist_quantile(h, 0.9);
	d->p99 = pmd_hist_quantile(h, 0.99);
	d->p99_9 = pmd_hist_quantile(h, 0.999);
	d->max = h->max;
}

/* Add a measured round's stressor @t into the run's sum @m; @t's buckets go. */
static void measured_add(struct pmd_totals *m, struct pmd_totals *t)
{
	unsigned k;

	for (k = 0; k < PMD_MAX_METRICS; k++) {
		m->counter[k] += t->counter[k];
		if (!t->hist[k].buckets)
			continue;
		/* the first time (init sets min; a failed one leaves no buckets, said at merge) */
		if (!m->hist[k].buckets && !m->hist[k].count)
			pmd_hist_init(&m->hist[k]);
		pmd_hist_merge(&m->hist[k], &t->hist[k]);
	}
	m->faults += t->faults;
	for (k = 0; k < PMD_THPS_COUNT; k++)
		m->thp[k] += t->thp[k];
}

void pmd_bench_round_done(struct pmd_run *run, unsigned index, bool warmup)
{
	struct pmd_round *r;
	unsigned s, k;

	if (rounds_room(run))
		return;
	/*
	 * The mapping is zero until written: write only the stressors the
	 * round had, so that a round of one stressor stays a few pages.
	 */
	r = &run->rounds[run->nrounds++];
	r->index = index;
	r->warmup = warmup;
	r->secs = run->t_end > run->t0 ? (double)(run->t_end - run->t0) / 1e9 : 0;
	snprintf(r->stop_reason, sizeof(r->stop_reason), "%s", run->stop_reason);
	r->nsinst = run->nsinst;
	for (s = 0; s < r->nsinst; s++) {
		struct pmd_round_stressor *rs = &r->st[s];
		struct pmd_totals *t = &rs->t;

		rs->si = run->sinst[s];
		*t = run->totals[s];
		/* a reason supported() formatted lives in the sinst, which the next round reuses */
		if (rs->si.skipped == run->sinst[s].why)
			rs->si.skipped = rs->si.why;
		if (!warmup)
			measured_add(&run->measured[s], t);
		/* what the round keeps of a histogram is its digest, count, sum, min, max */
		for (k = 0; k < PMD_MAX_METRICS; k++) {
			if (!t->hist[k].buckets)
				continue;
			pmd_lat_digest(&t->hist[k], &rs->lat[k]);
			pmd_hist_free(&t->hist[k]);
		}
	}
	/*
	 * The buckets went with the round. Only the entries the round used:
	 * zeroing all 32 would make their 30 KiB resident for nothing (in .bss,
	 * where the run's state lay until df4cfd3, pages every later fork
	 * copied; seen in /proc/PID/pagemap).
	 */
	memset(run->totals, 0, run->nsinst * sizeof(run->totals[0]));
	if (!run->cfg->quiet)
		pmd_bench_row(stdout, run, r);
}

/* The measured rounds' sum becomes the run's totals, which the reports read. */
void pmd_bench_finish(struct pmd_run *run)
{
	unsigned i, s, k;

	run->measured_secs = 0;
	for (i = 0; i < run->nrounds; i++)
		if (!run->rounds[i].warmup)
			run->measured_secs += run->rounds[i].secs;
	for (s = 0; s < PMD_MAX_STRESSORS; s++)
		for (k = 0; k < PMD_MAX_METRICS; k++)
			pmd_hist_free(&run->totals[s].hist[k]);
	memcpy(run->totals, run->measured, sizeof(run->totals));
	memset(run->measured, 0, sizeof(run->measured));
	if (!run->cfg->quiet)
		pmd_bench_summary(stdout, run);
}

void pmd_bench_free(struct pmd_run *run)
{
	unsigned s, k;

	pmd_pool_free(run->rounds, sizeof(*run->rounds) * run->rounds_cap);
	run->rounds = NULL;
	run->nrounds = run->rounds_cap = 0;
	for (s = 0; s < PMD_MAX_STRESSORS; s++)
		for (k = 0; k < PMD_MAX_METRICS; k++) {
			pmd_hist_free(&run->totals[s].hist[k]);
			pmd_hist_free(&run->measured[s].hist[k]);
		}
}

/* ---- the columns ------------------------------------------------------------- */

/* Fill @v with this round's value of every column; returns the column count. */
static unsigned columns(const struct pmd_round *r, double *v, char (*name)[48], unsigned max)
{
	unsigned s, k, n = 0;

	for (s = 0; s < r->nsinst; s++) {
		const struct pmd_sinst *si = &r->st[s].si;
		const struct pmd_totals *t = &r->st[s].t;
		const struct pmd_metric *m;

		if (si->skipped)
			continue;
#define COL(label, value)                                                                          \
	do {                                                                                       \
		if (n < max) {                                                                     \
			if (name)                                                                  \
				snprintf(name[n], sizeof(name[0]), "%s %s", si->st->name, label);  \
			v[n++] = (value);                                                          \
		}                                                                                  \
	} while (0)
		COL("ops/s", r->secs > 0 ? (double)t->counter[0] / r->secs : 0);
		if (t->faults || (si->st->metrics && si->st->metrics[0].flags & PMD_MF_BENCH))
			COL("faults", (double)t->faults);
		for (k = 0, m = si->st->metrics; m && m->name; m++, k++) {
			char label[40];

			if (!(m->flags & PMD_MF_BENCH) || k == 0)
				continue;
			if (m->kind == PMD_METRIC_COUNT) {
				COL(m->name, (double)t->counter[k]);
				continue;
			}
			snprintf(label, sizeof(label), "%s ms", m->name);
			COL(label, (double)t->hist[k].sum / 1e6);
			if (t->faults) {
				snprintf(label, sizeof(label), "%s ns/fault", m->name);
				COL(label, (double)t->hist[k].sum / (double)t->faults);
			}
		}
#undef COL
	}
	return n;
}

static void header(FILE *out, const struct pmd_round *r)
{
	char names[PMD_BENCH_MAX_COLS][48];
	double v[PMD_BENCH_MAX_COLS];
	unsigned n = columns(r, v, names, PMD_BENCH_MAX_COLS), i;

	fprintf(out, "\n%-8s", "round");
	for (i = 0; i < n; i++)
		fprintf(out, " %22s", names[i]);
	fprintf(out, "\n");
}

static void row(FILE *out, const char *label, const double *v, unsigned n)
{
	unsigned i;

	fprintf(out, "%-8s", label);
	for (i = 0; i < n; i++)
		fprintf(out, " %22.2f", v[i]);
	fprintf(out, "\n");
}

void pmd_bench_row(FILE *out, const struct pmd_run *run, const struct pmd_round *r)
{
	double v[PMD_BENCH_MAX_COLS];
	unsigned n = columns(r, v, NULL, PMD_BENCH_MAX_COLS);
	char label[16];

	if (r == &run->rounds[0])
		header(out, r);
	if (r->warmup)
		snprintf(label, sizeof(label), "warmup");
	else
		snprintf(label, sizeof(label), "%u", r->index);
	row(out, label, v, n);
	fflush(out);
}

void pmd_bench_stats(const struct pmd_run *run, struct pmd_bench_summary *sum)
{
	double v[PMD_BENCH_MAX_COLS];
	unsigned i, c;

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < run->nrounds; i++) {
		const struct pmd_round *r = &run->rounds[i];
		unsigned n = columns(r, v, i ? NULL : sum->name, PMD_BENCH_MAX_COLS);

		if (!sum->ncols)
			sum->ncols = n;
		if (r->warmup || n != sum->ncols)
			continue;
		sum->n++;
		for (c = 0; c < n; c++) {
			/* Welford: a numerically stable running mean and variance */
			double d = v[c] - sum->mean[c];

			sum->mean[c] += d / sum->n;
			sum->m2[c] += d * (v[c] - sum->mean[c]);
			if (sum->n == 1 || v[c] < sum->min[c])
				sum->min[c] = v[c];
			if (sum->n == 1 || v[c] > sum->max[c])
				sum->max[c] = v[c];
		}
	}
	for (c = 0; c < sum->ncols; c++)
		sum->stddev[c] = sum->n > 1 ? sqrt(sum->m2[c] / (sum->n - 1)) : 0;
}

void pmd_bench_summary(FILE *out, const struct pmd_run *run)
{
	struct pmd_bench_summary s;

	pmd_bench_stats(run, &s);
	if (!s.n)
		return;
	fprintf(out, "--------\n");
	row(out, "mean", s.mean, s.ncols);
	row(out, "stddev", s.stddev, s.ncols);
	row(out, "min", s.min, s.ncols);
	row(out, "max", s.max, s.ncols);
	fprintf(out, "(%u measured round%s%s)\n", s.n, s.n == 1 ? "" : "s",
		run->nrounds && run->rounds[0].warmup ? "; the warm-up round is not in these" : "");
}

double pmd_bench_value(const struct pmd_run *run, unsigned i, unsigned col)
{
	double v[PMD_BENCH_MAX_COLS];
	unsigned n = columns(&run->rounds[i], v, NULL, PMD_BENCH_MAX_COLS);

	return col < n ? v[col] : 0;
}
