/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The arena: one anonymous mapping, 2 MiB-aligned, cut into chunks of one PMD
 * span each. Stressors reach arena memory only through this header: relaxed
 * atomic loads and stores (so ThreadSanitizer sees every access and the
 * compiler can neither merge nor drop a touch), and the chunk enter/exit and
 * retire/revive rule that makes unmapping safe:
 *
 *   - every access to a chunk's memory happens between pmd_chunk_enter() and
 *     pmd_chunk_exit(), an RCU read-side section that also checks the chunk
 *     is not retired;
 *   - whoever unmaps or moves a chunk's range first calls pmd_chunk_retire(),
 *     which marks it retired and waits for a grace period, so nobody is still
 *     inside; pmd_chunk_revive() opens it again, at its possibly new address.
 *
 * So a SIGSEGV on a live chunk is always the kernel's fault, never ours.
 *
 * Ownership is a separate, cooperative layer: a chunk's state says who may
 * change what its pages are expected to hold (IDLE: nobody; ROUND: the fault
 * storm's group running a round; HELD: one partner stressor). Partners that
 * only issue syscalls on a range (madvise flips, migration, /proc walks) need
 * no ownership; those that change the expected contents claim the chunk.
 */
#ifndef PMDSTRESS_ARENA_H
#define PMDSTRESS_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PMD_PAGE_SHIFT 12
#define PMD_PAGE_SIZE (1ul << PMD_PAGE_SHIFT)
#define PMD_CHUNK_SHIFT 21
#define PMD_CHUNK_SIZE (1ul << PMD_CHUNK_SHIFT)
#define PMD_CHUNK_PAGES (PMD_CHUNK_SIZE / PMD_PAGE_SIZE) /* 512 */
#define PMD_PAGE_SLOTS (PMD_PAGE_SIZE / sizeof(uint64_t)) /* 512 */
#define PMD_MASK_WORDS (PMD_CHUNK_PAGES / 64)		  /* 8: one bit per page or slot */
#define PMD_RING_LEN 16

enum pmd_chunk_state {
	PMD_CHUNK_IDLE = 0, /* contents settled; expectations in the chunk */
	PMD_CHUNK_ROUND,    /* a fault round owns it */
	PMD_CHUNK_HELD,	    /* one partner stressor owns it */
};
#define PMD_CHUNK_STATE_MASK 0xffu
#define PMD_CHUNK_RETIRED 0x100u /* flag: nobody may enter */

/* Flags in pmd_chunk.flags. */
enum pmd_chunk_flags {
	PMD_CF_REPORTED = 1u << 1, /* a page was found bad (reported_pages says which) */
	PMD_CF_CLOSING = 1u << 2,  /* the round's owner is about to verify: no new disturbers */
	PMD_CF_MOVING = 1u << 3,   /* a partner unmaps or moves part of a live round's chunk */
	PMD_CF_RO_HOLE = 1u << 4,  /* split made a hole of a live round read-only */
	PMD_CF_FORKING = 1u << 5,  /* fork copies a live round: its child writes every page */
	PMD_CF_LOCKING = 1u << 6,  /* lock has a live round mlocked: no second locker */
};

/*
 * A partner's operation that may change what a live round's pages hold:
 * which pages, when (run clock, read before the syscall and after it), and
 * what it does to a slot stored before or after it. The round's verifier
 * judges each slot of those pages by when its store ran (pmd_round_log)
 * and accepts zero only where the operation allows it:
 *   DONTNEED (private memory): a slot stored before it reads zero, a slot
 *     stored after it its stamp (MADV_DONTNEED on shmem drops only the
 *     mapping and is no race: the pages keep their data);
 *   FREE: stored before it, zero (the kernel dropped the clean page) or the
 *     stamp; stored after it, the stamp (a written page must be kept);
 *   UNMAP: the range replaced by fresh memory with the chunk retired, so no
 *     store runs during it: before, zero; after, the stamp.
 * A store whose time overlaps the operation's may read either.
 */
enum pmd_chunk_race_kind {
	PMD_RACE_NONE = 0,
	PMD_RACE_DONTNEED,
	PMD_RACE_FREE,
	PMD_RACE_UNMAP,
};
#define PMD_RACES 8 /* records per round; a partner finding them used skips its race */

struct pmd_chunk_race {
	uint64_t t_begin, t_end; /* run clock before and after the operation */
	uint16_t lo, hi;	 /* pages [lo, hi) */
	uint32_t kind;		 /* enum pmd_chunk_race_kind */
};

/*
 * How a fault round writes a chunk, and when: what the verifier needs to
 * judge a slot a partner raced, what split needs to know which pages no
 * worker will store to again, and what a fork child needs to check that it
 * sees a prefix of each worker's stores. Worker i's slot in pass k is
 * i + k * nworkers; from page first + s_i (s_i = 0, or i % win in a seed
 * round: own_first) it visits the window of win pages (mod 512) step[i]
 * pages at a time (a step prime to win), every pass in the same order, so
 * its n-th store (from 0, over all passes) goes to page
 * first + (s_i + (n % win) * step[i]) % win. mark[i * PMD_ROUND_MARKS + j] is the
 * run clock read after its store j * per - 1 and before its store j * per
 * (j = 0: before the first; the last: after the last); 0 until reached.
 * The round's owner fills the shape before the round opens; each worker
 * publishes its step, then its marks (release).
 */
#define PMD_ROUND_MARKS 17

struct pmd_round_log {
	uint32_t first, win, nworkers, passes, per;
	bool own_first; /* worker i's first store is to page first + i % win (seed rounds) */
	uint32_t *step; /* [nworkers] */
	uint32_t *inv;	/* [nworkers]: step's inverse mod win (published with step) */
	uint64_t *mark; /* [nworkers * PMD_ROUND_MARKS] */
};

/* Operations recorded in a chunk's ring (forensics). Keep names in arena.c. */
enum pmd_op {
	PMD_OP_NONE = 0,
	PMD_OP_ROUND,	     /* a fault round started (arg: workers) */
	PMD_OP_VERIFY,	     /* contents verified (arg: bad slots) */
	PMD_OP_ZAP_DONTNEED, /* MADV_DONTNEED of the whole chunk */
	PMD_OP_ZAP_REMAP,    /* munmap + mmap MAP_FIXED of the whole chunk */
	PMD_OP_MADV_HUGE,
	PMD_OP_MADV_NOHUGE,
	PMD_OP_DONTNEED_SUB, /* MADV_DONTNEED of a subrange (arg: first page) */
	PMD_OP_FREE,	     /* MADV_FREE (arg: first page) */
	PMD_OP_PAGEOUT,
	PMD_OP_COLD,
	PMD_OP_MPROTECT,
	PMD_OP_MUNMAP_SUB,
	PMD_OP_MREMAP,
	PMD_OP_COLLAPSE,
	PMD_OP_MIGRATE,
	PMD_OP_FORK,
	PMD_OP_RACE_DONTNEED, /* MADV_DONTNEED of a chunk inside a round (arg: range) */
	PMD_OP_RACE_FREE,     /* MADV_FREE of a chunk inside a round (arg: range) */
	PMD_OP_MPROTECT_RW,   /* a PROT_READ hole made writable again */
	PMD_OP_MREMAP_BACK,   /* moved home from a spare slot (arg: slot + 1) */
	PMD_OP_INJECT, /* test-only corruption */
	PMD_OP_PAGEMAP_READ, /* /proc/self/pagemap read of the chunk (arg: pages) */
	PMD_OP_POPULATE,  /* filled before the clock started (arg: slots per page) */
	PMD_OP_COW_WRITE, /* the parent rewrote a frozen chunk after fork (arg: slots per page) */
	PMD_OP_MIGRATE_PAGES, /* move_pages of some of the chunk's pages (arg: target node) */
	PMD_OP_MBIND_MOVE,    /* mbind MPOL_MF_MOVE of the chunk's range (arg: target node) */
	PMD_OP_MPROTECT_EXEC, /* a hole of a live round made PROT_READ|WRITE|EXEC (arg: range) */
	PMD_OP_MADV_POPULATE, /* MADV_POPULATE_READ/WRITE of the chunk (arg: write | errno << 1) */
	PMD_OP_PIN_SPLICE, /* pages vmsplice'd into a pipe, then dropped (arg: first | pages << 9) */
	PMD_OP_PIN_WRITE,  /* process_vm_writev of them back (arg: first | pages << 9) */
	PMD_OP_PIN_READ,   /* process_vm_readv of a live round's pages (arg: first | pages << 9) */
	PMD_OP_PIN_DIRECT, /* pages written with O_DIRECT, then dropped (arg: first | pages << 9) */
	PMD_OP_COUNT,
};

struct pmd_ring_entry {
	uint64_t t_ns; /* run clock */
	uint64_t word; /* op:8 | worker:16 | gen:12 | arg:28 */
};

struct pmd_chunk {
	uint32_t state; /* enum pmd_chunk_state | PMD_CHUNK_RETIRED; atomic */
	uint32_t flags; /* enum pmd_chunk_flags; atomic */
	uint32_t gen;	/* generation of the contents, 1..PMD_GEN_MAX; owner writes */
	uint32_t index;
	uintptr_t addr; /* where it is mapped now; RCU-published, follows mremap */
	/* Expected contents, written by the owner only. */
	uint32_t nslots;		      /* slots 0..nslots-1 hold stamps of gen */
	uint32_t domain;		      /* stamp domain the slots were written in */
	uint64_t skipped[PMD_MASK_WORDS];     /* slot s was not written (atomic bits) */
	uint64_t zero_pages[PMD_MASK_WORDS];  /* page p must read all zero */
	uint64_t maybe_pages[PMD_MASK_WORDS]; /* page p may read all zero (MADV_FREE'd, clean) */
	uint64_t reported_pages[PMD_MASK_WORDS]; /* page p was reported bad: not judged again */
	uint32_t disturbers;		      /* atomic: partners inside a racing operation */
	uint32_t locks;			      /* atomic: odd while a partner has it mlocked */
	/* What partners did to the live round; cleared when its expectations are reset. */
	uint32_t nraces;		       /* atomic: records claimed (may pass PMD_RACES) */
	uint64_t race_pages[PMD_MASK_WORDS];   /* page p was raced: judged by race[] */
	struct pmd_chunk_race race[PMD_RACES];
	struct pmd_round_log *log; /* the live round's, or NULL; atomic */
	uint32_t ring_head;		      /* atomic */
	struct pmd_ring_entry ring[PMD_RING_LEN];
} __attribute__((aligned(64)));

enum pmd_thp_mode {
	PMD_THP_MADVISE = 0, /* MADV_HUGEPAGE on the arena */
	PMD_THP_NOHUGE,	     /* MADV_NOHUGEPAGE on the arena */
	PMD_THP_TOGGLE,	     /* alternate per round on the contested chunks */
	PMD_THP_INHERIT,     /* leave the system policy alone */
};

/*
 * The arena's memory policy (--mem-policy), set with mbind() on the arena
 * and on every range mapped fresh over it (pmd_arena_fresh_range()).
 */
#define PMD_MAX_NODES 64
struct pmd_mempolicy {
	int mode;	/* MPOL_* of <numaif.h>; MPOL_DEFAULT: leave the process default */
	uint64_t nodes; /* bit n: node n (bind, interleave, preferred) */
};

struct pmd_arena {
	char *base;	  /* first chunk's home address */
	size_t size;	  /* bytes of the chunk area */
	unsigned nchunks; /* chunks in the arena */
	char *spare;	  /* mremap targets, nspare chunks after the arena */
	unsigned nspare;
	uint64_t spare_used; /* atomic bitmap of spare slots in use */
	bool shared;
	bool reads_allocate; /* a read fault allocates a page here: no zero page (src/mem/zeropage.c) */
	enum pmd_thp_mode thp;
	uint64_t tag_key; /* from the seed: stamps of another run never verify */
	struct pmd_mempolicy mpol;
	struct pmd_chunk *chunks;
	bool unmapped; /* pmd_arena_unmap() ran: base and size are only a record now */
	/*
	 * Atomic: a range of the arena can be unmapped for a moment (split's
	 * plain mremap, where MREMAP_DONTUNMAP is refused), so a call over it
	 * may meet a hole (madvise's ENOMEM). Until then there are none: every
	 * remap is a MAP_FIXED or mremap over a placeholder.
	 */
	uint32_t holes;
};

/* ---- memory accesses: always relaxed atomics ---------------------------- */

static inline void pmd_store(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static inline uint64_t pmd_load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline uint64_t *pmd_page_slot(char *chunk_addr, unsigned page, unsigned slot)
{
	return (uint64_t *)(chunk_addr + ((size_t)page << PMD_PAGE_SHIFT)) + slot;
}

/* ---- chunk state, ownership and the RCU rule ---------------------------- */

static inline uint32_t pmd_chunk_state(const struct pmd_chunk *c)
{
	return __atomic_load_n(&c->state, __ATOMIC_ACQUIRE) & PMD_CHUNK_STATE_MASK;
}

/* Claim @c from state @from to @to; true if this caller now owns it. */
bool pmd_chunk_claim(struct pmd_chunk *c, enum pmd_chunk_state from, enum pmd_chunk_state to);
/* Idle and not being closed for a round: worth trying to claim. */
static inline bool pmd_chunk_usable(const struct pmd_chunk *c)
{
	return pmd_chunk_state(c) == PMD_CHUNK_IDLE &&
	       !(__atomic_load_n(&c->flags, __ATOMIC_RELAXED) & PMD_CF_CLOSING);
}

/*
 * Hold (IDLE -> HELD) the first usable chunk, scanning at most @scan chunks
 * from @start round the arena, that holds a round's recorded contents and
 * is not retired. NULL if none: the caller skips its operation this time.
 */
struct pmd_chunk *pmd_arena_hold_settled(struct pmd_arena *a, unsigned start, unsigned scan);

/* Hand @c back as @to; publishes the owner's expectation writes (release). */
void pmd_chunk_release(struct pmd_chunk *c, enum pmd_chunk_state to);

/* Enter @c's memory; returns its address, or NULL (and no section) if retired. */
char *pmd_chunk_enter(struct pmd_chunk *c);
void pmd_chunk_exit(struct pmd_chunk *c);
/*
 * The address of @c, which the caller holds, or NULL if it is retired. Only
 * a chunk's holder retires it, so the address stays good while held: system
 * calls on the range (they never fault in this process) may run outside a
 * section, which a slow one (mlock, O_DIRECT, a sleep) must not hold open
 * against a retirer's grace period; loads and stores stay inside one.
 */
char *pmd_chunk_held_addr(const struct pmd_chunk *c);
/* Mark @c retired and wait until nobody is inside. Never call while inside. */
void pmd_chunk_retire(struct pmd_chunk *c);
/* Open @c again, mapped at @addr (its old address unless it moved). */
void pmd_chunk_revive(struct pmd_chunk *c, char *addr);
bool pmd_chunk_retired(const struct pmd_chunk *c);

/*
 * Acting on a chunk a fault round is writing, which you do not own: bracket
 * the operation with these. begin() returns false (do not operate) unless
 * the chunk is in a round that is not yet closing; while it is true the
 * round cannot close, so its owner will neither verify nor reset it, and
 * its log stays valid. An operation that leaves the contents as they were
 * (MADV_DONTNEED of shmem, mprotect, mremap, fork) needs nothing more.
 */
bool pmd_chunk_disturb_begin(struct pmd_chunk *c);
void pmd_chunk_disturb_end(struct pmd_chunk *c);
/*
 * Enter and bracket (disturb_begin) the first chunk from @start round the
 * arena whose round is open; its address in *addr. NULL if none (nothing
 * entered). End with pmd_chunk_disturb_end(), then pmd_chunk_exit().
 */
struct pmd_chunk *pmd_arena_enter_live(struct pmd_arena *a, unsigned start, char **addr);
/*
 * Set flag @set on @c unless one of @unless is set; true if set. Two
 * disturbers that must not overlap (a read-only hole and a fork whose
 * child writes every page) each set theirs unless the other's is there.
 */
static inline bool pmd_chunk_flag_unless(struct pmd_chunk *c, uint32_t set, uint32_t unless)
{
	uint32_t old = __atomic_load_n(&c->flags, __ATOMIC_ACQUIRE);

	do {
		if (old & unless)
			return false;
	} while (!__atomic_compare_exchange_n(&c->flags, &old, old | set, false, __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	return true;
}

static inline void pmd_chunk_flag_clear(struct pmd_chunk *c, uint32_t flag)
{
	__atomic_and_fetch(&c->flags, ~flag, __ATOMIC_RELEASE);
}
/*
 * One that may zero pages [lo, hi) (enum pmd_chunk_race_kind): race_begin() does
 * disturb_begin(), claims a record and marks the pages raced, then reads
 * the clock; call the syscall right after it. NULL: do not operate (not in
 * an open round, or its records are used up). race_end() reads the clock
 * and ends the bracket.
 */
struct pmd_chunk_race *pmd_chunk_race_begin(struct pmd_chunk *c, enum pmd_chunk_race_kind kind,
					    unsigned lo, unsigned hi);
/*
 * The record alone, for a caller inside its bracket already: the record is
 * the caller's to adjust (t_begin, t_end) until its disturb_end().
 */
struct pmd_chunk_race *pmd_chunk_race_add(struct pmd_chunk *c, enum pmd_chunk_race_kind kind,
					  unsigned lo, unsigned hi);
void pmd_chunk_race_end(struct pmd_chunk *c, struct pmd_chunk_race *r);
/*
 * The same, with the times the caller read itself: an operation that
 * keeps the workers out first (retire) sets r->t_begin once they are out,
 * and ends at @t_end, read before it lets them in again.
 */
void pmd_chunk_race_end_at(struct pmd_chunk *c, struct pmd_chunk_race *r, uint64_t t_end);
/*
 * A live round's chunk has no owner a partner could hold it from: whoever
 * retires it to unmap or move part of it (inside its bracket) takes this
 * first, so two never do at once. false: someone else is; skip.
 */
bool pmd_chunk_move_begin(struct pmd_chunk *c);
void pmd_chunk_move_end(struct pmd_chunk *c);
/* Forget the round's races and log (its expectations were reset or settled). */
void pmd_chunk_races_clear(struct pmd_chunk *c);
/* A worker's place in the round log while it stores: see pmd_round_log_start(). */
struct pmd_round_clock {
	uint64_t *mark; /* the worker's marks; NULL: nothing is logged */
	uint32_t per, left, j;
};

/*
 * Worker @wk of the round logged in @log (NULL: none) begins its stores at
 * @t0 with @step: publishes step, its inverse and the first mark, and sets
 * up @k for pmd_round_clock_tick() after every store and
 * pmd_round_clock_end() after the last.
 */
void pmd_round_log_start(struct pmd_round_log *log, unsigned wk, unsigned step, uint64_t t0,
			 struct pmd_round_clock *k);
void pmd_round_clock_mark(struct pmd_round_clock *k);
void pmd_round_clock_end(struct pmd_round_clock *k);

static inline void pmd_round_clock_tick(struct pmd_round_clock *k)
{
	if (k->mark && !--k->left)
		pmd_round_clock_mark(k);
}

/*
 * When worker @wk's store to page @p in pass @pass ran, as an interval of
 * the run clock [*lo, *hi]; false if the log cannot tell (the page is
 * outside the window, the worker has not begun or not finished that
 * store's block). done: the store is behind the worker for good.
 */
bool pmd_round_store_time(const struct pmd_round_log *log, unsigned wk, unsigned pass,
			  unsigned p, uint64_t *lo, uint64_t *hi);
/* Worker @wk's store to page @p in pass @pass is behind it for good (false: to come, unknown). */
bool pmd_round_store_done(const struct pmd_round_log *log, unsigned wk, unsigned pass, unsigned p);
/* No worker of the round will store to page @p again (every last-pass store to it is done). */
bool pmd_round_page_done(const struct pmd_round_log *log, unsigned p);
/* The index (from 0, over all passes) of worker @wk's store to page @p in pass @pass; -1: none. */
long pmd_round_store_index(const struct pmd_round_log *log, unsigned wk, unsigned pass, unsigned p);
/* The round owner, before verifying: refuse new disturbers, wait for the rest. */
void pmd_chunk_close_round(struct pmd_chunk *c);
/* The round owner, once the chunk is reset and the round may be raced. */
void pmd_chunk_open_round(struct pmd_chunk *c);

/*
 * Spare slots: chunk-sized PROT_NONE places after the arena that mremap may
 * move a held, retired chunk into. get() returns NULL if all are in use.
 * A range a chunk leaves must be refilled with pmd_arena_placeholder() so
 * no other mapping can land where the chunk will come back. Only a run with
 * a stressor flagged PMD_SF_SPARE_SLOTS has them (nspare > 0): they are a
 * mapping more, which every fork of the fork and exec stressors copies.
 */
char *pmd_arena_spare_get(struct pmd_arena *a);
void pmd_arena_spare_put(struct pmd_arena *a, char *slot);
int pmd_arena_placeholder(char *addr, size_t len);

/* Append an operation to @c's ring. */
void pmd_chunk_log(struct pmd_chunk *c, uint64_t t_ns, enum pmd_op op, unsigned worker,
		   uint32_t arg);
const char *pmd_op_name(unsigned op);

static inline void pmd_mask_set(uint64_t *mask, unsigned bit)
{
	__atomic_fetch_or(&mask[bit / 64], 1ull << (bit % 64), __ATOMIC_RELAXED);
}

static inline void pmd_mask_clear(uint64_t *mask, unsigned bit)
{
	__atomic_fetch_and(&mask[bit / 64], ~(1ull << (bit % 64)), __ATOMIC_RELAXED);
}

static inline bool pmd_mask_test(const uint64_t *mask, unsigned bit)
{
	return __atomic_load_n(&mask[bit / 64], __ATOMIC_RELAXED) & (1ull << (bit % 64));
}

void pmd_mask_clear_all(uint64_t *mask);

/* ---- arena operations ---------------------------------------------------- */

/* Apply the run's THP mode (or @huge explicitly, -1 = run mode) to a range. */
int pmd_arena_madvise_thp(const struct pmd_arena *a, void *addr, size_t len, int huge);

/*
 * Memory just mapped over part of the arena (mmap MAP_FIXED) starts with
 * no THP advice and the process's memory policy: give it the run's THP
 * mode and the arena's policy, as the arena had. Call it after every such
 * mmap, before the range is revived. Returns 0 or the first -errno.
 */
int pmd_arena_fresh_range(const struct pmd_arena *a, void *addr, size_t len);
/*
 * MAP_FIXED a fresh arena-like mapping (private or shared) over @addr, then
 * fresh_range(). Returns the mmap error (-errno: the range may be gone, do
 * not hand the chunk back); *advice_err gets fresh_range()'s result.
 */
int pmd_arena_map_fresh(const struct pmd_arena *a, void *addr, size_t len, int *advice_err);
/* The mmap flags of the arena's own mapping (without MAP_FIXED). */
int pmd_arena_map_flags(const struct pmd_arena *a);
/* Set (again) just the arena's memory policy on a range: mbind, nothing moves. */
int pmd_arena_policy(const struct pmd_arena *a, void *addr, size_t len);

/*
 * Reset a chunk the caller owns to fresh, zero, pmd_none memory, and bump
 * its generation. @remap forces munmap + mmap MAP_FIXED (frees the page
 * table of a PTE-mapped chunk); otherwise MADV_DONTNEED is used where it
 * leaves the PMD none (private arena, PMD-mapped chunk). Returns 0, with
 * *advice_err the remap's THP advice or policy error (the reset is done),
 * or the reset's -errno: then the chunk is left retired for good, its
 * expectations as they were, and the caller must not hand it back.
 */
int pmd_arena_zap(struct pmd_arena *a, struct pmd_chunk *c, bool remap, unsigned worker,
		  int *advice_err);

#define PMD_GEN_MAX 4095u
static inline uint32_t pmd_gen_next(uint32_t g)
{
	return g >= PMD_GEN_MAX ? 1 : g + 1;
}

#endif
