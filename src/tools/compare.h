/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pmdstress compare: an mmtests-style before/after table of JSON reports,
 * and a gate for CI (the statistics are in significance.h).
 */
#ifndef PMD_COMPARE_H
#define PMD_COMPARE_H

/* The subcommand: argv after "compare". Returns the exit status. */
int pmd_compare_main(int argc, char **argv);

#endif
