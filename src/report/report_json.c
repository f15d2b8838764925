// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON report, schema "pmdstress-report" version PMD_SCHEMA_VERSION
 * (documented in README.md). Options are echoed as the text a user would
 * type, through the same table that parsed them, so a report can be replayed.
 */
#include "report.h"

#include "bench.h"
#include "config.h"
#include "forensics.h"
#include "replay.h"
#include "run.h"
#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static json_t *hex(uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	return json_string(buf);
}

static json_t *options_of(const struct pmd_option *table, const void *base)
{
	const struct pmd_option *o;
	json_t *obj = json_object();

	for (o = table; o && o->name; o++) {
		char v[PMD_OPT_STRLEN + 8];

		if (o->flags & PMD_OPTF_NO_ECHO)
			continue;
		pmd_opt_format(o, base, v, sizeof(v));
		json_object_set_new(obj, o->name, json_string(v));
	}
	return obj;
}

static json_t *options_json(const struct pmd_config *cfg)
{
	json_t *o = json_object(), *st = json_object();
	json_t *glob = options_of(pmd_global_options, cfg);
	unsigned i;

	/* the seed used, not "0" when it was drawn: the options rerun this very run */
	json_object_set_new(glob, "seed", hex(cfg->seed_used));
	json_object_set_new(o, "global", glob);
	for (i = 0; pmd_stressors[i]; i++) {
		json_t *s;

		if (!cfg->st[i].enabled)
			continue;
		s = options_of(pmd_common_options, &cfg->st[i]);
		{
			json_t *own = options_of(pmd_stressors[i]->options, cfg->st[i].opts);

			json_object_update(s, own); /* copies the members, keeps own's reference */
			json_decref(own);
		}
		json_object_set_new(st, pmd_stressors[i]->name, s);
	}
	json_object_set_new(o, "stressors", st);
	return o;
}

static json_t *system_json(const struct pmd_sysinfo *s)
{
	json_t *o = json_object(), *k = json_object(), *thp = json_object(), *mthp = json_object();
	unsigned i;

	json_object_set_new(k, "release", json_string(s->release));
	json_object_set_new(k, "version", json_string(s->version));
	json_object_set_new(k, "machine", json_string(s->machine));
	json_object_set_new(o, "kernel", k);
	json_object_set_new(o, "hostname", json_string(s->hostname));
	json_object_set_new(o, "cpus_online", json_integer(s->cpus_online));
	json_object_set_new(o, "cpus_configured", json_integer(s->cpus_conf));
	json_object_set_new(o, "mem_total", json_integer((json_int_t)s->mem_total));
	json_object_set_new(o, "page_size", json_integer((json_int_t)s->page_size));
	json_object_set_new(o, "numa_nodes", json_integer(s->nodes));
	json_object_set_new(o, "numa_nodes_online", json_string(s->nodes_online));
	json_object_set_new(o, "root", json_boolean(s->root));
	json_object_set_new(o, "zero_page_reads",
			    s->zero_page_reads < 0 ? json_null() : json_boolean(s->zero_page_reads));
	for (i = 0; i < s->nthp; i++)
		json_object_set_new(thp, s->thp[i].key, json_string(s->thp[i].value));
	json_object_set_new(o, "thp", thp);
	for (i = 0; i < s->nmthp; i++)
		json_object_set_new(mthp, s->mthp[i].key, json_string(s->mthp[i].value));
	json_object_set_new(o, "mthp", mthp);
	return o;
}

static const char *better_name(const struct pmd_metric *m)
{
	switch (m->better) {
	case PMD_BETTER_HIGHER:
		return "higher";
	case PMD_BETTER_LOWER:
		return "lower";
	case PMD_BETTER_NONE:
		return "none";
	default:
		return m->kind == PMD_METRIC_LATENCY ? "lower" : "higher";
	}
}

static json_t *digest_json(const struct pmd_lat_digest *d)
{
	json_t *o = json_object();

	json_object_set_new(o, "unit", json_string("ns"));
	json_object_set_new(o, "count", json_integer((json_int_t)d->count));
	json_object_set_new(o, "mean", json_real(d->mean));
	json_object_set_new(o, "min", json_integer((json_int_t)d->min));
	json_object_set_new(o, "p50", json_integer((json_int_t)d->p50));
	json_object_set_new(o, "p90", json_integer((json_int_t)d->p90));
	json_object_set_new(o, "p99", json_integer((json_int_t)d->p99));
	json_object_set_new(o, "p99_9", json_integer((json_int_t)d->p99_9));
	json_object_set_new(o, "max", json_integer((json_int_t)d->max));
	return o;
}

