// SPDX-License-Identifier: GPL-2.0
/*
 * split: PMD splits and huge PMD moves of chunks the storm has just written.
 *
 * The race: a huge PMD is split when a VMA boundary lands inside it
 * (mprotect of a 4 KiB hole, munmap of one page: __split_vma() ->
 * vma_adjust_trans_huge() -> split_huge_pmd()), and moved whole when
 * mremap() moves a 2 MiB aligned range to a 2 MiB aligned place
 * (move_page_tables() -> move_huge_pmd()). Both rewrite PMDs of one VMA
 * while the storm's threads fault their neighbours in the same VMA under
 * the per-VMA lock, and while khugepaged, migration or /proc walkers look
 * at the same PMDs; the kernel history of this file is full of it: PMD
 * migration-entry races (BUG in mm/huge_memory.c), split vs fault ("bad
 * pmd"), a moved PMD losing its dirty bit or its page.
 *
 * Each op holds an idle chunk, preferring a PMD-mapped one:
 *   - mprotect: a hole of `pages` pages goes PROT_READ (VMA split, PMD
 *     split); the data is read through the hole, the hole goes back to
 *     PROT_READ|PROT_WRITE (VMA merge) and the chunk is verified;
 *   - munmap: the hole is unmapped (a PROT_NONE placeholder mapped over
 *     it, so it is never a gap another thread's mmap could take) and a
 *     fresh page mapped back with MAP_FIXED; the hole must now read zero;
 *   - mremap: the whole chunk moves to a spare slot (huge PMD move; with
 *     MREMAP_DONTUNMAP, so its old range never becomes a hole, and is then
 *     filled with a placeholder), the chunk table follows it, the data is
 *     verified there and the storm goes on using the chunk at its new
 *     place; after `away` another op moves it home again and puts the slot
 *     back (refilled with a placeholder).
 * Every unmap or move is done with the chunk retired (RCU grace period).
 *
 * With --split-race, a share of the ops goes to the chunk a fault round is
 * writing right now instead (inside the round's bracket: it cannot close),
 * so the split races the workers' faults on the same PMD: an mprotect hole
 * is PROT_READ only where every worker has stored for the last time (the
 * round's log says; elsewhere a store would fault), else
 * PROT_READ|WRITE|EXEC (the same VMA and PMD split, a permission the
 * stores do not need); a munmap hole is recorded as an UNMAP race, so the
 * round's verifier wants zero from stores before it and stamps from stores
 * after; mremap moves the chunk under the round, which goes on where it
 * is now. After each op split checks what the log says is done is there
 * ("live", "live_pages").
 * A hole starts at any page, or (align=range) at a multiple of its length,
 * so a 16-page hole covers a whole 64 KiB mTHP folio rather than a piece of
 * two; "aligned" counts the holes that did.
 *
 * How to tell it fired: thp_split counts ops that found their chunk
 * PMD-mapped before and not after (and vmstat thp_split_pmd rises with
 * it); thp_moved counts PMD-mapped chunks still PMD-mapped at their new
 * place. A kernel that gets it wrong shows LOST_WRITE / FOREIGN / STALE
 * from the verifier after the op, NONZERO_AFTER_ZAP in a fresh page,
 * SIGSEGV/SIGBUS on a live chunk, or "bad pmd" / "kernel BUG at mm/".
 */
#include <pmdstress/stressor.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { K_MPROTECT, K_MUNMAP, K_MREMAP, K_COUNT };
enum { ALIGN_PAGE, ALIGN_RANGE };

struct split_opts {
	uint64_t rate;
	uint64_t race;
	uint64_t weight[K_COUNT];
	uint64_t pages;
	unsigned align;
	uint64_t away_ns;
};

static const char *const aligns[] = { "page", "range", NULL };

#define O(f) offsetof(struct split_opts, f)
static const struct pmd_option split_options[] = {
	{ "rate", PMD_OPT_UINT, O(rate), "100", 0, 1000000, NULL,
	  "operations per second, all workers together (0: as fast as possible)" },
	{ "race", PMD_OPT_UINT, O(race), "50", 0, 100, NULL,
	  "percent of ops aimed at the chunk a fault round is writing right now (the others "
	  "hold an idle chunk); an op that finds no such round falls back to an idle one" },
	{ "mprotect", PMD_OPT_UINT, O(weight[K_MPROTECT]), "1", 0, 100, NULL,
	  "weight of mprotect holes in the op mix" },
	{ "munmap", PMD_OPT_UINT, O(weight[K_MUNMAP]), "1", 0, 100, NULL,
	  "weight of munmap + fresh MAP_FIXED page" },
	{ "mremap", PMD_OPT_UINT, O(weight[K_MREMAP]), "1", 0, 100, NULL,
	  "weight of whole-chunk moves to a spare slot and back" },
	{ "pages", PMD_OPT_UINT, O(pages), "1", 1, PMD_CHUNK_PAGES - 1, NULL,
	  "hole size in 4 KiB pages (mprotect and munmap)" },
	{ "align", PMD_OPT_ENUM, O(align), "page", 0, 0, aligns,
	  "where a hole starts: any page, or a multiple of its length" },
	{ "away", PMD_OPT_DURATION, O(away_ns), "50ms", 0, 3600000000000ull, NULL,
	  "how long a moved chunk stays at its spare slot before it is moved home" },
	PMD_OPT_END,
};

