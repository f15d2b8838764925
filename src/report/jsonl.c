// SPDX-License-Identifier: GPL-2.0
/*
 * The time series: one JSON object per interval, written and flushed at
 * each tick by the main thread, with the numbers the live status line
 * shows. rss_bytes is the whole process (statm); tool_rss_bytes is the Rss
 * of every mapping but the arena, from the same smaps pass as
 * arena_rss_bytes: what must stay flat over a soak.
 */
#include "jsonl.h"

#include "progress.h"
#include "run.h"

#include <errno.h>
#include <malloc.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

unsigned long long pmd_self_rss(void)
{
	unsigned long long size = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &rss) != 2)
		rss = 0;
	fclose(f);
	return rss * (unsigned long long)sysconf(_SC_PAGESIZE);
}

int pmd_jsonl_open(struct pmd_run *run, const char *path)
{
	if (!path || !*path)
		return 0;
	run->jsonl = fopen(path, "we");
	if (!run->jsonl)
		return -errno;
	return 0;
}

void pmd_jsonl_write(struct pmd_run *run, const struct pmd_sample *prev,
		     const struct pmd_sample *now)
{
	double dt = (double)(now->t_ns - prev->t_ns) / 1e9, share;
	unsigned long long rss = pmd_self_rss();
	uint64_t arena_rss = 0, arena_huge = 0, tool_rss = 0;
	struct mallinfo2 mi = mallinfo2(); /* what malloc holds: a leak shows here first */
	struct pmd_sample d = *now;
	char share_text[16];
	unsigned k;

	if (!run->jsonl)
		return;
	if (dt <= 0)
		dt = 1e-9;
	for (k = 0; k < PMD_THPS_COUNT; k++)
		d.thp[k] -= prev->thp[k];
	share = pmd_sample_thp_share(&d);
	if (share < 0)
		snprintf(share_text, sizeof(share_text), "null"); /* nothing verified this interval */
	else
		snprintf(share_text, sizeof(share_text), "%.4f", share);
	pmd_arena_smaps(&run->arena, &arena_rss, &arena_huge, &tool_rss);
	fprintf(run->jsonl,
		"{\"t_s\":%.3f,\"round\":%u,\"ops\":%" PRIu64 ",\"ops_per_s\":%.1f,\"faults\":%" PRIu64
		",\"faults_per_s\":%.1f,\"thp_share\":%s,\"race_rounds\":%" PRIu64
		",\"race_hits\":%" PRIu64 ",\"events\":%" PRIu64 ",\"rss_bytes\":%llu"
		",\"arena_rss_bytes\":%" PRIu64 ",\"tool_rss_bytes\":%llu,\"heap_bytes\":%zu}\n",
		(double)(now->t_ns - run->t_origin) / 1e9, run->nrounds, now->ops,
		(double)(now->ops - prev->ops) / dt, now->faults,
		(double)(now->faults - prev->faults) / dt, share_text, now->race_rounds,
		now->race_hits, now->events, rss, arena_rss, (unsigned long long)tool_rss,
		mi.uordblks + mi.hblkhd);
	fflush(run->jsonl);
}

void pmd_jsonl_close(struct pmd_run *run)
{
	if (run->jsonl)
		fclose(run->jsonl);
	run->jsonl = NULL;
}
