// SPDX-License-Identifier: GPL-2.0
/*
 * pmdstress run --replay A.json [--OPTION VALUE]...: the report's "options"
 * block holds every option as the text a user would type, so a replay turns
 * it back into command-line options ("--threads=4", "--fault-order=mixed"),
 * adds the seed the run used, puts the user's own options after them (they
 * win), and parses the lot through the one option table. The scenario's
 * name and the stressors it enabled are restored as they were, so the new
 * report's options block reads like the old one. Output files (json, ktap,
 * jsonl) are never carried over: a replay must not overwrite the report it
 * reads.
 *
 * Before the run, what differs between the report's machine and this one
 * (kernel, THP and mTHP settings, CPUs, NUMA nodes, root) is printed: a
 * replay that does not reproduce on another kernel should say why it might.
 * The new report keeps the same list (pmd_replay_json()), against the
 * system block it records itself, so the reason travels with the result.
 */
#include "replay.h"

#include "config.h"
#include "report_read.h"
#include "sysinfo.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Options never taken from a report: where output goes, and the replay itself. */
static bool not_replayed(const char *name)
{
	static const char *const skip[] = { "json", "ktap", "jsonl", "replay", "config",
					    "stressors", "seed", NULL };
	unsigned i;

	for (i = 0; skip[i]; i++)
		if (!strcmp(name, skip[i]))
			return true;
	return false;
}

struct args {
	char **v;
	int n, cap;
};