enum {
	M_OPS,
	M_MPROTECT,
	M_MUNMAP,
	M_MREMAP,
	M_BACK,
	M_THP_SPLIT,
	M_THP_MOVED,
	M_BUSY,
	M_ALIGNED,
	M_LIVE,
	M_LIVE_PAGES,
	L_PROTECT,
	L_UNPROTECT,
	L_MUNMAP,
	L_MMAP,
	L_MREMAP,
	L_BACK,
};

static const struct pmd_metric split_metrics[] = {
	[M_OPS] = { "ops", PMD_METRIC_COUNT, "splits and moves done" },
	[M_MPROTECT] = { "mprotect", PMD_METRIC_COUNT, "holes made read-only and back",
			 PMD_BETTER_NONE },
	[M_MUNMAP] = { "munmap", PMD_METRIC_COUNT, "holes unmapped and mapped fresh",
		       PMD_BETTER_NONE },
	[M_MREMAP] = { "mremap", PMD_METRIC_COUNT, "chunks moved to a spare slot",
		       PMD_BETTER_NONE },
	[M_BACK] = { "moved_home", PMD_METRIC_COUNT, "chunks moved back home", PMD_BETTER_NONE },
	[M_THP_SPLIT] = { "thp_split", PMD_METRIC_COUNT,
			  "ops that found the chunk PMD-mapped before and not after",
			  PMD_BETTER_NONE },
	[M_THP_MOVED] = { "thp_moved", PMD_METRIC_COUNT,
			  "PMD-mapped chunks still PMD-mapped where they were moved",
			  PMD_BETTER_NONE },
	[M_BUSY] = { "busy", PMD_METRIC_COUNT,
		     "moves not made: no spare slot free, or the range spans VMAs this kernel "
		     "cannot move together", PMD_BETTER_NONE },
	[M_ALIGNED] = { "aligned", PMD_METRIC_COUNT,
			"holes that started at a multiple of their length", PMD_BETTER_NONE },
	[M_LIVE] = { "live", PMD_METRIC_COUNT,
		     "ops on a chunk while a fault round wrote it (also counted by kind)",
		     PMD_BETTER_NONE },
	[M_LIVE_PAGES] = { "live_pages", PMD_METRIC_COUNT,
			   "pages of those chunks split checked while the round wrote them: every "
			   "store its log says is done holds its stamp", PMD_BETTER_NONE },
	[L_PROTECT] = { "protect_call", PMD_METRIC_LATENCY, "mprotect of the hole to PROT_READ" },
	[L_UNPROTECT] = { "unprotect_call", PMD_METRIC_LATENCY, "mprotect of the hole back" },
	[L_MUNMAP] = { "munmap_call", PMD_METRIC_LATENCY,
			"unmapping the hole (a PROT_NONE placeholder mapped over it)" },
	[L_MMAP] = { "mmap_call", PMD_METRIC_LATENCY, "mmap of the fresh page(s)" },
	[L_MREMAP] = { "mremap_call", PMD_METRIC_LATENCY, "moving a chunk to a spare slot" },
	[L_BACK] = { "home_call", PMD_METRIC_LATENCY, "moving a chunk home" },
	{ NULL },
};

/* Spare slot i holds chunk away[i] - 1 (0: none) since since[i]; atomics. */
struct split_priv {
	uint64_t total_weight;
	uint32_t *away;
	uint64_t *since;
	uint32_t no_dontunmap; /* atomic: MREMAP_DONTUNMAP refused once */
	uint32_t no_exec;      /* atomic: PROT_EXEC on the arena refused once (an LSM's execmem) */
};

static char *home_of(const struct pmd_arena *a, const struct pmd_chunk *c)
{
	return a->base + (size_t)c->index * PMD_CHUNK_SIZE;
}

static void verify_held(struct pmd_worker *w, struct pmd_chunk *c, unsigned lo, unsigned hi)
{
	char *addr;

	if (!w->si->cfg->verify)
		return;
	addr = pmd_chunk_enter(c);
	if (!addr)
		return;
	pmd_verify_pages(w, c, addr, lo, hi);
	pmd_chunk_exit(c);
}

static char *addr_of(const struct pmd_chunk *c)
{
	return (char *)__atomic_load_n(&c->addr, __ATOMIC_ACQUIRE);
}

static struct pmd_chunk *try_hold(struct pmd_worker *w, struct pmd_chunk *c, bool home_only)
{
	if (!pmd_chunk_claim(c, PMD_CHUNK_IDLE, PMD_CHUNK_HELD))
		return NULL;
	if (c->nslots && (!home_only || addr_of(c) == home_of(w->si->arena, c)))
		return c;
	pmd_chunk_release(c, PMD_CHUNK_IDLE);
	return NULL;
}

/*
 * Claim an idle chunk with recorded contents, PMD-mapped if one of the
 * first few looked at is (the probe reads pagemap, never the memory).
 * Chunks the storm is about to claim, and chunks no round has written yet
 * (possibly still pmd_none, which the storm's first round relies on), are
 * left alone. *state gets the chunk's THP state as seen under ownership.
 */
static struct pmd_chunk *hold_chunk(struct pmd_worker *w, bool home_only,
				    enum pmd_thp_state *state)
{
	struct pmd_arena *a = w->si->arena;
	unsigned start = (unsigned)pmd_rand_below(w, a->nchunks), i, looked = 0;
	struct pmd_chunk *c = NULL, *other = NULL;

