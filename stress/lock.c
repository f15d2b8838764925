// SPDX-License-Identifier: GPL-2.0
/*
 * lock: mlock and munlock of whole chunks while their first touches fault.
 *
 * The race: mlock() splits the chunk's VMA off (VM_LOCKED) under the mmap
 * write lock and then populates it through GUP (populate_vma_page_range(),
 * write faults for a private writable mapping, under the mmap read lock):
 * on a live round's chunk one more faulter of its pmd_none PMD, by another
 * path than the workers' per-VMA-lock faults, and every fault after it maps
 * a folio that must be mlocked on the spot (mlock_new_folio(), a huge PMD's
 * folio whole). mlock2(MLOCK_ONFAULT) locks without populating: the
 * workers' own faults then take that path. munlock() walks the page tables
 * back (mlock_pte_range(): huge PMDs and PTE-mapped pieces of THPs alike)
 * while the round still writes; the folio's mlock count must come back to
 * zero whichever way it was mapped, split or collapsed meanwhile (Hugh
 * Dickins' 5.18 "mm/munlock" rework, and "support large folio for mlock",
 * 6.7, which locks a THP only while it is mapped whole). A held settled
 * chunk is locked, unlocked and checked: neither may change what it holds.
 *
 * While a chunk is locked, MADV_DONTNEED and MADV_FREE of it fail with
 * EINVAL: the chunk's lock count is odd then (bumped before mlock and after
 * munlock), so zap can tell that EINVAL from a kernel's. A live round's
 * chunk is locked inside the round's bracket: the storm cannot close the
 * round, and its reset never meets a locked chunk. mlock needs
 * RLIMIT_MEMLOCK of a chunk (2 MiB) or CAP_IPC_LOCK: without it the partner
 * is skipped, saying so; EAGAIN/ENOMEM of a call (memory short, a hole of
 * split's) are counted.
 */
#include <pmdstress/stressor.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 0x01
#endif

struct lock_opts {
	uint64_t rate;
	uint64_t live;
	uint64_t onfault;
	uint64_t hold_us;
};

#define O(f) offsetof(struct lock_opts, f)
static const struct pmd_option lock_options[] = {
	{ "rate", PMD_OPT_UINT, O(rate), "50", 0, 1000000, NULL,
	  "lock-unlock pairs per second, all workers together (0: as fast as possible)" },
	{ "live", PMD_OPT_UINT, O(live), "70", 0, 100, NULL,
	  "percent of pairs on a chunk whose round is under way (the rest hold a settled chunk "
	  "and check it)" },
	{ "onfault", PMD_OPT_UINT, O(onfault), "50", 0, 100, NULL,
	  "percent of locks that are mlock2(MLOCK_ONFAULT) (the rest mlock, which populates)" },
	{ "hold-us", PMD_OPT_UINT, O(hold_us), "200", 0, 1000000, NULL,
	  "most microseconds a chunk stays locked (at random from 0) before munlock" },
	PMD_OPT_END,
};

enum {
	M_OPS,
	M_LIVE,
	M_HELD,
	M_ONFAULT,
	M_PAGES,
	M_NONE,
	M_BUSY,
	M_EAGAIN,
	M_ENOMEM,
	M_EINTR,
	M_EOTHER,
	L_LOCK,
	L_UNLOCK,
};

static const struct pmd_metric lock_metrics[] = {
	[M_OPS] = { "ops", PMD_METRIC_COUNT, "mlock-munlock pairs of a chunk" },
	[M_LIVE] = { "live", PMD_METRIC_COUNT, "pairs on a chunk whose round was under way",
		     PMD_BETTER_NONE },
	[M_HELD] = { "held", PMD_METRIC_COUNT, "pairs on a held settled chunk, checked after",
		     PMD_BETTER_NONE },
	[M_ONFAULT] = { "onfault", PMD_METRIC_COUNT, "locks by mlock2(MLOCK_ONFAULT)",
			PMD_BETTER_NONE },
	[M_PAGES] = { "held_pages", PMD_METRIC_COUNT, "pages of held chunks checked after the pair",
		      PMD_BETTER_NONE },
	[M_NONE] = { "no_chunk", PMD_METRIC_COUNT, "pairs that found no chunk to take",
		     PMD_BETTER_NONE },
	[M_BUSY] = { "busy", PMD_METRIC_COUNT, "live chunks another lock worker had locked",
		     PMD_BETTER_NONE },
	[M_EAGAIN] = { "eagain", PMD_METRIC_COUNT, "EAGAIN: some pages could not be locked",
		       PMD_BETTER_NONE },
	[M_ENOMEM] = { "enomem", PMD_METRIC_COUNT,
		       "ENOMEM: memory, the lock limit, a hole of split's, the seed race's memcg "
		       "window", PMD_BETTER_NONE },
	[M_EINTR] = { "eintr", PMD_METRIC_COUNT, "EINTR: a signal (the run stopping)",
		      PMD_BETTER_NONE },
	[M_EOTHER] = { "other_errors", PMD_METRIC_COUNT, "any other error (reported)",
		       PMD_BETTER_NONE },
	[L_LOCK] = { "lock_call", PMD_METRIC_LATENCY, "one mlock or mlock2 of a chunk" },
	[L_UNLOCK] = { "unlock_call", PMD_METRIC_LATENCY, "one munlock of a chunk" },
	{ NULL },
};

