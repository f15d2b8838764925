// SPDX-License-Identifier: GPL-2.0
/* The text report: what ran, how fast, how it was mapped, what went wrong. */
#include "report.h"

#include "forensics.h"
#include "replay.h"
#include "run.h"
#include "units.h"

#include <inttypes.h>
#include <string.h>

double pmd_run_seconds(const struct pmd_run *run)
{
	uint64_t end = run->t_end ? run->t_end : pmd_now_ns();

	if (run->measured_secs > 0)
		return run->measured_secs;
	return end > run->t0 ? (double)(end - run->t0) / 1e9 : 0.0;
}

static void human(double v, char *buf, size_t len)
{
	if (v >= 1e9)
		snprintf(buf, len, "%.2fG", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, len, "%.2fM", v / 1e6);
	else if (v >= 1e4)
		snprintf(buf, len, "%.1fK", v / 1e3);
	else
		snprintf(buf, len, "%.0f", v);
}

void pmd_report_start(FILE *out, const struct pmd_run *run)
{
	const struct pmd_config *cfg = run->cfg;
	char sz[32], dur[32];
	unsigned i;

	if (cfg->quiet)
		return;
	pmd_format_size(cfg->size, sz, sizeof(sz));
	pmd_format_duration(cfg->duration_ns, dur, sizeof(dur));
	fprintf(out, "pmdstress %s: scenario %s, seed 0x%" PRIx64 ", %u threads, %s %s arena, "
		     "thp=%s, %s\n",
		PMD_VERSION, cfg->scenario, cfg->seed_used, run->nworkers, sz,
		cfg->shared ? "shared" : "private",
		(const char *[]){ "madvise", "nohuge", "toggle", "inherit" }[cfg->thp], dur);
	/* a shared arena is shmem: its huge pages follow shmem_enabled, not enabled */
	fprintf(out, "kernel %s, %ld CPUs, %u NUMA node%s, THP %s=%s defrag=%s%s; stressors:",
		run->sys.release, run->sys.cpus_online, run->sys.nodes,
		run->sys.nodes == 1 ? "" : "s", cfg->shared ? "shmem_enabled" : "enabled",
		pmd_sysinfo_thp(&run->sys, cfg->shared ? "shmem_enabled" : "enabled"),
		pmd_sysinfo_thp(&run->sys, "defrag"),
		run->sys.zero_page_reads == 0 ? ", no zero page (read faults allocate)" : "");
	for (i = 0; i < run->nsinst; i++) {
		const struct pmd_sinst *si = &run->sinst[i];

		if (si->skipped)
			fprintf(out, " %s(skipped: %s)", si->st->name, si->skipped);
		else
			fprintf(out, " %s x%u", si->st->name, si->nworkers);
	}
	fprintf(out, "\n");
	fflush(out);
}

static void stressor_table(FILE *out, const struct pmd_run *run, double secs)
{
	unsigned i;

	fprintf(out, "\n%-10s %7s %10s %10s %10s %10s %6s %6s %6s\n", "stressor", "workers", "ops",
		"ops/s", "faults", "faults/s", "thp", "pte", "mixed");
	for (i = 0; i < run->nsinst; i++) {
		const struct pmd_sinst *si = &run->sinst[i];
		const struct pmd_totals *t = &run->totals[i];
		char a[16], b[16], c[16], d[16];

		if (si->skipped) {
			fprintf(out, "%-10s %7s  skipped: %s\n", si->st->name, "-", si->skipped);
			continue;
		}
		human((double)t->counter[0], a, sizeof(a));
		human(secs > 0 ? (double)t->counter[0] / secs : 0, b, sizeof(b));
		human((double)t->faults, c, sizeof(c));
		human(secs > 0 ? (double)t->faults / secs : 0, d, sizeof(d));
		fprintf(out, "%-10s %7u %10s %10s %10s %10s %6" PRIu64 " %6" PRIu64 " %6" PRIu64 "\n",
			si->st->name, si->nworkers, a, b, c, d, t->thp[PMD_THPS_THP],
			t->thp[PMD_THPS_PTE], t->thp[PMD_THPS_MIXED]);
	}
}