	for (i = 0; i < a->nchunks && looked < 16 && !c; i++) {
		struct pmd_chunk *cand = &a->chunks[(start + i) % a->nchunks];

		if (!pmd_chunk_usable(cand))
			continue;
		looked++;
		if (pmd_thp_probe(w->si->run, cand, NULL) == PMD_THPS_THP)
			c = try_hold(w, cand, home_only);
		else if (!other)
			other = cand;
	}
	if (!c && other)
		c = try_hold(w, other, home_only);
	if (c)
		*state = pmd_thp_probe(w->si->run, c, NULL);
	return c;
}

static void count_split(struct pmd_worker *w, enum pmd_thp_state before,
			const struct pmd_chunk *c)
{
	if (before == PMD_THPS_THP && pmd_thp_probe(w->si->run, c, NULL) != PMD_THPS_THP)
		pmd_count(w, M_THP_SPLIT, 1);
}

static unsigned pick_hole(struct pmd_worker *w)
{
	const struct split_opts *o = w->si->opts;
	unsigned n = (unsigned)o->pages;

	if (o->align == ALIGN_RANGE)
		return (unsigned)pmd_rand_below(w, PMD_CHUNK_PAGES / n) * n;
	return (unsigned)pmd_rand_below(w, PMD_CHUNK_PAGES - n + 1);
}

/* A hole starting at page @lo was made: count it by its kind and alignment. */
static void count_hole(struct pmd_worker *w, unsigned kind, unsigned lo)
{
	const struct split_opts *o = w->si->opts;

	pmd_count(w, kind, 1);
	if (!(lo % o->pages))
		pmd_count(w, M_ALIGNED, 1);
}

/* ---- mprotect: a read-only hole ------------------------------------------ */

static int op_mprotect(struct pmd_worker *w)
{
	const struct split_opts *o = w->si->opts;
	enum pmd_thp_state before = PMD_THPS_UNKNOWN;
	struct pmd_chunk *c = hold_chunk(w, false, &before);
	unsigned lo = pick_hole(w), hi = lo + (unsigned)o->pages;
	size_t len = (size_t)o->pages << PMD_PAGE_SHIFT;
	char *hole;
	uint64_t t;
	int rc;

	if (!c)
		return 0;
	hole = addr_of(c) + ((size_t)lo << PMD_PAGE_SHIFT);
	t = pmd_now_ns();
	rc = mprotect(hole, len, PROT_READ) ? -errno : 0;
	pmd_latency(w, L_PROTECT, pmd_now_ns() - t);
	pmd_chunk_log(c, t, PMD_OP_MPROTECT, w->id, lo | (hi - lo) << 9);
	if (!rc) {
		count_split(w, before, c);
		/* the data must read right through the read-only hole */
		verify_held(w, c, lo, hi);
	}
	t = pmd_now_ns();
	/* even after a failure: part of the range may have changed */
	if (mprotect(hole, len, PROT_READ | PROT_WRITE)) {
		/* a read-only page in a chunk the storm writes: never hand it back */
		rc = -errno;
		pmd_worker_error(w, rc, "split: mprotect of chunk %u pages %u..%u back to "
					"read-write (chunk left held)", c->index, lo, hi);
		return rc;
	}
	pmd_latency(w, L_UNPROTECT, pmd_now_ns() - t);
	pmd_chunk_log(c, pmd_now_ns(), PMD_OP_MPROTECT_RW, w->id, lo | (hi - lo) << 9);
	if (rc)
		pmd_worker_error(w, rc, "split: mprotect of chunk %u pages %u..%u to read-only",
				 c->index, lo, hi);
	else
		count_hole(w, M_MPROTECT, lo);
	pmd_count(w, M_OPS, 1);
	verify_held(w, c, 0, PMD_CHUNK_PAGES);
	pmd_chunk_release(c, PMD_CHUNK_IDLE);
	return 0;
}

/* ---- munmap: a hole, then a fresh page --------------------------------------- */

/*
 * The hole is unmapped by mapping a PROT_NONE placeholder over it: the
 * kernel's munmap path (VMA split, PMD split, zap, page tables freed), but
 * without a gap between the two calls. munmap(2) would leave one, and any
 * thread's mmap may land in it: while the brk or page stressor runs, glibc
 * malloc mmaps even a FILE buffer (M_MMAP_THRESHOLD 0).
 */
static int op_munmap(struct pmd_worker *w)
{
	const struct split_opts *o = w->si->opts;
	struct pmd_arena *a = w->si->arena;
	enum pmd_thp_state before = PMD_THPS_UNKNOWN;
	struct pmd_chunk *c = hold_chunk(w, false, &before);
	unsigned lo = pick_hole(w), hi = lo + (unsigned)o->pages, p;
	size_t len = (size_t)o->pages << PMD_PAGE_SHIFT;
	char *addr, *hole;
	uint64_t t;
	int rc, advice_err = 0;

	if (!c)
		return 0;
	addr = addr_of(c);
	hole = addr + ((size_t)lo << PMD_PAGE_SHIFT);
	pmd_chunk_retire(c);
	t = pmd_now_ns();
	rc = pmd_arena_placeholder(hole, len);
	pmd_latency(w, L_MUNMAP, pmd_now_ns() - t);
	pmd_chunk_log(c, t, PMD_OP_MUNMAP_SUB, w->id, lo | (hi - lo) << 9);
	if (!rc) {
		/* a fresh page, with the THP advice and memory policy the arena had */
		t = pmd_now_ns();
		rc = pmd_arena_map_fresh(a, hole, len, &advice_err);
		pmd_latency(w, L_MMAP, pmd_now_ns() - t);
	}
	if (rc) {
		/* a failed MAP_FIXED may have unmapped the range: never hand it back */
		pmd_worker_error(w, rc, "split: unmapping and mapping chunk %u pages %u..%u "
					"(chunk left retired)", c->index, lo, hi);
		return rc;
	}
	if (advice_err)
		pmd_worker_error(w, advice_err, "split: THP advice or memory policy on chunk %u "
						"pages %u..%u", c->index, lo, hi);
	for (p = lo; p < hi; p++)
		pmd_mask_set(c->zero_pages, p);
	pmd_chunk_revive(c, addr);
	count_split(w, before, c);
	count_hole(w, M_MUNMAP, lo);
	pmd_count(w, M_OPS, 1);
	verify_held(w, c, 0, PMD_CHUNK_PAGES);
	pmd_chunk_release(c, PMD_CHUNK_IDLE);
	return 0;
}

