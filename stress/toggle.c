// SPDX-License-Identifier: GPL-2.0
/*
 * toggle: MADV_HUGEPAGE / MADV_NOHUGEPAGE flips while the storm faults.
 *
 * The race: madvise(MADV_[NO]HUGEPAGE) rewrites vm_flags under the mmap
 * write lock. On a range that does not cover whole VMAs it first splits
 * them (__split_vma(), which must split a huge PMD straddling a new
 * boundary that is not 2 MiB aligned: vma_adjust_trans_huge()), and when
 * the flags match again it merges them back. Meanwhile the storm's threads
 * fault the same chunks under the per-VMA lock, and the THP fault path
 * decides from vm_flags and the VMA's extent whether a huge page may be
 * installed at all: a flip, split or merge landing between that decision
 * and the PMD install is the window (the same family as CVE-2012-1179,
 * where a PMD changed under a fault holding only the read side). Flips of
 * exact 2 MiB chunks change only what the next first touch gets; unaligned
 * flips (start not 2 MiB aligned, often straddling a chunk boundary) split
 * and merge VMAs across the chunks. Optionally PR_SET_THP_DISABLE is
 * flipped too, the process-wide switch the same fault path reads.
 *
 * Each worker alternates: flip a range away from the run's advice (split),
 * then put the same range back (merge). Contents never change, so no chunk
 * is owned; the storm's verifier is the check.
 *
 * How to tell it fired: vma_splits / vma_merges count the VMAs a sampled
 * flip added to or removed from the arena (/proc/self/maps read before and
 * after it, every maps-interval); thp_split_pmd rises in the vmstat block
 * when an unaligned split cut a mapped THP; the storm's thp_coverage turns
 * mixed. A race handled wrong shows as LOST_WRITE or FOREIGN from the
 * verifier, or as a "bad pmd" / "BUG: Bad page map" splat in the kernel log.
 */
#include <pmdstress/stressor.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>

enum { ALIGN_MIXED, ALIGN_CHUNK, ALIGN_UNALIGNED };

struct toggle_opts {
	uint64_t rate;
	unsigned align;
	uint64_t range;
	bool prctl;
	uint64_t maps_interval;
};

static const char *const aligns[] = { "mixed", "chunk", "unaligned", NULL };

#define O(f) offsetof(struct toggle_opts, f)
static const struct pmd_option toggle_options[] = {
	{ "rate", PMD_OPT_UINT, O(rate), "1000", 0, 10000000, NULL,
	  "madvise calls per second, all workers together (0: as fast as possible)" },
	{ "align", PMD_OPT_ENUM, O(align), "mixed", 0, 0, aligns,
	  "chunk: flip exact 2 MiB chunks; unaligned: ranges whose start is not 2 MiB "
	  "aligned, mostly straddling a chunk boundary (VMA split and merge); mixed: both" },
	{ "range", PMD_OPT_SIZE, O(range), "4M", 4096, 1ull << 30, NULL,
	  "longest unaligned range (whole 4 KiB pages, at most the arena)" },
	{ "prctl", PMD_OPT_BOOL, O(prctl), "off", 0, 0, NULL,
	  "also flip PR_SET_THP_DISABLE on and off (process-wide; restored at the end)" },
	{ "maps-interval", PMD_OPT_DURATION, O(maps_interval), "100ms", 0, 3600000000000ull, NULL,
	  "how often worker 0 counts the arena's VMAs around one flip (0: never)" },
	PMD_OPT_END,
};

enum {
	M_OPS,
	M_HUGE,
	M_NOHUGE,
	M_UNALIGNED,
	M_PRCTL,
	M_SPLITS,
	M_MERGES,
	M_SAMPLES,
	M_ENOMEM,
	L_CHUNK,
	L_UNALIGNED,
	L_PRCTL,
	L_MAPS,
};

