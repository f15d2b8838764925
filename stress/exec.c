// SPDX-License-Identifier: GPL-2.0
/*
 * exec: fork + execve of a tiny program while the storm faults, AIM9
 * exec_test style.
 *
 * The race and the cost: the fork half copies the parent's page tables
 * while other threads fault in the same mm (the fork vs per-VMA-lock race
 * fixed in 6.4), and the exec half throws the copy away again: exec_mmap()
 * drops the child's copy of the arena, whose page tables zap_pmd_range() and
 * free_pgtables() must walk and free, huge PMDs and PTE tables alike. With
 * a populated parent this is mostly page-table work, which is why AIM9's
 * exec_test moved +16.4% with "mm: Check if PTE is already allocated during
 * page fault" (2011). The program is this binary in its exec-child mode by
 * default (main() returns 0 at once when its first argument is
 * --exec-child), or any program given as a path (e.g. /bin/true).
 *
 * Each op is fork, execve, the program's exit and the reap, timed as one
 * ("total"); "fork" is the fork() call, "exec" runs from fork() returning
 * to the moment the child's old image is gone: the write end of a pipe
 * opened with O_CLOEXEC closes inside execve, after the old mm was dropped,
 * and the parent sees end-of-file. Timing the exec costs a pipe and a
 * second sleep and wake of the parent per op, which neither the bare loop
 * nor AIM9's exec_test has: --exec-split off leaves both out ("exec" is
 * then not measured), as the aim9 scenarios do.
 *
 * What the child does between fork and execve is a cost of the tool, and
 * on this project's development VM a large one (each syscall about 1 us,
 * each page of code the child runs first a fault of about 10 us): measured
 * with bench/run.py's method, the child's stop handling below, the pipe
 * and a stop-aware wait cost 7% of exec/s. So the child of this binary's
 * exec-child mode (--exec-program self) only calls execve: the run's
 * signals stay blocked into the program, which exits at once without
 * unblocking them, so a Ctrl-C to the group cannot kill it, and a program
 * that exits at once needs no parent-death signal; it is reaped with a
 * plain waitpid(). A program of the user's (which may take its time, or
 * not exit) gets the careful child and wait. Either child reports a failed
 * execve's errno in a MAP_SHARED slot of its worker, read after the reap.
 *
 * How to tell it fired: execs/s and the three latencies; a kernel that gets
 * the page-table teardown wrong shows "BUG: Bad page map", "Bad rss-counter"
 * or "bad pmd" in the kernel log, a child that dies of a signal, or, through
 * the storm's verifier, a parent page gone wrong.
 */
#include <pmdstress/stressor.h>

#include "fork.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

struct exec_opts {
	char program[PMD_OPT_STRLEN];
	uint64_t rate;
	bool populate;
	bool split;
};

#define O(f) offsetof(struct exec_opts, f)
static const struct pmd_option exec_options[] = {
	{ "program", PMD_OPT_STRING, O(program), "self", 0, 0, NULL,
	  "what each child executes: 'self' (this binary, which exits at once when its first "
	  "argument is --exec-child) or the path of a program run without arguments, e.g. "
	  "/bin/true; it must exit 0" },
	{ "rate", PMD_OPT_UINT, O(rate), "0", 0, 1000000, NULL,
	  "execs per second, all exec workers together (0: back to back)" },
	{ "populate", PMD_OPT_BOOL, O(populate), "off", 0, 0, NULL,
	  "fill every chunk before the clock starts, so each fork copies (and each exec "
	  "frees) a populated page table (huge PMDs or 4 KiB PTEs, as --thp makes them)" },
	{ "split", PMD_OPT_BOOL, O(split), "on", 0, 0, NULL,
	  "time the exec apart from the rest of an op (the 'exec' latency): the parent then "
	  "wakes when the child's old image is gone and sleeps again until it exits, a cost "
	  "of the measurement (5% of exec/s on the development VM); off: only 'fork' and "
	  "'total', one wait per op as in AIM9's exec_test (the aim9 scenarios)" },
	PMD_OPT_END,
};

enum {
	M_OPS,
	M_POPULATED,
	M_POPULATED_THP,
	M_EAGAIN,
	L_FORK,
	L_EXEC,
	L_TOTAL,
};

static const struct pmd_metric exec_metrics[] = {
	[M_OPS] = { "ops", PMD_METRIC_COUNT, "programs forked, executed, exited and reaped" },
	[M_POPULATED] = { "populated", PMD_METRIC_COUNT,
			  "chunks filled before the clock started (populate)", PMD_BETTER_NONE },
	[M_POPULATED_THP] = { "populated_thp", PMD_METRIC_COUNT,
			      "of those, chunks that came out PMD-mapped", PMD_BETTER_NONE },
	[M_EAGAIN] = { "eagain", PMD_METRIC_COUNT,
		       "fork() refused for lack of resources: backed off and retried",
		       PMD_BETTER_NONE },
	[L_FORK] = { "fork", PMD_METRIC_LATENCY, "the fork() call: copying the page tables" },
	[L_EXEC] = { "exec", PMD_METRIC_LATENCY,
		     "fork() returned to the child's old image gone (close-on-exec pipe at EOF)" },
	[L_TOTAL] = { "total", PMD_METRIC_LATENCY, "fork + exec + exit + reap: one op",
		      PMD_BETTER_DEFAULT, PMD_MF_BENCH },
	{ NULL },
};