/* ---- on a live round ---------------------------------------------------------- */

/*
 * The chunk a fault round is writing right now, held open in the round's
 * bracket (it cannot close under us) and with its log, which every live op
 * needs; and, if @move, the right to retire it (pmd_chunk_move_begin()).
 * NULL if there is none.
 */
static struct pmd_chunk *live_chunk(struct pmd_worker *w, bool move)
{
	struct pmd_arena *a = w->si->arena;
	unsigned start = (unsigned)pmd_rand_below(w, a->nchunks), i;

	for (i = 0; i < a->nchunks; i++) {
		struct pmd_chunk *c = &a->chunks[(start + i) % a->nchunks];

		if (pmd_chunk_state(c) != PMD_CHUNK_ROUND ||
		    !__atomic_load_n(&c->log, __ATOMIC_ACQUIRE))
			continue;
		if (!pmd_chunk_disturb_begin(c))
			continue;
		/* inside the bracket the log is the round's for good: check it again */
		if (__atomic_load_n(&c->log, __ATOMIC_ACQUIRE) &&
		    (!move || pmd_chunk_move_begin(c)))
			return c;
		pmd_chunk_disturb_end(c);
	}
	return NULL;
}

/* Judge [lo, hi) of live @c as the round stands (verify.c), and count the pages. */
static void verify_live(struct pmd_worker *w, struct pmd_chunk *c, unsigned lo, unsigned hi)
{
	unsigned pages = 0;
	char *addr;

	if (!w->si->cfg->verify)
		return;
	addr = pmd_chunk_enter(c);
	if (!addr)
		return;
	pmd_verify_live(w, c, addr, lo, hi, &pages);
	pmd_chunk_exit(c);
	pmd_count(w, M_LIVE_PAGES, pages);
}

/* A hole of @n pages no worker of the round will store to again; false if none. */
static bool done_hole(struct pmd_worker *w, const struct pmd_round_log *log, unsigned n,
		      unsigned *lo)
{
	const struct split_opts *o = w->si->opts;
	unsigned step = o->align == ALIGN_RANGE ? n : 1, slots = (PMD_CHUNK_PAGES - n) / step + 1;
	unsigned start = (unsigned)pmd_rand_below(w, slots), i, p;

	for (i = 0; i < slots; i++) {
		*lo = (start + i) % slots * step;
		for (p = *lo; p < *lo + n && pmd_round_page_done(log, p); p++)
			;
		if (p == *lo + n)
			return true;
	}
	return false;
}

/*
 * A hole in the chunk a round is writing gets a protection of its own: its
 * VMA split, its huge PMD split, while the workers store to the rest of it
 * (and to the hole). PROT_READ where every worker has stored to the hole's
 * pages for the last time (the round's log), so that no store can fault on
 * it, and the data must read right through it; elsewhere, which is nearly
 * always (a page is done only once every worker passed it),
 * PROT_READ|PROT_WRITE|PROT_EXEC: the same splits, under stores a
 * permission they do not need cannot fault. Then read-write again (VMA
 * merge), and what the log says is done must be there. In an RCU section
 * throughout, so nobody moves the chunk meanwhile. 1 if done, 0 if no round
 * was found, -errno if the hole stays read-only (the chunk is then out of
 * the run: a store to it would fault). A read-only hole and a fork that
 * copies the round exclude each other (PMD_CF_RO_HOLE, PMD_CF_FORKING): the
 * fork's child writes every page of its copy, the hole's too.
 */
