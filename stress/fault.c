// SPDX-License-Identifier: GPL-2.0
/*
 * fault: the first-touch storm.
 *
 * The race: many threads of one process write, at the same moment, to the
 * same freshly zapped 2 MiB range of one anonymous VMA. With THP allowed,
 * each of them enters do_huge_pmd_anonymous_page() for the same pmd_none
 * PMD, allocates and clears a huge page, and all but one must find the PMD
 * populated under its lock and throw theirs away; when the huge page cannot
 * be had they race in __pte_alloc() to install one page table, then in
 * do_anonymous_page() for each PTE. That is where "mm: Check if PTE is
 * already allocated during page fault" (2011) and CVE-2012-1179 lived, and
 * where a dropped recheck under the page-table lock loses a write.
 *
 * Each round, the workers of a group meet at a spin-then-futex gate; the
 * last to arrive verifies the previous round, zaps the next chunk back to
 * pmd_none (MADV_DONTNEED for a PMD-mapped chunk, munmap + MAP_FIXED for a
 * PTE-mapped one, whose page table MADV_DONTNEED would keep) and releases
 * them all at once. Every worker's first store goes to the same page, so
 * their page-table installs collide, then they fan out in their own orders
 * (forward, backward, or a random odd stride), writing their stamp into
 * their own slot of every page. With --fault-passes P they sweep P times,
 * each pass into another slot of theirs: the later passes fault nothing and
 * go through the translations the first one cached, which is where a store
 * lands when the kernel replaced the PMD (migration entry, zap) and skipped
 * the TLB flush: a lost write or a write into a freed page.
 *
 * How to tell it fired: "collisions" counts rounds in which two or more
 * workers' first stores into the round's first chunk, the contested fault,
 * overlapped in time (the race was really run, not just load generated;
 * their whole touches nearly always overlap, and say nothing); the
 * kernel's pgalloc_* deltas above thp_fault_alloc show huge pages
 * allocated by losers and thrown away; and a lost race handled wrong
 * shows as LOST_WRITE (a winner's page replaced by a fresh one) or FOREIGN
 * (one page mapped twice) from the verifier.
 */
#include "fault_seed.h"

#include <pmdstress/pool.h>
#include <pmdstress/stressor.h>

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { ORDER_MIXED, ORDER_FORWARD, ORDER_BACKWARD, ORDER_RANDOM };
enum { LAT_TOUCH, LAT_PAGE };
enum { ZAP_AUTO, ZAP_DONTNEED, ZAP_REMAP };

struct fault_opts {
	unsigned order;
	uint64_t chunks;
	uint64_t sweeps;
	uint64_t group;
	unsigned latency;
	unsigned zap;
	uint64_t spin;
	uint64_t passes;
	uint64_t readers;
	uint64_t reader_rounds;
	uint64_t pages;
	char first[PMD_OPT_STRLEN];
	uint64_t delay_ns;
	uint64_t turn_ns;
	uint64_t seed_share;
	uint64_t seed_pages;
	uint64_t reader_pages;
};

static const char *const orders[] = { "mixed", "forward", "backward", "random", NULL };
static const char *const latencies[] = { "touch", "page", NULL };
static const char *const zaps[] = { "auto", "dontneed", "remap", NULL };

#define O(f) offsetof(struct fault_opts, f)
static const struct pmd_option fault_options[] = {
	{ "order", PMD_OPT_ENUM, O(order), "mixed", 0, 0, orders,
	  "page order after the shared first page: mixed gives each worker one of "
	  "forward, backward, random" },
	{ "chunks", PMD_OPT_UINT, O(chunks), "1", 0, 131072, NULL,
	  "chunks each group touches per round (0: all of the group's chunks, a full sweep)" },
	{ "sweeps", PMD_OPT_UINT, O(sweeps), "0", 0, UINT32_MAX, NULL,
	  "rounds each group runs before its workers finish (0: until the run stops); with "
	  "chunks = 0 one round is one pass over the arena, as in the seed benchmark" },
	{ "group", PMD_OPT_UINT, O(group), "0", 0, PMD_PAGE_SLOTS, NULL,
	  "most workers racing on the same chunks; more workers form more groups (0: as many "
	  "as CPUs this process may run on, 2 to 64: racers that can all be on a CPU at once)" },
	{ "turn", PMD_OPT_DURATION, O(turn_ns), "100ms", 0, 10000000000ull, NULL,
	  "with more groups than CPUs, groups race in turns of this long, as many at once as "
	  "the CPUs hold, so that a round's racers are on a CPU together (0: all at once)" },
	{ "seed", PMD_OPT_UINT, O(seed_share), "50", 0, 100, NULL,
	  "percent of rounds that are seed-race rounds: racers made to take the THP path and "
	  "the PTE path on the same pmd_none PMD (prctl PR_SET_THP_DISABLE on 6.4+, a memcg "
	  "with room for one huge page as root: stress/fault_seed.h)" },
	{ "seed-pages", PMD_OPT_UINT, O(seed_pages), "32", 1, PMD_CHUNK_PAGES, NULL,
	  "pages a seed-race round writes (at most --fault-pages): such a round usually ends "
	  "PTE-mapped, a fault per page and racer, so a small window keeps its rounds many" },
	{ "latency", PMD_OPT_ENUM, O(latency), "touch", 0, 0, latencies,
	  "touch: time each worker's first store of a chunk; page: time every store "
	  "(a clock read per page)" },
	{ "zap", PMD_OPT_ENUM, O(zap), "auto", 0, 0, zaps,
	  "how a chunk is reset to pmd_none: auto picks MADV_DONTNEED for PMD-mapped "
	  "chunks and munmap+MAP_FIXED otherwise" },
	{ "spin", PMD_OPT_UINT, O(spin), "0", 0, 1000000000, NULL,
	  "gate busy-wait iterations before sleeping (0: by CPU count)" },
	{ "passes", PMD_OPT_UINT, O(passes), "1", 1, PMD_PAGE_SLOTS - 1, NULL,
	  "stores per page per worker and round, each into a slot of its own: passes after "
	  "the first rewrite pages the worker has mapped already (no fault, a cached "
	  "translation: what a stale TLB entry after a missed flush would take)" },
	{ "readers", PMD_OPT_UINT, O(readers), "0", 0, PMD_PAGE_SLOTS, NULL,
	  "workers per group whose first touch of a chunk is a load: the read fault maps the "
	  "(huge) zero page while the others' write faults install pages; each then checks "
	  "the chunk's first page holds only zeros and this round's stamps, and writes as usual" },
	{ "reader-rounds", PMD_OPT_UINT, O(reader_rounds), "100", 0, 100, NULL,
	  "percent of the rounds that are not seed rounds in which the readers load first, "
	  "drawn per round (the others: every racer's first touch is a store)" },
	{ "reader-pages", PMD_OPT_UINT, O(reader_pages), "512", 1, PMD_CHUNK_PAGES, NULL,
	  "pages a round with readers writes (at most --fault-pages): a write fault splits a "
	  "huge zero PMD before 6.13, so such a round ends PTE-mapped, a fault per page and "
	  "racer, all racers on the same pages; the default race writes 32" },
	{ "pages", PMD_OPT_UINT, O(pages), "512", 1, PMD_CHUNK_PAGES, NULL,
	  "pages of each chunk a round writes: a window of this many from the round's first "
	  "page, the rest must read zero (fewer: a 4 KiB fallback round stays small, for "
	  "--memcg-headroom)" },
	{ "first", PMD_OPT_STRING, O(first), "random", 0, 0, NULL,
	  "the page of each chunk a round's first store hits: random (a new page every "
	  "round, so the contested fault lands anywhere in the PMD) or a page number 0-511; "
	  "0 with --fault-order forward touches a chunk in address order, as a plain loop does "
	  "(bench/run.py)" },
	{ "delay", PMD_OPT_DURATION, O(delay_ns), "0", 0, 1000000, NULL,
	  "test only: busy-wait this long after every page's store (the sensitivity bench)",
	  PMD_OPTF_HIDDEN },
	PMD_OPT_END,
};

