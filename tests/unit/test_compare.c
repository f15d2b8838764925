// SPDX-License-Identifier: GPL-2.0
/*
 * The statistics behind 'pmdstress compare': mean and stddev (Welford),
 * the incomplete beta function, Student's t critical values against the
 * published two-sided table, Welch's test on worked examples, Holm's
 * correction against hand-computed adjusted p-values, and the across-boots
 * samples: one mean per boot, tested across boots.
 */
#include "check.h"
#include "significance.h"

#include <math.h>

static bool close_to(double a, double b, double tol)
{
	return fabs(a - b) <= tol;
}

static struct pmd_welford sample(const double *x, unsigned n)
{
	struct pmd_welford w = { 0 };
	unsigned i;

	for (i = 0; i < n; i++)
		pmd_welford_add(&w, x[i]);
	return w;
}

static void test_welford(void)
{
	static const double x[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	static const double big[] = { 1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16 };
	struct pmd_welford w = sample(x, 8), b = sample(big, 4), one = sample(x, 1), none = { 0 };

	CHECK(w.n == 8 && close_to(w.mean, 5.0, 1e-12), "mean of 2,4,4,4,5,5,7,9 is 5 (%g)",
	      w.mean);
	/* population sd is 2; the sample sd (n - 1) is sqrt(32/7) */
	CHECK(close_to(pmd_welford_stddev(&w), sqrt(32.0 / 7.0), 1e-12), "sample stddev %g",
	      pmd_welford_stddev(&w));
	/* the textbook case where sum-of-squares cancels: Welford keeps the variance 30 */
	CHECK(close_to(b.mean, 1e9 + 10, 1e-6) && close_to(b.m2 / 3, 30.0, 1e-6),
	      "no cancellation around 1e9: variance %g", b.m2 / 3);
	CHECK(pmd_welford_stddev(&one) == 0 && one.mean == 2, "one value: stddev 0");
	CHECK(pmd_welford_stddev(&none) == 0 && none.n == 0, "no value: stddev 0");
}

static void test_betai(void)
{
	CHECK(pmd_betai(2, 3, 0) == 0 && pmd_betai(2, 3, 1) == 1, "I_0 = 0, I_1 = 1");
	/* I_x(1, 1) = x; I_x(a, 1) = x^a; I_0.5(a, a) = 0.5 */
	CHECK(close_to(pmd_betai(1, 1, 0.3), 0.3, 1e-12), "I_0.3(1,1) = 0.3 (%.15g)",
	      pmd_betai(1, 1, 0.3));
	CHECK(close_to(pmd_betai(3, 1, 0.5), 0.125, 1e-12), "I_0.5(3,1) = 0.125 (%.15g)",
	      pmd_betai(3, 1, 0.5));
	CHECK(close_to(pmd_betai(7.5, 7.5, 0.5), 0.5, 1e-12), "I_0.5(7.5,7.5) = 0.5 (%.15g)",
	      pmd_betai(7.5, 7.5, 0.5));
	/* I_x(2, 3) = 6x^2/2 - 8x^3/3 + 3x^4/4 ... in closed form: x^2 (6 - 8x + 3x^2) */
	CHECK(close_to(pmd_betai(2, 3, 0.4), 0.16 * (6 - 3.2 + 0.48), 1e-12),
	      "I_0.4(2,3) closed form (%.15g)", pmd_betai(2, 3, 0.4));
	CHECK(close_to(pmd_betai(2, 3, 0.9) + pmd_betai(3, 2, 0.1), 1, 1e-12),
	      "symmetry I_x(a,b) = 1 - I_(1-x)(b,a)");
}

static void test_student(void)
{
	/* two-sided 95% critical values, as printed in every t table */
	static const struct {
		double df, t95, t99;
	} tab[] = {
		{ 1, 12.706, 63.657 }, { 2, 4.303, 9.925 },   { 3, 3.182, 5.841 },
		{ 4, 2.776, 4.604 },   { 5, 2.571, 4.032 },   { 6, 2.447, 3.707 },
		{ 8, 2.306, 3.355 },   { 10, 2.228, 3.169 },  { 15, 2.131, 2.947 },
		{ 20, 2.086, 2.845 },  { 30, 2.042, 2.750 },  { 60, 2.000, 2.660 },
		{ 120, 1.980, 2.617 }, { 1e7, 1.960, 2.576 },
	};
	unsigned i;
	double prev = INFINITY;

	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		double c95 = pmd_student_crit2(tab[i].df, 0.05);
		double c99 = pmd_student_crit2(tab[i].df, 0.01);

		CHECK(close_to(c95, tab[i].t95, 0.0006), "t(0.975, df=%g) = %.4f, table %.3f",
		      tab[i].df, c95, tab[i].t95);
		CHECK(close_to(c99, tab[i].t99, 0.0006), "t(0.995, df=%g) = %.4f, table %.3f",
		      tab[i].df, c99, tab[i].t99);
		CHECK(close_to(pmd_student_p2(c95, tab[i].df), 0.05, 1e-9),
		      "p at the critical value is 0.05 (df=%g)", tab[i].df);
	}
	/* Welch's df is fractional: the critical value falls smoothly between the rows */
	for (i = 0; i < 40; i++) {
		double df = 1 + i * 0.25, c = pmd_student_crit2(df, 0.05);

		if (!(c < prev)) {
			CHECK(0, "critical value falls with df: %g at df=%g after %g", c, df, prev);
			break;
		}
		prev = c;
	}
	CHECK(i == 40, "critical value falls monotonically for df 1..10.75 in steps of 0.25");
	CHECK(pmd_student_crit2(2.5, 0.05) < 4.303 && pmd_student_crit2(2.5, 0.05) > 3.182,
	      "df 2.5 lies between the df 2 and df 3 rows (%.4f)", pmd_student_crit2(2.5, 0.05));
	CHECK(close_to(pmd_student_p2(0, 5), 1, 1e-12), "p(t=0) = 1");
	CHECK(close_to(pmd_student_p2(1, 1), 0.5, 1e-12), "Cauchy: P(|T| >= 1 | df=1) = 0.5");
	CHECK(isnan(pmd_student_crit2(0, 0.05)) && isnan(pmd_student_crit2(3, 0)),
	      "nonsense df or alpha: NaN, never a number that looks right");
}