/* A child's word to its parent, in the MAP_SHARED slot of its worker. */
#define EXEC_STOPPED (-1) /* the run's signal came before the program ran: not an op */

struct exec_priv {
	const struct exec_opts *o;
	bool self;       /* this binary's exec-child mode: the child only calls execve */
	int *said;       /* MAP_SHARED, a slot per worker: 0, an execve errno or EXEC_STOPPED */
	size_t said_len;
	char path[PATH_MAX];
	char *argv[3]; /* built before any fork: the child only calls execve */
	/*
	 * "--exec-child", here and not a literal: execve reads the strings in
	 * the child, and a literal sits in a page of the program's data, which
	 * fork() does not copy: a page fault per exec that the bare loop, whose
	 * strings are on its stack, does not take (perf record -e page-faults -d
	 * showed it in strnlen_user).
	 */
	char child_arg[16];
	pid_t parent;  /* the run's pid: a child whose parent is gone exits */
};

/* The program a child runs: this binary for "self", else the path as given. */
static int resolve(const struct exec_opts *o, char *path, size_t len)
{
	ssize_t n;

	if (strcmp(o->program, "self")) {
		snprintf(path, len, "%s", o->program);
		return access(path, X_OK) ? -errno : 0;
	}
	n = readlink("/proc/self/exe", path, len - 1);
	if (n < 0)
		return -errno;
	path[n] = '\0';
	return access(path, X_OK) ? -errno : 0;
}

static const char *exec_supported(struct pmd_sinst *si)
{
	char path[PATH_MAX];
	const struct exec_opts *o = si->opts;
	int rc;

	/* a program the user named is checked by setup: a mistake there is exit 2 */
	if (strcmp(o->program, "self"))
		return NULL;
	rc = resolve(si->opts, path, sizeof(path));
	if (!rc)
		return NULL;
	snprintf(si->why, sizeof(si->why), "cannot execute '%.80s': %s (set --exec-program)",
		 ((const struct exec_opts *)si->opts)->program, strerror(-rc));
	return si->why;
}

static int exec_setup(struct pmd_sinst *si)
{
	const struct exec_opts *o = si->opts;
	struct exec_priv *ep = calloc(1, sizeof(*ep));
	int rc;

	if (!ep)
		return -ENOMEM;
	si->priv = ep;
	ep->o = o;
	rc = resolve(o, ep->path, sizeof(ep->path));
	if (rc) {
		snprintf(si->why, sizeof(si->why), "--exec-program: cannot execute '%.80s': %s",
			 o->program, strerror(-rc));
		return -EINVAL;
	}
	ep->said_len = (si->nworkers ? si->nworkers : 1) * sizeof(*ep->said);
	ep->said = mmap(NULL, ep->said_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			-1, 0);
	if (ep->said == MAP_FAILED) {
		ep->said = NULL;
		return -errno;
	}
	ep->self = !strcmp(o->program, "self");
	ep->argv[0] = ep->path;
	snprintf(ep->child_arg, sizeof(ep->child_arg), "--exec-child");
	ep->argv[1] = ep->self ? ep->child_arg : NULL;
	ep->argv[2] = NULL;
	ep->parent = getpid();
	if (o->populate && si->nworkers) {
		unsigned thp, n = pmd_fork_populate(si, &thp);

		pmd_count(&si->workers[0], M_POPULATED, n);
		pmd_count(&si->workers[0], M_POPULATED_THP, thp);
	}
	return 0;
}

static void exec_teardown(struct pmd_sinst *si)
{
	struct exec_priv *ep = si->priv;

	pmd_fork_eagain_say(si, M_EAGAIN);
	if (ep && ep->said)
		munmap(ep->said, ep->said_len);
	free(si->priv);
	si->priv = NULL;
}

/*
 * The child: for this binary's exec-child mode the execve alone, for a
 * program of the user's the stop handling first; only async-signal-safe
 * calls from fork to execve. @said: its worker's slot.
 */