enum {
	M_OPS,
	M_ROUNDS,
	M_COLLISIONS,
	M_SKIPPED,
	M_BAD_SLOTS,
	M_ZAP_DONTNEED,
	M_ZAP_REMAP,
	M_READS,
	M_CHOICES,
	M_RACE_TIMED,
	M_RACE_EITHER,
	M_FIRST_TOUCH,
	M_WINDOW,
	M_VERIFY,
	M_ZAP,
	M_PAGE,
};

static const struct pmd_metric fault_metrics[] = {
	[M_OPS] = { "ops", PMD_METRIC_COUNT, "pages written" },
	[M_ROUNDS] = { "rounds", PMD_METRIC_COUNT, "rounds run by all groups", PMD_BETTER_NONE,
		       PMD_MF_RACE_ROUNDS },
	[M_COLLISIONS] = { "collisions", PMD_METRIC_COUNT,
			   "rounds in which two or more workers' first stores to the round's first "
			   "chunk overlapped in time",
			   PMD_BETTER_NONE, PMD_MF_RACE_HITS },
	[M_SKIPPED] = { "skipped", PMD_METRIC_COUNT, "chunk touches skipped: chunk retired", PMD_BETTER_NONE },
	[M_BAD_SLOTS] = { "bad_slots", PMD_METRIC_COUNT, "slots that failed verification", PMD_BETTER_NONE },
	[M_ZAP_DONTNEED] = { "zap_dontneed", PMD_METRIC_COUNT, "chunks reset by MADV_DONTNEED", PMD_BETTER_NONE },
	[M_ZAP_REMAP] = { "zap_remap", PMD_METRIC_COUNT, "chunks reset by munmap+MAP_FIXED", PMD_BETTER_NONE },
	[M_READS] = { "reads", PMD_METRIC_COUNT,
		      "first touches that were loads (readers), each followed by a check",
		      PMD_BETTER_NONE },
	[M_CHOICES] = { "choices", PMD_METRIC_COUNT,
			"a digest of the random choices (first pages, orders): with --fault-sweeps "
			"and no partners, the same for every run of one seed", PMD_BETTER_NONE,
			PMD_MF_DIGEST },
	[M_RACE_TIMED] = { "race_timed", PMD_METRIC_COUNT,
			   "slots of pages a partner's zap raced that were stored before a "
			   "MADV_DONTNEED (must read zero) or after every race on the page (must "
			   "hold their stamp): judged exactly", PMD_BETTER_NONE },
	[M_RACE_EITHER] = { "race_either", PMD_METRIC_COUNT,
			    "slots of raced pages whose store overlapped a race or preceded a "
			    "MADV_FREE: zero or their stamp accepted (a zero is written back "
			    "after)",
			    PMD_BETTER_NONE },
	[M_FIRST_TOUCH] = { "first_touch", PMD_METRIC_LATENCY,
			    "a worker's first store to a fresh chunk: the contested fault" },
	[M_WINDOW] = { "window", PMD_METRIC_LATENCY,
		       "a worker's whole touch of a chunk (bench: summed, and per fault)",
		       PMD_BETTER_DEFAULT, PMD_MF_BENCH },
	[M_VERIFY] = { "verify", PMD_METRIC_LATENCY, "verifying one chunk" },
	[M_ZAP] = { "zap", PMD_METRIC_LATENCY, "resetting one chunk to pmd_none" },
	[M_PAGE] = { "page", PMD_METRIC_LATENCY, "every store (latency=page only)" },
	{ NULL },
};

struct fault_group {
	struct pmd_gate gate;
	unsigned first, n;	  /* workers: stressor indices first..first+n-1 */
	unsigned lo, hi;	  /* the group's chunks */
	unsigned cursor;	  /* next chunk to try */
	unsigned want;		  /* chunks per round */
	unsigned *cur, ncur;	  /* chunks of the round being run */
	unsigned *kept, nkept;	  /* chunks the last round kept claimed for the next */
	unsigned first_page;	  /* where every worker starts this round */
	unsigned win;		  /* pages this round writes from first_page on */
	uint64_t round;		  /* rounds started */
	uint64_t rng;		  /* the round choices' generator: see group_rand_below() */
	bool stop;		  /* set by the serial step; read after the gate */
	unsigned lost;		  /* chunks that could not be reset: out of the run */
	/* each worker's first store to cur[0] this round, from before to after; 0: none */
	uint64_t *first_lo, *first_hi;
	/* how the round writes cur[i] and when, for i < nlogs (arena.h); none without --verify */
	struct pmd_round_log *logs;
	unsigned nlogs;
	size_t logs_len;
	struct fault_seed seed;	      /* this round's seed-race plan */
	unsigned readers;	      /* this round's readers (--fault-readers, --fault-reader-rounds) */
	struct pmd_racer_span *spans; /* each worker's first store to cur[0], seed rounds */
	uint64_t round_t0;	      /* when the round was set up */
	unsigned batch;		      /* its batch of the baton */
	bool waiting;		      /* its turn is over: the workers wait for the next */
	uint32_t seen;		      /* the batch word to see change (pmd_baton_pass) */
	uint64_t turn_end;	      /* when this turn is over */
} __attribute__((aligned(64)));

struct fault_priv {
	const struct fault_opts *o;
	int first; /* --fault-first: the page every round starts at; -1: random */
	unsigned ngroups;
	struct fault_group *groups;
	unsigned mech; /* seed-race mechanisms usable here (PMD_SEED_MECH_*) */
	struct pmd_baton baton;
	struct pmd_baton_batch *batches;
	struct fault_thp_off thp_off;
};

struct fault_call {
	struct fault_group *g;
	struct pmd_worker *w;
};

/* ---- the serial step: verify the last round, set up the next ------------ */

/*
 * One random choice, as a 16-bit trace summed into "choices": a sum does not
 * care which worker adds it, so two runs of one seed and shape must agree
 * (and the total stays a number a report can print).
 */
static uint64_t choice_trace(uint64_t who, uint64_t when, uint64_t what)
{
	return pmd_stamp_mix(pmd_stamp_mix(who * 0x9e3779b97f4a7c15ull ^ when) ^ what) >> 48;
}

/* True if two or more first stores to the contested chunk overlapped: the race really ran. */
static bool first_touches_overlap(const struct fault_group *g)
{
	const uint64_t *lo = g->first_lo, *hi = g->first_hi;
	unsigned i, j;

	for (i = 0; i < g->n; i++) {
		if (!hi[i])
			continue;
		for (j = i + 1; j < g->n; j++)
			if (hi[j] && lo[i] < hi[j] && lo[j] < hi[i])
				return true;
	}
	return false;
}

/* What a slot of page @lpage holds when corrupted as @class. */
static uint64_t inject_value(const struct pmd_arena *a, const struct pmd_chunk *c,
			     enum pmd_class class, uint32_t lpage, uint32_t gen, unsigned slot)
{
	uint32_t prev = gen > 1 ? gen - 1 : PMD_GEN_MAX;

