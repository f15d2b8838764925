// SPDX-License-Identifier: GPL-2.0
/*
 * zap: MADV_DONTNEED, MADV_FREE, MADV_COLD, MADV_PAGEOUT and munmap +
 * mmap MAP_FIXED remaps, of whole chunks and of 4 KiB subranges of THPs,
 * while the storm faults.
 *
 * The race: zapping runs under the mmap read lock (or none for the fault
 * path's per-VMA lock), so it meets a first-touch fault on the same PMD
 * head on. CVE-2012-1179 was this: MADV_DONTNEED's zap_pmd_range() saw a
 * pmd that a concurrent THP fault was installing and reported "bad pmd" /
 * hit BUG; later bugs in the family let stale data survive a zap (vs NUMA
 * balancing) or lost a write to a page MADV_FREE had just cleaned. A
 * subrange of a PMD-mapped THP forces a PMD split inside the zap or the
 * LRU walk (MADV_COLD/PAGEOUT split a large folio they cannot take whole).
 *
 * Two ways of hitting chunks:
 *   - racing: MADV_DONTNEED / MADV_FREE of a chunk a fault round is
 *     writing right now, recorded with its pages and time (a race record,
 *     arena.h), so that round's verifier judges each slot of those pages by
 *     when it was stored: before a MADV_DONTNEED it must read zero, after
 *     either its stamp (a write after MADV_FREE must be kept), overlapping
 *     the call zero or its stamp, never anything else; every other page
 *     must hold its stamps. MADV_DONTNEED of shmem (--shared) drops only
 *     the mapping: the round's stamps must all stay. MADV_COLD /
 *     MADV_PAGEOUT change no contents and just hit round chunks;
 *   - holding: claim an idle chunk, verify it (which also leaves its
 *     translations in this CPU's TLB), operate, record what each page must
 *     now hold, verify the whole chunk at once, release. After MADV_DONTNEED
 *     the pages must read zero (MAP_PRIVATE; on MAP_SHARED the shmem pages
 *     survive the zap and must read as before), after MADV_FREE each page
 *     holds its data or, dropped whole, all zero (until a store makes it
 *     dirty again), after MADV_COLD / MADV_PAGEOUT their data
 *     (without swap nothing but MADV_FREE'd pages can be dropped, with swap
 *     they come back), after a remap they must read zero. The storm
 *     verifies the chunk again before its next round.
 * Op kinds the kernel refuses here (EINVAL from a probe at setup, e.g.
 * MADV_FREE on a MAP_SHARED arena) are skipped and counted per kind.
 *
 * How to tell it fired: "raced" counts zaps that landed inside a round; a
 * subrange zap of a THP raises thp_split_pmd; a kernel that gets it wrong
 * shows LOST_WRITE (a write lost to a racing zap outside its range, or
 * made after a racing MADV_DONTNEED or MADV_FREE returned, or lost to a
 * finished zap), NONZERO_AFTER_ZAP or STALE (data surviving a zap, racing
 * or not), or a "bad pmd" / "BUG: Bad page map" splat.
 */
#include <pmdstress/stressor.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { K_DONTNEED, K_FREE, K_COLD, K_PAGEOUT, K_REMAP, K_COUNT };
enum { ALIGN_PAGE, ALIGN_RANGE };

struct zap_opts {
	uint64_t rate;
	uint64_t race;
	uint64_t whole;
	uint64_t pages;
	unsigned align;
	uint64_t weight[K_COUNT];
};

static const char *const aligns[] = { "page", "range", NULL };

