/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the fork and exec stressors share (implemented in stress/fork.c):
 * waiting for a child without missing the end of the run (and never leaving
 * one behind), and filling the arena before the clock starts so that fork
 * has a big page table to copy.
 *
 * Both bracket every fork() with pmd_fork_lock() and pmd_fork_unlock()
 * (below): the forks of all workers are serialised with each other.
 *
 * They do not call liburcu's call_rcu_before_fork() and
 * call_rcu_after_fork_parent() (they used to): those make liburcu's
 * state whole in a child that goes on using it, and ours never
 * does. From fork to its end a child calls nothing of liburcu (the fork
 * child reads the frozen chunks through addresses taken before the fork,
 * never through pmd_chunk_enter()), takes no lock and mallocs nothing, and
 * it ends by _exit() or execve(). _exit() runs no destructors (liburcu's
 * would take its call_rcu mutex, whatever state it was in at the fork:
 * never exit() there); execve() throws the whole state away. What the
 * hooks did give, serialising the forks, pmd_fork_lock() gives without
 * liburcu's cost: its call_rcu mutex sits in liburcu's data, a page fork()
 * write-protects, so unlocking it after every fork was a copy-on-write
 * fault in the parent (measured with perf record -e page-faults -d; see
 * pmd_fork_lock() in fork.c).
 *
 * Since the children need no more than an async-signal-safe process, both
 * fork with pmd_fork(): glibc's _Fork() where it has one (2.34), which
 * skips what fork() does for a child of a threaded process that will use
 * malloc and stdio (taking and resetting every malloc arena's and stdio
 * stream's lock, the atfork handlers). Those lock words are written on
 * both sides of every fork, each a copy-on-write fault: a cost of the
 * tool's own, not of the kernel's fork that the figures are about.
 */
#ifndef PMDSTRESS_STRESS_FORK_H
#define PMDSTRESS_STRESS_FORK_H

#include <pmdstress/stressor.h>

#include <sys/types.h>
#include <unistd.h>

/*
 * Sanitizer runtimes (TSan, ASan) take their own locks around fork() in
 * their fork() interceptor; _Fork() would bypass it and leave a child
 * whose instrumented code can meet a lock another thread held: fork()
 * there.
 */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define PMD_FORK_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define PMD_FORK_SANITIZED 1
#endif

static inline pid_t pmd_fork(void)
{
#if defined(__GLIBC_PREREQ) && !defined(PMD_FORK_SANITIZED)
#if __GLIBC_PREREQ(2, 34)
	return _Fork();
#else
	return fork();
#endif
#else
	return fork();
#endif
}

/*
 * Taken before fork() and dropped once the parent has done what must come
 * before any other worker's fork (the exec stressor closes its pipe's write
 * end in between, so that no other child inherits it and holds its
 * end-of-file back). Never called in a child.
 */
void pmd_fork_lock(void);
void pmd_fork_unlock(void);

/*
 * Wait for child @pid to exit and reap it. Returns 0 with the wait status in
 * *@status; -EINTR if the run was aborted first, or stopped while the child
 * still moved, or the child stayed still for --hang-timeout (a hang, said
 * with the child's state and stack as @what, e.g. "fork child"): the child
 * was then killed with SIGKILL and reaped, *@status is its status; or
 * -errno if waiting failed (the child was killed and reaped if it could
 * be). A still child is not cut short by the stop: it is judged.
 */
int pmd_fork_wait(struct pmd_worker *w, pid_t pid, int *status, const char *what);

/*
 * waitpid() alone (over EINTR): for a child that exits at once, whose
 * wait need not look at the run's stop (pmd_fork_wait's pidfd and poll
 * are syscalls of their own per op). 0, or -errno.
 */
int pmd_fork_reap(pid_t pid, int *status);

/*
 * First thing in a child: die with the parent (a SIGKILLed run leaves no
 * child checking on), even if the parent died before this ran.
 */
void pmd_fork_child_init(pid_t parent);

/*
 * fork() failed with @err: EAGAIN (RLIMIT_NPROC, pids.max, memory) is a
 * limit of this machine, not a failure of the run: count it, back off and
 * try again (true). Anything else ends the worker (false).
 */
bool pmd_fork_backoff(struct pmd_worker *w, int err, unsigned eagain_metric);

/*
 * From teardown, once the workers are gone: if any fork() of @si's workers
 * failed with EAGAIN (counted in @eagain_metric), say how often on stderr.
 */
void pmd_fork_eagain_say(const struct pmd_sinst *si, unsigned eagain_metric);

/*
 * Wait until @fd is readable or hung up (1); the run is aborted, or stops
 * while child @pid, which the wait is for, still moves (0: kill it); or the
 * child stays still for --hang-timeout (-ETIMEDOUT: it is stuck;
 * pmd_child_stuck() before killing it); -errno on failure.
 */
int pmd_fork_wait_fd(struct pmd_worker *w, int fd, pid_t pid);

/*
 * Fill every idle chunk nobody has written yet, one stamp per 4 KiB page,
 * so that a later fork has a populated page table to copy: PMD-mapped huge
 * pages under --thp madvise, 4 KiB PTEs under --thp nohuge. Called from
 * setup, before the clock starts (it registers the calling thread with
 * liburcu for the while). Returns the chunks filled; *@thp gets how many of
 * them came out PMD-mapped.
 */
unsigned pmd_fork_populate(struct pmd_sinst *si, unsigned *thp);

#endif
