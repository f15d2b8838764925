// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs: THP policy churn under the fault storm (root only, opt-in).
 *
 * The race: a fault reads the THP policy (transparent_hugepage/enabled and
 * defrag, the per-size mTHP hugepages-<size>kB/enabled) once, in
 * thp_vma_allowable_orders() and vma_thp_gfp_mask(), then allocates and
 * installs with what it read, while an administrator's write flips the
 * policy and starts or stops khugepaged (start_stop_khugepaged(), the
 * khugepaged/scan_sleep_millisecs and pages_to_scan knobs wake and re-pace
 * it). A fault that mixes an old and a new policy mid-way, or khugepaged
 * collapsing a range whose policy just turned "never", is the kind of bug
 * this shakes out; "never" simply sends the storm to small pages, and the
 * race still runs.
 *
 * Every file is saved before its first write and written back at the end
 * of the run, on SIGINT/SIGTERM, on the second-signal exit, at exit() and
 * after a crash (src/kernel/restore.c, src/run/fatal.c). One such run at a time: a
 * second one would save the first one's churn as "the settings before", so
 * it is skipped. The values written are the ones each file lists itself
 * ("always [madvise] never"), so only what this kernel offers is ever
 * written; values=keep-thp leaves out those that take huge pages away from
 * MADV_HUGEPAGE ranges ("never" in enabled and in the PMD-size mTHP file).
 *
 * How to tell it fired: writes per knob and their latency (a write of
 * enabled that stops khugepaged waits for it), the storm's THP coverage
 * swinging between THP and PTE, and thp_fault_fallback in the vmstat deltas.
 */
#include <pmdstress/stressor.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NSEC 1000000000ull
#define THP_DIR "/sys/kernel/mm/transparent_hugepage"
#define MAX_KNOBS 32
#define MAX_VALUES 8
#define LINGER_NAP_NS (10ull * 1000000) /* pace of the writes after the stop (test only) */

enum { G_ENABLED, G_DEFRAG, G_MTHP, G_KHUGEPAGED, G_COUNT };
enum { VALUES_ALL, VALUES_KEEP_THP };
enum { CRASH_SEGV, CRASH_STACK, CRASH_ABORT };

struct sysfs_opts {
	uint64_t rate;
	bool group[G_COUNT];
	unsigned values;
	uint64_t crash_after;
	unsigned crash;
	uint64_t linger;
};

static const char *const value_sets[] = { "all", "keep-thp", NULL };
static const char *const crash_kinds[] = { "segv", "stack", "abort", NULL };

#define O(f) offsetof(struct sysfs_opts, f)
static const struct pmd_option sysfs_options[] = {
	{ "rate", PMD_OPT_UINT, O(rate), "50", 0, 100000, NULL,
	  "sysfs writes per second, all workers together (0: as fast as possible)" },
	{ "enabled", PMD_OPT_BOOL, O(group[G_ENABLED]), "on", 0, 0, NULL,
	  "churn transparent_hugepage/enabled" },
	{ "defrag", PMD_OPT_BOOL, O(group[G_DEFRAG]), "on", 0, 0, NULL,
	  "churn transparent_hugepage/defrag" },
	{ "mthp", PMD_OPT_BOOL, O(group[G_MTHP]), "on", 0, 0, NULL,
	  "churn every hugepages-<size>kB/enabled the kernel has" },
	{ "khugepaged", PMD_OPT_BOOL, O(group[G_KHUGEPAGED]), "on", 0, 0, NULL,
	  "churn khugepaged/scan_sleep_millisecs and pages_to_scan" },
	{ "values", PMD_OPT_ENUM, O(values), "all", 0, 0, value_sets,
	  "all: every value a file offers; keep-thp: never take PMD-size huge pages away "
	  "from MADV_HUGEPAGE ranges (no 'never' in enabled or the PMD-size mTHP file)" },
	{ "crash-after", PMD_OPT_DURATION, O(crash_after), "0", 0, 3600ull * NSEC, NULL,
	  "test only: worker 0 crashes this long into the run (0: never)", PMD_OPTF_HIDDEN },
	{ "crash", PMD_OPT_ENUM, O(crash), "segv", 0, 0, crash_kinds,
	  "test only: how it crashes: an invalid store, a stack overflow, abort()",
	  PMD_OPTF_HIDDEN },
	{ "linger", PMD_OPT_DURATION, O(linger), "0", 0, 3600ull * NSEC, NULL,
	  "test only: keep writing this long after the run stops (a worker slow to stop)",
	  PMD_OPTF_HIDDEN },
	PMD_OPT_END,
};

