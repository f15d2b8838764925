/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stressor contract, version PMD_STRESSOR_ABI. A stressor is one
 * const struct pmd_stressor in stress/<name>.c, listed in stress/registry.c.
 * It includes this header and nothing else of the engine's.
 *
 * Life of a stressor in a run:
 *   supported(si)  -> NULL, or why it cannot run here (it is then reported
 *                     as skipped with that reason; never a pass)
 *   setup(si)      -> once, after its workers exist and before they start
 *   run(w)         -> once per worker thread; loops until pmd_should_stop()
 *   verify(si)     -> once, after every worker returned
 *   teardown(si)   -> once, always, after verify or a failed setup
 * Hooks return 0 or -errno; any hook may be NULL.
 */
#ifndef PMDSTRESS_STRESSOR_H
#define PMDSTRESS_STRESSOR_H

#include <pmdstress/arena.h>
#include <pmdstress/config.h>
#include <pmdstress/event.h>
#include <pmdstress/option.h>
#include <pmdstress/stats.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define PMD_STRESSOR_ABI 1

enum pmd_stressor_flags {
	PMD_SF_ROOT = 1u << 0,	 /* needs root; skipped with a reason otherwise */
	PMD_SF_OPT_IN = 1u << 1, /* never part of a scenario unless named */
	/* moves chunks to the arena's spare slots, which only such a run has */
	PMD_SF_SPARE_SLOTS = 1u << 2,
};

struct pmd_run;
struct pmd_worker;

/* One stressor's place in a run: what its hooks see. */
struct pmd_sinst {
	const struct pmd_stressor *st;
	struct pmd_run *run;
	const struct pmd_config *cfg;
	struct pmd_arena *arena;
	const void *opts; /* its private options (st->options describes them) */
	void *priv;	  /* its own state, set by setup */
	unsigned nworkers;
	struct pmd_worker *workers; /* nworkers of them */
	const char *skipped;	    /* why it did not run, or NULL */
	char why[160];		    /* room for supported() to format a reason */
	/*
	 * Set by the setup of a stressor whose rounds race (PMD_MF_RACE_*):
	 * why no two of its workers can race in this run (one worker per
	 * group: no racer has a partner), empty if they can. The reports say
	 * when no race was possible.
	 */
	char no_race[160];
};

struct pmd_worker {
	struct pmd_sinst *si;
	unsigned id;	/* unique in the run */
	int tid;	/* its thread's id (gettid), set before the start gate */
	unsigned index; /* 0..si->nworkers-1 */
	uint64_t rng[2];
	struct pmd_wstats *stats;
	void *priv; /* the stressor's per-worker state, if it wants one */
};

struct pmd_stressor {
	unsigned abi;
	const char *name; /* lower case, no dashes: used as --<name>-<option> */
	const char *summary;
	const struct pmd_option *options; /* private options, offsets into opts */
	size_t opts_size;
	const struct pmd_metric *metrics; /* metric 0 is "ops", a counter */
	const char *workers;		  /* default share of --threads: "1", "10%", "rest" */
	unsigned flags;
	const char *(*supported)(struct pmd_sinst *si);
	int (*setup)(struct pmd_sinst *si);
	int (*run)(struct pmd_worker *w);
	int (*verify)(struct pmd_sinst *si);
	void (*teardown)(struct pmd_sinst *si);
};

/* The ordered registry (stress/registry.c). */
extern const struct pmd_stressor *const pmd_stressors[];
const struct pmd_stressor *pmd_stressor_find(const char *name);
unsigned pmd_stressor_count(void);

/* ---- what the engine offers a stressor ---------------------------------- */

/* Nanoseconds since the run started (CLOCK_MONOTONIC). */
uint64_t pmd_now_ns(void);
bool pmd_should_stop(const struct pmd_worker *w);
/* Sleep @ns or until the run stops; returns false if it stopped. */
bool pmd_sleep(const struct pmd_worker *w, uint64_t ns);
/*
 * Pace a loop at @rate operations per second for the whole stressor, each
 * of its workers taking an equal share (0: as fast as possible). Call once
 * per operation with *next zero at first; sleeps until the next one is due
 * and, after falling behind (a slow call, descheduled), restarts from now
 * rather than bursting to catch up. Returns false once the run stops.
 */
bool pmd_pace(const struct pmd_worker *w, uint64_t *next, uint64_t rate);

static inline void pmd_count(struct pmd_worker *w, unsigned metric, uint64_t n)
{
	pmd_counter_add(&w->stats->counter[metric], n);
}

static inline void pmd_latency(struct pmd_worker *w, unsigned metric, uint64_t ns)
{
	pmd_hist_record(&w->stats->hist[metric], ns);
}

