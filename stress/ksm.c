// SPDX-License-Identifier: GPL-2.0
/*
 * ksm: the arena mergeable (MADV_MERGEABLE) with ksmd scanning it fast,
 * and copy-on-write checks of the pages it merged.
 *
 * The races: ksmd merges pages whose contents stayed the same over two of
 * its passes, whatever mapped them: the zero-filled subpages of a settled
 * chunk's huge page (it splits the huge page to merge them, under the
 * storm's faults and the partners' splits and collapses), and the pages of
 * a live round that no store changed between two passes, which the round's
 * next store must then copy (write_protect_page() and replace_page()
 * against the faults: "ksm: fix race between ksmd and page fault" class of
 * bugs, and the THP split inside try_to_merge_one_page()). A merged page is
 * mapped read-only by every page that holds the same contents: a store to
 * one of them must copy it and leave the others as they were.
 *
 * What is checked: every chunk the storm or a partner verifies holds what
 * its stamps say, merged or not. A held settled chunk is made mergeable
 * again (a zap's remap drops the flag), verified whole, and where two of
 * its zero pages are present and shared (pagemap: not exclusively mapped;
 * as root the same PFN), a marker is stored to one and the other must still
 * read zero; the marker is then taken back. A store that landed in the
 * shared page is reported in the verifier's classes.
 *
 * ksmd runs only with /sys/kernel/mm/ksm/run at 1: as root, with --ksm-start
 * on, the partner sets it and pages_to_scan for the run (restored after;
 * a ksmd already running keeps its pace);
 * elsewhere it runs only where ksmd already runs, and is skipped saying so.
 * ksmd merges every process's mergeable memory (QEMU's guests', say), so
 * the default race does not start it (race.ini: start = off).
 */
#include <pmdstress/stressor.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define KSM_DIR "/sys/kernel/mm/ksm/"
#define PM_PRESENT (1ull << 63)
#define PM_EXCLUSIVE (1ull << 56)
#define PM_PFN_MASK ((1ull << 55) - 1)
#define MARKER 0x4b534d2d434f5721ull /* "KSM-COW!": no stamp looks like it */

struct ksm_opts {
	uint64_t rate;
	uint64_t scan;
	bool start;
};

#define O(f) offsetof(struct ksm_opts, f)
static const struct pmd_option ksm_options[] = {
	{ "rate", PMD_OPT_UINT, O(rate), "20", 0, 100000, NULL,
	  "held-chunk checks per second, all workers together (0: as fast as possible)" },
	{ "scan", PMD_OPT_UINT, O(scan), "1000", 0, 100000, NULL,
	  "ksmd's pages_to_scan for the run, where the run starts ksmd (0: leave it as it "
	  "is)" },
	{ "start", PMD_OPT_BOOL, O(start), "on", 0, 0, NULL,
	  "start ksmd for the run where it is not running (root; restored after). It merges "
	  "every process's mergeable memory, not only ours: the default race leaves it off" },
	PMD_OPT_END,
};

enum {
	M_OPS,
	M_PAGES,
	M_SHARED,
	M_COW,
	M_NONE,
	M_MERGING,
	M_EOTHER,
	L_CHECK,
};

static const struct pmd_metric ksm_metrics[] = {
	[M_OPS] = { "ops", PMD_METRIC_COUNT, "held chunks made mergeable again and verified" },
	[M_PAGES] = { "pages", PMD_METRIC_COUNT, "pages of those chunks verified",
		      PMD_BETTER_NONE },
	[M_SHARED] = { "shared_pages", PMD_METRIC_COUNT,
		       "their pages found present and shared (merged, or shared with a fork child)",
		       PMD_BETTER_NONE },
	[M_COW] = { "cow_checks", PMD_METRIC_COUNT,
		    "stores to a shared zero page after which its twin still read zero",
		    PMD_BETTER_NONE },
	[M_NONE] = { "no_chunk", PMD_METRIC_COUNT, "checks that found no chunk to hold",
		     PMD_BETTER_NONE },
	[M_MERGING] = { "merging_pages", PMD_METRIC_COUNT,
			"the most pages of this process ksmd had merged at once (ksm_stat)",
			PMD_BETTER_NONE },
	[M_EOTHER] = { "other_errors", PMD_METRIC_COUNT, "madvise or pagemap errors (reported)",
		       PMD_BETTER_NONE },
	[L_CHECK] = { "check", PMD_METRIC_LATENCY, "one held chunk's check" },
	{ NULL },
};

