// SPDX-License-Identifier: GPL-2.0
/*
 * collapse: MADV_COLLAPSE under the first-touch storm.
 *
 * The race: MADV_COLLAPSE (Linux 6.1; the synchronous form of khugepaged's
 * work) copies a PTE-mapped 2 MiB range into a fresh huge page and replaces
 * the page table with one huge PMD, while the storm's workers are still
 * faulting and writing pages of that range, the verifier is reading it and
 * the storm is about to zap it. collapse_huge_page() must lock out the
 * faults (mmap lock for writing, the VMA lock), clear the PMD, copy, and
 * install the huge PMD without losing a write that raced the copy; that is
 * the "khugepaged/MADV_COLLAPSE vs fault" family of lost writes, stale data
 * after a zap and "bad pmd" splats.
 *
 * A collapse does not change what a chunk must hold, so it takes no
 * ownership and hits any chunk, a round under way included. It picks chunks
 * where a collapse can happen: some pages present but not one PMD-mapped
 * huge page (PTE-mapped, half populated by a round, or a split huge page).
 * MADV_COLLAPSE ignores the THP sysfs settings but respects VM_NOHUGEPAGE
 * (EINVAL), so a chunk that answered EINVAL is left alone until its
 * generation changes or a moment has passed: in --thp nohuge every chunk
 * does, in --thp toggle the NOHUGEPAGE rounds' chunks do.
 *
 * How to tell it fired: "collapsed" counts PTE-mapped or half-populated
 * chunks turned into huge pages, "raced" those whose fault round was under
 * way, "thp_after" those probed PMD-mapped right after; thp_collapse_alloc
 * in the vmstat deltas counts the huge pages allocated for them; with
 * --thp inherit and THP "madvise" or "never" system-wide the storm itself
 * faults only small pages, so every THP-mapped chunk in its coverage is a
 * collapse. A collapse that lost a write shows as LOST_WRITE or STALE.
 * No --collapse-align: every call covers whole 2 MiB chunks, no subrange.
 */
#include <pmdstress/stressor.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 /* Linux 6.1 */
#endif

#define EINVAL_BACKOFF_NS (100ull * 1000000)  /* leave an EINVAL chunk alone this long */
#define NO_TARGET_NAP_NS (1ull * 1000000)     /* nothing to collapse: look again soon */
#define PICK_TRIES 8			      /* chunks probed per look */

enum { TARGET_PTE, TARGET_ANY };

struct collapse_opts {
	uint64_t rate;
	unsigned target;
	uint64_t chunks;
};

static const char *const targets[] = { "pte", "any", NULL };

#define O(f) offsetof(struct collapse_opts, f)
static const struct pmd_option collapse_options[] = {
	{ "rate", PMD_OPT_UINT, O(rate), "100", 0, 1000000, NULL,
	  "MADV_COLLAPSE calls per second, all workers together (0: as fast as possible)" },
	{ "target", PMD_OPT_ENUM, O(target), "pte", 0, 0, targets,
	  "pte: only chunks with pages present that are not one huge page (where a "
	  "collapse can happen); any: any chunk, empty and huge ones too" },
	{ "chunks", PMD_OPT_UINT, O(chunks), "1", 1, 512, NULL,
	  "chunks one call covers (neighbours at their home addresses)" },
	PMD_OPT_END,
};

enum {
	M_OPS,
	M_COLLAPSED,
	M_ALREADY,
	M_RACED,
	M_THP_AFTER,
	M_EAGAIN,
	M_ENOMEM,
	M_EINVAL,
	M_EBUSY,
	M_EOTHER,
	M_NO_TARGET,
	M_LAT_CALL,
	M_LAT_OK,
};

static const struct pmd_metric collapse_metrics[] = {
	[M_OPS] = { "ops", PMD_METRIC_COUNT, "MADV_COLLAPSE calls" },
	[M_COLLAPSED] = { "collapsed", PMD_METRIC_COUNT,
			  "calls that made a PTE-mapped or half-populated chunk one huge page",
			  PMD_BETTER_NONE },
	[M_ALREADY] = { "already", PMD_METRIC_COUNT,
			"successful calls on a chunk that was PMD-mapped already", PMD_BETTER_NONE },
	[M_RACED] = { "raced", PMD_METRIC_COUNT,
		      "collapses of a chunk whose fault round was under way", PMD_BETTER_NONE },
	[M_THP_AFTER] = { "thp_after", PMD_METRIC_COUNT,
			  "collapses whose chunk probed PMD-mapped right after", PMD_BETTER_NONE },
	[M_EAGAIN] = { "eagain", PMD_METRIC_COUNT, "EAGAIN: a page was busy, try again",
		       PMD_BETTER_NONE },
	[M_ENOMEM] = { "enomem", PMD_METRIC_COUNT, "ENOMEM: no huge page could be allocated",
		       PMD_BETTER_NONE },
	[M_EINVAL] = { "einval", PMD_METRIC_COUNT,
		       "EINVAL: not collapsible (VM_NOHUGEPAGE, nothing present, ...)",
		       PMD_BETTER_NONE },
	[M_EBUSY] = { "ebusy", PMD_METRIC_COUNT, "EBUSY: the memory cgroup refused the charge",
		      PMD_BETTER_NONE },
	[M_EOTHER] = { "other_errors", PMD_METRIC_COUNT, "any other errno (reported)",
		       PMD_BETTER_NONE },
	[M_NO_TARGET] = { "no_target", PMD_METRIC_COUNT,
			  "looks for a collapsible chunk that found none", PMD_BETTER_NONE },
	[M_LAT_CALL] = { "call", PMD_METRIC_LATENCY, "one MADV_COLLAPSE call, any outcome" },
	[M_LAT_OK] = { "collapse", PMD_METRIC_LATENCY, "a call that collapsed a chunk" },
	{ NULL },
};

