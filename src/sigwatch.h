/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Signals after the workers stopped. The run blocks SIGINT, SIGTERM and
 * SIGHUP in every thread and the main loop takes them with sigtimedwait;
 * once the loop has ended (verify, teardown, the reports) nobody waited for
 * them, so a second Ctrl-C while the report blocked on a full pipe did
 * nothing. The watcher is a thread that waits for them in those phases: a
 * signal after one already stopped the run (or a second one here) exits at
 * once with the settings restored, as the second Ctrl-C does in the loop; a
 * first one is recorded so that the run ends by it after the report.
 */
#ifndef PMD_SIGWATCH_H
#define PMD_SIGWATCH_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

struct pmd_run;

struct pmd_sigwatch {
	pthread_t thread;
	bool running;
	int quit; /* atomic */
	struct pmd_run *run;
	sigset_t set;
};

/* Start waiting for the run's signals in a thread of its own (no-op if running). */
void pmd_sigwatch_start(struct pmd_sigwatch *w, struct pmd_run *run, const sigset_t *set);
/* Stop it, so the main loop takes the signals again (no-op if not running). */
void pmd_sigwatch_stop(struct pmd_sigwatch *w);

#endif
