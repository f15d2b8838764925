// SPDX-License-Identifier: GPL-2.0
/*
 * populate: MADV_POPULATE_READ and MADV_POPULATE_WRITE of whole chunks
 * under the first-touch storm.
 *
 * The race: a populate (Linux 5.14) faults a range in through GUP
 * (faultin_page() -> handle_mm_fault() under the mmap lock, no per-VMA
 * lock), so on a live round's chunk it is one more racer for the same
 * pmd_none PMD, coming by another path than the workers' page faults: a
 * write populate takes the THP path or the PTE path as a fault would; a
 * read populate of an empty PMD maps the huge zero page, whose first write
 * by a worker then goes through the huge-zero-page COW path
 * (do_huge_pmd_wp_page(): a fresh huge page, or a split into page tables
 * and a small page). Those paths are where "huge zero page COW" and
 * "GUP vs THP split" fixes landed (docs/mutants.md: mutant 10 re-breaks
 * one of them).
 *
 * A populate does not change what a page holds (a present page keeps its
 * data, an absent one becomes a zero page or a zero-filled page), so, as
 * collapse, it takes no ownership, holds nothing, and hits live rounds and
 * settled chunks alike: the verifier needs no race record. What it may
 * meet: EINVAL where part of the range is not writable or not readable for
 * a moment (a chunk moved away leaves a PROT_NONE placeholder, split's
 * munmap holes are one until the fresh page is mapped, its mprotect holes
 * are read-only while it holds the chunk, even in the middle of a live
 * round, without the chunk's address or generation changing), a hole
 * split's plain mremap leaves for a moment (ENOMEM), the memory cgroup's
 * window of the seed race (ENOMEM), an injected page past a file's end
 * (EFAULT). Each is counted; an ENOMEM or EFAULT none of them explains is
 * reported, once per worker, and the partner goes on.
 *
 * How to tell it fired: "raced" counts calls on a chunk whose round was
 * under way; "zero_thp" counts read populates of an empty chunk after
 * which it probed PMD-mapped (the huge zero page, where the kernel uses
 * it); thp_fault_alloc and pgfault in the vmstat deltas include its faults.
 */
#include <pmdstress/stressor.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define PICK_TRIES 8 /* chunks looked at for a live round per call */

enum { TARGET_LIVE, TARGET_ANY };

struct populate_opts {
	uint64_t rate;
	uint64_t write;
	unsigned target;
};

static const char *const targets[] = { "live", "any", NULL };

#define O(f) offsetof(struct populate_opts, f)
static const struct pmd_option populate_options[] = {
	{ "rate", PMD_OPT_UINT, O(rate), "100", 0, 1000000, NULL,
	  "populate calls per second, all workers together (0: as fast as possible)" },
	{ "write", PMD_OPT_UINT, O(write), "50", 0, 100, NULL,
	  "percent of calls that are MADV_POPULATE_WRITE (the rest MADV_POPULATE_READ)" },
	{ "target", PMD_OPT_ENUM, O(target), "live", 0, 0, targets,
	  "live: a chunk whose round is under way where one is found, else any; any: any "
	  "chunk" },
	PMD_OPT_END,
};

enum {
	M_OPS,
	M_READ,
	M_WRITE,
	M_RACED,
	M_ZERO_THP,
	M_MOVED,
	M_ENOMEM,
	M_EFAULT,
	M_EINTR,
	M_EOTHER,
	M_LAT_READ,
	M_LAT_WRITE,
};

static const struct pmd_metric populate_metrics[] = {
	[M_OPS] = { "ops", PMD_METRIC_COUNT, "MADV_POPULATE_READ and _WRITE calls" },
	[M_READ] = { "read", PMD_METRIC_COUNT, "MADV_POPULATE_READ calls that succeeded",
		     PMD_BETTER_NONE },
	[M_WRITE] = { "write", PMD_METRIC_COUNT, "MADV_POPULATE_WRITE calls that succeeded",
		      PMD_BETTER_NONE },
	[M_RACED] = { "raced", PMD_METRIC_COUNT, "calls on a chunk whose fault round was under way",
		      PMD_BETTER_NONE },
	[M_ZERO_THP] = { "zero_thp", PMD_METRIC_COUNT,
			 "read populates of an empty chunk that left it PMD-mapped (huge zero "
			 "page)",
			 PMD_BETTER_NONE },
	[M_MOVED] = { "moved", PMD_METRIC_COUNT,
		      "EINVAL: part of the chunk was moved, unmapped (a PROT_NONE placeholder) or "
		      "read-only (split's holes) under the call",
		      PMD_BETTER_NONE },
	[M_ENOMEM] = { "enomem", PMD_METRIC_COUNT,
		       "ENOMEM: a hole of split's plain mremap, or the seed race's memcg window",
		       PMD_BETTER_NONE },
	[M_EFAULT] = { "efault", PMD_METRIC_COUNT,
		       "EFAULT: a page a fault could not map (an injected page past a file's end)",
		       PMD_BETTER_NONE },
	[M_EINTR] = { "eintr", PMD_METRIC_COUNT, "EINTR: a signal (the run stopping)",
		      PMD_BETTER_NONE },
	[M_EOTHER] = { "other_errors", PMD_METRIC_COUNT, "any other error (reported)",
		       PMD_BETTER_NONE },
	[M_LAT_READ] = { "read_call", PMD_METRIC_LATENCY, "one MADV_POPULATE_READ of a chunk" },
	[M_LAT_WRITE] = { "write_call", PMD_METRIC_LATENCY, "one MADV_POPULATE_WRITE of a chunk" },
	{ NULL },
};