	switch (class) {
	case PMD_CLASS_STALE: /* the previous generation's stamp survived */
	case PMD_CLASS_NONZERO_AFTER_ZAP: /* old data in a slot nobody writes */
		return pmd_stamp(a->tag_key, c->domain, lpage, prev, slot);
	case PMD_CLASS_FOREIGN: /* the next page's stamp, as if mapped twice */
		return pmd_stamp(a->tag_key, c->domain, lpage + 1, gen, slot);
	case PMD_CLASS_COW_LEAK: /* a fork child's stamp in the parent */
		return pmd_stamp(a->tag_key, PMD_STAMP_DOMAIN_CHILD, lpage, gen, slot);
	default: /* LOST_WRITE: a written slot reads zero */
		return 0;
	}
}

/* Test only (--inject): corrupt one slot (of :pages pages) behind the workers' backs. */
static void inject(struct pmd_worker *w, struct pmd_chunk *c, char *addr, bool after_zap)
{
	struct pmd_run *run = w->si->run;
	const struct pmd_inject *inj = pmd_inject_get(run);
	const struct pmd_arena *a = w->si->arena;
	uint32_t lpage = c->index * (uint32_t)PMD_CHUNK_PAGES + inj->page;
	uint32_t gen = __atomic_load_n(&c->gen, __ATOMIC_RELAXED);
	unsigned slot = inj->slot, k;
	uint64_t v;

	if (inj->kind != PMD_INJECT_CORRUPT || inj->chunk != c->index ||
	    (inj->class == PMD_CLASS_NONZERO_AFTER_ZAP) != after_zap)
		return;
	/* a zero where a race allows one is no corruption: wait for a slot that must hold */
	if (inj->class == PMD_CLASS_LOST_WRITE && pmd_verify_may_read_zero(a, c, inj->page, slot))
		return;
	/* nor in a page this round did not write (a seed round's window is small): wait */
	if (inj->class != PMD_CLASS_NONZERO_AFTER_ZAP && pmd_mask_test(c->zero_pages, inj->page))
		return;
	if (inj->class == PMD_CLASS_NONZERO_AFTER_ZAP && slot < c->nslots)
		slot = c->nslots < PMD_PAGE_SLOTS ? c->nslots : PMD_PAGE_SLOTS - 1;
	if (inj->class < PMD_CLASS_LOST_WRITE || inj->class > PMD_CLASS_COW_LEAK)
		return;
	v = inject_value(a, c, inj->class, lpage, gen, slot);
	if (!pmd_inject_claim(run))
		return;
	/* :pages: the same corruption in that many pages from @page on (one event each) */
	for (k = 0; k < inj->pages && inj->page + k < PMD_CHUNK_PAGES; k++) {
		pmd_store(pmd_page_slot(addr, inj->page + k, slot), v);
		/* each page's own stamp, so that FOREIGN/STALE read as such in every page */
		if (inj->class != PMD_CLASS_LOST_WRITE)
			v = inject_value(a, c, inj->class, lpage + k + 1, gen, slot);
	}
	pmd_chunk_log(c, pmd_now_ns(), PMD_OP_INJECT, w->id, inj->page);
}

static bool inject_due(const struct pmd_worker *w, const struct fault_group *g)
{
	const struct pmd_inject *inj = pmd_inject_get(w->si->run);

	return inj->kind != PMD_INJECT_NONE && g->round >= inj->after_rounds;
}

/*
 * Map one page of a shared file at @pa, then truncate the file to nothing:
 * the page is beyond the file's end, and the kernel answers an access to it
 * with SIGBUS (BUS_ADRERR), as for any file that shrank under a mapping.
 */
