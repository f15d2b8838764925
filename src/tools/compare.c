// SPDX-License-Identifier: GPL-2.0
/*
 * pmdstress compare A.json B.json [C.json ...]: the before/after table of
 * mmtests' compare-kernels, for pmdstress reports, and a gate for CI.
 *
 * A side (a column: [A], [B], ...) is one report, or several joined by
 * commas (a1.json,a2.json,a3.json: runs, or boots of one kernel). With one
 * report a side the samples are its bench rounds (--rounds N; the warm-up
 * round left out unless --include-warmup), or the whole run as one sample.
 * With several reports on any side, the unit of replication is the report:
 * each gives one sample per figure, the mean of its measured rounds, and
 * the test runs across reports. Rounds of one process or one boot share its
 * physical pages, its host placement and whatever else the machine was
 * doing then, so they scatter less than runs or boots do; tested as if
 * independent they make run-to-run drift look like a change.
 *
 * Each figure (ops_per_s, faults_per_s, each counter's per_s, each
 * latency's mean, p50 and p99; a bench latency's total and per-fault cost;
 * the race rates) gets A's mean and stddev, then for every other side its
 * mean, stddev, change against A, and whether that change is significant:
 * Welch's unequal-variance t-test, two-sided, with Holm's correction over a
 * family of figures so that testing many at once does not make a false
 * alarm near certain. The gate (--threshold PCT: exit 1 on a significant
 * change for the worse beyond PCT percent) looks only at each scenario's
 * headline figures (headline(); --gate picks others), one Holm family per
 * side; the other figures are a second family, shown with --all, never
 * gated. Reports of different scenarios, stressors or options (those that
 * do not change what is measured aside: option_ignored()) are refused
 * unless --force; every field read is checked first, and a broken file is
 * one line naming the file and the field, exit 2.
 */
#include "compare.h"

#include "config.h"
#include "report.h"
#include "report_read.h"
#include "significance.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMP_ALPHA 0.05 /* two-sided, family-wise: 95% */
#define CMP_MAX_COLS 16
#define CMP_MAX_FILES 512
#define CMP_MAX_KINDS 32
#define CMP_ERRLEN 640

enum cmp_better { CMP_HIGHER, CMP_LOWER, CMP_NONE };
enum cmp_unit { CMP_U_RATE, CMP_U_NS, CMP_U_COUNT };

struct cmp_file {
	const char *path;
	json_t *doc;
	unsigned col, kind;
	json_t **samples; /* a "stressors" array per sample */
	json_t **races;	  /* the sample's top-level-shaped "race" object, or NULL */
	unsigned nsamples;
	unsigned nrounds, nwarmup; /* 0 rounds: the run is the one sample */
	bool warmup_kept;
	json_t *run_race; /* the run's "race", taken when no sample has its own */
};

/* Reports of one scenario and stressor set: samples of one experiment. */
struct cmp_kind {
	char scenario[160];
	char stressors[512];
	unsigned ref; /* the file the others are checked against */
	unsigned nfiles[CMP_MAX_COLS];
};

struct cmp_row {
	unsigned kind;
	char stressor[64];
	char metric[192];
	enum cmp_better better;
	enum cmp_unit unit;
	bool gated;
	struct pmd_nested s[CMP_MAX_COLS];
	double *vals[CMP_MAX_COLS]; /* the samples, in order (the seed table) */
	unsigned nvals[CMP_MAX_COLS], capvals[CMP_MAX_COLS];
	/* per side against [A] */
	struct pmd_welch t[CMP_MAX_COLS];
	double change[CMP_MAX_COLS], padj[CMP_MAX_COLS];
	const char *sig[CMP_MAX_COLS];
};

struct cmp_stressor {
	unsigned kind;
	char name[64];
	unsigned ran[CMP_MAX_COLS];
	char skipped[CMP_MAX_COLS][160]; /* the reason, if it was skipped there */
};

struct cmp {
	struct cmp_file f[CMP_MAX_FILES];
	unsigned nfiles, ncols;
	unsigned col_first[CMP_MAX_COLS], col_n[CMP_MAX_COLS];
	char *side_arg[CMP_MAX_COLS]; /* the sides as given, split at the commas */
	struct cmp_kind k[CMP_MAX_KINDS];
	unsigned nkinds;
	bool per_report; /* a side has several reports: one sample per report */
	struct cmp_row *rows;
	unsigned nrows, caprows, hint;
	struct cmp_stressor st[64];
	unsigned nst;
	double threshold;
	bool have_threshold, include_warmup, force, all;
	const char *gate_list;
	unsigned ngated;
	char err[CMP_ERRLEN];
};

static const char *const better_names[] = {"higher", "lower", "none"};

/* ---- what a scenario is judged by ------------------------------------------- */

/*
 * The headline figures of a scenario: what its benchmark was built to
 * measure, so what a gate should judge it by. mmap_anon_test: time per
 * fault (the 2023 table's figure). aim9 and aim9_4k: the four AIM9 rates
 * (page_test, brk_test, fork_test, exec_test of the 2011 table). The race
 * and every other storm: how often the race ran, collided rounds per second
 * and seed-race rounds per second from the run's "race" object; a report
 * without one (an older pmdstress) falls back to the fault stressor's
 * collided rounds per second (see mark_headlines()).
 */
static bool headline(const char *scenario, const char *stressor, const char *metric)
{
	if (!strcmp(scenario, "mmap_anon_test"))
		return !strcmp(stressor, "fault") && !strcmp(metric, "latency.window.per_fault");
	if (!strcmp(scenario, "aim9") || !strcmp(scenario, "aim9_4k"))
		return (!strcmp(stressor, "page") || !strcmp(stressor, "brk") ||
			!strcmp(stressor, "fork") || !strcmp(stressor, "exec")) &&
		       !strcmp(metric, "ops_per_s");
	return !strcmp(stressor, "race") &&
	       (!strcmp(metric, "collided_per_s") || !strcmp(metric, "seed_race_per_s"));
}

static bool headline_fallback(const char *stressor, const char *metric)
{
	return !strcmp(stressor, "fault") && !strcmp(metric, "race.collided_per_s");
}

/* ---- reading the reports ---------------------------------------------------- */

static int parse_better(const struct pmd_jctx *x, const json_t *obj, const char *where,
			enum cmp_better *out)
{
	json_t *v = pmd_jget(x, obj, where, "better", PMD_J_STRING);
	unsigned i;

	if (!v)
		return -EINVAL;
	for (i = 0; i < 3; i++)
		if (!strcmp(json_string_value(v), better_names[i]))
			return *out = (enum cmp_better)i, 0;
	return pmd_jerr(x, where, "better: '%s' is not higher, lower or none",
			json_string_value(v));
}

static struct cmp_stressor *stressor_slot(struct cmp *c, unsigned kind, const char *name)
{
	unsigned i;

	for (i = 0; i < c->nst; i++)
		if (c->st[i].kind == kind && !strcmp(c->st[i].name, name))
			return &c->st[i];
	if (c->nst == sizeof(c->st) / sizeof(c->st[0]))
		return NULL;
	memset(&c->st[c->nst], 0, sizeof(c->st[0]));
	c->st[c->nst].kind = kind;
	snprintf(c->st[c->nst].name, sizeof(c->st[0].name), "%s", name);
	return &c->st[c->nst++];
}