enum {
	M_OPS,
	M_ENABLED,
	M_DEFRAG,
	M_MTHP,
	M_KHUGEPAGED,
	M_FAILED,
	M_LAT_ENABLED,
	M_LAT_DEFRAG,
	M_LAT_MTHP,
	M_LAT_KHUGEPAGED,
};

static const unsigned group_count[G_COUNT] = { M_ENABLED, M_DEFRAG, M_MTHP, M_KHUGEPAGED };
static const unsigned group_latency[G_COUNT] = { M_LAT_ENABLED, M_LAT_DEFRAG, M_LAT_MTHP,
						 M_LAT_KHUGEPAGED };

static const struct pmd_metric sysfs_metrics[] = {
	[M_OPS] = { "ops", PMD_METRIC_COUNT, "sysfs writes" },
	[M_ENABLED] = { "enabled", PMD_METRIC_COUNT, "writes of transparent_hugepage/enabled" },
	[M_DEFRAG] = { "defrag", PMD_METRIC_COUNT, "writes of transparent_hugepage/defrag" },
	[M_MTHP] = { "mthp", PMD_METRIC_COUNT, "writes of hugepages-<size>kB/enabled" },
	[M_KHUGEPAGED] = { "khugepaged", PMD_METRIC_COUNT,
			   "writes of khugepaged/scan_sleep_millisecs and pages_to_scan" },
	[M_FAILED] = { "failed", PMD_METRIC_COUNT, "writes the kernel refused (reported)",
		       PMD_BETTER_NONE },
	[M_LAT_ENABLED] = { "enabled_write", PMD_METRIC_LATENCY,
			    "one write of enabled (starts or stops khugepaged)" },
	[M_LAT_DEFRAG] = { "defrag_write", PMD_METRIC_LATENCY, "one write of defrag" },
	[M_LAT_MTHP] = { "mthp_write", PMD_METRIC_LATENCY, "one write of an mTHP size's enabled" },
	[M_LAT_KHUGEPAGED] = { "khugepaged_write", PMD_METRIC_LATENCY,
			       "one write of a khugepaged knob" },
	{ NULL },
};

/* khugepaged's pace: fast enough to race the storm, slow enough to share 2 CPUs */
static const char *const scan_sleep_values[] = { "100", "1000", "10000", NULL };
static const char *const pages_to_scan_values[] = { "512", "4096", "8192", NULL };

struct knob {
	char path[128];
	unsigned group;
	char values[MAX_VALUES][24];
	unsigned nvalues;
	uint32_t next; /* atomic: index of the next value to write */
};

struct sysfs_priv {
	const struct sysfs_opts *o;
	struct knob knobs[MAX_KNOBS];
	unsigned nknobs;
	unsigned by_group[G_COUNT][MAX_KNOBS], ngroup[G_COUNT];
	unsigned groups[G_COUNT], ngroups; /* the groups that have knobs */
	uint64_t period_ns;		   /* per worker, from the rate */
};

/* ---- finding the knobs ------------------------------------------------------ */

static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/*
 * A choice file's values: "always [madvise] never" -> always, madvise,
 * never; *current gets the index of the bracketed one.
 */
static void choice_values(struct knob *k, char *text, unsigned *current)
{
	char *save = NULL, *tok;

	for (tok = strtok_r(text, " \n", &save); tok && k->nvalues < MAX_VALUES;
	     tok = strtok_r(NULL, " \n", &save)) {
		size_t n = strlen(tok);

		if (tok[0] == '[' && n > 2 && tok[n - 1] == ']') {
			*current = k->nvalues;
			tok[n - 1] = '\0';
			tok++;
		}
		snprintf(k->values[k->nvalues++], sizeof(k->values[0]), "%s", tok);
	}
}

static void drop_value(struct knob *k, const char *v)
{
	unsigned i;

	for (i = 0; i < k->nvalues; i++) {
		if (strcmp(k->values[i], v))
			continue;
		memmove(k->values[i], k->values[i + 1], sizeof(k->values[0]) * (k->nvalues - i - 1));
		k->nvalues--;
		return;
	}
}

/* Add the knob at @path if it exists; NULL if it does not or is full. */
static struct knob *add_knob(struct sysfs_priv *sp, const char *path, unsigned group)
{
	struct knob *k;

	if (sp->nknobs == MAX_KNOBS || access(path, F_OK))
		return NULL;
	k = &sp->knobs[sp->nknobs];
	memset(k, 0, sizeof(*k));
	snprintf(k->path, sizeof(k->path), "%s", path);
	k->group = group;
	return k;
}

static void commit_knob(struct sysfs_priv *sp, struct knob *k, unsigned current)
{
	if (k->nvalues < 2)
		return; /* nothing to churn */
	__atomic_store_n(&k->next, (current + 1) % k->nvalues, __ATOMIC_RELAXED);
	sp->by_group[k->group][sp->ngroup[k->group]++] = sp->nknobs;
	sp->nknobs++;
}

