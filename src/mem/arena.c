// SPDX-License-Identifier: GPL-2.0
/*
 * The arena and its chunk table: the mapping, THP advice, zapping a chunk
 * back to pmd_none, the RCU retire/revive rule and the op rings.
 */
#include <pmdstress/arena.h>

#include "numa.h"
#include "run.h"

#include <pmdstress/pool.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <pmdstress/numasys.h>
#include <urcu.h>

static const char *const op_names[PMD_OP_COUNT] = {
	[PMD_OP_NONE] = "none",
	[PMD_OP_ROUND] = "round",
	[PMD_OP_VERIFY] = "verify",
	[PMD_OP_ZAP_DONTNEED] = "zap-dontneed",
	[PMD_OP_ZAP_REMAP] = "zap-remap",
	[PMD_OP_MADV_HUGE] = "madv-hugepage",
	[PMD_OP_MADV_NOHUGE] = "madv-nohugepage",
	[PMD_OP_DONTNEED_SUB] = "dontneed-sub",
	[PMD_OP_FREE] = "madv-free",
	[PMD_OP_PAGEOUT] = "madv-pageout",
	[PMD_OP_COLD] = "madv-cold",
	[PMD_OP_MPROTECT] = "mprotect",
	[PMD_OP_MUNMAP_SUB] = "munmap-sub",
	[PMD_OP_MREMAP] = "mremap",
	[PMD_OP_COLLAPSE] = "collapse",
	[PMD_OP_MIGRATE] = "migrate",
	[PMD_OP_FORK] = "fork",
	[PMD_OP_RACE_DONTNEED] = "race-dontneed",
	[PMD_OP_RACE_FREE] = "race-free",
	[PMD_OP_MPROTECT_RW] = "mprotect-rw",
	[PMD_OP_MREMAP_BACK] = "mremap-back",
	[PMD_OP_INJECT] = "inject",
	[PMD_OP_PAGEMAP_READ] = "pagemap-read",
	[PMD_OP_POPULATE] = "populate",
	[PMD_OP_COW_WRITE] = "cow-write",
	[PMD_OP_MIGRATE_PAGES] = "migrate-pages",
	[PMD_OP_MBIND_MOVE] = "mbind-move",
	[PMD_OP_MPROTECT_EXEC] = "mprotect-exec",
	[PMD_OP_MADV_POPULATE] = "madv-populate",
	[PMD_OP_PIN_SPLICE] = "pin-splice",
	[PMD_OP_PIN_WRITE] = "pin-write",
	[PMD_OP_PIN_READ] = "pin-readv",
	[PMD_OP_PIN_DIRECT] = "pin-direct",
};

const char *pmd_op_name(unsigned op)
{
	return op < PMD_OP_COUNT && op_names[op] ? op_names[op] : "?";
}

void pmd_mask_clear_all(uint64_t *mask)
{
	unsigned i;

	for (i = 0; i < PMD_MASK_WORDS; i++)
		__atomic_store_n(&mask[i], 0, __ATOMIC_RELAXED);
}

/* ---- ownership ----------------------------------------------------------- */