static int push_val(struct cmp_row *r, unsigned col, double v)
{
	if (r->nvals[col] == r->capvals[col]) {
		unsigned cap = r->capvals[col] ? 2 * r->capvals[col] : 16;
		double *p = realloc(r->vals[col], cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		r->vals[col] = p;
		r->capvals[col] = cap;
	}
	r->vals[col][r->nvals[col]++] = v;
	return 0;
}

/* The row of (@kind, @stressor, @metric), made if new; NULL when out of memory. */
static struct cmp_row *row_get(struct cmp *c, unsigned kind, const char *stressor,
			       const char *metric, enum cmp_better better, enum cmp_unit unit)
{
	struct cmp_row *r;
	unsigned i, k;

	/* files list figures in the same order: look after the last hit first */
	for (k = 0; k < c->nrows; k++) {
		i = (c->hint + k) % c->nrows;
		r = &c->rows[i];
		if (r->kind == kind && !strcmp(r->metric, metric) &&
		    !strcmp(r->stressor, stressor)) {
			c->hint = i + 1;
			return r;
		}
	}
	if (c->nrows == c->caprows) {
		unsigned cap = c->caprows ? c->caprows * 2 : 64;
		struct cmp_row *nr = realloc(c->rows, cap * sizeof(*nr));

		if (!nr)
			return NULL;
		c->rows = nr;
		c->caprows = cap;
	}
	r = &c->rows[c->nrows++];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	snprintf(r->stressor, sizeof(r->stressor), "%s", stressor);
	snprintf(r->metric, sizeof(r->metric), "%s", metric);
	r->better = better;
	r->unit = unit;
	c->hint = c->nrows;
	return r;
}

static int add_value(struct cmp *c, unsigned fi, const char *stressor, const char *metric,
		     enum cmp_better better, enum cmp_unit unit, double v)
{
	const struct cmp_file *f = &c->f[fi];
	struct cmp_row *r = row_get(c, f->kind, stressor, metric, better, unit);

	if (!r)
		return -ENOMEM;
	pmd_nested_add(&r->s[f->col], v);
	/* per report, the sample is the report's mean: pushed at end_file() */
	return c->per_report ? 0 : push_val(r, f->col, v);
}

/* A report is read: each figure's unit closes, its mean is one sample. */
static int end_file(struct cmp *c, unsigned fi)
{
	unsigned col = c->f[fi].col, i;

	for (i = 0; i < c->nrows; i++) {
		struct cmp_row *r = &c->rows[i];

		if (r->kind != c->f[fi].kind || !r->s[col].unit.n)
			continue;
		if (c->per_report && push_val(r, col, r->s[col].unit.mean))
			return -ENOMEM;
		pmd_nested_end_unit(&r->s[col]);
	}
	return 0;
}

/* Whether latency @name of @stressor is a bench column (PMD_MF_BENCH). */
static bool bench_latency(const char *stressor, const char *name)
{
	const struct pmd_stressor *st = pmd_stressor_find(stressor);
	const struct pmd_metric *m;

	for (m = st ? st->metrics : NULL; m && m->name; m++)
		if (m->kind == PMD_METRIC_LATENCY && !strcmp(m->name, name))
			return m->flags & PMD_MF_BENCH;
	return false;
}

static int take_latencies(struct cmp *c, unsigned fi, const struct pmd_jctx *x, const json_t *lats,
			  const char *stressor, double faults, const char *where, bool collect)
{
	static const char *const fields[] = {"mean", "p50", "p99"};
	char w[384], m[192];
	const char *key;
	json_t *v;
	unsigned i;

	json_object_foreach((json_t *)lats, key, v)
	{
		enum cmp_better b = CMP_NONE; /* set by parse_better() when it returns 0 */
		json_t *count, *f[3];
		double n, total;

		snprintf(w, sizeof(w), "%s.latency.%s", where, key);
		if (!pmd_jis(x, v, w, PMD_J_OBJECT) || parse_better(x, v, w, &b) ||
		    !(count = pmd_jget(x, v, w, "count", PMD_J_INTEGER)))
			return -EINVAL;
		for (i = 0; i < 3; i++)
			if (!(f[i] = pmd_jget(x, v, w, fields[i], PMD_J_NUMBER)))
				return -EINVAL;
		/* nothing recorded: its percentiles are not measurements */
		if (!collect || json_integer_value(count) <= 0)
			continue;
		for (i = 0; i < 3; i++) {
			snprintf(m, sizeof(m), "latency.%s.%s", key, fields[i]);
			if (add_value(c, fi, stressor, m, b, CMP_U_NS, pmd_jnum(f[i])))
				return -ENOMEM;
		}
		if (!bench_latency(stressor, key))
			continue;
		/* bench mode's columns: the cost time, and the time per fault */
		n = (double)json_integer_value(count);
		total = pmd_jnum(f[0]) * n;
		snprintf(m, sizeof(m), "latency.%s.total", key);
		if (add_value(c, fi, stressor, m, b, CMP_U_NS, total))
			return -ENOMEM;
		if (faults <= 0)
			continue;
		snprintf(m, sizeof(m), "latency.%s.per_fault", key);
		if (add_value(c, fi, stressor, m, b, CMP_U_NS, total / faults) ||
		    add_value(c, fi, stressor, "faults", CMP_NONE, CMP_U_COUNT, faults))
			return -ENOMEM;
	}
	return 0;
}

/*
 * Check one stressor entry of a sample and, if @collect, add its numbers.
 * Everything read is checked for presence and type first.
 */
static int take_stressor(struct cmp *c, unsigned fi, const struct pmd_jctx *x, const json_t *e,
			 const char *where, bool collect)
{
	json_t *name, *status, *ops, *faults, *ctrs, *lats, *race, *rate = NULL, *v;
	struct cmp_stressor *cs;
	const char *key;
	char w[384], m[192];
	unsigned col = c->f[fi].col;
	int rc;

	if (!(name = pmd_jget(x, e, where, "name", PMD_J_STRING)) ||
	    !(status = pmd_jget(x, e, where, "status", PMD_J_STRING)))
		return -EINVAL;
	/* the sections are made when the numbers are taken, each in its kind */
	cs = collect ? stressor_slot(c, c->f[fi].kind, json_string_value(name)) : NULL;
	if (collect && !cs)
		return pmd_jerr(x, where, "more than 64 different stressors");
	if (!strcmp(json_string_value(status), "skipped")) {
		v = json_object_get(e, "reason");
		if (collect && !cs->skipped[col][0])
			snprintf(cs->skipped[col], sizeof(cs->skipped[col]), "%s: %s",
				 c->f[fi].path,
				 json_is_string(v) ? json_string_value(v) : "no reason given");
		return 0;
	}
	if (strcmp(json_string_value(status), "ran"))
		return pmd_jerr(x, where, "status: '%s' is neither 'ran' nor 'skipped'",
				json_string_value(status));
	if (!(ops = pmd_jget(x, e, where, "ops_per_s", PMD_J_NUMBER)) ||
	    !(v = pmd_jget(x, e, where, "faults_per_s", PMD_J_NUMBER)) ||
	    !(ctrs = pmd_jget(x, e, where, "counters", PMD_J_OBJECT)) ||
	    !(lats = pmd_jget(x, e, where, "latency", PMD_J_OBJECT)))
		return -EINVAL;
	/* the count behind the per-fault cost, and the race pair: optional */
	faults = json_object_get(e, "faults");
	snprintf(w, sizeof(w), "%s.faults", where);
	if (faults && !pmd_jis(x, faults, w, PMD_J_NUMBER))
		return -EINVAL;
	race = json_object_get(e, "race");
	snprintf(w, sizeof(w), "%s.race", where);
	if (race && (!pmd_jis(x, race, w, PMD_J_OBJECT) ||
		     !(rate = pmd_jget(x, race, w, "collided_per_s", PMD_J_NUMBER))))
		return -EINVAL;
	if (collect) {
		cs->ran[col]++;
		if (add_value(c, fi, cs->name, "ops_per_s", CMP_HIGHER, CMP_U_RATE,
			      pmd_jnum(ops)) ||
		    add_value(c, fi, cs->name, "faults_per_s", CMP_HIGHER, CMP_U_RATE,
			      pmd_jnum(v)) ||
		    (rate && add_value(c, fi, cs->name, "race.collided_per_s", CMP_HIGHER,
				       CMP_U_RATE, pmd_jnum(rate))))
			return pmd_jerr(x, where, "out of memory");
	}
	json_object_foreach(ctrs, key, v)
	{
		enum cmp_better b = CMP_NONE; /* set by parse_better() when it returns 0 */
		json_t *ps;

		snprintf(w, sizeof(w), "%s.counters.%s", where, key);
		if (!pmd_jis(x, v, w, PMD_J_OBJECT) || parse_better(x, v, w, &b) ||
		    !(ps = pmd_jget(x, v, w, "per_s", PMD_J_NUMBER)))
			return -EINVAL;
		if (!collect || !strcmp(key, "ops")) /* "ops" is ops_per_s again */
			continue;
		snprintf(m, sizeof(m), "counters.%s.per_s", key);
		if (add_value(c, fi, cs->name, m, b, CMP_U_RATE, pmd_jnum(ps)))
			return pmd_jerr(x, where, "out of memory");
	}
	/* not collecting (the check pass), there is no section yet: only the shape is read */
	rc = take_latencies(c, fi, x, lats, cs ? cs->name : json_string_value(name),
			    faults ? pmd_jnum(faults) : 0, where, collect);
	return rc == -ENOMEM ? pmd_jerr(x, where, "out of memory") : rc;
}

/*
 * The run's "race" object (or a round's): every rate in it is a figure of
 * the pseudo-stressor "race", higher is better.
 */
static int take_race(struct cmp *c, unsigned fi, const struct pmd_jctx *x, const json_t *race,
		     const char *where, bool collect)
{
	const char *key;
	json_t *v;
	char w[160];
	size_t n;

	if (!pmd_jis(x, race, where, PMD_J_OBJECT))
		return -EINVAL;
	if (collect) {
		struct cmp_stressor *cs = stressor_slot(c, c->f[fi].kind, "race");

		if (!cs)
			return pmd_jerr(x, where, "more than 64 different stressors");
		cs->ran[c->f[fi].col]++;
	}
	json_object_foreach((json_t *)race, key, v)
	{
		n = strlen(key);
		if (n < 6 || strcmp(key + n - 6, "_per_s"))
			continue;
		snprintf(w, sizeof(w), "%s.%s", where, key);
		if (!pmd_jis(x, v, w, PMD_J_NUMBER))
			return -EINVAL;
		if (collect && add_value(c, fi, "race", key, CMP_HIGHER, CMP_U_RATE, pmd_jnum(v)))
			return pmd_jerr(x, where, "out of memory");
	}
	return 0;
}

static int take_sample(struct cmp *c, unsigned fi, const struct pmd_jctx *x, const json_t *arr,
		       const char *where, bool collect)
{
	char w[96];
	size_t i;

	for (i = 0; i < json_array_size(arr); i++) {
		json_t *e;

		snprintf(w, sizeof(w), "%s[%zu]", where, i);
		e = pmd_jat(x, arr, where, i, PMD_J_OBJECT);
		if (!e || take_stressor(c, fi, x, e, w, collect))
			return -EINVAL;
	}
	return 0;
}

static int check_options(const struct pmd_jctx *x, const json_t *doc)
{
	json_t *opts, *glob, *sts, *v, *o;
	const char *key, *k2;
	char w[256];

	if (!(opts = pmd_jget(x, doc, "", "options", PMD_J_OBJECT)) ||
	    !(glob = pmd_jget(x, opts, "options", "global", PMD_J_OBJECT)) ||
	    !(sts = pmd_jget(x, opts, "options", "stressors", PMD_J_OBJECT)))
		return -EINVAL;
	json_object_foreach(glob, key, v)
	{
		snprintf(w, sizeof(w), "options.global.%s", key);
		if (!pmd_jis(x, v, w, PMD_J_STRING))
			return -EINVAL;
	}
	json_object_foreach(sts, key, o)
	{
		snprintf(w, sizeof(w), "options.stressors.%s", key);
		if (!pmd_jis(x, o, w, PMD_J_OBJECT))
			return -EINVAL;
		json_object_foreach(o, k2, v)
		{
			snprintf(w, sizeof(w), "options.stressors.%s.%s", key, k2);
			if (!pmd_jis(x, v, w, PMD_J_STRING))
				return -EINVAL;
		}
	}
	return 0;
}

static void stressor_names(const json_t *doc, char *buf, size_t len)
{
	json_t *arr = json_object_get(doc, "stressors"), *e;
	size_t i, n = 0;

	buf[0] = '\0';
	json_array_foreach(arr, i, e)
	{
		json_t *name = json_object_get(e, "name");

		if (n < len)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "",
					      json_string_value(name));
	}
}