static int push(struct args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int push(struct args *a, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int rc;

	if (a->n == a->cap) {
		int cap = a->cap ? a->cap * 2 : 32;
		char **nv = realloc(a->v, (size_t)cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		a->v = nv;
		a->cap = cap;
	}
	va_start(ap, fmt);
	rc = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (rc < 0)
		return -ENOMEM;
	a->v[a->n++] = s;
	return 0;
}

static void args_free(struct args *a)
{
	int i;

	for (i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
}

/* The option name of "--name=value" / "--name", into @buf. */
static const char *arg_name(const char *arg, char *buf, size_t len)
{
	const char *eq;

	if (strncmp(arg, "--", 2))
		return "";
	arg += 2;
	eq = strchr(arg, '=');
	snprintf(buf, len, "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
	return buf;
}

bool pmd_replay_requested(int argc, char **argv)
{
	char name[64];
	int i;

	for (i = 0; i < argc; i++)
		if (!strcmp(arg_name(argv[i], name, sizeof(name)), "replay"))
			return true;
	return false;
}

/* What the user typed besides --replay: which of the options we restore they override. */
struct given {
	const char *path;
	bool seed, stressors;
};

static int scan_user(int argc, char **argv, struct given *g, struct args *user, char *err,
		     size_t errlen)
{
	char name[128];
	int i;

	memset(g, 0, sizeof(*g));
	for (i = 0; i < argc; i++) {
		const char *n = arg_name(argv[i], name, sizeof(name));

		if (!strcmp(n, "replay")) {
			const char *eq = strchr(argv[i], '=');
			const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);

			if (!v || !*v)
				return snprintf(err, errlen, "--replay needs a value (a JSON report "
							     "written by --json)"), -EINVAL;
			if (g->path)
				return snprintf(err, errlen, "--replay given twice ('%s' and '%s')",
						g->path, v), -EINVAL;
			g->path = v;
			continue;
		}
		if (!strcmp(n, "config"))
			return snprintf(err, errlen, "--replay and --config do not mix: the report "
						     "holds every option of its scenario (give "
						     "options after --replay to change them)"),
			       -EINVAL;
		g->seed |= !strcmp(n, "seed");
		g->stressors |= !strcmp(n, "stressors");
		if (push(user, "%s", argv[i]))
			return snprintf(err, errlen, "out of memory"), -ENOMEM;
	}
	return 0;
}

/* Parse @text as @opt into scratch space: a bad value is the report's fault, say so. */
static int check_value(const struct pmd_jctx *x, const struct pmd_option *opt, const char *where,
		       const char *text)
{
	char perr[PMD_ERRLEN];
	/* room for the field the option describes, wherever its table puts it */
	void *base = calloc(1, opt->offset + PMD_OPT_STRLEN + sizeof(uint64_t));
	int rc;

	if (!base)
		return pmd_jerr(x, where, "out of memory");
	rc = pmd_opt_parse(opt, base, text, perr, sizeof(perr));
	free(base);
	return rc ? pmd_jerr(x, where, "%s", perr) : 0;
}

static int report_args(const struct pmd_jctx *x, json_t *doc, struct args *a, uint64_t *seed)
{
	json_t *opts, *glob, *sts, *v, *o, *sv;
	const char *key, *k2, *hex;
	char w[256], *end;

	if (!(opts = pmd_jget(x, doc, "", "options", PMD_J_OBJECT)) ||
	    !(glob = pmd_jget(x, opts, "options", "global", PMD_J_OBJECT)) ||
	    !(sts = pmd_jget(x, opts, "options", "stressors", PMD_J_OBJECT)) ||
	    !(sv = pmd_jget(x, doc, "", "seed", PMD_J_STRING)) ||
	    !pmd_jget(x, doc, "", "scenario", PMD_J_STRING))
		return -EINVAL;
	hex = json_string_value(sv);
	errno = 0;
	*seed = strtoull(hex, &end, 16);
	if (strncmp(hex, "0x", 2) || end == hex + 2 || *end || errno || !*seed)
		return pmd_jerr(x, "seed", "'%s' is not a seed (expected hex such as 0x1f, never 0)",
				hex);
	json_object_foreach(glob, key, v) {
		const struct pmd_option *opt = pmd_opt_find(pmd_global_options, key);

		snprintf(w, sizeof(w), "options.global.%s", key);
		if (!pmd_jis(x, v, w, PMD_J_STRING))
			return -EINVAL;
		if (not_replayed(key))
			continue;
		if (!opt)
			return pmd_jerr(x, w, "this pmdstress has no option --%s (the report comes "
					      "from another version)", key);
		if (check_value(x, opt, w, json_string_value(v)) ||
		    push(a, "--%s=%s", key, json_string_value(v)))
			return -EINVAL;
	}
	if (push(a, "--seed=%s", hex))
		return -ENOMEM;
	json_object_foreach(sts, key, o) {
		const struct pmd_stressor *st = pmd_stressor_find(key);

		snprintf(w, sizeof(w), "options.stressors.%s", key);
		if (!pmd_jis(x, o, w, PMD_J_OBJECT))
			return -EINVAL;
		if (!st)
			return pmd_jerr(x, w, "this pmdstress has no stressor '%s'", key);
		json_object_foreach(o, k2, v) {
			const struct pmd_option *opt = pmd_opt_find(pmd_common_options, k2);

			if (!opt)
				opt = pmd_opt_find(st->options, k2);
			snprintf(w, sizeof(w), "options.stressors.%s.%s", key, k2);
			if (!pmd_jis(x, v, w, PMD_J_STRING))
				return -EINVAL;
			if (!opt)
				return pmd_jerr(x, w, "stressor %s has no option '%s' here", key, k2);
			if (check_value(x, opt, w, json_string_value(v)) ||
			    push(a, "--%s-%s=%s", key, k2, json_string_value(v)))
				return -EINVAL;
		}
	}
	return 0;
}

/* ---- what differs between the report's machine and this one -------------------- */

static const char *jtext(const json_t *v, char *buf, size_t len)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v))
		return snprintf(buf, len, "%lld", (long long)json_integer_value(v)), buf;
	if (json_is_boolean(v))
		return json_is_true(v) ? "yes" : "no";
	return v ? "?" : "(absent)";
}

/* Add {what, then, now} to @diffs unless the two texts are equal. */
static void differs(json_t *diffs, const char *what, const char *then, const char *now)
{
	json_t *d;

	if (!strcmp(then, now))
		return;
	d = json_object();
	json_object_set_new(d, "what", json_string(what));
	json_object_set_new(d, "then", json_string(then));
	json_object_set_new(d, "now", json_string(now));
	json_array_append_new(diffs, d);
}

