// SPDX-License-Identifier: GPL-2.0
/*
 * Events flow from any thread to the main thread through a wait-free queue
 * (urcu wfcqueue). Counts are exact and kept at post time; only the first
 * PMD_EVENTS_KEPT events are queued in full, each in the node its post
 * number owns in a pool taken at start: posting allocates nothing, so the
 * event that says a limit (vm.max_map_count, a memcg) refused memory is
 * not itself lost to that limit.
 */
#include "run.h"

#include <pmdstress/pool.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pmd_events_init(struct pmd_run *run)
{
	cds_wfcq_init(&run->ev_head, &run->ev_tail);
	/* from the pool: the fork and exec stressors' children do not copy it */
	if (!run->ev_pool)
		run->ev_pool = pmd_pool_alloc(PMD_EVENTS_KEPT * sizeof(*run->ev_pool));
}

void pmd_event_post(struct pmd_run *run, const struct pmd_event *ev)
{
	struct pmd_event_node *n;
	uint64_t seq;

	if ((unsigned)ev->kind < PMD_EV_KIND_COUNT)
		__atomic_fetch_add(&run->ev_count[ev->kind], 1, __ATOMIC_RELAXED);
	if (ev->kind == PMD_EV_CORRUPTION && (unsigned)ev->class < PMD_CLASS_COUNT)
		__atomic_fetch_add(&run->class_count[ev->class], 1, __ATOMIC_RELAXED);
	seq = __atomic_fetch_add(&run->ev_posted, 1, __ATOMIC_RELAXED);
	if (seq >= PMD_EVENTS_KEPT || !run->ev_pool) {
		__atomic_fetch_add(&run->dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	n = &run->ev_pool[seq];
	cds_wfcq_node_init(&n->node);
	n->ev = *ev;
	cds_wfcq_enqueue(&run->ev_head, &run->ev_tail, &n->node);
}

void pmd_events_drain(struct pmd_run *run)
{
	struct cds_wfcq_node *node;

	while ((node = cds_wfcq_dequeue_blocking(&run->ev_head, &run->ev_tail))) {
		struct pmd_event_node *n = caa_container_of(node, struct pmd_event_node, node);

		if (run->nkept < PMD_EVENTS_KEPT)
			run->kept[run->nkept++] = n->ev;
	}
}

void pmd_event_at_chunk(struct pmd_event *ev, const struct pmd_chunk *c, unsigned page,
			unsigned slot)
{
	uint32_t head = __atomic_load_n(&c->ring_head, __ATOMIC_RELAXED);
	unsigned i, n = head < PMD_RING_LEN ? head : PMD_RING_LEN;

	ev->chunk = (int)c->index;
	ev->page = (int)page;
	ev->slot = (int)slot;
	ev->addr = __atomic_load_n(&c->addr, __ATOMIC_RELAXED) + ((uint64_t)page << PMD_PAGE_SHIFT) +
		   slot * sizeof(uint64_t);
	ev->gen = __atomic_load_n(&c->gen, __ATOMIC_RELAXED);
	ev->ring_len = n;
	for (i = 0; i < n; i++) {
		const struct pmd_ring_entry *e = &c->ring[(head - n + i) % PMD_RING_LEN];

		ev->ring[i].t_ns = __atomic_load_n(&e->t_ns, __ATOMIC_RELAXED);
		ev->ring[i].word = __atomic_load_n(&e->word, __ATOMIC_RELAXED);
	}
}

const char *pmd_event_kind_name(enum pmd_event_kind k)
{
	static const char *const names[PMD_EV_KIND_COUNT] = {
		[PMD_EV_CORRUPTION] = "corruption", [PMD_EV_KERNEL_LOG] = "kernel_log",
		[PMD_EV_TAINT] = "taint",	    [PMD_EV_SIGNAL] = "signal",
		[PMD_EV_HANG] = "hang",		    [PMD_EV_ERROR] = "error",
		[PMD_EV_MISPLACED] = "misplaced", [PMD_EV_SOFT_DIRTY] = "soft_dirty",
	};

	return (unsigned)k < PMD_EV_KIND_COUNT ? names[k] : "?";
}

const char *pmd_thp_state_name(enum pmd_thp_state s)
{
	static const char *const names[PMD_THPS_COUNT] = {
		[PMD_THPS_UNKNOWN] = "unknown", [PMD_THPS_NONE] = "none", [PMD_THPS_THP] = "thp",
		[PMD_THPS_PTE] = "pte",		[PMD_THPS_MIXED] = "mixed",
	};

	return (unsigned)s < PMD_THPS_COUNT ? names[s] : "?";
}

void pmd_events_fini(struct pmd_run *run)
{
	if (run->ev_pool)
		pmd_pool_free(run->ev_pool, PMD_EVENTS_KEPT * sizeof(*run->ev_pool));
	run->ev_pool = NULL;
}