static void counters_table(FILE *out, const struct pmd_run *run, double secs)
{
	unsigned i, k;
	bool any = false;

	for (i = 0; i < run->nsinst; i++) {
		const struct pmd_sinst *si = &run->sinst[i];
		const struct pmd_metric *m;

		if (si->skipped)
			continue;
		for (k = 1, m = si->st->metrics + 1; m->name; m++, k++) {
			char a[16], b[16];

			if (m->kind != PMD_METRIC_COUNT || (m->flags & PMD_MF_DIGEST))
				continue;
			if (!any)
				fprintf(out, "\n%-28s %12s %12s\n", "counter", "total", "per second");
			any = true;
			human((double)run->totals[i].counter[k], a, sizeof(a));
			human(secs > 0 ? (double)run->totals[i].counter[k] / secs : 0, b, sizeof(b));
			fprintf(out, "%-10s %-17s %12s %12s\n", si->st->name, m->name, a, b);
		}
	}
}

static void latency_table(FILE *out, const struct pmd_run *run)
{
	static const double q[] = { 0.5, 0.9, 0.99, 0.999 };
	unsigned i, k, j;
	bool any = false;

	for (i = 0; i < run->nsinst; i++) {
		const struct pmd_sinst *si = &run->sinst[i];
		const struct pmd_metric *m;

		if (si->skipped)
			continue;
		for (k = 0, m = si->st->metrics; m->name; m++, k++) {
			const struct pmd_hist *h = &run->totals[i].hist[k];
			char v[16];

			if (m->kind != PMD_METRIC_LATENCY || !h->count)
				continue;
			if (!any)
				fprintf(out, "\n%-28s %9s %9s %9s %9s %9s %9s\n", "latency", "count",
					"p50", "p90", "p99", "p99.9", "max");
			any = true;
			human((double)h->count, v, sizeof(v));
			fprintf(out, "%-10s %-17s %9s", si->st->name, m->name, v);
			for (j = 0; j < 4; j++) {
				pmd_format_ns((double)pmd_hist_quantile(h, q[j]), v, sizeof(v));
				fprintf(out, " %9s", v);
			}
			pmd_format_ns((double)h->max, v, sizeof(v));
			fprintf(out, " %9s\n", v);
		}
	}
}

/* The seed race: THP path against PTE path on one empty PMD, and how we know. */
static void seed_line(FILE *out, const struct pmd_run *run, double secs)
{
	const struct pmd_race *r = &run->race;
	const char *how;
	uint64_t seed = pmd_race_seed_count(r, &how);

	if (!r->mech_set || !r->rounds)
		return;
	if (!r->mech) {
		fprintf(out, "seed race: not provoked here (%s)\n", r->mech_why);
		return;
	}
	fprintf(out, "seed race: %" PRIu64 " of %" PRIu64 " rounds had a THP-path and a PTE-path "
		     "fault on one empty PMD (%.1f/s; %" PRIu64 " seed rounds by %s%s%s), %s\n",
		seed, r->rounds, secs > 0 ? (double)seed / secs : 0, r->seed_rounds,
		r->mech & PMD_SEED_MECH_PRCTL ? "prctl" : "",
		(r->mech & PMD_SEED_MECH_PRCTL) && (r->mech & PMD_SEED_MECH_MEMCG) ? " and " : "",
		r->mech & PMD_SEED_MECH_MEMCG ? "memcg" : "",
		!strcmp(how, "traced") ? "traced: the racers' kmem:mm_page_alloc/free events"
				       : "inferred from fault counts and THP state");
	if (r->traced_rounds)
		fprintf(out, "  traced %" PRIu64 " rounds: %" PRIu64 " seed race, %" PRIu64
			     " THP path only, %" PRIu64 " PTE path only; inference agreed on %"
			     PRIu64 ", inferred only %" PRIu64 ", traced only %" PRIu64 "\n",
			r->traced_rounds, r->traced_seed, r->traced_thp_only, r->traced_pte_only,
			r->agree, r->inferred_only, r->traced_only);
	else
		fprintf(out, "  no trace: %s\n", r->trace_why);
}

