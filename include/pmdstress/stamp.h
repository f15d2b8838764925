/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stamps: the 8-byte value a worker writes into its own slot of a page.
 *
 *   bits 63..48  check: a keyed hash of bits 47..0 (the run's tag key)
 *   bit  47      domain: 0 = written by the run, 1 = written by a fork child
 *   bits 46..21  logical page index in the arena (chunk * 512 + page)
 *   bits 20..9   generation of the chunk's contents (1..4095, never 0)
 *   bits  8..0   slot (the worker's index in its group)
 *
 * A stamp is never zero, so "zero" always means "not written". The check
 * bits tell our stamps from garbage; the fields tell which page, generation
 * and worker a stray stamp came from, which is what classifies a mismatch.
 */
#ifndef PMDSTRESS_STAMP_H
#define PMDSTRESS_STAMP_H

#include <stdbool.h>
#include <stdint.h>

enum pmd_class {
	PMD_CLASS_OK = 0,
	PMD_CLASS_LOST_WRITE,	     /* slot reads zero, a stamp was expected */
	PMD_CLASS_STALE,	     /* this slot's stamp of an older generation */
	PMD_CLASS_FOREIGN,	     /* another page's or worker's stamp, or garbage */
	PMD_CLASS_NONZERO_AFTER_ZAP, /* data where a zap left zeros */
	PMD_CLASS_COW_LEAK,	     /* a write crossed fork's copy-on-write */
	PMD_CLASS_COUNT,
};

#define PMD_STAMP_DOMAIN_RUN 0u
#define PMD_STAMP_DOMAIN_CHILD 1u
#define PMD_STAMP_PAGE_BITS 26
#define PMD_STAMP_MAX_PAGES (1u << PMD_STAMP_PAGE_BITS) /* 256 GiB of arena */

struct pmd_stamp_fields {
	unsigned domain;
	uint32_t page, gen, slot;
};

static inline uint64_t pmd_stamp_mix(uint64_t x)
{
	/* splitmix64 finaliser: every input bit reaches every check bit */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

static inline uint64_t pmd_stamp(uint64_t key, unsigned domain, uint32_t page, uint32_t gen,
				 uint32_t slot)
{
	uint64_t payload = ((uint64_t)(domain & 1) << 47) |
			   ((uint64_t)(page & (PMD_STAMP_MAX_PAGES - 1)) << 21) |
			   ((uint64_t)(gen & 0xfff) << 9) | (slot & 0x1ff);

	return (pmd_stamp_mix(payload ^ key) << 48) | payload;
}

/* True if @v is a stamp of this run (its check bits verify). */
bool pmd_stamp_decode(uint64_t key, uint64_t v, struct pmd_stamp_fields *f);

/*
 * Classify what slot @slot of logical page @page holds when the owner
 * expects @expected (0 = must be zero) in @domain. @actual == @expected is OK.
 */
enum pmd_class pmd_stamp_classify(uint64_t key, uint64_t actual, uint64_t expected,
				  uint32_t page, uint32_t gen, uint32_t slot, unsigned domain);

const char *pmd_class_name(enum pmd_class c);

#endif
