/* SPDX-License-Identifier: GPL-2.0 */
/* The state of one run, owned by src/run/run.c; engine-internal. */
#ifndef PMD_RUN_H
#define PMD_RUN_H

#include <pmdstress/stressor.h>

#include "reslimits.h"
#include "memcg.h"
#include "monitor.h"
#include "numa.h"
#include "progress.h"
#include "race.h"
#include "sigwatch.h"
#include "sysinfo.h"
#include "vmstat.h"

#include <pthread.h>
#include <sys/types.h>
#include <stdio.h>
#include <urcu/wfcqueue.h>

/* Counters kept for every stressor, whatever its metrics. */
struct pmd_totals {
	uint64_t counter[PMD_MAX_METRICS];
	struct pmd_hist hist[PMD_MAX_METRICS];
	uint64_t faults;
	uint64_t thp[PMD_THPS_COUNT];
};

/*
 * A latency histogram as the report gives it. A bench round keeps this,
 * not its buckets: a mapping per latency and round would, in a long run of
 * short rounds, use up memory and vm.max_map_count.
 */
struct pmd_lat_digest {
	uint64_t count, min, max, p50, p90, p99, p99_9;
	double mean;
};
void pmd_lat_digest(const struct pmd_hist *h, struct pmd_lat_digest *d);

struct pmd_event_node {
	struct cds_wfcq_node node;
	struct pmd_event ev;
};

struct pmd_run {
	const struct pmd_config *cfg;
	struct pmd_arena arena;
	struct pmd_sinst sinst[PMD_MAX_STRESSORS];
	unsigned nsinst;
	struct pmd_worker *workers;
	unsigned nworkers;
	struct pmd_wstats *wstats; /* nworkers, cache-line aligned */
	pthread_t *threads;
	bool *started; /* thread i exists */
	uint32_t go;   /* atomic futex word: 1 releases the workers */
	uint32_t live; /* atomic: workers still running */
	pthread_t main_thread;
	pid_t main_tid; /* for tgkill from a signal handler */
	bool setup_failed[PMD_MAX_STRESSORS];

	uint32_t stop; /* atomic; also a futex word for pmd_sleep() */
	uint64_t t0;   /* pmd_now_ns() at the start gate */
	uint64_t t_end;
	uint64_t wall_start; /* unix seconds */
	uint64_t t_origin;   /* t0 of the first round: the clock events are reported on */
	uint64_t start_ns;   /* spawning the workers and their setup, first round */
	unsigned long long start_rss_before, start_rss_after;
	int stop_signal;     /* atomic: the signal that stopped the run, or 0 */
	struct pmd_sigwatch sigwatch; /* takes the signals outside the main loop */
	bool aborting;	     /* atomic: a monitor ended the run (hang, fault on a live chunk) */
	bool abort_claimed;  /* atomic: the first to abort, before its reason is written */
	char abort_reason[32];
	struct pmd_monitor mon;
	/* a fault on a live chunk, filled by the signal handler (src/run/fatal.c) */
	struct pmd_event fatal_ev;
	uint32_t fatal_pending; /* atomic: 1 filling, 2 filled, 3 posted */
	FILE *jsonl; /* --jsonl */
	struct pmd_sample last_sample; /* at the last tick */
	char stop_reason[64];

	/* events: posted wait-free, drained by the main thread */
	struct cds_wfcq_head ev_head;
	struct cds_wfcq_tail ev_tail;
	struct pmd_event_node *ev_pool; /* PMD_EVENTS_KEPT nodes, one per post number */
	uint64_t ev_count[PMD_EV_KIND_COUNT];
	uint64_t resource_errors; /* atomic: EAGAIN or ENOMEM errors a near limit explains */
	uint64_t own_limit_errors; /* atomic: ENOMEM met in the seed way's own memcg window */
	struct pmd_limits limits; /* which limits are near, for those (src/kernel/reslimits.c) */
	bool internal_claimed;	  /* atomic: first_internal is being written or written */
	char first_internal[320]; /* the first error no limit explains: the verdict's line */
	uint64_t class_count[PMD_CLASS_COUNT];
	uint64_t ev_posted; /* atomic: posted so far (the live line reads it) */
	struct pmd_event kept[PMD_EVENTS_KEPT];
	unsigned nkept;
	bool dumped; /* the first corruption's forensic dump is out (src/run/forensics.c) */
	uint64_t dropped;

	/* THP state probing */
	int pagemap_fd, kpageflags_fd;
	bool scan_ok; /* PAGEMAP_SCAN works on this kernel */

	/* test-only corruption */
	struct pmd_inject inject;
	uint32_t inject_done; /* atomic */

	struct pmd_sysinfo sys;
	struct pmd_numa numa; /* topology, placement, where workers ran (src/kernel/numa.c) */
	struct pmd_memcg memcg; /* --memcg-headroom (src/kernel/memcg.c) */
	struct pmd_race race;	/* what the storm's rounds raced (src/kernel/race.c) */
	uint32_t partner_ppm;	/* --partner-cpu: each partner worker's CPU share, ppm; 0: none */
	struct pmd_vmstat vm_before, vm_after;
	double thp_share_end; /* AnonHugePages / Rss of the arena at the end, -1 unknown */
	uint64_t arena_rss_end, arena_huge_end;
	uint64_t tool_rss_end; /* Rss of everything but the arena, at the end */

