// SPDX-License-Identifier: GPL-2.0
/*
 * What happens when the process is about to die of a signal: put back the
 * kernel settings a stressor changed, say so on stderr, and die of the same
 * signal with its default action (kselftest's thp_settings habit: restore,
 * then re-raise), so the shell, a test and a core dump still see the crash.
 *
 * The handler has two steps: fatal_decide() says what a signal means, and
 * fatal_restore_and_reraise() is the way out. A SIGSEGV or SIGBUS that the
 * kernel raised on a live arena chunk (its address inside a chunk that is
 * not retired) is the kernel's fault, never ours (see the RCU rule in
 * arena.h): it is recorded as an event with the address and the chunk's
 * state and op ring, the run is told to stop, and the faulting thread
 * parks for good (returning would fault again) while the main thread
 * writes the report and exits 1. Every other fatal signal is a crash of
 * pmdstress itself.
 *
 * Worker threads have small stacks (64 KiB by default), and a thread that
 * overflowed its stack cannot run a handler on it: every thread gets its
 * own alternate signal stack, with a guard page below it.
 */
#include "fatal.h"
#include "sigsafe.h"

#include "restore.h"
#include "run.h"

#include <pmdstress/pool.h>

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ALT_STACK_MIN (64u << 10)

/* madvise(2) since Linux 6.13: a guard in place, without a mapping of its own */
#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif
#ifndef MADV_GUARD_REMOVE
#define MADV_GUARD_REMOVE 103
#endif

/* Crashes, and terminating signals nobody waits for (run.c waits for INT, TERM, HUP, USR1). */
static const struct {
	int sig;
	const char *name;
} fatal_signals[] = {
	{ SIGSEGV, "SIGSEGV" }, { SIGBUS, "SIGBUS" },	{ SIGILL, "SIGILL" },
	{ SIGFPE, "SIGFPE" },	{ SIGABRT, "SIGABRT" }, { SIGSYS, "SIGSYS" },
	{ SIGQUIT, "SIGQUIT" }, { SIGPIPE, "SIGPIPE" }, { SIGXCPU, "SIGXCPU" },
	{ SIGXFSZ, "SIGXFSZ" },
};
#define NFATAL (sizeof(fatal_signals) / sizeof(fatal_signals[0]))

enum fatal_action {
	FATAL_DIE,    /* restore the settings, die of the signal */
	FATAL_RESUME, /* handled (reserved for faults on a live chunk) */
};

/*
 * The run whose arena a fault may hit. A signal handler has no other way to
 * reach it: the one piece of run state that lives outside the run context.
 */
static struct pmd_run *watched;
static pid_t watched_pid; /* the run's process: a fork child inherits the handler */

/* this thread's alternate stack, if we made it */
static _Thread_local char *alt_map;
static _Thread_local size_t alt_map_len;
static _Thread_local bool alt_in_pool;
static bool no_guards; /* madvise refused MADV_GUARD_INSTALL once: every thread maps */

/* ---- async-signal-safe output ------------------------------------------- */

static const char *signal_name(int sig)
{
	unsigned i;

	for (i = 0; i < NFATAL; i++)
		if (fatal_signals[i].sig == sig)
			return fatal_signals[i].name;
	return "signal";
}

static bool is_fault(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE;
}

/* ---- the handler ---------------------------------------------------------- */

/* The chunk whose current mapping holds @addr, if it is live (not retired). */
static struct pmd_chunk *live_chunk_at(struct pmd_run *run, uintptr_t addr)
{
	unsigned i;

	for (i = 0; i < run->arena.nchunks; i++) {
		struct pmd_chunk *c = &run->arena.chunks[i];
		uintptr_t a = __atomic_load_n(&c->addr, __ATOMIC_ACQUIRE);

		if (addr >= a && addr < a + PMD_CHUNK_SIZE)
			return pmd_chunk_retired(c) ? NULL : c;
	}
	return NULL;
}

static sigjmp_buf *escape; /* atomic: pmd_fatal_escape() */

void pmd_fatal_escape(sigjmp_buf *jb)
{
	__atomic_store_n(&escape, jb, __ATOMIC_RELEASE);
}

/*
 * A fault the kernel raised on a live chunk: fill the run's one fatal
 * event slot (plain stores only: async-signal-safe), end the run, park.
 */
