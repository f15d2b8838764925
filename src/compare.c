// SPDX-License-Identifier: GPL-2.0
/*
 * pmdstress compare A.json B.json [C.json ...]: the before/after table of
 * mmtests' compare-kernels, for pmdstress reports. For each stressor and
 * metric (ops_per_s, faults_per_s, each counter's per_s, each latency's
 * mean, p50 and p99), the baseline A's mean and stddev, then for every other
 * report its mean, stddev, change against A and whether that change is
 * significant: Welch's unequal-variance t-test, two-sided, at 95%, with
 * Welch-Satterthwaite degrees of freedom and the t distribution's critical
 * value computed here (regularised incomplete beta by continued fraction).
 *
 * The samples of a report are its bench rounds ("rounds", from --rounds N;
 * the warm-up round is left out unless --include-warmup), or the whole run
 * as one sample when it has none (n = 1: no stddev, no test). Each metric
 * says which way is better; "none" metrics are listed and never flagged.
 * --threshold PCT makes a significant change for the worse of more than PCT
 * percent exit 1, for CI gates; if no metric could be tested (n < 2 on a
 * side everywhere) it exits 2 instead of passing what it could not judge.
 * Reports of different scenarios, stressors or
 * options (those that do not change what is measured aside: see
 * option_ignored()) are refused unless --force, and every field read is
 * checked first: a broken file is one line naming the file and the field,
 * exit 2. A schema version this pmdstress does not know is refused even
 * with --force: there is no reading a layout one has never seen.
 */
#include "compare.h"

#include "config.h"
#include "report.h"
#include "report_read.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMP_ALPHA 0.05	  /* two-sided: 95% */
#define CMP_MAX_FILES 16
#define CMP_ERRLEN 640

/* ---- statistics ------------------------------------------------------------ */

void pmd_welford_add(struct pmd_welford *w, double x)
{
	double d = x - w->mean;

	w->n++;
	w->mean += d / (double)w->n;
	w->m2 += d * (x - w->mean);
}

double pmd_welford_stddev(const struct pmd_welford *w)
{
	return w->n > 1 ? sqrt(w->m2 / (double)(w->n - 1)) : 0.0;
}

/* Continued fraction for I_x(a, b), modified Lentz (Numerical Recipes' betacf). */
static double betacf(double a, double b, double x)
{
	const double tiny = 1e-300, eps = 1e-15;
	double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap, h;
	int m;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (m = 1; m <= 1000; m++) {
		double m2 = 2.0 * m, aa, del;

		aa = m * (b - m) * x / ((qam + m2) * (a + m2));
		d = 1 + aa * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1 + aa / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		h *= d * c;
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
		d = 1 + aa * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1 + aa / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < eps)
			break;
	}
	return h;
}

/* I_x(a, b) with y = 1 - x given separately, so x close to 1 loses nothing. */
static double betai_xy(double a, double b, double x, double y)
{
	double front;

	if (x <= 0)
		return 0;
	if (y <= 0)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log(y));
	/* the fraction converges fast on this side of the mean; use symmetry otherwise */
	if (x < (a + 1) / (a + b + 2))
		return front * betacf(a, b, x) / a;
	return 1 - front * betacf(b, a, y) / b;
}

double pmd_betai(double a, double b, double x)
{
	return betai_xy(a, b, x, 1 - x);
}

double pmd_student_p2(double t, double df)
{
	double t2 = t * t;

	if (!isfinite(t))
		return 0;
	/* P(|T| >= t) = I_{df/(df+t^2)}(df/2, 1/2) */
	return betai_xy(df / 2, 0.5, df / (df + t2), t2 / (df + t2));
}