static void __attribute__((noreturn)) exec_child(const struct exec_priv *ep, int *said)
{
	sigset_t none;

	if (ep->self) {
		/* see the top of this file: nothing but the execve */
		execve(ep->path, ep->argv, environ);
		*said = errno;
		_exit(127);
	}
	pmd_fork_child_init(ep->parent);
	/*
	 * A Ctrl-C to pmdstress's group stops the run, not the program: leave the
	 * group first, with the run's signals still blocked as the workers have
	 * them. One sent to the group before that is pending here and would kill
	 * us on unblocking (execve keeps it pending too): it meant "stop", so say
	 * so and go.
	 */
	setpgid(0, 0);
	if (!sigpending(&none) && (sigismember(&none, SIGINT) == 1 ||
				   sigismember(&none, SIGTERM) == 1 ||
				   sigismember(&none, SIGHUP) == 1)) {
		*said = EXEC_STOPPED;
		_exit(0);
	}
	/* the program gets the default mask */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve(ep->path, ep->argv, environ);
	*said = errno;
	_exit(127);
}

static const char *status_text(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "was killed by %s", strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	return buf;
}

/* One op. 0, or -errno to stop (said already). */
static int exec_once(struct pmd_worker *w, const struct exec_priv *ep)
{
	uint64_t t0, t1, t2 = 0, t3;
	int pfd[2] = { -1, -1 }, status = 0, err, ready = 1, rc, e;
	bool killed;
	int *said = &ep->said[w->index];
	bool split = ep->o->split;
	pid_t pid;
	char buf[64];

	*said = 0;
	/*
	 * split: the pipe is made and its write end closed inside the fork lock,
	 * which serialises the forks of all workers: no other worker's child can
	 * inherit it and hold the end-of-file back.
	 */
	pmd_fork_lock();
	if (split && pipe2(pfd, O_CLOEXEC)) {
		err = -errno;
		pmd_fork_unlock();
		pmd_worker_error(w, err, "exec: pipe2");
		return err;
	}
	t0 = pmd_now_ns();
	pid = pmd_fork();
	if (pid == 0)
		exec_child(ep, said);
	err = errno; /* not before the child left: as in fork.c */
	t1 = pmd_now_ns();
	if (split)
		close(pfd[1]);
	pmd_fork_unlock();
	if (pid < 0) {
		if (split)
			close(pfd[0]);
		if (pmd_fork_backoff(w, err, M_EAGAIN))
			return 0;
		pmd_worker_error(w, -err, "exec: fork() failed");
		return -err;
	}
	pmd_child_set(w, pid);
	/* split: wait for the old image to go (end-of-file: execve, or the child's exit) */
	if (split) {
		ready = pmd_fork_wait_fd(w, pfd[0], pid);
		t2 = pmd_now_ns();
		close(pfd[0]);
	}
	if (ready == -ETIMEDOUT) /* it never left the old image: before the kill, its stack */
		pmd_child_stuck(w, pid, "exec child");
	if (ready != 1) { /* aborted, stuck, or the wait failed: never leave the child behind */
		kill(pid, SIGKILL);
		rc = pmd_fork_reap(pid, &status);
	} else if (ep->self) {
		rc = pmd_fork_reap(pid, &status); /* the exec-child mode exits at once */
	} else {
		/* the user's program may take its time */
		rc = pmd_fork_wait(w, pid, &status, "exec child");
	}
	killed = pmd_child_killed(w); /* by the run, at the end: not its death */
	pmd_child_set(w, 0);
	t3 = pmd_now_ns();
	e = __atomic_load_n(said, __ATOMIC_RELAXED); /* the child is gone: its last word */
	if (rc == -EINTR || !ready || ready == -ETIMEDOUT || killed)
		return 0; /* aborted, not done, or a hang said: the child was killed and reaped */
	if (rc || ready < 0) {
		pmd_worker_error(w, rc ? rc : ready, "exec: waiting for child %d", (int)pid);
		return rc ? rc : ready;
	}
	if (e == EXEC_STOPPED)
		return 0; /* the run's signal reached the child before it left the group */
	if (e) {
		pmd_worker_error(w, -e, "exec: execve(%s) failed", ep->path);
		return -e;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		pmd_worker_error(w, 0, "exec: %s %s", ep->path, status_text(status, buf, sizeof(buf)));
		return -ECHILD;
	}
	pmd_latency(w, L_FORK, t1 - t0);
	if (split)
		pmd_latency(w, L_EXEC, t2 - t1);
	pmd_latency(w, L_TOTAL, t3 - t0);
	pmd_count(w, M_OPS, 1);
	return 0;
}

static int exec_run(struct pmd_worker *w)
{
	const struct exec_priv *ep = w->si->priv;
	uint64_t next = 0;

	while (pmd_pace(w, &next, ep->o->rate)) {
		int rc = exec_once(w, ep);

		pmd_beat(w);
		if (rc)
			break;
	}
	return 0;
}

const struct pmd_stressor pmd_stressor_exec = {
	.abi = PMD_STRESSOR_ABI,
	.name = "exec",
	.summary = "fork + execve of a tiny program while the storm faults (AIM9 exec_test)",
	.options = exec_options,
	.opts_size = sizeof(struct exec_opts),
	.metrics = exec_metrics,
	.workers = "1",
	.supported = exec_supported,
	.setup = exec_setup,
	.run = exec_run,
	.teardown = exec_teardown,
};
