/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fork stressor's live round (implemented in stress/fork_live.c): a
 * chunk a fault round is writing at the moment fork() copies it, and the
 * check the child makes of its copy.
 *
 * The fork worker holds the round open across fork() (its bracket: the
 * round cannot close, be verified or reset; an RCU section: nobody unmaps
 * or moves the chunk) while the round's workers go on storing, faulting and
 * COW-breaking in the parent. What a correct fork gives the child (the
 * argument of stress/fork_writer.h): each worker's stores are in program
 * order, and a store either lands in the page the child gets (before fork
 * write-protected it, or through a TLB entry not flushed yet) or waits in a
 * fault until fork is done, and with it every later store of that worker.
 * So the child sees, of each worker, a prefix of its stores in the order
 * the round's log gives (every store up to one, none after), and never a
 * value the round does not write. A page a partner zeroed before the fork
 * (its race record, which the parent reads once fork() has returned) may
 * read zero inside the prefix. The child also writes its own stamp into
 * every page of its copy: the round's verifier in the parent expects zero
 * there, so a write that crosses the fork shows as COW_LEAK.
 */
#ifndef PMDSTRESS_STRESS_FORK_LIVE_H
#define PMDSTRESS_STRESS_FORK_LIVE_H

#include <pmdstress/stressor.h>

#include <stdbool.h>
#include <stdint.h>

struct pmd_fork_live {
	struct pmd_chunk *c; /* NULL: no live round this fork */
	bool held;	     /* the parent holds its bracket and RCU section */
	char *addr;
	uint32_t lbase, gen, nslots, domain;
	uint32_t first, win, nworkers, passes;
	bool own_first; /* the round log's (arena.h): a seed round */
	uint64_t zero[PMD_MASK_WORDS];
	uint32_t step[PMD_PAGE_SLOTS];
	uint8_t started[PMD_PAGE_SLOTS]; /* the worker had published its step */
};

/*
 * Parent, before fork(): take the chunk a round is writing (scanning from
 * @start), hold it and copy what the child needs. False if none.
 */
bool pmd_fork_live_take(struct pmd_worker *w, struct pmd_fork_live *l, unsigned start);
/* Parent, once fork() returned: the raced pages into @raced, then let the round go. */
void pmd_fork_live_release(struct pmd_fork_live *l, uint64_t raced[PMD_MASK_WORDS]);

enum pmd_fork_live_kind {
	PMD_FORK_LIVE_WRONG = 1, /* a value the round does not write there */
	PMD_FORK_LIVE_OWN,	 /* the child's own stamp did not read back */
	PMD_FORK_LIVE_TORN,	 /* a worker's later store seen, an earlier one not */
};

struct pmd_fork_live_finding {
	enum pmd_fork_live_kind kind;
	unsigned page, slot, bad;
	uint64_t expected, actual;
	/* TORN: the missing store, and both stores' places in the worker's order */
	unsigned other_page;
	uint64_t seq_seen, seq_missing;
};

typedef void (*pmd_fork_live_note)(void *ctx, const struct pmd_fork_live_finding *f);

/* Child: its stamp into slot @own of every page of its copy (when the round leaves it free). */
void pmd_fork_live_write(const struct pmd_fork_live *l, uint64_t key, unsigned own);
/*
 * Child: one look at its copy. Every slot holds zero or the round's stamp
 * (@own: the child's stamp once it wrote it, @mine). With @raced (the
 * second look, after the parent's release), each worker's stores seen are
 * a prefix of its order. @note is called per bad page; returns how many.
 */
unsigned pmd_fork_live_check(const struct pmd_fork_live *l, uint64_t key, unsigned own, bool mine,
			     const uint64_t *raced, pmd_fork_live_note note, void *ctx);

#endif
