// SPDX-License-Identifier: GPL-2.0
/* The signal watcher of the phases outside the main loop: see sigwatch.h. */
#include "sigwatch.h"

#include "restore.h"
#include "run.h"
#include "sigsafe.h"

#include <unistd.h>

static void *sigwatch_main(void *arg)
{
	struct pmd_sigwatch *w = arg;
	struct pmd_run *run = w->run;

	for (;;) {
		int sig = 0;

		if (sigwait(&w->set, &sig))
			continue;
		/*
		 * A SIGINT taken here is ours even when the stop request came
		 * with it: returning without recording it would lose it.
		 * SIGUSR1 is the stop request, or a worker's wake-up for the
		 * main loop: not ours.
		 */
		if (sig != SIGUSR1 && __atomic_load_n(&run->stop_signal, __ATOMIC_ACQUIRE)) {
			pmd_sigsafe_put("\npmdstress: another signal after the run stopped: "
					"exiting at once, no report\n");
			pmd_restore_all(); /* kernel settings a stressor changed */
			_exit(128 + sig);
		}
		/* the first: the run ends by it (the main loop looks at it first) */
		if (sig != SIGUSR1)
			__atomic_store_n(&run->stop_signal, sig, __ATOMIC_RELEASE);
		if (__atomic_load_n(&w->quit, __ATOMIC_ACQUIRE))
			return NULL;
	}
}

void pmd_sigwatch_start(struct pmd_sigwatch *w, struct pmd_run *run, const sigset_t *set)
{
	if (w->running)
		return;
	w->run = run;
	w->set = *set;
	__atomic_store_n(&w->quit, 0, __ATOMIC_RELEASE);
	w->running = !pthread_create(&w->thread, NULL, sigwatch_main, w);
}

void pmd_sigwatch_stop(struct pmd_sigwatch *w)
{
	if (!w->running)
		return;
	__atomic_store_n(&w->quit, 1, __ATOMIC_RELEASE);
	pthread_kill(w->thread, SIGUSR1); /* thread-directed: only the watcher takes it */
	pthread_join(w->thread, NULL);
	w->running = false;
}