static void test_welch(void)
{
	/* a well-known worked example (Welch's t-test, unequal variances) */
	static const double a1[] = { 27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1,
				     21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4 };
	static const double a2[] = { 27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0,
				     24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4 };
	static const double same[] = { 10, 11, 12, 13 }, same2[] = { 10.5, 11.5, 11, 12.5 };
	static const double flat[] = { 5, 5, 5 }, flat2[] = { 6, 6, 6 };
	struct pmd_welford w1 = sample(a1, 15), w2 = sample(a2, 15);
	struct pmd_welford s1 = sample(same, 4), s2 = sample(same2, 4);
	struct pmd_welford f1 = sample(flat, 3), f2 = sample(flat2, 3), one = sample(flat, 1);
	struct pmd_welch t;

	pmd_welch_test(&w1, &w2, 0.05, &t);
	/*
	 * t = (22.987 - 20.820) / sqrt(s1^2/15 + s2^2/15) = 2.4554, df = 24.989,
	 * p = 0.0214 (the p by numerical integration of the t density, apart from
	 * the incomplete beta used here)
	 */
	CHECK(close_to(t.t, 2.4554, 0.0005), "Welch t = %.4f (2.4554)", t.t);
	CHECK(close_to(t.df, 24.989, 0.005), "Welch-Satterthwaite df = %.3f (24.989)", t.df);
	CHECK(close_to(t.p, 0.02138, 0.0001), "p = %.5f (0.02138)", t.p);
	CHECK(t.testable && t.significant, "significant at 95%%");
	pmd_welch_test(&w1, &w2, 0.01, &t);
	CHECK(!t.significant, "not significant at 99%% (p %.3f > 0.01)", t.p);

	pmd_welch_test(&s1, &s2, 0.05, &t);
	CHECK(t.testable && !t.significant, "overlapping samples: not significant (p %.3f)", t.p);
	pmd_welch_test(&f1, &f2, 0.05, &t);
	CHECK(t.significant, "no spread at all and different means: significant");
	pmd_welch_test(&f1, &f1, 0.05, &t);
	CHECK(t.testable && !t.significant, "no spread and equal means: not significant");
	pmd_welch_test(&one, &f2, 0.05, &t);
	CHECK(!t.testable && !t.significant, "n = 1 on a side: no test");
}

