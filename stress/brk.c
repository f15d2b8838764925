// SPDX-License-Identifier: GPL-2.0
/*
 * brk: move the program break up by --brk-size and back, AIM9 brk_test
 * style, while the storm faults; with --brk-touch every page gained is
 * written first (that loop is also the page stressor, AIM9 page_test).
 *
 * The race and the cost: brk() takes the mmap write lock and grows or
 * shrinks the heap VMA (do_brk_flags() / do_vmi_align_munmap()), against
 * the storm's faults, which run under the per-VMA lock or the mmap read
 * lock in the same mm; shrinking a touched range zaps its PTEs and frees
 * its page tables (free_pgtables()), and the next expansion must fault in
 * fresh zeroed pages. How to tell it fired: cycles/s and the expand, touch
 * and shrink latencies (they are the mmap write lock's wait behind the
 * storm's faults); a kernel that gets it wrong shows a fresh page that is
 * not zero (data outlived the shrink: NONZERO_AFTER_ZAP), a write that does
 * not read back (LOST_WRITE), or a splat in the kernel log.
 *
 * Why this is safe beside glibc's malloc. The break is one per process and
 * glibc's malloc moves it too: its main arena grows by sbrk() (sysmalloc)
 * and shrinks by a negative sbrk() (systrim, from free() once the top chunk
 * passes M_TRIM_THRESHOLD, or malloc_trim()). Non-main arenas live in
 * mmap'd heaps and never touch the break, but any thread may be handed the
 * main arena (the main thread always is; others when the arena limit is
 * reached), so "our workers do not malloc" proves nothing, and a brk worker
 * racing a main-arena sbrk() either unmaps memory malloc handed out (heap
 * corruption, silent) or has its own range cut away (a SIGSEGV we would
 * blame on the kernel). glibc's sbrk() is not thread-safe either: it keeps
 * the break in a cache (__curbrk) that a raw brk syscall would leave stale.
 * So, while a brk or page stressor is set up (from setup, before the
 * workers start, to teardown, after they are joined):
 *   - mallopt(M_MMAP_THRESHOLD, 0): every request an arena cannot serve from
 *     what it already holds gets its own mmap() (sysmalloc tries mmap before
 *     growing a heap or the break), so malloc does not grow the break,
 *     whoever calls it. glibc still falls back to sbrk() when that mmap()
 *     fails (ENOMEM, vm.max_map_count) or M_MMAP_MAX (65536) chunks are
 *     mapped already; pmdstress keeps a few hundred allocations live at most
 *     (tried: 41 threads churning malloc/free of 1 B..300 KiB, 64 live each,
 *     leave the break where it was with these settings and move it without;
 *     with 4096 live each glibc falls back to the break);
 *   - mallopt(M_TRIM_THRESHOLD, INT_MAX): free() never shrinks it;
 *   - all moves of the break go through glibc's sbrk() (its cache stays
 *     true), one cycle at a time under one process-wide lock (the break is
 *     process state, so its lock is too), and each cycle first checks, with
 *     the raw brk(0) syscall, that the kernel's break is exactly where the
 *     last cycle left it, and again before moving back down. If anything
 *     else moved it (that fallback, a library calling brk), the stressors
 *     stop at once with an error and never move it back over memory they
 *     did not add. What no check can close is a fallback sbrk() landing in
 *     the few instructions between the last check and the shrink: it needs
 *     an mmap() failure at that very moment, and is the one residual risk.
 * The thresholds go back to glibc's defaults at teardown (the dynamic mmap
 * threshold stays off for the rest of the process: harmless, it is about to
 * report and exit). Under ASan, whose mallopt() refuses everything, the
 * stressors are skipped with that reason: what cannot be shown safe does
 * not run (TSan hands mallopt() to glibc and allocates without the break).
 */
#include <pmdstress/stressor.h>

#include "brk.h"

#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define GLIBC_DEFAULT_THRESHOLD (128 * 1024) /* M_MMAP_THRESHOLD and M_TRIM_THRESHOLD */
#define GLIBC_DEFAULT_MMAP_MAX 65536