#define O(f) offsetof(struct zap_opts, f)
static const struct pmd_option zap_options[] = {
	{ "rate", PMD_OPT_UINT, O(rate), "500", 0, 10000000, NULL,
	  "operations per second, all workers together (0: as fast as possible)" },
	{ "race", PMD_OPT_UINT, O(race), "50", 0, 100, NULL,
	  "percent of madvise ops aimed at a chunk a fault round is writing (the others "
	  "hold an idle chunk and verify it at once)" },
	{ "whole", PMD_OPT_UINT, O(whole), "25", 0, 100, NULL,
	  "percent of ops on a whole chunk (the others on a subrange)" },
	{ "pages", PMD_OPT_UINT, O(pages), "1", 1, PMD_CHUNK_PAGES - 1, NULL,
	  "subrange length in 4 KiB pages" },
	{ "align", PMD_OPT_ENUM, O(align), "page", 0, 0, aligns,
	  "where a subrange starts: any page, or a multiple of its length" },
	{ "dontneed", PMD_OPT_UINT, O(weight[K_DONTNEED]), "4", 0, 100, NULL,
	  "weight of MADV_DONTNEED in the op mix" },
	{ "free", PMD_OPT_UINT, O(weight[K_FREE]), "2", 0, 100, NULL,
	  "weight of MADV_FREE" },
	{ "cold", PMD_OPT_UINT, O(weight[K_COLD]), "1", 0, 100, NULL,
	  "weight of MADV_COLD" },
	{ "pageout", PMD_OPT_UINT, O(weight[K_PAGEOUT]), "1", 0, 100, NULL,
	  "weight of MADV_PAGEOUT" },
	{ "remap", PMD_OPT_UINT, O(weight[K_REMAP]), "1", 0, 100, NULL,
	  "weight of munmap + mmap MAP_FIXED of the range (held chunks only)" },
	PMD_OPT_END,
};

enum {
	M_OPS,
	M_DONTNEED,
	M_FREE,
	M_COLD,
	M_PAGEOUT,
	M_REMAP,
	M_RACED,
	M_SUB,
	M_FREE_UNSUP,
	M_COLD_UNSUP,
	M_PAGEOUT_UNSUP,
	M_LOCKED,
	L_DONTNEED,
	L_FREE,
	L_COLD,
	L_PAGEOUT,
	L_REMAP,
};

static const struct pmd_metric zap_metrics[] = {
	[M_OPS] = { "ops", PMD_METRIC_COUNT, "zaps done, of all kinds" },
	[M_DONTNEED] = { "dontneed", PMD_METRIC_COUNT, "MADV_DONTNEED calls", PMD_BETTER_NONE },
	[M_FREE] = { "free", PMD_METRIC_COUNT, "MADV_FREE calls", PMD_BETTER_NONE },
	[M_COLD] = { "cold", PMD_METRIC_COUNT, "MADV_COLD calls", PMD_BETTER_NONE },
	[M_PAGEOUT] = { "pageout", PMD_METRIC_COUNT, "MADV_PAGEOUT calls", PMD_BETTER_NONE },
	[M_REMAP] = { "remap", PMD_METRIC_COUNT, "munmap + mmap MAP_FIXED of a held range",
		      PMD_BETTER_NONE },
	[M_RACED] = { "raced", PMD_METRIC_COUNT, "ops that hit a chunk inside a fault round",
		      PMD_BETTER_NONE },
	[M_SUB] = { "sub", PMD_METRIC_COUNT, "ops on a subrange rather than a whole chunk",
		    PMD_BETTER_NONE },
	[M_FREE_UNSUP] = { "free_unsupported", PMD_METRIC_COUNT,
			   "MADV_FREE ops skipped: the kernel refuses it on this arena",
			   PMD_BETTER_NONE },
	[M_COLD_UNSUP] = { "cold_unsupported", PMD_METRIC_COUNT,
			   "MADV_COLD ops skipped: the kernel refuses it on this arena",
			   PMD_BETTER_NONE },
	[M_PAGEOUT_UNSUP] = { "pageout_unsupported", PMD_METRIC_COUNT,
			      "MADV_PAGEOUT ops skipped: the kernel refuses it on this arena",
			      PMD_BETTER_NONE },
	[M_LOCKED] = { "locked", PMD_METRIC_COUNT,
		       "ops on a live round refused (EINVAL) while the lock partner had the chunk "
		       "mlocked", PMD_BETTER_NONE },
	[L_DONTNEED] = { "dontneed_call", PMD_METRIC_LATENCY, "one MADV_DONTNEED" },
	[L_FREE] = { "free_call", PMD_METRIC_LATENCY, "one MADV_FREE" },
	[L_COLD] = { "cold_call", PMD_METRIC_LATENCY, "one MADV_COLD" },
	[L_PAGEOUT] = { "pageout_call", PMD_METRIC_LATENCY, "one MADV_PAGEOUT" },
	[L_REMAP] = { "remap_call", PMD_METRIC_LATENCY,
		      "munmap + mmap MAP_FIXED + THP advice (without the RCU grace period)" },
	{ NULL },
};