static void add_choice(struct sysfs_priv *sp, const char *path, unsigned group, bool keep_thp)
{
	struct knob *k = add_knob(sp, path, group);
	unsigned current = 0;
	char text[256];

	if (!k || read_small(path, text, sizeof(text)))
		return;
	choice_values(k, text, &current);
	if (keep_thp) {
		char cur[24];

		snprintf(cur, sizeof(cur), "%s", k->values[current]);
		drop_value(k, "never");
		for (current = 0; current < k->nvalues && strcmp(k->values[current], cur);
		     current++)
			;
		if (current == k->nvalues)
			current = 0;
	}
	commit_knob(sp, k, current);
}

static void add_numbers(struct sysfs_priv *sp, const char *path, const char *const *values)
{
	struct knob *k = add_knob(sp, path, G_KHUGEPAGED);

	if (!k)
		return;
	while (*values && k->nvalues < MAX_VALUES)
		snprintf(k->values[k->nvalues++], sizeof(k->values[0]), "%s", *values++);
	commit_knob(sp, k, 0);
}

static int cmp_size(const void *a, const void *b)
{
	return atoi(*(const char *const *)a + 10) - atoi(*(const char *const *)b + 10);
}

static void add_mthp(struct sysfs_priv *sp, bool keep_thp)
{
	char names[MAX_KNOBS][64], path[192], pmd_name[64];
	const char *sorted[MAX_KNOBS];
	DIR *d = opendir(THP_DIR);
	struct dirent *de;
	unsigned n = 0, i, kb;

	if (!d)
		return;
	while ((de = readdir(d)) && n < MAX_KNOBS) {
		if (sscanf(de->d_name, "hugepages-%ukB", &kb) != 1)
			continue;
		snprintf(names[n], sizeof(names[0]), "%.63s", de->d_name);
		sorted[n] = names[n];
		n++;
	}
	closedir(d);
	qsort(sorted, n, sizeof(sorted[0]), cmp_size);
	snprintf(pmd_name, sizeof(pmd_name), "hugepages-%lukB", (unsigned long)(PMD_CHUNK_SIZE >> 10));
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), THP_DIR "/%s/enabled", sorted[i]);
		/* only the PMD size takes huge pages from MADV_HUGEPAGE ranges */
		add_choice(sp, path, G_MTHP, keep_thp && !strcmp(sorted[i], pmd_name));
	}
}

static void find_knobs(struct sysfs_priv *sp)
{
	const struct sysfs_opts *o = sp->o;
	bool keep = o->values == VALUES_KEEP_THP;
	unsigned g;

	if (o->group[G_ENABLED])
		add_choice(sp, THP_DIR "/enabled", G_ENABLED, keep);
	if (o->group[G_DEFRAG])
		add_choice(sp, THP_DIR "/defrag", G_DEFRAG, false);
	if (o->group[G_MTHP])
		add_mthp(sp, keep);
	if (o->group[G_KHUGEPAGED]) {
		add_numbers(sp, THP_DIR "/khugepaged/scan_sleep_millisecs", scan_sleep_values);
		add_numbers(sp, THP_DIR "/khugepaged/pages_to_scan", pages_to_scan_values);
	}
	for (g = 0; g < G_COUNT; g++)
		if (sp->ngroup[g])
			sp->groups[sp->ngroups++] = g;
}

/* ---- the test-only crash ------------------------------------------------------ */

static unsigned __attribute__((noinline)) overflow(volatile char *up, unsigned depth)
{
	volatile char frame[1024];

	frame[0] = (char)depth;
	frame[sizeof(frame) - 1] = up ? up[0] : 0;
	if (!depth)
		return frame[0];
	/* not a tail call: the frame is used after it returns */
	return overflow(frame, depth - 1) + frame[sizeof(frame) - 1];
}

static void crash_now(unsigned kind)
{
	volatile uintptr_t bad = 16;

	fprintf(stderr, "pmdstress: sysfs: crashing on purpose (--sysfs-crash %s)\n",
		crash_kinds[kind]);
	switch (kind) {
	case CRASH_STACK:
		overflow(NULL, ~0u >> 1);
		break;
	case CRASH_ABORT:
		abort();
	default:
		*(volatile int *)bad = 1;
		break;
	}
}

/* ---- the loop ---------------------------------------------------------------- */

static struct knob *pick_knob(struct pmd_worker *w, struct sysfs_priv *sp)
{
	unsigned g = sp->groups[pmd_rand_below(w, sp->ngroups)];

