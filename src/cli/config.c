// SPDX-License-Identifier: GPL-2.0
/*
 * The global option table and how the effective configuration is built:
 * defaults, then the scenario (a builtin from configs/ or an INI file), then
 * the command line in order, then cross-field checks. Every error is one
 * line that names the file, line, section or option, and the value.
 */
#include "config.h"

#include "ini_reader.h"
#include "memlimit.h"
#include "numa.h"
#include "units.h"
#include "usage.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define G(field) offsetof(struct pmd_config, field)

static const char *const thp_modes[] = { "madvise", "nohuge", "toggle", "inherit", NULL };
static const char *const progress_modes[] = { "auto", "line", "plain", "off", NULL };
static const char *const probe_methods[] = { "auto", "scan", "kpageflags", "smaps", NULL };
static const char *const numa_balancing_modes[] = { "keep", "on", "off", NULL };
static const char *const race_trace_modes[] = { "auto", "off", NULL };

#ifndef PMD_DEFAULT_STACK
#define PMD_DEFAULT_STACK "64K"
#endif

const struct pmd_option pmd_global_options[] = {
	{ "threads", PMD_OPT_UINT, G(threads), "0", 0, 1000000, NULL,
	  "worker threads of all stressors together (0: 4 per online CPU, at least 8, and at "
	  "least every partner's workers plus 2 racers per storm stressor)" },
	{ "duration", PMD_OPT_DURATION, G(duration_ns), "10s", 1000000ull, 30ull * 86400000000000ull,
	  NULL, "how long to run (s/m/h suffixes; a bare number is seconds)" },
	{ "size", PMD_OPT_SIZE, G(size), "64M", 2ull << 20, 256ull << 30, NULL,
	  "arena size, a multiple of 2M (one chunk per PMD)" },
	{ "shared", PMD_OPT_BOOL, G(shared), "off", 0, 0, NULL,
	  "map the arena MAP_SHARED (shmem-backed) instead of MAP_PRIVATE" },
	{ "thp", PMD_OPT_ENUM, G(thp), "madvise", 0, 0, thp_modes,
	  "madvise: MADV_HUGEPAGE on the arena; nohuge: MADV_NOHUGEPAGE; toggle: flip it on "
	  "the contested chunks every round; inherit: leave the system policy" },
	{ "seed", PMD_OPT_UINT, G(seed), "0", 0, UINT64_MAX, NULL,
	  "seed for every random choice (0: pick one; the seed used is always printed)" },
	{ "verify", PMD_OPT_BOOL, G(verify), "on", 0, 0, NULL,
	  "check every slot of every page after each round" },
	{ "thp-probe", PMD_OPT_ENUM, G(thp_probe), "auto", 0, 0, probe_methods,
	  "how a chunk's THP state is read: auto (best available), scan (PAGEMAP_SCAN, 6.7+), "
	  "kpageflags (pagemap PFNs + /proc/kpageflags, root), smaps (per VMA)" },
	{ "rounds", PMD_OPT_UINT, G(rounds), "0", 0, 100000, NULL,
	  "bench mode: repeat the whole measurement this many times, one row each (0: once)" },
	{ "warmup", PMD_OPT_BOOL, G(warmup), "on", 0, 0, NULL,
	  "bench mode: run one more round first and report it apart (cold memory, caches)" },
	{ "single-thread", PMD_OPT_BOOL, G(single_thread), "off", 0, 0, NULL,
	  "run the only worker on the main thread, with no other thread: fork and exec then "
	  "copy a single-threaded process, as AIM9's fork_test and exec_test did (the kernel "
	  "charges every fork of a threaded one more); the kernel log and taint are read after "
	  "each round; no hang watchdog, no live line" },
	{ "interval", PMD_OPT_DURATION, G(interval_ns), "1s", 10000000ull, 3600000000000ull, NULL,
	  "status line and sample interval" },
	{ "progress", PMD_OPT_ENUM, G(progress), "auto", 0, 0, progress_modes,
	  "status: auto (live line on a terminal, plain lines otherwise), line, plain, off" },
	{ "hang-timeout", PMD_OPT_DURATION, G(hang_timeout_ns), "0", 0, 86400000000000ull, NULL,
	  "a worker without progress this long is a hang (exit 4); at least 1s; 0: a third of "
	  "--duration, within 3s..60s (3.3s for 10s)" },
	{ "quiet", PMD_OPT_BOOL, G(quiet), "off", 0, 0, NULL, "no text report on stdout" },
	{ "json", PMD_OPT_STRING, G(json), "", 0, 0, NULL,
	  "write the JSON report to this file; '-': stdout, and the text report goes to stderr" },
	{ "jsonl", PMD_OPT_STRING, G(jsonl), "", 0, 0, NULL,
	  "write one JSON object per --interval to this file (a time series a killed run keeps)" },
	{ "ktap", PMD_OPT_STRING, G(ktap), "", 0, 0, NULL,
	  "write KTAP results (kselftest runner, KernelCI) to this file; '-': stdout, and the "
	  "text report goes to stderr" },
	{ "replay", PMD_OPT_STRING, G(replay), "", 0, 0, NULL,
	  "rerun a JSON report with its options and seed; options given after it override",
	  PMD_OPTF_CLI_ONLY | PMD_OPTF_NO_ECHO },
	{ "stressors", PMD_OPT_STRING, G(stressors), "", 0, 0, NULL,
	  "run exactly these stressors (comma list), overriding the scenario's sections" },
	{ "config", PMD_OPT_STRING, G(config), "", 0, 0, NULL,
	  "scenario: a builtin name (see 'list') or an INI file; default: race",
	  PMD_OPTF_CLI_ONLY },
	{ "cpu-nodes", PMD_OPT_STRING, G(cpu_nodes), "", 0, 0, NULL,
	  "bind worker threads to NUMA nodes' CPUs: spread (round-robin over every node) or a "
	  "node list such as 0,2 (empty: no binding)" },
	{ "mem-policy", PMD_OPT_STRING, G(mem_policy), "default", 0, 0, NULL,
	  "the arena's NUMA memory policy (mbind): default, local, bind:NODES, "
	  "interleave[:NODES] or preferred:NODE" },
	{ "numa-balancing", PMD_OPT_ENUM, G(numa_balancing), "keep", 0, 0, numa_balancing_modes,
	  "set /proc/sys/kernel/numa_balancing for the run (root; put back at exit): keep, on, "
	  "off" },
	{ "memcg-headroom", PMD_OPT_SIZE, G(memcg_headroom), "0", 0, 1ull << 40, NULL,
	  "root: run in a memory cgroup of our own whose limit the storm sets to its usage plus "
	  "this much at every round, so a huge page's charge fails and the fault falls back to "
	  "4 KiB pages (every write fault while this + 256K per CPU < 2M; 0: off); see "
	  "docs/memcg.md" },
	{ "partner-cpu", PMD_OPT_UINT, G(partner_cpu), "25", 0, 100, NULL,
	  "with the fault storm running, the partners together use at most this percent of the "
	  "CPUs the run may use, each of their workers an equal share, so that a round's racers "
	  "find CPUs to race on; a partner's rate is then an upper bound (0: no cap)" },
	{ "race-trace", PMD_OPT_ENUM, G(race_trace), "auto", 0, 0, race_trace_modes,
	  "which fault path each racer took, from the kernel's trace events (a tracefs instance "
	  "of the run's own: kmem:mm_page_alloc/free of the racers' threads): auto (as root "
	  "where the kernel has them; else inferred from fault counts), off" },
	{ "inject", PMD_OPT_STRING, G(inject), "", 0, 0, NULL,
	  "test only: CLASS[:chunk[:page[:slot[:after[:pages]]]]] corrupts the arena once",
	  PMD_OPTF_HIDDEN },
	{ "stack-size", PMD_OPT_SIZE, G(stack_size), PMD_DEFAULT_STACK, PMD_STACK_MIN, 64ull << 20,
	  NULL, "worker thread stack size (small, so that --threads 4096 stays light; raise it if a "
	  "stressor's worker overflows)" },
	PMD_OPT_END,
};