static int truncated_file_page(char *pa)
{
	int fd = memfd_create("pmdstress-sigbus", MFD_CLOEXEC), err = 0;
	void *m = MAP_FAILED;

	if (fd < 0)
		return -errno;
	if (!ftruncate(fd, PMD_PAGE_SIZE))
		m = mmap(pa, PMD_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
	/* the page stays mapped at @pa on purpose: the workers' next store hits it */
	if (m == MAP_FAILED || ftruncate(fd, 0))
		err = -errno;
	close(fd);
	return err;
}

/*
 * Test only: a page of a live chunk stops being memory under the workers,
 * as if the kernel lost the mapping: it turns PROT_NONE (--inject
 * segv:chunk:page) or becomes a page past a file's end (--inject sigbus).
 * Their next store faults on a chunk nobody retired. The round has not
 * opened yet: no worker is inside the chunk while its page is replaced.
 */
static void inject_live_fault(struct pmd_worker *w, struct pmd_chunk *c)
{
	const struct pmd_inject *inj = pmd_inject_get(w->si->run);
	char *addr = (char *)__atomic_load_n(&c->addr, __ATOMIC_ACQUIRE);
	char *pa = addr + ((size_t)inj->page << PMD_PAGE_SHIFT);
	int err;

	if ((inj->kind != PMD_INJECT_SEGV && inj->kind != PMD_INJECT_SIGBUS) ||
	    inj->chunk != c->index || !pmd_inject_claim(w->si->run))
		return;
	pmd_chunk_log(c, pmd_now_ns(), PMD_OP_INJECT, w->id, inj->page);
	if (inj->kind == PMD_INJECT_SEGV) {
		mprotect(pa, PMD_PAGE_SIZE, PROT_NONE);
		return;
	}
	err = truncated_file_page(pa);
	if (err)
		pmd_worker_error(w, err, "fault: --inject sigbus: cannot map a truncated file "
				 "page at chunk %u page %u", c->index, inj->page);
}

/* Test only: the group's first worker blocks in the kernel for good (--inject hang). */
static void inject_hang(struct pmd_worker *w, const struct fault_group *g, unsigned slot)
{
	const struct pmd_inject *inj = pmd_inject_get(w->si->run);
	int fds[2];
	char c;

	if (inj->kind != PMD_INJECT_HANG || slot || g->round < inj->after_rounds ||
	    !pmd_inject_claim(w->si->run) || pipe(fds))
		return;
	/* a read nobody will ever answer: the watchdog must find us in pipe_read */
	while (read(fds[0], &c, 1) < 0)
		;
}

static unsigned verify_chunk(struct pmd_worker *w, struct pmd_chunk *c, bool do_inject)
{
	uint64_t t = pmd_now_ns();
	struct pmd_verify_tally tally = { 0 };
	unsigned bad = 0;
	char *addr = pmd_chunk_enter(c);

	if (!addr)
		return 0;
	if (do_inject)
		inject(w, c, addr, false);
	if (w->si->cfg->verify)
		bad = pmd_verify_chunk(w, c, addr, &tally);
	pmd_chunk_exit(c);
	pmd_count(w, M_RACE_TIMED, tally.timed);
	pmd_count(w, M_RACE_EITHER, tally.either);
	if (w->si->cfg->verify)
		pmd_latency(w, M_VERIFY, pmd_now_ns() - t);
	pmd_count(w, M_BAD_SLOTS, bad);
	return bad;
}

/* True if a partner changed @c's mapping since @since (its op ring): the round's end says nothing */
static bool partner_touched(const struct pmd_chunk *c, uint64_t since)
{
	unsigned i;

	for (i = 0; i < PMD_RING_LEN; i++) {
		uint64_t t = __atomic_load_n(&c->ring[i].t_ns, __ATOMIC_RELAXED);
		unsigned op = (unsigned)(__atomic_load_n(&c->ring[i].word, __ATOMIC_RELAXED) & 0xff);

		if (t < since)
			continue;
		switch (op) {
		case PMD_OP_NONE:
		case PMD_OP_ROUND:
		case PMD_OP_VERIFY:
		case PMD_OP_MADV_HUGE:
		case PMD_OP_MADV_NOHUGE:
		case PMD_OP_PAGEMAP_READ:
			continue;
		default:
			return true;
		}
	}
	return false;
}

/* The round's record on its contested chunk, for the engine's race evidence. */
static void post_race(struct fault_group *g, struct pmd_worker *w, const struct pmd_chunk *c,
		      enum pmd_thp_state end, bool collided)
{
	struct pmd_race_round rr;
	unsigned i;

	memset(&rr, 0, sizeof(rr));
	rr.t_start = g->round_t0;
	rr.t_end = pmd_now_ns();
	rr.chunk = c->index;
	rr.seed = g->seed.on;
	rr.mech = (uint8_t)g->seed.mech;
	rr.end_state = (uint8_t)end;
	rr.disturbed = partner_touched(c, g->round_t0);
	rr.collided = collided;
	rr.readers = (uint8_t)(g->seed.on ? 0 : g->readers < 0xff ? g->readers : 0xff);
	rr.clear_ns = (uint32_t)(g->seed.window_ns < UINT32_MAX ? g->seed.window_ns : UINT32_MAX);
	rr.nracers = (uint8_t)(g->n < PMD_RACE_MAX_RACERS ? g->n : PMD_RACE_MAX_RACERS);
	for (i = 0; i < rr.nracers; i++)
		rr.r[i] = g->spans[i];
	pmd_race_post(w, &rr);
	fault_seed_learn(&g->seed, &rr);
}

/*
 * With @keep, the round's chunks stay claimed for the next round, which
 * races every chunk of the group again (see round_serial).
 */
static void finish_round(struct fault_group *g, struct pmd_worker *w, bool keep)
{
	struct pmd_arena *a = w->si->arena;
	bool hit = first_touches_overlap(g);
	unsigned i;

	fault_seed_loosen(&g->seed, w->si->run);
	pmd_count(w, M_ROUNDS, 1);
	if (hit)
		pmd_count(w, M_COLLISIONS, 1);
	for (i = 0; i < g->ncur; i++) {
		struct pmd_chunk *c = &a->chunks[g->cur[i]];
		enum pmd_thp_state end;

		pmd_chunk_close_round(c);
		/* how the stores left it, before verifying reads anything */
		end = pmd_thp_probe(w->si->run, c, NULL);
		if (!i)
			post_race(g, w, c, end, hit);
		verify_chunk(w, c, inject_due(w, g));
		pmd_count_thp(w, end);
		if (keep)
			g->kept[i] = g->cur[i];
		else
			pmd_chunk_release(c, PMD_CHUNK_IDLE);
	}
	g->nkept = keep ? g->ncur : 0;
	g->ncur = 0;
}

/* Reset @c for a round; false if it could not be (it is then out of the run for good). */
static bool zap_chunk(struct pmd_worker *w, struct pmd_chunk *c, const struct fault_opts *o)
{
	struct pmd_arena *a = w->si->arena;
	uint64_t t = pmd_now_ns();
	int err, advice_err;
	bool remap;

	/* never touched since the arena was mapped: already pmd_none */
	if (__atomic_load_n(&c->gen, __ATOMIC_RELAXED) == 1 && !c->nslots)
		goto advise;
	if (o->zap == ZAP_AUTO)
		remap = a->shared || pmd_thp_probe(w->si->run, c, NULL) != PMD_THPS_THP;
	else
		remap = o->zap == ZAP_REMAP;
	err = pmd_arena_zap(a, c, remap, w->id, &advice_err);
	if (err) {
		/* an ENOMEM (RLIMIT_AS, map count, memory) counts as a limit running out */
		pmd_worker_error(w, err, "fault: resetting chunk %u by %s (chunk left out of the run)",
				 c->index, remap ? "a fresh mapping" : "MADV_DONTNEED");
		return false;
	}
	if (advice_err)
		pmd_worker_error(w, advice_err, "fault: THP advice or memory policy on remapped "
						"chunk %u", c->index);
	pmd_latency(w, M_ZAP, pmd_now_ns() - t);
	pmd_count(w, remap ? M_ZAP_REMAP : M_ZAP_DONTNEED, 1);
advise:
	if (a->thp == PMD_THP_TOGGLE) {
		/* by the chunk's generation: every chunk alternates, whatever the rotation */
		bool huge = !(__atomic_load_n(&c->gen, __ATOMIC_RELAXED) & 1);
		char *addr = (char *)__atomic_load_n(&c->addr, __ATOMIC_ACQUIRE);

		pmd_arena_madvise_thp(a, addr, PMD_CHUNK_SIZE, huge);
		pmd_chunk_log(c, t, huge ? PMD_OP_MADV_HUGE : PMD_OP_MADV_NOHUGE, w->id, 0);
	}
	return true;
}

/* With --fault-pages W < 512, only the W pages from @first on are written: the rest read zero. */
static void mark_window(struct pmd_chunk *c, unsigned first, unsigned pages)
{
	unsigned k;

	pmd_mask_clear_all(c->zero_pages);
	for (k = pages; k < PMD_CHUNK_PAGES; k++)
		pmd_mask_set(c->zero_pages, (first + k) % PMD_CHUNK_PAGES);
}

/* The round about to write @c is logged in @log: its shape now, the workers' marks as they go. */
static void open_log(const struct fault_group *g, struct pmd_chunk *c, struct pmd_round_log *log,
		     const struct fault_opts *o)
{
	uint32_t stores = g->win * (uint32_t)o->passes;

	log->first = g->first_page;
	log->win = g->win;
	/* a seed round's racers start on pages of their own (touch_chunk), on cur[0] only */
	log->own_first = g->seed.on && log == &g->logs[0];
	log->nworkers = g->n;
	log->passes = (uint32_t)o->passes;
	log->per = (stores + PMD_ROUND_MARKS - 2) / (PMD_ROUND_MARKS - 1);
	memset(log->mark, 0, sizeof(uint64_t) * PMD_ROUND_MARKS * g->n);
	/* release: a partner that finds the log finds its shape */
	__atomic_store_n(&c->log, log, __ATOMIC_RELEASE);
}

/*
 * The group's own generator (splitmix64), seeded from the run's seed and
 * the group: the serial step is run by whichever worker reaches the gate
 * last, which the scheduler decides, so drawing from that worker's stream
 * would make the round's choices, and that worker's own later ones, differ
 * between two runs of one seed.
 */
static uint64_t group_rand_below(struct fault_group *g, uint64_t n)
{
	g->rng += 0x9e3779b97f4a7c15ull;
	return n ? pmd_stamp_mix(g->rng) % n : 0;
}

static uint64_t seed_rand(void *g, uint64_t n)
{
	return group_rand_below(g, n);
}

/*
 * Test only: a pending --inject segv/sigbus, or a corruption of a written
 * page, on one of the group's chunks needs its page written this round, or
 * it waits a whole cycle of the group's chunks for the next chance (seconds
 * on a slow sanitizer build, more with 32-page rounds): the window is moved
 * over that page, at a random place inside it. A corruption leaves a first
 * page the user fixed (--fault-first) where it is: a test may mean a page
 * no round writes.
 */
static void window_over_injection(struct fault_group *g, struct pmd_worker *w, bool fixed)
{
	const struct pmd_inject *inj = pmd_inject_get(w->si->run);
	bool written = inj->kind == PMD_INJECT_CORRUPT && !fixed &&
		       inj->class != PMD_CLASS_NONZERO_AFTER_ZAP;

	if ((inj->kind != PMD_INJECT_SEGV && inj->kind != PMD_INJECT_SIGBUS && !written) ||
	    g->win >= PMD_CHUNK_PAGES || g->round < inj->after_rounds || inj->chunk < g->lo ||
	    inj->chunk >= g->hi)
		return;
	g->first_page = (inj->page + PMD_CHUNK_PAGES -
			 (unsigned)group_rand_below(g, g->win)) % PMD_CHUNK_PAGES;
}

/* Claim idle chunk @c for a round and verify what it held since its last. */
static bool claim_idle(struct pmd_worker *w, struct pmd_chunk *c)
{
	/*
	 * Closed before it becomes a round: no partner may zap it while
	 * its old contents are verified and it is reset. A chunk a
	 * partner holds is left to it (its release clears CLOSING).
	 */
	pmd_chunk_close_round(c);
	if (!pmd_chunk_claim(c, PMD_CHUNK_IDLE, PMD_CHUNK_ROUND))
		return false;
	/*
	 * Again, now that it is ours: a partner that claimed it between
	 * our close and our claim has released it since, and its release
	 * cleared CLOSING. A zap that slipped in meanwhile has finished
	 * when this returns, and recorded the pages it raced.
	 */
	pmd_chunk_close_round(c);
	if (c->nslots)
		verify_chunk(w, c, false);
	return true;
}

/* True if @idx is a chunk the last round kept claimed; it is then taken off the list. */
static bool was_kept(struct fault_group *g, unsigned idx)
{
	unsigned i;

	for (i = 0; i < g->nkept; i++)
		if (g->kept[i] == idx) {
			g->kept[i] = UINT_MAX;
			return true;
		}
	return false;
}

/* The kept chunks no round took after all go back to the arena. */
static void release_kept(struct fault_group *g, struct pmd_arena *a)
{
	unsigned i;

	for (i = 0; i < g->nkept; i++)
		if (g->kept[i] != UINT_MAX)
			pmd_chunk_release(&a->chunks[g->kept[i]], PMD_CHUNK_IDLE);
	g->nkept = 0;
}

static void start_round(struct fault_group *g, struct pmd_worker *w, const struct fault_priv *fp)
{
	const struct fault_opts *o = fp->o;
	struct pmd_arena *a = w->si->arena;
	unsigned span = g->hi - g->lo, tries;

	/* drawn either way: a fixed first page leaves every other choice as it was */
	g->first_page = (unsigned)group_rand_below(g, PMD_CHUNK_PAGES);
	if (fp->first >= 0)
		g->first_page = (unsigned)fp->first;
	pmd_count(w, M_CHOICES, choice_trace(g->first, g->round, g->first_page));
	/* drawn every round, so a seed's other choices do not depend on the kernel */
	fault_seed_plan(&g->seed, group_rand_below(g, 100) < o->seed_share, fp->mech, g->n,
			seed_rand, g);
	g->readers = o->readers && group_rand_below(g, 100) < o->reader_rounds ? (unsigned)o->readers
									       : 0;
	g->win = (unsigned)o->pages;
	if (g->seed.on && o->seed_pages < g->win)
		g->win = (unsigned)o->seed_pages;
	if (g->readers && o->reader_pages < g->win)
		g->win = (unsigned)o->reader_pages;
	window_over_injection(g, w, fp->first >= 0);
	for (tries = 0; tries < span && g->ncur < g->want; tries++) {
		unsigned idx = g->lo + g->cursor;
		struct pmd_chunk *c = &a->chunks[idx];

		g->cursor = (g->cursor + 1) % span;
		/* a chunk kept from the last round was verified a moment ago, never idle since */
		if (!was_kept(g, idx) && !claim_idle(w, c))
			continue;
		/* a chunk that could not be reset stays claimed and closed: nobody uses it */
		if (!zap_chunk(w, c, o)) {
			g->lost++;
			continue;
		}
		c->nslots = g->n * (uint32_t)o->passes;
		c->domain = PMD_STAMP_DOMAIN_RUN;
		mark_window(c, g->first_page, g->win);
		if (g->ncur < g->nlogs)
			open_log(g, c, &g->logs[g->ncur], o);
		if (inject_due(w, g)) {
			char *addr = pmd_chunk_enter(c);

			if (addr) {
				inject(w, c, addr, true);
				pmd_chunk_exit(c);
			}
			/* a page this round writes: a seed round's window is small */
			if (!pmd_mask_test(c->zero_pages, pmd_inject_get(w->si->run)->page))
				inject_live_fault(w, c);
		}
		pmd_chunk_log(c, pmd_now_ns(), PMD_OP_ROUND, w->id, g->n);
		pmd_chunk_open_round(c);
		g->cur[g->ncur++] = idx;
	}
	release_kept(g, a);
	memset(g->first_hi, 0, sizeof(uint64_t) * g->n);
	memset(g->spans, 0, sizeof(*g->spans) * g->n);
	g->round_t0 = pmd_now_ns();
	g->round++;
	/* the round's chunks are empty again: what it may charge is the headroom */
	pmd_memcg_rearm(w->si->run);
	/* the memcg way: room for one huge page until a racer's first store is done */
	if (g->seed.memcg_window && !pmd_memcg_seed_tight(w->si->run, PMD_SEED_MEMCG_ROOM))
		g->seed.memcg_window = false; /* another group's window, or a fork at work */
}

static void round_serial(void *arg)
{
	struct fault_call *call = arg;
	struct fault_group *g = call->g;
	struct pmd_worker *w = call->w;
	struct fault_priv *fp = w->si->priv;
	const struct fault_opts *o = fp->o;
	bool stop = pmd_should_stop(w) || (o->sweeps && g->round >= o->sweeps);
	bool turn_over = fp->baton.nbatch > 1 && !g->waiting && pmd_now_ns() >= g->turn_end;

	/*
	 * A group that races every one of its chunks every round (the default
	 * race on up to 3 CPUs: one chunk a group) keeps them claimed into its
	 * next round: the verification after this round is the one before the
	 * next, where a second full read of the same chunk a moment later cost
	 * a third of the storm's rounds. A group that alternates between
	 * chunks still looks at each one it takes: it sat idle for a round.
	 * Only where groups take turns: the waiting groups' chunks are then
	 * the partners' idle ones. With one batch a kept chunk would never be
	 * idle, and partners that act on settled chunks (softdirty's check,
	 * fork's frozen chunks, migrate's held ones) would find none.
	 */
	if (g->ncur)
		finish_round(g, w, !stop && !turn_over && g->hi - g->lo == g->want &&
					   fp->baton.nbatch > 1);
	if (stop || pmd_should_stop(w)) {
		release_kept(g, w->si->arena);
		g->stop = true;
		pmd_baton_pass(&fp->baton, g->batch, true);
		if (pmd_should_stop(w))
			pmd_baton_release_all(&fp->baton);
		return;
	}
	/* its turn is over: the next batch races, this group's workers wait */
	if (turn_over) {
		g->waiting = true;
		g->seen = pmd_baton_pass(&fp->baton, g->batch, false);
		return;
	}
	if (g->waiting || !g->turn_end) {
		g->waiting = false;
		g->turn_end = pmd_now_ns() + o->turn_ns;
	}
	start_round(g, w, fp);
	/* every chunk of the group is out of the run: nothing left to race on */
	if (g->lost >= g->hi - g->lo) {
		g->stop = true;
		pmd_baton_pass(&fp->baton, g->batch, true);
	}
}

/* ---- the touches ------------------------------------------------------------- */

static unsigned worker_order(const struct fault_opts *o, unsigned slot)
{
	if (o->order != ORDER_MIXED)
		return o->order;
	return ORDER_FORWARD + slot % 3;
}

/* chunks (2 MiB each) a sweep touches between two readings of its fault count */
#define FAULTS_EVERY 64

static uint64_t minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return (uint64_t)ru.ru_minflt;
}

