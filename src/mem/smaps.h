/* SPDX-License-Identifier: GPL-2.0 */
/* /proc/self/smaps, one VMA at a time: the one parser of it. */
#ifndef PMD_SMAPS_H
#define PMD_SMAPS_H

#include <stdint.h>

struct pmd_smaps_vma {
	uintptr_t start, end;
	uint64_t rss;	    /* bytes; the zero page is never counted */
	uint64_t huge;	    /* PMD-mapped: AnonHugePages + ShmemPmdMapped, bytes */
};

/*
 * Call @fn for every VMA of this process, in address order, until it returns
 * nonzero (which is returned). Returns 0 after the last, -errno if smaps
 * cannot be read.
 */
int pmd_smaps_walk(int (*fn)(const struct pmd_smaps_vma *v, void *arg), void *arg);

/* The VMA holding @addr into *@v: 0, -ENOENT if none does, or -errno. */
int pmd_smaps_vma(uintptr_t addr, struct pmd_smaps_vma *v);

#endif
