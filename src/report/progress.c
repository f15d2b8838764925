// SPDX-License-Identifier: GPL-2.0
/*
 * The status shown while a run goes: ops/s, faults/s, THP share and events
 * so far. One rewritten line on a terminal, plain lines otherwise (CI logs).
 */
#include "progress.h"

#include "run.h"
#include "units.h"

#include <string.h>
#include <unistd.h>

void pmd_sample_take(const struct pmd_run *run, struct pmd_sample *s)
{
	unsigned i, k;

	memset(s, 0, sizeof(*s));
	s->t_ns = pmd_now_ns();
	for (i = 0; i < run->nworkers; i++) {
		const struct pmd_wstats *ws = &run->wstats[i];
		const struct pmd_metric *m = run->workers[i].si->st->metrics;

		for (k = 0; m && m[k].name; k++) {
			if (m[k].flags & PMD_MF_RACE_ROUNDS)
				s->race_rounds += pmd_counter_read(&ws->counter[k]);
			if (m[k].flags & PMD_MF_RACE_HITS)
				s->race_hits += pmd_counter_read(&ws->counter[k]);
		}
		s->ops += pmd_counter_read(&ws->counter[0]);
		s->faults += pmd_counter_read(&ws->faults);
		for (k = 0; k < PMD_THPS_COUNT; k++)
			s->thp[k] += pmd_counter_read(&ws->thp[k]);
	}
	s->events = __atomic_load_n(&run->ev_posted, __ATOMIC_RELAXED);
}

double pmd_sample_thp_share(const struct pmd_sample *s)
{
	uint64_t mapped = s->thp[PMD_THPS_THP] + s->thp[PMD_THPS_PTE] + s->thp[PMD_THPS_MIXED];

	return mapped ? (double)s->thp[PMD_THPS_THP] / (double)mapped : -1.0;
}

static void rate(double v, char *buf, size_t len)
{
	if (v >= 1e9)
		snprintf(buf, len, "%.2fG", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, len, "%.2fM", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, len, "%.1fK", v / 1e3);
	else
		snprintf(buf, len, "%.0f", v);
}

void pmd_progress_init(struct pmd_progress *p, const struct pmd_run *run)
{
	unsigned mode = run->cfg->progress;

	memset(p, 0, sizeof(*p));
	p->out = stdout;
	p->enabled = mode != PMD_PROGRESS_OFF && !run->cfg->quiet;
	p->live = mode == PMD_PROGRESS_LINE ||
		  (mode == PMD_PROGRESS_AUTO && isatty(fileno(stdout)));
}

void pmd_progress_tick(struct pmd_progress *p, const struct pmd_run *run,
		       const struct pmd_sample *prev, const struct pmd_sample *sample)
{
	struct pmd_sample s = *sample;
	uint64_t now = s.t_ns;
	double dt, share;
	char ops[16], flt[16], thp[16], el[16], tot[16], where[96];
	char line[224];
	int n;

	if (!p->enabled)
		return;
	dt = (double)(s.t_ns - prev->t_ns) / 1e9;
	if (dt <= 0)
		dt = 1e-9;
	/* this interval's share, so a live line shows what is happening now */
	{
		struct pmd_sample d = s;
		unsigned k;

		for (k = 0; k < PMD_THPS_COUNT; k++)
			d.thp[k] -= prev->thp[k];
		share = pmd_sample_thp_share(&d);
	}
	rate((double)(s.ops - prev->ops) / dt, ops, sizeof(ops));
	rate((double)(s.faults - prev->faults) / dt, flt, sizeof(flt));
	if (share < 0)
		snprintf(thp, sizeof(thp), "-");
	else
		snprintf(thp, sizeof(thp), "%.0f%%", share * 100);
	pmd_format_ns((double)(now - run->t0), el, sizeof(el));
	pmd_format_ns((double)run->cfg->duration_ns, tot, sizeof(tot));
	/*
	 * Bench mode: a round ends when its work is done (mmap_anon_test's
	 * sweep takes seconds) or at --duration, which is then only a limit:
	 * the round, its time, and the limit as one. run->nrounds counts the
	 * rounds done, so it is the current round's index.
	 */
	if (run->cfg->rounds && run->cfg->warmup && !run->nrounds)
		snprintf(where, sizeof(where), "warm-up %s, at most %s", el, tot);
	else if (run->cfg->rounds)
		snprintf(where, sizeof(where), "round %u/%llu %s, at most %s",
			 run->nrounds + !run->cfg->warmup, (unsigned long long)run->cfg->rounds, el,
			 tot);
	else
		snprintf(where, sizeof(where), "%s/%s", el, tot);
	n = snprintf(line, sizeof(line), "[%s] ops %s/s  faults %s/s  thp %s  events %llu", where,
		     ops, flt, thp, (unsigned long long)s.events);
	if (p->live) {
		/* \r and erase-to-end: one line rewritten in place */
		fprintf(p->out, "\r%s\033[K", line);
		p->width = (unsigned)n;
	} else {
		fprintf(p->out, "%s\n", line);
	}
	fflush(p->out);
}

void pmd_progress_done(struct pmd_progress *p, const struct pmd_run *run)
{
	(void)run;
	if (p->enabled && p->live && p->width) {
		fprintf(p->out, "\n");
		fflush(p->out);
	}
}
