/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fault storm's seed-race round (implemented in stress/fault_seed.c):
 * racers of one group on one pmd_none PMD made to take different paths, the
 * THP path (do_huge_pmd_anonymous_page) for some and the PTE path
 * (__pte_alloc -> pmd_install) for others, while both are in flight.
 *
 * Mechanisms, chosen per kernel at setup (pmd_seed_mechanisms()):
 *  - prctl: a PTE-role racer waits a drawn delay after the gate, sets
 *    PR_SET_THP_DISABLE, stores, and the last PTE-role racer clears it.
 *    prctl takes mmap_lock for writing but not the per-VMA locks that
 *    faults run under since 6.4, so the THP-role racer's fault, already
 *    clearing its 2 MiB, goes on while the PTE-role racer's fault decides
 *    on the PTE path. Before 6.4 faults hold mmap_lock for reading and the
 *    prctl waits for them: no overlap, so not used there.
 *  - memcg: as root, the run's memory cgroup has room for one huge page and
 *    the round's small pages, no more: of two THP-path racers the second
 *    one's charge fails and it falls back to the PTE path (thp_fault_
 *    fallback_charge) while the first clears. Works on every kernel with
 *    cgroup v2 or v1 memory; the way for 6.1.
 * The delay is drawn from a window learned from the THP-role racers' first
 * stores (the time a huge page's allocation and clearing take here), so
 * the PTE-role decision falls inside the THP-role fault, as LTP's fuzzy
 * sync spreads its delay over the race window.
 */
#ifndef PMDSTRESS_STRESS_FAULT_SEED_H
#define PMDSTRESS_STRESS_FAULT_SEED_H

#include <pmdstress/stressor.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* with PMD_SEED_MECH_MEMCG: the window is ours to open and close (not --memcg-headroom's) */
#define PMD_SEED_MEMCG_WINDOW (1u << 7)

/* PR_SET_THP_DISABLE is process-wide: groups racing at once share it. */
struct fault_thp_off {
	pthread_mutex_t lock;
	unsigned users;	      /* PTE-role flippers inside their window */
	uint64_t flips, errors; /* under lock */
};

/* One group's seed-race state; the serial step writes it, racers read it. */
struct fault_seed {
	bool on;		/* this round is a seed round */
	unsigned mech;		/* PMD_SEED_MECH_* used this round */
	unsigned pte_first;	/* PTE-role slots: pte_first.. (npte of them, mod n) */
	unsigned npte;
	uint64_t delay_ns;	/* the flipper's wait after the gate */
	uint64_t window_ns;	/* learned: a THP-role first store (EWMA) */
	uint32_t flip;		/* atomic: 0 not yet, 1 THP disabled, 2 enabled again */
	uint32_t pte_done;	/* atomic: PTE-role racers past their first store */
	bool memcg_window;	/* the memcg way by pmd_memcg_seed_tight(), not --memcg-headroom */
	uint32_t loosened;	/* atomic: the round's memcg window is closed */
	struct fault_thp_off *off;
};

/*
 * Which mechanisms this kernel and process allow (PMD_SEED_MECH_*), and a line
 * saying why the others are not used, for the report.
 */
unsigned pmd_seed_mechanisms(struct pmd_sinst *si, char *why, size_t len);
/* The mechanisms' names ("prctl", "memcg"), comma-separated, into @buf. */
const char *pmd_seed_mech_names(unsigned mech, char *buf, size_t len);

/* Serial step: set up the round (@pick says whether it is a seed round). */
void fault_seed_plan(struct fault_seed *s, bool pick, unsigned mech, unsigned n,
		     uint64_t (*rnd)(void *, uint64_t), void *arg);
/* The role of @slot in this round: PMD_ROLE_THP, PMD_ROLE_PTE or PMD_ROLE_ANY. */
unsigned fault_seed_role(const struct fault_seed *s, unsigned slot, unsigned n);
/*
 * A racer's contested store, done as its role asks: the PTE-role flipper
 * waits its delay and disables THP, the others of its role wait for that;
 * *faults gets the minor faults the store took (getrusage).
 */
void fault_seed_store(struct fault_seed *s, const struct pmd_worker *w, unsigned slot,
		      unsigned n, uint64_t *p, uint64_t v, uint64_t span[2], unsigned *faults);
/* Room a seed round's memcg window leaves: one huge page and small change, not two. */
#define PMD_SEED_MEMCG_ROOM ((2ul << 20) + (7ul << 18))
/* Close the round's memcg window if nobody did (a racer that never stored). */
void fault_seed_loosen(struct fault_seed *s, struct pmd_run *run);
/* Serial step, after the round: learn the window from the THP-role stores. */
void fault_seed_learn(struct fault_seed *s, const struct pmd_race_round *rr);

#endif
