/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tool's own bulk memory: histograms, the workers' counters, the bench
 * rounds. It lies in a few large mappings that no fork child gets and that
 * are never unmapped, so that the number of mappings, which every fork of
 * the fork and exec stressors pays for, stays the same from round to round.
 */
#ifndef PMD_POOL_H
#define PMD_POOL_H

#include <stddef.h>

/*
 * @len bytes (rounded up to pages), page-aligned and zero-filled, or NULL
 * with errno set. Thread-safe; not for a fork child, which has no pool.
 */
void *pmd_pool_alloc(size_t len);

/* Give back what pmd_pool_alloc(@len) returned; its pages are freed. */
void pmd_pool_free(void *p, size_t len);

/*
 * Move what pmd_pool_alloc(@oldlen) returned into a new block of @newlen
 * bytes (the rest zero), as mremap() would: only the pages of @p that are
 * resident are copied, so that a sparse block stays sparse. The new block,
 * or NULL with errno set and @p untouched.
 */
void *pmd_pool_realloc(void *p, size_t oldlen, size_t newlen);

/* Mappings the pool holds (for tests). */
unsigned pmd_pool_mappings(void);

#endif