static const struct pmd_metric toggle_metrics[] = {
	[M_OPS] = { "ops", PMD_METRIC_COUNT, "madvise and prctl calls" },
	[M_HUGE] = { "hugepage", PMD_METRIC_COUNT, "MADV_HUGEPAGE calls", PMD_BETTER_NONE },
	[M_NOHUGE] = { "nohugepage", PMD_METRIC_COUNT, "MADV_NOHUGEPAGE calls", PMD_BETTER_NONE },
	[M_UNALIGNED] = { "unaligned", PMD_METRIC_COUNT,
			  "calls on ranges whose start is not 2 MiB aligned", PMD_BETTER_NONE },
	[M_PRCTL] = { "prctl", PMD_METRIC_COUNT, "PR_SET_THP_DISABLE flips", PMD_BETTER_NONE },
	[M_SPLITS] = { "vma_splits", PMD_METRIC_COUNT,
		       "arena VMAs a sampled call added (maps read before and after it)",
		       PMD_BETTER_NONE },
	[M_MERGES] = { "vma_merges", PMD_METRIC_COUNT, "arena VMAs a sampled call removed",
		       PMD_BETTER_NONE },
	[M_SAMPLES] = { "vma_samples", PMD_METRIC_COUNT, "calls sampled for VMA counts",
			PMD_BETTER_NONE },
	[M_ENOMEM] = { "enomem", PMD_METRIC_COUNT,
		       "calls that met a hole a partner left open for a moment, a seed "
		       "round's memcg window, or an unaligned range's ENOMEM (ENOMEM)",
		       PMD_BETTER_NONE },
	[L_CHUNK] = { "chunk_call", PMD_METRIC_LATENCY, "one madvise of an exact 2 MiB chunk" },
	[L_UNALIGNED] = { "unaligned_call", PMD_METRIC_LATENCY, "one madvise of an unaligned range" },
	[L_PRCTL] = { "prctl_call", PMD_METRIC_LATENCY, "one PR_SET_THP_DISABLE call" },
	[L_MAPS] = { "maps_read", PMD_METRIC_LATENCY, "counting the arena's VMAs in /proc/self/maps" },
	{ NULL },
};

struct toggle_priv {
	bool prctl_ok; /* PR_GET/SET_THP_DISABLE work here */
	int prctl_initial;
};

/* One worker's flip waiting to be put back, and its pacing. */
struct toggle_state {
	bool pending;
	struct pmd_chunk *chunk; /* an exact chunk flip: follows the chunk if it moves */
	char *addr;		 /* else an unaligned range of the home arena */
	size_t len;
	bool thp_off; /* this worker last set PR_SET_THP_DISABLE */
	uint64_t next_op, next_sample;
};


/* VMAs overlapping the arena's home range, from /proc/self/maps. */
static int arena_vmas(const struct pmd_arena *a)
{
	uintptr_t lo = (uintptr_t)a->base, hi = lo + a->size;
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;

		if (sscanf(line, "%lx-%lx", &start, &end) == 2 && start < hi && end > lo)
			n++;
	}
	fclose(f);
	return n;
}

/* The advice the run gives the arena: flips go the other way. */
static bool run_is_huge(const struct pmd_arena *a)
{
	return a->thp != PMD_THP_NOHUGE;
}

/* Unaligned ranges: note the flip in the ring of every chunk they touch. */
static void log_range(struct pmd_worker *w, char *addr, size_t len, bool huge)
{
	struct pmd_arena *a = w->si->arena;
	size_t off = (size_t)(addr - a->base), end = off + len, c;

	for (c = off / PMD_CHUNK_SIZE; c * PMD_CHUNK_SIZE < end && c < a->nchunks; c++) {
		size_t first = off > c * PMD_CHUNK_SIZE ? off - c * PMD_CHUNK_SIZE : 0;

		pmd_chunk_log(&a->chunks[c], pmd_now_ns(), huge ? PMD_OP_MADV_HUGE : PMD_OP_MADV_NOHUGE,
			      w->id, (uint32_t)(first >> PMD_PAGE_SHIFT));
	}
}

/*
 * An unaligned range of the home arena: whole pages, its start never on a
 * 2 MiB boundary, and (when there are two chunks or more) straddling one.
 */
