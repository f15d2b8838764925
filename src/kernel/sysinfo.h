/* SPDX-License-Identifier: GPL-2.0 */
/* The fingerprint of the machine a run ran on: kernel, THP settings, CPUs. */
#ifndef PMD_SYSINFO_H
#define PMD_SYSINFO_H

#include <stdbool.h>
#include <stdint.h>

#define PMD_MAX_MTHP 16

struct pmd_kv {
	char key[64];
	char value[64];
};

struct pmd_sysinfo {
	char release[65], version[160], machine[65], hostname[65];
	long cpus_online, cpus_conf;
	uint64_t mem_total, page_size;
	unsigned nodes; /* NUMA nodes online */
	char nodes_online[64];
	bool root;
	/* /sys/kernel/mm/transparent_hugepage: selected values, "" if absent */
	struct pmd_kv thp[16];
	unsigned nthp;
	struct pmd_kv mthp[PMD_MAX_MTHP]; /* hugepages-<size>kB/enabled */
	unsigned nmthp;
	/* a read fault on private anonymous memory maps the zero page (1), allocates
	 * a page (0: pvm_no_zero_page guests), or nobody could tell (-1) */
	int zero_page_reads;
};

void pmd_sysinfo_read(struct pmd_sysinfo *s);
/* "always [madvise] never" -> "madvise"; other text is copied trimmed. */
void pmd_sysfs_selected(const char *text, char *out, unsigned len);
/* Read a small sysfs/proc file, trimmed; returns 0 or -errno. */
int pmd_read_text(const char *path, char *buf, unsigned len);
/* Probe how this kernel backs a read fault (src/mem/zeropage.c): 1, 0 or -1 as above. */
int pmd_probe_zero_page_reads(void);
const char *pmd_sysinfo_thp(const struct pmd_sysinfo *s, const char *key);
/* This process's pid namespace: the inode of /proc/self/ns/pid, 0 where unreadable. */
unsigned long pmd_pid_ns(void);
/*
 * Whether this process is in a pid namespace of its own (a container,
 * tools/fresh-debian's chroot): then the pids the kernel prints and traces
 * are the host's, not ours. False where /proc/self/ns/pid cannot be read.
 */
bool pmd_in_child_pidns(void);

#endif
