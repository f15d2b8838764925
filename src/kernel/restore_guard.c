// SPDX-License-Identifier: GPL-2.0
/*
 * The settings guardian. src/kernel/restore.c puts back what a run changed on
 * every way out the process itself sees: the end of the run, SIGINT and
 * SIGTERM, exit(), a crash. SIGKILL (kill -9, the OOM killer when the
 * arena does not fit a cgroup, a test harness's timeout) gives it none,
 * and would leave /sys/kernel/mm/transparent_hugepage or numa_balancing
 * as a stressor last wrote them.
 *
 * So at the first save a small child is forked, in a session of its own
 * (a Ctrl-C or a kill of the process group does not reach it), exempt from
 * the OOM killer, holding nothing but one end of a socket pair, stderr and the
 * settings lock. Each saved value is sent to it before the setting
 * is first written. When pmdstress has put everything back it sends "done"
 * and reaps the guardian; if instead the socket reaches end of file - the
 * kernel closed the write end because every thread of pmdstress is gone,
 * however it went - the guardian writes the values back itself, says so,
 * and exits, releasing the lock only then.
 *
 * The child runs only async-signal-safe calls: it is forked from a process
 * whose other threads may hold any lock.
 */
#include "restore_guard.h"
#include "sigsafe.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GUARD_MAX 64
#define GUARD_PATH 128
#define GUARD_VALUE 96

struct guard_rec {
	char kind; /* 'S' saved, 'D' done */
	char path[GUARD_PATH];
	char value[GUARD_VALUE];
	uint32_t len;
};

/* In the parent: our end of the socket pair and the child. Written under restore.c's lock. */
static int guard_wfd = -1;
static pid_t guard_pid;
static unsigned guard_started; /* atomic */
static unsigned guard_finished; /* atomic: "done" was sent */

/*
 * The run's process, when it is not this one (the storm's supervisor): the
 * guardian names it and writes to its stderr, which outlives our own (a
 * pipe the supervisor empties, and nobody once it was killed). 0: this one.
 */
static pid_t run_pid;

/* In the child: what to put back. */
static struct guard_rec saved[GUARD_MAX];
static unsigned nsaved;

static void keep(const struct guard_rec *r)
{
	unsigned i;

	for (i = 0; i < nsaved; i++)
		if (!strcmp(saved[i].path, r->path))
			return; /* the first save holds the value before the run */
	if (nsaved < GUARD_MAX)
		saved[nsaved++] = *r;
}

/* SIGUSR2: pmdstress is stuck in the kernel, and its supervisor left it behind */
static volatile sig_atomic_t put_back_now;

static void on_usr2(int sig)
{
	(void)sig;
	put_back_now = 1;
}

static void put_back(pid_t parent)
{
	unsigned i, failed = 0;

	for (i = 0; i < nsaved; i++) {
		const struct guard_rec *e = &saved[i];
		int fd = open(e->path, O_WRONLY | O_CLOEXEC);
		bool ok = fd >= 0 && write(fd, e->value, e->len) == (ssize_t)e->len;

		if (fd >= 0 && close(fd))
			ok = false;
		if (!ok) {
			failed++;
			pmd_sigsafe_put("pmdstress guardian: cannot restore ");
			pmd_sigsafe_put(e->path);
			pmd_sigsafe_put(" to '");
			pmd_sigsafe_put(e->value);
			pmd_sigsafe_put("' (write it back by hand)\n");
		}
	}
	if (!nsaved)
		return;
	pmd_sigsafe_put("pmdstress guardian: pmdstress (pid ");
	pmd_sigsafe_put_num((unsigned long)parent, 10);
	pmd_sigsafe_put(put_back_now ? ") is stuck in the kernel; put back "
				     : ") ended without restoring; put back ");
	pmd_sigsafe_put_num(nsaved - failed, 10);
	pmd_sigsafe_put(" of ");
	pmd_sigsafe_put_num(nsaved, 10);
	pmd_sigsafe_put(" kernel settings\n");
}

/* Close every descriptor but stdin/out/err, @a and @b. */
static void close_others(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a, fd;
	long max = sysconf(_SC_OPEN_MAX);

	if (max < 0 || max > 65536)
		max = 65536;
	for (fd = 3; fd < max; fd++)
		if (fd != lo && fd != hi)
			close(fd);
}