const struct pmd_metric pmd_brk_metrics[] = {
	[PMD_BRK_M_OPS] = { "ops", PMD_METRIC_COUNT, "cycles: the break moved up and back" },
	[PMD_BRK_M_PAGES] = { "pages", PMD_METRIC_COUNT, "pages written between the two moves" },
	[PMD_BRK_M_BAD] = { "bad_pages", PMD_METRIC_COUNT,
			    "pages that read wrong (not zero when fresh, or not what was "
			    "written)",
			    PMD_BETTER_NONE },
	[PMD_BRK_L_EXPAND] = { "expand", PMD_METRIC_LATENCY, "moving the break up (sbrk +size)" },
	[PMD_BRK_L_TOUCH] = { "touch", PMD_METRIC_LATENCY,
			      "writing every page gained: one fault each" },
	[PMD_BRK_L_SHRINK] = { "shrink", PMD_METRIC_LATENCY,
			       "moving it back: unmapping, freeing the pages and page tables" },
	[PMD_BRK_L_CYCLE] = { "cycle", PMD_METRIC_LATENCY, "one whole cycle (bench: summed, and "
							   "per fault when pages are touched)",
			      PMD_BETTER_DEFAULT, PMD_MF_BENCH },
	{ NULL },
};

/* The break's owner for the run: one per process, like the break. */
static struct {
	pthread_mutex_t lock; /* one cycle at a time, all brk and page workers */
	unsigned users;	      /* stressor instances set up */
	char *base;	      /* where every cycle starts and ends */
	uint32_t lost;	      /* atomic: something else moved the break; stop */
} owner = { .lock = PTHREAD_MUTEX_INITIALIZER };

static char *kernel_break(void)
{
	/* brk(0) changes nothing and returns the kernel's break, whoever moved it */
	return (char *)syscall(SYS_brk, 0);
}

const char *pmd_brk_supported(struct pmd_sinst *si, uint64_t size)
{
	struct rlimit rl;
	char *b = sbrk(0);

	if (b == (char *)-1) {
		snprintf(si->why, sizeof(si->why), "sbrk(0) failed: %s", strerror(errno));
		return si->why;
	}
	/* setting glibc's own default changes nothing, and tells whose mallopt() this is */
	if (!mallopt(M_MMAP_MAX, GLIBC_DEFAULT_MMAP_MAX)) {
		snprintf(si->why, sizeof(si->why), "mallopt() refuses (not glibc's malloc: a "
						   "sanitizer's?), so malloc cannot be kept off "
						   "the program break");
		return si->why;
	}
	if (b != kernel_break()) {
		snprintf(si->why, sizeof(si->why), "glibc's break %p is not the kernel's %p: "
						   "something moved it behind glibc's back",
			 (void *)b, (void *)kernel_break());
		return si->why;
	}
	if (!getrlimit(RLIMIT_DATA, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    size > rl.rlim_cur) {
		snprintf(si->why, sizeof(si->why), "--%s-size %llu is above RLIMIT_DATA (%llu)",
			 si->st->name, (unsigned long long)size,
			 (unsigned long long)rl.rlim_cur);
		return si->why;
	}
	return NULL;
}

int pmd_brk_setup(struct pmd_sinst *si)
{
	int rc = 0;

	pthread_mutex_lock(&owner.lock);
	if (!owner.users) {
		char *b = sbrk(0);

		/* no malloc may move the break from here on (see the top of this file) */
		if (b == (char *)-1 || b != kernel_break())
			rc = -EBUSY;
		else if (!mallopt(M_MMAP_THRESHOLD, 0) || !mallopt(M_TRIM_THRESHOLD, INT_MAX))
			rc = -ENOTSUP;
		owner.base = b;
		__atomic_store_n(&owner.lost, 0, __ATOMIC_RELAXED);
	}
	if (!rc) {
		owner.users++;
		si->priv = &owner;
	}
	pthread_mutex_unlock(&owner.lock);
	if (rc == -ENOTSUP)
		fprintf(stderr, "pmdstress: %s: mallopt() refused to keep malloc off the program "
				"break (a sanitizer's allocator?): not run\n",
			si->st->name);
	return rc;
}

void pmd_brk_teardown(struct pmd_sinst *si)
{
	if (!si->priv)
		return;
	pthread_mutex_lock(&owner.lock);
	if (!--owner.users) {
		mallopt(M_MMAP_THRESHOLD, GLIBC_DEFAULT_THRESHOLD);
		mallopt(M_TRIM_THRESHOLD, GLIBC_DEFAULT_THRESHOLD);
	}
	pthread_mutex_unlock(&owner.lock);
	si->priv = NULL;
}

static uint64_t minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return (uint64_t)ru.ru_minflt;
}