struct zap_kind {
	const char *name;
	int advice; /* -1: remap */
	enum pmd_op op_whole, op_sub, op_raced;
	unsigned count, lat, unsup; /* metrics; unsup 0: always supported */
};

static const struct zap_kind kinds[K_COUNT] = {
	[K_DONTNEED] = { "MADV_DONTNEED", MADV_DONTNEED, PMD_OP_ZAP_DONTNEED, PMD_OP_DONTNEED_SUB,
			 PMD_OP_RACE_DONTNEED, M_DONTNEED, L_DONTNEED, 0 },
	[K_FREE] = { "MADV_FREE", MADV_FREE, PMD_OP_FREE, PMD_OP_FREE, PMD_OP_RACE_FREE, M_FREE,
		     L_FREE, M_FREE_UNSUP },
	[K_COLD] = { "MADV_COLD", MADV_COLD, PMD_OP_COLD, PMD_OP_COLD, PMD_OP_COLD, M_COLD, L_COLD,
		     M_COLD_UNSUP },
	[K_PAGEOUT] = { "MADV_PAGEOUT", MADV_PAGEOUT, PMD_OP_PAGEOUT, PMD_OP_PAGEOUT,
			PMD_OP_PAGEOUT, M_PAGEOUT, L_PAGEOUT, M_PAGEOUT_UNSUP },
	[K_REMAP] = { "munmap+mmap", -1, PMD_OP_ZAP_REMAP, PMD_OP_MUNMAP_SUB, PMD_OP_NONE, M_REMAP,
		      L_REMAP, 0 },
};

struct zap_priv {
	bool ok[K_COUNT];
	uint64_t total_weight;
};

/* A range of one chunk, in pages: [lo, hi). Ring entries carry lo | (hi - lo) << 9. */
struct zrange {
	unsigned lo, hi;
};

static uint32_t range_arg(struct zrange r)
{
	return r.lo | (r.hi - r.lo) << 9;
}

/*
 * Does the kernel take @k on a mapping like the arena's? Only EINVAL means
 * "not here"; the probe mapping is our own, two pages, written first.
 */
static int probe_kind(const struct pmd_arena *a, unsigned k)
{
	size_t len = 2 * PMD_PAGE_SIZE;
	char *p;
	int rc = 0;

	if (kinds[k].advice < 0)
		return 0;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, pmd_arena_map_flags(a), -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	memset(p, 1, len);
	if (madvise(p, len, kinds[k].advice))
		rc = -errno;
	munmap(p, len);
	return rc;
}

static const char *zap_supported(struct pmd_sinst *si)
{
	const struct zap_opts *o = si->opts;
	size_t n = 0;
	bool any = false;
	unsigned k;

	for (k = 0; k < K_COUNT; k++) {
		int rc;

		if (!o->weight[k])
			continue;
		rc = probe_kind(si->arena, k);
		if (!rc) {
			any = true;
			continue;
		}
		if (n < sizeof(si->why))
			n += (size_t)snprintf(si->why + n, sizeof(si->why) - n, "%s%s: %s",
					      n ? ", " : "", kinds[k].name, strerror(-rc));
	}
	/* nothing asked for at all is the user's mistake: setup says so (exit 2) */
	if (any || !n)
		return NULL;
	return si->why;
}