/* The kind of file @fi (its scenario and stressor set), made if new. */
static int file_kind(struct cmp *c, unsigned fi)
{
	struct cmp_file *f = &c->f[fi];
	const char *sc = json_string_value(json_object_get(f->doc, "scenario"));
	char names[512];
	unsigned i;

	stressor_names(f->doc, names, sizeof(names));
	for (i = 0; i < c->nkinds; i++)
		if (!strcmp(c->k[i].scenario, sc) && !strcmp(c->k[i].stressors, names))
			break;
	if (i == c->nkinds) {
		if (c->nkinds == CMP_MAX_KINDS) {
			snprintf(c->err, sizeof(c->err),
				 "%s: more than %d different scenarios and "
				 "stressor sets in one comparison",
				 f->path, CMP_MAX_KINDS);
			return -EINVAL;
		}
		memset(&c->k[i], 0, sizeof(c->k[i]));
		snprintf(c->k[i].scenario, sizeof(c->k[i].scenario), "%s", sc);
		snprintf(c->k[i].stressors, sizeof(c->k[i].stressors), "%s", names);
		c->k[i].ref = fi;
		c->nkinds++;
	}
	f->kind = i;
	c->k[i].nfiles[f->col]++;
	return 0;
}

/* Load, check and sample file @fi. */
static int load_file(struct cmp *c, unsigned fi)
{
	struct cmp_file *f = &c->f[fi];
	struct pmd_jctx x = {.file = f->path, .err = c->err, .errlen = sizeof(c->err)};
	json_t *top, *rounds, *race;
	size_t i, measured = 0;
	long long version;

	f->doc = pmd_report_load_version(f->path, c->err, sizeof(c->err), &version);
	if (!f->doc) {
		/* say why --force is no way out: its numbers cannot be read */
		if (version && version != PMD_SCHEMA_VERSION) {
			size_t n = strlen(c->err);

			snprintf(c->err + n, sizeof(c->err) - n,
				 " (--force does not apply to schema versions: a reader cannot "
				 "interpret a schema it does not know)");
		}
		return -EINVAL;
	}
	if (!pmd_jget(&x, f->doc, "", "scenario", PMD_J_STRING) || check_options(&x, f->doc) ||
	    !(top = pmd_jget(&x, f->doc, "", "stressors", PMD_J_ARRAY)))
		return -EINVAL;
	if (take_sample(c, fi, &x, top, "stressors", false))
		return -EINVAL;
	f->run_race = race = json_object_get(f->doc, "race");
	if (race && take_race(c, fi, &x, race, "race", false))
		return -EINVAL;
	rounds = json_object_get(f->doc, "rounds");
	if (rounds && !pmd_jis(&x, rounds, "rounds", PMD_J_ARRAY))
		return -EINVAL;
	f->nrounds = rounds ? (unsigned)json_array_size(rounds) : 0;
	/* arrays of json_t pointers: sizeof a pointer is meant */
	f->samples = calloc(f->nrounds + 1, sizeof(json_t *));
	f->races = calloc(f->nrounds + 1, sizeof(json_t *));
	if (!f->samples || !f->races)
		return pmd_jerr(&x, NULL, "out of memory");
	for (i = 0; i < f->nrounds; i++) {
		char w[64];
		json_t *r, *warm, *st;

		snprintf(w, sizeof(w), "rounds[%zu]", i);
		if (!(r = pmd_jat(&x, rounds, "rounds", i, PMD_J_OBJECT)) ||
		    !pmd_jget(&x, r, w, "index", PMD_J_INTEGER) ||
		    !(st = pmd_jget(&x, r, w, "stressors", PMD_J_ARRAY)))
			return -EINVAL;
		warm = json_object_get(r, "warmup");
		snprintf(w, sizeof(w), "rounds[%zu].warmup", i);
		if (warm && !pmd_jis(&x, warm, w, PMD_J_BOOL))
			return -EINVAL;
		snprintf(w, sizeof(w), "rounds[%zu].stressors", i);
		if (take_sample(c, fi, &x, st, w, false))
			return -EINVAL;
		race = json_object_get(r, "race");
		snprintf(w, sizeof(w), "rounds[%zu].race", i);
		if (race && take_race(c, fi, &x, race, w, false))
			return -EINVAL;
		if (json_is_true(warm)) {
			f->nwarmup++;
			if (!c->include_warmup)
				continue;
		}
		f->races[measured] = race;
		f->samples[measured++] = st;
	}
	if (!measured) {
		/* no rounds, or only a warm-up: the whole run is the one sample */
		if (f->nrounds)
			fprintf(stderr,
				"pmdstress compare: %s: every round is a warm-up; using the "
				"whole run as one sample\n",
				f->path);
		f->races[measured] = f->run_race;
		f->samples[measured++] = top;
		f->nrounds = 0;
	}
	for (i = 0; i < measured; i++)
		if (f->races[i])
			f->run_race = NULL; /* the rounds have their own */
	f->nsamples = (unsigned)measured;
	f->warmup_kept = c->include_warmup && f->nwarmup;
	return 0;
}

