/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the brk and page stressors share (implemented in stress/brk.c): the
 * program break, which a process has exactly one of, and the loop that moves
 * it up, optionally touches what it gained, and moves it back. See brk.c for
 * why that is safe beside glibc's malloc.
 */
#ifndef PMDSTRESS_STRESS_BRK_H
#define PMDSTRESS_STRESS_BRK_H

#include <pmdstress/stressor.h>

struct pmd_brk_loop {
	uint64_t size; /* bytes the break moves up and back each cycle */
	bool touch;    /* write every page gained before moving back */
	uint64_t rate; /* cycles per second, all workers of the stressor (0: back to back) */
	bool nudge;    /* test only: move the break behind the loop's back once */
};

/* Metric indices of pmd_brk_metrics, the table both stressors use. */
enum {
	PMD_BRK_M_OPS,
	PMD_BRK_M_PAGES,
	PMD_BRK_M_BAD,
	PMD_BRK_L_EXPAND,
	PMD_BRK_L_TOUCH,
	PMD_BRK_L_SHRINK,
	PMD_BRK_L_CYCLE,
};
extern const struct pmd_metric pmd_brk_metrics[];

/* NULL, or why a cycle of @size bytes cannot run here. */
const char *pmd_brk_supported(struct pmd_sinst *si, uint64_t size);
/* Take the break from malloc for the run (reference-counted over brk and page). */
int pmd_brk_setup(struct pmd_sinst *si);
void pmd_brk_teardown(struct pmd_sinst *si);
int pmd_brk_run(struct pmd_worker *w, const struct pmd_brk_loop *l);

#endif