const struct pmd_option pmd_common_options[] = {
	{ "workers", PMD_OPT_SHARE, offsetof(struct pmd_scfg, workers), "1", 1, 1000000, NULL,
	  "workers of this stressor: a count, a percentage of --threads, or 'rest'" },
	PMD_OPT_END,
};

int pmd_stressor_index(const struct pmd_stressor *st)
{
	unsigned i;

	for (i = 0; pmd_stressors[i]; i++)
		if (pmd_stressors[i] == st)
			return (int)i;
	return -1;
}

int pmd_config_init(struct pmd_config *cfg, char *err, size_t errlen)
{
	unsigned i;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	rc = pmd_opt_defaults(pmd_global_options, cfg, err, errlen);
	if (rc)
		return rc;
	for (i = 0; pmd_stressors[i]; i++) {
		const struct pmd_stressor *st = pmd_stressors[i];
		struct pmd_scfg *sc = &cfg->st[i];

		if (st->abi != PMD_STRESSOR_ABI)
			return pmd_errf(err, errlen, "stressor %s: contract version %u, engine has %u",
				    st->name, st->abi, PMD_STRESSOR_ABI);
		rc = pmd_opt_defaults(pmd_common_options, sc, err, errlen);
		if (!rc && st->workers)
			rc = pmd_opt_parse(pmd_opt_find(pmd_common_options, "workers"), sc,
					   st->workers, err, errlen);
		if (rc)
			return rc;
		sc->opts = calloc(1, st->opts_size ? st->opts_size : 1);
		if (!sc->opts)
			return pmd_errf(err, errlen, "out of memory");
		if (st->options) {
			rc = pmd_opt_defaults(st->options, sc->opts, err, errlen);
			if (rc)
				return rc;
		}
	}
	snprintf(cfg->scenario, sizeof(cfg->scenario), "race");
	return 0;
}

void pmd_config_free(struct pmd_config *cfg)
{
	unsigned i;

	for (i = 0; pmd_stressors[i]; i++) {
		free(cfg->st[i].opts);
		cfg->st[i].opts = NULL;
	}
}

/* ---- stressor sections and names ---------------------------------------- */

/* "did you mean" across stressor names */
static const char *suggest_stressor(const char *name, bool section)
{
	struct pmd_option names[PMD_MAX_STRESSORS + 2];
	unsigned i;

	memset(names, 0, sizeof(names));
	names[0].name = "global"; /* a section's name too, not a stressor's */
	for (i = 0; i < PMD_MAX_STRESSORS && pmd_stressors[i]; i++)
		names[i + 1].name = pmd_stressors[i]->name;
	return pmd_opt_suggest(section ? names : names + 1, name);
}

