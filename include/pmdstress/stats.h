/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-worker statistics: counters and log-linear latency histograms, each
 * written by its one worker with relaxed atomics and read by the merger at
 * intervals, so no lock is ever shared.
 *
 * A histogram is exact below 1024 ns and keeps 512 sub-buckets per power of
 * two above, so any percentile is within 0.2% of the true value (three
 * significant digits). Its buckets live in lazily-populated anonymous memory:
 * a worker pays only for the pages its values actually reach.
 */
#ifndef PMDSTRESS_STATS_H
#define PMDSTRESS_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PMD_HIST_SUB_BITS 9			    /* 512 sub-buckets per octave */
#define PMD_HIST_LINEAR (2u << PMD_HIST_SUB_BITS)   /* values below are exact */
#define PMD_HIST_MAX_SHIFT 44			    /* up to ~4.9 hours in ns */
#define PMD_HIST_BUCKETS                                                                           \
	(PMD_HIST_LINEAR + (PMD_HIST_MAX_SHIFT - PMD_HIST_SUB_BITS - 1) * (1u << PMD_HIST_SUB_BITS))

struct pmd_hist {
	uint64_t count, sum, min, max;
	uint64_t touched;  /* bit i: bucket page i holds a value (merge reads only those) */
	uint64_t *buckets; /* PMD_HIST_BUCKETS, lazily populated */
};

#define PMD_HIST_PAGE_BUCKETS 512 /* buckets per 4 KiB page */

int pmd_hist_init(struct pmd_hist *h);
void pmd_hist_free(struct pmd_hist *h);
unsigned pmd_hist_index(uint64_t v);
uint64_t pmd_hist_bucket_low(unsigned idx);
/* Single writer: relaxed atomics so a concurrent merger may read. */
void pmd_hist_record(struct pmd_hist *h, uint64_t v);
/* dst += src (dst owned by the caller; src may be live). */
void pmd_hist_merge(struct pmd_hist *dst, const struct pmd_hist *src);
/* Value at quantile q in [0,1]: the midpoint of the bucket holding it. */
uint64_t pmd_hist_quantile(const struct pmd_hist *h, double q);
double pmd_hist_mean(const struct pmd_hist *h);

/* What a stressor measures: counters and latencies, declared once. */
enum pmd_metric_kind {
	PMD_METRIC_COUNT,   /* summed over workers; rate = sum / seconds */
	PMD_METRIC_LATENCY, /* merged histogram; percentiles */
};

/* Which way is better, for before/after comparisons. */
enum pmd_better {
	PMD_BETTER_DEFAULT = 0, /* counters: higher (a rate); latencies: lower */
	PMD_BETTER_HIGHER,
	PMD_BETTER_LOWER,
	PMD_BETTER_NONE, /* not a performance figure (e.g. bad slots) */
};

enum pmd_metric_flags {
	/*
	 * A column of bench mode's per-round table: a counter as its total, a
	 * latency as its sum in ms and, when the stressor counted faults, as
	 * ns per fault (the seed benchmarks' "cost time" and "time per fault").
	 */
	PMD_MF_BENCH = 1u << 0,
	/*
	 * The race-coverage pair: rounds in which the race could happen, and
	 * those in which it did (two or more first touches of the contested
	 * chunk overlapped in time). The
	 * engine reports their share and rate, and the live series counts them.
	 */
	PMD_MF_RACE_ROUNDS = 1u << 1,
	PMD_MF_RACE_HITS = 1u << 2,
	/*
	 * Not a count but a digest (a sum of hashes): the JSON has it, the
	 * text report's counter table, where a total and a rate mean
	 * something, leaves it out.
	 */
	PMD_MF_DIGEST = 1u << 3,
};

struct pmd_metric {
	const char *name;
	enum pmd_metric_kind kind;
	const char *help;
	enum pmd_better better;
	unsigned flags;
};

#define PMD_MAX_METRICS 24

/* What a worker is doing, for the watchdog. */
enum pmd_worker_state {
	PMD_WS_NEW = 0,
	PMD_WS_RUNNING,
	PMD_WS_SLEEPING, /* in pmd_sleep(): waiting on purpose */
	PMD_WS_PEERS,	 /* waiting for the other workers of a round (a gate) */
	PMD_WS_DONE,
};

/* One worker's numbers; on its own cache lines. */
struct pmd_wstats {
	uint64_t counter[PMD_MAX_METRICS];
	struct pmd_hist hist[PMD_MAX_METRICS];
	uint64_t faults;  /* page faults the worker measured */
	uint64_t thp[8];  /* chunks verified per enum pmd_thp_state */
	uint64_t heartbeat; /* bumped at every loop iteration: the watchdog reads it */
	uint32_t state;	    /* enum pmd_worker_state; atomic */
	/*
	 * The worker's own clock of its progress (CLOCK_MONOTONIC_COARSE, ns):
	 * when it last beat, and the longest it went between two beats still
	 * (neither on a CPU nor waiting for one: schedstat's CPU time and
	 * run_delay, read into cpu_ns and rq_ns at rq_at, and asleep on
	 * purpose not counted) and busy (on a CPU without a beat: a
	 * livelock, or a long op). A stall the watchdog could not see as it
	 * happened (the whole process stopped, the main thread with it) is
	 * still in here afterwards. All atomic.
	 */
	uint64_t beat_ns;
	uint64_t gap_max_ns, busy_max_ns;
	uint64_t cpu_ns, rq_ns, rq_at;
	int32_t tid;
	int32_t child; /* the child the worker waits for (fork, exec), or 0 */
	uint64_t pace_cpu;  /* the worker's CPU time at its last pmd_pace() (ns) */
} __attribute__((aligned(64)));

static inline void pmd_counter_add(uint64_t *c, uint64_t n)
{
	/* single writer: a plain add made visible to the merger as an atomic store */
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

static inline uint64_t pmd_counter_read(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

#endif