static int zap_setup(struct pmd_sinst *si)
{
	const struct zap_opts *o = si->opts;
	struct zap_priv *zp = calloc(1, sizeof(*zp));
	uint64_t asked = 0;
	unsigned k;

	for (k = 0; k < K_COUNT; k++)
		asked += o->weight[k];
	if (!asked) {
		free(zp);
		snprintf(si->why, sizeof(si->why), "every op weight is 0 (set --zap-dontneed, "
						   "--zap-free, ... above 0)");
		return -EINVAL;
	}
	if (!zp)
		return -ENOMEM;
	for (k = 0; k < K_COUNT; k++) {
		int rc = probe_kind(si->arena, k);

		zp->ok[k] = !rc;
		zp->total_weight += o->weight[k];
		if (rc && o->weight[k])
			fprintf(stderr, "pmdstress: zap: %s is not supported on this %s arena (%s): "
					"its ops are skipped and counted as %s\n",
				kinds[k].name, si->arena->shared ? "MAP_SHARED" : "MAP_PRIVATE",
				strerror(-rc), zap_metrics[kinds[k].unsup].name);
	}
	si->priv = zp;
	return 0;
}

static void zap_teardown(struct pmd_sinst *si)
{
	free(si->priv);
	si->priv = NULL;
}

static unsigned pick_kind(struct pmd_worker *w)
{
	const struct zap_opts *o = w->si->opts;
	const struct zap_priv *zp = w->si->priv;

	return pmd_pick_weighted(w, o->weight, K_COUNT, zp->total_weight);
}

static struct zrange pick_range(struct pmd_worker *w)
{
	const struct zap_opts *o = w->si->opts;
	unsigned n = (unsigned)o->pages;
	struct zrange r = { 0, PMD_CHUNK_PAGES };

	if (pmd_rand_below(w, 100) < o->whole)
		return r;
	if (o->align == ALIGN_RANGE)
		r.lo = (unsigned)pmd_rand_below(w, PMD_CHUNK_PAGES / n) * n;
	else
		r.lo = (unsigned)pmd_rand_below(w, PMD_CHUNK_PAGES - n + 1);
	r.hi = r.lo + n;
	return r;
}

static bool is_whole(struct zrange r)
{
	return r.lo == 0 && r.hi == PMD_CHUNK_PAGES;
}

static void count_op(struct pmd_worker *w, unsigned k, struct zrange r, uint64_t ns)
{
	pmd_latency(w, kinds[k].lat, ns);
	pmd_count(w, M_OPS, 1);
	pmd_count(w, kinds[k].count, 1);
	if (!is_whole(r))
		pmd_count(w, M_SUB, 1);
}

/* ---- racing a round -------------------------------------------------------- */

/*
 * What @k does to the pages of a round it races, as a race record kind:
 * MADV_DONTNEED of private memory and MADV_FREE may take stores (the
 * verifier judges each slot by when it was stored); MADV_DONTNEED of shmem
 * drops only the mapping, and COLD/PAGEOUT change nothing: the round's
 * stamps must all be there.
 */
static enum pmd_chunk_race_kind race_kind(const struct pmd_arena *a, unsigned k)
{
	if (k == K_DONTNEED && !a->shared)
		return PMD_RACE_DONTNEED;
	if (k == K_FREE)
		return PMD_RACE_FREE;
	return PMD_RACE_NONE;
}

/*
 * Hit a chunk some fault group is writing, inside the round's bracket, so
 * it cannot close under us. An op that may zero pages records the pages
 * and its time (pmd_chunk_race_begin), so the round's verifier accepts
 * zero only in those pages, only from stores that did not follow it.
 * COLD/PAGEOUT need no bracket. Every op runs in an RCU section: split
 * moves or unmaps part of a live round's chunk only once it is retired
 * and a grace period passed, so an op that read the chunk's address has
 * hit the chunk there, not the placeholder left behind. False if no round
 * was found.
 */