static int unknown_stressor(const char *name, const char *where, bool section, char *err,
			    size_t errlen)
{
	const char *s = suggest_stressor(name, section);

	if (s)
		return pmd_errf(err, errlen, "%sunknown stressor '%s' (did you mean '%s'?)", where, name,
			    s);
	return pmd_errf(err, errlen, "%sunknown stressor '%s' (see 'pmdstress list')", where, name);
}

int pmd_config_select(struct pmd_config *cfg, const char *list, char *err, size_t errlen)
{
	char buf[PMD_OPT_STRLEN], *save = NULL, *tok;
	bool any = false;
	unsigned i;

	snprintf(buf, sizeof(buf), "%s", list);
	for (i = 0; pmd_stressors[i]; i++)
		cfg->st[i].enabled = false;
	for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		const struct pmd_stressor *st = pmd_stressor_find(tok);

		if (!st)
			return unknown_stressor(tok, "--stressors: ", false, err, errlen);
		cfg->st[pmd_stressor_index(st)].enabled = true;
		any = true;
	}
	if (!any)
		return pmd_errf(err, errlen, "--stressors: invalid value '%s' (expected a comma list "
					 "of stressor names, see 'pmdstress list')", list);
	return 0;
}

/* ---- INI scenarios -------------------------------------------------------- */

struct ini_ctx {
	struct pmd_config *cfg;
	const char *origin;
	char *err;
	size_t errlen;
	int failed;
	bool section_seen[PMD_MAX_STRESSORS + 1]; /* [global] is the last slot */
	char seen[PMD_MAX_STRESSORS + 1][64][48]; /* keys seen per section, for duplicates */
	unsigned nseen[PMD_MAX_STRESSORS + 1];
};

static int section_slot(const char *section)
{
	const struct pmd_stressor *st;

	if (!strcmp(section, "global"))
		return PMD_MAX_STRESSORS;
	st = pmd_stressor_find(section);
	return st ? pmd_stressor_index(st) : -1;
}

static struct pmd_key_origin *find_origin(struct pmd_config *cfg, const char *key)
{
	unsigned i;

	for (i = 0; i < cfg->norigin; i++)
		if (!strcmp(cfg->origin[i].key, key))
			return &cfg->origin[i];
	return NULL;
}

/* @line 0: the command line set @key again, so no file line is to blame */
static void set_origin(struct pmd_config *cfg, const char *key, const char *section, int line)
{
	struct pmd_key_origin *o = find_origin(cfg, key);

	if (!o && (!line || cfg->norigin >= PMD_MAX_ORIGINS))
		return;
	if (!o)
		o = &cfg->origin[cfg->norigin++];
	/* option and stressor names are short: the widths only keep the compiler sure */
	snprintf(o->key, sizeof(o->key), "%.*s", (int)sizeof(o->key) - 1, key);
	snprintf(o->section, sizeof(o->section), "%.*s", (int)sizeof(o->section) - 1, section);
	o->line = line;
}

/* The reader saw "[name]": called once per section header, in order. */
static int on_section(void *user, const char *section, int line)
{
	struct ini_ctx *x = user;
	char where[PMD_OPT_STRLEN + 32];
	int slot;

	snprintf(where, sizeof(where), "%s:%d: ", x->origin, line);
	if (!*section)
		return pmd_errf(x->err, x->errlen, "%sempty section name '[]'", where);
	slot = section_slot(section);
	if (slot < 0)
		return unknown_stressor(section, where, true, x->err, x->errlen);
	if (x->section_seen[slot])
		return pmd_errf(x->err, x->errlen, "%sduplicate section [%s]", where, section);
	x->section_seen[slot] = true;
	if (slot < PMD_MAX_STRESSORS)
		x->cfg->st[slot].enabled = true;
	return 0;
}

static int on_key(void *user, const char *section, const char *name, const char *value, int line)
{
	struct ini_ctx *x = user;
	const struct pmd_option *opt = NULL;
	const struct pmd_option *table = NULL;
	char where[PMD_OPT_STRLEN + 96], perr[PMD_ERRLEN];
	unsigned *n;
	void *base;
	int slot, rc;
	unsigned i;

	snprintf(where, sizeof(where), "%s:%d: [%s] ", x->origin, line, section);
	if (!*section)
		return pmd_errf(x->err, x->errlen, "%s:%d: '%s' is outside any section (put it under "
					       "[global] or a stressor's section)",
			    x->origin, line, name);
	slot = section_slot(section);
	/*
	 * on_section() refused an unknown name and stopped the reader; reaching
	 * here means inih saw a header the line reader did not (the fuzzer found
	 * one, a UTF-8 BOM): still say what is wrong.
	 */
	if (slot < 0) {
		snprintf(where, sizeof(where), "%s:%d: ", x->origin, line);
		return unknown_stressor(section, where, true, x->err, x->errlen);
	}
	if (slot == PMD_MAX_STRESSORS) {
		table = pmd_global_options;
		base = x->cfg;
		opt = pmd_opt_find(table, name);
		if (opt && (opt->flags & PMD_OPTF_CLI_ONLY))
			return pmd_errf(x->err, x->errlen, "%s'%s' is only accepted on the command line",
				    where, name);
	} else {
		const struct pmd_stressor *st = pmd_stressors[slot];

		table = pmd_common_options;
		base = &x->cfg->st[slot];
		opt = pmd_opt_find(table, name);
		if (!opt && st->options) {
			table = st->options;
			base = x->cfg->st[slot].opts;
			opt = pmd_opt_find(table, name);
		}
	}
	if (!opt) {
		const char *s = pmd_opt_suggest(table, name);

		if (!s && slot < PMD_MAX_STRESSORS)
			s = pmd_opt_suggest(pmd_common_options, name);
		if (s)
			return pmd_errf(x->err, x->errlen, "%sunknown key '%s' (did you mean '%s'?)",
				    where, name, s);
		return pmd_errf(x->err, x->errlen, "%sunknown key '%s' (see 'pmdstress --help')", where,
			    name);
	}
	/* a key given twice in one section is almost always a mistake */
	n = &x->nseen[slot];
	for (i = 0; i < *n; i++)
		if (!strcmp(x->seen[slot][i], name))
			return pmd_errf(x->err, x->errlen, "%sduplicate key '%s'", where, name);
	if (*n < 64)
		snprintf(x->seen[slot][(*n)++], sizeof(x->seen[0][0]), "%s", name);
	rc = pmd_opt_parse(opt, base, value, perr, sizeof(perr));
	if (rc)
		return pmd_errf(x->err, x->errlen, "%s%s", where, perr);
	if (slot == PMD_MAX_STRESSORS)
		snprintf(perr, sizeof(perr), "%s", opt->name);
	else
		snprintf(perr, sizeof(perr), "%s-%s", section, opt->name);
	set_origin(x->cfg, perr, section, line);
	return 0;
}

