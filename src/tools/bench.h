/* SPDX-License-Identifier: GPL-2.0 */
/* Bench mode's per-round table and its summary (src/tools/bench.c). */
#ifndef PMD_BENCH_H
#define PMD_BENCH_H

#include <stdio.h>

struct pmd_run;
struct pmd_round;

#define PMD_BENCH_MAX_COLS 32

struct pmd_bench_summary {
	unsigned n, ncols; /* measured rounds, columns */
	char name[PMD_BENCH_MAX_COLS][48];
	double mean[PMD_BENCH_MAX_COLS], stddev[PMD_BENCH_MAX_COLS];
	double min[PMD_BENCH_MAX_COLS], max[PMD_BENCH_MAX_COLS], m2[PMD_BENCH_MAX_COLS];
};

void pmd_bench_row(FILE *out, const struct pmd_run *run, const struct pmd_round *r);
void pmd_bench_summary(FILE *out, const struct pmd_run *run);
void pmd_bench_stats(const struct pmd_run *run, struct pmd_bench_summary *sum);
/* Column @col of round @i (0 if absent). */
double pmd_bench_value(const struct pmd_run *run, unsigned i, unsigned col);

#endif