/* This process's ksm_merging_pages (/proc/self/ksm_stat, 6.1+), or 0. */
static uint32_t merging_pages(void)
{
	char buf[512], *p;
	ssize_t n;
	int fd = open("/proc/self/ksm_stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strstr(buf, "ksm_merging_pages ");
	return p ? (uint32_t)strtoul(p + 18, NULL, 10) : 0;
}

struct ksm_priv {
	int pagemap;
	uint32_t merging_max; /* atomic: highest ksm_merging_pages seen */
};

/* Raise the highest merge count seen; the worker that raises it counts the rise. */
static void note_merging(struct pmd_worker *w, struct ksm_priv *kp)
{
	uint32_t m = merging_pages(), old = __atomic_load_n(&kp->merging_max, __ATOMIC_RELAXED);

	while (m > old && !__atomic_compare_exchange_n(&kp->merging_max, &old, m, false,
						       __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	if (m > old)
		pmd_count(w, M_MERGING, m - old);
}

/* Store a marker to zero page @a, look at zero page @b, take the marker back. */
static void cow_check(struct pmd_worker *w, struct pmd_chunk *c, char *addr, unsigned a,
		      unsigned b)
{
	uint64_t *slot = pmd_page_slot(addr, a, 0);

	pmd_store(slot, MARKER);
	pmd_verify_pages(w, c, addr, b, b + 1);
	pmd_store(slot, 0);
	pmd_count(w, M_COW, 1);
}

/* Held chunk @c at @addr, no section entered: the system calls outside, the checks inside. */
static void ksm_held(struct pmd_worker *w, struct ksm_priv *kp, struct pmd_chunk *c, char *addr)
{
	uint64_t pm[PMD_CHUNK_PAGES], pfn_a = 0;
	unsigned p, a = PMD_CHUNK_PAGES, b = PMD_CHUNK_PAGES, shared = 0;
	off_t off = (off_t)((uintptr_t)addr / PMD_PAGE_SIZE * sizeof(uint64_t));

	/* a zap's fresh mapping over the chunk dropped VM_MERGEABLE: give it back */
	if (madvise(addr, PMD_CHUNK_SIZE, MADV_MERGEABLE)) {
		pmd_count(w, M_EOTHER, 1);
		if (pmd_counter_read(&w->stats->counter[M_EOTHER]) == 1)
			pmd_worker_error(w, -errno, "ksm: MADV_MERGEABLE of chunk %u", c->index);
		return;
	}
	if (w->si->cfg->verify && pmd_chunk_enter(c)) {
		pmd_verify_pages(w, c, addr, 0, PMD_CHUNK_PAGES);
		pmd_count(w, M_PAGES, PMD_CHUNK_PAGES);
		pmd_chunk_exit(c);
	}
	if (pread(kp->pagemap, pm, sizeof(pm), off) != (ssize_t)sizeof(pm))
		return;
	for (p = 0; p < PMD_CHUNK_PAGES; p++) {
		if (!(pm[p] & PM_PRESENT) || (pm[p] & PM_EXCLUSIVE))
			continue;
		shared++;
		if (!pmd_mask_test(c->zero_pages, p) || pmd_mask_test(c->reported_pages, p))
			continue;
		/* a twin: the same page where PFNs show (root), any shared zero page where not */
		if (a == PMD_CHUNK_PAGES) {
			a = p;
			pfn_a = pm[p] & PM_PFN_MASK;
		} else if (b == PMD_CHUNK_PAGES || (pfn_a && (pm[p] & PM_PFN_MASK) == pfn_a &&
						    (pm[b] & PM_PFN_MASK) != pfn_a)) {
			b = p;
		}
	}
	pmd_count(w, M_SHARED, shared);
	if (b < PMD_CHUNK_PAGES && w->si->cfg->verify && pmd_chunk_enter(c)) {
		cow_check(w, c, addr, a, b);
		pmd_chunk_exit(c);
	}
}

static int ksm_run(struct pmd_worker *w)
{
	const struct ksm_opts *o = w->si->opts;
	struct ksm_priv *kp = w->si->priv;
	struct pmd_arena *a = w->si->arena;
	uint64_t next = pmd_now_ns();

	while (!pmd_should_stop(w)) {
		struct pmd_chunk *c;
		char *addr;

		note_merging(w, kp);
		c = pmd_arena_hold_settled(a, (unsigned)pmd_rand_below(w, a->nchunks), a->nchunks);
		if (!c) {
			pmd_count(w, M_NONE, 1);
		} else {
			uint64_t t0 = pmd_now_ns();

			if ((addr = pmd_chunk_held_addr(c)))
				ksm_held(w, kp, c, addr);
			pmd_chunk_release(c, PMD_CHUNK_IDLE);
			pmd_count(w, M_OPS, 1);
			pmd_latency(w, L_CHECK, pmd_now_ns() - t0);
		}
		pmd_beat(w);
		if (!pmd_pace(w, &next, o->rate))
			break;
	}
	return 0;
}

/* The first number in @name under KSM_DIR, or -1. */
static long read_knob(const char *name)
{
	char path[128], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), KSM_DIR "%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

static const char *ksm_supported(struct pmd_sinst *si)
{
	const struct ksm_opts *o = si->opts;
	long run = read_knob("run");

	if (run < 0)
		return "kernel without KSM (no " KSM_DIR "run)";
	if (run == 1)
		return NULL;
	if (!o->start)
		return "ksmd is not running and --ksm-start is off (starting it merges the whole "
		       "machine's mergeable memory: --ksm-start on, as root, or --config ksm)";
	if (geteuid() != 0)
		return "ksmd is not running (" KSM_DIR "run is not 1) and only root may start it";
	return NULL;
}

static int ksm_setup(struct pmd_sinst *si)
{
	const struct ksm_opts *o = si->opts;
	struct pmd_arena *a = si->arena;
	struct ksm_priv *kp = calloc(1, sizeof(*kp));
	char v[32];
	int err;

	if (!kp)
		return -ENOMEM;
	si->priv = kp;
	kp->pagemap = -1;
	kp->pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (kp->pagemap < 0)
		return -errno;
	if (madvise(a->base, a->size, MADV_MERGEABLE))
		return -errno;
	if (read_knob("run") == 1)
		return 0; /* ksmd is someone else's: its pace stays theirs */
	err = pmd_restore_write(KSM_DIR "run", "1");
	if (err)
		return err;
	if (o->scan) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)o->scan);
		err = pmd_restore_write(KSM_DIR "pages_to_scan", v);
		if (err)
			return err;
	}
	return 0;
}

static void ksm_teardown(struct pmd_sinst *si)
{
	struct ksm_priv *kp = si->priv;

	if (!kp)
		return;
	if (kp->pagemap >= 0)
		close(kp->pagemap);
	free(kp);
	si->priv = NULL;
}

const struct pmd_stressor pmd_stressor_ksm = {
	.abi = PMD_STRESSOR_ABI,
	.name = "ksm",
	.summary = "KSM: ksmd merging the arena's pages under the storm; copy-on-write of merged "
		   "pages checked",
	.options = ksm_options,
	.opts_size = sizeof(struct ksm_opts),
	.metrics = ksm_metrics,
	.workers = "1",
	.supported = ksm_supported,
	.setup = ksm_setup,
	.run = ksm_run,
	.teardown = ksm_teardown,
};
