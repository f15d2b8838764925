/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Race evidence (src/kernel/race.c): what the fault storm's rounds really raced.
 * Counted from the records the storm posts (pmd_race_post), and checked
 * against the kernel's own trace events where tracefs can be had (root):
 * kmem:mm_page_alloc/mm_page_free of the racers' threads, in a tracefs
 * instance of the run's own. Engine-internal.
 */
#ifndef PMD_RACE_H
#define PMD_RACE_H

#include <pmdstress/stressor.h>

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pmd_run;
struct race_tracer;

/* What inference says of a round (pmd_race_infer). */
enum pmd_race_inference {
	PMD_INFER_NONE = 0,
	PMD_INFER_THP_LOST, /* a THP-path fault lost the PMD to a page table */
	PMD_INFER_PTE_LOST, /* a PTE-path fault lost the PMD to a huge PMD */
};

/* Paths a racer's first store took, from trace events (pmd_race_classify). */
enum { PMD_PATH_THP = 1u << 0, PMD_PATH_PTE = 1u << 1 };

/* One trace event of a racer's thread that tells a path. */
enum pmd_race_ev_kind {
	PMD_EV_HUGE_ALLOC = 1,
	PMD_EV_HUGE_FREE,
	PMD_EV_PGTABLE,
	/* kprobe events where the kernel has them: the paths' entry points themselves */
	PMD_EV_KP_THP, /* do_huge_pmd_anonymous_page() */
	PMD_EV_KP_PTE, /* __pte_alloc() */
	/* the storm's own mark in its instance (trace_marker): its thread group's id */
	PMD_EV_SELF,
};
struct pmd_race_ev {
	uint64_t ts; /* CLOCK_MONOTONIC ns (trace_clock mono, microsecond text) */
	int tid;
	int kind;   /* enum pmd_race_ev_kind; 0: not one of ours */
	int worker; /* N of a thread named "pmd/fault/N" (src/run/run.c), else -1 */
	int tgid;   /* its thread group, where the line shows it (record-tgid), else 0 */
};

struct pmd_race {
	/* from the posted records (atomic) */
	uint64_t rounds, collided, seed_rounds, disturbed;
	uint64_t inferred, inferred_thp_lost, inferred_pte_lost;
	/* from trace events, rounds the trace covered (main thread only) */
	uint64_t traced_rounds, traced_seed, traced_thp_only, traced_pte_only, traced_mixed_racer;
	uint64_t agree, inferred_only, traced_only; /* inference against the trace, per round */
	uint64_t trace_lost;			    /* rounds left out: the trace lost events */
	/* kprobes on the paths' functions, where the kernel has them: the check of the above */
	bool kprobes;
	uint64_t kp_seed, kp_agree, kp_only, ev_only;
	unsigned mech;				    /* mechanisms the storm could use */
	bool mech_set;
	char mech_why[160];
	bool tracing;	     /* the trace is on for this run */
	bool trace_by_name;  /* racers traced by task name and thread group (pid namespace) */
	char trace_why[200]; /* why not, when it is off */
	struct race_tracer *tr;
};

/* Pure parts, unit-tested: */
/*
 * A tracefs filter matching the thread ids @tid[0..n) (sorted in place),
 * runs of consecutive ids as one range: "common_pid >= 10 && common_pid <=
 * 12 || common_pid == 20". False, and @buf empty, for none or when it does
 * not fit in @len.
 */
bool pmd_race_pid_filter(int *tid, size_t n, char *buf, size_t len);
/*
 * Why a trace that judged @traced rounds cannot be believed, or NULL: it
 * took no event of the racers at all (@seen 0) over 100 rounds or more (a
 * filter on ids that are not theirs: blind, not a kernel without races),
 * or two threads of one name met in a trace by name (@clash).
 */
const char *pmd_race_trace_void_why(uint64_t traced, uint64_t seen, bool by_name, bool clash);
enum pmd_race_inference pmd_race_infer(const struct pmd_race_round *rr);
/* Parse a line of a tracefs trace; false if it is not a line of ours. */
bool pmd_race_parse_line(const char *line, struct pmd_race_ev *ev);
/* The paths @tid's first store in [lo, hi] took, from events sorted by time. */
unsigned pmd_race_classify(const struct pmd_race_ev *ev, size_t n, int tid, uint64_t lo,
			   uint64_t hi);
/* The same from kprobe events on the two paths' functions (PMD_EV_KP_*). */
unsigned pmd_race_classify_kprobe(const struct pmd_race_ev *ev, size_t n, int tid, uint64_t lo,
				  uint64_t hi);
/* A round's paths: true if one racer took the THP path and another the PTE path. */
bool pmd_race_seed_of(const unsigned *paths, unsigned n);

/* The engine's side. */
void pmd_race_trace_start(struct pmd_run *run); /* before the workers are released */
uint64_t pmd_race_trace_poll(struct pmd_run *run); /* main loop; returns when next */
void pmd_race_trace_stop(struct pmd_run *run);	   /* after they joined: the rest, then off */
/* The supervisor: remove what a storm process of @pid left when it died. */
void pmd_race_trace_remove(int pid);
/* The figure a report gives: traced when the trace ran, else inferred. */
uint64_t pmd_race_seed_count(const struct pmd_race *r, const char **how);
struct json_t *pmd_race_json(const struct pmd_run *run, double secs);

#endif