int pmd_config_load_ini(struct pmd_config *cfg, const char *text, const char *origin, char *err,
			size_t errlen)
{
	struct ini_ctx *x = calloc(1, sizeof(*x));
	struct pmd_ini_handlers h = { .on_section = on_section, .on_key = on_key };
	unsigned i;
	int rc;

	if (!x)
		return pmd_errf(err, errlen, "out of memory");
	x->cfg = cfg;
	x->origin = origin;
	x->err = err;
	x->errlen = errlen;
	snprintf(cfg->ini_origin, sizeof(cfg->ini_origin), "%s", origin);
	cfg->norigin = 0;
	/* a scenario names its stressors; start from none */
	for (i = 0; pmd_stressors[i]; i++)
		cfg->st[i].enabled = false;
	rc = pmd_ini_parse(text, origin, &h, x, err, errlen);
	free(x);
	return rc;
}

static int read_file(const char *path, char **out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 4096, len = 0, n;
	char *buf;

	if (!f)
		return pmd_errf(err, errlen, "%s: cannot open scenario file: %s", path, strerror(errno));
	buf = malloc(cap);
	while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (len + 1 == cap) {
			/* the buffer is full at 1 MiB: refuse, do not grow to 2 MiB first */
			char *nb = cap >= (1u << 20) ? NULL : realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				fclose(f);
				return pmd_errf(err, errlen, "%s: scenario file larger than 1 MiB", path);
			}
			buf = nb;
			cap *= 2;
		}
	}
	if (buf && ferror(f)) {
		int e = errno;

		free(buf);
		fclose(f);
		return pmd_errf(err, errlen, "%s: cannot read scenario file: %s", path, strerror(e));
	}
	fclose(f);
	if (!buf)
		return pmd_errf(err, errlen, "out of memory");
	buf[len] = '\0';
	if (strlen(buf) != len) {
		free(buf);
		return pmd_errf(err, errlen, "%s: not a text file (contains a NUL byte)", path);
	}
	*out = buf;
	return 0;
}

int pmd_config_load_scenario(struct pmd_config *cfg, const char *name_or_path, char *err,
			     size_t errlen)
{
	const struct pmd_scenario *sc = NULL;
	char *text = NULL;
	int rc;

	/* a path has a slash or an .ini suffix; anything else is a builtin name */
	if (!strchr(name_or_path, '/') && !strstr(name_or_path, ".ini")) {
		sc = pmd_scenario_find(name_or_path);
		if (!sc) {
			struct pmd_option names[64];
			const char *s;
			unsigned i;

			memset(names, 0, sizeof(names));
			for (i = 0; i < 63 && pmd_scenarios[i].name; i++)
				names[i].name = pmd_scenarios[i].name;
			s = pmd_opt_suggest(names, name_or_path);
			return pmd_errf(err, errlen,
				    "--config: no scenario '%s'%s%s%s (builtin names are in "
				    "'pmdstress list'; a file needs a path such as ./%s.ini)",
				    name_or_path, s ? " (did you mean '" : "", s ? s : "",
				    s ? "'?)" : "", name_or_path);
		}
		rc = pmd_config_load_ini(cfg, sc->text, sc->name, err, errlen);
	} else {
		rc = read_file(name_or_path, &text, err, errlen);
		if (rc)
			return rc;
		rc = pmd_config_load_ini(cfg, text, name_or_path, err, errlen);
		free(text);
	}
	if (!rc)
		snprintf(cfg->scenario, sizeof(cfg->scenario), "%s", name_or_path);
	return rc;
}

/* ---- command line ----------------------------------------------------------- */

/* "--fault-order": find the stressor whose name prefixes the option. */
static const struct pmd_stressor *stressor_prefix(const char *name, const char **rest)
{
	unsigned i;

	for (i = 0; pmd_stressors[i]; i++) {
		size_t n = strlen(pmd_stressors[i]->name);

		if (!strncmp(name, pmd_stressors[i]->name, n) && name[n] == '-' && name[n + 1]) {
			*rest = name + n + 1;
			return pmd_stressors[i];
		}
	}
	return NULL;
}

