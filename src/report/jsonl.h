/* SPDX-License-Identifier: GPL-2.0 */
/* --jsonl FILE: one JSON object per interval, flushed, so a killed run still leaves data. */
#ifndef PMD_JSONL_H
#define PMD_JSONL_H

#include <stdio.h>

struct pmd_run;
struct pmd_sample;

int pmd_jsonl_open(struct pmd_run *run, const char *path);
/* One line for the interval from @prev to @now (the live line's numbers). */
void pmd_jsonl_write(struct pmd_run *run, const struct pmd_sample *prev,
		     const struct pmd_sample *now);
void pmd_jsonl_close(struct pmd_run *run);
/* pmdstress's resident set now, bytes (from /proc/self/statm). */
unsigned long long pmd_self_rss(void);

#endif