/*
 * What a worker writes into its slot of page @lpage: its stamp, or with
 * --verify off a value that costs nothing to make (nobody will check it),
 * so the fault is measured with nothing but a store around it.
 */
static inline uint64_t page_value(uint64_t key, bool stamped, uint32_t lpage, uint32_t gen,
				  unsigned slot)
{
	if (!stamped)
		return ((uint64_t)lpage << 9 | slot) + 1;
	return pmd_stamp(key, PMD_STAMP_DOMAIN_RUN, lpage, gen, slot);
}

/* Test only (--fault-delay): a busy wait of a known size per page, for the sensitivity bench. */
static inline void page_delay(uint64_t ns)
{
	uint64_t end;

	if (!ns)
		return;
	end = pmd_now_ns() + ns;
	while (pmd_now_ns() < end)
		;
}

/* A random step in [1, @win) prime to @win (0 for a one-page window). */
static unsigned coprime_step(struct pmd_worker *w, unsigned win)
{
	unsigned s, a, b;

	if (win < 2)
		return 0;
	for (s = 1 + (unsigned)pmd_rand_below(w, win - 1);; s = s % (win - 1) + 1) {
		for (a = s, b = win; b;) {
			unsigned t = a % b;

			a = b;
			b = t;
		}
		if (a == 1)
			return s;
	}
}

