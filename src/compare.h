/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pmdstress compare: an mmtests-style before/after table of JSON reports,
 * with Welch's t-test per metric. The statistics are here too, so the unit
 * tests can check them against published table values.
 */
#ifndef PMD_COMPARE_H
#define PMD_COMPARE_H

#include <stdbool.h>

/* Running mean and variance (Welford): one pass, no cancellation. */
struct pmd_welford {
	unsigned long n;
	double mean, m2;
};

void pmd_welford_add(struct pmd_welford *w, double x);
/* Sample standard deviation (n - 1); 0 for fewer than two values. */
double pmd_welford_stddev(const struct pmd_welford *w);

/* Regularised incomplete beta function I_x(a, b), for x in [0, 1]. */
double pmd_betai(double a, double b, double x);
/* Two-sided p-value of Student's t with @df degrees of freedom: P(|T| >= |t|). */
double pmd_student_p2(double t, double df);
/* The t with P(|T| >= t) = @alpha (two-sided critical value), df > 0. */
double pmd_student_crit2(double df, double alpha);

struct pmd_welch {
	double t, df, crit, p;
	bool significant; /* at the alpha asked for */
	bool testable;	  /* both samples have n >= 2 */
};

/* Welch's unequal-variance t-test of @b against @a, two-sided at @alpha. */
void pmd_welch_test(const struct pmd_welford *a, const struct pmd_welford *b, double alpha,
		    struct pmd_welch *out);

/* The subcommand: argv after "compare". Returns the exit status. */
int pmd_compare_main(int argc, char **argv);

#endif
