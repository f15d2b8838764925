/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Events: everything the verdict is made of. Corruption found by the
 * verifier, kernel log splats, taint, signals, hangs and run errors. Posted
 * from any thread through a wait-free queue (urcu wfcqueue) to the reporter;
 * the first PMD_EVENTS_KEPT are kept in full, the rest only counted.
 */
#ifndef PMDSTRESS_EVENT_H
#define PMDSTRESS_EVENT_H

#include <pmdstress/arena.h>
#include <pmdstress/stamp.h>

#include <stdint.h>

#define PMD_EVENTS_KEPT 64

enum pmd_event_kind {
	PMD_EV_CORRUPTION = 0, /* .class says which */
	PMD_EV_KERNEL_LOG,     /* a splat in /dev/kmsg */
	PMD_EV_TAINT,	       /* new bits in /proc/sys/kernel/tainted */
	PMD_EV_SIGNAL,	       /* SIGSEGV/SIGBUS on a live chunk */
	PMD_EV_HANG,	       /* a worker stopped making progress */
	PMD_EV_ERROR,	       /* a syscall failed in a way that ends the stressor */
	PMD_EV_MISPLACED,      /* a page off the node the kernel said it moved it to */
	PMD_EV_SOFT_DIRTY,     /* a page stored to after a soft-dirty clear reads clean */
	PMD_EV_KIND_COUNT,
};

enum pmd_thp_state {
	PMD_THPS_UNKNOWN = 0, /* nothing could be read */
	PMD_THPS_NONE,	      /* no page present */
	PMD_THPS_THP,	      /* one PMD-mapped huge page */
	PMD_THPS_PTE,	      /* small pages only */
	PMD_THPS_MIXED,	      /* some of both, or a PTE-mapped huge page */
	PMD_THPS_COUNT,
};

struct pmd_event {
	enum pmd_event_kind kind;
	enum pmd_class class; /* for PMD_EV_CORRUPTION */
	uint64_t t_ns;	      /* run clock */
	int worker;	      /* -1 if none */
	const char *stressor; /* static name, or NULL */
	/* where, for corruption and signals */
	int chunk; /* -1 if none */
	int page;  /* page offset within the chunk */
	int slot;
	uint64_t addr;
	uint64_t expected, actual;
	uint32_t gen;
	unsigned bad_slots; /* how many slots of this page were wrong */
	enum pmd_thp_state thp;
	uint64_t pfn; /* 0 if unreadable */
	int signo, si_code;   /* PMD_EV_SIGNAL */
	uint32_t chunk_state; /* PMD_EV_SIGNAL: the chunk's state word when it faulted */
	unsigned ring_len;
	struct pmd_ring_entry ring[PMD_RING_LEN]; /* oldest first */
	char text[320];				  /* kernel line, reason, ... */
};

struct pmd_run;

/* Copy @ev and queue it for the reporter. Safe from any thread. */
void pmd_event_post(struct pmd_run *run, const struct pmd_event *ev);
/* Fill the location fields of @ev from chunk @c (ring snapshot included). */
void pmd_event_at_chunk(struct pmd_event *ev, const struct pmd_chunk *c, unsigned page,
			unsigned slot);

const char *pmd_event_kind_name(enum pmd_event_kind k);
const char *pmd_thp_state_name(enum pmd_thp_state s);

#endif
