/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Signals outside the main loop. The run blocks SIGINT, SIGTERM and SIGHUP
 * in every thread and the main loop takes them with sigtimedwait; before it
 * (thousands of threads being made, the setups, a bench round's
 * change-over) and after it (verify, teardown, the reports) nobody waited
 * for them: a second Ctrl-C merged into the one already pending, or did
 * nothing while the report blocked on a full pipe. The watcher is a thread
 * that waits for them in those phases: a second signal after one already
 * stopped the run exits at once with the settings restored, as it does in
 * the loop (pmd_signal_again() says which is a second); a first one is
 * recorded in the run's stop_signal, and the main loop, given the signals
 * back, ends the round at once by it.
 */
#ifndef PMD_SIGWATCH_H
#define PMD_SIGWATCH_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

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

/*
 * A run stopped at once by a second signal, without a report: an exit
 * status of its own, so that a script does not take it for the clean stop
 * a signal ends (128 + signal, with the report written).
 */
#define PMD_EXIT_NO_REPORT 6

/*
 * @sig (sent with @code, by @from) came while the stop @first asked for is
 * under way. The same signal again from a process (kill(2): GNU timeout
 * signals the child, then its process group; a CI runner the process,
 * then its group) is the same request: said once, and it returns. Any
 * other, or the same from the terminal (a second Ctrl-C: the kernel
 * sends it, SI_KERNEL), ends the process at once: the settings
 * restored, no report, PMD_EXIT_NO_REPORT. Async-signal-safe.
 */
void pmd_signal_again(int first, int sig, int code, pid_t from);

/*
 * Whether pmd_signal_again() takes @sig (sent with @code) after @first for
 * the same stop. A signal queued with sigqueue(3), SI_QUEUE, is not: it is
 * how the supervisor (src/run/supervise.c), which the user signals, tells the
 * storm that a second signal came, since its kill(2) would be a repeat.
 */
bool pmd_signal_repeat(int first, int sig, int code);

/* Start waiting for the run's signals in a thread of its own (no-op if running). */
void pmd_sigwatch_start(struct pmd_sigwatch *w, struct pmd_run *run, const sigset_t *set);
/* Stop it, so the main loop takes the signals again (no-op if not running). */
void pmd_sigwatch_stop(struct pmd_sigwatch *w);

#endif
