/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The monitors: the main thread reads the kernel log from the run's
 * start, polls the taint mask and watches every worker's heartbeat
 * between its samples. What they find becomes events; a hang also ends
 * the run.
 */
#ifndef PMD_MONITOR_H
#define PMD_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct pmd_run;

#define PMD_KLOG_MAX (16u << 10)
/*
 * Once the kernel log had a splat, a worker or a storm that makes no progress
 * for this long is a hang, whatever --hang-timeout says: after a BUG the
 * kernel may have left it asleep for good.
 */
#define PMD_SPLAT_LEASH_NS 3000000000ull

/*
 * Whether the kernel log is watched. Not root, it may be closed to us
 * (kernel.dmesg_restrict): a limitation the report states, the run goes
 * on. As root it must be readable: if not, the run was blind to every
 * splat and cannot say the kernel is good (exit 125, status "blind").
 */
enum pmd_kmsg_state {
	PMD_KMSG_NOT_OPENED = 0,
	PMD_KMSG_READING,
	PMD_KMSG_UNPRIVILEGED,
	PMD_KMSG_BLIND,
};

const char *pmd_kmsg_state_name(enum pmd_kmsg_state s);

struct pmd_monitor {
	int kmsg_fd;
	enum pmd_kmsg_state kmsg_state;
	uint64_t next_slow; /* when the taint mask and heartbeats are next looked at */
	char kmsg_status[160]; /* "reading", or why not */
	/* printk's clock minus CLOCK_MONOTONIC, and how sure we are of it */
	int64_t clock_off_ns;
	uint64_t clock_slack_ns;
	bool clock_measured; /* from our marker line; else assumed 0 */
	bool taint_ok;
	uint64_t taint0, taint_seen;
	uint64_t *hb_last, *hb_when; /* per worker: heartbeat value, when it last moved */
	uint64_t *child_seen;	     /* per worker: its child's CPU + run-queue ns, last seen */
	uint64_t *child_moved;	     /* and when they last changed (pmd_now_ns()) */
	/* the kernel's lines around every splat, for the report */
	char *klog;
	size_t klog_len;
	unsigned context_left; /* lines still to keep after a splat */
	uint64_t kmsg_seq;     /* the last record read */
	const char *context;   /* said of a line instead of the active stressors, or NULL */
	char *hang_dump;       /* every task's state, wchan and stack, on a hang; atomic */
	bool dumping;	       /* atomic: the dump is taken (once a run) */
	bool hang_posted;      /* atomic: a hang event was posted (once a run) */
	/* the longest a worker went without a beat, by its own clock, and which */
	uint64_t gap_max_ns, busy_max_ns;
	bool schedstat_ok; /* else a worker's gaps are judged by the busy limit only */
	char gap_worker[48];
};

/* Open the kernel log at its end and note the taint mask: before the workers start. */
void pmd_monitor_open(struct pmd_run *run);
/* Watch the round's workers (after they are released). */
void pmd_monitor_start(struct pmd_run *run);
/*
 * Read what the log has (its fd, kmsg_fd, is readable when there is
 * more) and, when they are due, the taint mask and the heartbeats.
 * Returns when the next slow check is due, on pmd_now_ns()'s clock.
 */
uint64_t pmd_monitor_tick(struct pmd_run *run, uint64_t now);
/*
 * One record as read(2) from /dev/kmsg returns it (@buf is changed), taken
 * as the monitor takes those it reads during the run: the supervisor's way
 * to hand over what the kernel said after the storm's last read.
 */
void pmd_monitor_record(struct pmd_run *run, char *buf, size_t len);
/*
 * Every task of process @pid (0: this one): "task TID comm state S wchan W"
 * and, where readable (root), its kernel stack. Malloc'ed, or NULL.
 */
char *pmd_task_dump(pid_t pid);
/*
 * The round is over: read what the kernel logged until now, and judge
 * every worker's longest stall (a hang, if over --hang-timeout).
 */
void pmd_monitor_stop(struct pmd_run *run);
/* Post hang event @ev with the dump, unless a hang was posted already (one a run). */
struct pmd_event;
void pmd_monitor_post_hang(struct pmd_run *run, struct pmd_event *ev);
/*
 * Whether the child worker @i waits for ran or waited for a CPU within the
 * last second, by the readings of the calls so far (the join calls it
 * every 100 ms): a child slow under valgrind or on a loaded machine, not a
 * stuck one.
 */
bool pmd_monitor_child_moving(struct pmd_run *run, unsigned i);
/*
 * Whether worker @i, not back, is still within --hang-timeout but busy on
 * a CPU (a long op): the join then waits for it up to the busy limit.
 */
bool pmd_monitor_worker_busy(struct pmd_run *run, unsigned i);
/*
 * SIGKILL the child worker @i waits for, marked as the run's kill
 * (pmd_child_killed()); false if it has none. And every worker's: how many.
 */
bool pmd_monitor_kill_child(struct pmd_run *run, unsigned i);
unsigned pmd_monitor_kill_children(struct pmd_run *run);
void pmd_monitor_close(struct pmd_run *run);

#endif
