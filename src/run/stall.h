/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The workers' clocks of their progress and of their children (the
 * watchdog's side is monitor.c), and the hang dump; see stall.c.
 */
#ifndef PMD_STALL_H
#define PMD_STALL_H

#include <stdbool.h>
#include <stdint.h>

struct pmd_run;
struct pmd_wstats;

/*
 * A task's CPU time and run-queue wait, in ns (schedstat: "cpu_ns
 * run_delay_ns slices"; CONFIG_SCHED_INFO). False where the kernel does
 * not keep them.
 */
bool pmd_read_schedstat(const char *path, uint64_t *cpu, uint64_t *rq);
/*
 * How long worker @ws has gone without a beat at @now (pmd_coarse_ns()),
 * still: less what it waited for a CPU (not hung, only not scheduled) and
 * what it ran since its last reading. *@busy gets the time less the wait
 * only: on a CPU without a beat, judged against the longer limit.
 */
uint64_t pmd_worker_stall(const struct pmd_wstats *ws, uint64_t now, uint64_t *busy);
/*
 * The limit for a worker busy on a CPU without a beat: a livelock, or an
 * op that is only long (a 1 GiB round's faults, a compaction); 60 s at
 * least, as the timeout was before it fit the run.
 */
uint64_t pmd_busy_limit(uint64_t hang_timeout_ns);
/*
 * Every task's state, wchan and kernel stack, and those of the children
 * the workers wait for, into the report: once a run, the first caller's
 * (the watchdog, a worker whose child is stuck, the join).
 */
void pmd_hang_dump(struct pmd_run *run);

#endif