static bool race_round(struct pmd_worker *w, unsigned k, struct zrange r)
{
	struct pmd_arena *a = w->si->arena;
	enum pmd_chunk_race_kind kind = race_kind(a, k);
	bool bracket = k == K_DONTNEED || k == K_FREE;
	unsigned start = (unsigned)pmd_rand_below(w, a->nchunks), i;

	for (i = 0; i < a->nchunks; i++) {
		struct pmd_chunk *c = &a->chunks[(start + i) % a->nchunks];
		struct pmd_chunk_race *rec = NULL;
		uint32_t lk0, lk1;
		bool locked;
		uint64_t t;
		char *addr;
		int rc;

		if (pmd_chunk_state(c) != PMD_CHUNK_ROUND || !(addr = pmd_chunk_enter(c)))
			continue;
		if ((kind != PMD_RACE_NONE && !(rec = pmd_chunk_race_begin(c, kind, r.lo, r.hi))) ||
		    (kind == PMD_RACE_NONE && bracket && !pmd_chunk_disturb_begin(c))) {
			pmd_chunk_exit(c);
			continue;
		}
		addr += (size_t)r.lo << PMD_PAGE_SHIFT;
		lk0 = __atomic_load_n(&c->locks, __ATOMIC_SEQ_CST);
		t = pmd_now_ns();
		rc = madvise(addr, (size_t)(r.hi - r.lo) << PMD_PAGE_SHIFT, kinds[k].advice);
		rc = rc ? -errno : 0;
		t = pmd_now_ns() - t;
		lk1 = __atomic_load_n(&c->locks, __ATOMIC_SEQ_CST);
		pmd_chunk_exit(c);
		/* in the ring before the round can close: its verify shows the op */
		if (!rc)
			pmd_chunk_log(c, pmd_now_ns(), kinds[k].op_raced, w->id, range_arg(r));
		/*
		 * The lock partner had the range mlocked at some point of the
		 * call (VM_LOCKED: EINVAL). The record then says what may have
		 * happened: nothing, or a zap of the VMAs before a locked one,
		 * as a MADV_FREE (zero or the stamp before it, the stamp after).
		 */
		locked = rc == -EINVAL && bracket && ((lk0 | lk1) & 1 || lk0 != lk1);
		if (locked && rec)
			rec->kind = PMD_RACE_FREE;
		if (rec)
			pmd_chunk_race_end(c, rec);
		else if (bracket)
			pmd_chunk_disturb_end(c);
		if (locked) {
			pmd_count(w, M_LOCKED, 1);
			return true;
		}
		if (rc && bracket)
			pmd_worker_error(w, rc, "zap: %s of chunk %u pages %u..%u during a round",
					 kinds[k].name, c->index, r.lo, r.hi);
		if (rc)
			return false;
		count_op(w, k, r, t);
		pmd_count(w, M_RACED, 1);
		return true;
	}
	return false;
}

/* ---- holding an idle chunk ------------------------------------------------- */

/*
 * Claim an idle chunk with recorded contents. A chunk the storm is about to
 * claim (CLOSING) is left to it; a chunk no round has written yet (nslots
 * 0: all zero, and possibly still pmd_none, which the storm's first round
 * relies on) is given back untouched.
 */
static struct pmd_chunk *hold_chunk(struct pmd_worker *w)
{
	struct pmd_arena *a = w->si->arena;

	return pmd_arena_hold_settled(a, (unsigned)pmd_rand_below(w, a->nchunks), a->nchunks);
}

static void mark(uint64_t *mask, struct zrange r)
{
	unsigned p;

	for (p = r.lo; p < r.hi; p++)
		pmd_mask_set(mask, p);
}

/*
 * munmap + mmap MAP_FIXED of the range of a held chunk, under the RCU
 * retire rule. The munmap is a PROT_NONE placeholder mapped over the range
 * (the kernel's munmap path: VMA split, PMD split, page tables freed)
 * rather than munmap(2), so no other thread's mmap can land in a hole
 * between the two calls. On failure the range may be gone: the chunk
 * stays retired and held for good (the storm skips it) and 0 is not
 * returned.
 */
