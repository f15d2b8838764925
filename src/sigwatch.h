/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Signals outside the main loop. The run blocks SIGINT, SIGTERM and SIGHUP
 * in every thread and the main loop takes them with sigtimedwait; before it
 * (thousands of threads being made, the setups, a bench round's
 * change-over) and after it (verify, teardown, the reports) nobody waited
 * for them: a second Ctrl-C merged into the one already pending, or did
 * nothing while the report blocked on a full pipe. The watcher is a thread
 * that waits for them in those phases: a signal after one already stopped
 * the run exits at once with the settings restored, as the second Ctrl-C
 * does in the loop; a first one is recorded in the run's stop_signal, and
 * the main loop, given the signals back, ends the round at once by it.
 */
#ifndef PMD_SIGWATCH_H
#define PMD_SIGWATCH_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

struct pmd_run;

struct pmd_sigwatch {
	pthread_t thread;
	bool running;
	int quit; /* atomic */
	struct pmd_run *run;
	sigset_t set;
	char *stack; /* its own stack (and guard page), or NULL */
	size_t stack_len;
};

/* Start waiting for the run's signals in a thread of its own (no-op if running). */
void pmd_sigwatch_start(struct pmd_sigwatch *w, struct pmd_run *run, const sigset_t *set);
/* Stop it, so the main loop takes the signals again (no-op if not running). */
void pmd_sigwatch_stop(struct pmd_sigwatch *w);

#endif
