// SPDX-License-Identifier: GPL-2.0
/*
 * NUMA placement: the topology from /sys/devices/system/node, --cpu-nodes
 * (bind each worker thread to one node's CPUs, round-robin), --mem-policy
 * (mbind the arena and every range mapped fresh over it), --numa-balancing
 * (set the NUMA hinting scanner for the run, put back at exit), and where
 * each worker was when its run ended, for the report.
 *
 * libnuma is not linked: its topology layer prints to stderr and can exit
 * on errors, and it cannot say which value the user got wrong; its syscall
 * wrappers are <pmdstress/numasys.h>'s (which says why), its <numaif.h>
 * gives the MPOL_* constants.
 */
#include "numa.h"

#include "run.h"
#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <pmdstress/numasys.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NODE_DIR "/sys/devices/system/node"

#ifndef MPOL_LOCAL
#define MPOL_LOCAL 4 /* Linux 3.8 */
#endif

/* ---- node lists ------------------------------------------------------------ */

int pmd_nodelist_parse(const char *text, uint64_t *mask)
{
	const char *p = text;

	*mask = 0;
	if (!*p)
		return -EINVAL;
	for (;;) {
		char *end;
		unsigned long a, b;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		a = strtoul(p, &end, 10);
		b = a;
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				return -EINVAL;
			b = strtoul(end + 1, &end, 10);
		}
		if (a > b || b >= PMD_MAX_NODES)
			return -EINVAL;
		for (; a <= b; a++)
			*mask |= 1ull << a;
		if (!*end)
			return 0;
		if (*end != ',' || !end[1])
			return -EINVAL;
		p = end + 1;
	}
}

void pmd_nodemask_format(uint64_t mask, char *buf, size_t len)
{
	size_t n = 0;
	unsigned i = 0;

	buf[0] = '\0';
	while (i < PMD_MAX_NODES) {
		unsigned j;

		if (!(mask & (1ull << i))) {
			i++;
			continue;
		}
		for (j = i; j + 1 < PMD_MAX_NODES && (mask & (1ull << (j + 1))); j++)
			;
		if (n < len)
			n += (size_t)snprintf(buf + n, len - n, "%s%u", n ? "," : "", i);
		if (j > i && n < len)
			n += (size_t)snprintf(buf + n, len - n, "-%u", j);
		i = j + 1;
	}
}

static int read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	buf[0] = '\0';
	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

/* A sysfs node list; @fallback if the file is missing or empty. */
static uint64_t read_nodes(const char *name, uint64_t fallback)
{
	char path[128], buf[256];
	uint64_t mask;

	snprintf(path, sizeof(path), NODE_DIR "/%s", name);
	if (read_text(path, buf, sizeof(buf)) || pmd_nodelist_parse(buf, &mask) || !mask)
		return fallback;
	return mask;
}

uint64_t pmd_numa_mem_nodes(void)
{
	uint64_t online = read_nodes("online", 1);

	return read_nodes("has_memory", online) & online;
}

uint64_t pmd_numa_cpu_nodes(void)
{
	uint64_t online = read_nodes("online", 1);

	return read_nodes("has_cpu", online) & online;
}

static unsigned popcount64(uint64_t v)
{
	return (unsigned)__builtin_popcountll(v);
}

uint64_t pmd_numa_mems_allowed(void)
{
	const unsigned bits = 8 * sizeof(unsigned long);
	/* MPOL_F_MEMS_ALLOWED wants room for every possible node (1024 on distros) */
	unsigned long mask[1024 / (8 * sizeof(unsigned long))];
	uint64_t allowed = 0;
	unsigned i;

	memset(mask, 0, sizeof(mask));
	if (pmd_get_mempolicy(NULL, mask, 1024, NULL, MPOL_F_MEMS_ALLOWED))
		return ~0ull; /* no NUMA (ENOSYS): no cpuset can narrow what there is */
	for (i = 0; i < PMD_MAX_NODES; i++)
		if (mask[i / bits] & (1ul << (i % bits)))
			allowed |= 1ull << i;
	return allowed;
}

/* ---- topology --------------------------------------------------------------- */