static int collect_file(struct cmp *c, unsigned fi)
{
	struct cmp_file *f = &c->f[fi];
	struct pmd_jctx x = {.file = f->path, .err = c->err, .errlen = sizeof(c->err)};
	const char *where = f->nrounds ? "rounds[].stressors" : "stressors";
	unsigned i;

	/* rounds without a race object of their own: the run's is one sample */
	if (f->run_race && take_race(c, fi, &x, f->run_race, "race", true))
		return -EINVAL;
	for (i = 0; i < f->nsamples; i++) {
		if (f->races[i] && take_race(c, fi, &x, f->races[i], "race", true))
			return -EINVAL;
		if (take_sample(c, fi, &x, f->samples[i], where, true))
			return -EINVAL;
	}
	if (end_file(c, fi))
		return pmd_jerr(&x, NULL, "out of memory");
	return 0;
}
/* ---- are they comparable? ----------------------------------------------------- */

/*
 * Global options that may differ between the runs being compared: they do
 * not change what one sample measures. Per-second rates make duration free;
 * rounds and warmup only change how many samples there are, which Welch's
 * test takes as it comes; interval and hang-timeout pace the monitor and
 * its watchdog; the rest name outputs. Everything else (threads, size, thp,
 * verify, thp-probe, NUMA, memcg, the stack) shapes the workload itself.
 */
static bool option_ignored(const char *name)
{
	static const char *const free_opts[] = {
	    "seed",  "duration", "rounds", "warmup", "interval", "hang-timeout", "progress",
	    "quiet", "json",	 "jsonl",  "ktap",   "replay",	 NULL,
	};
	unsigned i;

	for (i = 0; free_opts[i]; i++)
		if (!strcmp(name, free_opts[i]))
			return true;
	return false;
}

static unsigned mismatch(const struct cmp *c, unsigned fi, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static unsigned mismatch(const struct cmp *c, unsigned fi, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "pmdstress compare: %s%s: %s%s\n", c->force ? "warning: " : "",
		c->f[fi].path, msg, c->force ? "" : " (not comparable; --force compares anyway)");
	return 1;
}

/*
 * The text of option @key in @obj; an option one report lacks (it was
 * written by a pmdstress without it) counts as this pmdstress's default.
 */
static const char *opt_text(const json_t *obj, const char *key,
			    const struct pmd_option *const *tables, char *buf, size_t len)
{
	json_t *v = json_object_get(obj, key);
	char perr[PMD_ERRLEN];
	unsigned i;

	if (v)
		return json_string_value(v);
	for (i = 0; tables[i]; i++) {
		const struct pmd_option *opt = pmd_opt_find(tables[i], key);
		void *scratch;

		if (!opt)
			continue;
		scratch = calloc(1, opt->offset + PMD_OPT_STRLEN + sizeof(uint64_t));
		if (scratch &&
		    !pmd_opt_parse(opt, scratch, opt->def ? opt->def : "", perr, sizeof(perr)))
			pmd_opt_format(opt, scratch, buf, len);
		else
			snprintf(buf, len, "(absent)");
		free(scratch);
		return buf;
	}
	return "(absent)";
}

static unsigned diff_one(const struct cmp *c, unsigned fi, unsigned ref, const json_t *a,
			 const json_t *b, const char *prefix, const char *key,
			 const struct pmd_option *const *tables)
{
	char da[PMD_OPT_STRLEN + 8], db[PMD_OPT_STRLEN + 8];
	const char *ta = opt_text(a, key, tables, da, sizeof(da));
	const char *tb = opt_text(b, key, tables, db, sizeof(db));

	if (!strcmp(ta, tb))
		return 0;
	return mismatch(c, fi, "option %s%s is '%s', %s has '%s'", prefix, key, tb, c->f[ref].path,
			ta);
}

/* Options of @a and @b that differ, each reported; @prefix names the block. */
static unsigned diff_options(const struct cmp *c, unsigned fi, unsigned ref, const json_t *a,
			     const json_t *b, const char *prefix,
			     const struct pmd_option *const *tables)
{
	const char *key;
	json_t *v;
	unsigned n = 0;

	json_object_foreach((json_t *)a, key, v)
	{
		if (!*prefix && option_ignored(key))
			continue;
		n += diff_one(c, fi, ref, a, b, prefix, key, tables);
	}
	json_object_foreach((json_t *)b, key, v)
	{
		if ((!*prefix && option_ignored(key)) || json_object_get(a, key))
			continue;
		n += diff_one(c, fi, ref, a, b, prefix, key, tables);
	}
	return n;
}

/*
 * Is file @fi comparable with @ref: the same scenario, stressors and
 * options (option_ignored() aside)? Each difference is one line; their count.
 */
static unsigned check_pair(const struct cmp *c, unsigned ref, unsigned fi)
{
	const json_t *a = c->f[ref].doc, *b = c->f[fi].doc;
	const json_t *oa = json_object_get(a, "options"), *ob = json_object_get(b, "options");
	const json_t *sa = json_object_get(oa, "stressors"), *sb = json_object_get(ob, "stressors");
	const char *sca = json_string_value(json_object_get(a, "scenario"));
	const char *scb = json_string_value(json_object_get(b, "scenario"));
	const char *pa = c->f[ref].path;
	char na[512], nb[512];
	const char *key;
	json_t *v;
	unsigned n = 0;

	if (strcmp(sca, scb))
		n += mismatch(c, fi, "scenario '%s' differs from %s's '%s'", scb, pa, sca);
	stressor_names(a, na, sizeof(na));
	stressor_names(b, nb, sizeof(nb));
	if (strcmp(na, nb))
		n += mismatch(c, fi, "stressors %s differ from %s's %s", nb, pa, na);
	n += diff_options(c, fi, ref, json_object_get(oa, "global"), json_object_get(ob, "global"),
			  "", (const struct pmd_option *const[]){pmd_global_options, NULL});
	json_object_foreach((json_t *)sa, key, v)
	{
		const json_t *w = json_object_get(sb, key);
		const struct pmd_stressor *st;
		char prefix[96];

		if (!w)
			continue; /* already a stressor-set difference */
		snprintf(prefix, sizeof(prefix), "%s.", key);
		st = pmd_stressor_find(key);
		n += diff_options(c, fi, ref, v, w, prefix,
				  (const struct pmd_option *const[]){
				      pmd_common_options, st ? st->options : NULL, NULL});
	}
	return n;
}

/*
 * One report a side: everything is checked against [A]. Several: reports
 * of one scenario and stressor set (a kind) are checked against the first
 * of that kind, and every side must have each kind.
 */
static unsigned check_comparable(const struct cmp *c)
{
	unsigned fi, k, col, n = 0;

	for (fi = 1; fi < c->nfiles; fi++)
		n += check_pair(c, c->per_report ? c->k[c->f[fi].kind].ref : 0, fi);
	if (!c->per_report)
		return n;
	for (k = 0; k < c->nkinds; k++)
		for (col = 0; col < c->ncols; col++)
			if (!c->k[k].nfiles[col])
				n += mismatch(c, c->k[k].ref,
					      "[%c] has no report of scenario %s "
					      "with stressors %s",
					      'A' + col, c->k[k].scenario, c->k[k].stressors);
	return n;
}

/* ---- which figures are gated, and the tests ---------------------------------- */

