/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fatal signals: a crash (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS)
 * or a terminating signal nobody waits for (SIGQUIT, SIGPIPE, SIGXCPU,
 * SIGXFSZ) first puts the kernel settings back (src/kernel/restore.c), then dies
 * of the same signal with its default action, so the crash stays visible to
 * the shell, the test and the core dump.
 */
#ifndef PMD_FATAL_H
#define PMD_FATAL_H

#include <setjmp.h>

struct pmd_run;

/* Install the handlers (process-wide) and an alternate stack for the caller. */
void pmd_fatal_install(void);
/*
 * Watch @run's arena (NULL: stop): from now on a SIGSEGV or SIGBUS the
 * kernel raises on a live chunk is reported as an event and ends the run
 * with its report instead of a core dump (src/run/fatal.c). Only in the calling
 * process: a fork child of the run dies of the signal, for its parent to
 * report.
 */
void pmd_fatal_watch(struct pmd_run *run);
/*
 * Where the storm's main thread goes when it faults on a live chunk itself
 * (the stressors' last verify hooks run on it): the event is in the run's
 * slot, and a siglongjmp() to @jb (sigsetjmp with the mask saved) takes it
 * out of the hook. NULL: none (the main thread then parks, as a worker).
 */
void pmd_fatal_escape(sigjmp_buf *jb);

/*
 * Give the calling thread its own alternate signal stack, so the handler
 * still runs when the thread dies of a stack overflow (worker stacks are
 * small). Keeps one another library already set up. Returns 0 or -errno.
 */
int pmd_fatal_thread_init(void);
/* Remove and free the stack pmd_fatal_thread_init() gave this thread. */
void pmd_fatal_thread_fini(void);

#endif