static int live_mprotect(struct pmd_worker *w)
{
	const struct split_opts *o = w->si->opts;
	struct split_priv *sp = w->si->priv;
	struct pmd_chunk *c = live_chunk(w, false);
	enum pmd_thp_state before;
	size_t len = (size_t)o->pages << PMD_PAGE_SHIFT;
	unsigned lo, hi, pages = 0, tries;
	bool ro;
	char *addr, *hole;
	uint64_t t;
	int rc, prot = PROT_READ;

	if (!c)
		return 0;
	ro = done_hole(w, __atomic_load_n(&c->log, __ATOMIC_ACQUIRE), (unsigned)o->pages, &lo) &&
	     pmd_chunk_flag_unless(c, PMD_CF_RO_HOLE, PMD_CF_FORKING);
	if (!ro) {
		lo = pick_hole(w);
		prot = PROT_READ | PROT_WRITE | PROT_EXEC;
	}
	if ((!ro && __atomic_load_n(&sp->no_exec, __ATOMIC_RELAXED)) ||
	    !(addr = pmd_chunk_enter(c))) {
		if (ro)
			pmd_chunk_flag_clear(c, PMD_CF_RO_HOLE);
		pmd_chunk_disturb_end(c);
		return 0;
	}
	hi = lo + (unsigned)o->pages;
	hole = addr + ((size_t)lo << PMD_PAGE_SHIFT);
	before = pmd_thp_probe(w->si->run, c, NULL);
	t = pmd_now_ns();
	rc = mprotect(hole, len, prot) ? -errno : 0;
	pmd_latency(w, L_PROTECT, pmd_now_ns() - t);
	if (rc == -EACCES && !ro) {
		/* not allowed here (SELinux execmem, ...): the read-only holes go on */
		__atomic_store_n(&sp->no_exec, 1, __ATOMIC_RELAXED);
		pmd_chunk_exit(c);
		pmd_chunk_disturb_end(c);
		return 0;
	}
	pmd_chunk_log(c, t, ro ? PMD_OP_MPROTECT : PMD_OP_MPROTECT_EXEC, w->id,
		      lo | (hi - lo) << 9);
	if (!rc && ro && w->si->cfg->verify) {
		pmd_verify_live(w, c, addr, lo, hi, &pages);
		pmd_count(w, M_LIVE_PAGES, pages);
	}
	if (!rc)
		count_split(w, before, c);
	t = pmd_now_ns();
	/* even after a failure: part of the range may have changed */
	for (tries = 0; mprotect(hole, len, PROT_READ | PROT_WRITE) && tries < 3; tries++)
		pmd_sleep(w, 1000000);
	if (tries == 3) {
		int err = -errno;

		pmd_chunk_exit(c);
		/* a read-only page in a chunk the storm writes: keep everyone out for good */
		pmd_chunk_retire(c);
		pmd_chunk_disturb_end(c); /* RO_HOLE stays: no fork may copy it either */
		pmd_worker_error(w, err, "split: mprotect of live chunk %u pages %u..%u back to "
					 "read-write (chunk left retired)", c->index, lo, hi);
		return err;
	}
	pmd_latency(w, L_UNPROTECT, pmd_now_ns() - t);
	pmd_chunk_log(c, pmd_now_ns(), PMD_OP_MPROTECT_RW, w->id, lo | (hi - lo) << 9);
	pmd_chunk_exit(c);
	if (ro)
		pmd_chunk_flag_clear(c, PMD_CF_RO_HOLE);
	if (rc) {
		pmd_worker_error(w, rc, "split: mprotect of live chunk %u pages %u..%u to %s",
				 c->index, lo, hi, ro ? "read-only" : "read-write-exec");
	} else {
		count_hole(w, M_MPROTECT, lo);
		pmd_count(w, M_LIVE, 1);
		pmd_count(w, M_OPS, 1);
	}
	verify_live(w, c, 0, PMD_CHUNK_PAGES);
	pmd_chunk_disturb_end(c);
	return 1;
}

/*
 * A hole unmapped and mapped fresh in the chunk a round is writing. The
 * chunk is retired for it (workers inside finish first; those that come
 * meanwhile skip the chunk this round), so every store to the hole ran
 * before the unmap, and must be gone, or after the fresh mapping, and must
 * stay: an UNMAP race record from the moment the workers are out to the
 * moment they may come back tells the round's verifier which. 1 if done,
 * 0 if no round was found, -errno if the chunk is left retired.
 */
static int live_munmap(struct pmd_worker *w)
{
	const struct split_opts *o = w->si->opts;
	struct pmd_chunk *c = live_chunk(w, true);
	unsigned lo = pick_hole(w), hi = lo + (unsigned)o->pages;
	size_t len = (size_t)o->pages << PMD_PAGE_SHIFT;
	enum pmd_thp_state before;
	struct pmd_chunk_race *r;
	char *addr, *hole;
	uint64_t t;
	int rc, advice_err = 0;

	if (!c)
		return 0;
	r = pmd_chunk_race_add(c, PMD_RACE_UNMAP, lo, hi);
	if (!r) {
		pmd_chunk_move_end(c);
		pmd_chunk_disturb_end(c);
		return 0;
	}
	before = pmd_thp_probe(w->si->run, c, NULL);
	addr = addr_of(c);
	hole = addr + ((size_t)lo << PMD_PAGE_SHIFT);
	pmd_chunk_retire(c);
	r->t_begin = pmd_now_ns(); /* every store to the hole so far is done */
	t = r->t_begin;
	rc = pmd_arena_placeholder(hole, len);
	pmd_latency(w, L_MUNMAP, pmd_now_ns() - t);
	pmd_chunk_log(c, t, PMD_OP_MUNMAP_SUB, w->id, lo | (hi - lo) << 9);
	if (!rc) {
		t = pmd_now_ns();
		rc = pmd_arena_map_fresh(w->si->arena, hole, len, &advice_err);
		pmd_latency(w, L_MMAP, pmd_now_ns() - t);
	}
	if (rc) {
		r->t_end = pmd_now_ns();
		pmd_chunk_move_end(c);
		pmd_chunk_disturb_end(c);
		pmd_worker_error(w, rc, "split: unmapping and mapping live chunk %u pages %u..%u "
					"(chunk left retired)", c->index, lo, hi);
		return rc;
	}
	r->t_end = pmd_now_ns(); /* every store to the hole from now on must stay */
	pmd_chunk_revive(c, addr);
	pmd_chunk_move_end(c);
	if (advice_err)
		pmd_worker_error(w, advice_err, "split: THP advice or memory policy on live chunk "
						"%u pages %u..%u", c->index, lo, hi);
	count_split(w, before, c);
	count_hole(w, M_MUNMAP, lo);
	pmd_count(w, M_LIVE, 1);
	pmd_count(w, M_OPS, 1);
	/* the hole is the round's verifier's to judge; the rest must hold what is done */
	verify_live(w, c, 0, PMD_CHUNK_PAGES);
	pmd_chunk_disturb_end(c);
	return 1;
}

