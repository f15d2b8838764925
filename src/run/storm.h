/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the storm tells its supervisor. The storm (the workers, the arena,
 * the stressors: everything a broken kernel can corrupt) is a child process;
 * the supervisor (src/run/supervise.c) reads the kernel log, keeps the verdict
 * and writes the reports. They share no memory: the storm writes messages
 * to a pipe, each a header (magic, type, length, checksum) and a payload the
 * supervisor checks before it takes anything from it, so a storm whose heap
 * the kernel corrupted can send nonsense but cannot crash its supervisor.
 */
#ifndef PMD_STORM_H
#define PMD_STORM_H

#include <pmdstress/event.h>

#include <stdbool.h>
#include <stdint.h>

struct pmd_run;

#define PMD_MSG_MAGIC 0x706d6473u /* "pmds" */

enum pmd_msg_type {
	PMD_MSG_BEAT = 1, /* struct pmd_beat: alive, in which phase, what it counted */
	PMD_MSG_EVENT,	  /* struct pmd_event: a kept event, as the storm drained it */
	PMD_MSG_RUN,	  /* struct pmd_run as it stands (arg 1: the final one) */
	PMD_MSG_WORKERS,  /* struct pmd_msg_worker per worker */
	PMD_MSG_HIST,	  /* struct pmd_msg_hist: one page of a result histogram */
	PMD_MSG_ROUND,	  /* a bench round: struct pmd_round up to its nsinst stressors */
	PMD_MSG_TEXT,	  /* arg 0: the storm's hang dump; 1: its kernel log lines */
	PMD_MSG_END,	  /* the results are complete */
};

/* What the storm is doing, so the supervisor knows what silence means. */
enum pmd_phase {
	PMD_PHASE_START, /* start-up, setups, a bench round's change-over */
	PMD_PHASE_RUN,	 /* the main loop: it beats at least twice a second */
	PMD_PHASE_SOLO,	 /* --single-thread: the worker holds the main thread */
	PMD_PHASE_END,	 /* stop, join, verify, teardown, results, exit */
};

struct pmd_msg_hdr {
	uint32_t magic, type, arg, len;
	uint64_t sum; /* of the payload */
	/*
	 * Where the storm's image has pmd_stressors. A PIE build (the ASan
	 * one) is loaded at another address in each process, so a stressor or
	 * a name the storm points to is found in ours at the same offset.
	 */
	uint64_t image;
};

struct pmd_beat {
	uint32_t phase;
	int32_t guard_pid; /* the settings guardian (src/kernel/restore_guard.c), 0 none */
	uint64_t quiet_ns; /* it may be silent this long from now (a solo round) */
	uint64_t kmsg_seq; /* the last kernel log record its events were forwarded for */
	uint64_t t0, t_origin;
	uint64_t ev_count[PMD_EV_KIND_COUNT], class_count[PMD_CLASS_COUNT];
	uint64_t ev_posted, dropped, resource_errors;
};

struct pmd_msg_worker {
	uint32_t sinst, index, id, pad;
	int32_t bound, cpu, node, err; /* struct pmd_numa_where */
};

#define PMD_MSG_HIST_BUCKETS 512 /* a page of them: PMD_HIST_PAGE_BUCKETS */

struct pmd_msg_hist {
	uint32_t sinst, metric, page, pad;
	uint64_t bucket[PMD_MSG_HIST_BUCKETS];
};

uint64_t pmd_msg_sum(const void *p, uint32_t len);

/*
 * The storm's side (run->storm_fd; all no-ops without one). A beat goes at
 * most every 250 ms unless the phase changed, and never blocks: a full pipe
 * (a supervisor stopped by job control) skips it.
 */
void pmd_storm_beat(struct pmd_run *run, enum pmd_phase phase, uint64_t quiet_ns);
/* Drain the event queue and forward what was kept since the last time, then beat. */
void pmd_storm_events(struct pmd_run *run);
/* The run's description and results; @final: all of them, then END. 0 or -errno. */
/*
 * The memory the results are sent from, taken when the workers are known:
 * at the end of a run a limit (vm.max_map_count, a memcg) may refuse it.
 */
int pmd_storm_reserve(struct pmd_run *run);
int pmd_storm_results(struct pmd_run *run, bool final);

/*
 * The supervisor's side: what it took from the storm's messages so far.
 * Set @run (the supervisor's own, which the messages fill field by field,
 * checked) and @cfg; the rest starts zero.
 */
struct pmd_storm_view {
	struct pmd_run *run;
	const struct pmd_config *cfg;
	char *buf; /* bytes read, not yet a whole message */
	size_t have, cap;
	bool damaged;	/* a message failed its checks: nothing more is taken */
	bool got_run;	/* a RUN message was taken */
	bool ended;	/* END came: the results are complete */
	uint32_t phase; /* enum pmd_phase of the last beat */
	int guard_pid;
	uint64_t kmsg_seq;	 /* the last kernel log record its events cover */
	uintptr_t image_delta;	 /* its image's address less ours (struct pmd_msg_hdr) */
	uint64_t last_ns;	 /* when bytes last came */
	uint64_t quiet_until_ns; /* it said it may be silent until then */
};

/* Read what came on @fd and take every whole message; false at its end. */
bool pmd_storm_read(struct pmd_storm_view *v, int fd);
void pmd_storm_view_free(struct pmd_storm_view *v);

#endif