static int lost(struct pmd_worker *w, char *expected)
{
	__atomic_store_n(&owner.lost, 1, __ATOMIC_RELAXED);
	pmd_worker_error(w, 0, "%s: the program break is at %p, not at %p where the last "
				    "cycle left it: something else moved it; stopping without moving "
				    "it back, to keep the heap intact",
			 w->si->st->name, (void *)kernel_break(), (void *)expected);
	return -EBUSY;
}

static bool at(char *expected)
{
	return kernel_break() == expected && sbrk(0) == expected;
}

static void post_bad(struct pmd_worker *w, uintptr_t p, enum pmd_class cls, uint64_t expected,
		     uint64_t actual)
{
	struct pmd_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = PMD_EV_CORRUPTION;
	ev.class = cls;
	ev.t_ns = pmd_now_ns();
	ev.worker = (int)w->id;
	ev.stressor = w->si->st->name;
	ev.chunk = -1; /* not the arena: the heap above the break */
	ev.addr = p;
	ev.expected = expected;
	ev.actual = actual;
	snprintf(ev.text, sizeof(ev.text),
		 "%s in the program break's range at %#llx: expected %#llx, read %#llx (%s)",
		 pmd_class_name(cls), (unsigned long long)p, (unsigned long long)expected,
		 (unsigned long long)actual,
		 cls == PMD_CLASS_NONZERO_AFTER_ZAP ? "data outlived the last shrink"
						    : "a write did not read back");
	pmd_event_post(w->si->run, &ev);
	pmd_count(w, PMD_BRK_M_BAD, 1);
}

/*
 * Write one word of every page in [lo, hi): one write fault each, and the
 * exchange returns what the fresh page held, which must be zero. Then, with
 * --verify, read the words back. Returns the pages written.
 */
static unsigned touch(struct pmd_worker *w, char *lo, char *hi, uint64_t cycle)
{
	uint64_t tag = pmd_stamp_mix(w->si->arena->tag_key ^ cycle);
	uintptr_t first = ((uintptr_t)lo + PMD_PAGE_SIZE - 1) & ~(PMD_PAGE_SIZE - 1), p;
	unsigned n = 0;

	for (p = first; p + sizeof(uint64_t) <= (uintptr_t)hi; p += PMD_PAGE_SIZE, n++) {
		uint64_t v = pmd_stamp_mix(p ^ tag) | 1;
		uint64_t old = __atomic_exchange_n((uint64_t *)p, v, __ATOMIC_RELAXED);

		if (old)
			post_bad(w, p, PMD_CLASS_NONZERO_AFTER_ZAP, 0, old);
	}
	if (!w->si->cfg->verify)
		return n;
	for (p = first; p + sizeof(uint64_t) <= (uintptr_t)hi; p += PMD_PAGE_SIZE) {
		uint64_t v = pmd_stamp_mix(p ^ tag) | 1;
		uint64_t got = __atomic_load_n((uint64_t *)p, __ATOMIC_RELAXED);

		if (got != v)
			post_bad(w, p, got ? PMD_CLASS_FOREIGN : PMD_CLASS_LOST_WRITE, v, got);
	}
	return n;
}

