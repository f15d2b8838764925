/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The monitors: a thread that reads the kernel log from the run's start,
 * polls the taint mask and watches every worker's heartbeat. What they
 * find becomes events; a hang also ends the run.
 */
#ifndef PMD_MONITOR_H
#define PMD_MONITOR_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct pmd_run;

#define PMD_KLOG_MAX (16u << 10)

struct pmd_monitor {
	pthread_t thread;
	bool started;
	uint32_t stop; /* atomic */
	int kmsg_fd;
	int wake_fd; /* eventfd: pmd_monitor_stop() ends the thread's wait at once */
	char kmsg_status[160]; /* "reading", or why not */
	/* printk's clock minus CLOCK_MONOTONIC, and how sure we are of it */
	int64_t clock_off_ns;
	uint64_t clock_slack_ns;
	bool clock_measured; /* from our marker line; else assumed 0 */
	bool taint_ok;
	uint64_t taint0, taint_seen;
	uint64_t *hb_last, *hb_when; /* per worker: heartbeat value, when it last moved */
	/* the kernel's lines around every splat, for the report */
	char *klog;
	size_t klog_len;
	unsigned context_left; /* lines still to keep after a splat */
	char *hang_dump;       /* every task's state, wchan and stack, on a hang */
};

/* Open the kernel log at its end and note the taint mask: before the workers start. */
void pmd_monitor_open(struct pmd_run *run);
/* Start the thread (after the workers are released). */
void pmd_monitor_start(struct pmd_run *run);
/* Stop the thread, then read what the kernel logged until now. */
void pmd_monitor_stop(struct pmd_run *run);
void pmd_monitor_close(struct pmd_run *run);

#endif