/* "0-3,8" -> a CPU set; returns how many CPUs. */
static unsigned cpulist_to_set(const char *list, cpu_set_t *set)
{
	const char *p = list;
	unsigned n = 0;

	CPU_ZERO(set);
	while (*p >= '0' && *p <= '9') {
		char *end;
		unsigned long a = strtoul(p, &end, 10), b = a;

		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		for (; a <= b && a < CPU_SETSIZE; a++, n++)
			CPU_SET((int)a, set);
		if (*end != ',')
			break;
		p = end + 1;
	}
	return n;
}

/* "0-3,8": the CPUs of @set as a list. */
static void cpuset_format(const cpu_set_t *set, char *buf, size_t len)
{
	size_t n = 0;
	int i = 0, j;

	buf[0] = '\0';
	while (i < CPU_SETSIZE) {
		if (!CPU_ISSET(i, set)) {
			i++;
			continue;
		}
		for (j = i; j + 1 < CPU_SETSIZE && CPU_ISSET(j + 1, set); j++)
			;
		if (n < len)
			n += (size_t)snprintf(buf + n, len - n, "%s%d", n ? "," : "", i);
		if (j > i && n < len)
			n += (size_t)snprintf(buf + n, len - n, "-%d", j);
		i = j + 1;
	}
}

/* Node @node's CPUs as a set, its list in @list; false if sysfs does not say. */
static bool node_cpus(unsigned node, cpu_set_t *set, char *list, size_t len)
{
	char path[128];

	snprintf(path, sizeof(path), NODE_DIR "/node%u/cpulist", node);
	if (read_text(path, list, len) || !cpulist_to_set(list, set))
		return false;
	return true;
}

/*
 * The nodes of @cpu_nodes with a CPU in @allowed (this process's affinity:
 * taskset, its cpuset). A node whose CPUs sysfs does not list counts.
 */
static uint64_t usable_cpu_nodes(uint64_t cpu_nodes, const cpu_set_t *allowed)
{
	uint64_t usable = 0;
	unsigned i;

	for (i = 0; i < PMD_MAX_NODES; i++) {
		cpu_set_t set, both;
		char list[256];

		if (!(cpu_nodes & (1ull << i)))
			continue;
		if (node_cpus(i, &set, list, sizeof(list))) {
			CPU_AND(&both, &set, allowed);
			if (!CPU_COUNT(&both))
				continue;
		}
		usable |= 1ull << i;
	}
	return usable;
}

static void read_meminfo(struct pmd_numa_node *nd)
{
	char path[128], line[256];
	FILE *f;

	snprintf(path, sizeof(path), NODE_DIR "/node%d/meminfo", nd->id);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long kb;
		int id;

		if (sscanf(line, "Node %d MemTotal: %llu kB", &id, &kb) == 2)
			nd->mem_total = kb << 10;
		else if (sscanf(line, "Node %d MemFree: %llu kB", &id, &kb) == 2)
			nd->mem_free = kb << 10;
	}
	fclose(f);
}

static void read_distances(struct pmd_numa *n, unsigned row)
{
	char path[128], buf[512], *p = buf;
	unsigned col;

	snprintf(path, sizeof(path), NODE_DIR "/node%d/distance", n->node[row].id);
	if (read_text(path, buf, sizeof(buf)))
		return;
	/* one number per online node, in node order: the same order as node[] */
	for (col = 0; col < n->nnodes && *p; col++) {
		char *end;
		unsigned long d = strtoul(p, &end, 10);

		if (end == p)
			break;
		n->distance[row][col] = (uint8_t)(d > 255 ? 255 : d);
		p = end;
	}
}