static int cli_suggest(const char *name, char *err, size_t errlen)
{
	const struct pmd_stressor *st;
	const char *rest, *s;

	st = stressor_prefix(name, &rest);
	if (st) {
		s = pmd_opt_suggest(st->options, rest);
		if (!s)
			s = pmd_opt_suggest(pmd_common_options, rest);
		if (s)
			return pmd_errf(err, errlen, "unknown option --%s (did you mean --%s-%s?)", name,
				    st->name, s);
		return pmd_errf(err, errlen, "unknown option --%s (stressor %s has no option '%s'; "
					 "see --help)",
			    name, st->name, rest);
	}
	s = pmd_opt_suggest(pmd_global_options, name);
	if (s)
		return pmd_errf(err, errlen, "unknown option --%s (did you mean --%s?)", name, s);
	return pmd_errf(err, errlen, "unknown option --%s (see --help)", name);
}

int pmd_config_apply_cli(struct pmd_config *cfg, const char *name, const char *value,
			 bool *used_value, char *err, size_t errlen)
{
	const struct pmd_option *opt;
	const struct pmd_stressor *st;
	const char *rest;
	char perr[PMD_ERRLEN];
	bool negate = false;
	void *base = cfg;
	int rc;

	*used_value = false;
	opt = pmd_opt_find(pmd_global_options, name);
	if (!opt && (st = stressor_prefix(name, &rest))) {
		struct pmd_scfg *sc = &cfg->st[pmd_stressor_index(st)];

		opt = pmd_opt_find(pmd_common_options, rest);
		base = sc;
		if (!opt) {
			opt = pmd_opt_find(st->options, rest);
			base = sc->opts;
		}
		if (!opt && !strncmp(rest, "no-", 3)) {
			opt = pmd_opt_find(st->options, rest + 3);
			negate = opt != NULL;
		}
	}
	if (!opt && !strncmp(name, "no-", 3)) {
		opt = pmd_opt_find(pmd_global_options, name + 3);
		base = cfg;
		negate = opt != NULL;
	}
	if (!opt)
		return cli_suggest(name, err, errlen);
	if (negate && opt->type != PMD_OPT_BOOL)
		return pmd_errf(err, errlen, "--%s: only on/off options have a --no- form", name);
	if (opt->type == PMD_OPT_BOOL && (negate || !value || value[0] == '-' || !value[0] ||
					  pmd_opt_parse(opt, base, value, perr, sizeof(perr)))) {
		/* a bare --flag (or --no-flag) does not consume the next argument */
		set_origin(cfg, negate ? name + 3 : name, "", 0);
		return pmd_opt_parse(opt, base, negate ? "off" : "on", err, errlen);
	}
	if (opt->type == PMD_OPT_BOOL) {
		set_origin(cfg, name, "", 0);
		*used_value = true;
		return 0;
	}
	if (!value || !strncmp(value, "--", 2)) {
		char what[256];

		pmd_opt_describe(opt, what, sizeof(what));
		return pmd_errf(err, errlen, "--%s needs a value (%s; %s)", name, what, opt->help);
	}
	*used_value = true;
	rc = pmd_opt_parse(opt, base, value, perr, sizeof(perr));
	/* perr starts with the option's own name; the user typed the full one */
	if (rc)
		return pmd_errf(err, errlen, "--%s%s", name, perr + strlen(opt->name));
	set_origin(cfg, name, "", 0);
	if (opt == pmd_opt_find(pmd_global_options, "stressors"))
		return pmd_config_select(cfg, value, err, errlen);
	return 0;
}

int pmd_config_from_argv(struct pmd_config *cfg, int argc, char **argv, char *err,
			 size_t errlen)
{
	const char *scenario = "race";
	int i, rc;

	/* the scenario comes first so that every other option overrides it */
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--config")) {
			if (i + 1 >= argc)
				return pmd_errf(err, errlen, "--config needs a value (%s)",
					    pmd_opt_find(pmd_global_options, "config")->help);
			scenario = argv[++i];
		} else if (!strncmp(argv[i], "--config=", 9)) {
			scenario = argv[i] + 9;
		}
	}
	if (!*scenario)
		return pmd_errf(err, errlen, "--config: invalid value '' (expected a scenario name "
					 "or an INI file path)");
	rc = pmd_config_load_scenario(cfg, scenario, err, errlen);
	if (rc)
		return rc;
	snprintf(cfg->config, sizeof(cfg->config), "%s", scenario);

	for (i = 0; i < argc; i++) {
		char name[128];
		const char *arg = argv[i], *eq, *value;
		bool used;

		if (strncmp(arg, "--", 2) || !arg[2])
			return pmd_errf(err, errlen, "unexpected argument '%s' (options start with --; "
						 "see --help)", arg);
		arg += 2;
		eq = strchr(arg, '=');
		if ((eq ? (size_t)(eq - arg) : strlen(arg)) >= sizeof(name))
			return pmd_errf(err, errlen, "unknown option --%.40s... (too long)", arg);
		snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
		if (!strcmp(name, "config")) {
			i += eq ? 0 : 1;
			continue;
		}
		value = eq ? eq + 1 : (i + 1 < argc ? argv[i + 1] : NULL);
		rc = pmd_config_apply_cli(cfg, name, value, &used, err, errlen);
		if (rc)
			return rc;
		/* only an on/off flag leaves a value unused: one it does not take */
		if (eq && !used)
			return pmd_errf(err, errlen, "--%s: invalid value '%s' (%s)", name, eq + 1,
				    !strncmp(name, "no-", 3) || strstr(name, "-no-")
					    ? "a --no- flag takes no value"
					    : "expected on|off, or no value");
		if (!eq && used)
			i++;
		/* "--shared maybe": the word was meant as the flag's value */
		if (!eq && !used && i + 1 < argc && strncmp(argv[i + 1], "--", 2))
			return pmd_errf(err, errlen, "--%s: invalid value '%s' (expected on|off, as "
						 "--%s=on, or no value)", name, argv[i + 1], name);
	}
	return 0;
}