static int remap_range(struct pmd_worker *w, struct pmd_chunk *c, char *addr, struct zrange r,
		       uint64_t *ns)
{
	struct pmd_arena *a = w->si->arena;
	char *p = addr + ((size_t)r.lo << PMD_PAGE_SHIFT);
	size_t len = (size_t)(r.hi - r.lo) << PMD_PAGE_SHIFT;
	uint64_t t;
	int rc, advice_err = 0;

	pmd_chunk_retire(c);
	t = pmd_now_ns();
	rc = pmd_arena_placeholder(p, len);
	if (!rc)
		rc = pmd_arena_map_fresh(a, p, len, &advice_err); /* THP advice + memory policy */
	if (rc)
		return rc;
	*ns = pmd_now_ns() - t;
	/* fresh memory: zero, before anyone may look */
	mark(c->zero_pages, r);
	pmd_chunk_revive(c, addr);
	if (advice_err)
		pmd_worker_error(w, advice_err, "zap: THP advice or memory policy on remapped chunk %u",
				 c->index);
	return 0;
}

static void verify_held(struct pmd_worker *w, struct pmd_chunk *c)
{
	char *addr;

	if (!w->si->cfg->verify)
		return;
	addr = pmd_chunk_enter(c);
	if (!addr)
		return;
	pmd_verify_pages(w, c, addr, 0, PMD_CHUNK_PAGES);
	pmd_chunk_exit(c);
}

/*
 * Before the op: what the chunk holds must be right, or the op would get
 * the blame for it (a bad chunk is reported here and left alone). Reading
 * every page also leaves this CPU's TLB holding the chunk's translations,
 * so a zap that frees the pages but skips its TLB flush (zap_huge_pmd()
 * without tlb_remove_pmd_tlb_entry()) shows in verify_held() right after
 * it: the old stamps read back where zeros must be (NONZERO_AFTER_ZAP).
 */
static bool verify_before(struct pmd_worker *w, struct pmd_chunk *c)
{
	unsigned bad;
	char *addr;

	if (!w->si->cfg->verify)
		return true;
	addr = pmd_chunk_enter(c);
	if (!addr)
		return false;
	bad = pmd_verify_pages(w, c, addr, 0, PMD_CHUNK_PAGES);
	pmd_chunk_exit(c);
	return !bad;
}

/*
 * Test only (--inject zap:chunk:page:slot): once, right after an op on held
 * chunk @chunk whose range covers @page, make the mistake a kernel could
 * make there, in @slot of that page: the old data outliving a zap
 * (MADV_DONTNEED of private memory, a remap: NONZERO_AFTER_ZAP), an older
 * generation's data where MADV_FREE leaves zero or the data (STALE), a zero
 * where the data must stay (MADV_COLD, MADV_PAGEOUT, MADV_DONTNEED of
 * shmem: LOST_WRITE). The value comes from the op kind, not from what
 * hold_op() recorded, so verify_held() catching it proves the record right.
 */
static void inject_after_op(struct pmd_worker *w, struct pmd_chunk *c, unsigned k,
			    struct zrange r)
{
	const struct pmd_inject *inj = pmd_inject_get(w->si->run);
	const struct pmd_arena *a = w->si->arena;
	uint32_t lpage = c->index * (uint32_t)PMD_CHUNK_PAGES + inj->page;
	uint32_t gen = __atomic_load_n(&c->gen, __ATOMIC_RELAXED);
	uint64_t v = 0;
	char *addr;

	/* a slot that held a stamp before the op, so that each mistake reads as one */
	if (inj->kind != PMD_INJECT_ZAP || inj->chunk != c->index || inj->page < r.lo ||
	    inj->page >= r.hi || inj->slot >= c->nslots || pmd_mask_test(c->skipped, inj->slot))
		return;
	if ((k == K_DONTNEED && !a->shared) || k == K_REMAP)
		v = pmd_stamp(a->tag_key, c->domain, lpage, gen, inj->slot);
	else if (k == K_FREE)
		v = pmd_stamp(a->tag_key, c->domain, lpage, gen > 1 ? gen - 1 : PMD_GEN_MAX,
			      inj->slot);
	addr = pmd_chunk_enter(c);
	if (!addr)
		return;
	if (pmd_inject_claim(w->si->run)) {
		pmd_store(pmd_page_slot(addr, inj->page, inj->slot), v);
		pmd_chunk_log(c, pmd_now_ns(), PMD_OP_INJECT, w->id, inj->page);
	}
	pmd_chunk_exit(c);
}