	return &sp->knobs[sp->by_group[g][pmd_rand_below(w, sp->ngroup[g])]];
}

/* One write; false once the engine has begun restoring (stop writing). */
static bool write_one(struct pmd_worker *w, struct sysfs_priv *sp)
{
	struct knob *k = pick_knob(w, sp);
	unsigned v = __atomic_fetch_add(&k->next, 1, __ATOMIC_RELAXED) % k->nvalues;
	uint64_t t0 = pmd_now_ns();
	int err = pmd_restore_write(k->path, k->values[v]);

	if (err == -ECANCELED)
		return false;
	pmd_latency(w, group_latency[k->group], pmd_now_ns() - t0);
	pmd_count(w, M_OPS, 1);
	pmd_count(w, group_count[k->group], 1);
	if (err) {
		/* every value came from the file itself: a refusal is news */
		if (!pmd_counter_read(&w->stats->counter[M_FAILED]))
			pmd_worker_error(w, err, "sysfs: writing '%s' to %s", k->values[v], k->path);
		pmd_count(w, M_FAILED, 1);
	}
	return true;
}

static void nap(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / NSEC), .tv_nsec = (long)(ns % NSEC) };

	nanosleep(&ts, NULL);
}


static int sysfs_run(struct pmd_worker *w)
{
	struct sysfs_priv *sp = w->si->priv;
	const struct sysfs_opts *o = sp->o;
	uint64_t start = pmd_now_ns(), next = start, stopped = 0;

	for (;;) {
		uint64_t now = pmd_now_ns();

		if (pmd_should_stop(w)) {
			if (!stopped)
				stopped = now;
			if (now - stopped >= o->linger)
				break;
		}
		if (o->crash_after && !w->index && now - start >= o->crash_after)
			crash_now(o->crash);
		if (!write_one(w, sp))
			break;
		pmd_beat(w);
		if (stopped)
			nap(sp->period_ns ? sp->period_ns : LINGER_NAP_NS);
		else if (!pmd_pace(w, &next, sp->o->rate) && !o->linger)
			break;
	}
	return 0;
}

/* ---- can it run here ---------------------------------------------------------- */

static const char *sysfs_supported(struct pmd_sinst *si)
{
	struct sysfs_priv *sp = calloc(1, sizeof(*sp));
	const char *why = NULL;
	unsigned i;

	if (!sp)
		return "out of memory";
	sp->o = si->opts;
	if (access(THP_DIR, F_OK)) {
		why = "kernel without transparent huge pages (no " THP_DIR ")";
		goto out;
	}
	find_knobs(sp);
	if (!sp->nknobs) {
		why = "nothing to churn: every knob group is off or absent";
		goto out;
	}
	for (i = 0; i < sp->nknobs; i++) {
		const char *path = sp->knobs[i].path;
		int err;

		if (access(path, W_OK)) {
			snprintf(si->why, sizeof(si->why), "THP sysfs is not writable here: %.100s: %s",
				 path, strerror(errno));
			why = si->why;
			goto out;
		}
		/* saved now, before any write; this also takes the one-run-at-a-time lock */
		err = pmd_restore_save(path);
		if (err == -EBUSY) {
			why = "another pmdstress run is changing THP sysfs settings (it holds the "
			      "settings lock): run them one at a time";
			goto out;
		}
		if (err) {
			snprintf(si->why, sizeof(si->why), "cannot save %.100s: %s", path, strerror(-err));
			why = si->why;
			goto out;
		}
	}
out:
	free(sp);
	return why;
}

static int sysfs_setup(struct pmd_sinst *si)
{
	const struct sysfs_opts *o = si->opts;
	struct sysfs_priv *sp = calloc(1, sizeof(*sp));

	if (!sp)
		return -ENOMEM;
	sp->o = o;
	sp->period_ns = o->rate ? NSEC * si->nworkers / o->rate : 0;
	find_knobs(sp);
	si->priv = sp;
	return sp->nknobs ? 0 : -ENOENT;
}

static void sysfs_teardown(struct pmd_sinst *si)
{
	free(si->priv);
	si->priv = NULL;
}

const struct pmd_stressor pmd_stressor_sysfs = {
	.abi = PMD_STRESSOR_ABI,
	.name = "sysfs",
	.summary = "THP sysfs churn: enabled, defrag, mTHP sizes, khugepaged pace (restored after)",
	.options = sysfs_options,
	.opts_size = sizeof(struct sysfs_opts),
	.metrics = sysfs_metrics,
	.workers = "1",
	.flags = PMD_SF_ROOT | PMD_SF_OPT_IN,
	.supported = sysfs_supported,
	.setup = sysfs_setup,
	.run = sysfs_run,
	.teardown = sysfs_teardown,
};