/* ---- cross-field checks ----------------------------------------------------- */

static uint64_t mem_total_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);

	return pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;
}

static int resolve_workers(struct pmd_config *cfg, char *err, size_t errlen)
{
	uint64_t fixed = 0, total = cfg->threads;
	unsigned i, nrest = 0, nenabled = 0;
	bool chosen = !total; /* --threads 0: ours to choose */
	char list[PMD_ERRLEN] = "";
	size_t n = 0;

	if (!total) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		total = cpus > 0 ? (uint64_t)cpus * 4 : 8;
		if (total < 8)
			total = 8;
	}
	for (i = 0; pmd_stressors[i]; i++) {
		struct pmd_scfg *sc = &cfg->st[i];

		if (!sc->enabled)
			continue;
		nenabled++;
		if (sc->workers.rest) {
			nrest++;
			continue;
		}
		if (sc->workers.pct)
			sc->nworkers = (unsigned)((total * sc->workers.pct + 50) / 100);
		else
			sc->nworkers = sc->workers.count;
		if (!sc->nworkers)
			sc->nworkers = 1;
		fixed += sc->nworkers;
		if (n < sizeof(list))
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s=%u", n ? ", " : "",
					      pmd_stressors[i]->name, sc->nworkers);
	}
	/*
	 * Chosen by us: room for every partner and a pair of racers, so that a
	 * small machine's default run drops no partner of the scenario.
	 */
	if (chosen && nrest && fixed + 2ull * nrest > total)
		total = fixed + 2ull * nrest;
	if (!nenabled)
		return pmd_errf(err, errlen, "no stressor selected (the scenario has no stressor "
					 "section and --stressors is empty)");
	/*
	 * Too few threads for every partner of a storm: the 'rest' stressors
	 * keep at least half of them, and the partners that do not fit in the
	 * other half are dropped, each with the reason (reported as skipped).
	 * Without a 'rest' stressor every share must fit.
	 */
	if (nrest && fixed + nrest > total) {
		uint64_t keep = total / 2 > nrest ? total / 2 : nrest, budget;

		if (keep > total)
			keep = total;
		budget = total - keep;
		fixed = 0;
		for (i = 0; pmd_stressors[i]; i++) {
			struct pmd_scfg *sc = &cfg->st[i];

			if (!sc->enabled || sc->workers.rest)
				continue;
			if (sc->nworkers <= budget - fixed) {
				fixed += sc->nworkers;
				continue;
			}
			snprintf(sc->dropped, sizeof(sc->dropped),
				 "--threads %llu leaves it no worker (the storm keeps half)",
				 (unsigned long long)total);
			sc->nworkers = 0;
		}
	}
	if (fixed > total || (nrest && fixed + nrest > total))
		return pmd_errf(err, errlen,
			    "--threads %llu: too few for the workers asked for (%s%s); raise "
			    "--threads or lower the stressors' workers",
			    (unsigned long long)total, list, nrest ? ", plus one per 'rest'" : "");
	if (nrest) {
		uint64_t left = total - fixed, share = left / nrest, extra = left % nrest;

		for (i = 0; pmd_stressors[i]; i++) {
			struct pmd_scfg *sc = &cfg->st[i];

			if (!sc->enabled || !sc->workers.rest)
				continue;
			/* the first 'rest' stressor takes what the division leaves over */
			sc->nworkers = (unsigned)(share + extra);
			extra = 0;
		}
	}
	total = 0;
	for (i = 0; pmd_stressors[i]; i++)
		if (cfg->st[i].enabled)
			total += cfg->st[i].nworkers;
	cfg->threads = total;
	return 0;
}

/*
 * A report written at the end goes to a temporary file beside @path, then is
 * renamed: find out now, not after the run, that its folder does not take it.
 */
static int check_output(const char *opt, const char *path, char *err, size_t errlen)
{
	char dir[PMD_OPT_STRLEN];
	struct stat sb;
	char *slash;

	if (!*path || !strcmp(path, "-"))
		return 0;
	if (!stat(path, &sb) && S_ISDIR(sb.st_mode))
		return pmd_errf(err, errlen, "--%s: cannot write '%s': it is a directory", opt, path);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		slash[slash == dir] = '\0'; /* "/x" -> "/" */
	if (access(dir, W_OK | X_OK))
		return pmd_errf(err, errlen, "--%s: cannot write '%s': folder %s: %s", opt, path, dir,
			    strerror(errno));
	return 0;
}

/* @path as an absolute name: its folder resolved (symlinks, "..") and its own name */
static void output_name(const char *path, char *buf, size_t len)
{
	char dir[PMD_OPT_STRLEN], real[PATH_MAX];
	const char *base = strrchr(path, '/');

	snprintf(dir, sizeof(dir), "%.*s", base ? (int)(base - path) + (base == path) : 1,
		 base ? path : ".");
	if (!realpath(dir, real))
		snprintf(real, sizeof(real), "%s", dir);
	snprintf(buf, len, "%s/%s", real, base ? base + 1 : path);
}