/* When a chunk answered EINVAL, and at which generation. */
struct collapse_backoff {
	uint32_t gen;	/* atomic */
	uint64_t until; /* atomic: pmd_now_ns() before which to leave it alone */
};

struct collapse_priv {
	const struct collapse_opts *o;
	struct collapse_backoff *backoff; /* one per chunk */
};

/* ---- choosing a chunk ------------------------------------------------------ */

static bool backed_off(const struct collapse_backoff *b, const struct pmd_chunk *c, uint64_t now)
{
	return __atomic_load_n(&b->until, __ATOMIC_RELAXED) > now &&
	       __atomic_load_n(&b->gen, __ATOMIC_RELAXED) ==
		       __atomic_load_n(&c->gen, __ATOMIC_RELAXED);
}

static void back_off(struct collapse_backoff *b, uint32_t gen, uint64_t now)
{
	__atomic_store_n(&b->gen, gen, __ATOMIC_RELAXED);
	__atomic_store_n(&b->until, now + EINVAL_BACKOFF_NS, __ATOMIC_RELAXED);
}

static bool collapsible(enum pmd_thp_state s)
{
	/* UNKNOWN: the probe cannot see (no pagemap); let the kernel say */
	return s == PMD_THPS_PTE || s == PMD_THPS_MIXED || s == PMD_THPS_UNKNOWN;
}

static struct pmd_chunk *pick_chunk(struct pmd_worker *w, struct collapse_priv *cp,
				    enum pmd_thp_state *was)
{
	struct pmd_arena *a = w->si->arena;
	uint64_t now = pmd_now_ns();
	unsigned i;

	for (i = 0; i < PICK_TRIES; i++) {
		struct pmd_chunk *c = &a->chunks[pmd_rand_below(w, a->nchunks)];

		if (pmd_chunk_retired(c) || backed_off(&cp->backoff[c->index], c, now))
			continue;
		*was = pmd_thp_probe(w->si->run, c, NULL);
		if (cp->o->target == TARGET_ANY || collapsible(*was))
			return c;
	}
	return NULL;
}

/*
 * Where @first and up to @want - 1 neighbours still at their home addresses
 * start, or NULL if @first is retired. The read sections only make the
 * address consistent; the call itself runs outside them: a collapse cannot
 * change what any range holds, and a long one (compaction) inside a read
 * section would hold up every retire in the process (synchronize_rcu()).
 */
static char *range_at(struct pmd_arena *a, struct pmd_chunk *first, unsigned want, unsigned *n)
{
	char *addr = pmd_chunk_enter(first);

	*n = 0;
	if (!addr)
		return NULL;
	pmd_chunk_exit(first);
	for (*n = 1; *n < want && first->index + *n < a->nchunks; (*n)++) {
		struct pmd_chunk *c = &a->chunks[first->index + *n];
		char *next = pmd_chunk_enter(c);

		if (!next)
			break;
		pmd_chunk_exit(c);
		if (next != addr + (size_t)*n * PMD_CHUNK_SIZE)
			break;
	}
	return addr;
}

/* ---- one call ----------------------------------------------------------------- */

static void count_outcome(struct pmd_worker *w, struct collapse_priv *cp, struct pmd_chunk *c,
			  int err, uint32_t gen, bool racing, enum pmd_thp_state was)
{
	switch (err) {
	case 0:
		if (was == PMD_THPS_THP) {
			pmd_count(w, M_ALREADY, 1);
			break;
		}
		pmd_count(w, M_COLLAPSED, 1);
		if (racing)
			pmd_count(w, M_RACED, 1);
		if (pmd_thp_probe(w->si->run, c, NULL) == PMD_THPS_THP)
			pmd_count(w, M_THP_AFTER, 1);
		break;
	case EAGAIN:
		pmd_count(w, M_EAGAIN, 1);
		break;
	case ENOMEM:
		pmd_count(w, M_ENOMEM, 1);
		break;
	case EBUSY:
		pmd_count(w, M_EBUSY, 1);
		break;
	case EINVAL:
		pmd_count(w, M_EINVAL, 1);
		back_off(&cp->backoff[c->index], gen, pmd_now_ns());
		break;
	default:
		/* not an outcome MADV_COLLAPSE documents: say so, once per worker */
		if (!pmd_counter_read(&w->stats->counter[M_EOTHER]))
			pmd_worker_error(w, -err, "collapse: MADV_COLLAPSE of chunk %u", c->index);
		pmd_count(w, M_EOTHER, 1);
		break;
	}
}