/* ---- mremap: away to a spare slot and home again ------------------------------ */

/*
 * Move the 2 MiB at @from to @to (which holds a placeholder). With
 * MREMAP_DONTUNMAP @from stays mapped (empty) until the caller's
 * placeholder replaces it, so it is never a hole; older kernels, or a
 * mapping it refuses, get a plain move and a hole for a moment.
 */
static int move_chunk(struct pmd_arena *a, struct split_priv *sp, char *from, char *to)
{
	int flags = MREMAP_MAYMOVE | MREMAP_FIXED;

	if (!__atomic_load_n(&sp->no_dontunmap, __ATOMIC_RELAXED)) {
		if (mremap(from, PMD_CHUNK_SIZE, PMD_CHUNK_SIZE, flags | MREMAP_DONTUNMAP, to) !=
		    MAP_FAILED)
			return 0;
		if (errno != EINVAL)
			return -errno;
		__atomic_store_n(&sp->no_dontunmap, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&a->holes, 1, __ATOMIC_RELEASE); /* the plain move leaves one */
	}
	return mremap(from, PMD_CHUNK_SIZE, PMD_CHUNK_SIZE, flags, to) == MAP_FAILED ? -errno : 0;
}

/* Refill the range a chunk left, so nothing else can map where it comes back. */
static void fill_left(struct pmd_worker *w, struct pmd_chunk *c, char *from)
{
	int rc = pmd_arena_placeholder(from, PMD_CHUNK_SIZE);

	if (rc)
		pmd_worker_error(w, rc, "split: placeholder where chunk %u was (%p)", c->index,
				 (void *)from);
}

static unsigned slot_index(const struct pmd_arena *a, const char *slot)
{
	return (unsigned)((size_t)(slot - a->spare) / PMD_CHUNK_SIZE);
}

/* Is any of [addr, addr + len) mapped accessible? (after a failed move: did part of it move?) */
static bool range_accessible(const char *addr, size_t len)
{
	uintptr_t lo = (uintptr_t)addr, hi = lo + len;
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512], perms[8];
	bool any = false;

	if (!f)
		return true; /* cannot tell: assume the worst */
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;

		if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) == 3 && start < hi &&
		    end > lo && perms[0] != '-')
			any = true;
	}
	fclose(f);
	return any;
}

/*
 * A failed move of held, retired @c. If nothing reached @to the chunk is
 * intact at @from: revived there, and 0 (EFAULT, a range split into VMAs a
 * kernel before 6.17 cannot move together, only counts as busy). Else it
 * is torn between two places: it stays retired and held for good.
 */
static int failed_move(struct pmd_worker *w, struct pmd_chunk *c, char *from, char *to, int rc)
{
	if (range_accessible(to, PMD_CHUNK_SIZE) || !range_accessible(from, PMD_CHUNK_SIZE)) {
		pmd_worker_error(w, rc, "split: mremap of chunk %u from %p to %p failed half-way "
					"(chunk left retired)", c->index, (void *)from, (void *)to);
		return rc;
	}
	pmd_chunk_revive(c, from);
	if (rc == -EFAULT)
		pmd_count(w, M_BUSY, 1);
	else
		pmd_worker_error(w, rc, "split: mremap of chunk %u from %p to %p", c->index,
				 (void *)from, (void *)to);
	return 0;
}

static int move_away(struct pmd_worker *w)
{
	struct pmd_arena *a = w->si->arena;
	struct split_priv *sp = w->si->priv;
	enum pmd_thp_state before = PMD_THPS_UNKNOWN;
	struct pmd_chunk *c;
	char *slot, *home;
	uint64_t t;
	int rc;

	slot = pmd_arena_spare_get(a);
	if (!slot) {
		pmd_count(w, M_BUSY, 1);
		return 0;
	}
	c = hold_chunk(w, true, &before);
	if (!c) {
		pmd_arena_spare_put(a, slot);
		return 0;
	}
	home = home_of(a, c);
	pmd_chunk_retire(c);
	t = pmd_now_ns();
	rc = move_chunk(a, sp, home, slot);
	if (rc) {
		rc = failed_move(w, c, home, slot, rc);
		if (rc)
			return rc;
		pmd_arena_spare_put(a, slot);
		pmd_chunk_release(c, PMD_CHUNK_IDLE);
		return 0;
	}
	pmd_latency(w, L_MREMAP, pmd_now_ns() - t);
	fill_left(w, c, home);
	/* the chunk table follows the move: the storm uses it where it is now */
	pmd_chunk_revive(c, slot);
	pmd_chunk_log(c, t, PMD_OP_MREMAP, w->id, slot_index(a, slot) + 1);
	if (before == PMD_THPS_THP && pmd_thp_probe(w->si->run, c, NULL) == PMD_THPS_THP)
		pmd_count(w, M_THP_MOVED, 1);
	__atomic_store_n(&sp->since[slot_index(a, slot)], pmd_now_ns(), __ATOMIC_RELAXED);
	__atomic_store_n(&sp->away[slot_index(a, slot)], c->index + 1, __ATOMIC_RELEASE);
	pmd_count(w, M_MREMAP, 1);
	pmd_count(w, M_OPS, 1);
	/* the data followed the move */
	verify_held(w, c, 0, PMD_CHUNK_PAGES);
	pmd_chunk_release(c, PMD_CHUNK_IDLE);
	return 0;
}