json_t *pmd_hist_json(const struct pmd_hist *h)
{
	struct pmd_lat_digest d;

	pmd_lat_digest(h, &d);
	return digest_json(&d);
}

/* @dg: a bench round's digests, or NULL to read @t's histograms */
static json_t *stressor_json(const struct pmd_sinst *si, const struct pmd_totals *t,
			     const struct pmd_lat_digest *dg, double secs)
{
	const struct pmd_metric *m;
	json_t *o = json_object(), *ctr = json_object(), *lat = json_object(), *cov = json_object();
	unsigned k;

	json_object_set_new(o, "name", json_string(si->st->name));
	json_object_set_new(o, "summary", json_string(si->st->summary));
	json_object_set_new(o, "workers", json_integer(si->nworkers));
	json_object_set_new(o, "status", json_string(si->skipped ? "skipped" : "ran"));
	if (si->skipped) {
		json_object_set_new(o, "reason", json_string(si->skipped));
		json_decref(ctr);
		json_decref(lat);
		json_decref(cov);
		return o;
	}
	json_object_set_new(o, "ops", json_integer((json_int_t)t->counter[0]));
	json_object_set_new(o, "ops_per_s", json_real(secs > 0 ? (double)t->counter[0] / secs : 0));
	json_object_set_new(o, "faults", json_integer((json_int_t)t->faults));
	json_object_set_new(o, "faults_per_s", json_real(secs > 0 ? (double)t->faults / secs : 0));
	for (k = 0; k < PMD_THPS_COUNT; k++)
		json_object_set_new(cov, pmd_thp_state_name(k), json_integer((json_int_t)t->thp[k]));
	json_object_set_new(o, "thp_coverage", cov);
	{
		uint64_t rounds, hits;

		if (pmd_race_of(si, t, &rounds, &hits)) {
			json_t *race = json_object();

			json_object_set_new(race, "rounds", json_integer((json_int_t)rounds));
			json_object_set_new(race, "collided", json_integer((json_int_t)hits));
			json_object_set_new(race, "share",
					    json_real(rounds ? (double)hits / (double)rounds : 0));
			json_object_set_new(race, "collided_per_s",
					    json_real(secs > 0 ? (double)hits / secs : 0));
			json_object_set_new(o, "race", race);
		}
	}
	for (k = 0, m = si->st->metrics; m && m->name; m++, k++) {
		if (m->kind == PMD_METRIC_LATENCY) {
			json_t *l = dg ? digest_json(&dg[k]) : pmd_hist_json(&t->hist[k]);

			json_object_set_new(l, "better", json_string(better_name(m)));
			json_object_set_new(lat, m->name, l);
		} else {
			json_t *c = json_object();

			json_object_set_new(c, "better", json_string(better_name(m)));
			json_object_set_new(c, "total", json_integer((json_int_t)t->counter[k]));
			json_object_set_new(c, "per_s", json_real(secs > 0 ? (double)t->counter[k] / secs
									  : 0));
			json_object_set_new(ctr, m->name, c);
		}
	}
	json_object_set_new(o, "counters", ctr);
	json_object_set_new(o, "latency", lat);
	return o;
}

/*
 * A merged histogram's distribution as [ns, fraction] points, log-spaced
 * from min to max (what plots draw): fraction is the share of values in the
 * buckets up to the one holding ns, so it is exact to the bucket (0.2%).
 */