void pmd_numa_init(struct pmd_numa *n)
{
	uint64_t online = read_nodes("online", 1), mem = pmd_numa_mem_nodes(),
		 cpus = pmd_numa_cpu_nodes();
	unsigned i;

	memset(n, 0, sizeof(*n));
	/* get_mempolicy(2) answers ENOSYS on a kernel without CONFIG_NUMA */
	n->available = !(pmd_get_mempolicy(NULL, NULL, 0, NULL, 0) && errno == ENOSYS);
	for (i = 0; i < PMD_MAX_NODES; i++) {
		struct pmd_numa_node *nd;
		char path[128];
		cpu_set_t set;

		if (!(online & (1ull << i)))
			continue;
		nd = &n->node[n->nnodes++];
		nd->id = (int)i;
		nd->has_memory = mem & (1ull << i);
		nd->has_cpus = cpus & (1ull << i);
		snprintf(path, sizeof(path), NODE_DIR "/node%u/cpulist", i);
		if (read_text(path, nd->cpus, sizeof(nd->cpus)) && n->nnodes == 1) {
			/* no sysfs node directory: one node with every CPU and all memory */
			long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

			snprintf(nd->cpus, sizeof(nd->cpus), "0-%ld", ncpu > 1 ? ncpu - 1 : 0);
			nd->mem_total =
				(uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
		}
		nd->ncpus = cpulist_to_set(nd->cpus, &set);
		read_meminfo(nd);
	}
	for (i = 0; i < n->nnodes; i++)
		read_distances(n, i);
}

void pmd_numa_fini(struct pmd_numa *n)
{
	free(n->bind_cpus);
	free(n->where);
	n->bind_cpus = NULL;
	n->where = NULL;
	n->nwhere = 0;
}

/* ---- configuration ------------------------------------------------------------ */

/* The first node of @want that is not in @have, or -1. */
static int first_missing(uint64_t want, uint64_t have)
{
	uint64_t miss = want & ~have;

	return miss ? __builtin_ctzll(miss) : -1;
}

int pmd_mempolicy_parse(const char *text, uint64_t mem_nodes, uint64_t allowed,
			struct pmd_mempolicy *p, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		int mode;
		int nodes; /* 0: none, 1: a list is required, 2: optional list, 3: one node */
	} kinds[] = {
		{ "default", MPOL_DEFAULT, 0 }, { "local", MPOL_LOCAL, 0 },
		{ "bind", MPOL_BIND, 1 },	{ "interleave", MPOL_INTERLEAVE, 2 },
		{ "preferred", MPOL_PREFERRED, 3 },
	};
	const char *colon = strchr(text, ':');
	size_t nlen = colon ? (size_t)(colon - text) : strlen(text);
	char have[160];
	unsigned i;
	int miss;

	memset(p, 0, sizeof(*p));
	pmd_nodemask_format(mem_nodes, have, sizeof(have));
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strlen(kinds[i].name) == nlen && !strncmp(text, kinds[i].name, nlen))
			break;
	if (i == sizeof(kinds) / sizeof(kinds[0]) || (colon && !kinds[i].nodes) ||
	    (!colon && (kinds[i].nodes == 1 || kinds[i].nodes == 3)))
		return pmd_errf(err, errlen,
			    "--mem-policy: invalid value '%s' (expected default, local, "
			    "bind:NODES, interleave[:NODES] or preferred:NODE, with NODES a list "
			    "such as 0,2 or 0-1)",
			    text);
	p->mode = kinds[i].mode;
	if (!colon) {
		p->nodes = kinds[i].nodes == 2 ? mem_nodes & allowed : 0;
		return 0;
	}
	if (pmd_nodelist_parse(colon + 1, &p->nodes))
		return pmd_errf(err, errlen, "--mem-policy: invalid value '%s' (bad node list '%s': "
					 "expected nodes below %d such as 0,2 or 0-1)",
			    text, colon + 1, PMD_MAX_NODES);
	if (kinds[i].nodes == 3 && popcount64(p->nodes) != 1)
		return pmd_errf(err, errlen, "--mem-policy: invalid value '%s' (preferred takes one "
					 "node)", text);
	miss = first_missing(p->nodes, mem_nodes);
	if (miss >= 0)
		return pmd_errf(err, errlen, "--mem-policy: invalid value '%s' (node %d does not exist "
					 "here or has no memory; nodes with memory: %s)",
			    text, miss, have);
	/* the kernel would drop such a node, or refuse a policy left with none (EINVAL) */
	miss = first_missing(p->nodes, allowed);
	pmd_nodemask_format(mem_nodes & allowed, have, sizeof(have));
	if (miss >= 0)
		return pmd_errf(err, errlen, "--mem-policy: invalid value '%s' (node %d is not one "
					 "this process may allocate on: its cpuset allows nodes %s)",
			    text, miss, have[0] ? have : "none with memory");
	return 0;
}

void pmd_mempolicy_format(const struct pmd_mempolicy *p, char *buf, size_t len)
{
	char nodes[160];

	pmd_nodemask_format(p->nodes, nodes, sizeof(nodes));
	switch (p->mode) {
	case MPOL_LOCAL:
		snprintf(buf, len, "local");
		break;
	case MPOL_BIND:
		snprintf(buf, len, "bind:%s", nodes);
		break;
	case MPOL_INTERLEAVE:
		snprintf(buf, len, "interleave:%s", nodes);
		break;
	case MPOL_PREFERRED:
		snprintf(buf, len, "preferred:%s", nodes);
		break;
	default:
		snprintf(buf, len, "default");
		break;
	}
}