bool pmd_chunk_claim(struct pmd_chunk *c, enum pmd_chunk_state from, enum pmd_chunk_state to)
{
	uint32_t old = __atomic_load_n(&c->state, __ATOMIC_RELAXED);

	for (;;) {
		uint32_t want;

		if ((old & PMD_CHUNK_STATE_MASK) != from)
			return false;
		want = (old & ~PMD_CHUNK_STATE_MASK) | to;
		/* acquire: see the expectations the previous owner released */
		if (__atomic_compare_exchange_n(&c->state, &old, want, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return true;
	}
}

struct pmd_chunk *pmd_arena_hold_settled(struct pmd_arena *a, unsigned start, unsigned scan)
{
	unsigned i;

	if (scan > a->nchunks)
		scan = a->nchunks;
	for (i = 0; i < scan; i++) {
		struct pmd_chunk *c = &a->chunks[(start + i) % a->nchunks];

		if (!pmd_chunk_usable(c) || !pmd_chunk_claim(c, PMD_CHUNK_IDLE, PMD_CHUNK_HELD))
			continue;
		/* never written (still pmd_none: the storm relies on it) or moved away */
		if (c->nslots && !pmd_chunk_retired(c))
			return c;
		pmd_chunk_release(c, PMD_CHUNK_IDLE);
	}
	return NULL;
}

void pmd_chunk_release(struct pmd_chunk *c, enum pmd_chunk_state to)
{
	uint32_t old = __atomic_load_n(&c->state, __ATOMIC_RELAXED);

	__atomic_and_fetch(&c->flags, ~(uint32_t)PMD_CF_CLOSING, __ATOMIC_RELAXED);
	/* release: the next owner sees gen, nslots and the masks we wrote */
	while (!__atomic_compare_exchange_n(&c->state, &old, (old & ~PMD_CHUNK_STATE_MASK) | to,
					    false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

/* ---- the RCU rule ------------------------------------------------------- */

char *pmd_chunk_enter(struct pmd_chunk *c)
{
	rcu_read_lock();
	/*
	 * Pairs with retire's store + synchronize_rcu(): a reader that sees the
	 * chunk not retired is inside a section the retirer will wait for.
	 */
	if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) & PMD_CHUNK_RETIRED) {
		rcu_read_unlock();
		return NULL;
	}
	/* an acquire load: rcu_dereference()'s ordering, and visible to TSan */
	return (char *)__atomic_load_n(&c->addr, __ATOMIC_ACQUIRE);
}

void pmd_chunk_exit(struct pmd_chunk *c)
{
	(void)c;
	rcu_read_unlock();
}

char *pmd_chunk_held_addr(const struct pmd_chunk *c)
{
	return pmd_chunk_retired(c) ? NULL : (char *)__atomic_load_n(&c->addr, __ATOMIC_ACQUIRE);
}

void pmd_chunk_retire(struct pmd_chunk *c)
{
	__atomic_fetch_or(&c->state, PMD_CHUNK_RETIRED, __ATOMIC_SEQ_CST);
	pmd_peers_wait(); /* readers in the chunk: their stall if any, not ours */
	synchronize_rcu();
	pmd_peers_came();
}

void pmd_chunk_revive(struct pmd_chunk *c, char *addr)
{
	/* a release store: rcu_assign_pointer()'s ordering, and visible to TSan */
	__atomic_store_n(&c->addr, (uintptr_t)addr, __ATOMIC_RELEASE);
	__atomic_fetch_and(&c->state, ~PMD_CHUNK_RETIRED, __ATOMIC_RELEASE);
}

bool pmd_chunk_retired(const struct pmd_chunk *c)
{
	return __atomic_load_n(&c->state, __ATOMIC_ACQUIRE) & PMD_CHUNK_RETIRED;
}

bool pmd_chunk_disturb_begin(struct pmd_chunk *c)
{
	/*
	 * Dekker with the owner's close_round(): we announce ourselves, then
	 * look at the state; it raises CLOSING, then looks at disturbers. With
	 * seq_cst on both sides at least one of us sees the other.
	 */
	__atomic_add_fetch(&c->disturbers, 1, __ATOMIC_SEQ_CST);
	if ((__atomic_load_n(&c->state, __ATOMIC_SEQ_CST) & PMD_CHUNK_STATE_MASK) !=
		    PMD_CHUNK_ROUND ||
	    (__atomic_load_n(&c->flags, __ATOMIC_SEQ_CST) & PMD_CF_CLOSING)) {
		__atomic_sub_fetch(&c->disturbers, 1, __ATOMIC_RELEASE);
		return false;
	}
	return true;
}

void pmd_chunk_disturb_end(struct pmd_chunk *c)
{
	/* release: our operation and its record happened before the owner's verify reads */
	__atomic_sub_fetch(&c->disturbers, 1, __ATOMIC_RELEASE);
}

struct pmd_chunk *pmd_arena_enter_live(struct pmd_arena *a, unsigned start, char **addr)
{
	unsigned i;

	for (i = 0; i < a->nchunks; i++) {
		struct pmd_chunk *c = &a->chunks[(start + i) % a->nchunks];

		if (pmd_chunk_state(c) != PMD_CHUNK_ROUND || !(*addr = pmd_chunk_enter(c)))
			continue;
		if (pmd_chunk_disturb_begin(c))
			return c;
		pmd_chunk_exit(c);
	}
	return NULL;
}

struct pmd_chunk_race *pmd_chunk_race_add(struct pmd_chunk *c, enum pmd_chunk_race_kind kind,
					  unsigned lo, unsigned hi)
{
	struct pmd_chunk_race *r;
	uint32_t i;
	unsigned p;

	if (lo >= hi || hi > PMD_CHUNK_PAGES)
		return NULL;
	/* each disturber its own record; the owner reads them once all have ended */
	i = __atomic_fetch_add(&c->nraces, 1, __ATOMIC_RELAXED);
	if (i >= PMD_RACES)
		return NULL;
	r = &c->race[i];
	r->kind = kind;
	r->lo = (uint16_t)lo;
	r->hi = (uint16_t)hi;
	r->t_end = 0;
	for (p = lo; p < hi; p++)
		pmd_mask_set(c->race_pages, p);
	/* the marks before the zap: a live look that reads its zeros sees them (verify.c) */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* last, right before the caller's syscall: every store after t_end ran after it */
	r->t_begin = pmd_now_ns();
	return r;
}

struct pmd_chunk_race *pmd_chunk_race_begin(struct pmd_chunk *c, enum pmd_chunk_race_kind kind,
					    unsigned lo, unsigned hi)
{
	struct pmd_chunk_race *r;

	if (!pmd_chunk_disturb_begin(c))
		return NULL;
	r = pmd_chunk_race_add(c, kind, lo, hi);
	if (!r)
		pmd_chunk_disturb_end(c);
	return r;
}

bool pmd_chunk_move_begin(struct pmd_chunk *c)
{
	return !(__atomic_fetch_or(&c->flags, PMD_CF_MOVING, __ATOMIC_ACQUIRE) & PMD_CF_MOVING);
}

void pmd_chunk_move_end(struct pmd_chunk *c)
{
	__atomic_and_fetch(&c->flags, ~(uint32_t)PMD_CF_MOVING, __ATOMIC_RELEASE);
}

void pmd_chunk_race_end(struct pmd_chunk *c, struct pmd_chunk_race *r)
{
	pmd_chunk_race_end_at(c, r, pmd_now_ns());
}

void pmd_chunk_race_end_at(struct pmd_chunk *c, struct pmd_chunk_race *r, uint64_t t_end)
{
	r->t_end = t_end;
	pmd_chunk_disturb_end(c);
}

void pmd_chunk_races_clear(struct pmd_chunk *c)
{
	__atomic_store_n(&c->nraces, 0, __ATOMIC_RELAXED);
	pmd_mask_clear_all(c->race_pages);
	__atomic_store_n(&c->log, NULL, __ATOMIC_RELEASE);
}

void pmd_chunk_close_round(struct pmd_chunk *c)
{
	__atomic_or_fetch(&c->flags, PMD_CF_CLOSING, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&c->disturbers, __ATOMIC_ACQUIRE))
		sched_yield(); /* a disturber is inside one madvise call */
}

void pmd_chunk_open_round(struct pmd_chunk *c)
{
	__atomic_and_fetch(&c->flags, ~(uint32_t)PMD_CF_CLOSING, __ATOMIC_SEQ_CST);
}

char *pmd_arena_spare_get(struct pmd_arena *a)
{
	unsigned i;

	for (i = 0; i < a->nspare && i < 64; i++) {
		uint64_t bit = 1ull << i;

		if (!(__atomic_fetch_or(&a->spare_used, bit, __ATOMIC_ACQ_REL) & bit))
			return a->spare + (size_t)i * PMD_CHUNK_SIZE;
	}
	return NULL;
}

void pmd_arena_spare_put(struct pmd_arena *a, char *slot)
{
	unsigned i = (unsigned)((size_t)(slot - a->spare) / PMD_CHUNK_SIZE);

	__atomic_fetch_and(&a->spare_used, ~(1ull << i), __ATOMIC_RELEASE);
}

int pmd_arena_placeholder(char *addr, size_t len)
{
	if (mmap(addr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
		 0) == MAP_FAILED)
		return -errno;
	return 0;
}

void pmd_chunk_log(struct pmd_chunk *c, uint64_t t_ns, enum pmd_op op, unsigned worker,
		   uint32_t arg)
{
	uint32_t i = __atomic_fetch_add(&c->ring_head, 1, __ATOMIC_RELAXED) % PMD_RING_LEN;
	uint64_t word = (uint64_t)(op & 0xff) | ((uint64_t)(worker & 0xffff) << 8) |
			((uint64_t)(__atomic_load_n(&c->gen, __ATOMIC_RELAXED) & 0xfff) << 24) |
			((uint64_t)(arg & 0xfffffff) << 36);

	/* forensics only: a reader racing a writer may see a torn entry */
	__atomic_store_n(&c->ring[i].t_ns, t_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&c->ring[i].word, word, __ATOMIC_RELAXED);
}

/* ---- mapping ---------------------------------------------------------- */

static int map_flags(bool shared)
{
	return (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS | MAP_NORESERVE;
}

int pmd_arena_map_flags(const struct pmd_arena *a)
{
	return map_flags(a->shared);
}

int pmd_arena_madvise_thp(const struct pmd_arena *a, void *addr, size_t len, int huge)
{
	int advice;

	if (huge < 0) {
		if (a->thp == PMD_THP_INHERIT)
			return 0;
		huge = a->thp != PMD_THP_NOHUGE;
	}
	advice = huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE;
	return madvise(addr, len, advice) ? -errno : 0;
}

int pmd_arena_fresh_range(const struct pmd_arena *a, void *addr, size_t len)
{
	int err = pmd_arena_madvise_thp(a, addr, len, -1);

	/* a fresh mapping has the default policy already: no mbind needed for it */
	if (a->mpol.mode != MPOL_DEFAULT) {
		int e = pmd_arena_policy(a, addr, len);

		if (!err)
			err = e;
	}
	return err;
}

int pmd_arena_map_fresh(const struct pmd_arena *a, void *addr, size_t len, int *advice_err)
{
	void *tmp;
	int err;

	*advice_err = 0;
	if (a->mpol.mode == MPOL_DEFAULT) {
		if (mmap(addr, len, PROT_READ | PROT_WRITE, map_flags(a->shared) | MAP_FIXED, -1,
			 0) == MAP_FAILED)
			return -errno;
		*advice_err = pmd_arena_fresh_range(a, addr, len);
		return 0;
	}
	/*
	 * With a memory policy, a MAP_FIXED mapping would carry the default
	 * policy until the mbind after it: a racing fault would place its
	 * page by the wrong policy, and numa_maps would show the arena cut
	 * into default and policy VMAs. So the fresh range gets its advice
	 * and policy elsewhere, then replaces the old one in one mremap
	 * (which unmaps the target and moves the VMA, policy and all, under
	 * one mmap_lock hold).
	 */
	tmp = mmap(NULL, len, PROT_READ | PROT_WRITE, map_flags(a->shared), -1, 0);
	if (tmp == MAP_FAILED)
		return -errno;
	*advice_err = pmd_arena_fresh_range(a, tmp, len);
	if (mremap(tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, addr) == MAP_FAILED) {
		err = -errno;
		munmap(tmp, len);
		return err;
	}
	return 0;
}

int pmd_arena_create(struct pmd_arena *a, const struct pmd_config *cfg, unsigned nspare)
{
	size_t total, reserve;
	char *raw, *base;
	unsigned i;
	int err;

	memset(a, 0, sizeof(*a));
	a->size = cfg->size;
	a->nchunks = (unsigned)(cfg->size / PMD_CHUNK_SIZE);
	a->nspare = nspare;
	a->shared = cfg->shared;
	a->thp = cfg->thp;
	a->tag_key = pmd_stamp_mix(cfg->seed_used ^ 0x706d647374726573ull);
	/* checked at config time (pmd_numa_check_config), so this cannot fail here */
	if (cfg->mem_policy[0] && pmd_mempolicy_parse(cfg->mem_policy, pmd_numa_mem_nodes(),
						      pmd_numa_mems_allowed(), &a->mpol, NULL, 0))
		return -EINVAL;
	total = a->size + (size_t)nspare * PMD_CHUNK_SIZE;
	/* reserve one extra chunk so the arena can start on a 2 MiB boundary */
	reserve = total + PMD_CHUNK_SIZE;
	raw = mmap(NULL, reserve, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED)
		return -errno;
	base = (char *)(((uintptr_t)raw + PMD_CHUNK_SIZE - 1) & ~(PMD_CHUNK_SIZE - 1));
	if (base > raw)
		munmap(raw, (size_t)(base - raw));
	munmap(base + total, (size_t)(raw + reserve - (base + total)));
	/* the chunks, then the spare slots mremap moves chunks into (PROT_NONE) */
	if (mmap(base, a->size, PROT_READ | PROT_WRITE, map_flags(a->shared) | MAP_FIXED, -1, 0) ==
	    MAP_FAILED) {
		err = -errno;
		munmap(base, total);
		return err;
	}
	a->base = base;
	a->spare = base + a->size;
	/* THP advice and the memory policy before the first touch */
	err = pmd_arena_fresh_range(a, base, a->size);
	if (err) {
		munmap(base, total);
		return err;
	}
	/*
	 * From the pool (zero-filled, page-aligned), which no fork child gets:
	 * on the heap its pages were copied by every fork of the fork and exec
	 * stressors (512 bytes a chunk). A checking child reads the copies its
	 * parent made of what it froze, never the chunks (stress/fork.c).
	 */
	a->chunks = pmd_pool_alloc(sizeof(*a->chunks) * a->nchunks);
	if (!a->chunks) {
		munmap(base, total);
		return -ENOMEM;
	}
	for (i = 0; i < a->nchunks; i++) {
		a->chunks[i].index = i;
		a->chunks[i].gen = 1;
		a->chunks[i].addr = (uintptr_t)(base + (size_t)i * PMD_CHUNK_SIZE);
	}
	return 0;
}

void pmd_arena_unmap(struct pmd_arena *a)
{
	if (a->base && !a->unmapped)
		munmap(a->base, a->size + (size_t)a->nspare * PMD_CHUNK_SIZE);
	a->unmapped = true;
}

void pmd_arena_destroy(struct pmd_arena *a)
{
	pmd_arena_unmap(a);
	pmd_pool_free(a->chunks, sizeof(*a->chunks) * a->nchunks);
	memset(a, 0, sizeof(*a));
}

int pmd_arena_zap(struct pmd_arena *a, struct pmd_chunk *c, bool remap, unsigned worker,
		  int *advice_err)
{
	char *addr = (char *)__atomic_load_n(&c->addr, __ATOMIC_ACQUIRE);
	uint64_t t = pmd_now_ns();
	int err = 0;

	*advice_err = 0;
	/*
	 * MADV_DONTNEED leaves a PMD-mapped huge page's PMD none, but keeps the
	 * page table of a PTE-mapped range, and on MAP_SHARED it drops only the
	 * mapping, not the shmem pages. Those need the range replaced.
	 */
	if (!remap && !a->shared) {
		if (madvise(addr, PMD_CHUNK_SIZE, MADV_DONTNEED))
			err = -errno;
		pmd_chunk_log(c, t, PMD_OP_ZAP_DONTNEED, worker, 0);
	} else {
		pmd_chunk_retire(c);
		err = pmd_arena_map_fresh(a, addr, PMD_CHUNK_SIZE, advice_err);
		if (!err)
			pmd_chunk_revive(c, addr);
		pmd_chunk_log(c, t, PMD_OP_ZAP_REMAP, worker, 0);
	}
	if (err) {
		/*
		 * Not reset, or only partly: a failed MAP_FIXED may have left a
		 * hole, a failed madvise some pages zeroed. Whatever it holds is
		 * neither the old contents nor fresh memory, so no expectation
		 * fits: nobody may look at it again (a verifier would report the
		 * syscall's failure as the kernel's corruption).
		 */
		if (!pmd_chunk_retired(c))
			pmd_chunk_retire(c);
		return err;
	}
	__atomic_store_n(&c->gen, pmd_gen_next(c->gen), __ATOMIC_RELAXED);
	c->nslots = 0;
	c->domain = PMD_STAMP_DOMAIN_RUN;
	pmd_mask_clear_all(c->skipped);
	pmd_mask_clear_all(c->zero_pages);
	pmd_mask_clear_all(c->maybe_pages);
	pmd_mask_clear_all(c->reported_pages);
	pmd_chunk_races_clear(c);
	__atomic_and_fetch(&c->flags, ~(uint32_t)PMD_CF_REPORTED, __ATOMIC_RELAXED);
	return 0;
}