#define PMD_CDF_POINTS 64
static json_t *hist_cdf_json(const struct pmd_hist *h)
{
	uint64_t v[PMD_CDF_POINTS], lo, hi, total = 0, seen = 0;
	json_t *a = json_array();
	unsigned i, j, n = 0;

	if (!h->count || !h->buckets)
		return a;
	lo = h->min ? h->min : 1;
	hi = h->max > lo ? h->max : lo;
	for (j = 0; j < PMD_CDF_POINTS; j++) {
		double x = (double)lo * pow((double)hi / (double)lo, j / (PMD_CDF_POINTS - 1.0));
		uint64_t p = j == PMD_CDF_POINTS - 1 ? hi : (uint64_t)llround(x);

		if (!n || p > v[n - 1]) /* a narrow range repeats points: keep each once */
			v[n++] = p;
	}
	for (i = 0; i < PMD_HIST_BUCKETS; i++)
		total += h->buckets[i];
	for (i = 0, j = 0; total && i < PMD_HIST_BUCKETS && j < n; i++) {
		seen += h->buckets[i];
		for (; j < n && pmd_hist_index(v[j]) == i; j++) {
			json_t *pt = json_array();

			json_array_append_new(pt, json_integer((json_int_t)v[j]));
			json_array_append_new(pt, json_real((double)seen / (double)total));
			json_array_append_new(a, pt);
		}
	}
	return a;
}

/* The top-level stressor entries carry each latency's distribution, for plots. */
static void add_cdfs(json_t *o, const struct pmd_sinst *si, const struct pmd_totals *t)
{
	json_t *lat = json_object_get(o, "latency");
	const struct pmd_metric *m;
	unsigned k;

	for (k = 0, m = si->st->metrics; lat && m && m->name; m++, k++) {
		json_t *l = json_object_get(lat, m->name);

		if (m->kind == PMD_METRIC_LATENCY && l)
			json_object_set_new(l, "cdf", hist_cdf_json(&t->hist[k]));
	}
}

