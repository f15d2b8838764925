/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which limit was near when a syscall failed with ENOMEM or EAGAIN. Such a
 * failure is "resources" (exit 125: this machine cannot run it, git
 * bisect skips) only where the run can name the limit that explains it;
 * a kernel that returns ENOMEM with every limit far away is wrong, and the
 * run says so as an internal error (exit 5) naming what it read.
 */
#ifndef PMD_RESLIMITS_H
#define PMD_RESLIMITS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the limits were: UINT64_MAX where there is none. */
struct pmd_limit_reading {
	int err; /* ENOMEM or EAGAIN: which limits can explain it */
	bool root;
	uint64_t as_limit, as_used;	     /* RLIMIT_AS, VmSize */
	uint64_t memcg_limit, memcg_usage;   /* the tightest memory cgroup limit, its usage */
	uint64_t memcg_hits;		     /* memory.events "max" (v1 failcnt) since the start */
	uint64_t pids_limit, pids_current;   /* the tightest pids.max, its pids.current */
	uint64_t pids_hits;		     /* pids.events "max" since the start */
	uint64_t nproc_limit, nproc_used;    /* RLIMIT_NPROC, tasks of this user (not root) */
	uint64_t threads_max, threads;	     /* kernel.threads-max, tasks on the machine */
	uint64_t mem_total, mem_available;   /* /proc/meminfo */
	uint64_t oom_kills;		     /* vmstat oom_kill since the start */
	uint64_t map_count, max_map_count;   /* our VMAs, vm.max_map_count */
	int overcommit;			     /* vm.overcommit_memory */
	uint64_t commit_limit, committed;    /* CommitLimit, Committed_AS (mode 2) */
};

/*
 * The counters a reading is taken against, from the run's start, and the
 * files the cgroup limits are in, found then (the walk up the cgroup tree
 * is too deep a stack for a worker's).
 */
struct pmd_limits {
	char memcg_file[560], pids_file[560]; /* "" where there is none */
	uint64_t memcg_hits0, pids_hits0, oom_kills0;
	pthread_mutex_t lock; /* the cache below */
	uint64_t cached_at[2]; /* ENOMEM, EAGAIN */
	bool cached_near[2];
	char cached_why[2][224];
};

/* Before the workers start (the main thread): the files and the counters. */
void pmd_limits_start(struct pmd_limits *l);
/*
 * The same again once the run moved to a cgroup of its own (the seed race's
 * memcg way, before its workers start): the limits that hold the run now.
 * That cgroup's own limit is "max" then and is left out: the way sets it
 * only inside its windows, and an ENOMEM met there is the run's own
 * (pmd_memcg_window_since()), never the machine's.
 */
void pmd_limits_rebase(struct pmd_limits *l);
/* What the limits are now, for a failure with @err. */
void pmd_limits_read(const struct pmd_limits *l, int err, struct pmd_limit_reading *r);
/*
 * Whether a limit that explains @r->err was near (the pure rule, unit
 * tested). @why gets what was near, or, if none, what was read.
 */
bool pmd_limits_judge(const struct pmd_limit_reading *r, char *why, size_t len);
/*
 * Read and judge for a failure with @err (ENOMEM or EAGAIN; positive),
 * from any thread; a reading is reused for 50 ms, a burst of failures
 * costs one.
 */
bool pmd_limits_explain(struct pmd_limits *l, int err, char *why, size_t len);

#endif
