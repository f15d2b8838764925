/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --memcg-headroom: the run in a memory cgroup of its own whose limit stays
 * a little above what it uses, so that a huge page's charge fails and its
 * fault falls back to the 4 KiB path (do_huge_pmd_anonymous_page() ->
 * VM_FAULT_FALLBACK, vmstat thp_fault_fallback_charge) while the huge zero
 * page, which is not charged, still maps. That puts a 4 KiB fault and a
 * huge-PMD install on the same PMD at once, the race of CVE-2012-1179.
 * Engine-internal; stressors re-arm the limit through <pmdstress/stressor.h>.
 */
#ifndef PMD_MEMCG_H
#define PMD_MEMCG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>

#define PMD_MEMCG_PATH 600

struct pmd_run;

struct pmd_memcg {
	bool on;
	int version;	   /* 2: cgroup v2, 1: v1 memory hierarchy */
	uint64_t headroom; /* bytes */
	char home[PMD_MEMCG_PATH]; /* the cgroup the run came from */
	char dir[PMD_MEMCG_PATH];  /* the run's own */
	int usage_fd, limit_fd;	   /* memory.current / memory.max (v1: usage, limit_in_bytes) */
	uint64_t rearms;	   /* atomic: limits set */
	uint64_t rearm_errors;	   /* atomic */
	uint64_t usage_max;	   /* atomic: the highest usage seen at a re-arm */
	int last_errno;
	/* the seed race's memcg way: no limit but in a seed round's first stores */
	bool seed;
	uint32_t win_seq;	/* atomic futex word: odd while a seed round's window is open */
	uint32_t chargers;	/* atomic: big chargers at work (a fork and its rewrite) */
	uint64_t win_closed_ns; /* atomic: pmd_coarse_ns() when the last window closed */
	pthread_t keeper;	/* closes a window open too long (src/kernel/memcg.c) */
	bool keeper_on;
	uint32_t keeper_stop;	/* atomic */
	uint64_t seed_tight;	/* atomic: windows opened */
	uint64_t win_forced;	/* atomic: windows the keeper closed */
	char oom_adj[16];	/* oom_score_adj before the seed way set it, "" if untouched */
	char home_procs[PMD_MEMCG_PATH + 16]; /* home's cgroup.procs, for fork children */
};

/*
 * Make a cgroup for this run next to ours (v2: under our parent, or under
 * the root when ours is the root; v1: under ours), move the process in and
 * set the first limit. Empty cgroups of earlier runs whose process is gone
 * are removed first. Returns 0, or -errno with @err saying why.
 */
int pmd_memcg_enter(struct pmd_memcg *m, uint64_t headroom, char *err, size_t errlen);
/* Move back where the run came from and remove the run's cgroup. Idempotent. */
void pmd_memcg_leave(struct pmd_memcg *m);

/*
 * Whether a seed round's window (its deliberate limit) was open at any time
 * since @since (pmd_coarse_ns()): an ENOMEM a worker met since then may be
 * the run's own limit, not the machine's nor the kernel's error.
 */
bool pmd_memcg_window_since(const struct pmd_run *run, uint64_t since);
/*
 * When the calling thread's last pmd_memcg_charge_begin/end() section ended
 * (pmd_coarse_ns(), 0: none): a call made in it met no window, though one
 * may have closed since the worker's beat (the section waits for it).
 */
uint64_t pmd_memcg_charged_until(void);

struct json_t *pmd_memcg_json(const struct pmd_run *run);
void pmd_memcg_text(FILE *out, const struct pmd_run *run);

#endif