static bool collapse_once(struct pmd_worker *w, struct collapse_priv *cp)
{
	struct pmd_arena *a = w->si->arena;
	enum pmd_thp_state was = PMD_THPS_UNKNOWN;
	struct pmd_chunk *c = pick_chunk(w, cp, &was);
	uint64_t t0, dt;
	unsigned n, i;
	uint32_t gen;
	bool racing;
	char *addr;
	int err;

	if (!c || !(addr = range_at(a, c, (unsigned)cp->o->chunks, &n))) {
		pmd_count(w, M_NO_TARGET, 1);
		return false;
	}
	racing = pmd_chunk_state(c) == PMD_CHUNK_ROUND;
	gen = __atomic_load_n(&c->gen, __ATOMIC_RELAXED);
	t0 = pmd_now_ns();
	err = madvise(addr, (size_t)n * PMD_CHUNK_SIZE, MADV_COLLAPSE) ? errno : 0;
	dt = pmd_now_ns() - t0;
	for (i = 0; i < n; i++)
		pmd_chunk_log(&a->chunks[c->index + i], t0, PMD_OP_COLLAPSE, w->id, (uint32_t)err);
	pmd_count(w, M_OPS, 1);
	pmd_latency(w, M_LAT_CALL, dt);
	if (!err && was != PMD_THPS_THP)
		pmd_latency(w, M_LAT_OK, dt);
	count_outcome(w, cp, c, err, gen, racing, was);
	return true;
}


static int collapse_run(struct pmd_worker *w)
{
	struct collapse_priv *cp = w->si->priv;
	uint64_t next = pmd_now_ns();

	while (!pmd_should_stop(w)) {
		bool called = collapse_once(w, cp);

		pmd_beat(w);
		/* unpaced and nothing to collapse: do not spin on probes */
		if (!called && !cp->o->rate && !pmd_sleep(w, NO_TARGET_NAP_NS))
			break;
		if (!pmd_pace(w, &next, cp->o->rate))
			break;
	}
	return 0;
}

/* ---- can it run here ---------------------------------------------------------- */

/* MADV_COLLAPSE one touched page of a mapping of our own. Returns 0 or an errno. */
static int probe_collapse(void)
{
	size_t len = 2 * PMD_CHUNK_SIZE;
	char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p;
	int err;

	if (raw == MAP_FAILED)
		return errno;
	p = (char *)(((uintptr_t)raw + PMD_CHUNK_SIZE - 1) & ~(PMD_CHUNK_SIZE - 1));
	/* a collapse needs one page present */
	pmd_store((uint64_t *)p, 1);
	err = madvise(p, PMD_CHUNK_SIZE, MADV_COLLAPSE) ? errno : 0;
	munmap(raw, len);
	return err;
}

static const char *collapse_supported(struct pmd_sinst *si)
{
	int err = probe_collapse();

	if (!err || err == EAGAIN || err == ENOMEM || err == EBUSY)
		return NULL; /* the kernel knows it; this time it was busy */
	if (err != EINVAL)
		snprintf(si->why, sizeof(si->why), "MADV_COLLAPSE probe failed: %s", strerror(err));
	else if (prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) > 0)
		snprintf(si->why, sizeof(si->why),
			 "THP is disabled for this process (prctl PR_SET_THP_DISABLE, inherited "
			 "from the parent): MADV_COLLAPSE refuses");
	else if (access("/sys/kernel/mm/transparent_hugepage", F_OK))
		snprintf(si->why, sizeof(si->why),
			 "kernel without transparent huge pages (no "
			 "/sys/kernel/mm/transparent_hugepage)");
	else
		snprintf(si->why, sizeof(si->why),
			 "kernel lacks MADV_COLLAPSE (EINVAL from a probe; it needs Linux 6.1+)");
	return si->why;
}

static int collapse_setup(struct pmd_sinst *si)
{
	const struct collapse_opts *o = si->opts;
	struct collapse_priv *cp = calloc(1, sizeof(*cp));

	if (!cp)
		return -ENOMEM;
	cp->o = o;
	cp->backoff = calloc(si->arena->nchunks, sizeof(*cp->backoff));
	if (!cp->backoff) {
		free(cp);
		return -ENOMEM;
	}
	si->priv = cp;
	return 0;
}

static void collapse_teardown(struct pmd_sinst *si)
{
	struct collapse_priv *cp = si->priv;

	if (!cp)
		return;
	free(cp->backoff);
	free(cp);
	si->priv = NULL;
}

const struct pmd_stressor pmd_stressor_collapse = {
	.abi = PMD_STRESSOR_ABI,
	.name = "collapse",
	.summary = "MADV_COLLAPSE of PTE-mapped and half-populated chunks while they fault",
	.options = collapse_options,
	.opts_size = sizeof(struct collapse_opts),
	.metrics = collapse_metrics,
	.workers = "1",
	.supported = collapse_supported,
	.setup = collapse_setup,
	.run = collapse_run,
	.teardown = collapse_teardown,
};
