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

/* Tell the watchdog this worker is making progress. */
static inline void pmd_beat(struct pmd_worker *w)
{
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

/* Report that something went wrong that is not corruption (-errno style). */
void pmd_worker_error(struct pmd_worker *w, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Kernel settings a stressor changes (THP sysfs knobs; src/restore.c).
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
 * --memcg-headroom (src/memcg.c): set the run's memory-cgroup limit to its
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
 * child's (src/pool.c): the parent opens the way out before fork() (-1 when
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

/*
 * While a round writes chunk @c: page @page must hold, in each slot, zero or
 * the stamp that slot's worker writes this round, nothing else (what a read
 * of fresh memory may see). Posts one event if not; returns the bad slots.
 */
unsigned pmd_verify_in_round(struct pmd_worker *w, struct pmd_chunk *c, char *addr, unsigned page);

/* How chunk @c is mapped now; *pfn gets the first page's PFN where readable. */
enum pmd_thp_state pmd_thp_probe(struct pmd_run *run, const struct pmd_chunk *c, uint64_t *pfn);

/*
 * ---- race evidence (src/race.c) ------------------------------------------
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

/* ---- spin-then-futex gate (see src/gate.c) ------------------------------ */

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
 * ---- the baton: groups of racers take turns (see src/gate.c) ------------
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