/* "stressor.metric" names @r? */
static bool row_named(const struct cmp_row *r, const char *name, size_t len)
{
	size_t ls = strlen(r->stressor);

	return len == ls + 1 + strlen(r->metric) && !strncmp(name, r->stressor, ls) &&
	       name[ls] == '.' && !strncmp(name + ls + 1, r->metric, len - ls - 1);
}

/* --gate LIST: exactly the rows named; a name no row has is an error. */
static int mark_gate_list(struct cmp *c)
{
	const char *p = c->gate_list;

	while (*p) {
		size_t len = strcspn(p, ",");
		bool found = false;
		unsigned i;

		for (i = 0; i < c->nrows; i++) {
			if (!row_named(&c->rows[i], p, len))
				continue;
			c->rows[i].gated = true;
			found = true;
		}
		if (!found && len) {
			snprintf(c->err, sizeof(c->err),
				 "--gate: no figure '%.*s' in these reports "
				 "(names as --all lists them: STRESSOR.FIGURE, e.g. "
				 "fault.latency.window.p99)",
				 (int)len, p);
			return -EINVAL;
		}
		p += len + (p[len] == ',');
	}
	return 0;
}

static const struct pmd_welford *side(const struct cmp *c, const struct cmp_row *r, unsigned col)
{
	return c->per_report ? &r->s[col].across : &r->s[col].flat;
}

static bool rule_match(const struct cmp *c, unsigned rule, const struct cmp_row *r)
{
	switch (rule) {
	case 0:
		return headline(c->k[r->kind].scenario, r->stressor, r->metric);
	case 1:
		return headline_fallback(r->stressor, r->metric);
	default: /* a storm without the fault stressor: each stressor's rate */
		return !strcmp(r->metric, "ops_per_s");
	}
}

/* The sides (after [A]) where @r has two samples or more, and so does [A]. */
static unsigned row_testable_sides(const struct cmp *c, const struct cmp_row *r)
{
	unsigned col, n = 0;

	if (side(c, r, 0)->n < 2)
		return 0;
	for (col = 1; col < c->ncols; col++)
		n += side(c, r, col)->n >= 2;
	return n;
}

/*
 * Each kind's headline figures: headline(), else the fallback, else each
 * stressor's rate; the first rule whose figures can be tested against [A]
 * on the most sides, or failing any, the first that has a figure at all.
 * A report's top-level "race" object is one sample per report: with one
 * report a side its rates cannot be tested, and the fault stressor's
 * per-round collided rate is the figure a test can judge; a side of one
 * round-less run among sides of rounds leaves the others gated on what
 * they can test, and is named as untested.
 */
static void mark_headlines(struct cmp *c)
{
	unsigned k, i, rule, pick, best, n;

	for (k = 0; k < c->nkinds; k++) {
		unsigned first = 3;

		for (pick = 3, best = 0, rule = 0; rule < 3; rule++)
			for (i = 0; i < c->nrows; i++) {
				const struct cmp_row *r = &c->rows[i];

				if (r->kind != k || !rule_match(c, rule, r))
					continue;
				if (first == 3)
					first = rule;
				n = row_testable_sides(c, r);
				if (n > best) {
					best = n;
					pick = rule;
				}
			}
		if (pick == 3)
			pick = first;
		for (i = 0; pick < 3 && i < c->nrows; i++)
			if (c->rows[i].kind == k && rule_match(c, pick, &c->rows[i]))
				c->rows[i].gated = true;
	}
}

/* Welch's test of every row of side @col against [A], then Holm per family. */
static int test_side(struct cmp *c, unsigned col)
{
	double *p = malloc((c->nrows + 1) * sizeof(*p)),
	       *adj = malloc((c->nrows + 1) * sizeof(*adj));
	unsigned *idx = malloc((c->nrows + 1) * sizeof(*idx));
	unsigned i, fam, n;
	int rc = -ENOMEM;

	if (!p || !adj || !idx)
		goto out;
	for (i = 0; i < c->nrows; i++) {
		struct cmp_row *r = &c->rows[i];
		const struct pmd_welford *a = side(c, r, 0), *b = side(c, r, col);

		r->change[col] = NAN;
		r->padj[col] = NAN;
		memset(&r->t[col], 0, sizeof(r->t[col]));
		r->sig[col] = "-";
		if (!a->n || !b->n)
			continue;
		if (a->mean != 0)
			r->change[col] = (b->mean - a->mean) / fabs(a->mean) * 100;
		else if (b->mean == 0)
			r->change[col] = 0;
		pmd_welch_test(a, b, CMP_ALPHA, &r->t[col]);
		if (r->better != CMP_NONE && !r->t[col].testable)
			r->sig[col] = "n<2";
	}
	/* family 0: the gated figures; family 1: the rest that have a direction */
	for (fam = 0; fam < 2; fam++) {
		for (i = n = 0; i < c->nrows; i++) {
			const struct cmp_row *r = &c->rows[i];

			if (r->gated == !fam && r->better != CMP_NONE && r->t[col].testable) {
				idx[n] = i;
				p[n++] = r->t[col].p;
			}
		}
		if (pmd_holm(p, n, adj))
			goto out;
		for (i = 0; i < n; i++) {
			struct cmp_row *r = &c->rows[idx[i]];
			const struct pmd_welford *a = side(c, r, 0), *b = side(c, r, col);

			r->padj[col] = adj[i];
			if (!(adj[i] < CMP_ALPHA))
				r->sig[col] = "~";
			else if ((b->mean > a->mean) == (r->better == CMP_HIGHER))
				r->sig[col] = "better";
			else
				r->sig[col] = "worse";
		}
	}
	rc = 0;
out:
	free(p);
	free(adj);
	free(idx);
	return rc;
}

/* ---- the tables ---------------------------------------------------------------- */

/* @v scaled to @scale with 4 significant digits, then @suffix. */
static void fmt_scaled(double v, double scale, const char *suffix, char *buf, size_t len)
{
	double x = v / scale, a = fabs(x);
	int prec = a >= 1000 ? 0 : a >= 100 ? 1 : a >= 10 ? 2 : 3;

	snprintf(buf, len, "%.*f%s", prec, x, suffix);
}

/* A figure with its unit: 2.274us, 664.5K/s, 262144. */
static void fmt_val(double v, enum cmp_unit u, char *buf, size_t len)
{
	double a = fabs(v);

	if (!isfinite(v)) {
		snprintf(buf, len, "-");
	} else if (u == CMP_U_NS) {
		if (a >= 1e9)
			fmt_scaled(v, 1e9, "s", buf, len);
		else if (a >= 1e6)
			fmt_scaled(v, 1e6, "ms", buf, len);
		else if (a >= 1e3)
			fmt_scaled(v, 1e3, "us", buf, len);
		else
			fmt_scaled(v, 1, "ns", buf, len);
	} else if (u == CMP_U_COUNT && a < 1e7 && v == floor(v)) {
		snprintf(buf, len, "%.0f", v);
	} else {
		bool rate = u == CMP_U_RATE;

		if (a >= 1e9)
			fmt_scaled(v, 1e9, rate ? "G/s" : "G", buf, len);
		else if (a >= 1e6)
			fmt_scaled(v, 1e6, rate ? "M/s" : "M", buf, len);
		else if (a >= 1e4)
			fmt_scaled(v, 1e3, rate ? "K/s" : "K", buf, len);
		else
			fmt_scaled(v, 1, rate ? "/s" : "", buf, len);
	}
}

/* The files of side @col of kind @k: all of them, or the first and last of many. */
static void side_files(const struct cmp *c, unsigned col, unsigned k, char *buf, size_t len)
{
	const char *first = NULL, *last = NULL;
	unsigned i, n = 0;

	for (i = 0; i < c->nfiles; i++)
		if (c->f[i].col == col && c->f[i].kind == k) {
			first = first ? first : c->f[i].path;
			last = c->f[i].path;
			n++;
		}
	if (n <= 2)
		snprintf(buf, len, "%s%s%s", first ? first : "", n == 2 ? ", " : "",
			 n == 2 ? last : "");
	else
		snprintf(buf, len, "%s ... %s", first, last);
}