/* Bench mode: every round in the stressors' shape, and the summary table. */
static json_t *rounds_json(const struct pmd_run *run)
{
	json_t *a = json_array();
	unsigned i, s;

	for (i = 0; i < run->nrounds; i++) {
		const struct pmd_round *r = &run->rounds[i];
		json_t *o = json_object(), *st = json_array();

		json_object_set_new(o, "index", json_integer(r->index));
		json_object_set_new(o, "warmup", json_boolean(r->warmup));
		json_object_set_new(o, "duration_s", json_real(r->secs));
		json_object_set_new(o, "stop_reason", json_string(r->stop_reason));
		for (s = 0; s < r->nsinst; s++)
			json_array_append_new(st, stressor_json(&r->st[s].si, &r->st[s].t,
								r->st[s].lat, r->secs));
		json_object_set_new(o, "stressors", st);
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *bench_json(const struct pmd_run *run)
{
	struct pmd_bench_summary s;
	json_t *o = json_object(), *cols = json_array();
	unsigned c, i;

	pmd_bench_stats(run, &s);
	json_object_set_new(o, "measured_rounds", json_integer(s.n));
	for (c = 0; c < s.ncols; c++) {
		json_t *col = json_object(), *vals = json_array();

		json_object_set_new(col, "name", json_string(s.name[c]));
		json_object_set_new(col, "mean", json_real(s.mean[c]));
		json_object_set_new(col, "stddev", json_real(s.stddev[c]));
		json_object_set_new(col, "min", json_real(s.min[c]));
		json_object_set_new(col, "max", json_real(s.max[c]));
		for (i = 0; i < run->nrounds; i++)
			json_array_append_new(vals, json_real(pmd_bench_value(run, i, c)));
		json_object_set_new(col, "per_round", vals);
		json_array_append_new(cols, col);
	}
	json_object_set_new(o, "columns", cols);
	return o;
}

static json_t *ring_json(const struct pmd_event *e, uint64_t t0)
{
	json_t *a = json_array();
	unsigned i;

	for (i = 0; i < e->ring_len; i++) {
		const struct pmd_ring_entry *r = &e->ring[i];
		json_t *o = json_object();

		json_object_set_new(o, "t_s", json_real(r->t_ns > t0 ? (double)(r->t_ns - t0) / 1e9
								     : 0));
		json_object_set_new(o, "op", json_string(pmd_op_name((unsigned)(r->word & 0xff))));
		json_object_set_new(o, "worker", json_integer((json_int_t)((r->word >> 8) & 0xffff)));
		json_object_set_new(o, "gen", json_integer((json_int_t)((r->word >> 24) & 0xfff)));
		json_object_set_new(o, "arg", json_integer((json_int_t)(r->word >> 36)));
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *event_json(const struct pmd_run *run, const struct pmd_event *e)
{
	json_t *o = json_object();

	json_object_set_new(o, "kind", json_string(pmd_event_kind_name(e->kind)));
	if (e->kind == PMD_EV_CORRUPTION)
		json_object_set_new(o, "class", json_string(pmd_class_name(e->class)));
	json_object_set_new(o, "t_s", json_real(e->t_ns > run->t0 ? (double)(e->t_ns - run->t0) / 1e9
								  : 0));
	json_object_set_new(o, "stressor", e->stressor ? json_string(e->stressor) : json_null());
	json_object_set_new(o, "worker", json_integer(e->worker));
	/* an event taken out of its report (a bug tracker, a grep) still says how to rerun */
	json_object_set_new(o, "seed", hex(run->cfg->seed_used));
	if (e->chunk >= 0) {
		json_object_set_new(o, "address", hex(e->addr));
		json_object_set_new(o, "chunk", json_integer(e->chunk));
		json_object_set_new(o, "page", json_integer(e->page));
		json_object_set_new(o, "slot", json_integer(e->slot));
		json_object_set_new(o, "offset", hex((uint64_t)e->chunk * PMD_CHUNK_SIZE +
						     ((uint64_t)e->page << PMD_PAGE_SHIFT) +
						     (uint64_t)e->slot * 8));
		json_object_set_new(o, "generation", json_integer(e->gen));
		json_object_set_new(o, "expected", hex(e->expected));
		json_object_set_new(o, "actual", hex(e->actual));
		json_object_set_new(o, "bad_slots", json_integer(e->bad_slots));
		json_object_set_new(o, "thp_state", json_string(pmd_thp_state_name(e->thp)));
		json_object_set_new(o, "pfn", e->pfn ? hex(e->pfn) : json_null());
		json_object_set_new(o, "op_ring", ring_json(e, run->t0));
	}
	json_object_set_new(o, "text", json_string(e->text));
	return o;
}

static json_t *events_json(const struct pmd_run *run)
{
	json_t *o = json_object(), *kinds = json_object(), *classes = json_object();
	json_t *kept = json_array();
	unsigned i;

	json_object_set_new(o, "total", json_integer((json_int_t)run->ev_posted));
	for (i = 0; i < PMD_EV_KIND_COUNT; i++)
		json_object_set_new(kinds, pmd_event_kind_name(i),
				    json_integer((json_int_t)run->ev_count[i]));
	for (i = 1; i < PMD_CLASS_COUNT; i++)
		json_object_set_new(classes, pmd_class_name(i),
				    json_integer((json_int_t)run->class_count[i]));
	json_object_set_new(o, "by_kind", kinds);
	json_object_set_new(o, "by_class", classes);
	for (i = 0; i < run->nkept; i++)
		json_array_append_new(kept, event_json(run, &run->kept[i]));
	json_object_set_new(o, "kept", kept);
	json_object_set_new(o, "not_kept", json_integer((json_int_t)run->dropped));
	return o;
}

/* Split @text into an array of its lines. */
static json_t *lines_json(const char *text)
{
	json_t *a = json_array();
	const char *p = text, *nl;

	while (p && *p) {
		nl = strchr(p, '\n');
		json_array_append_new(a, json_stringn(p, nl ? (size_t)(nl - p) : strlen(p)));
		p = nl ? nl + 1 : NULL;
	}
	return a;
}

static json_t *reconcile_json(const struct pmd_run *run)
{
	struct pmd_reconcile r;
	json_t *o = json_object();

	pmd_reconcile(run, &r);
	json_object_set_new(o, "worker_faults", json_integer((json_int_t)r.worker_faults));
	json_object_set_new(o, "thp_chunks_verified", json_integer((json_int_t)r.thp_chunks));
	json_object_set_new(o, "vmstat_pgfault", json_integer(r.pgfault));
	json_object_set_new(o, "vmstat_thp_fault_alloc", json_integer(r.thp_fault_alloc));
	json_object_set_new(o, "vmstat_thp_fault_fallback", json_integer(r.thp_fault_fallback));
	json_object_set_new(o, "vmstat_pgalloc", json_integer(r.pgalloc));
	json_object_set_new(o, "contested_huge_estimate", json_integer(r.contested_huge));
	return o;
}

static json_t *monitors_json(const struct pmd_run *run)
{
	const struct pmd_monitor *m = &run->mon;
	json_t *o = json_object();

	json_object_set_new(o, "kmsg", json_string(m->kmsg_status));
	json_object_set_new(o, "kmsg_state", json_string(pmd_kmsg_state_name(m->kmsg_state)));
	json_object_set_new(o, "taint_start", m->taint_ok ? hex(m->taint0) : json_null());
	json_object_set_new(o, "taint_end", m->taint_ok ? hex(m->taint_seen) : json_null());
	json_object_set_new(o, "kernel_log", lines_json(m->klog_len ? m->klog : ""));
	json_object_set_new(o, "hang_tasks", lines_json(m->hang_dump));
	/* the watchdog's measure of the run: --hang-timeout against the longest stall seen */
	json_object_set_new(o, "hang_timeout_s", json_real((double)run->cfg->hang_timeout_ns / 1e9));
	json_object_set_new(o, "longest_stall_s", json_real((double)m->gap_max_ns / 1e9));
	json_object_set_new(o, "longest_stall_worker", json_string(m->gap_worker));
	json_object_set_new(o, "longest_busy_s", json_real((double)m->busy_max_ns / 1e9));
	/* without schedstat (CONFIG_SCHED_INFO) a stall is told from a long op only at 60 s */
	json_object_set_new(o, "stall_clock", json_string(m->schedstat_ok ? "schedstat" : "wall"));
	return o;
}

static json_t *vmstat_json(const struct pmd_run *run)
{
	json_t *o = json_object();
	unsigned i;

	for (i = 0; i < run->vm_after.n; i++) {
		int64_t d;

		if (pmd_vmstat_delta(&run->vm_before, &run->vm_after, run->vm_after.e[i].name, &d))
			json_object_set_new(o, run->vm_after.e[i].name, json_integer(d));
	}
	return o;
}

static json_t *arena_json(const struct pmd_run *run)
{
	const struct pmd_arena *a = &run->arena;
	json_t *o = json_object();
	char mode[16];

	pmd_opt_format(pmd_opt_find(pmd_global_options, "thp"), run->cfg, mode, sizeof(mode));
	json_object_set_new(o, "base", hex((uintptr_t)a->base));
	json_object_set_new(o, "size", json_integer((json_int_t)a->size));
	json_object_set_new(o, "chunks", json_integer(a->nchunks));
	json_object_set_new(o, "chunk_size", json_integer((json_int_t)PMD_CHUNK_SIZE));
	json_object_set_new(o, "shared", json_boolean(a->shared));
	json_object_set_new(o, "thp_mode", json_string(mode));
	json_object_set_new(o, "thp_probe", json_string(pmd_thp_probe_method(run)));
	json_object_set_new(o, "rss_end", json_integer((json_int_t)run->arena_rss_end));
	json_object_set_new(o, "anon_huge_end", json_integer((json_int_t)run->arena_huge_end));
	json_object_set_new(o, "thp_share_end",
			    run->thp_share_end >= 0 ? json_real(run->thp_share_end) : json_null());
	return o;
}

json_t *pmd_report_json_doc(const struct pmd_run *run, int argc, char **argv)
{
	json_t *doc = json_object(), *tool = json_object(), *av = json_array(), *st = json_array();
	json_t *verdict = json_object();
	double secs = pmd_run_seconds(run);
	char when[32];
	time_t ws = (time_t)run->wall_start;
	struct tm tm;
	unsigned i;
	int a;

	gmtime_r(&ws, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_set_new(doc, "schema", json_string("pmdstress-report"));
	json_object_set_new(doc, "schema_version", json_integer(PMD_SCHEMA_VERSION));
	json_object_set_new(tool, "name", json_string("pmdstress"));
	json_object_set_new(tool, "version", json_string(PMD_VERSION));
	json_object_set_new(doc, "tool", tool);
	for (a = 0; a < argc; a++)
		json_array_append_new(av, json_string(argv[a]));
	json_object_set_new(doc, "argv", av);
	json_object_set_new(doc, "scenario", json_string(run->cfg->scenario));
	json_object_set_new(doc, "seed", hex(run->cfg->seed_used));
	if (run->cfg->replay[0]) {
		/* replay_of: what reports of schema 1 before the replay block had */
		json_object_set_new(doc, "replay_of", json_string(run->cfg->replay));
		json_object_set_new(doc, "replay", pmd_replay_json(run->cfg->replay, &run->sys));
	}
	json_object_set_new(doc, "started", json_string(when));
	json_object_set_new(doc, "duration_s", json_real(secs));
	json_object_set_new(doc, "stop_reason", json_string(run->stop_reason));
	/* test only: whether --inject's corruption was made (a run may end before its chance) */
	if (run->cfg->inject[0])
		json_object_set_new(doc, "injected",
				    json_boolean(__atomic_load_n(&run->inject_done, __ATOMIC_ACQUIRE)));
	json_object_set_new(doc, "threads", json_integer(run->nworkers));
	{
		json_t *up = json_object();

		json_object_set_new(up, "spawn_s", json_real((double)run->start_ns / 1e9));
		json_object_set_new(up, "rss_before", json_integer((json_int_t)run->start_rss_before));
		json_object_set_new(up, "rss_after", json_integer((json_int_t)run->start_rss_after));
		json_object_set_new(up, "tool_rss_end", json_integer((json_int_t)run->tool_rss_end));
		json_object_set_new(up, "tool_rss_end_per_worker",
				    json_real(run->nworkers ? (double)run->tool_rss_end / run->nworkers
							    : 0));
		json_object_set_new(up, "rss_per_worker",
				    json_real(run->nworkers && run->start_rss_after > run->start_rss_before
						      ? (double)(run->start_rss_after -
								 run->start_rss_before) /
								run->nworkers
						      : 0));
		json_object_set_new(doc, "startup", up);
	}
	json_object_set_new(doc, "options", options_json(run->cfg));
	json_object_set_new(doc, "system", system_json(&run->sys));
	json_object_set_new(doc, "arena", arena_json(run));
	json_object_set_new(doc, "numa", pmd_numa_json(run));
	json_object_set_new(doc, "memcg", pmd_memcg_json(run));
	for (i = 0; i < run->nsinst; i++) {
		json_t *s = stressor_json(&run->sinst[i], &run->totals[i], NULL, secs);

		add_cdfs(s, &run->sinst[i], &run->totals[i]);
		json_array_append_new(st, s);
	}
	json_object_set_new(doc, "stressors", st);
	if (run->race.mech_set)
		json_object_set_new(doc, "race", pmd_race_json(run, secs));
	if (run->nrounds) {
		json_object_set_new(doc, "rounds", rounds_json(run));
		json_object_set_new(doc, "bench", bench_json(run));
	}
	json_object_set_new(doc, "vmstat", vmstat_json(run));
	json_object_set_new(doc, "monitors", monitors_json(run));
	json_object_set_new(doc, "reconcile", reconcile_json(run));
	{
		char cmd[2048];

		pmd_rerun_command(run, cmd, sizeof(cmd));
		json_object_set_new(doc, "rerun", json_string(cmd));
	}
	json_object_set_new(doc, "events", events_json(run));
	json_object_set_new(verdict, "status", json_string(run->status ? run->status : "clean"));
	json_object_set_new(verdict, "exit_code", json_integer(run->exit_code));
	json_object_set_new(verdict, "summary", json_string(run->verdict));
	json_object_set_new(doc, "verdict", verdict);
	return doc;
}

int pmd_report_json(const char *path, const struct pmd_run *run, int argc, char **argv)
{
	json_t *doc = pmd_report_json_doc(run, argc, argv);
	char tmp[PMD_OPT_STRLEN + 32];
	int rc = 0;

	if (!strcmp(path, "-")) {
		FILE *f = pmd_report_open_stdout();

		if (!f) {
			rc = -errno;
			json_decref(doc);
			return rc;
		}
		rc = json_dumpf(doc, f, JSON_INDENT(2) | JSON_REAL_PRECISION(12)) ? -EIO : 0;
		fputc('\n', f);
		if (fclose(f) && !rc)
			rc = -errno;
		json_decref(doc);
		return rc;
	}
	/* write then rename: a reader never sees half a report */
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	if (json_dump_file(doc, tmp, JSON_INDENT(2) | JSON_REAL_PRECISION(12)) ||
	    rename(tmp, path)) {
		rc = -errno ? -errno : -EIO;
		unlink(tmp);
	}
	json_decref(doc);
	return rc;
}
