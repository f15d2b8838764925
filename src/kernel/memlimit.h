/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Limits on the memory this process may use, besides the machine's own:
 * its memory cgroup (v2 memory.max or v1 memory.limit_in_bytes, the
 * smallest on the way up the tree) and RLIMIT_AS. An arena that cannot fit
 * is refused before the run instead of ending in an OOM kill or ENOMEM.
 */
#ifndef PMD_MEMLIMIT_H
#define PMD_MEMLIMIT_H

#include <stddef.h>
#include <stdint.h>

struct pmd_memlimit {
	uint64_t bytes; /* UINT64_MAX: no limit found */
	char file[560]; /* the file that holds it, e.g. /sys/fs/cgroup/x/memory.max */
};

/* The tightest memory-cgroup limit on this process. */
void pmd_memlimit_cgroup(struct pmd_memlimit *out);
/*
 * Where this process's memory cgroup is: 2 (cgroup v2 with the memory
 * controller), 1 (v1's memory hierarchy) or 0 (none mounted). @dir gets its
 * directory, @top the length of the hierarchy's mount path in it.
 */
int pmd_memcg_self(char *dir, size_t len, size_t *top);
/*
 * The tightest cgroup v2 pids.max on this process (bytes: the task count),
 * for telling an EAGAIN from fork() or clone() that it explains.
 */
void pmd_memlimit_pids(struct pmd_memlimit *out);
/* RLIMIT_AS as a limit (file "RLIMIT_AS"), UINT64_MAX if unlimited. */
void pmd_memlimit_as(struct pmd_memlimit *out);

#endif
