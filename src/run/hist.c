// SPDX-License-Identifier: GPL-2.0
/* Log-linear histograms (see include/pmdstress/stats.h for the layout). */
#include <pmdstress/stats.h>

#include <pmdstress/pool.h>

#include <errno.h>
#include <string.h>

static size_t buckets_bytes(void)
{
	return (size_t)PMD_HIST_BUCKETS * sizeof(uint64_t);
}

int pmd_hist_init(struct pmd_hist *h)
{
	void *p;

	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
	/*
	 * Reserved, not touched: only the pages values fall into become RSS.
	 * From the pool (pmdstress/pool.h): no fork child gets it (no child
	 * records a latency, and a page fork() does not share is no
	 * copy-on-write fault for the parent's next record after every fork),
	 * and a histogram is no mapping of its own for every fork to pay for.
	 */
	p = pmd_pool_alloc(buckets_bytes());
	if (!p)
		return -errno;
	h->buckets = p;
	return 0;
}

void pmd_hist_free(struct pmd_hist *h)
{
	if (h->buckets)
		pmd_pool_free(h->buckets, buckets_bytes());
	h->buckets = NULL;
}

unsigned pmd_hist_index(uint64_t v)
{
	unsigned e, shift;

	if (v < PMD_HIST_LINEAR)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v); /* v in [2^e, 2^(e+1)) with e >= SUB_BITS+1 */
	if (e >= PMD_HIST_MAX_SHIFT)
		return PMD_HIST_BUCKETS - 1;
	shift = e - PMD_HIST_SUB_BITS;
	/* (v >> shift) is in [512, 1024): the sub-bucket plus 512 */
	return PMD_HIST_LINEAR + (shift - 1) * (1u << PMD_HIST_SUB_BITS) +
	       (unsigned)((v >> shift) - (1u << PMD_HIST_SUB_BITS));
}

uint64_t pmd_hist_bucket_low(unsigned idx)
{
	unsigned shift, sub;

	if (idx < PMD_HIST_LINEAR)
		return idx;
	idx -= PMD_HIST_LINEAR;
	shift = idx / (1u << PMD_HIST_SUB_BITS) + 1;
	sub = idx % (1u << PMD_HIST_SUB_BITS);
	return ((uint64_t)(1u << PMD_HIST_SUB_BITS) + sub) << shift;
}

static uint64_t bucket_width(unsigned idx)
{
	if (idx < PMD_HIST_LINEAR)
		return 1;
	return 1ull << ((idx - PMD_HIST_LINEAR) / (1u << PMD_HIST_SUB_BITS) + 1);
}

static void add_relaxed(uint64_t *p, uint64_t n)
{
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

static uint64_t rd(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

void pmd_hist_record(struct pmd_hist *h, uint64_t v)
{
	unsigned idx = pmd_hist_index(v);
	uint64_t page_bit = 1ull << (idx / PMD_HIST_PAGE_BUCKETS);

	if (!(rd(&h->touched) & page_bit))
		__atomic_store_n(&h->touched, rd(&h->touched) | page_bit, __ATOMIC_RELAXED);
	add_relaxed(&h->buckets[idx], 1);
	add_relaxed(&h->sum, v);
	if (v < rd(&h->min))
		__atomic_store_n(&h->min, v, __ATOMIC_RELAXED);
	if (v > rd(&h->max))
		__atomic_store_n(&h->max, v, __ATOMIC_RELAXED);
	/* count last: a merger that sees the count has seen a bucket at least as full */
	__atomic_store_n(&h->count, rd(&h->count) + 1, __ATOMIC_RELEASE);
}

void pmd_hist_merge(struct pmd_hist *dst, const struct pmd_hist *src)
{
	uint64_t n = __atomic_load_n(&src->count, __ATOMIC_ACQUIRE);
	uint64_t touched = rd(&src->touched);
	unsigned i;

	if (!n || !src->buckets)
		return;
	/* walk only the bucket pages the source has written (none: @dst got no memory) */
	for (i = 0; dst->buckets && i < PMD_HIST_BUCKETS; i++) {
		uint64_t b;

		if (!(touched & (1ull << (i / PMD_HIST_PAGE_BUCKETS)))) {
			i += PMD_HIST_PAGE_BUCKETS - 1 - i % PMD_HIST_PAGE_BUCKETS;
			continue;
		}
		b = rd(&src->buckets[i]);
		if (b)
			dst->buckets[i] += b;
	}
	dst->touched |= touched;
	dst->count += n;
	dst->sum += rd(&src->sum);
	if (rd(&src->min) < dst->min)
		dst->min = rd(&src->min);
	if (rd(&src->max) > dst->max)
		dst->max = rd(&src->max);
}

uint64_t pmd_hist_quantile(const struct pmd_hist *h, double q)
{
	uint64_t total = 0, seen = 0, rank;
	unsigned i;

	if (!h->buckets) /* its memory could not be mapped (said when it happened) */
		return 0;
	for (i = 0; i < PMD_HIST_BUCKETS; i++)
		total += rd(&h->buckets[i]);
	if (!total)
		return 0;
	if (q <= 0)
		return rd(&h->min);
	if (q >= 1)
		return rd(&h->max);
	rank = (uint64_t)(q * (double)total);
	if (rank >= total)
		rank = total - 1;
	for (i = 0; i < PMD_HIST_BUCKETS; i++) {
		seen += rd(&h->buckets[i]);
		if (seen > rank) {
			uint64_t v = pmd_hist_bucket_low(i) + bucket_width(i) / 2;
			uint64_t mx = rd(&h->max), mn = rd(&h->min);

			/* never report beyond what was seen */
			return v > mx ? mx : v < mn ? mn : v;
		}
	}
	return rd(&h->max);
}

double pmd_hist_mean(const struct pmd_hist *h)
{
	uint64_t n = rd(&h->count);

	return n ? (double)rd(&h->sum) / (double)n : 0.0;
}
