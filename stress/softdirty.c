// SPDX-License-Identifier: GPL-2.0
/*
 * softdirty: soft-dirty clearing (/proc/self/clear_refs "4") under the
 * first-touch storm, and the check that every page written after a clear
 * reads soft-dirty again.
 *
 * The race: clearing soft-dirty write-protects every PTE and huge PMD of
 * the process (clear_soft_dirty(), clear_soft_dirty_pmd(): pmdp_invalidate,
 * wrprotect, flush) and clears VM_SOFTDIRTY on every VMA, which write-locks
 * each VMA against the per-VMA-lock faults of 6.4+. So it races the storm's
 * first touches on pmd_none PMDs (a huge PMD installed during the walk),
 * and after it every store to a settled page takes a write-protect fault
 * (do_huge_pmd_wp_page(), wp_page_reuse()) that must mark the page dirty
 * again. A path that installs or rebuilds a mapping without the soft-dirty
 * bit (a THP fault, the huge-zero-page COW, a split, a collapse, a move)
 * loses it, and CRIU-style incremental dumps then miss written memory:
 * upstream fixed such losses in THP migration, mremap and split.
 *
 * The check knows what the operation promises: right after a clear, each
 * chunk's generation is noted; a generation is new only after a reset that
 * comes before its round's stores, so a settled chunk whose generation
 * changed since holds stores made after the clear ended (the flush done).
 * Each page of it that pagemap shows present and not soft-dirty, twice,
 * around a read of its words that finds one of that generation's stamps,
 * is a lost soft-dirty bit: an event (soft_dirty, exit 1). A chunk in a
 * round, held by a partner, retired, or changed during the check is left
 * for the next one. This is the only stressor that clears soft-dirty; a
 * clear from outside the process makes the check fire (the self-test does
 * that on purpose).
 *
 * Where the kernel has no soft-dirty tracking (CONFIG_MEM_SOFT_DIRTY off, as
 * on some distribution kernels) --softdirty-mode auto clears the referenced
 * bits instead (clear_refs "1": ptep/pmdp_test_and_clear_young() over every
 * PTE and huge PMD under the mmap read lock), a page-table writer racing
 * the faults that promises nothing to check beyond the storm's own
 * verification; --softdirty-mode soft-dirty then skips with the reason.
 *
 * How to tell it fired: "clears" and its latency (the walk of every VMA,
 * under the mmap lock), "checked" chunks and "pages" judged, "lost" pages.
 */
#include <pmdstress/stressor.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PM_PRESENT (1ull << 63)
#define PM_SWAP (1ull << 62)
#define PM_UFFD_WP (1ull << 57)
#define PM_SOFT_DIRTY (1ull << 55)

/* PAGEMAP_SCAN (6.7, include/uapi/linux/fs.h), spelled here: older headers lack it */
struct sd_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
struct sd_region {
	uint64_t start, end, categories;
};
#define SD_PAGEMAP_SCAN _IOWR('f', 16, struct sd_scan_arg)
#define SD_SCAN_WP_MATCHING (1ull << 0)
#define SD_SCAN_CHECK_WPASYNC (1ull << 1)
#define SD_PAGE_IS_WRITTEN (1ull << 1)
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1ull << 15) /* 6.7 */
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#define SD_REGIONS 64
#define PM_PFN_MASK ((1ull << 55) - 1)
#define WORDS_READ 64 /* slots of a page looked at for a stamp: a group's workers */

enum { MODE_AUTO, MODE_SOFT_DIRTY, MODE_REFERENCED, MODE_UFFD_WP };

struct softdirty_opts {
	uint64_t rate;
	uint64_t checks;
	unsigned mode;
};

static const char *const modes[] = { "auto", "soft-dirty", "referenced", "uffd-wp", NULL };

#define O(f) offsetof(struct softdirty_opts, f)
static const struct pmd_option softdirty_options[] = {
	{ "rate", PMD_OPT_UINT, O(rate), "10", 1, 100000, NULL,
	  "soft-dirty clears per second, all workers together" },
	{ "checks", PMD_OPT_UINT, O(checks), "8", 0, 4096, NULL,
	  "chunks checked before each clear (0: clear only)" },
	{ "mode", PMD_OPT_ENUM, O(mode), "auto", 0, 0, modes,
	  "soft-dirty: clear_refs 4 and the check (skipped where the kernel lacks "
	  "CONFIG_MEM_SOFT_DIRTY); uffd-wp: the arena registered for async userfaultfd "
	  "write-protection, PAGEMAP_SCAN write-protects it, the same check (6.7+); "
	  "referenced: clear_refs 1, no check; auto: the first of those the kernel has" },
	PMD_OPT_END,
};