double pmd_student_crit2(double df, double alpha)
{
	double lo = 0, hi = 1;
	int i;

	if (!(df > 0) || !(alpha > 0) || alpha >= 1)
		return NAN;
	/* p falls as t grows: bracket, then bisect to double precision */
	while (pmd_student_p2(hi, df) > alpha && hi < 1e300)
		hi *= 2;
	for (i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
		double mid = (lo + hi) / 2;

		if (pmd_student_p2(mid, df) > alpha)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

void pmd_welch_test(const struct pmd_welford *a, const struct pmd_welford *b, double alpha,
		    struct pmd_welch *out)
{
	double va, vb;

	memset(out, 0, sizeof(*out));
	out->p = 1;
	if (a->n < 2 || b->n < 2)
		return;
	out->testable = true;
	va = a->m2 / (double)(a->n - 1) / (double)a->n; /* s^2 / n */
	vb = b->m2 / (double)(b->n - 1) / (double)b->n;
	if (va + vb <= 0) {
		/* no spread at all: any difference is real, none is none */
		out->significant = a->mean != b->mean;
		out->t = out->significant ? (b->mean > a->mean ? INFINITY : -INFINITY) : 0;
		out->df = (double)(a->n + b->n - 2);
		out->p = out->significant ? 0 : 1;
		return;
	}
	out->t = (b->mean - a->mean) / sqrt(va + vb);
	out->df = (va + vb) * (va + vb) /
		  (va * va / (double)(a->n - 1) + vb * vb / (double)(b->n - 1));
	out->crit = pmd_student_crit2(out->df, alpha);
	out->p = pmd_student_p2(out->t, out->df);
	out->significant = fabs(out->t) > out->crit;
}

/* ---- the reports ------------------------------------------------------------ */

enum cmp_better { CMP_HIGHER, CMP_LOWER, CMP_NONE };

struct cmp_file {
	const char *path;
	json_t *doc;
	json_t **samples; /* a "stressors" array per sample */
	unsigned nsamples;
	unsigned nrounds, nwarmup; /* 0 rounds: the run is the one sample */
	bool warmup_kept;
};

struct cmp_row {
	char stressor[64];
	char metric[192];
	enum cmp_better better;
	struct pmd_welford w[CMP_MAX_FILES];
};

struct cmp_stressor {
	char name[64];
	unsigned ran[CMP_MAX_FILES];
	char skipped[CMP_MAX_FILES][160]; /* the reason, if it was skipped there */
};

struct cmp {
	struct cmp_file f[CMP_MAX_FILES];
	unsigned nfiles;
	struct cmp_row *rows;
	unsigned nrows, caprows, hint;
	struct cmp_stressor st[64];
	unsigned nst;
	double threshold;
	bool have_threshold, include_warmup, force;
	char err[CMP_ERRLEN];
};

static int parse_better(const struct pmd_jctx *x, const json_t *obj, const char *where,
			enum cmp_better *out)
{
	static const char *const names[] = { "higher", "lower", "none" };
	json_t *v = pmd_jget(x, obj, where, "better", PMD_J_STRING);
	unsigned i;

	if (!v)
		return -EINVAL;
	for (i = 0; i < 3; i++)
		if (!strcmp(json_string_value(v), names[i]))
			return *out = (enum cmp_better)i, 0;
	return pmd_jerr(x, where, "better: '%s' is not higher, lower or none",
			json_string_value(v));
}

static struct cmp_stressor *stressor_slot(struct cmp *c, const char *name)
{
	unsigned i;

	for (i = 0; i < c->nst; i++)
		if (!strcmp(c->st[i].name, name))
			return &c->st[i];
	if (c->nst == sizeof(c->st) / sizeof(c->st[0]))
		return NULL;
	memset(&c->st[c->nst], 0, sizeof(c->st[0]));
	snprintf(c->st[c->nst].name, sizeof(c->st[0].name), "%s", name);
	return &c->st[c->nst++];
}

static int add_value(struct cmp *c, unsigned fi, const char *stressor, const char *metric,
		     enum cmp_better better, double v)
{
	struct cmp_row *r;
	unsigned i, k;

	/* files list metrics in the same order: look after the last hit first */
	for (k = 0; k < c->nrows; k++) {
		i = (c->hint + k) % c->nrows;
		r = &c->rows[i];
		if (!strcmp(r->metric, metric) && !strcmp(r->stressor, stressor)) {
			c->hint = i + 1;
			pmd_welford_add(&r->w[fi], v);
			return 0;
		}
	}
	if (c->nrows == c->caprows) {
		unsigned cap = c->caprows ? c->caprows * 2 : 64;
		struct cmp_row *nr = realloc(c->rows, cap * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		c->rows = nr;
		c->caprows = cap;
	}
	r = &c->rows[c->nrows++];
	memset(r, 0, sizeof(*r));
	snprintf(r->stressor, sizeof(r->stressor), "%s", stressor);
	snprintf(r->metric, sizeof(r->metric), "%s", metric);
	r->better = better;
	pmd_welford_add(&r->w[fi], v);
	c->hint = c->nrows;
	return 0;
}

/*
 * Check one stressor entry of a sample and, if @collect, add its numbers.
 * Everything read is checked for presence and type first.
 */
static int take_stressor(struct cmp *c, unsigned fi, const struct pmd_jctx *x, const json_t *e,
			 const char *where, bool collect)
{
	static const char *const lat_fields[] = { "mean", "p50", "p99" };
	json_t *name, *status, *ops, *faults, *ctrs, *lats, *v;
	struct cmp_stressor *cs;
	const char *key;
	char w[384], m[192];
	unsigned i;

	if (!(name = pmd_jget(x, e, where, "name", PMD_J_STRING)) ||
	    !(status = pmd_jget(x, e, where, "status", PMD_J_STRING)))
		return -EINVAL;
	cs = stressor_slot(c, json_string_value(name));
	if (!cs)
		return pmd_jerr(x, where, "more than 64 different stressors");
	if (!strcmp(json_string_value(status), "skipped")) {
		v = json_object_get(e, "reason");
		if (collect && !cs->skipped[fi][0])
			snprintf(cs->skipped[fi], sizeof(cs->skipped[fi]), "%s",
				 json_is_string(v) ? json_string_value(v) : "no reason given");
		return 0;
	}
	if (strcmp(json_string_value(status), "ran"))
		return pmd_jerr(x, where, "status: '%s' is neither 'ran' nor 'skipped'",
				json_string_value(status));
	if (!(ops = pmd_jget(x, e, where, "ops_per_s", PMD_J_NUMBER)) ||
	    !(faults = pmd_jget(x, e, where, "faults_per_s", PMD_J_NUMBER)) ||
	    !(ctrs = pmd_jget(x, e, where, "counters", PMD_J_OBJECT)) ||
	    !(lats = pmd_jget(x, e, where, "latency", PMD_J_OBJECT)))
		return -EINVAL;
	if (collect) {
		cs->ran[fi]++;
		if (add_value(c, fi, cs->name, "ops_per_s", CMP_HIGHER, pmd_jnum(ops)) ||
		    add_value(c, fi, cs->name, "faults_per_s", CMP_HIGHER, pmd_jnum(faults)))
			return pmd_jerr(x, where, "out of memory");
	}
	json_object_foreach(ctrs, key, v) {
		enum cmp_better b = CMP_NONE; /* set by parse_better() when it returns 0 */
		json_t *ps;

		snprintf(w, sizeof(w), "%s.counters.%s", where, key);
		if (!pmd_jis(x, v, w, PMD_J_OBJECT) || parse_better(x, v, w, &b) ||
		    !(ps = pmd_jget(x, v, w, "per_s", PMD_J_NUMBER)))
			return -EINVAL;
		if (!collect || !strcmp(key, "ops")) /* "ops" is ops_per_s again */
			continue;
		snprintf(m, sizeof(m), "counters.%s.per_s", key);
		if (add_value(c, fi, cs->name, m, b, pmd_jnum(ps)))
			return pmd_jerr(x, where, "out of memory");
	}
	json_object_foreach(lats, key, v) {
		enum cmp_better b = CMP_NONE; /* set by parse_better() when it returns 0 */
		json_t *count, *f[3];

		snprintf(w, sizeof(w), "%s.latency.%s", where, key);
		if (!pmd_jis(x, v, w, PMD_J_OBJECT) || parse_better(x, v, w, &b) ||
		    !(count = pmd_jget(x, v, w, "count", PMD_J_INTEGER)))
			return -EINVAL;
		for (i = 0; i < 3; i++)
			if (!(f[i] = pmd_jget(x, v, w, lat_fields[i], PMD_J_NUMBER)))
				return -EINVAL;
		/* nothing recorded: its percentiles are not measurements */
		if (!collect || json_integer_value(count) <= 0)
			continue;
		for (i = 0; i < 3; i++) {
			snprintf(m, sizeof(m), "latency.%s.%s", key, lat_fields[i]);
			if (add_value(c, fi, cs->name, m, b, pmd_jnum(f[i])))
				return pmd_jerr(x, where, "out of memory");
		}
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
	json_object_foreach(glob, key, v) {
		snprintf(w, sizeof(w), "options.global.%s", key);
		if (!pmd_jis(x, v, w, PMD_J_STRING))
			return -EINVAL;
	}
	json_object_foreach(sts, key, o) {
		snprintf(w, sizeof(w), "options.stressors.%s", key);
		if (!pmd_jis(x, o, w, PMD_J_OBJECT))
			return -EINVAL;
		json_object_foreach(o, k2, v) {
			snprintf(w, sizeof(w), "options.stressors.%s.%s", key, k2);
			if (!pmd_jis(x, v, w, PMD_J_STRING))
				return -EINVAL;
		}
	}
	return 0;
}

/* Load, check and sample file @fi. */
static int load_file(struct cmp *c, unsigned fi)
{
	struct cmp_file *f = &c->f[fi];
	struct pmd_jctx x = { .file = f->path, .err = c->err, .errlen = sizeof(c->err) };
	json_t *top, *rounds;
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
	rounds = json_object_get(f->doc, "rounds");
	if (rounds && !pmd_jis(&x, rounds, "rounds", PMD_J_ARRAY))
		return -EINVAL;
	f->nrounds = rounds ? (unsigned)json_array_size(rounds) : 0;
	/* an array of json_t pointers: sizeof a pointer is meant */
	f->samples = calloc(f->nrounds + 1, sizeof(*f->samples)); /* NOLINT(bugprone-sizeof-expression) */
	if (!f->samples)
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
		if (json_is_true(warm)) {
			f->nwarmup++;
			if (!c->include_warmup)
				continue;
		}
		f->samples[measured++] = st;
	}
	if (!measured) {
		/* no rounds, or only a warm-up: the whole run is the one sample */
		if (f->nrounds)
			fprintf(stderr, "pmdstress compare: %s: every round is a warm-up; using the "
					"whole run as one sample\n", f->path);
		f->samples[measured++] = top;
		f->nrounds = 0;
	}
	f->nsamples = (unsigned)measured;
	f->warmup_kept = c->include_warmup && f->nwarmup;
	return 0;
}

static int collect_file(struct cmp *c, unsigned fi)
{
	struct cmp_file *f = &c->f[fi];
	struct pmd_jctx x = { .file = f->path, .err = c->err, .errlen = sizeof(c->err) };
	unsigned i;

	for (i = 0; i < f->nsamples; i++)
		if (take_sample(c, fi, &x, f->samples[i], f->nrounds ? "rounds[].stressors"
								      : "stressors", true))
			return -EINVAL;
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
		"seed",	    "duration", "rounds", "warmup", "interval", "hang-timeout",
		"progress", "quiet",	"json",	  "jsonl",  "ktap",	"replay",
		NULL,
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
		if (scratch && !pmd_opt_parse(opt, scratch, opt->def ? opt->def : "", perr,
					      sizeof(perr)))
			pmd_opt_format(opt, scratch, buf, len);
		else
			snprintf(buf, len, "(absent)");
		free(scratch);
		return buf;
	}
	return "(absent)";
}

static unsigned diff_one(const struct cmp *c, unsigned fi, const json_t *a, const json_t *b,
			 const char *prefix, const char *key, const struct pmd_option *const *tables)
{
	char da[PMD_OPT_STRLEN + 8], db[PMD_OPT_STRLEN + 8];
	const char *ta = opt_text(a, key, tables, da, sizeof(da));
	const char *tb = opt_text(b, key, tables, db, sizeof(db));

	if (!strcmp(ta, tb))
		return 0;
	return mismatch(c, fi, "option %s%s is '%s', %s has '%s'", prefix, key, tb, c->f[0].path,
			ta);
}

/* Options of @a and @b that differ, each reported; @prefix names the block. */
static unsigned diff_options(const struct cmp *c, unsigned fi, const json_t *a, const json_t *b,
			     const char *prefix, const struct pmd_option *const *tables)
{
	const char *key;
	json_t *v;
	unsigned n = 0;

	json_object_foreach((json_t *)a, key, v) {
		if (!*prefix && option_ignored(key))
			continue;
		n += diff_one(c, fi, a, b, prefix, key, tables);
	}
	json_object_foreach((json_t *)b, key, v) {
		if ((!*prefix && option_ignored(key)) || json_object_get(a, key))
			continue;
		n += diff_one(c, fi, a, b, prefix, key, tables);
	}
	return n;
}

static void stressor_names(const json_t *doc, char *buf, size_t len)
{
	json_t *arr = json_object_get(doc, "stressors"), *e;
	size_t i, n = 0;

	buf[0] = '\0';
	json_array_foreach(arr, i, e) {
		json_t *name = json_object_get(e, "name");

		if (n < len)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "",
					      json_string_value(name));
	}
}

static unsigned check_comparable(const struct cmp *c, unsigned fi)
{
	const json_t *a = c->f[0].doc, *b = c->f[fi].doc;
	const json_t *oa = json_object_get(a, "options"), *ob = json_object_get(b, "options");
	const json_t *sa = json_object_get(oa, "stressors"), *sb = json_object_get(ob, "stressors");
	const char *sca = json_string_value(json_object_get(a, "scenario"));
	const char *scb = json_string_value(json_object_get(b, "scenario"));
	char na[512], nb[512];
	const char *key;
	json_t *v;
	unsigned n = 0;

	if (strcmp(sca, scb))
		n += mismatch(c, fi, "scenario '%s' differs from %s's '%s'", scb, c->f[0].path, sca);
	stressor_names(a, na, sizeof(na));
	stressor_names(b, nb, sizeof(nb));
	if (strcmp(na, nb))
		n += mismatch(c, fi, "stressors %s differ from %s's %s", nb, c->f[0].path, na);
	n += diff_options(c, fi, json_object_get(oa, "global"), json_object_get(ob, "global"), "",
			  (const struct pmd_option *const[]){ pmd_global_options, NULL });
	json_object_foreach((json_t *)sa, key, v) {
		const json_t *w = json_object_get(sb, key);
		const struct pmd_stressor *st;
		char prefix[96];

		if (!w)
			continue; /* already a stressor-set difference */
		snprintf(prefix, sizeof(prefix), "%s.", key);
		st = pmd_stressor_find(key);
		n += diff_options(c, fi, v, w, prefix,
				  (const struct pmd_option *const[]){
					  pmd_common_options, st ? st->options : NULL, NULL });
	}
	return n;
}

/* ---- the table ----------------------------------------------------------------- */

static void fmt_num(double v, char *buf, size_t len)
{
	double a = fabs(v);

	if (a >= 1e10)
		snprintf(buf, len, "%.4g", v);
	else if (a >= 100 || v == 0)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.4g", v);
}

static const char *better_name(enum cmp_better b)
{
	return (const char *[]){ "higher", "lower", "none" }[b];
}

struct cmp_verdict {
	unsigned better, worse, same, untestable;
};

/* The change of file @fi against the baseline in one row; fills @sig. */
static double row_change(const struct cmp_row *r, unsigned fi, struct pmd_welch *t,
			 const char **sig)
{
	const struct pmd_welford *a = &r->w[0], *b = &r->w[fi];
	double change = NAN;

	memset(t, 0, sizeof(*t));
	*sig = "-";
	if (!a->n || !b->n)
		return NAN;
	if (a->mean != 0)
		change = (b->mean - a->mean) / fabs(a->mean) * 100;
	else if (b->mean == 0)
		change = 0;
	pmd_welch_test(a, b, CMP_ALPHA, t);
	if (r->better == CMP_NONE)
		*sig = "-";
	else if (!t->testable)
		*sig = "n<2";
	else if (!t->significant)
		*sig = "~";
	else if ((b->mean > a->mean) == (r->better == CMP_HIGHER))
		*sig = "better";
	else
		*sig = "worse";
	return change;
}

static void print_files(const struct cmp *c)
{
	unsigned i;

	printf("pmdstress compare: %u reports, Welch's t-test (two-sided, 95%%) against [A]\n",
	       c->nfiles);
	for (i = 0; i < c->nfiles; i++) {
		const struct cmp_file *f = &c->f[i];
		const json_t *sys = json_object_get(f->doc, "system");
		const char *rel = json_string_value(
			json_object_get(json_object_get(sys, "kernel"), "release"));
		char samples[96];

		if (f->nrounds)
			snprintf(samples, sizeof(samples), "%u round%s%s", f->nsamples,
				 f->nsamples == 1 ? "" : "s",
				 f->nwarmup ? (f->warmup_kept ? " (warm-up included)"
							      : " (warm-up left out)")
					    : "");
		else
			snprintf(samples, sizeof(samples), "one run, no rounds (n=1)");
		printf("  [%c] %s: scenario %s, kernel %s, seed %s, %s\n", 'A' + i, f->path,
		       json_string_value(json_object_get(f->doc, "scenario")), rel ? rel : "?",
		       json_is_string(json_object_get(f->doc, "seed"))
			       ? json_string_value(json_object_get(f->doc, "seed"))
			       : "?",
		       samples);
	}
}

static void print_stressor(const struct cmp *c, const struct cmp_stressor *s,
			   struct cmp_verdict *vd)
{
	unsigned i, fi;

	printf("\n%-43s", s->name);
	for (fi = 0; fi < c->nfiles; fi++) {
		char label[16];

		snprintf(label, sizeof(label), "[%c] mean", 'A' + fi);
		if (fi)
			printf(" %13s %11s %9s  %s%s", label, "stddev", "change", "sig",
			       fi + 1 < c->nfiles ? "   " : "");
		else
			printf(" %13s %11s", label, "stddev");
	}
	printf("\n");
	for (fi = 0; fi < c->nfiles; fi++)
		if (!s->ran[fi])
			printf("  [%c] %s\n", 'A' + fi,
			       s->skipped[fi][0] ? s->skipped[fi] : "not in this report");
	for (i = 0; i < c->nrows; i++) {
		const struct cmp_row *r = &c->rows[i];

		if (strcmp(r->stressor, s->name))
			continue;
		printf("  %-34s %-6s", r->metric, better_name(r->better));
		for (fi = 0; fi < c->nfiles; fi++) {
			const struct pmd_welford *w = &r->w[fi];
			char mean[32] = "-", sd[32] = "-", ch[32] = "-";
			struct pmd_welch t;
			const char *sig;
			double change;

			if (w->n)
				fmt_num(w->mean, mean, sizeof(mean));
			if (w->n > 1)
				fmt_num(pmd_welford_stddev(w), sd, sizeof(sd));
			if (!fi) {
				printf(" %13s %11s", mean, sd);
				continue;
			}
			change = row_change(r, fi, &t, &sig);
			if (!isnan(change))
				snprintf(ch, sizeof(ch), "%+.2f%%", change);
			printf(" %13s %11s %9s  %-*s", mean, sd, ch, fi + 1 < c->nfiles ? 6 : 0, sig);
			if (!strcmp(sig, "better"))
				vd[fi].better++;
			else if (!strcmp(sig, "worse"))
				vd[fi].worse++;
			else if (!strcmp(sig, "~"))
				vd[fi].same++;
			else if (!strcmp(sig, "n<2"))
				vd[fi].untestable++;
		}
		printf("\n");
	}
}

/* What the gate saw: comparisons it could test and could not, regressions. */
struct cmp_gate {
	unsigned tested, untested, regressions;
};

/* Significant changes for the worse beyond --threshold; each printed. */
static struct cmp_gate gate(const struct cmp *c)
{
	struct cmp_gate g = { 0, 0, 0 };
	unsigned i, fi;

	for (i = 0; i < c->nrows; i++) {
		const struct cmp_row *r = &c->rows[i];

		for (fi = 1; fi < c->nfiles; fi++) {
			struct pmd_welch t;
			const char *sig;
			double change = row_change(r, fi, &t, &sig);

			/* a side with one sample has no variance: no test, so no gate */
			if (!strcmp(sig, "n<2"))
				g.untested++;
			else if (strcmp(sig, "-"))
				g.tested++;
			if (strcmp(sig, "worse") || isnan(change) || fabs(change) <= c->threshold)
				continue;
			fprintf(stderr, "pmdstress compare: regression beyond %g%%: %s %s %+.2f%% in "
					"[%c] %s (p=%.3g)\n", c->threshold, r->stressor, r->metric,
				change, 'A' + fi, c->f[fi].path, t.p);
			g.regressions++;
		}
	}
	return g;
}

/* "[A] a.json, [C] c.json": the reports with fewer than two samples. */
static void few_samples(const struct cmp *c, char *buf, size_t len)
{
	size_t at = 0;
	unsigned i;

	buf[0] = 0;
	for (i = 0; i < c->nfiles && at < len; i++)
		if (c->f[i].nsamples < 2)
			at += (size_t)snprintf(buf + at, len - at, "%s[%c] %s", at ? ", " : "",
					       'A' + i, c->f[i].path);
}

/*
 * The --threshold verdict. Welch's test needs two samples a side, so a
 * report of one run can never be "worse": a gate over such reports would
 * pass whatever changed. That is refused (exit 2) when nothing could be
 * tested, and noted when part could not.
 */
static int threshold_verdict(const struct cmp *c)
{
	struct cmp_gate g = gate(c);
	char few[512];

	few_samples(c, few, sizeof(few));
	if (!g.tested) {
		fprintf(stderr, "pmdstress compare: --threshold %g%%: no metric could be tested "
				"(%u comparison%s with a side of fewer than two samples%s%s); record "
				"the reports with --rounds N (N >= 2) (exit 2)\n",
			c->threshold, g.untested, g.untested == 1 ? "" : "s", few[0] ? ": " : "",
			few);
		return 2;
	}
	if (g.untested)
		fprintf(stderr, "pmdstress compare: note: --threshold %g%%: %u of %u comparisons "
				"could not be tested (a side has fewer than two samples%s%s)\n",
			c->threshold, g.untested, g.untested + g.tested, few[0] ? ": " : "", few);
	if (g.regressions)
		fprintf(stderr, "pmdstress compare: %u significant regression%s beyond "
				"--threshold %g%% (exit 1)\n", g.regressions,
			g.regressions == 1 ? "" : "s", c->threshold);
	else
		fprintf(stderr, "pmdstress compare: no significant regression beyond "
				"--threshold %g%%\n", c->threshold);
	return g.regressions ? 1 : 0;
}

static void print_table(struct cmp *c, struct cmp_verdict *vd)
{
	unsigned i, fi;

	print_files(c);
	for (i = 0; i < c->nst; i++)
		print_stressor(c, &c->st[i], vd);
	printf("\nbetter/worse: significant at 95%% (Welch's t-test, two-sided); ~: not "
	       "significant;\nn<2: a side has fewer than two samples (use --rounds N); -: not a "
	       "performance figure, or no data\n");
	for (fi = 1; fi < c->nfiles; fi++)
		printf("[%c] against [A]: %u better, %u worse, %u not significant, %u untestable\n",
		       'A' + fi, vd[fi].better, vd[fi].worse, vd[fi].same, vd[fi].untestable);
}

/* ---- the command ----------------------------------------------------------------- */

static int usage(const char *msg)
{
	if (msg) {
		fprintf(stderr, "pmdstress compare: %s (see 'pmdstress compare --help')\n", msg);
		return 2;
	}
	fprintf(stdout,
		"usage: pmdstress compare A.json B.json [C.json ...] [--threshold PCT] "
		"[--include-warmup] [--force]\n"
		"  Before/after table of pmdstress JSON reports against the first (A), with\n"
		"  Welch's t-test (two-sided, 95%%) over each report's bench rounds (--rounds N).\n"
		"  --threshold PCT   exit 1 if a significant change for the worse exceeds PCT%%\n"
		"  --include-warmup  count the warm-up round as a sample too\n"
		"  --force           compare reports of different scenarios, stressors or options\n"
		"Exit: 0 compared (no regression beyond the threshold), 1 regression beyond it,\n"
		"      2 usage error, unreadable or incomparable reports, or --threshold with\n"
		"      nothing testable (reports of one sample: record them with --rounds N).\n");
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
		fprintf(stderr, "pmdstress compare: --threshold: invalid value '%s' (expected a "
				"percentage such as 5 or 2.5)\n", text);
		return -EINVAL;
	}
	c->threshold = v;
	c->have_threshold = true;
	return 0;
}

