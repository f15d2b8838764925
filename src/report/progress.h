/* SPDX-License-Identifier: GPL-2.0 */
/* The live status line: the numbers of the last interval, from per-worker counters. */
#ifndef PMD_PROGRESS_H
#define PMD_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct pmd_run;

/* What the workers have counted so far, summed. */
struct pmd_sample {
	uint64_t t_ns;
	uint64_t ops, faults;
	uint64_t thp[8];
	uint64_t race_rounds, race_hits;
	uint64_t events;
};

struct pmd_progress {
	FILE *out;
	bool live;    /* rewrite one line on a terminal */
	bool enabled;
	unsigned width;
};

void pmd_sample_take(const struct pmd_run *run, struct pmd_sample *s);
/* Share of verified chunks that were PMD-mapped, in [0,1]; -1 if none verified. */
double pmd_sample_thp_share(const struct pmd_sample *s);

void pmd_progress_init(struct pmd_progress *p, const struct pmd_run *run);
/*
 * One status line for the interval from @prev to @s: the caller passes the
 * same two samples it gives pmd_jsonl_write(), so the line and the JSON line
 * show the same numbers.
 */
void pmd_progress_tick(struct pmd_progress *p, const struct pmd_run *run,
		       const struct pmd_sample *prev, const struct pmd_sample *s);
void pmd_progress_done(struct pmd_progress *p, const struct pmd_run *run);

#endif
