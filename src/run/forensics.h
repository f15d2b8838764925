/* SPDX-License-Identifier: GPL-2.0 */
/* What a failing run leaves for whoever reproduces it, and the kernel-side reconciliation. */
#ifndef PMD_FORENSICS_H
#define PMD_FORENSICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct pmd_event;
struct pmd_run;
struct pmd_sinst;
struct pmd_totals;

/* One command line that reruns the same scenario with the same seed and options. */
void pmd_rerun_command(const struct pmd_run *run, char *buf, size_t len);

/* A chunk's last operations before event @e, one line (oldest first, at most 8). */
void pmd_ring_text(FILE *out, const struct pmd_run *run, const struct pmd_event *e);

/*
 * On stderr at once, when the first corruption reaches the main thread: what
 * it was, the chunk's last operations, the seed and the rerun command, so
 * that a run killed afterwards (a CI timeout, kill -9) still leaves them.
 */
void pmd_forensic_dump(const struct pmd_run *run, const struct pmd_event *e);

/* Race coverage of a stressor that declares it (PMD_MF_RACE_*): false if it does not. */
bool pmd_race_of(const struct pmd_sinst *si, const struct pmd_totals *t, uint64_t *rounds,
		 uint64_t *hits);

/*
 * Whether no race was possible in @run, with the racing stressor's reason
 * (one racer per group: no racer has a partner) in @why. False when a race
 * was possible, or no racing stressor ran.
 */
bool pmd_race_impossible(const struct pmd_run *run, char *why, size_t len);

/* What the workers counted next to what the kernel counted (system-wide). */
struct pmd_reconcile {
	uint64_t worker_faults, thp_chunks;
	int64_t pgfault, thp_fault_alloc, thp_fault_fallback, pgalloc;
	/* huge pages allocated beyond those that were mapped: losers of the install race */
	int64_t contested_huge;
	bool have_vmstat;
};
void pmd_reconcile(const struct pmd_run *run, struct pmd_reconcile *r);

#endif