/*
 * One worker's stores into a fresh chunk: the contested first store, then
 * every other page in its order; with --fault-passes P, P-1 more sweeps in
 * the same order, pass k into slot @slot + k * @stride. Those later stores
 * fault nothing: they go through the translations the first pass left in
 * the TLB, which is where a write lands after the kernel changed the PMD
 * under it (migration, zap) without a flush. @sp gets the contested
 * store's start and end (and, in a seed round, @seed's role and the faults
 * it took); returns the step taken through the window.
 */
static unsigned touch_chunk(struct pmd_worker *w, struct pmd_chunk *c, char *addr, unsigned slot,
			unsigned stride, unsigned first, unsigned win, unsigned order,
			const struct fault_opts *o, unsigned readers, struct fault_seed *seed,
			struct pmd_racer_span *sp)
{
	const uint64_t key = w->si->arena->tag_key;
	const uint32_t gen = __atomic_load_n(&c->gen, __ATOMIC_RELAXED);
	const uint32_t lbase = c->index * (uint32_t)PMD_CHUNK_PAGES;
	const bool stamped = w->si->cfg->verify, per_page = o->latency == LAT_PAGE;
	unsigned k, pass, p = first, at = 0, step = win > 1, faults = 0;
	struct pmd_round_clock clk;
	uint64_t t0, t1 = 0, span[2];

	if (order == ORDER_BACKWARD)
		step = win - 1;
	else if (order == ORDER_RANDOM)
		step = coprime_step(w, win);
	t0 = pmd_now_ns();
	/* where the round is logged: the step, and a clock mark every few stores */
	pmd_round_log_start(stamped ? __atomic_load_n(&c->log, __ATOMIC_ACQUIRE) : NULL, slot, step,
			    t0, &clk);
	/*
	 * the contested store: every worker's first write hits the same page.
	 * A reader loads it first: its read fault maps the zero page, the huge
	 * one where THP is allowed, racing the writers' faults on the same
	 * PMD. Zero pages are shared by every mapping, so what it then reads in
	 * the chunk's first page (where a PTE lands if a fault took a huge PMD
	 * for a page table) must be zeros and this round's stamps. It reads it
	 * before its own store, which splits a huge zero PMD: through the
	 * huge zero page itself, which then shows what an earlier round's
	 * broken fault wrote into it (mutant 09: a PTE value in the global
	 * huge zero page, at the word of the faulting page's index).
	 */
	if (seed) {
		/*
		 * A seed round: each racer's first store its own page of the
		 * window, so that a THP-path racer that lost the PMD to a page
		 * table faults again on its page (two faults: the evidence)
		 * instead of finding it mapped by the winner.
		 */
		at = slot % win;
		p = (first + at) % PMD_CHUNK_PAGES;
		fault_seed_store(seed, w, slot, stride, pmd_page_slot(addr, p, slot),
				 page_value(key, stamped, lbase + p, gen, slot), span, &faults);
		t0 = span[0];
		t1 = span[1];
		sp->role = (uint8_t)fault_seed_role(seed, slot, stride);
		sp->faults = (uint8_t)(faults < 0xfe ? faults : 0xfe);
		goto rest;
	}
	if (slot < readers) {
		(void)pmd_load(pmd_page_slot(addr, p, slot));
		t1 = pmd_now_ns(); /* a reader's contested fault is its load */
		if (stamped) /* --verify off writes no stamps to compare with */
			pmd_verify_in_round(w, c, addr, 0);
		pmd_count(w, M_READS, 1);
	}
	pmd_store(pmd_page_slot(addr, p, slot), page_value(key, stamped, lbase + p, gen, slot));
	if (slot >= readers)
		t1 = pmd_now_ns();
	sp->faults = 0xff;
rest:
	pmd_round_clock_tick(&clk);
	pmd_latency(w, M_FIRST_TOUCH, t1 - t0);
	sp->lo = t0;
	sp->hi = t1;
	for (pass = 0; pass < o->passes; pass++, slot += stride) {
		/* the first pass's first page is stored already */
		for (k = !pass; k < win; k++) {
			/* a step prime to the window visits each of its pages once */
			at += step;
			if (at >= win)
				at -= win;
			p = first + at;
			if (p >= PMD_CHUNK_PAGES)
				p -= PMD_CHUNK_PAGES;
			if (per_page) {
				uint64_t a = pmd_now_ns();

				pmd_store(pmd_page_slot(addr, p, slot),
					  page_value(key, stamped, lbase + p, gen, slot));
				pmd_latency(w, M_PAGE, pmd_now_ns() - a);
			} else {
				pmd_store(pmd_page_slot(addr, p, slot),
					  page_value(key, stamped, lbase + p, gen, slot));
			}
			page_delay(o->delay_ns);
			pmd_round_clock_tick(&clk);
		}
	}
	pmd_round_clock_end(&clk);
	pmd_latency(w, M_WINDOW, pmd_now_ns() - t0);
	pmd_count(w, M_OPS, win * o->passes);
	return step;
}

/* the worker's thread id, for the race evidence (trace events carry it) */
static _Thread_local int my_tid;

static void touch_round(struct fault_group *g, struct pmd_worker *w, const struct fault_opts *o)
{
	struct pmd_arena *a = w->si->arena;
	unsigned slot = w->index - g->first, order = worker_order(o, slot), i, at = 0, step;
	uint64_t lo = 0, hi = 0, trace, f0;
	struct pmd_racer_span sp = { 0 };

	/*
	 * With several chunks a round, the chunks in the worker's order too
	 * (backward from the last, or from a random one on): all meet on the
	 * first chunk at the gate, and on the others at every offset of each
	 * other's faults, so a worker's 4 KiB fault also lands in the middle
	 * of another's huge-page install (allocating and clearing 2 MiB).
	 */
	if (order == ORDER_RANDOM && g->ncur > 1)
		at = (unsigned)pmd_rand_below(w, g->ncur);
	trace = choice_trace(w->id, g->round, at);
	f0 = minflt();
	for (i = 0; i < g->ncur; i++) {
		unsigned k = order == ORDER_BACKWARD ? g->ncur - 1 - i : (at + i) % g->ncur;
		struct pmd_chunk *c = &a->chunks[g->cur[k]];
		char *addr;

		/*
		 * The fault count every FAULTS_EVERY chunks, so that a long sweep
		 * shows up in the live line as it goes. Not every chunk: on this
		 * VM a syscall between two chunks made the touches after it
		 * slower (two getrusage() a chunk: a 2-thread THP sweep 7% slower
		 * per page, a bare loop with the same calls too; bench/run.py mt).
		 */
		if (i && !(i % FAULTS_EVERY)) {
			uint64_t f = minflt();

			pmd_count_faults(w, f - f0);
			f0 = f;
		}
		addr = pmd_chunk_enter(c);

		if (!addr) {
			unsigned pass;

			/* retired under us: the verifier must expect zeros here */
			for (pass = 0; pass < o->passes; pass++)
				pmd_mask_set(c->skipped, slot + pass * g->n);
			pmd_count(w, M_SKIPPED, 1);
			continue;
		}
		step = touch_chunk(w, c, addr, slot, g->n, g->first_page, g->win, order, o,
				   g->readers, k == 0 && g->seed.on ? &g->seed : NULL, &sp);
		pmd_chunk_exit(c);
		trace += choice_trace(w->id, g->round << 20 | i, step);
		if (k == 0) {
			lo = sp.lo;
			hi = sp.hi;
			if (!my_tid)
				my_tid = (int)syscall(SYS_gettid);
			sp.tid = my_tid;
			g->spans[slot] = sp;
		}
	}
	pmd_count_faults(w, minflt() - f0);
	/* cur[0]'s: where the forward workers start at the gate; every worker, with one chunk */
	g->first_lo[slot] = lo;
	g->first_hi[slot] = hi;
	pmd_count(w, M_CHOICES, trace);
}

