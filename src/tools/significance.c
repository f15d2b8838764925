// SPDX-License-Identifier: GPL-2.0
/*
 * Statistics for 'pmdstress compare' (see significance.h): Welford's mean
 * and variance, Student's t by the regularised incomplete beta function
 * (continued fraction), Welch's test with Welch-Satterthwaite degrees of
 * freedom, Holm's step-down correction, and samples in two levels.
 */
#include "significance.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void pmd_welford_add(struct pmd_welford *w, double x)
{
	double d = x - w->mean;

	w->n++;
	w->mean += d / (double)w->n;
	w->m2 += d * (x - w->mean);
}

double pmd_welford_stddev(const struct pmd_welford *w)
{
	return w->n > 1 ? sqrt(w->m2 / (double)(w->n - 1)) : 0.0;
}

/* Continued fraction for I_x(a, b), modified Lentz (Numerical Recipes' betacf). */
static double betacf(double a, double b, double x)
{
	const double tiny = 1e-300, eps = 1e-15;
	double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap, h;
	int m;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (m = 1; m <= 1000; m++) {
		double m2 = 2.0 * m, aa, del;

		aa = m * (b - m) * x / ((qam + m2) * (a + m2));
		d = 1 + aa * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1 + aa / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		h *= d * c;
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
		d = 1 + aa * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1 + aa / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < eps)
			break;
	}
	return h;
}

/* I_x(a, b) with y = 1 - x given separately, so x close to 1 loses nothing. */
static double betai_xy(double a, double b, double x, double y)
{
	double front;

	if (x <= 0)
		return 0;
	if (y <= 0)
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log(y));
	/* the fraction converges fast on this side of the mean; use symmetry otherwise */
	if (x < (a + 1) / (a + b + 2))
		return front * betacf(a, b, x) / a;
	return 1 - front * betacf(b, a, y) / b;
}

double pmd_betai(double a, double b, double x)
{
	return betai_xy(a, b, x, 1 - x);
}

double pmd_student_p2(double t, double df)
{
	double t2 = t * t;

	if (!isfinite(t))
		return 0;
	/* P(|T| >= t) = I_{df/(df+t^2)}(df/2, 1/2) */
	return betai_xy(df / 2, 0.5, df / (df + t2), t2 / (df + t2));
}

double pmd_student_crit2(double df, double alpha)
{
	double lo = 0, hi = 1;
	int i;

	if (!(df > 0) || !(alpha > 0) || alpha >= 1)
		return NAN;
	/* p falls as t grows: bracket, then bisect to double precision */
	while (pmd_student_p2(hi, df) > alpha && hi < 1e300)
		hi *= 2;
	for (i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
		double mid = (lo + hi) / 2;

		if (pmd_student_p2(mid, df) > alpha)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

void pmd_welch_test(const struct pmd_welford *a, const struct pmd_welford *b, double alpha,
		    struct pmd_welch *out)
{
	double va, vb;

	memset(out, 0, sizeof(*out));
	out->p = 1;
	if (a->n < 2 || b->n < 2)
		return;
	out->testable = true;
	va = a->m2 / (double)(a->n - 1) / (double)a->n; /* s^2 / n */
	vb = b->m2 / (double)(b->n - 1) / (double)b->n;
	if (va + vb <= 0) {
		/* no spread at all: any difference is real, none is none */
		out->significant = a->mean != b->mean;
		out->t = out->significant ? (b->mean > a->mean ? INFINITY : -INFINITY) : 0;
		out->df = (double)(a->n + b->n - 2);
		out->p = out->significant ? 0 : 1;
		return;
	}
	out->t = (b->mean - a->mean) / sqrt(va + vb);
	out->df =
	    (va + vb) * (va + vb) / (va * va / (double)(a->n - 1) + vb * vb / (double)(b->n - 1));
	out->crit = pmd_student_crit2(out->df, alpha);
	out->p = pmd_student_p2(out->t, out->df);
	out->significant = fabs(out->t) > out->crit;
}

/*
 * Holm (1979): sort the p-values, multiply the k-th smallest by the number
 * of hypotheses not yet rejected (n - k), and keep the adjusted values
 * non-decreasing in that order. Rejecting where adj < alpha keeps the
 * chance of any false rejection in the family at alpha whatever the
 * dependence between the tests.
 */
int pmd_holm(const double *p, unsigned n, double *adj)
{
	unsigned *order, i, j;
	double run = 0;

	if (!n)
		return 0;
	order = malloc(n * sizeof(*order));
	if (!order)
		return -ENOMEM;
	/* insertion sort: a family is a few hundred tests at most */
	for (i = 0; i < n; i++) {
		double v = isnan(p[i]) ? 1 : p[i];

		for (j = i; j > 0 && (isnan(p[order[j - 1]]) ? 1 : p[order[j - 1]]) > v; j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	for (i = 0; i < n; i++) {
		double v = isnan(p[order[i]]) ? 1 : p[order[i]];

		v *= (double)(n - i);
		if (v > 1)
			v = 1;
		if (v > run)
			run = v;
		adj[order[i]] = run;
	}
	free(order);
	return 0;
}

void pmd_nested_add(struct pmd_nested *s, double x)
{
	pmd_welford_add(&s->unit, x);
	pmd_welford_add(&s->flat, x);
}

void pmd_nested_end_unit(struct pmd_nested *s)
{
	if (!s->unit.n)
		return;
	pmd_welford_add(&s->across, s->unit.mean);
	s->within_m2 += s->unit.m2;
	s->within_df += s->unit.n - 1;
	memset(&s->unit, 0, sizeof(s->unit));
}

double pmd_nested_within_sd(const struct pmd_nested *s)
{
	return s->within_df ? sqrt(s->within_m2 / (double)s->within_df) : 0.0;
}
