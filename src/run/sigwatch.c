// SPDX-License-Identifier: GPL-2.0
/* The signal watcher of the phases outside the main loop: see sigwatch.h. */
#include "sigwatch.h"

#include "restore.h"
#include "run.h"
#include "sigsafe.h"

#include <sys/mman.h>
#include <unistd.h>

/* strsignal() is not async-signal-safe: the names of the signals a run stops by */
static const char *sig_name(int sig)
{
	switch (sig) {
	case SIGINT:
		return "SIGINT";
	case SIGTERM:
		return "SIGTERM";
	case SIGHUP:
		return "SIGHUP";
	default:
		return "a signal";
	}
}

bool pmd_signal_repeat(int first, int sig, int code)
{
	return sig == first && code != SI_KERNEL && code != SI_QUEUE;
}

void pmd_signal_again(int first, int sig, int code, pid_t from)
{
	static int said; /* atomic: the watcher and the main thread may both come here */

	if (pmd_signal_repeat(first, sig, code)) {
		if (__atomic_exchange_n(&said, 1, __ATOMIC_ACQ_REL))
			return;
		pmd_sigsafe_put("pmdstress: ");
		pmd_sigsafe_put(sig_name(sig));
		pmd_sigsafe_put(" again from pid ");
		pmd_sigsafe_put_num((uint64_t)from, 10);
		pmd_sigsafe_put(": the same stop, the report follows (another signal or a Ctrl-C "
				"exits at once)\n");
		return;
	}
	pmd_sigsafe_put("\npmdstress: ");
	pmd_sigsafe_put(sig_name(sig));
	pmd_sigsafe_put(" after ");
	pmd_sigsafe_put(sig_name(first));
	pmd_sigsafe_put(" stopped the run: exiting at once, no report (exit ");
	pmd_sigsafe_put_num(PMD_EXIT_NO_REPORT, 10);
	pmd_sigsafe_put(")\n");
	pmd_restore_all(); /* kernel settings a stressor changed */
	_exit(PMD_EXIT_NO_REPORT);
}

static void *sigwatch_main(void *arg)
{
	struct pmd_sigwatch *w = arg;
	struct pmd_run *run = w->run;

	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&w->set, &si), first;

		if (sig < 0)
			continue;
		/*
		 * A SIGINT taken here is ours even when the stop request came
		 * with it: returning without recording it would lose it.
		 * SIGUSR1 is the stop request, or a worker's wake-up for the
		 * main loop: not ours.
		 */
		first = __atomic_load_n(&run->stop_signal, __ATOMIC_ACQUIRE);
		if (sig != SIGUSR1 && first)
			pmd_signal_again(first, sig, si.si_code, si.si_pid);
		else if (sig != SIGUSR1) /* the first: the run ends by it (the main loop looks at it first) */
			__atomic_store_n(&run->stop_signal, sig, __ATOMIC_RELEASE);
		if (__atomic_load_n(&w->quit, __ATOMIC_ACQUIRE))
			return NULL;
	}
}

/*
 * The watcher's stack is its own, mapped at start and unmapped at stop,
 * so that none of it is left during the main loop. A stack glibc made
 * would stay cached after the join, two mappings (8 MiB and a guard page)
 * with the pages the watcher touched, which every fork of the run would
 * copy and every child's exit or exec free again: a cost per fork in the
 * figures of the fork and exec stressors that is not the kernel's. Not
 * MADV_DONTFORK while it runs: glibc's fork() walks the other threads'
 * descriptors in the child, and that of a thread on a user stack lies in
 * the stack (tried: the restore guardian, forked in the watcher's time,
 * died of SIGSEGV there). The watcher only waits for signals, or restores
 * the settings and exits: 128 KiB is plenty.
 */
#define SIGWATCH_STACK (128u << 10)

static void *stack_map(size_t *len)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *p;

	*len = SIGWATCH_STACK + (size_t)pg;
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
		 -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	/* a guard page below it */
	if (mprotect(p, (size_t)pg, PROT_NONE)) {
		munmap(p, *len);
		return NULL;
	}
	return p;
}

void pmd_sigwatch_start(struct pmd_sigwatch *w, struct pmd_run *run, const sigset_t *set)
{
	pthread_attr_t attr;
	long pg = sysconf(_SC_PAGESIZE);
	size_t len = 0;
	char *stack;

	if (w->running)
		return;
	w->run = run;
	w->set = *set;
	__atomic_store_n(&w->quit, 0, __ATOMIC_RELEASE);
	pthread_attr_init(&attr);
	stack = stack_map(&len);
	/* without a stack of its own, one of glibc's: only the cost above */
	if (stack && pthread_attr_setstack(&attr, stack + pg, len - (size_t)pg)) {
		munmap(stack, len);
		stack = NULL;
	}
	w->running = !pthread_create(&w->thread, &attr, sigwatch_main, w);
	pthread_attr_destroy(&attr);
	if (w->running) {
		w->stack = stack;
		w->stack_len = len;
	} else if (stack) {
		munmap(stack, len);
	}
}

void pmd_sigwatch_stop(struct pmd_sigwatch *w)
{
	if (!w->running)
		return;
	__atomic_store_n(&w->quit, 1, __ATOMIC_RELEASE);
	pthread_kill(w->thread, SIGUSR1); /* thread-directed: only the watcher takes it */
	pthread_join(w->thread, NULL);
	w->running = false;
	if (w->stack) /* a user stack: glibc keeps no hold of it after the join */
		munmap(w->stack, w->stack_len);
	w->stack = NULL;
}