/* While its group waits for its turn: the worker is idle, not stuck. */
static bool turn_wait_over(void *arg)
{
	struct pmd_worker *w = arg;

	pmd_beat(w);
	return pmd_should_stop(w);
}

static int fault_run(struct pmd_worker *w)
{
	struct fault_priv *fp = w->si->priv;
	struct fault_group *g = &fp->groups[pmd_part_of(w->index, w->si->nworkers, fp->ngroups)];
	struct fault_call call = { .g = g, .w = w };

	/* a batch after the first waits for its first turn */
	if (g->batch)
		pmd_baton_wait(&fp->baton, g->batch, 0, turn_wait_over, w);
	for (;;) {
		pmd_gate_pass(&g->gate, round_serial, &call);
		if (g->stop)
			break;
		/* whatever the wait's outcome, the gate next: the group leaves together */
		if (g->waiting) {
			pmd_baton_wait(&fp->baton, g->batch, g->seen, turn_wait_over, w);
			continue;
		}
		touch_round(g, w, fp->o);
		inject_hang(w, g, w->index - g->first);
		pmd_beat(w);
	}
	return 0;
}

/* ---- setup and the end ----------------------------------------------------- */


/*
 * Racers that can all be on a CPU at once: the CPUs this process may run
 * on (its affinity mask), at least 2 (a race needs two) and at most 64.
 */
static unsigned racers_at_once(void)
{
	cpu_set_t set;
	int n = 0;

	if (!sched_getaffinity(0, sizeof(set), &set))
		n = CPU_COUNT(&set);
	return n < 2 ? 2 : n > 64 ? 64 : (unsigned)n;
}

/*
 * Logs for the first LOGGED chunks of each round (all of them in the
 * default race, one chunk a round): a chunk raced beyond those is judged
 * by its race records alone, zero allowed in every slot of the raced pages.
 * From the pool, which no fork child copies.
 */
#define LOGGED 16

static int alloc_logs(struct fault_group *g)
{
	size_t per_log = sizeof(struct pmd_round_log) + sizeof(uint32_t) * 2 * g->n +
			 sizeof(uint64_t) * PMD_ROUND_MARKS * g->n;
	unsigned i;
	char *p;

	per_log = (per_log + 63) & ~(size_t)63;
	g->nlogs = g->want < LOGGED ? g->want : LOGGED;
	g->logs_len = per_log * g->nlogs;
	p = pmd_pool_alloc(g->logs_len);
	if (!p)
		return -ENOMEM;
	g->logs = (struct pmd_round_log *)p;
	p += sizeof(struct pmd_round_log) * g->nlogs;
	for (i = 0; i < g->nlogs; i++) {
		struct pmd_round_log *log = &g->logs[i];

		log->mark = (uint64_t *)p;
		p += sizeof(uint64_t) * PMD_ROUND_MARKS * g->n;
		log->step = (uint32_t *)p;
		p += sizeof(uint32_t) * g->n;
		log->inv = (uint32_t *)p;
		p += sizeof(uint32_t) * g->n;
	}
	return 0;
}

/* --memcg-headroom: room for what else a round charges (VMAs of a remap, slab) */
#define MEMCG_SLACK (256u << 10)