enum {
	M_OPS,
	M_CLEARS,
	M_REFERENCED,
	M_CHECKED,
	M_UNCHANGED,
	M_BUSY,
	M_PAGES,
	M_LOST,
	M_LAT_CLEAR,
	M_LAT_CHECK,
};

static const struct pmd_metric softdirty_metrics[] = {
	[M_OPS] = { "ops", PMD_METRIC_COUNT, "clears and chunk checks" },
	[M_CLEARS] = { "clears", PMD_METRIC_COUNT,
		       "soft-dirty clears (4 to /proc/self/clear_refs), or uffd-wp write-protects "
		       "of the arena (PAGEMAP_SCAN) in that mode", PMD_BETTER_NONE },
	[M_REFERENCED] = { "referenced", PMD_METRIC_COUNT,
			   "referenced-bit clears (1 to clear_refs: no soft-dirty tracking here)",
			   PMD_BETTER_NONE },
	[M_CHECKED] = { "checked", PMD_METRIC_COUNT,
			"settled chunks written after the last clear whose pages were judged",
			PMD_BETTER_NONE },
	[M_UNCHANGED] = { "unchanged", PMD_METRIC_COUNT,
			  "chunks not written since the last clear (nothing to judge)",
			  PMD_BETTER_NONE },
	[M_BUSY] = { "busy", PMD_METRIC_COUNT,
		     "chunks in a round, held, retired or changed during the check",
		     PMD_BETTER_NONE },
	[M_PAGES] = { "pages", PMD_METRIC_COUNT, "present pages judged", PMD_BETTER_NONE },
	[M_LOST] = { "lost", PMD_METRIC_COUNT,
		     "pages written after the clear that read not soft-dirty, or still uffd-wp "
		     "write-protected (an event per chunk and generation)",
		     PMD_BETTER_NONE },
	[M_LAT_CLEAR] = { "clear", PMD_METRIC_LATENCY, "one write to clear_refs" },
	[M_LAT_CHECK] = { "check", PMD_METRIC_LATENCY, "one chunk's pagemap reads and stamps" },
	{ NULL },
};

struct softdirty_priv {
	pthread_mutex_t lock; /* a clear and a check never overlap */
	uint32_t *gen_at;     /* [nchunks]: each chunk's generation right after the last clear */
	uint32_t *said_at;    /* [nchunks]: the generation a loss was last reported at, or 0 */
	bool cleared;	      /* gen_at holds a clear's snapshot */
	const char *what;     /* written to clear_refs: "4" (soft-dirty) or "1" (referenced) */
	int uffd;	      /* uffd-wp mode: the arena's userfaultfd (else -1) */
};

/* One worker's descriptors and buffers. */
struct sd_worker {
	int clear_fd, pagemap_fd;
	uint64_t pm[PMD_CHUNK_PAGES], again[PMD_CHUNK_PAGES];
};

/* ---- uffd-wp: async userfaultfd write-protection, PAGEMAP_SCAN --------------------- */