/*
 * Move chunk @c, held by the caller and at spare slot @i, home, and hand
 * it back. Returns 0, or -errno if it was torn by a failed move (then it
 * stays held and retired).
 */
static int move_home(struct pmd_worker *w, struct pmd_chunk *c, unsigned i)
{
	struct pmd_arena *a = w->si->arena;
	struct split_priv *sp = w->si->priv;
	char *slot = a->spare + (size_t)i * PMD_CHUNK_SIZE, *home = home_of(a, c);
	uint64_t t;
	int rc;

	pmd_chunk_retire(c);
	t = pmd_now_ns();
	rc = move_chunk(a, sp, slot, home);
	if (rc) {
		rc = failed_move(w, c, slot, home, rc);
		if (!rc)
			pmd_chunk_release(c, PMD_CHUNK_IDLE);
		return rc;
	}
	pmd_latency(w, L_BACK, pmd_now_ns() - t);
	fill_left(w, c, slot);
	pmd_chunk_revive(c, home);
	pmd_chunk_log(c, t, PMD_OP_MREMAP_BACK, w->id, i + 1);
	__atomic_store_n(&sp->away[i], 0, __ATOMIC_RELAXED);
	pmd_arena_spare_put(a, slot);
	pmd_count(w, M_BACK, 1);
	pmd_count(w, M_OPS, 1);
	verify_held(w, c, 0, PMD_CHUNK_PAGES);
	pmd_chunk_release(c, PMD_CHUNK_IDLE);
	return 0;
}

/*
 * Claim the chunk at spare slot @i, if it is still there, and bring it
 * home. @polite: leave it alone if the storm is about to claim it.
 */
static bool home_slot(struct pmd_worker *w, unsigned i, bool polite, int *rc)
{
	struct pmd_arena *a = w->si->arena;
	struct split_priv *sp = w->si->priv;
	uint32_t ch = __atomic_load_n(&sp->away[i], __ATOMIC_ACQUIRE);
	struct pmd_chunk *c;

	if (!ch)
		return false;
	c = &a->chunks[ch - 1];
	if ((polite && !pmd_chunk_usable(c)) || !pmd_chunk_claim(c, PMD_CHUNK_IDLE, PMD_CHUNK_HELD))
		return false;
	/* under ownership: still there? (another worker may have moved it home) */
	if (addr_of(c) != a->spare + (size_t)i * PMD_CHUNK_SIZE) {
		pmd_chunk_release(c, PMD_CHUNK_IDLE);
		return false;
	}
	*rc = move_home(w, c, i);
	return true;
}

/*
 * Move the chunk a round is writing, huge PMD and all, to a spare slot, or
 * home if it is away: retired for the move (workers that come meanwhile
 * skip it this round), then the round goes on at its new place; the round's
 * verifier finds it there. Nothing may change: everything the log says is
 * done must have moved with it. 1 if done, 0 if nothing to move, -errno if
 * a failed move left the chunk torn (retired for good).
 */
static int live_mremap(struct pmd_worker *w)
{
	const struct split_opts *o = w->si->opts;
	struct pmd_arena *a = w->si->arena;
	struct split_priv *sp = w->si->priv;
	struct pmd_chunk *c = live_chunk(w, true);
	enum pmd_thp_state before;
	char *from, *to, *slot = NULL;
	bool home;
	uint64_t t;
	int rc;

	if (!c)
		return 0;
	from = addr_of(c);
	home = from != home_of(a, c);
	/* a chunk away stays there --split-away long, live or not: nothing to move yet */
	if (home &&
	    pmd_now_ns() - __atomic_load_n(&sp->since[slot_index(a, from)], __ATOMIC_RELAXED) <
		o->away_ns) {
		pmd_chunk_move_end(c);
		pmd_chunk_disturb_end(c);
		return 0;
	}
	if (!home && !(slot = pmd_arena_spare_get(a))) {
		pmd_count(w, M_BUSY, 1);
		pmd_chunk_move_end(c);
		pmd_chunk_disturb_end(c);
		return 0;
	}
	to = home ? home_of(a, c) : slot;
	before = pmd_thp_probe(w->si->run, c, NULL);
	pmd_chunk_retire(c);
	t = pmd_now_ns();
	rc = move_chunk(a, sp, from, to);
	if (rc) {
		rc = failed_move(w, c, from, to, rc);
		if (!rc && slot)
			pmd_arena_spare_put(a, slot);
		pmd_chunk_move_end(c);
		pmd_chunk_disturb_end(c);
		return rc ? rc : 0;
	}
	pmd_latency(w, home ? L_BACK : L_MREMAP, pmd_now_ns() - t);
	fill_left(w, c, from);
	pmd_chunk_revive(c, to);
	if (home) {
		unsigned i = slot_index(a, from);

		pmd_chunk_log(c, t, PMD_OP_MREMAP_BACK, w->id, i + 1);
		__atomic_store_n(&sp->away[i], 0, __ATOMIC_RELAXED);
		pmd_arena_spare_put(a, from);
		pmd_count(w, M_BACK, 1);
	} else {
		unsigned i = slot_index(a, slot);

		pmd_chunk_log(c, t, PMD_OP_MREMAP, w->id, i + 1);
		if (before == PMD_THPS_THP && pmd_thp_probe(w->si->run, c, NULL) == PMD_THPS_THP)
			pmd_count(w, M_THP_MOVED, 1);
		__atomic_store_n(&sp->since[i], pmd_now_ns(), __ATOMIC_RELAXED);
		__atomic_store_n(&sp->away[i], c->index + 1, __ATOMIC_RELEASE);
		pmd_count(w, M_MREMAP, 1);
	}
	pmd_chunk_move_end(c);
	pmd_count(w, M_LIVE, 1);
	pmd_count(w, M_OPS, 1);
	/* the data followed the move */
	verify_live(w, c, 0, PMD_CHUNK_PAGES);
	pmd_chunk_disturb_end(c);
	return 1;
}