static void report_live_fault(struct pmd_run *run, struct pmd_chunk *c, int sig,
			      const siginfo_t *info)
{
	uintptr_t addr = (uintptr_t)info->si_addr;
	uintptr_t base = __atomic_load_n(&c->addr, __ATOMIC_ACQUIRE);
	struct pmd_event *ev = &run->fatal_ev;
	char thread[17] = "";
	uint32_t idle = 0;
	sigjmp_buf *jb;
	sigset_t none;

	/* the first fault fills the slot; the others only say where they faulted */
	if (__atomic_compare_exchange_n(&run->fatal_pending, &idle, 1, false, __ATOMIC_ACQ_REL,
					__ATOMIC_RELAXED)) {
		ev->kind = PMD_EV_SIGNAL;
		ev->t_ns = pmd_now_ns();
		ev->worker = -1;
		pmd_event_at_chunk(ev, c, (unsigned)((addr - base) >> PMD_PAGE_SHIFT),
				   (unsigned)((addr & (PMD_PAGE_SIZE - 1)) / sizeof(uint64_t)));
		ev->addr = addr;
		ev->signo = sig;
		ev->si_code = info->si_code;
		ev->chunk_state = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
		prctl(PR_GET_NAME, thread, 0, 0, 0);
		memcpy(ev->text, thread, sizeof(thread));
		__atomic_store_n(&run->fatal_pending, 2, __ATOMIC_RELEASE);
	}
	pmd_sigsafe_put("pmdstress: ");
	pmd_sigsafe_put(signal_name(sig));
	pmd_sigsafe_put(" at ");
	pmd_sigsafe_put_num((uint64_t)addr, 16);
	pmd_sigsafe_put(" on live chunk ");
	pmd_sigsafe_put_num(c->index, 10);
	pmd_sigsafe_put(": reported; the run ends with its report\n");
	pmd_run_abort_signal(run);
	jb = __atomic_load_n(&escape, __ATOMIC_ACQUIRE);
	if (jb && (pid_t)syscall(SYS_gettid) == run->main_tid)
		siglongjmp(*jb, 1); /* the main thread, in a verify hook: out of it */
	/* returning would repeat the fault: wait for the main thread's _exit */
	sigemptyset(&none);
	for (;;)
		sigsuspend(&none);
}

/*
 * What @sig means: a fault the kernel raised (si_code > 0) inside a live
 * chunk of the watched arena is the kernel's doing and is reported; every
 * other fatal signal is a crash.
 */
static enum fatal_action fatal_decide(int sig, const siginfo_t *info, void *uctx)
{
	struct pmd_run *run = __atomic_load_n(&watched, __ATOMIC_ACQUIRE);
	struct pmd_chunk *c;

	(void)uctx;
	if (!run || (sig != SIGSEGV && sig != SIGBUS) || info->si_code <= 0)
		return FATAL_DIE;
	/*
	 * A child of the run (a fork stressor's child reading the frozen
	 * chunks) dies of it: its parent reaps it and reports where. Parked, it
	 * would wait for a main thread it does not have, its fault unreported.
	 */
	if (getpid() != __atomic_load_n(&watched_pid, __ATOMIC_ACQUIRE))
		return FATAL_DIE;
	c = live_chunk_at(run, (uintptr_t)info->si_addr);
	if (!c)
		return FATAL_DIE;
	report_live_fault(run, c, sig, info);
	return FATAL_RESUME; /* not reached */
}

void pmd_fatal_watch(struct pmd_run *run)
{
	__atomic_store_n(&watched_pid, getpid(), __ATOMIC_RELEASE);
	__atomic_store_n(&watched, run, __ATOMIC_RELEASE);
}

static void fatal_report(int sig, const siginfo_t *info, unsigned not_restored)
{
	char thread[17] = "";

	prctl(PR_GET_NAME, thread, 0, 0, 0);
	pmd_sigsafe_put("pmdstress: fatal ");
	pmd_sigsafe_put(signal_name(sig));
	if (is_fault(sig) && info->si_code > 0) {
		pmd_sigsafe_put(" at address ");
		pmd_sigsafe_put_num((uint64_t)(uintptr_t)info->si_addr, 16);
	}
	pmd_sigsafe_put(" in thread ");
	pmd_sigsafe_put(thread[0] ? thread : "?");
	pmd_sigsafe_put(" (pid ");
	pmd_sigsafe_put_num((uint64_t)getpid(), 10);
	if (!pmd_restore_is_owner())
		pmd_sigsafe_put(", a child of the run); nothing to restore");
	else if (not_restored)
		pmd_sigsafe_put("); some kernel settings could not be restored (see above)");
	else
		pmd_sigsafe_put("); kernel settings restored");
	pmd_sigsafe_put("; dying of the signal\n");
}

