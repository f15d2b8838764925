// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/self/smaps, VMA by VMA. A VMA's block starts with its address range
 * (lower-case hex) and goes on with "Name: value kB" lines; only Rss and the
 * PMD-mapped sizes are kept. Anonymous huge PMDs show as AnonHugePages, those
 * of a MAP_SHARED (shmem) arena as ShmemPmdMapped: the sum is what is mapped
 * by huge PMDs, whichever the arena is.
 */
#include "smaps.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

static bool vma_header(const char *line, struct pmd_smaps_vma *v)
{
	unsigned long start, end;

	if (!isdigit((unsigned char)line[0]) && !(line[0] >= 'a' && line[0] <= 'f'))
		return false;
	if (sscanf(line, "%lx-%lx", &start, &end) != 2)
		return false;
	v->start = start;
	v->end = end;
	v->rss = v->huge = 0;
	return true;
}

int pmd_smaps_walk(int (*fn)(const struct pmd_smaps_vma *v, void *arg), void *arg)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	struct pmd_smaps_vma v = { 0 };
	bool have = false;
	char line[512];
	int rc = 0;

	if (!f)
		return -errno;
	while (!rc && fgets(line, sizeof(line), f)) {
		struct pmd_smaps_vma next;
		unsigned long kb;

		if (vma_header(line, &next)) {
			if (have)
				rc = fn(&v, arg);
			v = next;
			have = true;
		} else if (sscanf(line, "Rss: %lu kB", &kb) == 1) {
			v.rss = (uint64_t)kb << 10;
		} else if (sscanf(line, "AnonHugePages: %lu kB", &kb) == 1 ||
			   sscanf(line, "ShmemPmdMapped: %lu kB", &kb) == 1) {
			v.huge += (uint64_t)kb << 10;
		}
	}
	if (!rc && have)
		rc = fn(&v, arg);
	fclose(f);
	return rc;
}

struct find {
	uintptr_t addr;
	struct pmd_smaps_vma *out;
};

static int find_vma(const struct pmd_smaps_vma *v, void *arg)
{
	struct find *f = arg;

	if (f->addr < v->start || f->addr >= v->end)
		return 0;
	*f->out = *v;
	return 1;
}

int pmd_smaps_vma(uintptr_t addr, struct pmd_smaps_vma *v)
{
	struct find f = { addr, v };
	int rc = pmd_smaps_walk(find_vma, &f);

	return rc == 1 ? 0 : rc < 0 ? rc : -ENOENT;
}