static int fault_setup(struct pmd_sinst *si)
{
	const struct fault_opts *o = si->opts;
	struct fault_priv *fp = calloc(1, sizeof(*fp));
	const unsigned reader_pages = o->readers && si->arena->reads_allocate;
	const struct pmd_inject *inj;
	unsigned i, ngroups, group, slots;
	char why[160];
	int first = -1;

	if (strcmp(o->first, "random")) {
		char *end;
		unsigned long v = strtoul(o->first, &end, 10);

		if (o->first[0] < '0' || o->first[0] > '9' || *end || v >= PMD_CHUNK_PAGES) {
			free(fp);
			snprintf(si->why, sizeof(si->why),
				 "--fault-first '%.40s': a page number 0-%u or 'random'", o->first,
				 (unsigned)PMD_CHUNK_PAGES - 1);
			return -EINVAL;
		}
		first = (int)v;
	}
	group = o->group ? (unsigned)o->group : racers_at_once();
	/* auto: as many racers a group as the CPUs hold, more where the chunks run out */
	if (!o->group && si->nworkers) {
		unsigned most = si->arena->nchunks / (o->chunks ? (unsigned)o->chunks : 1);

		if (most && (si->nworkers + group - 1) / group > most)
			group = (si->nworkers + most - 1) / most;
		if (group > PMD_PAGE_SLOTS / o->passes)
			group = (unsigned)(PMD_PAGE_SLOTS / o->passes);
	}
	ngroups = (si->nworkers + group - 1) / group;
	if (!ngroups || si->arena->nchunks / ngroups < (o->chunks ? o->chunks : 1)) {
		free(fp);
		snprintf(si->why, sizeof(si->why),
			 "%u groups of up to %u workers need %llu chunk(s) each, the arena has "
			 "%u; raise --size or --fault-group",
			 ngroups, group,
			 (unsigned long long)(o->chunks ? o->chunks : 1), si->arena->nchunks);
		return -EINVAL;
	}
	if (ngroups && ((si->nworkers + ngroups - 1) / ngroups) * o->passes > PMD_PAGE_SLOTS) {
		free(fp);
		snprintf(si->why, sizeof(si->why),
			 "--fault-passes %llu with groups of up to %u workers needs %llu slots per "
			 "page, a page has %zu; lower --fault-passes or --fault-group",
			 (unsigned long long)o->passes, (si->nworkers + ngroups - 1) / ngroups,
			 (unsigned long long)((si->nworkers + ngroups - 1) / ngroups) * o->passes,
			 PMD_PAGE_SLOTS);
		return -EINVAL;
	}
	if ((si->nworkers + ngroups - 1) / ngroups < 2)
		snprintf(si->no_race, sizeof(si->no_race),
			 "one racer per group (%u fault worker%s in %u group%s): no racer has a "
			 "partner on its PMD", si->nworkers, si->nworkers == 1 ? "" : "s", ngroups,
			 ngroups == 1 ? "" : "s");
	/*
	 * a round's charges: its window and a page table per chunk, and where
	 * reads allocate (no zero page), the page a reader checks in the round
	 * (page 0: pmd_verify_in_round) when the window misses it
	 */
	if (si->cfg->memcg_headroom &&
	    ngroups * (uint64_t)(o->chunks ? o->chunks : si->arena->nchunks / ngroups) *
			    (o->pages + 1 + reader_pages) * PMD_PAGE_SIZE + MEMCG_SLACK >
		    si->cfg->memcg_headroom) {
		free(fp);
		snprintf(si->why, sizeof(si->why),
			 "--memcg-headroom %llu < %u group(s) x %llu chunk(s) x (%llu pages + %u) "
			 "x 4K + %uK: lower --fault-pages/--fault-chunks",
			 (unsigned long long)si->cfg->memcg_headroom, ngroups,
			 (unsigned long long)(o->chunks ? o->chunks : si->arena->nchunks / ngroups),
			 (unsigned long long)o->pages, 1 + reader_pages, MEMCG_SLACK >> 10);
		return -EINVAL;
	}
	/* a corruption of a written slot needs a group with a worker writing it */
	inj = pmd_inject_get(si->run);
	if (inj->kind == PMD_INJECT_CORRUPT && inj->class != PMD_CLASS_NONZERO_AFTER_ZAP &&
	    inj->slot >= ((si->nworkers + ngroups - 1) / ngroups) * o->passes) {
		free(fp);
		snprintf(si->why, sizeof(si->why),
			 "--inject slot %u: groups of up to %u workers write slots 0-%llu; "
			 "raise --fault-group", inj->slot, (si->nworkers + ngroups - 1) / ngroups,
			 (unsigned long long)(((si->nworkers + ngroups - 1) / ngroups) * o->passes - 1));
		return -EINVAL;
	}
	if (!fp)
		return -ENOMEM;
	fp->o = o;
	fp->first = first;
	fp->ngroups = ngroups;
	fp->groups = aligned_alloc(64, sizeof(*fp->groups) * ngroups);
	/* as many groups race at once as their racers fit on the CPUs; no turns if all do */
	slots = o->turn_ns ? racers_at_once() / group : ngroups;
	slots = slots < 1 ? 1 : slots > ngroups ? ngroups : slots;
	fp->batches = aligned_alloc(64, sizeof(*fp->batches) * ((ngroups + slots - 1) / slots));
	if (!fp->groups || !fp->batches) {
		free(fp->groups);
		free(fp->batches);
		free(fp);
		return -ENOMEM;
	}
	memset(fp->groups, 0, sizeof(*fp->groups) * ngroups);
	pmd_baton_init(&fp->baton, ngroups, slots, fp->batches);
	pthread_mutex_init(&fp->thp_off.lock, NULL);
	fp->mech = o->seed_share ? pmd_seed_mechanisms(si, why, sizeof(why)) : 0;
	if (!o->seed_share)
		snprintf(why, sizeof(why), "--fault-seed 0");
	pmd_race_mechanisms(si->run, fp->mech, why);
	si->priv = fp;
	for (i = 0; i < ngroups; i++) {
		struct fault_group *g = &fp->groups[i];
		unsigned per = si->arena->nchunks / ngroups;

		/* the inverse of fault_run's worker -> group mapping */
		g->first = pmd_part_first(i, si->nworkers, ngroups);
		g->n = pmd_part_first(i + 1, si->nworkers, ngroups) - g->first;
		g->lo = i * per;
		g->hi = g->lo + per;
		g->want = o->chunks ? (unsigned)o->chunks : per;
		/* by the group's first worker: unique in the run, the same in every run */
		g->rng = pmd_stamp_mix(si->cfg->seed_used ^
				       0xc2b2ae3d27d4eb4full * (si->workers[g->first].id + 1));
		g->cur = calloc(g->want, sizeof(*g->cur));
		g->kept = calloc(g->want, sizeof(*g->kept));
		g->first_lo = calloc(g->n ? g->n : 1, sizeof(uint64_t));
		g->first_hi = calloc(g->n ? g->n : 1, sizeof(uint64_t));
		g->spans = calloc(g->n ? g->n : 1, sizeof(*g->spans));
		g->batch = i / slots;
		g->seed.off = &fp->thp_off;
		if (!g->cur || !g->kept || !g->first_lo || !g->first_hi || !g->spans ||
		    (si->cfg->verify && alloc_logs(g) < 0))
			return -ENOMEM;
		pmd_gate_init(&g->gate, g->n, (unsigned)o->spin);
	}
	return 0;
}

/* The chunks that stayed settled since their last round must still hold it. */
/*
 * Test only (--inject segv_final:chunk:page): in the first chunk the run's
 * last verify reads, from chunk on round the arena, the first page from
 * page on that the round wrote (one it did not may be judged without a
 * load; which hold what at the end is timing) turns PROT_NONE. That verify
 * runs on the storm's main thread, which must report the fault and still
 * write the report, as a worker's fault does.
 */
static void inject_final_fault(struct pmd_sinst *si, struct pmd_chunk *c)
{
	const struct pmd_inject *inj = pmd_inject_get(si->run);
	char *addr = (char *)__atomic_load_n(&c->addr, __ATOMIC_ACQUIRE);
	unsigned k, page = PMD_CHUNK_PAGES;

	if (inj->kind != PMD_INJECT_SEGV_FINAL)
		return;
	for (k = 0; k < PMD_CHUNK_PAGES && page == PMD_CHUNK_PAGES; k++)
		if (!pmd_mask_test(c->zero_pages, (inj->page + k) % PMD_CHUNK_PAGES))
			page = (inj->page + k) % PMD_CHUNK_PAGES;
	if (page == PMD_CHUNK_PAGES || !pmd_inject_claim(si->run))
		return;
	pmd_chunk_log(c, pmd_now_ns(), PMD_OP_INJECT, 0, page);
	mprotect(addr + ((size_t)page << PMD_PAGE_SHIFT), PMD_PAGE_SIZE, PROT_NONE);
}

static int fault_verify(struct pmd_sinst *si)
{
	struct pmd_arena *a = si->arena;
	const struct pmd_inject *inj = pmd_inject_get(si->run);
	unsigned start = inj->kind == PMD_INJECT_SEGV_FINAL ? inj->chunk : 0, j;

	if (!si->cfg->verify || !si->nworkers)
		return 0;
	for (j = 0; j < a->nchunks; j++) {
		struct pmd_chunk *c = &a->chunks[(start + j) % a->nchunks];

		if (c->nslots && pmd_chunk_claim(c, PMD_CHUNK_IDLE, PMD_CHUNK_HELD)) {
			inject_final_fault(si, c);
			verify_chunk(&si->workers[0], c, false);
			pmd_chunk_release(c, PMD_CHUNK_IDLE);
		}
	}
	return 0;
}

static void fault_teardown(struct pmd_sinst *si)
{
	struct fault_priv *fp = si->priv;
	unsigned i;

	if (!fp)
		return;
	for (i = 0; i < fp->ngroups; i++) {
		free(fp->groups[i].cur);
		free(fp->groups[i].kept);
		free(fp->groups[i].first_lo);
		free(fp->groups[i].first_hi);
		free(fp->groups[i].spans);
		if (fp->groups[i].logs)
			pmd_pool_free(fp->groups[i].logs, fp->groups[i].logs_len);
	}
	free(fp->groups);
	free(fp->batches);
	pthread_mutex_destroy(&fp->thp_off.lock);
	free(fp);
	si->priv = NULL;
}

const struct pmd_stressor pmd_stressor_fault = {
	.abi = PMD_STRESSOR_ABI,
	.name = "fault",
	.summary = "first-touch storm: workers fault the same fresh chunk at once, THP vs PTE",
	.options = fault_options,
	.opts_size = sizeof(struct fault_opts),
	.metrics = fault_metrics,
	.workers = "rest",
	.setup = fault_setup,
	.run = fault_run,
	.verify = fault_verify,
	.teardown = fault_teardown,
};