static int op_mremap(struct pmd_worker *w)
{
	const struct split_opts *o = w->si->opts;
	const struct split_priv *sp = w->si->priv;
	struct pmd_arena *a = w->si->arena;
	uint64_t now = pmd_now_ns();
	unsigned i;
	int rc = 0;

	for (i = 0; i < a->nspare && i < 64; i++)
		if (__atomic_load_n(&sp->away[i], __ATOMIC_RELAXED) &&
		    now - __atomic_load_n(&sp->since[i], __ATOMIC_RELAXED) >= o->away_ns &&
		    home_slot(w, i, true, &rc))
			return rc;
	return move_away(w);
}

/* ---- the loop ---------------------------------------------------------------- */

static unsigned pick_kind(struct pmd_worker *w)
{
	const struct split_opts *o = w->si->opts;
	const struct split_priv *sp = w->si->priv;

	return pmd_pick_weighted(w, o->weight, K_COUNT, sp->total_weight);
}

static int split_run(struct pmd_worker *w)
{
	const struct split_opts *o = w->si->opts;
	uint64_t next = pmd_now_ns();
	int rc = 0;

	do {
		unsigned k = pick_kind(w);

		/* a live op first, if asked: 1 done, 0 none found (then on an idle chunk) */
		rc = 0;
		if (pmd_rand_below(w, 100) < o->race)
			rc = k == K_MPROTECT ? live_mprotect(w) :
			     k == K_MUNMAP   ? live_munmap(w) :
					       live_mremap(w);
		if (!rc)
			rc = k == K_MPROTECT ? op_mprotect(w) :
			     k == K_MUNMAP   ? op_munmap(w) :
					       op_mremap(w);
		else if (rc > 0)
			rc = 0;
		pmd_beat(w);
	} while (!rc && pmd_pace(w, &next, o->rate));
	/* an error was reported where it happened; stop this worker, not the run */
	return 0;
}

static int split_setup(struct pmd_sinst *si)
{
	const struct split_opts *o = si->opts;
	struct split_priv *sp = calloc(1, sizeof(*sp));
	unsigned n = si->arena->nspare ? si->arena->nspare : 1;

	if (!o->weight[K_MPROTECT] && !o->weight[K_MUNMAP] && !o->weight[K_MREMAP]) {
		free(sp);
		snprintf(si->why, sizeof(si->why), "every op weight is 0 (set --split-mprotect, "
						   "--split-munmap or --split-mremap above 0)");
		return -EINVAL;
	}
	if (!sp)
		return -ENOMEM;
	sp->away = calloc(n, sizeof(*sp->away));
	sp->since = calloc(n, sizeof(*sp->since));
	si->priv = sp;
	if (!sp->away || !sp->since)
		return -ENOMEM;
	sp->total_weight = o->weight[K_MPROTECT] + o->weight[K_MUNMAP] + o->weight[K_MREMAP];
	return 0;
}

/*
 * After every worker returned: bring the chunks still away home, so the run
 * ends with the arena as it began. Single-threaded; the storm's own final
 * check has just verified them where they were.
 */
static int split_verify(struct pmd_sinst *si)
{
	struct pmd_arena *a = si->arena;
	unsigned i;
	int rc;

	if (!si->priv || !si->nworkers)
		return 0;
	for (i = 0; i < a->nspare && i < 64; i++)
		home_slot(&si->workers[0], i, false, &rc);
	return 0;
}

static void split_teardown(struct pmd_sinst *si)
{
	struct split_priv *sp = si->priv;

	if (!sp)
		return;
	free(sp->away);
	free(sp->since);
	free(sp);
	si->priv = NULL;
}

const struct pmd_stressor pmd_stressor_split = {
	.abi = PMD_STRESSOR_ABI,
	.name = "split",
	.summary = "PMD splits (mprotect and munmap holes) and huge PMD moves (mremap) of THPs",
	.options = split_options,
	.opts_size = sizeof(struct split_opts),
	.metrics = split_metrics,
	.workers = "1",
	.flags = PMD_SF_SPARE_SLOTS,
	.setup = split_setup,
	.run = split_run,
	.verify = split_verify,
	.teardown = split_teardown,
};