static void pick_unaligned(struct pmd_worker *w, const struct toggle_opts *o, size_t *first,
			   size_t *npages)
{
	const struct pmd_arena *a = w->si->arena;
	size_t total = a->size >> PMD_PAGE_SHIFT, maxp = o->range >> PMD_PAGE_SHIFT, n, start;

	if (maxp > total - 1)
		maxp = total - 1;
	n = 1 + (size_t)pmd_rand_below(w, maxp);
	if (a->nchunks > 1 && n >= 2) {
		size_t b = (1 + (size_t)pmd_rand_below(w, a->nchunks - 1)) * PMD_CHUNK_PAGES;
		size_t before = 1 + (size_t)pmd_rand_below(w, n - 1);

		if (before % PMD_CHUNK_PAGES == 0)
			before--;
		if (before > b - 1)
			before = b - 1;
		start = b - before;
	} else {
		start = 1 + (size_t)pmd_rand_below(w, total - n);
		if (start % PMD_CHUNK_PAGES == 0)
			start++;
	}
	if (start + n > total)
		n = total - start;
	*first = start;
	*npages = n;
}

/* Apply @huge to the pending range (an exact chunk where it is now, or an unaligned range). */
static int advise(struct pmd_worker *w, const struct toggle_state *st, bool huge)
{
	char *addr = st->chunk ? (char *)__atomic_load_n(&st->chunk->addr, __ATOMIC_ACQUIRE)
			       : st->addr;
	size_t len = st->chunk ? PMD_CHUNK_SIZE : st->len;
	uint64_t t = pmd_now_ns();
	int rc = madvise(addr, len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) ? -errno : 0;

	pmd_latency(w, st->chunk ? L_CHUNK : L_UNALIGNED, pmd_now_ns() - t);
	/*
	 * ENOMEM is a hole in the range only where a partner can leave one
	 * (split's plain mremap: arena.h, holes); anywhere else the range is
	 * mapped whole, and an ENOMEM is a VMA split that failed: a limit the
	 * run names (the VMA count, the memory cgroup), or the kernel's error,
	 * unless the seed race's memcg way had its own limit set meanwhile.
	 */
	/*
	 * An unaligned range across chunks that partners remap meanwhile got
	 * ENOMEM in TCG guests (6.1 and 6.12) with every limit far, cause not
	 * yet known: counted (enomem), not the end of the stressor.
	 */
	if (rc == -ENOMEM &&
	    (__atomic_load_n(&w->si->arena->holes, __ATOMIC_ACQUIRE) || !st->chunk ||
	     pmd_enomem_own(w, rc))) {
		pmd_count(w, M_ENOMEM, 1);
		rc = 0;
	}
	if (rc) {
		if (st->chunk)
			pmd_worker_error(w, rc, "toggle: madvise(%s) of chunk %u",
					 huge ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE", st->chunk->index);
		else
			pmd_worker_error(w, rc, "toggle: madvise(%s) of %p+%#zx (chunks %zu..%zu)",
					 huge ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE", (void *)addr, len,
					 (size_t)(addr - w->si->arena->base) / PMD_CHUNK_SIZE,
					 (size_t)(addr + len - 1 - w->si->arena->base) / PMD_CHUNK_SIZE);
		return -ECANCELED; /* said */
	}
	pmd_count(w, M_OPS, 1);
	pmd_count(w, huge ? M_HUGE : M_NOHUGE, 1);
	if (st->chunk) {
		pmd_chunk_log(st->chunk, t, huge ? PMD_OP_MADV_HUGE : PMD_OP_MADV_NOHUGE, w->id, 0);
	} else {
		pmd_count(w, M_UNALIGNED, 1);
		log_range(w, addr, len, huge);
	}
	return 0;
}

static int flip_thp_disable(struct pmd_worker *w, struct toggle_state *st)
{
	uint64_t t = pmd_now_ns();

	if (prctl(PR_SET_THP_DISABLE, st->thp_off ? 0 : 1, 0, 0, 0)) {
		pmd_worker_error(w, -errno, "toggle: prctl(PR_SET_THP_DISABLE, %d)",
				 st->thp_off ? 0 : 1);
		return -ECANCELED; /* said */
	}
	pmd_latency(w, L_PRCTL, pmd_now_ns() - t);
	st->thp_off = !st->thp_off;
	pmd_count(w, M_OPS, 1);
	pmd_count(w, M_PRCTL, 1);
	return 0;
}

/* One call: put the pending flip back, or make a new one. */
static int toggle_one(struct pmd_worker *w, struct toggle_state *st)
{
	const struct toggle_opts *o = w->si->opts;
	const struct toggle_priv *tp = w->si->priv;
	struct pmd_arena *a = w->si->arena;
	bool huge = run_is_huge(a);

	if (o->prctl && tp->prctl_ok && pmd_rand_below(w, 16) == 0)
		return flip_thp_disable(w, st);
	if (st->pending) {
		st->pending = false;
		return advise(w, st, huge);
	}
	if (o->align == ALIGN_CHUNK || (o->align == ALIGN_MIXED && pmd_rand_below(w, 2))) {
		st->chunk = &a->chunks[pmd_rand_below(w, a->nchunks)];
	} else {
		size_t first, n;

		pick_unaligned(w, o, &first, &n);
		st->chunk = NULL;
		st->addr = a->base + (first << PMD_PAGE_SHIFT);
		st->len = n << PMD_PAGE_SHIFT;
	}
	st->pending = true;
	return advise(w, st, !huge);
}

/* Worker 0, now and then: the VMAs one call added or removed. */
static int sampled_one(struct pmd_worker *w, struct toggle_state *st)
{
	const struct pmd_arena *a = w->si->arena;
	uint64_t t = pmd_now_ns();
	int before = arena_vmas(a), after, rc;

	pmd_latency(w, L_MAPS, pmd_now_ns() - t);
	rc = toggle_one(w, st);
	after = arena_vmas(a);
	if (rc || before < 0 || after < 0)
		return rc;
	pmd_count(w, M_SAMPLES, 1);
	if (after > before)
		pmd_count(w, M_SPLITS, (uint64_t)(after - before));
	else
		pmd_count(w, M_MERGES, (uint64_t)(before - after));
	return 0;
}

static int toggle_run(struct pmd_worker *w)
{
	const struct toggle_opts *o = w->si->opts;
	struct toggle_state st = { .next_op = pmd_now_ns() };
	int rc = 0;

	st.next_sample = st.next_op + o->maps_interval;
	do {
		if (w->index == 0 && o->maps_interval && pmd_now_ns() >= st.next_sample) {
			rc = sampled_one(w, &st);
			st.next_sample = pmd_now_ns() + o->maps_interval;
		} else {
			rc = toggle_one(w, &st);
		}
		if (rc)
			break;
		pmd_beat(w);
	} while (pmd_pace(w, &st.next_op, o->rate));
	/* leave the arena with the run's advice */
	if (!rc && st.pending)
		(void)advise(w, &st, run_is_huge(w->si->arena));
	return 0; /* an error was said where it happened */
}

static const char *toggle_supported(struct pmd_sinst *si)
{
	if (si->arena->thp == PMD_THP_INHERIT)
		return "--thp inherit leaves the arena's advice alone, and toggle would change "
		       "it; run with --thp madvise, nohuge or toggle";
	return NULL;
}

static int toggle_setup(struct pmd_sinst *si)
{
	const struct toggle_opts *o = si->opts;
	struct toggle_priv *tp = calloc(1, sizeof(*tp));

	if (!tp)
		return -ENOMEM;
	tp->prctl_initial = prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0);
	tp->prctl_ok = tp->prctl_initial >= 0;
	if (o->prctl && !tp->prctl_ok)
		fprintf(stderr, "pmdstress: toggle: PR_GET_THP_DISABLE failed (%s): prctl flips "
				"are skipped\n", strerror(errno));
	si->priv = tp;
	return 0;
}

static void toggle_teardown(struct pmd_sinst *si)
{
	const struct toggle_opts *o = si->opts;
	struct toggle_priv *tp = si->priv;

	if (!tp)
		return;
	if (o->prctl && tp->prctl_ok)
		prctl(PR_SET_THP_DISABLE, tp->prctl_initial ? 1 : 0, 0, 0, 0);
	free(tp);
	si->priv = NULL;
}

const struct pmd_stressor pmd_stressor_toggle = {
	.abi = PMD_STRESSOR_ABI,
	.name = "toggle",
	.summary = "MADV_HUGEPAGE/NOHUGEPAGE flips on exact and unaligned ranges: VMA split and merge",
	.options = toggle_options,
	.opts_size = sizeof(struct toggle_opts),
	.metrics = toggle_metrics,
	.workers = "1",
	.supported = toggle_supported,
	.setup = toggle_setup,
	.run = toggle_run,
	.teardown = toggle_teardown,
};