static int parse_args(struct cmp *c, int argc, char **argv)
{
	int i;

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
		} else if (!strcmp(a, "--include-warmup")) {
			c->include_warmup = true;
		} else if (!strcmp(a, "--force")) {
			c->force = true;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "pmdstress compare: unknown option %s (compare takes "
					"--threshold PCT, --include-warmup, --force)\n", a);
			return 2;
		} else {
			if (c->nfiles == CMP_MAX_FILES) {
				fprintf(stderr, "pmdstress compare: at most %d reports at once\n",
					CMP_MAX_FILES);
				return 2;
			}
			c->f[c->nfiles++].path = a;
		}
	}
	if (c->nfiles < 2)
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
			fprintf(stderr, "pmdstress compare: warning: %s: the run's verdict is '%s'; "
					"its numbers come from a run that did not pass\n",
				c->f[i].path, st);
	}
}

static void cmp_free(struct cmp *c)
{
	unsigned i;

	for (i = 0; i < c->nfiles; i++) {
		json_decref(c->f[i].doc);
		free(c->f[i].samples);
	}
	free(c->rows);
	free(c);
}

int pmd_compare_main(int argc, char **argv)
{
	struct cmp *c = calloc(1, sizeof(*c));
	struct cmp_verdict vd[CMP_MAX_FILES];
	unsigned i, bad = 0;
	int rc;

	if (!c)
		return 5;
	rc = parse_args(c, argc, argv);
	if (rc) {
		cmp_free(c);
		return rc == 1 ? 0 : rc;
	}
	for (i = 0; i < c->nfiles; i++) {
		if (load_file(c, i)) {
			fprintf(stderr, "pmdstress compare: %s\n", c->err);
			cmp_free(c);
			return 2;
		}
	}
	for (i = 1; i < c->nfiles; i++)
		bad += check_comparable(c, i);
	if (bad && !c->force) {
		cmp_free(c);
		return 2;
	}
	for (i = 0; i < c->nfiles; i++) {
		if (collect_file(c, i)) {
			fprintf(stderr, "pmdstress compare: %s\n", c->err);
			cmp_free(c);
			return 2;
		}
	}
	warn_verdicts(c);
	memset(vd, 0, sizeof(vd));
	print_table(c, vd);
	fflush(stdout);
	rc = c->have_threshold ? threshold_verdict(c) : 0;
	cmp_free(c);
	return rc;
}