/*
 * The way out: settings first, then the signal again with its default
 * action. The signal is blocked while this handler runs, so raise() leaves
 * it pending and it kills the process as the handler returns, with the
 * registers of the interrupted code, which is what a core dump should show.
 * Raising, rather than letting a fault repeat, also covers signals sent by
 * kill() and a fault that would not repeat.
 */
static void fatal_restore_and_reraise(int sig, const siginfo_t *info)
{
	struct sigaction dfl;
	unsigned failed = pmd_restore_all();

	fatal_report(sig, info, failed);
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	raise(sig);
}

static void fatal_handler(int sig, siginfo_t *info, void *uctx)
{
	int saved_errno = errno;

	if (fatal_decide(sig, info, uctx) == FATAL_RESUME) {
		errno = saved_errno;
		return;
	}
	fatal_restore_and_reraise(sig, info);
	errno = saved_errno;
}

/* ---- installation --------------------------------------------------------- */

/* Give back a stack pmd_fatal_thread_init() made (alt_in_pool says from where). */
static void alt_stack_free(char *m, size_t len)
{
	if (alt_in_pool) {
		/* the pool's free keeps a guard (MADV_DONTNEED does): take it out first */
		madvise(m, (size_t)sysconf(_SC_PAGESIZE), MADV_GUARD_REMOVE);
		pmd_pool_free(m, len);
	} else {
		munmap(m, len);
	}
}

int pmd_fatal_thread_init(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), size = (size_t)SIGSTKSZ * 4;
	stack_t cur, ss;
	char *m;

	if (alt_map)
		return 0;
	/* a sanitizer runtime may have given the thread one already: keep it */
	if (!sigaltstack(NULL, &cur) && !(cur.ss_flags & SS_DISABLE))
		return 0;
	if (size < ALT_STACK_MIN)
		size = ALT_STACK_MIN;
	size = (size + page - 1) & ~(page - 1);
	/*
	 * Not for fork children: every mapping a fork copies, or even skips,
	 * costs each fork of the fork and exec stressors a little that the bare
	 * loop does not pay (bench/run.py forkexec; src/run/pool.c: since 6.8 a
	 * MADV_DONTFORK mapping too). The pool gives no child its memory and
	 * holds the stack without a mapping of its own, where the kernel puts
	 * the guard in place (6.13); before that, a mapping of the stack's own
	 * with a PROT_NONE page below (two mappings a thread). The fork
	 * stressor's checking child turns the setting off (stress/fork.c), so
	 * that a handler there runs on its stack; in any other child a handler
	 * finds no stack and the kernel kills it with SIGSEGV.
	 */
	m = __atomic_load_n(&no_guards, __ATOMIC_RELAXED) ? NULL : pmd_pool_alloc(size + page);
	if (m && !madvise(m, page, MADV_GUARD_INSTALL)) {
		alt_in_pool = true;
	} else {
		if (m) {
			__atomic_store_n(&no_guards, true, __ATOMIC_RELAXED);
			pmd_pool_free(m, size + page);
		}
		m = mmap(NULL, size + page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED)
			return -errno;
		/* a guard page below: a handler that overflows faults instead of scribbling */
		mprotect(m, page, PROT_NONE);
		madvise(m, size + page, MADV_DONTFORK);
		alt_in_pool = false;
	}
	memset(&ss, 0, sizeof(ss));
	ss.ss_sp = m + page;
	ss.ss_size = size;
	if (sigaltstack(&ss, NULL)) {
		int err = -errno;

		alt_stack_free(m, size + page);
		return err;
	}
	alt_map = m;
	alt_map_len = size + page;
	return 0;
}

void pmd_fatal_thread_fini(void)
{
	stack_t ss;

	if (!alt_map)
		return;
	memset(&ss, 0, sizeof(ss));
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
	alt_stack_free(alt_map, alt_map_len);
	alt_map = NULL;
	alt_map_len = 0;
}

void pmd_fatal_install(void)
{
	struct sigaction sa;
	unsigned i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fatal_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < NFATAL; i++)
		sigaction(fatal_signals[i].sig, &sa, NULL);
	pmd_fatal_thread_init();
}