	/* merged results, per stressor instance (bench mode: over the measured rounds) */
	struct pmd_totals totals[PMD_MAX_STRESSORS];
	/* bench mode (--rounds): one entry per round, src/tools/bench.c */
	struct pmd_round *rounds;
	unsigned nrounds;
	unsigned rounds_cap; /* entries the rounds' mapping holds */
	struct pmd_totals measured[PMD_MAX_STRESSORS]; /* summed as measured rounds end */
	double measured_secs; /* sum over measured rounds; 0 outside bench mode */
	int exit_code;
	const char *status; /* clean, corruption, live_fault, crash, kernel, hang, internal, ... */
	char verdict[256];

	/* in the storm: its end of the pipe to the supervisor (src/run/storm.c), -1 none */
	int storm_fd;
	void *storm_buf;	 /* pmd_storm_reserve(): the results' scratch */
	size_t storm_buf_len;
	unsigned storm_sent;	 /* kept events forwarded so far */
	uint64_t storm_seq;	 /* the kernel log record the forwarded events cover */
	uint64_t storm_beat_ns;	 /* when the last beat went */
	unsigned storm_phase;	 /* enum pmd_phase of the last beat */
	/* in the supervisor: the storm process died of this signal, which it did not send */
	int storm_signal;
};

/*
 * One round of bench mode: what each stressor did in it. A stressor's part
 * lies together, so a round of one stressor writes a page or two of the
 * rounds' mapping (src/tools/bench.c); the rest is never touched, never resident.
 */
struct pmd_round_stressor {
	struct pmd_sinst si; /* name, workers, skipped */
	/* counters, and of each histogram count, sum, min and max (no buckets) */
	struct pmd_totals t;
	struct pmd_lat_digest lat[PMD_MAX_METRICS];
};

struct pmd_round {
	unsigned index;
	bool warmup;
	double secs;
	char stop_reason[64];
	unsigned nsinst;
	struct pmd_round_stressor st[PMD_MAX_STRESSORS];
};

/*
 * A run: the supervisor (src/run/supervise.c) forks the storm and reports what
 * it learnt from it and from the kernel. Returns the exit status.
 */
int pmd_run_main(const struct pmd_config *cfg, int argc, char **argv);
/*
 * The storm, in the child process: arena, workers, rounds, verification;
 * its findings go to @fd (src/run/storm.c). 0 once the results are sent, or the
 * exit status of a run that could not start (2, 5, 125; said on stderr).
 */
int pmd_storm_main(const struct pmd_config *cfg, int fd);
/* The verdict, the reports and the last line on stderr; the exit status. */
int pmd_run_report(struct pmd_run *run, int argc, char **argv);
/* End the run now from any thread (hang, fault on a live chunk): report, do not wait long. */
void pmd_run_abort(struct pmd_run *run, const char *why);
/* The same, from a signal handler: only async-signal-safe calls. */
void pmd_run_abort_signal(struct pmd_run *run);

/* Bench mode (src/tools/bench.c): keep a finished round, and fold the measured ones. */
void pmd_bench_round_done(struct pmd_run *run, unsigned index, bool warmup);
void pmd_bench_finish(struct pmd_run *run);
void pmd_bench_free(struct pmd_run *run);

/* Drain the event queue into the kept/counted store. Main thread only. */
void pmd_events_drain(struct pmd_run *run);
void pmd_events_init(struct pmd_run *run);
void pmd_events_fini(struct pmd_run *run);

/* THP probing resources (src/mem/thpprobe.c). */
void pmd_thp_probe_init(struct pmd_run *run);
void pmd_thp_probe_fini(struct pmd_run *run);
const char *pmd_thp_probe_method(const struct pmd_run *run);
const char *pmd_thp_probe_unavailable(const struct pmd_run *run);
/* PFN mapped at @addr, 0 if not present or not visible (needs CAP_SYS_ADMIN). */
uint64_t pmd_page_pfn(struct pmd_run *run, const void *addr);
/*
 * Arena-wide Rss and AnonHugePages from one pass over /proc/self/smaps, and
 * (if @other) the Rss of everything else: pmdstress's own memory.
 */
int pmd_arena_smaps(const struct pmd_arena *a, uint64_t *rss, uint64_t *huge, uint64_t *other);

/* The arena, with @nspare spare slots after it (include/pmdstress/arena.h). */
int pmd_arena_create(struct pmd_arena *a, const struct pmd_config *cfg, unsigned nspare);
void pmd_arena_destroy(struct pmd_arena *a);
/* Give the arena's memory back to the kernel, keeping its description for the report. */
void pmd_arena_unmap(struct pmd_arena *a);

int pmd_inject_parse(const char *text, unsigned nchunks, struct pmd_inject *inj, char *err,
		     size_t errlen);

#endif