/* First-touch faults the worker measured (getrusage minflt deltas). */
static inline void pmd_count_faults(struct pmd_worker *w, uint64_t n)
{
	pmd_counter_add(&w->stats->faults, n);
}

/* How a chunk the worker owned was mapped when it was verified. */
static inline void pmd_count_thp(struct pmd_worker *w, enum pmd_thp_state s)
{
	pmd_counter_add(&w->stats->thp[s], 1);
}

/*
 * CLOCK_MONOTONIC_COARSE in ns: the last tick's time, read without a
 * syscall or a TSC read (9 ns here, against 68 for CLOCK_MONOTONIC), fine
 * enough (one tick) to time a stall of seconds at every beat.
 */
static inline uint64_t pmd_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * A gap this long, or this long since run_delay was last read, takes the
 * slow path (src/kernel/monitor.c): the run-queue wait is read, so that a worker
 * that only waited for a CPU (a loaded machine, more threads than CPUs) is
 * not taken for one that stalled.
 */
#define PMD_BEAT_SLOW_NS 100000000ull
void pmd_beat_slow(struct pmd_wstats *s, uint64_t now);

/* Note the gap since the worker's last beat (its own clock of its progress). */
static inline void pmd_beat_gap(struct pmd_wstats *s, uint64_t now)
{
	uint64_t last = __atomic_load_n(&s->beat_ns, __ATOMIC_RELAXED);

	if (now - last > PMD_BEAT_SLOW_NS ||
	    now - __atomic_load_n(&s->rq_at, __ATOMIC_RELAXED) > PMD_BEAT_SLOW_NS)
		pmd_beat_slow(s, now);
	else if (now - last > __atomic_load_n(&s->gap_max_ns, __ATOMIC_RELAXED))
		__atomic_store_n(&s->gap_max_ns, now - last, __ATOMIC_RELAXED);
	__atomic_store_n(&s->beat_ns, now, __ATOMIC_RELAXED);
}

/*
 * The engine's waits for other workers (a round's gate, an RCU grace
 * period: src/run/gate.c, src/mem/arena.c) bracket themselves with these: such a
 * wait is not this worker's stall but the slowest one's, whose own clock
 * shows it. A worker that waits for peers starved of a CPU on a loaded
 * machine (64 threads on 2 CPUs) is not taken for a stalled one. They act
 * on the calling worker (pmd_self, set for its thread; none off workers).
 */
extern __thread struct pmd_wstats *pmd_self;

static inline void pmd_peers_wait(void)
{
	if (!pmd_self)
		return;
	pmd_beat_gap(pmd_self, pmd_coarse_ns());
	__atomic_store_n(&pmd_self->state, PMD_WS_PEERS, __ATOMIC_RELAXED);
}

static inline void pmd_peers_came(void)
{
	if (!pmd_self)
		return;
	__atomic_store_n(&pmd_self->beat_ns, pmd_coarse_ns(), __ATOMIC_RELAXED);
	__atomic_store_n(&pmd_self->state, PMD_WS_RUNNING, __ATOMIC_RELAXED);
}

/* Tell the watchdog this worker is making progress. */
static inline void pmd_beat(struct pmd_worker *w)
{
	pmd_beat_gap(w->stats, pmd_coarse_ns());
	pmd_counter_add(&w->stats->heartbeat, 1);
}

/* xoshiro128+-style generator seeded from the run seed and worker id. */
uint64_t pmd_rand(struct pmd_worker *w);
static inline uint64_t pmd_rand_below(struct pmd_worker *w, uint64_t n)
{
	return n ? pmd_rand(w) % n : 0;
}

/*
 * @n workers cut into @parts near-equal parts (0 < parts <= n): the first
 * worker of part @i (i == parts gives n), and the part worker @j is in; each
 * is the other's inverse. 64-bit products: j * parts passes 2^32 from 65537
 * workers in as many parts on.
 */
static inline unsigned pmd_part_first(unsigned i, unsigned n, unsigned parts)
{
	return (unsigned)(((uint64_t)i * n + parts - 1) / parts);
}

static inline unsigned pmd_part_of(unsigned j, unsigned n, unsigned parts)
{
	return (unsigned)((uint64_t)j * parts / n);
}

/* An index in [0, n) drawn with the given weights (their sum is @total, > 0). */
unsigned pmd_pick_weighted(struct pmd_worker *w, const uint64_t *weight, unsigned n,
			   uint64_t total);

/*
 * Whether @err (ENOMEM, either sign) can be the seed race's memcg window:
 * the run's own limit, set on purpose since the worker's last beat. The op
 * may be retried; pmd_worker_error() says such an error, not as a finding.
 */
