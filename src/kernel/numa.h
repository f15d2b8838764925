/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NUMA: the machine's topology (nodes, their CPUs, memory and distances),
 * the placement a run asks for (--cpu-nodes, --mem-policy) and where each
 * worker really ran. Engine-internal; stressors see the arena's policy
 * through <pmdstress/arena.h>.
 *
 * On the engine's include path this header shadows libnuma's <numa.h>: the
 * engine calls the policy syscalls directly (<pmdstress/numasys.h>) and
 * reads the topology from /sys/devices/system/node.
 */
#ifndef PMD_NUMA_H
#define PMD_NUMA_H

#include <pmdstress/arena.h>
#include <pmdstress/config.h>

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct pmd_numa_node {
	int id;
	bool has_cpus, has_memory;
	unsigned ncpus;
	char cpus[128];	    /* cpulist, "0-3,8" */
	uint64_t mem_total; /* bytes, the node's meminfo MemTotal */
	uint64_t mem_free;
};

/* Where one worker was bound and where it was when its run ended. */
struct pmd_numa_where {
	int bound; /* node from --cpu-nodes, -1: not bound */
	int cpu;   /* getcpu() at the end of its run, -1: never sampled */
	int node;
	int err; /* -errno of a failed bind, 0 */
};

enum pmd_numa_balancing {
	PMD_NUMA_BAL_KEEP = 0, /* leave /proc/sys/kernel/numa_balancing alone */
	PMD_NUMA_BAL_ON,
	PMD_NUMA_BAL_OFF,
};

struct pmd_numa {
	bool available;	 /* numa_available(): the kernel has NUMA syscalls */
	unsigned nnodes; /* online nodes */
	struct pmd_numa_node node[PMD_MAX_NODES];
	uint8_t distance[PMD_MAX_NODES][PMD_MAX_NODES]; /* by index into node[], 0 unknown */
	/* --cpu-nodes: worker i is bound to bind_node[i % nbind]; nbind 0: not bound */
	int bind_node[PMD_MAX_NODES];
	unsigned nbind;
	cpu_set_t *bind_cpus; /* one set per entry of bind_node */
	/* --numa-balancing: what the file held before, "" if not touched */
	char balancing_was[16];
	/* per worker of the last round, by worker id */
	struct pmd_numa_where *where;
	unsigned nwhere;
};

/* Read the topology. Never fails: a kernel without NUMA is one node. */
void pmd_numa_init(struct pmd_numa *n);
void pmd_numa_fini(struct pmd_numa *n);

/*
 * Check --cpu-nodes and --mem-policy against this machine (config time).
 * Returns 0, or -EINVAL with one line naming the option and value in @err.
 */
int pmd_numa_check_config(const struct pmd_config *cfg, char *err, size_t errlen);

/*
 * Parse --mem-policy into @p; @mem_nodes are the nodes with memory here
 * (pmd_numa_mem_nodes()), @allowed the ones this process may allocate on
 * (pmd_numa_mems_allowed()). 0, or -EINVAL with a message naming the value.
 */
int pmd_mempolicy_parse(const char *text, uint64_t mem_nodes, uint64_t allowed,
			struct pmd_mempolicy *p, char *err, size_t errlen);
/* "interleave:0-1" etc., the way a user would type it. */
void pmd_mempolicy_format(const struct pmd_mempolicy *p, char *buf, size_t len);

/* Resolve --cpu-nodes for the run: which node each worker is bound to. 0 or -errno. */
int pmd_numa_placement(struct pmd_numa *n, const struct pmd_config *cfg);
/* Room for @nworkers placement records (a new round: the old ones go). 0 or -ENOMEM. */
int pmd_numa_round(struct pmd_numa *n, unsigned nworkers);
/* In worker @id's thread, at its start: bind it to its node's CPUs. 0 or -errno. */
int pmd_numa_bind_worker(struct pmd_numa *n, unsigned id);
/* In worker @id's thread, at the end of its run: sample its CPU and node. */
void pmd_numa_worker_done(struct pmd_numa *n, unsigned id);

/* --numa-balancing: set /proc/sys/kernel/numa_balancing (restored at exit). 0 or -errno. */
int pmd_numa_balancing_apply(struct pmd_numa *n, unsigned setting);
#define PMD_NUMA_BALANCING_PATH "/proc/sys/kernel/numa_balancing"

/* Online nodes with memory / with CPUs, from sysfs (node 0 if it cannot tell). */
uint64_t pmd_numa_mem_nodes(void);
uint64_t pmd_numa_cpu_nodes(void);
/* The nodes this process may allocate on (its cpuset's mems); all if the kernel has no NUMA. */
uint64_t pmd_numa_mems_allowed(void);

/* The report's "numa" block and its text lines (src/kernel/numa.c, for report_*.c). */
struct pmd_run;
struct json_t;
struct json_t *pmd_numa_json(const struct pmd_run *run);
void pmd_numa_text(FILE *out, const struct pmd_run *run);

/* Format a node mask as a list ("0-1,3"). */
void pmd_nodemask_format(uint64_t mask, char *buf, size_t len);
/* Parse "0,2" / "0-3" into a mask; -EINVAL on bad syntax or a node >= PMD_MAX_NODES. */
int pmd_nodelist_parse(const char *text, uint64_t *mask);

#endif