static void race_lines(FILE *out, const struct pmd_run *run, double secs)
{
	char why[256];
	unsigned i;

	for (i = 0; i < run->nsinst; i++) {
		uint64_t rounds, hits;
		char with[256] = "";
		size_t n = 0;
		unsigned j;

		if (run->sinst[i].skipped ||
		    !pmd_race_of(&run->sinst[i], &run->totals[i], &rounds, &hits) || !rounds)
			continue;
		/* the mix it ran in: the same storm hits its windows more or less with partners */
		for (j = 0; j < run->nsinst && n < sizeof(with); j++)
			if (j != i && !run->sinst[j].skipped && run->sinst[j].nworkers)
				n += (size_t)snprintf(with + n, sizeof(with) - n, "%s%s",
						      n ? ", " : " with ", run->sinst[j].st->name);
		fprintf(out, "\nrace windows (%s%s): %" PRIu64 " of %" PRIu64 " rounds collided "
			     "(%.1f%%), %.1f/s\n", run->sinst[i].st->name, with, hits, rounds,
			100.0 * (double)hits / (double)rounds, secs > 0 ? (double)hits / secs : 0);
	}
	if (pmd_race_impossible(run, why, sizeof(why)))
		fprintf(out, "no race was possible: %s\n", why);
	else
		seed_line(out, run, secs);
}

static void reconcile_lines(FILE *out, const struct pmd_run *run)
{
	struct pmd_reconcile r;

	pmd_reconcile(run, &r);
	if (!r.have_vmstat)
		return;
	fprintf(out, "reconcile: workers counted %" PRIu64 " faults, the kernel %" PRId64
		     " (pgfault, system-wide); %" PRIu64 " chunks verified PMD-mapped, "
		     "thp_fault_alloc %" PRId64 ", thp_fault_fallback %" PRId64 "\n",
		r.worker_faults, r.pgfault, r.thp_chunks, r.thp_fault_alloc, r.thp_fault_fallback);
	if (r.thp_fault_alloc > 0)
		fprintf(out, "  huge pages allocated and thrown away by losers of the install race "
			     "(estimate): %" PRId64 "\n", r.contested_huge);
}

static void vmstat_lines(FILE *out, const struct pmd_run *run)
{
	unsigned i, col = 0;

	fprintf(out, "\nvmstat deltas (system-wide, nonzero):\n ");
	for (i = 0; i < run->vm_after.n; i++) {
		int64_t d;

		if (!pmd_vmstat_delta(&run->vm_before, &run->vm_after, run->vm_after.e[i].name, &d) ||
		    !d)
			continue;
		if (col > 76) { /* break before an item: no line left with only the indent */
			fprintf(out, "\n ");
			col = 0;
		}
		col += (unsigned)fprintf(out, " %s %" PRId64, run->vm_after.e[i].name, d);
	}
	fprintf(out, "\n");
}