static void print_files(const struct cmp *c)
{
	unsigned col, k, i;
	char files[2048];

	if (!c->per_report) {
		printf("pmdstress compare: %u reports; samples: each report's rounds\n", c->ncols);
		for (i = 0; i < c->nfiles; i++) {
			const struct cmp_file *f = &c->f[i];
			const json_t *sys = json_object_get(f->doc, "system");
			const char *rel = json_string_value(
			    json_object_get(json_object_get(sys, "kernel"), "release"));
			const json_t *seed = json_object_get(f->doc, "seed");
			char samples[96];

			if (f->nrounds)
				snprintf(samples, sizeof(samples), "%u round%s%s", f->nsamples,
					 f->nsamples == 1 ? "" : "s",
					 f->nwarmup ? (f->warmup_kept ? " (warm-up included)"
								      : " (warm-up left out)")
						    : "");
			else
				snprintf(samples, sizeof(samples), "one run, no rounds (n=1)");
			printf("  [%c] %s: scenario %s, kernel %s, seed %s, %s\n", 'A' + f->col,
			       f->path, json_string_value(json_object_get(f->doc, "scenario")),
			       rel ? rel : "?",
			       json_is_string(seed) ? json_string_value(seed) : "?", samples);
		}
		return;
	}
	printf("pmdstress compare: %u sides of several reports; samples: one per report (the "
	       "mean of its measured rounds), tested across reports\n",
	       c->ncols);
	for (k = 0; k < c->nkinds; k++)
		for (col = 0; col < c->ncols; col++) {
			const struct cmp_file *f = NULL;
			unsigned rounds = 0;
			const char *rel;

			for (i = 0; i < c->nfiles; i++)
				if (c->f[i].col == col && c->f[i].kind == k) {
					f = f ? f : &c->f[i];
					rounds += c->f[i].nsamples;
				}
			if (!f)
				continue;
			rel = json_string_value(json_object_get(
			    json_object_get(json_object_get(f->doc, "system"), "kernel"),
			    "release"));
			side_files(c, col, k, files, sizeof(files));
			printf("  [%c] %s (%s): %u report%s (%u rounds), kernel %s: %s\n",
			       'A' + col, c->k[k].scenario, c->k[k].stressors, c->k[k].nfiles[col],
			       c->k[k].nfiles[col] == 1 ? "" : "s", rounds, rel ? rel : "?", files);
		}
}

static bool row_shown(const struct cmp *c, const struct cmp_row *r)
{
	return c->all || r->gated;
}

static void print_row(const struct cmp *c, const struct cmp_row *r)
{
	unsigned col;

	printf("  %c %-32s %-6s", r->gated && c->all ? '*' : ' ', r->metric,
	       better_names[r->better]);
	for (col = 0; col < c->ncols; col++) {
		const struct pmd_welford *w = side(c, r, col);
		char mean[32] = "-", sd[32] = "-", ch[32] = "-", p[32] = "-";

		if (w->n)
			fmt_val(w->mean, r->unit, mean, sizeof(mean));
		if (w->n > 1)
			fmt_val(pmd_welford_stddev(w), r->unit, sd, sizeof(sd));
		if (!col) {
			printf(" %10s %10s", mean, sd);
			continue;
		}
		if (!isnan(r->change[col]))
			snprintf(ch, sizeof(ch), "%+.2f%%", r->change[col]);
		if (!isnan(r->padj[col]))
			snprintf(p, sizeof(p), "%.3g", r->padj[col]);
		printf("  %10s %10s %7s %9s  %-*s", mean, sd, p, ch, col + 1 < c->ncols ? 6 : 0,
		       r->sig[col]);
	}
	printf("\n");
}

static void print_stressor(const struct cmp *c, const struct cmp_stressor *s)
{
	unsigned i, col, shown = 0, skipped = 0;

	for (i = 0; i < c->nrows; i++) {
		const struct cmp_row *r = &c->rows[i];

		if (r->kind == s->kind && !strcmp(r->stressor, s->name))
			shown += row_shown(c, r);
	}
	for (col = 0; col < c->ncols; col++)
		skipped += !s->ran[col] && strcmp(s->name, "race");
	if (!shown && !skipped)
		return;
	printf("\n%-43s", s->name);
	for (col = 0; col < c->ncols; col++) {
		char label[16];

		snprintf(label, sizeof(label), "[%c] mean", 'A' + col);
		if (col)
			printf("  %10s %10s %7s %9s  %s%s", label, "stddev", "p", "change", "sig",
			       col + 1 < c->ncols ? "   " : "");
		else
			printf(" %10s %10s", label, "stddev");
	}
	printf("\n");
	for (col = 0; col < c->ncols; col++)
		if (!s->ran[col] && strcmp(s->name, "race"))
			printf("    [%c] %s\n", 'A' + col,
			       s->skipped[col][0] ? s->skipped[col] : "not in these reports");
	for (i = 0; i < c->nrows; i++) {
		const struct cmp_row *r = &c->rows[i];

		if (r->kind == s->kind && !strcmp(r->stressor, s->name) && row_shown(c, r))
			print_row(c, r);
	}
}

static const struct cmp_row *find_row(const struct cmp *c, unsigned kind, const char *stressor,
				      const char *metric)
{
	unsigned i;

	for (i = 0; i < c->nrows; i++)
		if (c->rows[i].kind == kind && !strcmp(c->rows[i].stressor, stressor) &&
		    !strcmp(c->rows[i].metric, metric))
			return &c->rows[i];
	return NULL;
}

/*
 * The 2023 table: cost time of a round, page faults, time per fault, one
 * line per sample (a round, or a report's mean of its rounds) and their
 * average, each side next to the other.
 */
static void print_seed_table(const struct cmp *c, unsigned k)
{
	const struct cmp_row *cost = find_row(c, k, "fault", "latency.window.total");
	const struct cmp_row *faults = find_row(c, k, "fault", "faults");
	const struct cmp_row *per = find_row(c, k, "fault", "latency.window.per_fault");
	unsigned col, i, n = 0;

	if (!cost || !faults || !per)
		return;
	for (col = 0; col < c->ncols; col++)
		if (per->nvals[col] > n)
			n = per->nvals[col];
	printf("\n%s, the 2023 table: one line per %s\n%-8s", c->k[k].scenario,
	       c->per_report ? "report (the mean of its measured rounds)" : "measured round",
	       c->per_report ? "report" : "round");
	for (col = 0; col < c->ncols; col++)
		printf("  [%c] %11s %8s %9s", 'A' + col, "cost time", "faults", "ns/fault");
	printf("\n");
	for (i = 0; i <= n; i++) {
		if (i < n)
			printf("%-8u", i + 1);
		else
			printf("%-8s", "average");
		for (col = 0; col < c->ncols; col++) {
			const struct pmd_welford *wc = side(c, cost, col),
						 *wf = side(c, faults, col),
						 *wp = side(c, per, col);
			char ct[32];

			if (i < n && (i >= cost->nvals[col] || i >= faults->nvals[col] ||
				      i >= per->nvals[col])) {
				printf("      %11s %8s %9s", "", "", "");
				continue;
			}
			if (i == n && !wp->n) {
				printf("      %11s %8s %9s", "-", "-", "-");
				continue;
			}
			fmt_val(i < n ? cost->vals[col][i] : wc->mean, CMP_U_NS, ct, sizeof(ct));
			printf("      %11s %8.0f %9.1f", ct,
			       i < n ? faults->vals[col][i] : wf->mean,
			       i < n ? per->vals[col][i] : wp->mean);
		}
		printf("\n");
	}
}

/* @line without its trailing blanks, and a newline. */
static void put_line(char *line)
{
	size_t n = strlen(line);

	while (n && line[n - 1] == ' ')
		line[--n] = '\0';
	puts(line);
}

static bool aim9_kind(const struct cmp *c, unsigned k)
{
	return !strcmp(c->k[k].scenario, "aim9") || !strcmp(c->k[k].scenario, "aim9_4k");
}

/*
 * The 2011 table, as mmtests' compare-kernels prints AIM9: a Mean and a
 * Stddev line per test, each side's value and its change against [A],
 * with the p-value and mark of the test. One table per aim9 scenario.
 */