/* A userfaultfd with async write-protection (6.7+): its fd, or -errno. */
static int uffd_open(void)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC };
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY), err;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, UFFDIO_API, &api)) {
		err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

/*
 * (Again) register [@addr, +@len) for write-protection: a zap's fresh
 * mapping or a moved chunk's placeholder comes unregistered, and a clear
 * skips it (its pages then read written: nothing can be judged lost there).
 */
static int uffd_register(int uffd, char *addr, size_t len)
{
	struct uffdio_register r = { .range = { (uintptr_t)addr, len },
				     .mode = UFFDIO_REGISTER_MODE_WP };

	return ioctl(uffd, UFFDIO_REGISTER, &r) ? -errno : 0;
}

/* Write-protect the written pages of [@addr, +@len): PAGEMAP_SCAN with WP_MATCHING. */
static int scan_wp(int pagemap_fd, char *addr, size_t len)
{
	struct sd_region vec[SD_REGIONS];
	uint64_t at = (uintptr_t)addr, end = at + len;

	while (at < end) {
		struct sd_scan_arg arg = {
			.size = sizeof(arg),
			.flags = SD_SCAN_WP_MATCHING,
			.start = at,
			.end = end,
			.vec = (uintptr_t)vec,
			.vec_len = SD_REGIONS,
			.category_mask = SD_PAGE_IS_WRITTEN,
			.return_mask = SD_PAGE_IS_WRITTEN,
		};

		if (ioctl(pagemap_fd, SD_PAGEMAP_SCAN, &arg) < 0)
			return -errno;
		if (arg.walk_end <= at)
			return -EIO;
		at = arg.walk_end;
	}
	return 0;
}

/* ---- the clear --------------------------------------------------------------------- */

static int clear_once(struct pmd_worker *w, struct softdirty_priv *sp, struct sd_worker *sw)
{
	struct pmd_arena *a = w->si->arena;
	uint64_t t = pmd_now_ns();
	unsigned i;
	int err;

	if (sp->uffd >= 0) {
		/* a failed registration leaves that range untracked: never a false loss */
		(void)uffd_register(sp->uffd, a->base, a->size);
		err = scan_wp(sw->pagemap_fd, a->base, a->size);
		if (err)
			return err;
	} else if (pwrite(sw->clear_fd, sp->what, 1, 0) != 1) {
		return -errno;
	}
	pmd_latency(w, M_LAT_CLEAR, pmd_now_ns() - t);
	/* the flush is done: a generation newer than this was stored after it */
	for (i = 0; i < a->nchunks; i++)
		sp->gen_at[i] = __atomic_load_n(&a->chunks[i].gen, __ATOMIC_ACQUIRE);
	sp->cleared = sp->uffd >= 0 || sp->what[0] == '4';
	pmd_count(w, sp->cleared ? M_CLEARS : M_REFERENCED, 1);
	pmd_count(w, M_OPS, 1);
	return 0;
}

/* ---- the check --------------------------------------------------------------------- */

static int read_pagemap(struct sd_worker *sw, const char *addr, uint64_t *pm)
{
	off_t off = (off_t)((uintptr_t)addr >> PMD_PAGE_SHIFT) * (off_t)sizeof(uint64_t);
	ssize_t n = pread(sw->pagemap_fd, pm, PMD_CHUNK_PAGES * sizeof(uint64_t), off);

	return n == (ssize_t)(PMD_CHUNK_PAGES * sizeof(uint64_t)) ? 0 : n < 0 ? -errno : -EIO;
}

/* The first slot of page @p that holds a stamp of @gen written by the run, or -1. */
static int stamp_of_gen(const struct pmd_arena *a, const char *addr, unsigned p, uint32_t gen,
			uint64_t *val)
{
	const uint64_t *slot = (const uint64_t *)(addr + ((size_t)p << PMD_PAGE_SHIFT));
	struct pmd_stamp_fields f;
	unsigned s;

	for (s = 0; s < WORDS_READ; s++) {
		uint64_t v = pmd_load(&slot[s]);

		if (v && pmd_stamp_decode(a->tag_key, v, &f) && f.domain == PMD_STAMP_DOMAIN_RUN &&
		    f.gen == (gen & 0xfff)) {
			*val = v;
			return (int)s;
		}
	}
	return -1;
}

static void report_lost(struct pmd_worker *w, struct pmd_chunk *c, unsigned page, int slot,
			uint64_t val, uint32_t gen, unsigned lost, uint64_t pm, bool uffd)
{
	struct pmd_event ev;
	uint64_t pfn = 0;

	memset(&ev, 0, sizeof(ev));
	ev.kind = PMD_EV_SOFT_DIRTY;
	ev.t_ns = pmd_now_ns();
	ev.worker = (int)w->id;
	ev.stressor = w->si->st->name;
	pmd_event_at_chunk(&ev, c, page, (unsigned)slot);
	ev.thp = pmd_thp_probe(w->si->run, c, &pfn);
	ev.pfn = pfn;
	ev.gen = gen;
	ev.expected = uffd ? 0 : PM_SOFT_DIRTY;
	ev.actual = pm;
	snprintf(ev.text, sizeof(ev.text),
		 "softdirty: chunk %u page %u holds stamp %#llx of generation %u, stored after the "
		 "last %s, yet pagemap says present and %s (entry %#llx; %u such pages in the "
		 "chunk)",
		 c->index, page, (unsigned long long)val, gen,
		 uffd ? "uffd-wp write-protect" : "clear_refs",
		 uffd ? "still write-protected (uffd-wp)" : "not soft-dirty",
		 (unsigned long long)pm, lost);
	pmd_event_post(w->si->run, &ev);
}

/*
 * Judge @c if it is settled and written since the last clear: pagemap,
 * the pages' words, pagemap again, with the chunk idle and at one
 * generation from before the first read to after the last.
 */
static void check_chunk(struct pmd_worker *w, struct softdirty_priv *sp, struct sd_worker *sw,
			struct pmd_chunk *c)
{
	struct pmd_arena *a = w->si->arena;
	uint32_t gen = __atomic_load_n(&c->gen, __ATOMIC_ACQUIRE);
	unsigned p, lost = 0, first = 0, pages = 0;
	int slot = -1, first_slot = -1;
	uint64_t t = pmd_now_ns(), val = 0, v;
	char *addr;

	pmd_count(w, M_OPS, 1);
	if (a->shared) {
		/*
		 * shmem keeps a zapped page in its file: a read maps it again
		 * with a fresh PTE, not soft-dirty, though its stamps were
		 * stored after the clear. Private arenas only.
		 */
		pmd_count(w, M_UNCHANGED, 1);
		return;
	}
	if (gen == sp->gen_at[c->index]) {
		pmd_count(w, M_UNCHANGED, 1);
		return;
	}
	if (pmd_chunk_state(c) != PMD_CHUNK_IDLE || !(addr = pmd_chunk_enter(c))) {
		pmd_count(w, M_BUSY, 1);
		return;
	}
	if (read_pagemap(sw, addr, sw->pm)) {
		pmd_chunk_exit(c);
		pmd_count(w, M_BUSY, 1);
		return;
	}
	for (p = 0; p < PMD_CHUNK_PAGES; p++) {
		if (!(sw->pm[p] & PM_PRESENT))
			continue;
		pages++;
		/* written since the clear: soft-dirty, or no longer uffd-wp protected */
		if (sp->uffd >= 0 ? !(sw->pm[p] & PM_UFFD_WP) : !!(sw->pm[p] & PM_SOFT_DIRTY))
			continue;
		slot = stamp_of_gen(a, addr, p, gen, &v);
		if (slot >= 0 && !lost++) {
			first = p;
			first_slot = slot;
			val = v;
		}
	}
	if (lost && (read_pagemap(sw, addr, sw->again) ||
		     (sw->again[first] & (PM_PRESENT | PM_SOFT_DIRTY | PM_UFFD_WP | PM_PFN_MASK)) !=
			     (sw->pm[first] & (PM_PRESENT | PM_SOFT_DIRTY | PM_UFFD_WP | PM_PFN_MASK))))
		lost = 0; /* the page changed under the read: not judged */
	pmd_chunk_exit(c);
	if (pmd_chunk_state(c) != PMD_CHUNK_IDLE ||
	    __atomic_load_n(&c->gen, __ATOMIC_ACQUIRE) != gen) {
		pmd_count(w, M_BUSY, 1);
		return;
	}
	pmd_latency(w, M_LAT_CHECK, pmd_now_ns() - t);
	pmd_count(w, M_CHECKED, 1);
	pmd_count(w, M_PAGES, pages);
	if (!lost)
		return;
	pmd_count(w, M_LOST, lost);
	/* one event per chunk and generation: later checks find the same pages */
	if (sp->said_at[c->index] != gen)
		report_lost(w, c, first, first_slot, val, gen, lost, sw->again[first], sp->uffd >= 0);
	sp->said_at[c->index] = gen;
}

/* ---- the worker ---------------------------------------------------------------------- */

static int softdirty_run(struct pmd_worker *w)
{
	const struct softdirty_opts *o = w->si->opts;
	struct softdirty_priv *sp = w->si->priv;
	struct pmd_arena *a = w->si->arena;
	uint64_t next = pmd_now_ns();
	struct sd_worker *sw = calloc(1, sizeof(*sw));
	int rc = 0;

	if (!sw)
		return -ENOMEM;
	sw->clear_fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	sw->pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (sw->clear_fd < 0 || sw->pagemap_fd < 0) {
		rc = -errno;
		pmd_worker_error(w, rc, "softdirty: opening /proc/self/clear_refs and pagemap");
		goto out;
	}
	while (!pmd_should_stop(w)) {
		uint64_t i;

		pthread_mutex_lock(&sp->lock);
		for (i = 0; sp->cleared && i < o->checks && !pmd_should_stop(w); i++)
			check_chunk(w, sp, sw, &a->chunks[pmd_rand_below(w, a->nchunks)]);
		rc = clear_once(w, sp, sw);
		pthread_mutex_unlock(&sp->lock);
		if (rc) {
			if (sp->uffd >= 0)
				pmd_worker_error(w, rc, "softdirty: PAGEMAP_SCAN write-protecting "
						 "the arena");
			else
				pmd_worker_error(w, rc, "softdirty: writing %s to "
						 "/proc/self/clear_refs", sp->what);
			rc = -ECANCELED; /* said */
			break;
		}
		pmd_beat(w);
		if (!pmd_pace(w, &next, o->rate))
			break;
	}
out:
	if (sw->clear_fd >= 0)
		close(sw->clear_fd);
	if (sw->pagemap_fd >= 0)
		close(sw->pagemap_fd);
	free(sw);
	return rc == -ECANCELED ? 0 : rc;
}

/* ---- can it run here ----------------------------------------------------------------- */

/* Soft-dirty of one page of our own after a clear and after a store: 0, or why not. */
static int probe_soft_dirty(char *why, size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t before = 0, after = 0;
	char *p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int cfd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	int pfd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	off_t off = (off_t)((uintptr_t)p >> PMD_PAGE_SHIFT) * (off_t)sizeof(uint64_t);
	int rc = 0;

	if (p == MAP_FAILED || cfd < 0 || pfd < 0) {
		snprintf(why, len, "cannot open /proc/self/clear_refs or pagemap: %s",
			 strerror(errno));
		rc = -1;
	} else if (pwrite(cfd, "4", 1, 0) != 1) {
		snprintf(why, len, "writing 4 to /proc/self/clear_refs failed: %s", strerror(errno));
		rc = -1;
	} else {
		pmd_store((uint64_t *)(void *)p, 1);
		if (pwrite(cfd, "4", 1, 0) != 1 || pread(pfd, &before, 8, off) != 8) {
			snprintf(why, len, "clear_refs or pagemap failed: %s", strerror(errno));
			rc = -1;
		} else {
			pmd_store((uint64_t *)(void *)p, 2);
			if (pread(pfd, &after, 8, off) != 8)
				after = 0;
			if ((before & PM_SOFT_DIRTY) || !(after & PM_SOFT_DIRTY)) {
				snprintf(why, len,
					 "kernel without soft-dirty tracking (CONFIG_MEM_SOFT_DIRTY): a "
					 "page read %s after a clear and %s after a store",
					 before & PM_SOFT_DIRTY ? "dirty" : "clean",
					 after & PM_SOFT_DIRTY ? "dirty" : "clean");
				rc = -1;
			}
		}
	}
	if (p != MAP_FAILED)
		munmap(p, pg);
	if (cfd >= 0)
		close(cfd);
	if (pfd >= 0)
		close(pfd);
	return rc;
}

/* Whether clear_refs takes @what here: 0, or why not. */
static int probe_clear(const char *what, char *why, size_t len)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC), rc = 0;

	if (fd < 0 || pwrite(fd, what, 1, 0) != 1) {
		snprintf(why, len, "writing %s to /proc/self/clear_refs failed: %s", what,
			 strerror(errno));
		rc = -1;
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

/*
 * Async uffd-wp on one page of our own: protected by a PAGEMAP_SCAN write-
 * protect, written again by a store. 0, or why not.
 */
static int probe_uffd_wp(bool shared, char *why, size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	int uffd = uffd_open(), pfd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC), rc = -1;
	char *p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	off_t off = (off_t)((uintptr_t)p >> PMD_PAGE_SHIFT) * (off_t)sizeof(uint64_t);
	uint64_t after_wp = 0, after_store = 0;

	if (shared)
		snprintf(why, len, "uffd-wp is for private arenas here (shmem needs "
			 "UFFD_FEATURE_WP_HUGETLBFS_SHMEM, and the check skips shared arenas)");
	else if (uffd < 0)
		snprintf(why, len, "kernel without async userfaultfd write-protection "
			 "(UFFD_FEATURE_WP_ASYNC, 6.7+): %s", strerror(-uffd));
	else if (p == MAP_FAILED || pfd < 0)
		snprintf(why, len, "cannot map a page or open pagemap: %s", strerror(errno));
	else if ((rc = uffd_register(uffd, p, pg)))
		snprintf(why, len, "UFFDIO_REGISTER (write-protect) failed: %s", strerror(-rc));
	else {
		pmd_store((uint64_t *)(void *)p, 1);
		if ((rc = scan_wp(pfd, p, pg)) || pread(pfd, &after_wp, 8, off) != 8)
			snprintf(why, len, "PAGEMAP_SCAN write-protect failed (6.7+): %s",
				 strerror(rc ? -rc : errno));
		else {
			pmd_store((uint64_t *)(void *)p, 2);
			if (pread(pfd, &after_store, 8, off) != 8)
				after_store = PM_UFFD_WP;
			rc = !(after_wp & PM_UFFD_WP) || (after_store & PM_UFFD_WP) ? -1 : 0;
			if (rc)
				snprintf(why, len, "uffd-wp: a page read %s after a write-protect "
					 "and %s after a store",
					 after_wp & PM_UFFD_WP ? "protected" : "unprotected",
					 after_store & PM_UFFD_WP ? "protected" : "unprotected");
		}
	}
	if (p != MAP_FAILED)
		munmap(p, pg);
	if (uffd >= 0)
		close(uffd);
	if (pfd >= 0)
		close(pfd);
	return rc ? -1 : 0;
}

