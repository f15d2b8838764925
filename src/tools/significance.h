/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The statistics behind 'pmdstress compare': running mean and variance,
 * Student's t distribution, Welch's test, Holm's correction for testing
 * many figures at once, and samples in two levels (rounds within a run or
 * boot, runs or boots within a side). Kept apart from the report reading
 * so that the unit tests can check them against published values.
 */
#ifndef PMD_SIGNIFICANCE_H
#define PMD_SIGNIFICANCE_H

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
	bool significant; /* at the alpha asked for, before any correction */
	bool testable;	  /* both samples have n >= 2 */
};

/* Welch's unequal-variance t-test of @b against @a, two-sided at @alpha. */
void pmd_welch_test(const struct pmd_welford *a, const struct pmd_welford *b, double alpha,
		    struct pmd_welch *out);

/*
 * Holm's step-down correction of @n p-values: @adj[i] is the adjusted
 * p-value of @p[i] (compare it with the family's alpha). 0, or -ENOMEM.
 */
int pmd_holm(const double *p, unsigned n, double *adj);

/*
 * Samples in two levels. Values arrive unit by unit (the rounds of one run
 * or one boot); pmd_nested_end_unit() closes a unit. @across holds one
 * value per unit, its mean: the sample to test when the unit is what is
 * replicated (rounds of one boot share its page cache, its host placement
 * and its clock, so they are not independent draws of a kernel's speed).
 * @flat holds every value as if independent; @within pools the spread of
 * values around their own unit's mean (for the report of how much of the
 * spread lies between units).
 */
struct pmd_nested {
	struct pmd_welford unit, across, flat;
	double within_m2;	 /* sum over units of their m2 */
	unsigned long within_df; /* sum over units of (n - 1) */
};

void pmd_nested_add(struct pmd_nested *s, double x);
void pmd_nested_end_unit(struct pmd_nested *s);
/* Pooled within-unit standard deviation; 0 without a unit of two values. */
double pmd_nested_within_sd(const struct pmd_nested *s);

#endif