static bool same_output(const char *a, const char *b)
{
	char na[PATH_MAX + PMD_OPT_STRLEN], nb[PATH_MAX + PMD_OPT_STRLEN];
	struct stat sa, sb;

	if (!strcmp(a, b))
		return true;
	if (!strcmp(a, "-") || !strcmp(b, "-"))
		return false;
	/* one file by two names: a hard link, a symlink, ./x and x */
	if (!stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino)
		return true;
	output_name(a, na, sizeof(na));
	output_name(b, nb, sizeof(nb));
	return !strcmp(na, nb);
}

/*
 * Each output its own file: two writing one, the one written last replaces
 * the other (the report overwrote the time series) or they interleave; two
 * on stdout would mix two formats in one stream.
 */
static int check_outputs_apart(const struct pmd_config *cfg, char *err, size_t errlen)
{
	const struct {
		const char *opt, *path;
	} out[] = { { "json", cfg->json }, { "jsonl", cfg->jsonl }, { "ktap", cfg->ktap } };
	unsigned i, j;

	for (i = 0; i < 3; i++)
		for (j = i + 1; j < 3; j++) {
			if (!out[i].path[0] || !out[j].path[0] ||
			    !same_output(out[i].path, out[j].path))
				continue;
			if (!strcmp(out[i].path, "-"))
				return pmd_errf(err, errlen, "--%s - and --%s - both want stdout ('-'); "
							     "send one of them to a file", out[i].opt,
						out[j].opt);
			return pmd_errf(err, errlen, "--%s '%s' and --%s '%s' are one file: the one "
						     "written last would replace the other; give "
						     "each its own", out[i].opt, out[i].path,
					out[j].opt, out[j].path);
		}
	return 0;
}

/* --memcg-headroom: the storm's rounds set the limit; without them it would never be set */
static int check_memcg(const struct pmd_config *cfg, char *err, size_t errlen)
{
	unsigned i;

	if (!cfg->memcg_headroom)
		return 0;
	for (i = 0; pmd_stressors[i]; i++)
		if (!strcmp(pmd_stressors[i]->name, "fault") && cfg->st[i].enabled &&
		    cfg->st[i].nworkers)
			return 0;
	return pmd_errf(err, errlen, "--memcg-headroom: needs the fault stressor with at least "
				     "one worker (its rounds set the cgroup's limit)");
}

static int finish_checks(struct pmd_config *cfg, char *err, size_t errlen);

/*
 * The cross-field checks name the option ("--size: ..."); when the scenario
 * file set it, say where, as the parser does for what it refuses itself.
 */
int pmd_config_finish(struct pmd_config *cfg, char *err, size_t errlen)
{
	const struct pmd_key_origin *o;
	char key[48], msg[PMD_ERRLEN];
	size_t n;
	int rc = finish_checks(cfg, err, errlen);

	if (!rc || strncmp(err, "--", 2))
		return rc;
	n = strcspn(err + 2, ": ");
	if (n >= sizeof(key))
		return rc;
	snprintf(key, sizeof(key), "%.*s", (int)n, err + 2);
	o = find_origin(cfg, key);
	if (!o || !o->line)
		return rc;
	snprintf(msg, sizeof(msg), "%s", err + 2);
	snprintf(err, errlen, "%s:%d: [%s] %s", cfg->ini_origin, o->line, o->section, msg);
	return rc;
}

/*
 * --hang-timeout 0: fit the run. A stall must be judged within the run it
 * happens in, or a 10 s run (the default) stalled for 5 s ends clean; yet
 * the timeout must stay above the longest a healthy worker goes still
 * without a beat (run-queue waits and waits for its peers left out): on
 * this project's 2-CPU development VM at a load average of 25 to 235
 * (other runs), 0.09-0.76 s over every scenario, and one MADV_COLLAPSE
 * call took 3.75 s of wall time (README, "The kernel oracle"). A third of
 * the run, at least 3 s and at most 60 s: 3.3 s for 10 s; a stall across
 * the run's end is judged at the end (monitor.c check_gaps()).
 */
static int resolve_hang_timeout(struct pmd_config *cfg, char *err, size_t errlen)
{
	const uint64_t s = 1000000000ull;
	char a[32];

	if (cfg->hang_timeout_ns && cfg->hang_timeout_ns < s) {
		pmd_format_duration(cfg->hang_timeout_ns, a, sizeof(a));
		return pmd_errf(err, errlen, "--hang-timeout: invalid value '%s' (at least 1s, or 0 "
					 "for a third of --duration)", a);
	}
	if (!cfg->hang_timeout_ns) {
		/* whole milliseconds: the echo and a rerun line read "3333ms", not ns */
		cfg->hang_timeout_ns = cfg->duration_ns / 3 / 1000000 * 1000000;
		if (cfg->hang_timeout_ns < 3 * s)
			cfg->hang_timeout_ns = 3 * s;
		if (cfg->hang_timeout_ns > 60 * s)
			cfg->hang_timeout_ns = 60 * s;
	}
	return 0;
}