static void print_aim9_table(const struct cmp *c, const char *scenario)
{
	static const char *const tests[] = {"page", "brk", "fork", "exec"};
	char line[1024];
	unsigned t, k, col;
	size_t at;

	printf("\n%s, the 2011 table (AIM9 rates, ops/s; %s):\n", scenario,
	       c->per_report ? "each sample the mean of one report's rounds" : "samples: rounds");
	at = (size_t)snprintf(line, sizeof(line), "%16s", "");
	for (col = 0; col < c->ncols && at < sizeof(line); col++)
		at += (size_t)snprintf(line + at, sizeof(line) - at, " %8s[%c]%*s", "", 'A' + col,
				       col ? 26 : 10, "");
	put_line(line);
	for (t = 0; t < 4; t++) {
		const struct cmp_row *r = NULL;
		char name[16];

		for (k = 0; k < c->nkinds && !r; k++)
			if (!strcmp(c->k[k].scenario, scenario))
				r = find_row(c, k, tests[t], "ops_per_s");
		if (!r)
			continue;
		snprintf(name, sizeof(name), "%s_test", tests[t]);
		at = (size_t)snprintf(line, sizeof(line), "%-6s %-9s", "Mean", name);
		for (col = 0; col < c->ncols && at < sizeof(line); col++) {
			const struct pmd_welford *w = side(c, r, col);
			char p[16] = "-";

			if (!isnan(r->padj[col]) && col)
				snprintf(p, sizeof(p), "%.3g", r->padj[col]);
			if (!w->n)
				at += (size_t)snprintf(line + at, sizeof(line) - at, " %11s %9s%s",
						       "-", "", col ? "                " : "");
			else if (!col)
				at += (size_t)snprintf(line + at, sizeof(line) - at,
						       " %11.2f (%+6.2f%%)", w->mean, 0.0);
			else
				at += (size_t)snprintf(line + at, sizeof(line) - at,
						       " %11.2f (%+6.2f%%) p %-6s %-6s", w->mean,
						       r->change[col], p, r->sig[col]);
		}
		put_line(line);
		at = (size_t)snprintf(line, sizeof(line), "%-6s %-9s", "Stddev", name);
		for (col = 0; col < c->ncols && at < sizeof(line); col++)
			at += (size_t)snprintf(line + at, sizeof(line) - at, " %11.2f %10s%s",
					       pmd_welford_stddev(side(c, r, col)), "",
					       col ? "                " : "");
		put_line(line);
	}
}

static void print_table(const struct cmp *c)
{
	unsigned i, k, col, hidden = 0;
	bool aim9_done[2] = {false, false};

	print_files(c);
	for (i = 0; i < c->nrows; i++)
		hidden += !row_shown(c, &c->rows[i]);
	for (k = 0; k < c->nkinds; k++) {
		if (!strcmp(c->k[k].scenario, "mmap_anon_test"))
			print_seed_table(c, k);
		if (aim9_kind(c, k)) {
			bool is4k = !strcmp(c->k[k].scenario, "aim9_4k");

			if (!aim9_done[is4k])
				print_aim9_table(c, c->k[k].scenario);
			aim9_done[is4k] = true;
			/* the table said all the headlines say */
			if (!c->all && !c->gate_list)
				continue;
		}
		if (c->nkinds > 1)
			printf("\n== %s: %s ==", c->k[k].scenario, c->k[k].stressors);
		for (i = 0; i < c->nst; i++)
			if (c->st[i].kind == k)
				print_stressor(c, &c->st[i]);
	}
	printf("\nbetter/worse: significant at 95%%: Welch's t-test, two-sided, Holm-corrected; p: "
	       "the Holm-adjusted p-value;\n~: not significant; n<2: a side has fewer than two "
	       "samples; -: not a performance figure, or no data\n");
	printf("gated: %u figure%s (%s%s); the %u other%s: a second family, not gated%s\n",
	       c->ngated, c->ngated == 1 ? "" : "s",
	       c->gate_list ? "named by --gate" : "each scenario's headlines",
	       c->all ? ", marked *" : "", c->nrows - c->ngated,
	       c->nrows - c->ngated == 1 ? "" : "s", hidden ? " (--all shows them)" : "");
	if (!c->per_report && c->ncols > 1)
		printf("note: the samples are rounds of one run a side; they share that run's "
		       "machine state, so the\n  test does not see run-to-run drift: for a gate, "
		       "give several runs a side (a1.json,a2.json,...)\n");
	for (col = 1; col < c->ncols; col++) {
		unsigned better = 0, worse = 0, same = 0, untestable = 0;

		for (i = 0; i < c->nrows; i++) {
			const char *s = c->rows[i].sig[col];

			if (!c->rows[i].gated)
				continue;
			better += !strcmp(s, "better");
			worse += !strcmp(s, "worse");
			same += !strcmp(s, "~");
			untestable += !strcmp(s, "n<2");
		}
		printf("[%c] against [A], gated figures: %u better, %u worse, %u not significant, "
		       "%u untestable\n",
		       'A' + col, better, worse, same, untestable);
	}
}

/* ---- the gate -------------------------------------------------------------------- */

/* What the gate saw: comparisons it could test and could not, regressions. */
struct cmp_gate {
	unsigned tested, untested, regressions;
};

/* Significant changes for the worse of gated figures beyond --threshold; each printed. */
static struct cmp_gate gate(const struct cmp *c)
{
	struct cmp_gate g = {0, 0, 0};
	unsigned i, col;

	for (i = 0; i < c->nrows; i++) {
		const struct cmp_row *r = &c->rows[i];

		if (!r->gated)
			continue;
		for (col = 1; col < c->ncols; col++) {
			const char *sig = r->sig[col];

			/* a side with one sample has no variance: no test, so no gate */
			if (!strcmp(sig, "n<2"))
				g.untested++;
			else if (strcmp(sig, "-"))
				g.tested++;
			if (strcmp(sig, "worse") || isnan(r->change[col]) ||
			    fabs(r->change[col]) <= c->threshold)
				continue;
			fprintf(stderr,
				"pmdstress compare: regression beyond %g%%: %s %s %+.2f%% in "
				"[%c] (p=%.3g, Holm-adjusted)\n",
				c->threshold, r->stressor, r->metric, r->change[col], 'A' + col,
				r->padj[col]);
			g.regressions++;
		}
	}
	return g;
}

/* "[A] a.json, [C] c.json": the sides with fewer than two samples. */
static void few_samples(const struct cmp *c, char *buf, size_t len)
{
	size_t at = 0;
	unsigned i;

	buf[0] = 0;
	for (i = 0; i < c->nfiles && at < len; i++)
		if (c->per_report ? c->col_n[c->f[i].col] < 2 : c->f[i].nsamples < 2)
			at += (size_t)snprintf(buf + at, len - at, "%s[%c] %s", at ? ", " : "",
					       'A' + c->f[i].col, c->f[i].path);
}

/*
 * The --threshold verdict. Welch's test needs two samples a side, so a
 * side of one sample can never be "worse": a gate over such reports would
 * pass whatever changed. That is refused (exit 2) when nothing could be
 * tested, and noted when part could not.
 */
static int threshold_verdict(const struct cmp *c)
{
	struct cmp_gate g = gate(c);
	char few[512];

	few_samples(c, few, sizeof(few));
	if (!g.tested) {
		fprintf(stderr,
			"pmdstress compare: --threshold %g%%: no gated figure could be "
			"tested (%u comparison%s with a side of fewer than two samples%s%s); "
			"record the reports with --rounds N (N >= 2), or give several "
			"reports a side (exit 2)\n",
			c->threshold, g.untested, g.untested == 1 ? "" : "s", few[0] ? ": " : "",
			few);
		return 2;
	}
	if (g.untested)
		fprintf(stderr,
			"pmdstress compare: note: --threshold %g%%: %u of %u gated "
			"comparisons could not be tested (a side has fewer than two "
			"samples%s%s)\n",
			c->threshold, g.untested, g.untested + g.tested, few[0] ? ": " : "", few);
	if (g.regressions)
		fprintf(stderr,
			"pmdstress compare: %u significant regression%s beyond "
			"--threshold %g%% (exit 1)\n",
			g.regressions, g.regressions == 1 ? "" : "s", c->threshold);
	else
		fprintf(stderr,
			"pmdstress compare: no significant regression beyond "
			"--threshold %g%%\n",
			c->threshold);
	return g.regressions ? 1 : 0;
}