bool pmd_enomem_own(const struct pmd_worker *w, int err);

/* Report that something went wrong that is not corruption (-errno style). */
void pmd_worker_error(struct pmd_worker *w, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Children (the fork and exec stressors). A worker that waits for a child
 * publishes it (pmd_child_set(w, pid), 0 once reaped) so that a hang's
 * dump shows the child too, and watches it while it waits
 * (pmd_child_look()): a child moves while it runs or waits for a CPU
 * (schedstat); one that stays still for --hang-timeout (stopped, or asleep
 * in the kernel for good) is stuck, a hang: pmd_child_stuck() says so with
 * its state, wchan and kernel stack before the caller kills it, and ends
 * the run. When the run stops, a child that still moves is killed unjudged
 * (it was only not done); a still one is waited for until it moves, ends,
 * or is stuck. pmd_aborting(): the run ends on a finding; kill at once.
 */
static inline void pmd_child_set(struct pmd_worker *w, pid_t pid)
{
	/* the wait is the child's to answer for (pmd_child_look()), not the worker's gap */
	if (pid)
		pmd_beat_gap(w->stats, pmd_coarse_ns());
	else
		__atomic_store_n(&w->stats->beat_ns, pmd_coarse_ns(), __ATOMIC_RELAXED);
	__atomic_store_n(&w->stats->child, (int32_t)pid, __ATOMIC_RELEASE);
}

/*
 * Whether the run killed the published child from outside (the join, at
 * the end, of a worker blocked in waitpid()): its SIGKILL is not a death
 * to report. Ask before pmd_child_set(w, 0).
 */
static inline bool pmd_child_killed(const struct pmd_worker *w)
{
	return __atomic_load_n(&w->stats->child, __ATOMIC_ACQUIRE) < 0;
}

struct pmd_child_watch {
	pid_t pid;
	uint64_t progress; /* CPU + run-queue ns at the last look */
	uint64_t moved_at; /* pmd_coarse_ns() when it last moved (or the watch began) */
};

enum { PMD_CHILD_MOVING, PMD_CHILD_STILL, PMD_CHILD_STUCK };

void pmd_child_watch(struct pmd_child_watch *c, pid_t pid);
int pmd_child_look(const struct pmd_worker *w, struct pmd_child_watch *c);
bool pmd_aborting(const struct pmd_worker *w);
void pmd_child_stuck(struct pmd_worker *w, pid_t pid, const char *what);

/*
 * Kernel settings a stressor changes (THP sysfs knobs; src/kernel/restore.c).
 * save() remembers what @path holds now, once, before its first write
 * ("always [madvise] never" is remembered as "madvise"); the engine writes
 * it back at the end of the run, on SIGINT/SIGTERM, on the second-signal
 * exit, at exit() and after a crash. write() saves @path if not yet saved,
 * then writes @value; it returns -ECANCELED once restoring has begun (stop
 * writing). Both return 0 or -errno; -EBUSY when another process is
 * changing settings through this service (one such run at a time).
 */
int pmd_restore_save(const char *path);
int pmd_restore_write(const char *path, const char *value);

/*
 * --memcg-headroom (src/kernel/memcg.c): set the run's memory-cgroup limit to its
 * usage now plus the headroom. A stressor that resets its chunks calls it
 * when nothing of its own is in flight (the fault storm: after a round's
 * zaps), so what the next round may charge is the headroom, no more and no
 * less. Does nothing when the option is off; never fails the caller.
 */
void pmd_memcg_rearm(struct pmd_run *run);

/*
 * The seed race's memcg way (stress/fault_seed.h), as root, for kernels
 * whose faults hold mmap_lock: the run in a memory cgroup of its own with no
 * limit, which a seed round tightens to its usage plus @room just before its
 * racers' first stores (room for one huge page, not two: the second racer's
 * charge fails and its fault falls back to the PTE path) and loosens again
 * as soon as one of them is done, or a keeper thread after 20 ms. enter()
 * returns 0 or -errno, @why saying why not; loose() after a tight() that
 * returned true; neither fails the caller.
 */
int pmd_memcg_seed_enter(struct pmd_run *run, char *why, size_t len);
/* true if this round's window opened (one at a time, none beside a big charger) */
bool pmd_memcg_seed_tight(struct pmd_run *run, uint64_t room);
void pmd_memcg_seed_loose(struct pmd_run *run);
/*
 * Around work that charges megabytes at once (a fork and its copy-on-write
 * rewrite): waits for an open window to close and keeps new ones shut.
 */
void pmd_memcg_charge_begin(struct pmd_run *run);
void pmd_memcg_charge_end(struct pmd_run *run);
/*
 * A fork child leaves the seed way's cgroup for the one the run came from,
 * so that its copy-on-write faults (a frozen chunk rewritten: megabytes)
 * are never charged inside a seed round's window. The run's state is no
 * child's (src/run/pool.c): the parent opens the way out before fork() (-1 when
 * the seed way is off), the child takes it (async-signal-safe), the parent
 * closes its copy.
 */
int pmd_memcg_fork_prepare(const struct pmd_run *run);
void pmd_memcg_fork_child(int fd);
void pmd_memcg_fork_parent(int fd);

/*
 * Verify pages [lo, hi) of chunk @c, entered at @addr, against its recorded
 * expectations; posts an event per bad page. @c must be owned by the caller
 * (or its group). Returns the number of bad slots.
 */
unsigned pmd_verify_pages(struct pmd_worker *w, struct pmd_chunk *c, char *addr, unsigned lo,
			  unsigned hi);

/* What a look at a chunk found in the pages partners raced (pmd_verify_chunk()). */
struct pmd_verify_tally {
	uint64_t raced_pages; /* pages judged slot by slot against the races on them */
	uint64_t timed;	      /* their slots whose store ran before or after every race: exact */
	uint64_t either;      /* their slots that may read zero or their stamp */
};

/*
 * pmd_verify_pages() of the whole chunk, adding to @t (may be NULL) what it
 * found in raced pages. A whole-chunk look by the owner settles what it
 * found (src/mem/verify.c): later looks are exact again.
 */
unsigned pmd_verify_chunk(struct pmd_worker *w, struct pmd_chunk *c, char *addr,
			  struct pmd_verify_tally *t);

/*
 * May slot @slot of page @page of chunk @c read zero without the kernel
 * having lost anything, by its expectations and, for a round just closed,
 * the races on it? (The self-tests inject a lost write only where not.)
 */
bool pmd_verify_may_read_zero(const struct pmd_arena *a, const struct pmd_chunk *c, unsigned page,
			      unsigned slot);

/*
 * While a round writes chunk @c: page @page must hold, in each slot, zero or
 * the stamp that slot's worker writes this round, nothing else (what a read
 * of fresh memory may see). Posts one event if not; returns the bad slots.
 */
unsigned pmd_verify_in_round(struct pmd_worker *w, struct pmd_chunk *c, char *addr, unsigned page);
/*
 * The same for a copy of page @page that another path took while the round
 * wrote it (a page vmsplice'd into a pipe and read back, a process_vm_readv):
 * @words holds its 512 words; @when ends the event's text.
 */
unsigned pmd_verify_copy_in_round(struct pmd_worker *w, struct pmd_chunk *c, unsigned page,
				  const uint64_t *words, const char *when);

/*
 * While a round writes chunk @c (the caller inside its disturb bracket,
 * pmd_chunk_disturb_begin(), with @addr entered): pages [lo, hi) no race
 * covers hold, in each slot, the stamp its worker stored where the round's
 * log says that store is done, zero or that stamp where it may be to come,
 * zero where nothing is written. Posts one event per bad page; *pages gets
 * the pages judged. Without a log (--verify off) judges nothing.
 */
unsigned pmd_verify_live(struct pmd_worker *w, struct pmd_chunk *c, char *addr, unsigned lo,
			 unsigned hi, unsigned *pages);

/* How chunk @c is mapped now; *pfn gets the first page's PFN where readable. */
enum pmd_thp_state pmd_thp_probe(struct pmd_run *run, const struct pmd_chunk *c, uint64_t *pfn);

/*
 * ---- race evidence (src/kernel/race.c) ------------------------------------------
 * The fault storm posts one record per round on its contested chunk: who
 * raced, each racer's first store (the only access of its round that can
 * find the PMD none), and how the chunk ended. The engine counts collided
 * rounds and seed-race rounds (a THP-path and a PTE-path fault on one
 * pmd_none PMD) from the kernel's trace events where it can read them, and
 * infers them from fault counts and the chunk's state where it cannot.
 */
enum pmd_race_role { PMD_ROLE_ANY = 0, PMD_ROLE_THP, PMD_ROLE_PTE };
/* How a seed round made its racers' paths differ (stress/fault_seed.h). */
enum { PMD_SEED_MECH_PRCTL = 1u << 0, PMD_SEED_MECH_MEMCG = 1u << 1 };
#define PMD_RACE_MAX_RACERS 8

struct pmd_racer_span {
	int tid;
	uint8_t role;	/* enum pmd_race_role */
	uint8_t faults; /* minor faults its first store took (seed rounds; else 0xff) */
	uint64_t lo, hi; /* its first store, pmd_now_ns() before and after; hi 0: none */
};

struct pmd_race_round {
	uint64_t t_start, t_end; /* the round, pmd_now_ns() */
	unsigned chunk;
	uint8_t seed;	   /* a seed round (roles, a mechanism) */
	uint8_t mech;	   /* the mechanism(s) a seed round used (stress/fault_seed.h) */
	uint8_t end_state; /* enum pmd_thp_state after the stores, before verifying */
	uint8_t disturbed; /* a partner changed the chunk's mapping during the round */
	uint8_t collided;  /* two or more racers' first stores overlapped in time */
	uint8_t readers;   /* racers 0..readers-1 loaded first (a zero-page fault): not classified */
	uint32_t clear_ns; /* a THP-role first store, as learned so far (seed rounds) */
	uint8_t nracers;
	struct pmd_racer_span r[PMD_RACE_MAX_RACERS];
};
void pmd_race_post(struct pmd_worker *w, const struct pmd_race_round *rr);
/* The mechanisms the storm can use here (bit mask) and why not the others. */
void pmd_race_mechanisms(struct pmd_run *run, unsigned mech, const char *why);

/* The hidden --inject option, parsed: which fault to cause where (tests only). */
enum pmd_inject_kind {
	PMD_INJECT_NONE = 0,
	PMD_INJECT_CORRUPT, /* write a wrong value into one slot (.class says which) */
	PMD_INJECT_HANG,    /* one worker blocks in the kernel for good */
	PMD_INJECT_SEGV,    /* one page of a live chunk becomes PROT_NONE under the workers */
	PMD_INJECT_SIGBUS,  /* ...or a page of a file truncated to nothing (SIGBUS) */
	PMD_INJECT_ZAP,	    /* after a zap op on a held chunk: what that op must not leave */
	PMD_INJECT_SEGV_FINAL, /* a page PROT_NONE as the storm's main thread verifies it last */
};

struct pmd_inject {
	enum pmd_inject_kind kind;
	enum pmd_class class;
	unsigned chunk, page, slot;
	unsigned after_rounds; /* inject in the round after this many */
	unsigned pages;	       /* corrupt this many pages from page on (1) */
};
const struct pmd_inject *pmd_inject_get(const struct pmd_run *run);
/* Record that the injection happened (address), once. */
bool pmd_inject_claim(struct pmd_run *run);

/* ---- spin-then-futex gate (see src/run/gate.c) ------------------------------ */

struct pmd_gate {
	uint32_t arrived;  /* atomic */
	uint32_t gen;	   /* atomic; futex word */
	uint32_t sleepers; /* atomic */
	uint32_t n;
	uint32_t spin;
};

/* @spin: busy-wait iterations before sleeping; 0 picks one from the CPU count. */
void pmd_gate_init(struct pmd_gate *g, unsigned n, unsigned spin);
/*
 * Wait for all n. The last to arrive runs @serial(@arg) (may be NULL) while
 * the others wait, then releases them all at once; everything @serial wrote
 * is visible to every waiter when it returns. Returns true in that caller.
 */
bool pmd_gate_pass(struct pmd_gate *g, void (*serial)(void *), void *arg);

/*
 * ---- the baton: groups of racers take turns (see src/run/gate.c) ------------
 * One batch of @slots groups races at a time. A group that ends its turn
 * (or leaves for good) calls pass() from its gate's serial step and keeps
 * the value returned; its workers then wait() until that batch's word
 * moves on (false: @stop said the run is over). A group of a batch other
 * than 0 waits with seen = 0 before its first round.
 */
struct pmd_baton_batch {
	uint32_t go;	  /* atomic; futex word: bumped when the batch's turn starts */
	uint32_t members; /* atomic: groups of the batch still running */
} __attribute__((aligned(64)));

struct pmd_baton {
	unsigned slots, nbatch;
	uint32_t left; /* atomic: groups of the running batch still in their turn */
	struct pmd_baton_batch *batches;
};

void pmd_baton_init(struct pmd_baton *b, unsigned ngroups, unsigned slots,
		    struct pmd_baton_batch *batches);
uint32_t pmd_baton_pass(struct pmd_baton *b, unsigned batch, bool leaving);
bool pmd_baton_wait(struct pmd_baton *b, unsigned batch, uint32_t seen, bool (*stop)(void *),
		    void *arg);
/* The run stops: every waiting group goes to its gate, to see it there. */
void pmd_baton_release_all(struct pmd_baton *b);

#endif