/* Up, touch, down. Called with the owner's lock held. 0, or -errno to stop. */
static int cycle(struct pmd_worker *w, const struct pmd_brk_loop *l, uint64_t n)
{
	char *base = owner.base, *top = base + l->size, *old;
	uint64_t t0, t1, t2, t3, f0;
	unsigned pages = 0;
	int err;

	if (!at(base))
		return lost(w, base);
	/* the fault count is read outside the timed steps: getrusage() is a syscall */
	f0 = l->touch ? minflt() : 0;
	t0 = pmd_now_ns();
	old = sbrk((intptr_t)l->size);
	t1 = pmd_now_ns();
	if (old == (char *)-1) {
		err = -errno;
		pmd_worker_error(w, err, "%s: sbrk(+%llu) failed", w->si->st->name,
				 (unsigned long long)l->size);
		return err;
	}
	if (l->touch)
		pages = touch(w, base, top, n);
	t2 = pmd_now_ns();
	/* test only: someone else moves the break while it is up */
	if (l->nudge && n == 3)
		syscall(SYS_brk, top + PMD_PAGE_SIZE);
	if (!at(top))
		return lost(w, top);
	if (sbrk(-(intptr_t)l->size) == (char *)-1) {
		err = -errno;
		pmd_worker_error(w, err, "%s: sbrk(-%llu) failed", w->si->st->name,
				 (unsigned long long)l->size);
		return err;
	}
	t3 = pmd_now_ns();
	if (l->touch)
		pmd_count_faults(w, minflt() - f0);
	pmd_latency(w, PMD_BRK_L_EXPAND, t1 - t0);
	if (l->touch)
		pmd_latency(w, PMD_BRK_L_TOUCH, t2 - t1);
	pmd_latency(w, PMD_BRK_L_SHRINK, t3 - t2);
	pmd_latency(w, PMD_BRK_L_CYCLE, t3 - t0);
	pmd_count(w, PMD_BRK_M_OPS, 1);
	pmd_count(w, PMD_BRK_M_PAGES, pages);
	return 0;
}

int pmd_brk_run(struct pmd_worker *w, const struct pmd_brk_loop *l)
{
	uint64_t next = 0, n = 0;

	while (pmd_pace(w, &next, l->rate)) {
		int rc;

		pthread_mutex_lock(&owner.lock);
		/* another worker found the break moved: it said so, we just stop */
		rc = __atomic_load_n(&owner.lost, __ATOMIC_RELAXED) ? -EBUSY : cycle(w, l, ++n);
		pthread_mutex_unlock(&owner.lock);
		pmd_beat(w);
		if (rc)
			break;
	}
	return 0;
}

/* ---- the brk stressor: AIM9 brk_test ---------------------------------------- */

struct brk_opts {
	uint64_t size;
	uint64_t rate;
	bool touch;
	bool nudge;
};

#define O(f) offsetof(struct brk_opts, f)
static const struct pmd_option brk_options[] = {
	{ "size", PMD_OPT_SIZE, O(size), "1M", PMD_PAGE_SIZE, 1ull << 30, NULL,
	  "bytes the break moves up and back each cycle" },
	{ "rate", PMD_OPT_UINT, O(rate), "0", 0, 100000000, NULL,
	  "cycles per second, all brk workers together (0: back to back)" },
	{ "touch", PMD_OPT_BOOL, O(touch), "off", 0, 0, NULL,
	  "write every page gained before moving back (the page stressor's loop; AIM9 brk_test "
	  "does not touch)" },
	{ "nudge", PMD_OPT_BOOL, O(nudge), "off", 0, 0, NULL,
	  "test only: move the break one page further behind the loop's back (raw brk syscall) "
	  "in the third cycle; the stressor must stop with an error and not move it back",
	  PMD_OPTF_HIDDEN },
	PMD_OPT_END,
};

static const char *brk_supported(struct pmd_sinst *si)
{
	return pmd_brk_supported(si, ((const struct brk_opts *)si->opts)->size);
}

static int brk_run(struct pmd_worker *w)
{
	const struct brk_opts *o = w->si->opts;
	struct pmd_brk_loop l = {
		.size = o->size, .touch = o->touch, .rate = o->rate, .nudge = o->nudge
	};

	return pmd_brk_run(w, &l);
}

const struct pmd_stressor pmd_stressor_brk = {
	.abi = PMD_STRESSOR_ABI,
	.name = "brk",
	.summary = "move the program break up and back while the storm faults (AIM9 brk_test)",
	.options = brk_options,
	.opts_size = sizeof(struct brk_opts),
	.metrics = pmd_brk_metrics,
	.workers = "1",
	.supported = brk_supported,
	.setup = pmd_brk_setup,
	.run = brk_run,
	.teardown = pmd_brk_teardown,
};