/*
 * --cpu-nodes: "" (no binding), "spread" (every node with a CPU this
 * process may run on) or a list, each node with such a CPU: binding a
 * worker to CPUs outside the process's affinity would fail in a cpuset,
 * and would override the user's taskset otherwise.
 */
static int cpu_nodes_parse(const char *text, uint64_t *mask, char *err, size_t errlen)
{
	uint64_t cpu_nodes = pmd_numa_cpu_nodes(), usable = cpu_nodes;
	char have[160], cpus[256], mine[256];
	cpu_set_t allowed, set;
	int miss;

	*mask = 0;
	if (!*text)
		return 0;
	if (!sched_getaffinity(0, sizeof(allowed), &allowed))
		usable = usable_cpu_nodes(cpu_nodes, &allowed);
	if (!strcmp(text, "spread")) {
		*mask = usable;
		return 0;
	}
	if (pmd_nodelist_parse(text, mask))
		return pmd_errf(err, errlen, "--cpu-nodes: invalid value '%s' (expected spread or a "
					 "node list such as 0,2 or 0-1, nodes below %d)",
			    text, PMD_MAX_NODES);
	miss = first_missing(*mask, cpu_nodes);
	pmd_nodemask_format(cpu_nodes, have, sizeof(have));
	if (miss >= 0)
		return pmd_errf(err, errlen, "--cpu-nodes: invalid value '%s' (node %d does not exist "
					 "here or has no CPUs; nodes with CPUs: %s)",
			    text, miss, have);
	miss = first_missing(*mask, usable);
	if (miss < 0)
		return 0;
	if (!node_cpus((unsigned)miss, &set, cpus, sizeof(cpus)))
		snprintf(cpus, sizeof(cpus), "?");
	cpuset_format(&allowed, mine, sizeof(mine));
	pmd_nodemask_format(usable, have, sizeof(have));
	return pmd_errf(err, errlen, "--cpu-nodes: invalid value '%s' (node %d's CPUs %s are none "
				 "of the CPUs this process may run on: %s (taskset, cpuset); nodes "
				 "with one: %s)",
		    text, miss, cpus, mine, have[0] ? have : "none");
}

int pmd_numa_check_config(const struct pmd_config *cfg, char *err, size_t errlen)
{
	struct pmd_mempolicy p;
	uint64_t mask;
	int rc;

	rc = cpu_nodes_parse(cfg->cpu_nodes, &mask, err, errlen);
	if (!rc)
		rc = pmd_mempolicy_parse(cfg->mem_policy, pmd_numa_mem_nodes(),
					 pmd_numa_mems_allowed(), &p, err, errlen);
	if (!rc && p.mode != MPOL_DEFAULT && pmd_get_mempolicy(NULL, NULL, 0, NULL, 0) &&
	    errno == ENOSYS)
		return pmd_errf(err, errlen,
			    "--mem-policy: invalid value '%s' (this kernel has no NUMA support: "
			    "get_mempolicy() says ENOSYS; use default)",
			    cfg->mem_policy);
	return rc;
}

/* ---- the arena's policy -------------------------------------------------------- */

int pmd_arena_policy(const struct pmd_arena *a, void *addr, size_t len)
{
	const unsigned bits = 8 * sizeof(unsigned long);
	unsigned long mask[PMD_MAX_NODES / (8 * sizeof(unsigned long))];
	unsigned i;

	memset(mask, 0, sizeof(mask));
	for (i = 0; i < PMD_MAX_NODES; i++)
		if (a->mpol.nodes & (1ull << i))
			mask[i / bits] |= 1ul << (i % bits);
	/*
	 * No MPOL_MF_MOVE and no MPOL_MF_STRICT: the policy steers the pages
	 * faulted from now on; pages already there stay where they are (the
	 * migrate stressor moves them on purpose). maxnode counts one more
	 * than the bits the kernel reads (mbind(2)'s historical off-by-one).
	 */
	if (a->mpol.mode == MPOL_DEFAULT || a->mpol.mode == MPOL_LOCAL)
		return pmd_mbind(addr, len, a->mpol.mode, NULL, 0, 0) ? -errno : 0;
	return pmd_mbind(addr, len, a->mpol.mode, mask, PMD_MAX_NODES + 1, 0) ? -errno : 0;
}

