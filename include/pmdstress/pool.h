/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tool's own memory that no fork child gets: histograms, the workers'
 * counters, the bench rounds, the threads' alternate signal stacks, and a
 * stressor's state its fork or exec children never touch (stress/fork.c's
 * fork lock). It lies in a few large
 * mappings that are never unmapped, so that the number of mappings, which
 * every fork of the fork and exec stressors pays for (src/run/pool.c says how
 * much), stays small and the same from round to round.
 */
#ifndef PMDSTRESS_POOL_H
#define PMDSTRESS_POOL_H

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

/* In a fork child only: unmap the pool's ranges, which the child never got. */
void pmd_pool_forget(void);

/* Mappings the pool holds (for tests). */
unsigned pmd_pool_mappings(void);

#endif