static void diff_kv(json_t *diffs, const char *prefix, const json_t *obj, const struct pmd_kv *kv,
		    unsigned nkv)
{
	char what[128], buf[32];
	const char *key;
	json_t *v;
	unsigned i;

	for (i = 0; i < nkv; i++) {
		snprintf(what, sizeof(what), "%s.%s", prefix, kv[i].key);
		differs(diffs, what, jtext(json_object_get(obj, kv[i].key), buf, sizeof(buf)),
			kv[i].value);
	}
	json_object_foreach((json_t *)obj, key, v) {
		bool here = false;

		for (i = 0; i < nkv; i++)
			here |= !strcmp(kv[i].key, key);
		if (here)
			continue;
		snprintf(what, sizeof(what), "%s.%s", prefix, key);
		differs(diffs, what, jtext(v, buf, sizeof(buf)), "(absent)");
	}
}

/* What differs between a report's system block @sys and the machine @here: an array. */
static json_t *system_differences(const json_t *sys, const struct pmd_sysinfo *here)
{
	const json_t *k = json_object_get(sys, "kernel");
	json_t *diffs = json_array();
	char b1[32], b2[32];

	differs(diffs, "kernel release", jtext(json_object_get(k, "release"), b1, sizeof(b1)),
		here->release);
	differs(diffs, "machine", jtext(json_object_get(k, "machine"), b1, sizeof(b1)),
		here->machine);
	snprintf(b2, sizeof(b2), "%ld", here->cpus_online);
	differs(diffs, "CPUs online", jtext(json_object_get(sys, "cpus_online"), b1, sizeof(b1)),
		b2);
	snprintf(b2, sizeof(b2), "%u", here->nodes);
	differs(diffs, "NUMA nodes", jtext(json_object_get(sys, "numa_nodes"), b1, sizeof(b1)), b2);
	differs(diffs, "root", jtext(json_object_get(sys, "root"), b1, sizeof(b1)),
		here->root ? "yes" : "no");
	/* reports older than the probe do not say: no difference to show */
	if (json_object_get(sys, "zero_page_reads"))
		differs(diffs, "read faults map the zero page",
			jtext(json_object_get(sys, "zero_page_reads"), b1, sizeof(b1)),
			here->zero_page_reads < 0 ? "?" : here->zero_page_reads ? "yes" : "no");
	diff_kv(diffs, "thp", json_object_get(sys, "thp"), here->thp, here->nthp);
	diff_kv(diffs, "mthp", json_object_get(sys, "mthp"), here->mthp, here->nmthp);
	return diffs;
}

static void print_differences(FILE *out, const json_t *replay, const char *indent)
{
	json_t *diffs = json_object_get(replay, "differences"), *d;
	size_t i;

	for (i = 0; i < json_array_size(diffs) && (d = json_array_get(diffs, i)); i++)
		fprintf(out, "%s%-34s %s in the report, %s here\n", indent,
			json_string_value(json_object_get(d, "what")),
			json_string_value(json_object_get(d, "then")),
			json_string_value(json_object_get(d, "now")));
}

/* Print the differences before the run; their number. */
static size_t diff_system(const char *path, const json_t *sys)
{
	struct pmd_sysinfo here;
	json_t *replay;
	size_t n;

	if (!json_is_object(sys)) {
		fprintf(stderr, "pmdstress: replay: %s has no system block; cannot tell how this "
				"machine differs\n", path);
		return 0;
	}
	pmd_sysinfo_read(&here);
	replay = json_object();
	json_object_set_new(replay, "differences", system_differences(sys, &here));
	n = json_array_size(json_object_get(replay, "differences"));
	if (n)
		fprintf(stderr, "pmdstress: replay: this machine differs from the report's:\n");
	print_differences(stderr, replay, "  ");
	json_decref(replay);
	return n;
}