/* ---- placement ------------------------------------------------------------------- */

int pmd_numa_placement(struct pmd_numa *n, const struct pmd_config *cfg)
{
	char err[256];
	cpu_set_t allowed;
	uint64_t mask;
	unsigned i, k;

	free(n->bind_cpus);
	n->bind_cpus = NULL;
	n->nbind = 0;
	if (cpu_nodes_parse(cfg->cpu_nodes, &mask, err, sizeof(err)))
		return -EINVAL; /* checked at config time already */
	if (!mask)
		return 0;
	n->bind_cpus = calloc(popcount64(mask), sizeof(*n->bind_cpus));
	if (!n->bind_cpus)
		return -ENOMEM;
	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		CPU_ZERO(&allowed);
	for (i = 0; i < n->nnodes; i++) {
		const struct pmd_numa_node *nd = &n->node[i];
		cpu_set_t both;

		if (!(mask & (1ull << nd->id)))
			continue;
		k = n->nbind++;
		n->bind_node[k] = nd->id;
		cpulist_to_set(nd->cpus, &n->bind_cpus[k]);
		/* within what this process may use (taskset, cpusets), if that leaves any */
		CPU_AND(&both, &n->bind_cpus[k], &allowed);
		if (CPU_COUNT(&both))
			n->bind_cpus[k] = both;
	}
	return 0;
}

int pmd_numa_round(struct pmd_numa *n, unsigned nworkers)
{
	unsigned i;

	free(n->where);
	n->nwhere = 0;
	n->where = calloc(nworkers ? nworkers : 1, sizeof(*n->where));
	if (!n->where)
		return -ENOMEM;
	n->nwhere = nworkers;
	for (i = 0; i < nworkers; i++) {
		n->where[i].bound = n->nbind ? n->bind_node[i % n->nbind] : -1;
		n->where[i].cpu = n->where[i].node = -1;
	}
	return 0;
}

int pmd_numa_bind_worker(struct pmd_numa *n, unsigned id)
{
	int rc;

	if (!n->nbind || id >= n->nwhere)
		return 0;
	rc = pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t),
				    &n->bind_cpus[id % n->nbind]);
	n->where[id].err = -rc;
	return -rc;
}

void pmd_numa_worker_done(struct pmd_numa *n, unsigned id)
{
	unsigned cpu, node;

	if (id >= n->nwhere || getcpu(&cpu, &node))
		return;
	n->where[id].cpu = (int)cpu;
	n->where[id].node = (int)node;
}

int pmd_numa_balancing_apply(struct pmd_numa *n, unsigned setting)
{
	int rc;

	if (setting == PMD_NUMA_BAL_KEEP)
		return 0;
	rc = read_text(PMD_NUMA_BALANCING_PATH, n->balancing_was, sizeof(n->balancing_was));
	if (rc)
		return rc;
	return pmd_restore_write(PMD_NUMA_BALANCING_PATH, setting == PMD_NUMA_BAL_ON ? "1" : "0");
}

/* ---- reports ------------------------------------------------------------------- */

static const char *const balancing_names[] = { "keep", "on", "off" };

