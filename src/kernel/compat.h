/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel interfaces newer than this system's headers. The build's feature
 * probes (CMake, into pmd_features.h) say what the headers have; whether
 * the running kernel has it is always found out at run time.
 */
#ifndef PMD_COMPAT_H
#define PMD_COMPAT_H

#include "pmd_features.h"

#include <linux/types.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MADV_COLD
#define MADV_COLD 20
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef PR_SET_THP_DISABLE
#define PR_SET_THP_DISABLE 41
#endif

#if !PMD_HAVE_PAGEMAP_SCAN
/* PAGEMAP_SCAN, Linux 6.7 (include/uapi/linux/fs.h) */
struct page_region {
	__u64 start;
	__u64 end;
	__u64 categories;
};

struct pm_scan_arg {
	__u64 size;
	__u64 flags;
	__u64 start;
	__u64 end;
	__u64 walk_end;
	__u64 vec;
	__u64 vec_len;
	__u64 max_pages;
	__u64 category_inverted;
	__u64 category_mask;
	__u64 category_anyof_mask;
	__u64 return_mask;
};

#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#define PAGE_IS_WPALLOWED (1 << 0)
#define PAGE_IS_WRITTEN (1 << 1)
#define PAGE_IS_FILE (1 << 2)
#define PAGE_IS_PRESENT (1 << 3)
#define PAGE_IS_SWAPPED (1 << 4)
#define PAGE_IS_PFNZERO (1 << 5)
#define PAGE_IS_HUGE (1 << 6)
#endif

/* /proc/kpageflags bits (include/uapi/linux/kernel-page-flags.h) */
#define PMD_KPF_COMPOUND_HEAD 15
#define PMD_KPF_COMPOUND_TAIL 16
#define PMD_KPF_THP 22
#define PMD_KPF_ZERO_PAGE 24

/* /proc/pid/pagemap entry bits (Documentation/admin-guide/mm/pagemap.rst) */
#define PMD_PM_PFN_MASK ((1ull << 55) - 1)
#define PMD_PM_PRESENT (1ull << 63)
#define PMD_PM_SWAP (1ull << 62)

#endif
