/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The effective configuration of a run, immutable once parsed. Global fields
 * are described by the option table in src/cli/config.c; each stressor's private
 * options live in the block its own table describes (struct pmd_scfg.opts).
 */
#ifndef PMDSTRESS_CONFIG_H
#define PMDSTRESS_CONFIG_H

#include <pmdstress/option.h>

#include <stdbool.h>
#include <stdint.h>

#define PMD_MAX_STRESSORS 32

enum pmd_probe_method {
	PMD_PROBE_AUTO = 0, /* the best this kernel and these privileges allow */
	PMD_PROBE_SCAN,	    /* PAGEMAP_SCAN (6.7+) */
	PMD_PROBE_KPAGEFLAGS, /* pagemap PFNs + /proc/kpageflags (root) */
	PMD_PROBE_SMAPS,    /* pagemap present bits + smaps per VMA */
};

enum pmd_progress_mode {
	PMD_PROGRESS_AUTO = 0, /* a live line on a terminal, plain lines otherwise */
	PMD_PROGRESS_LINE,
	PMD_PROGRESS_PLAIN,
	PMD_PROGRESS_OFF,
};

/* Per-stressor settings every stressor has, plus its private block. */
struct pmd_scfg {
	bool enabled;		  /* its section is in the scenario, or --stressors names it */
	struct pmd_share workers; /* how many of --threads run it */
	unsigned nworkers;	  /* resolved from .workers at config time */
	char dropped[96];	  /* enabled, but --threads left it no worker: why */
	void *opts;		  /* the stressor's private options */
};

#define PMD_MAX_ORIGINS 128

enum pmd_race_trace {
	PMD_RACE_TRACE_AUTO = 0, /* as root, where tracefs has the events */
	PMD_RACE_TRACE_OFF,
};

struct pmd_config {
	uint64_t threads; /* all workers of all stressors */
	uint64_t duration_ns;
	uint64_t size; /* arena bytes */
	bool shared;
	unsigned thp; /* enum pmd_thp_mode */
	uint64_t seed;
	bool verify;
	unsigned thp_probe; /* enum pmd_probe_method */
	uint64_t rounds; /* bench mode: repeat the measurement */
	bool warmup;	 /* bench mode: one extra first round, reported apart */
	bool single_thread; /* the one worker on the main thread, no other thread */
	uint64_t interval_ns;
	unsigned progress; /* enum pmd_progress_mode */
	uint64_t hang_timeout_ns;
	bool quiet;
	char json[PMD_OPT_STRLEN];
	char jsonl[PMD_OPT_STRLEN];
	char ktap[PMD_OPT_STRLEN];   /* KTAP results for kselftest/KernelCI; "-" = stdout */
	char replay[PMD_OPT_STRLEN]; /* the JSON report this run replays, or "" */
	char stressors[PMD_OPT_STRLEN];
	char config[PMD_OPT_STRLEN];
	char inject[PMD_OPT_STRLEN]; /* hidden, test-only corruption */
	uint64_t stack_size;	     /* hidden: worker stack bytes */
	char cpu_nodes[PMD_OPT_STRLEN];	 /* "", "spread" or a node list (src/kernel/numa.c) */
	char mem_policy[PMD_OPT_STRLEN]; /* the arena's: default, local, bind:N, ... */
	unsigned numa_balancing;	 /* enum pmd_numa_balancing: keep, on, off */
	uint64_t memcg_headroom;	 /* bytes above usage the run's memcg allows; 0: off */
	unsigned race_trace;		 /* enum pmd_race_trace: auto, off */
	uint64_t partner_cpu;		 /* percent of the CPUs the partners may use together */

	/* derived */
	char scenario[PMD_OPT_STRLEN]; /* builtin scenario name or file path */
	/*
	 * Where the scenario file set each key ("size", "fault-chunks": the
	 * option's command-line name), so that a value refused only by the
	 * cross-field checks is still reported with its file and line. A key
	 * the command line set again has none: the command line won.
	 */
	char ini_origin[PMD_OPT_STRLEN];
	struct pmd_key_origin {
		char key[48];
		char section[24];
		int line;
	} origin[PMD_MAX_ORIGINS];
	unsigned norigin;
	uint64_t seed_used;	       /* the seed, never 0 */
	struct pmd_scfg st[PMD_MAX_STRESSORS];
};

#endif