/*
 * The system calls themselves: the sanitizers' runtimes intercept mlock()
 * and munlock() as no-ops but not mlock2(), so under TSan a chunk locked
 * ON_FAULT stayed locked and zap's and pin's MADV_DONTNEED of it failed.
 */
static int do_lock(char *at, bool onfault)
{
	long rc = onfault ? syscall(SYS_mlock2, at, PMD_CHUNK_SIZE, MLOCK_ONFAULT) :
			    syscall(SYS_mlock, at, PMD_CHUNK_SIZE);

	return rc ? errno : 0;
}

static int do_unlock(char *at)
{
	return syscall(SYS_munlock, at, PMD_CHUNK_SIZE) ? errno : 0;
}

/* Count @err of @call; report it (once per worker and kind) unless it may happen here. */
static void lock_error(struct pmd_worker *w, int err, const char *call, unsigned chunk)
{
	unsigned m = err == EAGAIN ? M_EAGAIN :
		     err == ENOMEM ? M_ENOMEM :
		     err == EINTR  ? M_EINTR :
				     M_EOTHER;

	pmd_count(w, m, 1);
	if (m == M_EOTHER && pmd_counter_read(&w->stats->counter[m]) == 1)
		pmd_worker_error(w, -err, "lock: %s of chunk %u", call, chunk);
}

/*
 * munlock @addr's chunk, again a few times if it fails: a chunk left locked
 * makes zap's MADV_DONTNEED fail. It fails as the lock did where the chunk
 * has a hole of split's (ENOMEM: both stop there, and the holes cannot
 * change while the caller is inside the chunk). 0, or the last error.
 */
static int unlock_chunk(struct pmd_worker *w, char *addr, int lock_err)
{
	unsigned tries;
	int err;

	for (tries = 0;; tries++) {
		uint64_t t0 = pmd_now_ns();

		err = do_unlock(addr);
		pmd_latency(w, L_UNLOCK, pmd_now_ns() - t0);
		if (!err || (err == ENOMEM && lock_err == ENOMEM) || tries == 3)
			return err;
		pmd_sleep(w, 1000000ull << tries);
	}
}

/*
 * One pair on @c at @addr: lock, stay locked a moment, unlock. The chunk's
 * lock count is odd from before the lock until after the unlock; if the
 * unlock never succeeds it stays odd (the chunk is still locked: zap must
 * not call its EINVAL the kernel's) and the run ends with the error.
 */
static void lock_pair(struct pmd_worker *w, struct pmd_chunk *c, char *addr)
{
	const struct lock_opts *o = w->si->opts;
	bool onfault = pmd_rand_below(w, 100) < o->onfault;
	uint64_t hold = pmd_rand_below(w, o->hold_us + 1) * 1000, t0;
	int err, lock_err;

	__atomic_add_fetch(&c->locks, 1, __ATOMIC_SEQ_CST);
	t0 = pmd_now_ns();
	lock_err = do_lock(addr, onfault);
	pmd_latency(w, L_LOCK, pmd_now_ns() - t0);
	pmd_count(w, M_OPS, 1);
	if (onfault)
		pmd_count(w, M_ONFAULT, 1);
	if (lock_err)
		lock_error(w, lock_err, onfault ? "mlock2(MLOCK_ONFAULT)" : "mlock", c->index);
	/* a lock that failed may have locked part of the range: unlock it either way */
	if (hold)
		pmd_sleep(w, hold);
	err = unlock_chunk(w, addr, lock_err);
	if (err && !(err == ENOMEM && lock_err == ENOMEM)) {
		pmd_count(w, M_EOTHER, 1);
		pmd_worker_error(w, -err, "lock: munlock of chunk %u failed 4 times: it stays locked",
				 c->index);
		return;
	}
	__atomic_add_fetch(&c->locks, 1, __ATOMIC_SEQ_CST);
	if (err)
		lock_error(w, err, "munlock", c->index);
}