static void hold_op(struct pmd_worker *w, unsigned k, struct zrange r)
{
	struct pmd_arena *a = w->si->arena;
	struct pmd_chunk *c = hold_chunk(w);
	uint64_t t, ns = 0;
	char *addr;
	int rc;

	if (!c)
		return;
	if (!verify_before(w, c)) {
		pmd_chunk_release(c, PMD_CHUNK_IDLE);
		return;
	}
	/* ours now: it cannot move */
	addr = (char *)__atomic_load_n(&c->addr, __ATOMIC_ACQUIRE);
	if (k == K_REMAP) {
		rc = remap_range(w, c, addr, r, &ns);
		if (rc) {
			pmd_worker_error(w, rc, "zap: remapping chunk %u pages %u..%u (left retired)",
					 c->index, r.lo, r.hi);
			return;
		}
	} else {
		t = pmd_now_ns();
		rc = madvise(addr + ((size_t)r.lo << PMD_PAGE_SHIFT),
			     (size_t)(r.hi - r.lo) << PMD_PAGE_SHIFT, kinds[k].advice);
		rc = rc ? -errno : 0;
		ns = pmd_now_ns() - t;
		if (rc) {
			/* it may have done part of its work: any page may read zero */
			mark(c->maybe_pages, r);
			pmd_worker_error(w, rc, "zap: %s of held chunk %u pages %u..%u",
					 kinds[k].name, c->index, r.lo, r.hi);
		} else if (k == K_DONTNEED && !a->shared) {
			mark(c->zero_pages, r);
		} else if (k == K_FREE) {
			mark(c->maybe_pages, r);
		}
		/* COLD, PAGEOUT, and DONTNEED of shmem: the data must still be there */
	}
	pmd_chunk_log(c, pmd_now_ns(), is_whole(r) ? kinds[k].op_whole : kinds[k].op_sub, w->id,
		      range_arg(r));
	if (!rc) {
		count_op(w, k, r, ns);
		inject_after_op(w, c, k, r);
	}
	verify_held(w, c);
	pmd_chunk_release(c, PMD_CHUNK_IDLE);
}

/* ---- the loop ---------------------------------------------------------------- */

static void zap_one(struct pmd_worker *w)
{
	const struct zap_opts *o = w->si->opts;
	const struct zap_priv *zp = w->si->priv;
	unsigned k = pick_kind(w);
	struct zrange r = pick_range(w);

	if (!zp->ok[k]) {
		pmd_count(w, kinds[k].unsup, 1);
		return;
	}
	if (k != K_REMAP && pmd_rand_below(w, 100) < o->race && race_round(w, k, r))
		return;
	hold_op(w, k, r);
}

static int zap_run(struct pmd_worker *w)
{
	const struct zap_opts *o = w->si->opts;
	uint64_t next = pmd_now_ns();

	do {
		zap_one(w);
		pmd_beat(w);
	} while (pmd_pace(w, &next, o->rate));
	return 0;
}

const struct pmd_stressor pmd_stressor_zap = {
	.abi = PMD_STRESSOR_ABI,
	.name = "zap",
	.summary = "MADV_DONTNEED/FREE/COLD/PAGEOUT and munmap+MAP_FIXED remaps racing the faults",
	.options = zap_options,
	.opts_size = sizeof(struct zap_opts),
	.metrics = zap_metrics,
	.workers = "1",
	.supported = zap_supported,
	.setup = zap_setup,
	.run = zap_run,
	.teardown = zap_teardown,
};