json_t *pmd_numa_json(const struct pmd_run *run)
{
	const struct pmd_numa *n = &run->numa;
	json_t *o = json_object(), *nodes = json_array(), *ws = json_array(), *per = json_object();
	json_t *bal = json_object();
	char buf[160];
	unsigned i, j;

	json_object_set_new(o, "available", json_boolean(n->available));
	json_object_set_new(o, "nodes", json_integer(n->nnodes));
	for (i = 0; i < n->nnodes; i++) {
		const struct pmd_numa_node *nd = &n->node[i];
		json_t *x = json_object(), *d = json_array();

		json_object_set_new(x, "id", json_integer(nd->id));
		json_object_set_new(x, "cpus", json_string(nd->cpus));
		json_object_set_new(x, "ncpus", json_integer(nd->ncpus));
		json_object_set_new(x, "has_memory", json_boolean(nd->has_memory));
		json_object_set_new(x, "mem_total", json_integer((json_int_t)nd->mem_total));
		json_object_set_new(x, "mem_free", json_integer((json_int_t)nd->mem_free));
		for (j = 0; j < n->nnodes; j++)
			json_array_append_new(d, json_integer(n->distance[i][j]));
		json_object_set_new(x, "distances", d);
		json_array_append_new(nodes, x);
	}
	json_object_set_new(o, "node", nodes);
	json_object_set_new(o, "cpu_nodes", json_string(run->cfg->cpu_nodes));
	pmd_mempolicy_format(&run->arena.mpol, buf, sizeof(buf));
	json_object_set_new(o, "mem_policy", json_string(buf));
	json_object_set_new(bal, "setting",
			    json_string(balancing_names[run->cfg->numa_balancing % 3]));
	json_object_set_new(bal, "was", n->balancing_was[0] ? json_string(n->balancing_was)
							     : json_null());
	json_object_set_new(o, "numa_balancing", bal);
	for (i = 0; i < n->nwhere && i < run->nworkers; i++) {
		const struct pmd_numa_where *w = &n->where[i];
		const struct pmd_worker *wk = &run->workers[i];
		json_t *x = json_object();

		json_object_set_new(x, "id", json_integer(wk->id));
		json_object_set_new(x, "stressor", json_string(wk->si->st->name));
		json_object_set_new(x, "index", json_integer(wk->index));
		json_object_set_new(x, "bound",
				    w->bound >= 0 ? json_integer(w->bound) : json_null());
		if (w->err)
			json_object_set_new(x, "bind_error", json_string(strerror(-w->err)));
		json_object_set_new(x, "cpu", w->cpu >= 0 ? json_integer(w->cpu) : json_null());
		json_object_set_new(x, "node", w->node >= 0 ? json_integer(w->node) : json_null());
		json_array_append_new(ws, x);
		if (w->node >= 0) {
			json_t *c;

			snprintf(buf, sizeof(buf), "%d", w->node);
			c = json_object_get(per, buf);
			json_object_set_new(per, buf,
					    json_integer((c ? json_integer_value(c) : 0) + 1));
		}
	}
	json_object_set_new(o, "workers", ws);
	json_object_set_new(o, "workers_per_node", per);
	return o;
}

void pmd_numa_text(FILE *out, const struct pmd_run *run)
{
	const struct pmd_numa *n = &run->numa;
	const struct pmd_config *cfg = run->cfg;
	unsigned i, j, at[PMD_MAX_NODES] = { 0 }, unknown = 0;
	char pol[160], sz[32];

	pmd_mempolicy_format(&run->arena.mpol, pol, sizeof(pol));
	/* a one-node machine run without NUMA options: nothing worth a line */
	if (n->nnodes < 2 && !cfg->cpu_nodes[0] && run->arena.mpol.mode == MPOL_DEFAULT &&
	    cfg->numa_balancing == PMD_NUMA_BAL_KEEP)
		return;
	fprintf(out, "\nNUMA: %u node%s%s", n->nnodes, n->nnodes == 1 ? "" : "s",
		n->available ? "" : " (kernel without NUMA)");
	for (i = 0; i < n->nnodes; i++) {
		pmd_format_size(n->node[i].mem_total & ~((1ull << 20) - 1), sz, sizeof(sz));
		fprintf(out, "%s node %d: cpus %s, %s", i ? ";" : ":", n->node[i].id,
			n->node[i].cpus[0] ? n->node[i].cpus : "none", sz);
	}
	if (n->nnodes > 1) {
		fprintf(out, "; distances");
		for (i = 0; i < n->nnodes; i++)
			for (j = 0; j < n->nnodes; j++)
				fprintf(out, "%s%u", j ? "/" : " ", n->distance[i][j]);
	}
	fprintf(out, "\n  placement: cpu-nodes %s, mem-policy %s, numa-balancing %s",
		cfg->cpu_nodes[0] ? cfg->cpu_nodes : "(none)", pol,
		balancing_names[cfg->numa_balancing % 3]);
	if (n->balancing_was[0])
		fprintf(out, " (was %s, restored)", n->balancing_was);
	for (i = 0; i < n->nwhere && i < run->nworkers; i++) {
		if (n->where[i].node >= 0 && n->where[i].node < PMD_MAX_NODES)
			at[n->where[i].node]++;
		else
			unknown++;
	}
	fprintf(out, "\n  workers at the end of their run:");
	for (i = 0; i < n->nnodes; i++)
		fprintf(out, " node %d: %u", n->node[i].id, at[n->node[i].id]);
	if (unknown)
		fprintf(out, ", not sampled: %u", unknown);
	fprintf(out, "\n");
}