static void test_holm(void)
{
	/* R: p.adjust(c(0.01, 0.02, 0.03, 0.04, 0.05), "holm") */
	static const double p5[] = { 0.01, 0.02, 0.03, 0.04, 0.05 };
	static const double want5[] = { 0.05, 0.08, 0.09, 0.09, 0.09 };
	/* out of order; by hand: 0.005*4, 0.01*3, 0.03*2, max(0.06, 0.04*1) */
	static const double p4[] = { 0.01, 0.04, 0.03, 0.005 };
	static const double want4[] = { 0.03, 0.06, 0.06, 0.02 };
	static const double big[] = { 0.5, 0.9, NAN };
	double adj[5];
	unsigned i;

	CHECK(pmd_holm(p5, 5, adj) == 0, "holm of 5");
	for (i = 0; i < 5; i++)
		CHECK(close_to(adj[i], want5[i], 1e-12), "holm p[%u] %.4f -> %.4f (%.2f)", i, p5[i],
		      adj[i], want5[i]);
	pmd_holm(p4, 4, adj);
	for (i = 0; i < 4; i++)
		CHECK(close_to(adj[i], want4[i], 1e-12), "holm, unsorted: p[%u] %.3f -> %.4f (%.2f)",
		      i, p4[i], adj[i], want4[i]);
	/* 0.02 stays under 0.05 (rejected); 0.03 is the first kept, so all after it are too */
	CHECK(adj[3] < 0.05 && adj[0] < 0.05 && !(adj[2] < 0.05) && !(adj[1] < 0.05),
	      "at 0.05: the two smallest are rejected, the others kept");
	pmd_holm(big, 3, adj);
	CHECK(adj[0] == 1 && adj[1] == 1 && adj[2] == 1, "capped at 1; NaN counts as 1 (%g %g %g)",
	      adj[0], adj[1], adj[2]);
	pmd_holm(p5, 1, adj);
	CHECK(adj[0] == 0.01, "a family of one is not adjusted");
	CHECK(pmd_holm(p5, 0, adj) == 0, "an empty family");
}

/*
 * Three boots a side, ten rounds each. The boots' means scatter by 10
 * (100, 110, 90), the rounds within a boot by 0.3; B is every value plus 8.
 * One mean per boot: t = 8 / sqrt(100/3 + 100/3) = 0.9798 on 4 df, p = 0.3827,
 * no change. The same 30 values a side taken as independent: t = 3.729 on
 * 58 df, p = 0.00044, a "change" that is only boot-to-boot drift. (p by
 * Simpson's rule on the t density, apart from the code under test.)
 */
static void test_nested(void)
{
	static const double means[] = { 100, 110, 90 };
	struct pmd_nested a = { 0 }, b = { 0 };
	struct pmd_welch t;
	unsigned i, j;

	for (i = 0; i < 3; i++) {
		for (j = 0; j < 10; j++) {
			pmd_nested_add(&a, means[i] - 0.45 + 0.1 * j);
			pmd_nested_add(&b, means[i] + 8 - 0.45 + 0.1 * j);
		}
		pmd_nested_end_unit(&a);
		pmd_nested_end_unit(&b);
	}
	pmd_nested_end_unit(&a); /* closing an empty unit adds nothing */
	CHECK(a.across.n == 3 && close_to(a.across.mean, 100, 1e-9),
	      "across boots: 3 samples, mean 100 (%lu, %g)", a.across.n, a.across.mean);
	CHECK(close_to(pmd_welford_stddev(&a.across), 10, 1e-9), "boot-to-boot sd 10 (%.6f)",
	      pmd_welford_stddev(&a.across));
	CHECK(a.flat.n == 30 && close_to(pmd_welford_stddev(&a.flat), 8.309684835718, 1e-9),
	      "all rounds: 30 values, sd 8.3097 (%.6f)", pmd_welford_stddev(&a.flat));
	CHECK(close_to(pmd_nested_within_sd(&a), 0.302765035410, 1e-9),
	      "within a boot: pooled sd 0.3028 (%.6f)", pmd_nested_within_sd(&a));
	pmd_welch_test(&a.across, &b.across, 0.05, &t);
	CHECK(close_to(t.t, 0.979795897113, 1e-9) && close_to(t.df, 4, 1e-9),
	      "one mean per boot: t %.6f on %.3f df (0.979796 on 4)", t.t, t.df);
	CHECK(close_to(t.p, 0.382662951281, 1e-6) && !t.significant,
	      "one mean per boot: p %.6f (0.382663), not significant", t.p);
	pmd_welch_test(&a.flat, &b.flat, 0.05, &t);
	CHECK(close_to(t.t, 3.728645235314, 1e-9) && close_to(t.df, 58, 1e-9),
	      "rounds as samples: t %.6f on %.3f df (3.728645 on 58)", t.t, t.df);
	CHECK(close_to(t.p, 0.000439209762, 1e-7) && t.significant,
	      "rounds as samples: p %.7f (0.0004392): drift taken for a change", t.p);
}

int main(void)
{
	test_welford();
	test_betai();
	test_student();
	test_welch();
	test_holm();
	test_nested();
	return check_done();
}
