// SPDX-License-Identifier: GPL-2.0
/*
 * The round log: a worker's n-th store, replayed in the fault stressor's
 * order (stress/fault.c touch_chunk: the first store at the round's first
 * page, or in a seed round at a page of the worker's own, then a step prime
 * to the window, every pass alike), is found again from its page and pass,
 * and the clock marks bracket when it ran.
 */
#include "check.h"

#include <pmdstress/arena.h>
#include <pmdstress/stressor.h>

#include <stdlib.h>

#define WORKERS 3

static unsigned gcd(unsigned a, unsigned b)
{
	while (b) {
		unsigned t = a % b;

		a = b;
		b = t;
	}
	return a;
}

int main(void)
{
	static const unsigned wins[] = {1, 2, 7, 300, 512};
	static const unsigned passes[] = {1, 3};
	uint32_t step[WORKERS], inv[WORKERS];
	uint64_t mark[WORKERS * PMD_ROUND_MARKS], *when = malloc(sizeof(uint64_t) * 512 * 3);
	const unsigned nwins = sizeof(wins) / sizeof(wins[0]);
	unsigned wi, pi, wk;

	/* every window twice: the workers' first stores on one page, then on their own */
	for (wi = 0; wi < 2 * nwins; wi++) {
		const bool own = wi >= nwins;

		for (pi = 0; pi < sizeof(passes) / sizeof(passes[0]); pi++) {
			struct pmd_round_log log = {.first = 500,
						    .win = wins[wi % nwins],
						    .own_first = own,
						    .nworkers = WORKERS,
						    .passes = passes[pi],
						    .step = step,
						    .inv = inv,
						    .mark = mark};
			unsigned stores = log.win * log.passes, bad_index = 0, bad_time = 0;
			unsigned bad_done = 0, outside = 0;

			log.per = (stores + PMD_ROUND_MARKS - 2) / (PMD_ROUND_MARKS - 1);
			memset(mark, 0, sizeof(mark));
			for (wk = 0; wk < WORKERS; wk++) {
				/* forward, backward, and a step prime to the window */
				unsigned s = log.win < 2 ? 0
					     : wk == 0	 ? 1
					     : wk == 1	 ? log.win - 1
							 : 7;
				struct pmd_round_clock k;
				/* a seed round's worker starts at its own page of the window */
				const unsigned at0 = own ? wk % log.win : 0;
				unsigned n = 0, pass, at = at0, p;

				while (log.win > 1 && gcd(s, log.win) != 1)
					s++;
				pmd_round_log_start(&log, wk, s, pmd_now_ns(), &k);
				/* the touch loop: the first store, then the rest of each pass */
				when[n++] = pmd_now_ns();
				pmd_round_clock_tick(&k);
				for (pass = 0; pass < log.passes; pass++)
					for (p = !pass; p < log.win; p++) {
						at = (at + s) % log.win;
						when[n++] = pmd_now_ns();
						pmd_round_clock_tick(&k);
					}
				pmd_round_clock_end(&k);
				/* every store found again, with a time interval around it */
				for (n = 0, at = at0; n < stores; n++) {
					unsigned page = (log.first + at) % PMD_CHUNK_PAGES;
					uint64_t lo, hi;

					if (pmd_round_store_index(&log, wk, n / log.win, page) !=
					    (long)n)
						bad_index++;
					if (!pmd_round_store_time(&log, wk, n / log.win, page, &lo,
								  &hi) ||
					    lo > when[n] || hi < when[n])
						bad_time++;
					bad_done +=
					    !pmd_round_store_done(&log, wk, n / log.win, page);
					at = (at + s) % log.win;
				}
			}
			/* a page outside the window: no store, nothing to wait for */
			if (log.win < PMD_CHUNK_PAGES) {
				unsigned p = (log.first + log.win) % PMD_CHUNK_PAGES;

				outside = pmd_round_store_index(&log, 0, 0, p) == -1 &&
					  pmd_round_page_done(&log, p);
			} else {
				outside = 1;
			}
			CHECK(!bad_index && !bad_time && !bad_done && outside,
			      "window %u, %u passes%s: every store's index (%u wrong), time (%u "
			      "wrong), done (%u not), outside page",
			      log.win, log.passes, own ? ", own first pages" : "", bad_index,
			      bad_time, bad_done);
		}
	}

	/* a worker that has not begun: nothing known, nothing done */
	{
		struct pmd_round_log log = {.first = 0,
					    .win = 512,
					    .nworkers = WORKERS,
					    .passes = 1,
					    .per = 32,
					    .step = step,
					    .inv = inv,
					    .mark = mark};
		uint64_t lo, hi;

		memset(mark, 0, sizeof(mark));
		CHECK(!pmd_round_store_time(&log, 1, 0, 3, &lo, &hi) &&
			  !pmd_round_store_done(&log, 1, 0, 3) && !pmd_round_page_done(&log, 3),
		      "a worker not started: its stores unknown and to come");
	}
	free(when);
	printf("1..%d\n", check_count);
	return check_failed != 0;
}
