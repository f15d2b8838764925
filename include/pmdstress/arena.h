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

/* Flags in pmd_chunk.flags, set by partners racing a round they do not own. */
enum pmd_chunk_flags {
	PMD_CF_DISTURBED = 1u << 0, /* a zap raced the round: any slot may read zero */
	PMD_CF_REPORTED = 1u << 1,  /* found bad and reported: not verified again until reset */
	PMD_CF_CLOSING = 1u << 2,   /* the round's owner is about to verify: no new disturbers */
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
	uint64_t maybe_pages[PMD_MASK_WORDS]; /* page p may read zero (MADV_FREE) */
	uint32_t disturbers;		      /* atomic: partners inside a racing zap */
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
	bool reads_allocate; /* a read fault allocates a page here: no zero page (src/zeropage.c) */
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
/* Mark @c retired and wait until nobody is inside. Never call while inside. */
void pmd_chunk_retire(struct pmd_chunk *c);
/* Open @c again, mapped at @addr (its old address unless it moved). */
void pmd_chunk_revive(struct pmd_chunk *c, char *addr);
bool pmd_chunk_retired(const struct pmd_chunk *c);

/*
 * Racing a round you do not own with an operation that may zero pages
 * (MADV_DONTNEED, MADV_FREE of a chunk a fault round is writing): bracket
 * it with these. begin() returns false (do not operate) unless the chunk
 * is in a round that is not yet closing; while true, the round's owner
 * will not verify, and the verifier accepts zeros for the whole round.
 */
bool pmd_chunk_disturb_begin(struct pmd_chunk *c);
void pmd_chunk_disturb_end(struct pmd_chunk *c);
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