json_t *pmd_replay_json(const char *path, const struct pmd_sysinfo *now)
{
	char err[PMD_ERRLEN];
	json_t *o = json_object(), *doc, *sys;

	json_object_set_new(o, "of", json_string(path));
	/* read again: the run may have taken long, but what it replays is this file */
	doc = pmd_report_load(path, err, sizeof(err));
	sys = json_object_get(doc, "system");
	if (json_is_object(sys)) {
		json_object_set_new(o, "differences", system_differences(sys, now));
	} else {
		json_object_set_new(o, "differences", json_null());
		json_object_set_new(o, "error", json_string(doc ? "the report has no system block"
								 : err));
	}
	json_decref(doc);
	return o;
}

/* ---- the replay ------------------------------------------------------------------- */

/* Put back what the report says about the scenario and its stressors. */
static int restore_selection(struct pmd_config *cfg, json_t *doc, const struct given *g)
{
	json_t *opts = json_object_get(doc, "options");
	json_t *glob = json_object_get(opts, "global"), *sts = json_object_get(opts, "stressors");
	json_t *v;
	unsigned i;

	snprintf(cfg->scenario, sizeof(cfg->scenario), "%s",
		 json_string_value(json_object_get(doc, "scenario")));
	v = json_object_get(glob, "config");
	snprintf(cfg->config, sizeof(cfg->config), "%s",
		 json_is_string(v) ? json_string_value(v) : cfg->scenario);
	if (g->stressors)
		return 0;
	for (i = 0; pmd_stressors[i]; i++)
		cfg->st[i].enabled = json_object_get(sts, pmd_stressors[i]->name) != NULL;
	v = json_object_get(glob, "stressors");
	snprintf(cfg->stressors, sizeof(cfg->stressors), "%s",
		 json_is_string(v) ? json_string_value(v) : "");
	return 0;
}

int pmd_replay_config(struct pmd_config *cfg, int argc, char **argv, char *err, size_t errlen)
{
	struct args all = { 0 }, user = { 0 };
	struct pmd_jctx x = { .err = err, .errlen = errlen };
	json_t *doc = NULL;
	struct given g;
	uint64_t seed = 0;
	size_t ndiff;
	int i, rc;

	rc = scan_user(argc, argv, &g, &user, err, errlen);
	if (rc)
		goto out;
	x.file = g.path;
	doc = pmd_report_load(g.path, err, errlen);
	if (!doc) {
		rc = -EINVAL;
		goto out;
	}
	rc = report_args(&x, doc, &all, &seed);
	for (i = 0; !rc && i < user.n; i++)
		rc = push(&all, "%s", user.v[i]);
	if (!rc)
		rc = push(&all, "--replay=%s", g.path);
	if (rc)
		goto out;
	/* one parse, report first, so the user's options override it */
	rc = pmd_config_from_argv(cfg, all.n, all.v, err, errlen);
	if (!rc)
		rc = restore_selection(cfg, doc, &g);
	if (!rc)
		rc = pmd_config_finish(cfg, err, errlen);
	if (rc)
		goto out;
	ndiff = diff_system(g.path, json_object_get(doc, "system"));
	fprintf(stderr, "pmdstress: replaying %s: scenario %s, seed 0x%" PRIx64 "%s, %d argument%s "
			"over it; %s\n",
		g.path, cfg->scenario, cfg->seed_used, g.seed ? " (from --seed)" : "", user.n,
		user.n == 1 ? "" : "s",
		ndiff ? "the machine differs (above)"
		      : "the machine matches the report's (kernel, THP, mTHP, CPUs, NUMA, root)");
out:
	json_decref(doc);
	args_free(&all);
	args_free(&user);
	return rc ? -EINVAL : 0;
}

void pmd_replay_text(FILE *out, const char *path, const struct pmd_sysinfo *now)
{
	json_t *r = pmd_replay_json(path, now), *diffs = json_object_get(r, "differences");

	if (!json_is_array(diffs))
		fprintf(out, "\nreplay of %s: cannot tell how this machine differs (%s)\n", path,
			json_string_value(json_object_get(r, "error")));
	else if (!json_array_size(diffs))
		fprintf(out, "\nreplay of %s: the machine matches the report's (kernel, THP, mTHP, "
			     "CPUs, NUMA, root)\n", path);
	else
		fprintf(out, "\nreplay of %s: this machine differs from the report's:\n", path);
	print_differences(out, r, "  ");
	json_decref(r);
}
