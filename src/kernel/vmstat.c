// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/vmstat is system-wide: its deltas include every other process on
 * the machine. Reports print them next to what the workers counted so the
 * reader can tell the two apart.
 */
#include "vmstat.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static bool wanted(const char *name)
{
	static const char *const prefixes[] = {
		"thp_", "pgfault", "pgmajfault", "pgalloc_", "pgfree", "pgmigrate_", "numa_",
		"compact_", "nr_anon_transparent_hugepages", "pgsteal_anon", "pgscan_anon",
		"pglazyfree", "pgpromote_", "pgdemote_", NULL,
	};
	unsigned i;

	for (i = 0; prefixes[i]; i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

int pmd_vmstat_read(struct pmd_vmstat *v)
{
	FILE *f = fopen("/proc/vmstat", "re");
	char name[64];
	unsigned long long val;

	v->n = 0;
	if (!f)
		return -errno;
	while (fscanf(f, "%63s %llu", name, &val) == 2) {
		if (!wanted(name) || v->n >= PMD_VMSTAT_MAX)
			continue;
		snprintf(v->e[v->n].name, sizeof(v->e[0].name), "%s", name);
		v->e[v->n].value = val;
		v->n++;
	}
	fclose(f);
	return 0;
}

bool pmd_vmstat_get(const struct pmd_vmstat *v, const char *name, uint64_t *value)
{
	unsigned i;

	for (i = 0; i < v->n; i++) {
		if (!strcmp(v->e[i].name, name)) {
			*value = v->e[i].value;
			return true;
		}
	}
	return false;
}

bool pmd_vmstat_delta(const struct pmd_vmstat *before, const struct pmd_vmstat *after,
		      const char *name, int64_t *delta)
{
	uint64_t a, b;

	if (!pmd_vmstat_get(before, name, &b) || !pmd_vmstat_get(after, name, &a))
		return false;
	*delta = (int64_t)(a - b);
	return true;
}