static void event_lines(FILE *out, const struct pmd_run *run)
{
	int rung[4] = { -1, -1, -1, -1 }; /* chunks whose ring is printed already */
	unsigned nrung = 0, k;
	uint64_t total = __atomic_load_n(&run->ev_posted, __ATOMIC_RELAXED);
	unsigned i, c;

	if (!total) {
		fprintf(out, "\nevents: none\n");
		return;
	}
	fprintf(out, "\nevents: %" PRIu64, total);
	for (c = 1; c < PMD_CLASS_COUNT; c++)
		if (run->class_count[c])
			fprintf(out, "  %s %" PRIu64, pmd_class_name(c), run->class_count[c]);
	for (c = 1; c < PMD_EV_KIND_COUNT; c++)
		if (run->ev_count[c])
			fprintf(out, "  %s %" PRIu64, pmd_event_kind_name(c), run->ev_count[c]);
	fprintf(out, "\n");
	for (i = 0; i < run->nkept && i < 16; i++) {
		const struct pmd_event *e = &run->kept[i];
		char t[16];

		pmd_format_ns((double)(e->t_ns > run->t0 ? e->t_ns - run->t0 : 0), t, sizeof(t));
		if (e->kind == PMD_EV_CORRUPTION)
			fprintf(out, "  +%s %s addr 0x%" PRIx64 " chunk %d page %d slot %d thp %s "
				     "pfn 0x%" PRIx64 ": expected %#" PRIx64 " read %#" PRIx64
				     " (%u bad slots)\n",
				t, pmd_class_name(e->class), e->addr, e->chunk, e->page, e->slot,
				pmd_thp_state_name(e->thp), e->pfn, e->expected, e->actual,
				e->bad_slots);
		else
			fprintf(out, "  +%s %s %s: %s\n", t, pmd_event_kind_name(e->kind),
				e->stressor ? e->stressor : "-", e->text);
		if (e->chunk < 0 || !e->ring_len || nrung >= 4)
			continue;
		for (k = 0; k < nrung && rung[k] != e->chunk; k++)
			;
		if (k == nrung) {
			rung[nrung++] = e->chunk;
			pmd_ring_text(out, run, e);
		}
	}
	if (total > 16)
		fprintf(out, "  ... %" PRIu64 " more (the JSON report keeps the first %d)\n",
			total - (run->nkept < 16 ? run->nkept : 16), PMD_EVENTS_KEPT);
}

void pmd_report_text(FILE *out, const struct pmd_run *run)
{
	double secs = pmd_run_seconds(run);
	char rss[16], huge[16];
	int64_t alloc = 0, fallback = 0;

	fprintf(out, "\nran %.2fs (stopped: %s), seed 0x%" PRIx64 "\n", secs,
		run->stop_reason[0] ? run->stop_reason : "-", run->cfg->seed_used);
	stressor_table(out, run, secs);
	counters_table(out, run, secs);
	latency_table(out, run);
	race_lines(out, run, secs);
	vmstat_lines(out, run);
	reconcile_lines(out, run);
	pmd_vmstat_delta(&run->vm_before, &run->vm_after, "thp_fault_alloc", &alloc);
	pmd_vmstat_delta(&run->vm_before, &run->vm_after, "thp_fault_fallback", &fallback);
	pmd_format_size(run->arena_huge_end & ~((1ull << 20) - 1), huge, sizeof(huge));
	pmd_format_size(run->arena_rss_end & ~((1ull << 20) - 1), rss, sizeof(rss));
	if (run->thp_share_end >= 0)
		fprintf(out, "THP share of the arena at the end: %.1f%% (%s %s of Rss "
			     "%s); probe: %s\n",
			run->thp_share_end * 100,
			run->cfg->shared ? "ShmemPmdMapped" : "AnonHugePages", huge, rss,
			pmd_thp_probe_method(run));
	else
		fprintf(out, "THP share of the arena at the end: - (nothing resident); probe: %s\n",
			pmd_thp_probe_method(run));
	pmd_numa_text(out, run);
	pmd_memcg_text(out, run);
	if (run->cfg->replay[0])
		pmd_replay_text(out, run->cfg->replay, &run->sys);
	event_lines(out, run);
	if (run->mon.klog_len)
		fprintf(out, "\nkernel log during the run (splats and what followed them):\n%s",
			run->mon.klog);
	if (run->mon.hang_dump)
		fprintf(out, "\ntasks at the hang (state, wchan, kernel stack where readable):\n%s",
			run->mon.hang_dump);
	if (run->exit_code && run->exit_code != 125) {
		char cmd[2048];

		pmd_rerun_command(run, cmd, sizeof(cmd));
		fprintf(out, "\nto rerun this with the same seed:\n  %s\n", cmd);
	}
	fprintf(out, "verdict: %s (exit %d)\n", run->verdict, run->exit_code);
}