/*
 * The mode asked for where the kernel can; auto: soft-dirty where tracked,
 * else uffd-wp (6.7+), else the referenced bits.
 */
static const char *softdirty_supported(struct pmd_sinst *si)
{
	const struct softdirty_opts *o = si->opts;
	char why[sizeof(si->why)];

	switch (o->mode) {
	case MODE_REFERENCED:
		return probe_clear("1", si->why, sizeof(si->why)) ? si->why : NULL;
	case MODE_SOFT_DIRTY:
		return probe_soft_dirty(si->why, sizeof(si->why)) ? si->why : NULL;
	case MODE_UFFD_WP:
		return probe_uffd_wp(si->arena->shared, si->why, sizeof(si->why)) ? si->why : NULL;
	}
	if (!probe_soft_dirty(why, sizeof(why)) || !probe_uffd_wp(si->arena->shared, why,
								  sizeof(why)))
		return NULL;
	return probe_clear("1", si->why, sizeof(si->why)) ? si->why : NULL;
}

static int softdirty_setup(struct pmd_sinst *si)
{
	const struct softdirty_opts *o = si->opts;
	struct softdirty_priv *sp = calloc(1, sizeof(*sp));
	char why[sizeof(si->why)];
	unsigned mode;

	if (!sp)
		return -ENOMEM;
	sp->gen_at = calloc(si->arena->nchunks, sizeof(*sp->gen_at));
	sp->said_at = calloc(si->arena->nchunks, sizeof(*sp->said_at));
	if (!sp->gen_at || !sp->said_at) {
		free(sp->gen_at);
		free(sp->said_at);
		free(sp);
		return -ENOMEM;
	}
	pthread_mutex_init(&sp->lock, NULL);
	sp->uffd = -1;
	si->priv = sp;
	/* supported() said one of them works; the probes again say which */
	mode = o->mode;
	if (mode == MODE_AUTO)
		mode = !probe_soft_dirty(why, sizeof(why))		       ? MODE_SOFT_DIRTY :
		       !probe_uffd_wp(si->arena->shared, why, sizeof(why)) ? MODE_UFFD_WP :
									     MODE_REFERENCED;
	sp->what = mode == MODE_REFERENCED ? "1" : "4";
	if (mode == MODE_UFFD_WP) {
		sp->uffd = uffd_open();
		if (sp->uffd < 0)
			return sp->uffd;
		return uffd_register(sp->uffd, si->arena->base, si->arena->size);
	}
	return 0;
}

static void softdirty_teardown(struct pmd_sinst *si)
{
	struct softdirty_priv *sp = si->priv;

	if (!sp)
		return;
	pthread_mutex_destroy(&sp->lock);
	if (sp->uffd >= 0)
		close(sp->uffd);
	free(sp->gen_at);
	free(sp->said_at);
	free(sp);
	si->priv = NULL;
}

const struct pmd_stressor pmd_stressor_softdirty = {
	.abi = PMD_STRESSOR_ABI,
	.name = "softdirty",
	.summary = "soft-dirty clears (clear_refs 4) racing the faults; pages written after "
		   "one must read soft-dirty",
	.options = softdirty_options,
	.opts_size = sizeof(struct softdirty_opts),
	.metrics = softdirty_metrics,
	.workers = "1",
	.supported = softdirty_supported,
	.setup = softdirty_setup,
	.run = softdirty_run,
	.teardown = softdirty_teardown,
};