/* ---- the command ----------------------------------------------------------------- */

static int usage(const char *msg)
{
	if (msg) {
		fprintf(stderr, "pmdstress compare: %s (see 'pmdstress compare --help')\n", msg);
		return 2;
	}
	fprintf(
	    stdout,
	    "usage: pmdstress compare A.json B.json [C.json ...] [--threshold PCT] [--all] "
	    "[--gate FIGURES] [--include-warmup] [--force]\n"
	    "  Before/after table of pmdstress JSON reports against the first side (A).\n"
	    "  A side is one report (its bench rounds are the samples: --rounds N) or several\n"
	    "  joined by commas, a1.json,a2.json,... (one sample per report, the mean of its\n"
	    "  rounds: runs or boots are the unit). Significance: Welch's t-test, two-sided,\n"
	    "  95%%, Holm-corrected over the gated figures (each scenario's headlines).\n"
	    "  --threshold PCT   exit 1 if a gated figure is significantly worse by more than "
	    "PCT%%\n"
	    "  --all             every figure, not just the headlines (the rest are not gated)\n"
	    "  --gate FIGURES    gate on these instead: STRESSOR.FIGURE,... as --all names them\n"
	    "  --include-warmup  count the warm-up round as a sample too\n"
	    "  --force           compare reports of different scenarios, stressors or options\n"
	    "Exit: 0 compared (no regression beyond the threshold), 1 regression beyond it,\n"
	    "      2 usage error, unreadable or incomparable reports, or --threshold with\n"
	    "      nothing testable (sides of one sample).\n");
	return 0;
}

static int parse_threshold(struct cmp *c, const char *text)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (end != text && *end == '%')
		end++;
	if (end == text || *end || errno || !isfinite(v) || v < 0) {
		fprintf(stderr,
			"pmdstress compare: --threshold: invalid value '%s' (expected a "
			"percentage such as 5 or 2.5)\n",
			text);
		return -EINVAL;
	}
	c->threshold = v;
	c->have_threshold = true;
	return 0;
}

/* A side: one path, or several joined by commas (split in a copy). */
static int add_side(struct cmp *c, const char *arg)
{
	unsigned col = c->ncols;
	char *p;

	if (col == CMP_MAX_COLS) {
		fprintf(stderr, "pmdstress compare: at most %d sides at once\n", CMP_MAX_COLS);
		return 2;
	}
	p = c->side_arg[col] = strdup(arg);
	if (!p)
		return 5;
	c->col_first[col] = c->nfiles;
	for (;;) {
		char *comma = strchr(p, ',');

		if (comma)
			*comma = '\0';
		if (!*p) {
			fprintf(stderr,
				"pmdstress compare: '%s': an empty report name in side [%c] "
				"(sides are PATH or PATH,PATH,...)\n",
				arg, 'A' + col);
			return 2;
		}
		if (c->nfiles == CMP_MAX_FILES) {
			fprintf(stderr, "pmdstress compare: at most %d reports at once\n",
				CMP_MAX_FILES);
			return 2;
		}
		c->f[c->nfiles].col = col;
		c->f[c->nfiles++].path = p;
		c->col_n[col]++;
		if (!comma)
			break;
		p = comma + 1;
	}
	c->ncols++;
	return 0;
}

static int parse_args(struct cmp *c, int argc, char **argv)
{
	int i, rc;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return usage(NULL), 1;
		if (!strcmp(a, "--threshold") || !strncmp(a, "--threshold=", 12)) {
			const char *v = a[11] == '=' ? a + 12 : (i + 1 < argc ? argv[++i] : NULL);

			if (!v)
				return usage("--threshold needs a value (a percentage)");
			if (parse_threshold(c, v))
				return 2;
		} else if (!strcmp(a, "--gate") || !strncmp(a, "--gate=", 7)) {
			const char *v = a[6] == '=' ? a + 7 : (i + 1 < argc ? argv[++i] : NULL);

			if (!v || !*v)
				return usage(
				    "--gate needs a list of figures (STRESSOR.FIGURE,...)");
			c->gate_list = v;
		} else if (!strcmp(a, "--all")) {
			c->all = true;
		} else if (!strcmp(a, "--include-warmup")) {
			c->include_warmup = true;
		} else if (!strcmp(a, "--force")) {
			c->force = true;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr,
				"pmdstress compare: unknown option %s (compare takes "
				"--threshold PCT, --all, --gate FIGURES, --include-warmup, "
				"--force)\n",
				a);
			return 2;
		} else if ((rc = add_side(c, a))) {
			return rc;
		}
	}
	if (c->ncols < 2)
		return usage("needs at least two reports: the baseline first");
	return 0;
}

static void warn_verdicts(const struct cmp *c)
{
	unsigned i;

	for (i = 0; i < c->nfiles; i++) {
		const json_t *v = json_object_get(c->f[i].doc, "verdict");
		const char *st = json_string_value(json_object_get(v, "status"));

		if (st && strcmp(st, "clean"))
			fprintf(stderr,
				"pmdstress compare: warning: %s: the run's verdict is '%s'; "
				"its numbers come from a run that did not pass\n",
				c->f[i].path, st);
	}
}

static void cmp_free(struct cmp *c)
{
	unsigned i, col;

	for (i = 0; i < c->nfiles; i++) {
		json_decref(c->f[i].doc);
		free(c->f[i].samples);
		free(c->f[i].races);
	}
	for (i = 0; i < c->nrows; i++)
		for (col = 0; col < CMP_MAX_COLS; col++)
			free(c->rows[i].vals[col]);
	for (col = 0; col < CMP_MAX_COLS; col++)
		free(c->side_arg[col]);
	free(c->rows);
	free(c);
}

/* Read every report; kinds, comparability, samples, tests. 0, 2 (said), or 5. */
static int build(struct cmp *c)
{
	unsigned i, bad = 0;

	for (i = 0; i < c->ncols; i++)
		c->per_report |= c->col_n[i] > 1;
	for (i = 0; i < c->nfiles; i++) {
		c->err[0] = '\0';
		if (load_file(c, i) || (c->per_report && file_kind(c, i))) {
			fprintf(stderr, "pmdstress compare: %s\n", c->err);
			return 2;
		}
		if (!c->per_report)
			c->f[i].kind = 0;
	}
	if (!c->per_report) {
		snprintf(c->k[0].scenario, sizeof(c->k[0].scenario), "%s",
			 json_string_value(json_object_get(c->f[0].doc, "scenario")));
		stressor_names(c->f[0].doc, c->k[0].stressors, sizeof(c->k[0].stressors));
		c->nkinds = 1;
	}
	bad = check_comparable(c);
	if (bad && !c->force)
		return 2;
	for (i = 0; i < c->nfiles; i++) {
		if (collect_file(c, i)) {
			fprintf(stderr, "pmdstress compare: %s\n", c->err);
			return 2;
		}
	}
	if (c->gate_list ? mark_gate_list(c) : (mark_headlines(c), 0)) {
		fprintf(stderr, "pmdstress compare: %s\n", c->err);
		return 2;
	}
	for (i = 0; i < c->nrows; i++)
		c->ngated += c->rows[i].gated;
	for (i = 1; i < c->ncols; i++)
		if (test_side(c, i))
			return 5;
	return 0;
}

int pmd_compare_main(int argc, char **argv)
{
	struct cmp *c = calloc(1, sizeof(*c));
	int rc;

	if (!c)
		return 5;
	rc = parse_args(c, argc, argv);
	if (!rc)
		rc = build(c);
	if (rc) {
		cmp_free(c);
		return rc == 1 ? 0 : rc;
	}
	warn_verdicts(c);
	print_table(c);
	fflush(stdout);
	rc = c->have_threshold ? threshold_verdict(c) : 0;
	cmp_free(c);
	return rc;
}
