/* SPDX-License-Identifier: GPL-2.0 */
/* /proc/vmstat snapshots and the deltas a run reports. */
#ifndef PMD_VMSTAT_H
#define PMD_VMSTAT_H

#include <stdbool.h>
#include <stdint.h>

#define PMD_VMSTAT_MAX 256

struct pmd_vmstat {
	unsigned n;
	struct {
		char name[64];
		uint64_t value;
	} e[PMD_VMSTAT_MAX];
};

/* Read the counters a run cares about (thp_*, pgfault, pgalloc_*, ...). */
int pmd_vmstat_read(struct pmd_vmstat *v);
/* after - before for @name; false if the kernel has no such counter. */
bool pmd_vmstat_delta(const struct pmd_vmstat *before, const struct pmd_vmstat *after,
		      const char *name, int64_t *delta);
bool pmd_vmstat_get(const struct pmd_vmstat *v, const char *name, uint64_t *value);

#endif