static void __attribute__((noreturn)) guard_main(int rfd, int keep_fd, int err_fd, pid_t parent)
{
	static const int quiet[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP,
				     SIGTTIN, SIGTTOU, SIGUSR1 };
	static const int dflt[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGSYS };
	struct sigaction sa;
	struct pollfd pfd = { .fd = rfd, .events = POLLIN };
	struct guard_rec r;
	size_t have = 0;
	sigset_t none, usr2;
	unsigned i;
	int fd;

	/* the run's handlers are not ours: a Ctrl-C must not stop the guard */
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN;
	for (i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++)
		sigaction(quiet[i], &sa, NULL);
	sa.sa_handler = SIG_DFL;
	for (i = 0; i < sizeof(dflt) / sizeof(dflt[0]); i++)
		sigaction(dflt[i], &sa, NULL);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	/* SIGUSR2 comes only while ppoll() below waits: no wake-up is lost before a read */
	sigemptyset(&none);
	sigemptyset(&usr2);
	sigaddset(&usr2, SIGUSR2);
	sigprocmask(SIG_SETMASK, &usr2, NULL);
	setsid();
	prctl(PR_SET_NAME, "pmd/guard", 0, 0, 0);
	if (err_fd >= 0)
		dup2(err_fd, STDERR_FILENO);
	close_others(rfd, keep_fd);
	/* the OOM killer should take the arena's owner, not the one who cleans up */
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		/* not root: the guard still works, just less shielded */
		ssize_t k = write(fd, "-1000", 5);

		(void)k;
		close(fd);
	}
	for (;;) {
		ssize_t n;

		if (ppoll(&pfd, 1, NULL, &none) < 0 && errno == EINTR && !put_back_now)
			continue;
		if (put_back_now)
			break;
		n = read(rfd, (char *)&r + have, sizeof(r) - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* end of file: pmdstress is gone */
		have += (size_t)n;
		if (have < sizeof(r))
			continue;
		have = 0;
		if (r.kind == 'D')
			_exit(0);
		if (r.kind == 'S') {
			r.path[GUARD_PATH - 1] = '\0';
			r.value[GUARD_VALUE - 1] = '\0';
			if (r.len >= GUARD_VALUE)
				r.len = GUARD_VALUE - 1;
			keep(&r);
		}
	}
	put_back(parent);
	_exit(0);
}

void pmd_guard_run_pid(pid_t pid)
{
	run_pid = pid;
}

int pmd_guard_start(int keep_fd)
{
	pid_t parent = run_pid ? run_pid : getpid(), pid;
	int p[2], err, err_fd = -1;
	char path[64];

	if (__atomic_load_n(&guard_started, __ATOMIC_ACQUIRE))
		return 0;
	if (run_pid) {
		/* appending: a log file the shell opened keeps what went before */
		snprintf(path, sizeof(path), "/proc/%d/fd/2", (int)run_pid);
		err_fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	}
	/*
	 * A socket pair, not a pipe: send() takes MSG_NOSIGNAL, so a record
	 * sent after the guardian left is an error, not a SIGPIPE. Close-on-exec:
	 * an exec'ed child never holds the end of file back.
	 */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p)) {
		err = -errno;
		goto fail;
	}
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		guard_main(p[0], keep_fd, err_fd, parent);
	}
	err = -errno;
	if (err_fd >= 0)
		close(err_fd);
	close(p[0]);
	if (pid < 0) {
		close(p[1]);
		goto fail;
	}
	guard_wfd = p[1];
	guard_pid = pid;
	__atomic_store_n(&guard_started, 1, __ATOMIC_RELEASE);
	return 0;
fail:
	fprintf(stderr, "pmdstress: cannot start the settings guardian (%s): if this run is "
			"killed with SIGKILL, the kernel settings it changed stay changed\n",
		strerror(-err));
	__atomic_store_n(&guard_started, 1, __ATOMIC_RELEASE);
	return err;
}

static void send_rec(int fd, const struct guard_rec *r)
{
	size_t off = 0;

	while (off < sizeof(*r)) {
		ssize_t n = send(fd, (const char *)r + off, sizeof(*r) - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		off += (size_t)n;
	}
}

void pmd_guard_saved(const char *path, const char *value, size_t len)
{
	struct guard_rec r;

	if (guard_wfd < 0 || __atomic_load_n(&guard_finished, __ATOMIC_ACQUIRE))
		return;
	memset(&r, 0, sizeof(r));
	r.kind = 'S';
	snprintf(r.path, sizeof(r.path), "%s", path);
	if (len >= sizeof(r.value))
		len = sizeof(r.value) - 1;
	memcpy(r.value, value, len);
	r.len = (uint32_t)len;
	send_rec(guard_wfd, &r);
}

void pmd_guard_done(void)
{
	struct timespec nap = { 0, 1000000 };
	struct guard_rec r;
	unsigned i;
	int fd = guard_wfd;

	if (fd < 0 || __atomic_exchange_n(&guard_finished, 1, __ATOMIC_ACQ_REL))
		return;
	memset(&r, 0, sizeof(r));
	r.kind = 'D';
	send_rec(fd, &r);
	close(fd);
	/* it exits at once; do not leave it behind as a zombie or an orphan */
	for (i = 0; i < 2000; i++) {
		pid_t w = waitpid(guard_pid, NULL, WNOHANG);

		if (w == guard_pid || (w < 0 && errno != EINTR))
			break;
		nanosleep(&nap, NULL);
	}
}

int pmd_guard_pid(void)
{
	return __atomic_load_n(&guard_started, __ATOMIC_ACQUIRE) && guard_wfd >= 0 &&
			       !__atomic_load_n(&guard_finished, __ATOMIC_ACQUIRE)
		       ? (int)guard_pid
		       : 0;
}