static int finish_checks(struct pmd_config *cfg, char *err, size_t errlen)
{
	uint64_t mem = mem_total_bytes();
	struct pmd_memlimit lim;
	char a[32], b[32];
	int rc;

	if (check_output("json", cfg->json, err, errlen) ||
	    check_output("jsonl", cfg->jsonl, err, errlen) ||
	    check_output("ktap", cfg->ktap, err, errlen) || check_outputs_apart(cfg, err, errlen))
		return -EINVAL;

	if (cfg->size % (2ull << 20)) {
		pmd_format_size(cfg->size, a, sizeof(a));
		return pmd_errf(err, errlen, "--size: invalid value '%s' (must be a multiple of 2M: "
					 "the arena is cut into one chunk per PMD)", a);
	}
	if (mem && cfg->size > mem) {
		pmd_format_size(cfg->size, a, sizeof(a));
		pmd_format_size(mem & ~((1ull << 20) - 1), b, sizeof(b));
		return pmd_errf(err, errlen, "--size: invalid value '%s' (larger than this machine's "
					 "memory, %s)", a, b);
	}
	pmd_memlimit_cgroup(&lim);
	if (cfg->size > lim.bytes) {
		pmd_format_size(cfg->size, a, sizeof(a));
		pmd_format_size(lim.bytes, b, sizeof(b));
		return pmd_errf(err, errlen, "--size: invalid value '%s' (larger than this process's "
					 "memory cgroup allows, %s in %s: the run would be OOM-killed)",
			    a, b, lim.file);
	}
	pmd_memlimit_as(&lim);
	if (cfg->size > lim.bytes) {
		pmd_format_size(cfg->size, a, sizeof(a));
		pmd_format_size(lim.bytes, b, sizeof(b));
		return pmd_errf(err, errlen, "--size: invalid value '%s' (larger than RLIMIT_AS, %s: the "
					 "arena cannot be mapped; raise ulimit -v)", a, b);
	}
	if (cfg->seed) {
		cfg->seed_used = cfg->seed;
	} else {
		uint64_t s = 0;

		if (getrandom(&s, sizeof(s), 0) != sizeof(s))
			s = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
		cfg->seed_used = s ? s : 1;
	}
	if (pmd_numa_check_config(cfg, err, errlen))
		return -EINVAL;
	rc = resolve_hang_timeout(cfg, err, errlen);
	if (!rc)
		rc = resolve_workers(cfg, err, errlen);
	if (!rc && cfg->single_thread && cfg->threads != 1)
		return pmd_errf(err, errlen, "--single-thread: needs exactly one worker in all, the "
					 "run has %llu (one stressor with workers = 1, --threads 1)",
			    (unsigned long long)cfg->threads);
	return rc ? rc : check_memcg(cfg, err, errlen);
}

/* ---- --help and list -------------------------------------------------------- */

static void help_table(FILE *out, const struct pmd_option *table, const char *prefix)
{
	const struct pmd_option *o;

	for (o = table; o && o->name; o++) {
		char what[256], flag[96];

		if (o->flags & PMD_OPTF_HIDDEN)
			continue;
		pmd_opt_describe(o, what, sizeof(what));
		snprintf(flag, sizeof(flag), "--%s%s", prefix, o->name);
		fprintf(out, "  %-26s %s\n  %-26s   [%s; default %s]\n", flag, o->help, "", what,
			o->def && *o->def ? o->def : "none");
	}
}

void pmd_config_help(FILE *out)
{
	unsigned i;

	pmd_usage_lines(out);
	fprintf(out,
		"\nRaces transparent huge page (PMD) faults against PTE faults and their partners\n"
		"in one shared anonymous VMA, measures what they cost, and verifies every page.\n");
	pmd_exit_line(out);
	fprintf(out, "\nOptions (also [global] keys of a scenario file; the command line wins):\n");
	help_table(out, pmd_global_options, "");
	fprintf(out, "\nEvery stressor also has (key in its [section], or --<stressor>-KEY):\n");
	help_table(out, pmd_common_options, "<stressor>-");
	for (i = 0; pmd_stressors[i]; i++) {
		const struct pmd_stressor *st = pmd_stressors[i];
		char prefix[64];

		fprintf(out, "\n[%s] %s%s%s\n", st->name, st->summary,
			(st->flags & PMD_SF_ROOT) ? " (root only)" : "",
			(st->flags & PMD_SF_OPT_IN) ? " (opt-in: only when named)" : "");
		snprintf(prefix, sizeof(prefix), "--%s-workers", st->name);
		fprintf(out, "  %-26s its share of --threads\n  %-26s   [default %s]\n", prefix, "",
			st->workers ? st->workers : "1");
		snprintf(prefix, sizeof(prefix), "%s-", st->name);
		help_table(out, st->options, prefix);
	}
	fprintf(out, "\nSizes take K/M/G/T suffixes (binary); durations ns/us/ms/s/m/h.\n");
}

void pmd_config_list(FILE *out)
{
	unsigned i;

	fprintf(out, "stressors:\n");
	for (i = 0; pmd_stressors[i]; i++) {
		const struct pmd_stressor *st = pmd_stressors[i];

		fprintf(out, "  %-10s %s%s%s\n", st->name, st->summary,
			(st->flags & PMD_SF_ROOT) ? " [root]" : "",
			(st->flags & PMD_SF_OPT_IN) ? " [opt-in]" : "");
	}
	fprintf(out, "scenarios (--config NAME):\n");
	for (i = 0; pmd_scenarios[i].name; i++)
		fprintf(out, "  %-16s %s\n", pmd_scenarios[i].name, pmd_scenarios[i].summary);
}