/* A chunk to populate: a live round's where one is found (TARGET_LIVE), else any live one. */
static struct pmd_chunk *pick_chunk(struct pmd_worker *w, const struct populate_opts *o)
{
	struct pmd_arena *a = w->si->arena;
	struct pmd_chunk *any = NULL;
	unsigned i;

	for (i = 0; i < PICK_TRIES; i++) {
		struct pmd_chunk *c = &a->chunks[pmd_rand_below(w, a->nchunks)];

		if (pmd_chunk_retired(c))
			continue;
		if (o->target == TARGET_ANY || pmd_chunk_state(c) == PMD_CHUNK_ROUND)
			return c;
		if (!any)
			any = c;
	}
	return any;
}

static unsigned error_metric(int err)
{
	return err == EINVAL ? M_MOVED :
	       err == ENOMEM ? M_ENOMEM :
	       err == EFAULT ? M_EFAULT :
	       err == EINTR  ? M_EINTR :
			       M_EOTHER;
}

/*
 * Whether an error is one the call may meet (counted only) rather than one
 * to report. @c's address and generation before the call say whether it
 * was moved or replaced under it.
 */
static bool expected_error(struct pmd_worker *w, struct pmd_chunk *c, int err, uintptr_t addr,
			   uint32_t gen)
{
	bool changed = pmd_chunk_retired(c) || __atomic_load_n(&c->addr, __ATOMIC_ACQUIRE) != addr ||
		       __atomic_load_n(&c->gen, __ATOMIC_RELAXED) != gen;

	switch (err) {
	case EINVAL:
		return true; /* split's holes come and go without a trace in the chunk */
	case ENOMEM:
		return changed || __atomic_load_n(&w->si->arena->holes, __ATOMIC_ACQUIRE) ||
		       pmd_enomem_own(w, err);
	case EFAULT:
		return changed || pmd_inject_get(w->si->run)->kind != PMD_INJECT_NONE;
	case EINTR:
		return true;
	default:
		return false;
	}
}

static void populate_once(struct pmd_worker *w, const struct populate_opts *o)
{
	struct pmd_chunk *c = pick_chunk(w, o);
	bool write = pmd_rand_below(w, 100) < o->write, racing, empty = false;
	uint64_t t0, dt;
	uintptr_t addr;
	uint32_t gen;
	char *at;
	int err;

	if (!c || !(at = pmd_chunk_enter(c)))
		return;
	/* the call runs outside the read section: it cannot change what the chunk holds */
	pmd_chunk_exit(c);
	addr = (uintptr_t)at;
	gen = __atomic_load_n(&c->gen, __ATOMIC_RELAXED);
	racing = pmd_chunk_state(c) == PMD_CHUNK_ROUND;
	if (!write && !racing)
		empty = pmd_thp_probe(w->si->run, c, NULL) == PMD_THPS_NONE;
	t0 = pmd_now_ns();
	err = madvise(at, PMD_CHUNK_SIZE, write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ) ? errno
											      : 0;
	dt = pmd_now_ns() - t0;
	pmd_chunk_log(c, t0, PMD_OP_MADV_POPULATE, w->id, (uint32_t)write | (uint32_t)err << 1);
	pmd_count(w, M_OPS, 1);
	pmd_latency(w, write ? M_LAT_WRITE : M_LAT_READ, dt);
	if (racing)
		pmd_count(w, M_RACED, 1);
	if (!err) {
		pmd_count(w, write ? M_WRITE : M_READ, 1);
		if (empty && pmd_thp_probe(w->si->run, c, NULL) == PMD_THPS_THP)
			pmd_count(w, M_ZERO_THP, 1);
		return;
	}
	pmd_count(w, error_metric(err), 1);
	if (expected_error(w, c, err, addr, gen))
		return;
	/* the first of its kind per worker is said; the count tells how many more */
	if (pmd_counter_read(&w->stats->counter[error_metric(err)]) == 1)
		pmd_worker_error(w, -err, "populate: %s of live chunk %u at %p",
				 write ? "MADV_POPULATE_WRITE" : "MADV_POPULATE_READ", c->index,
				 (void *)addr);
}

static int populate_run(struct pmd_worker *w)
{
	const struct populate_opts *o = w->si->opts;
	uint64_t next = pmd_now_ns();

	while (!pmd_should_stop(w)) {
		populate_once(w, o);
		pmd_beat(w);
		if (!pmd_pace(w, &next, o->rate))
			break;
	}
	return 0;
}

/* MADV_POPULATE_READ of one page of a mapping of our own: 0 or an errno. */
static int probe_populate(void)
{
	size_t len = (size_t)sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int err;

	if (p == MAP_FAILED)
		return errno;
	err = madvise(p, len, MADV_POPULATE_READ) ? errno : 0;
	munmap(p, len);
	return err;
}

static const char *populate_supported(struct pmd_sinst *si)
{
	int err = probe_populate();

	if (!err || err == ENOMEM || err == EINTR)
		return NULL; /* the kernel knows it; this time memory was short */
	if (err == EINVAL)
		snprintf(si->why, sizeof(si->why),
			 "kernel lacks MADV_POPULATE_READ (EINVAL from a probe; it needs Linux "
			 "5.14+)");
	else
		snprintf(si->why, sizeof(si->why), "MADV_POPULATE_READ probe failed: %s",
			 strerror(err));
	return si->why;
}

const struct pmd_stressor pmd_stressor_populate = {
	.abi = PMD_STRESSOR_ABI,
	.name = "populate",
	.summary = "MADV_POPULATE_READ/WRITE of chunks while their first touches fault",
	.options = populate_options,
	.opts_size = sizeof(struct populate_opts),
	.metrics = populate_metrics,
	.workers = "1",
	.supported = populate_supported,
	.run = populate_run,
};
