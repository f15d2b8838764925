/* SPDX-License-Identifier: GPL-2.0 */
/* What a failing run leaves for whoever reproduces it, and the kernel-side reconciliation. */
#ifndef PMD_FORENSICS_H
#define PMD_FORENSICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pmd_run;
struct pmd_sinst;
struct pmd_totals;

/* One command line that reruns the same scenario with the same seed and options. */
void pmd_rerun_command(const struct pmd_run *run, char *buf, size_t len);

/* Race coverage of a stressor that declares it (PMD_MF_RACE_*): false if it does not. */
bool pmd_race_of(const struct pmd_sinst *si, const struct pmd_totals *t, uint64_t *rounds,
		 uint64_t *hits);

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
