// SPDX-License-Identifier: GPL-2.0
/*
 * The seed race's memcg way opens windows with a limit of its own
 * (src/kernel/memcg.c); an ENOMEM a worker met while one was open since its last
 * beat is the run's own limit, not the machine's ("resources") nor the
 * kernel's error (pmd_memcg_window_since(), pmd_worker_error()). Here the
 * windows are opened and closed by the way's own calls, on a run without a
 * cgroup (its limit writes fail and are counted): the times are what is
 * checked, then what a worker's ENOMEM becomes with and without one.
 */
#include "check.h"
#include "memcg.h"
#include "run.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <urcu/wfcqueue.h>

static void nap_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000 };

	nanosleep(&ts, NULL);
}

int main(void)
{
	struct pmd_run *run = calloc(1, sizeof(*run));
	uint64_t before, after;

	if (!run)
		return 1;
	run->memcg.usage_fd = run->memcg.limit_fd = -1;
	CHECK(!pmd_memcg_window_since(run, 0), "the way off: never its window");

	run->memcg.seed = true;
	CHECK(!pmd_memcg_window_since(run, 1), "the way on, no window yet");
	before = pmd_coarse_ns();
	nap_ms(20); /* past a tick of the coarse clock */
	CHECK(pmd_memcg_seed_tight(run, 2u << 20), "a window opens");
	CHECK(pmd_memcg_window_since(run, pmd_coarse_ns()), "open: an op since now met it");
	nap_ms(20);
	pmd_memcg_seed_loose(run);
	after = pmd_coarse_ns();
	CHECK(pmd_memcg_window_since(run, before), "an op that began before it opened met it");
	CHECK(pmd_memcg_window_since(run, after - 1000000),
	      "an op that began while it was open met it");
	nap_ms(20);
	CHECK(!pmd_memcg_window_since(run, pmd_coarse_ns()),
	      "an op that began after it closed did not");

	/* a charger (a fork) keeps windows shut: nothing to blame on one then */
	pmd_memcg_charge_begin(run);
	CHECK(!pmd_memcg_seed_tight(run, 2u << 20), "no window beside a charger");
	pmd_memcg_charge_end(run);
	nap_ms(20);
	CHECK(!pmd_memcg_window_since(run, pmd_coarse_ns()), "so none since");

	/* a worker's ENOMEM: the way's own while its window was open since the beat */
	{
		static struct pmd_wstats ws;
		const struct pmd_stressor st = { .name = "toggle" };
		struct pmd_sinst si = { .st = &st, .run = run };
		struct pmd_worker w = { .si = &si, .stats = &ws };

		cds_wfcq_init(&run->ev_head, &run->ev_tail);
		pmd_limits_start(&run->limits);
		ws.beat_ns = pmd_coarse_ns();
		CHECK(pmd_memcg_seed_tight(run, 2u << 20), "another window opens");
		CHECK(pmd_enomem_own(&w, -ENOMEM) && pmd_enomem_own(&w, ENOMEM),
		      "ENOMEM in it: the run's own");
		CHECK(!pmd_enomem_own(&w, -EAGAIN), "EAGAIN is no memcg limit's");
		pmd_worker_error(&w, -ENOMEM, "toggle: madvise(MADV_HUGEPAGE) of chunk 3");
		pmd_memcg_seed_loose(run);
		CHECK_EQ_U64(run->own_limit_errors, 1, "said as the run's own");
		CHECK_EQ_U64(run->ev_count[PMD_EV_ERROR] + run->resource_errors, 0,
			     "neither an error event nor resources");
		CHECK(!run->internal_claimed, "nor an internal error");

		nap_ms(20);
		ws.beat_ns = pmd_coarse_ns();
		CHECK(!pmd_enomem_own(&w, -ENOMEM), "the window closed before the op: not ours");
		pmd_worker_error(&w, -ENOMEM, "toggle: madvise(MADV_HUGEPAGE) of chunk 3");
		CHECK_EQ_U64(run->ev_count[PMD_EV_ERROR], 1, "then it is judged (an error event)");
		CHECK_EQ_U64(run->own_limit_errors, 1, "not the run's own");

		/* a fork waits for a window to close and keeps new ones shut: never ours */
		ws.beat_ns = pmd_coarse_ns();
		CHECK(pmd_memcg_seed_tight(run, 2u << 20), "a window before the fork");
		pmd_memcg_seed_loose(run);
		nap_ms(20);
		pmd_memcg_charge_begin(run);
		pmd_memcg_charge_end(run); /* fork() failed in here, with ENOMEM */
		CHECK(!pmd_enomem_own(&w, -ENOMEM), "a fork's ENOMEM met no window of the way's");
		pmd_events_drain(run);
	}
	free(run);
	return check_done();
}
