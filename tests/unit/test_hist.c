// SPDX-License-Identifier: GPL-2.0
/* Histograms: bucket layout, three significant digits, merge, quantiles. */
#include "check.h"

#include <pmdstress/stats.h>

#include <math.h>
#include <stdlib.h>

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	struct pmd_hist a, b, m;
	uint64_t v, *vals;
	unsigned i, prev = 0;
	bool monotonic = true, roundtrip = true;
	double worst = 0;
	unsigned n = 200000;

	/* every value maps into a bucket whose low edge is <= it, within 0.2% */
	for (v = 1; v < (1ull << 43); v = v * 3 / 2 + 1) {
		unsigned idx = pmd_hist_index(v);
		uint64_t lo = pmd_hist_bucket_low(idx);
		double err = (double)(v - lo) / (double)v;

		if (idx < prev)
			monotonic = false;
		prev = idx;
		if (lo > v || idx >= PMD_HIST_BUCKETS)
			roundtrip = false;
		if (err > worst)
			worst = err;
	}
	CHECK(monotonic, "bucket index grows with the value");
	CHECK(roundtrip, "bucket low edge <= value, index in range");
	CHECK(worst < 0.002, "bucket width within 0.2%% of the value (worst %.5f)", worst);
	for (v = 0; v < PMD_HIST_LINEAR; v++)
		if (pmd_hist_bucket_low(pmd_hist_index(v)) != v)
			break;
	CHECK_EQ_U64(v, PMD_HIST_LINEAR, "values below 1024 are exact");
	CHECK(pmd_hist_index(UINT64_MAX) == PMD_HIST_BUCKETS - 1, "huge values land in the last bucket");
	CHECK(PMD_HIST_BUCKETS / PMD_HIST_PAGE_BUCKETS <= 64, "touched-page bitmap fits 64 bits");

	/* quantiles of a known distribution match the exact ones to 3 digits */
	CHECK(pmd_hist_init(&a) == 0 && pmd_hist_init(&b) == 0 && pmd_hist_init(&m) == 0,
	      "init three histograms");
	vals = malloc(sizeof(*vals) * n);
	srand(42);
	for (i = 0; i < n; i++) {
		/* log-uniform from 100 ns to 10 ms, like fault latencies */
		vals[i] = (uint64_t)(100.0 * pow(10, 5.0 * rand() / RAND_MAX));
		pmd_hist_record(i % 2 ? &a : &b, vals[i]);
	}
	pmd_hist_merge(&m, &a);
	pmd_hist_merge(&m, &b);
	qsort(vals, n, sizeof(*vals), cmp_u64);
	CHECK_EQ_U64(m.count, n, "merged count");
	CHECK_EQ_U64(m.min, vals[0], "merged min");
	CHECK_EQ_U64(m.max, vals[n - 1], "merged max");
	{
		static const double qs[] = { 0.5, 0.9, 0.99, 0.999 };
		unsigned k;

		for (k = 0; k < 4; k++) {
			uint64_t exact = vals[(size_t)(qs[k] * n)];
			uint64_t got = pmd_hist_quantile(&m, qs[k]);
			double rel = fabs((double)got - (double)exact) / (double)exact;

			CHECK(rel < 0.002, "p%g: %" PRIu64 " vs exact %" PRIu64 " (%.4f%%)",
			      qs[k] * 100, got, exact, rel * 100);
		}
	}
	{
		double sum = 0;

		for (i = 0; i < n; i++)
			sum += (double)vals[i];
		CHECK(fabs(pmd_hist_mean(&m) - sum / n) < 1e-6 * sum / n, "mean is exact");
	}
	/* an empty histogram answers zeros, not garbage */
	pmd_hist_free(&a);
	pmd_hist_init(&a);
	CHECK_EQ_U64(pmd_hist_quantile(&a, 0.5), 0, "empty p50");
	CHECK(pmd_hist_mean(&a) == 0, "empty mean");
	pmd_hist_free(&a);
	pmd_hist_free(&b);
	pmd_hist_free(&m);
	free(vals);
	return check_done();
}