static void lock_once(struct pmd_worker *w)
{
	const struct lock_opts *o = w->si->opts;
	struct pmd_arena *a = w->si->arena;
	/* both drawn either way: what follows does not depend on the rounds' timing */
	bool live = pmd_rand_below(w, 100) < o->live;
	unsigned start = (unsigned)pmd_rand_below(w, a->nchunks);
	struct pmd_chunk *c;
	char *addr;

	/*
	 * Inside the round's bracket and section: it cannot close, its reset
	 * never meets a lock, nobody moves its pages under the lock. One locker
	 * at a time: munlock does not nest, and the lock count's parity is zap's.
	 */
	if (live && (c = pmd_arena_enter_live(a, start, &addr))) {
		if (pmd_chunk_flag_unless(c, PMD_CF_LOCKING, PMD_CF_LOCKING)) {
			lock_pair(w, c, addr);
			pmd_count(w, M_LIVE, 1);
			pmd_chunk_flag_clear(c, PMD_CF_LOCKING);
		} else {
			pmd_count(w, M_BUSY, 1);
		}
		pmd_chunk_disturb_end(c);
		pmd_chunk_exit(c);
		return;
	}
	c = pmd_arena_hold_settled(a, start, a->nchunks);
	if (!c) {
		pmd_count(w, M_NONE, 1);
		return;
	}
	/* held: the pair outside any section (it sleeps), the check inside one */
	if ((addr = pmd_chunk_held_addr(c))) {
		lock_pair(w, c, addr);
		pmd_count(w, M_HELD, 1);
		if (w->si->cfg->verify && (addr = pmd_chunk_enter(c))) {
			pmd_verify_pages(w, c, addr, 0, PMD_CHUNK_PAGES);
			pmd_count(w, M_PAGES, PMD_CHUNK_PAGES);
			pmd_chunk_exit(c);
		}
	}
	pmd_chunk_release(c, PMD_CHUNK_IDLE);
}

static int lock_run(struct pmd_worker *w)
{
	const struct lock_opts *o = w->si->opts;
	uint64_t next = pmd_now_ns();

	while (!pmd_should_stop(w)) {
		lock_once(w);
		pmd_beat(w);
		if (!pmd_pace(w, &next, o->rate))
			break;
	}
	return 0;
}

/* mlock of a chunk-sized mapping of our own: the limit and the call, as the run will meet them. */
static const char *lock_supported(struct pmd_sinst *si)
{
	char *p = mmap(NULL, PMD_CHUNK_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct rlimit rl;
	int err;

	if (p == MAP_FAILED)
		return NULL; /* memory is short now; the run finds out */
	err = do_lock(p, true);
	if (!err)
		do_unlock(p);
	munmap(p, PMD_CHUNK_SIZE);
	if (!err || err == EAGAIN || err == EINTR)
		return NULL;
	if ((err == ENOMEM || err == EPERM) && !getrlimit(RLIMIT_MEMLOCK, &rl) &&
	    rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < PMD_CHUNK_SIZE)
		snprintf(si->why, sizeof(si->why),
			 "RLIMIT_MEMLOCK is %llu KiB, less than a chunk (2048 KiB): raise it "
			 "(ulimit -l) or run with CAP_IPC_LOCK",
			 (unsigned long long)rl.rlim_cur / 1024);
	else if (err == ENOSYS || err == EINVAL)
		snprintf(si->why, sizeof(si->why), "kernel lacks mlock2(MLOCK_ONFAULT) (%s; it "
			 "needs Linux 4.4+)", strerror(err));
	else
		snprintf(si->why, sizeof(si->why), "mlock2 of a chunk refused: %s (a seccomp "
			 "filter, or locked memory already at its limit)", strerror(err));
	return si->why;
}

const struct pmd_stressor pmd_stressor_lock = {
	.abi = PMD_STRESSOR_ABI,
	.name = "lock",
	.summary = "mlock/munlock (and MLOCK_ONFAULT) of chunks while their first touches fault",
	.options = lock_options,
	.opts_size = sizeof(struct lock_opts),
	.metrics = lock_metrics,
	.workers = "1",
	.supported = lock_supported,
	.run = lock_run,
};
