// SPDX-License-Identifier: GPL-2.0
/*
 * The supervisor: a run is two processes. The storm (src/run/run.c,
 * pmd_storm_main) holds the workers, the arena and the stressors, and is
 * what a broken kernel breaks: a task that dies holding a lock leaves the
 * others asleep in the kernel, a corrupted heap kills it with SIGSEGV, and
 * the splats of its mm's teardown ("BUG: Bad rss-counter state", non-zero
 * pgtables_bytes) come after its last look at the log. So the process that
 * reads the kernel log, keeps the verdict and writes the reports is
 * another one, which shares no memory with the storm and learns what it
 * found from checked messages (src/run/storm.h): beats and events during the
 * run, then its results.
 *
 * The supervisor watches the storm. In the main loop the storm beats at
 * least twice a second; in the other phases (start-up, verification,
 * teardown, its exit) it may be silent as long as it uses CPU. Silent
 * longer than --hang-timeout (3 s once the kernel log had a splat) is a
 * hang: every task's state, wchan and stack go into the report, the storm
 * is killed, and if it does not end within 3 s (asleep in the kernel for
 * good) it is left behind, said on stderr, and its settings guardian told
 * to put back what it changed. A storm that dies of a signal the
 * supervisor did not send crashed (exit 1); one the OOM killer took ran
 * out of memory (125). Once it is gone, every CPU is visited (a CPU that
 * ran it last may hold its mm until another process runs there, and the
 * mm's last checks run when it is let go), and the kernel log is read
 * again from the storm's last record: what the teardown printed counts.
 *
 * Signals come here, and the rule of src/run/sigwatch.h is applied here: the
 * first is passed on to the storm, which stops and reports as before; the
 * same again from a process is said once and not passed on (the storm
 * would take our kill(2) for a repeat too); a second is queued to the storm
 * (sigqueue: SI_QUEUE, which it takes for a second one) once it took the
 * first, so that it restores its settings and exits at once, and then the
 * supervisor exits 6, no report. The storm is in a process group of its
 * own, so that a Ctrl-C to the group reaches it once, and dies with its
 * supervisor (PR_SET_PDEATHSIG). Its stdout and stderr come through the
 * supervisor when they are not a terminal: a storm left behind in the
 * kernel then holds no pipe a harness is waiting on.
 */
#include "config.h"
#include "kmsg.h"
#include "monitor.h"
#include "report.h"
#include "run.h"
#include "sigwatch.h"
#include "storm.h"
#include "sysinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TICK_NS 250000000ull	   /* the longest the supervisor sleeps */
#define KILL_WAIT_NS 3000000000ull /* for the storm to end after SIGKILL */
#define TAKEN_WAIT_NS 500000000ull /* for the storm to take a signal passed on */
#define SETTLE_NS 100000000ull	   /* after the CPUs' visit, before the log is read */
#define LOG_MAX (4u << 20)	   /* bytes of records kept beyond what the storm covered */

struct log_rec {
	uint64_t seq;
	uint32_t len;
	uint32_t pad;
};

struct sup {
	const struct pmd_config *cfg;
	struct pmd_run *run;
	pid_t pid;
	int msg_fd, out_fd, err_fd, kmsg_fd, sfd;
	sigset_t set;
	struct pmd_storm_view v; /* what the storm said (src/run/storm.c) */
	/* the log's records after the last the storm's events cover: struct log_rec, bytes */
	char *log;
	size_t log_len, log_cap;
	uint64_t log_lost; /* records dropped: more than LOG_MAX came after the storm's */
	uint64_t life_ns, loop_ns, splat_ns;
	unsigned long long cpu;
	int passed; /* the first signal, passed on */
	bool reaped, killed, left;
	int status;
	char oom[200]; /* the kernel's line, if the OOM killer took the storm */
};

/* For the fatal-signal handler (on_fatal), which has no other way to them. */
static struct {
	pid_t pid;
	int out_fd, err_fd;
} fatal_to = { 0, -1, -1 };

/* ---- the storm process ------------------------------------------------------ */

/*
 * The storm is this program again, a fresh image, with "--storm=FD,SEED"
 * before the run's own arguments (src/cli/main.c). Not a forked copy of the
 * supervisor: what the fork and exec stressors fork must be the process
 * they forked before the split. A forked copy's heap cannot grow in place
 * (its first growth is a mapping of its own) and its mappings carry the
 * supervisor's anon_vma too, more to copy at every fork.
 */
static void __attribute__((noreturn))
storm_exec(pid_t parent, int msg_fd, int out_fd, int err_fd, int argc, char **argv, uint64_t seed)
{
	char path[PATH_MAX], arg[64], **args;
	ssize_t n;
	sigset_t chld;
	int i;

	/* a Ctrl-C to our group reaches it once, through us; and it dies with us */
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != parent)
		_exit(125);
	if ((out_fd >= 0 && (dup2(out_fd, STDOUT_FILENO) < 0 || close(out_fd))) ||
	    (err_fd >= 0 && (dup2(err_fd, STDERR_FILENO) < 0 || close(err_fd)))) {
		fprintf(stderr, "pmdstress: cannot start the storm process: dup2: %s\n",
			strerror(errno));
		_exit(125);
	}
	/* the one descriptor it keeps over the exec */
	args = calloc((size_t)argc + 2, sizeof(*args));
	if (fcntl(msg_fd, F_SETFD, 0) || !args) {
		fprintf(stderr, "pmdstress: cannot start the storm process: %s\n", strerror(errno));
		_exit(125);
	}
	snprintf(arg, sizeof(arg), "--storm=%d,%" PRIx64, msg_fd, seed);
	args[0] = argv[0];
	args[1] = arg;
	for (i = 1; i < argc; i++)
		args[i + 1] = argv[i];
	/* the stop signals stay blocked over the exec until its watcher takes them */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_UNBLOCK, &chld, NULL);
	/* the program's path (valgrind's, for a program it runs), or the binary itself */
	n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	path[n > 0 ? n : 0] = '\0';
	if (n <= 0 || strstr(path, " (deleted)"))
		snprintf(path, sizeof(path), "/proc/self/exe");
	execv(path, args);
	fprintf(stderr, "pmdstress: cannot start the storm process: exec %s: %s\n", path,
		strerror(errno));
	_exit(125);
}

/*
 * A pipe for one of the storm's output streams, unless it is a terminal:
 * the storm keeps that (and the stream, when no pipe can be had).
 */
static void relay_pipe(int fd, int p[2])
{
	if (isatty(fd) || pipe2(p, O_CLOEXEC)) {
		p[0] = p[1] = -1;
		return;
	}
	fcntl(p[0], F_SETFL, O_NONBLOCK);
}

static void write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* What the storm wrote to @from, to @to. */
static void relay(int *from, int to)
{
	char buf[16384];

	while (*from >= 0) {
		ssize_t n = read(*from, buf, sizeof(buf));

		if (n > 0) {
			write_all(to, buf, (size_t)n);
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			close(*from);
			*from = -1;
		}
		return;
	}
}

static unsigned long long cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut = 0, st = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (pmd_read_text(path, buf, sizeof(buf)))
		return 0;
	/* "pid (comm) S ppid ...": utime and stime are the 12th and 13th after the comm */
	p = strrchr(buf, ')');
	if (!p ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return 0;
	return ut + st;
}

/* The storm took every @sig passed on to it (none is pending in it). */
static bool signal_taken(pid_t pid, int sig)
{
	char path[64], buf[2048], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (pmd_read_text(path, buf, sizeof(buf)) || !(p = strstr(buf, "ShdPnd:")))
		return true;
	return !(strtoull(p + 7, NULL, 16) & (1ull << (sig - 1)));
}

/* ---- the kernel log, as the run goes ---------------------------------------- */

/* Forget the records the storm's events cover (their seq is at most storm_seq). */
static void log_prune(struct sup *s, size_t room)
{
	size_t off = 0;

	while (off < s->log_len) {
		struct log_rec h;

		memcpy(&h, s->log + off, sizeof(h));
		if (h.seq > s->v.kmsg_seq && s->log_len - off + room <= LOG_MAX)
			break;
		if (h.seq > s->v.kmsg_seq)
			s->log_lost++; /* no room: the oldest goes */
		off += sizeof(h) + h.len;
	}
	if (!off)
		return; /* (nothing kept yet: no buffer to move in) */
	memmove(s->log, s->log + off, s->log_len - off);
	s->log_len -= off;
}

static void log_keep(struct sup *s, uint64_t seq, const char *rec, size_t len)
{
	struct log_rec h = { .seq = seq, .len = (uint32_t)len };
	size_t need = sizeof(h) + len;

	log_prune(s, need);
	if (s->log_cap - s->log_len < need) {
		size_t cap = s->log_cap ? 2 * s->log_cap : 65536;
		char *b;

		while (cap - s->log_len < need)
			cap *= 2;
		b = realloc(s->log, cap);
		if (!b) {
			s->log_lost++;
			return;
		}
		s->log = b;
		s->log_cap = cap;
	}
	memcpy(s->log + s->log_len, &h, sizeof(h));
	memcpy(s->log + s->log_len + sizeof(h), rec, len);
	s->log_len += need;
}

/*
 * Our own reader, from the run's start. A splat shortens the leash; a line
 * of the OOM killer's about the storm says why it died; and every record
 * the storm's events do not cover yet is kept, to be taken after its end
 * (its teardown's splats, what it did not live to read).
 */
static void read_kmsg(struct sup *s)
{
	char buf[8192], copy[8192], who[48];

	/*
	 * In a pid namespace of its own the kernel's line names the storm by
	 * the host's pid: then by its name, "Killed process N (pmd/storm)".
	 */
	if (pmd_in_child_pidns())
		snprintf(who, sizeof(who), " (pmd/storm) ");
	else
		snprintf(who, sizeof(who), "Killed process %d ", (int)s->pid);
	while (s->kmsg_fd >= 0) {
		struct pmd_kmsg_record r;
		ssize_t n = read(s->kmsg_fd, buf, sizeof(buf) - 1);

		if (n < 0 && errno == EPIPE)
			continue;
		if (n <= 0)
			return;
		memcpy(copy, buf, (size_t)n);
		copy[n] = '\0';
		if (!pmd_kmsg_parse(copy, (size_t)n, &r))
			continue;
		if (pmd_kmsg_match(r.text) && !s->splat_ns)
			s->splat_ns = pmd_now_ns();
		if (s->pid > 0 && strstr(r.text, "Killed process ") && strstr(r.text, who))
			snprintf(s->oom, sizeof(s->oom), "%s", r.text);
		if (r.seq > s->v.kmsg_seq)
			log_keep(s, r.seq, buf, (size_t)n);
	}
}

/* Hand the records after the storm's last to the monitor, as the storm would have. */
static void log_after_storm(struct sup *s)
{
	char rec[8192];
	size_t off = 0;

	read_kmsg(s);
	log_prune(s, 0);
	while (off < s->log_len) {
		struct log_rec h;

		memcpy(&h, s->log + off, sizeof(h));
		memcpy(rec, s->log + off + sizeof(h), h.len);
		rec[h.len] = '\0';
		pmd_monitor_record(s->run, rec, h.len);
		off += sizeof(h) + h.len;
	}
	if (s->log_lost)
		fprintf(stderr,
			"pmdstress: %" PRIu64 " kernel log records after the storm's last "
			"were not kept (more than %u MiB)\n",
			s->log_lost, LOG_MAX >> 20);
}

/* Open the log at its end: what the kernel says from now on. */
static void open_kmsg(struct sup *s)
{
	s->kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (s->kmsg_fd >= 0)
		lseek(s->kmsg_fd, 0, SEEK_END);
}

/* ---- the loop ----------------------------------------------------------------- */

static void try_reap(struct sup *s)
{
	int st;

	if (s->reaped || s->left || s->pid <= 0)
		return;
	if (waitpid(s->pid, &st, WNOHANG) == s->pid) {
		s->reaped = true;
		s->status = st;
		fatal_to.pid = 0; /* its pid may be another process's now */
	}
}

/* What the storm sent, taken; its pipe closed at its end or at a message that failed. */
static void read_messages(struct sup *s)
{
	uint64_t last = s->v.last_ns;

	if (s->msg_fd >= 0 && !pmd_storm_read(&s->v, s->msg_fd)) {
		close(s->msg_fd);
		s->msg_fd = -1;
	}
	if (s->v.last_ns != last)
		s->life_ns = s->v.last_ns;
}

static void drain(struct sup *s)
{
	read_messages(s);
	relay(&s->out_fd, STDOUT_FILENO);
	relay(&s->err_fd, STDERR_FILENO);
}

static void pump(struct sup *s, uint64_t ns);

/* A second signal: no report. The storm exits at once, settings restored, and so do we. */
static void __attribute__((noreturn)) second_signal(struct sup *s, int sig)
{
	uint64_t end;
	bool said = false;

	if (!s->reaped && !s->left) {
		/* not merged into the first one while that still waits to be taken */
		for (end = pmd_now_ns() + TAKEN_WAIT_NS;
		     s->passed && !signal_taken(s->pid, s->passed) && pmd_now_ns() < end;)
			nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
		sigqueue(s->pid, sig, (union sigval){ .sival_int = 0 });
		for (end = pmd_now_ns() + KILL_WAIT_NS; !s->reaped && pmd_now_ns() < end;) {
			drain(s);
			try_reap(s);
			if (!s->reaped)
				nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
		}
		if (!s->reaped) {
			kill(s->pid, SIGKILL);
			if (s->v.guard_pid > 0) /* its guardian puts back what it changed */
				kill(s->v.guard_pid, SIGUSR2);
		}
		kill(-s->pid, SIGKILL); /* fork children left in its group */
		/* it said so itself: "... stopped the run: exiting at once, no report (exit 6)" */
		said = s->reaped && WIFEXITED(s->status) &&
		       WEXITSTATUS(s->status) == PMD_EXIT_NO_REPORT;
	}
	drain(s);
	if (!said)
		pmd_signal_again(s->run->stop_signal, sig, SI_QUEUE, 0); /* says so, exits 6 */
	_exit(PMD_EXIT_NO_REPORT);
}

/* The next signal taken, 0 if none is pending; how it was sent in @code, by @from. */
static int next_signal(struct sup *s, int *code, pid_t *from)
{
	static const struct timespec now;
	struct signalfd_siginfo si;
	siginfo_t info;
	int sig;

	if (s->sfd >= 0) {
		if (read(s->sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
			return 0;
		*code = si.ssi_code;
		*from = (pid_t)si.ssi_pid;
		return (int)si.ssi_signo;
	}
	sig = sigtimedwait(&s->set, &info, &now);
	if (sig <= 0)
		return 0;
	*code = info.si_code;
	*from = info.si_pid;
	return sig;
}

static void take_signals(struct sup *s)
{
	pid_t from;
	int sig, code;

	while ((sig = next_signal(s, &code, &from))) {
		if (sig == SIGCHLD)
			continue;
		if (s->run->stop_signal && pmd_signal_repeat(s->run->stop_signal, sig, code)) {
			pmd_signal_again(s->run->stop_signal, sig, code, from); /* said once */
			continue;
		}
		if (s->run->stop_signal)
			second_signal(s, sig);
		s->run->stop_signal = sig;
		s->passed = sig;
		if (!s->reaped && !s->left)
			kill(s->pid, sig);
	}
}

/* One wait of at most @ns for whatever comes, and what it brought. */
static void pump(struct sup *s, uint64_t ns)
{
	struct pollfd p[5];
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };
	nfds_t n = 0;
	uint64_t now;

	p[n++] = (struct pollfd){ .fd = s->sfd, .events = POLLIN };
	p[n++] = (struct pollfd){ .fd = s->msg_fd, .events = POLLIN };
	p[n++] = (struct pollfd){ .fd = s->out_fd, .events = POLLIN };
	p[n++] = (struct pollfd){ .fd = s->err_fd, .events = POLLIN };
	p[n++] = (struct pollfd){ .fd = s->kmsg_fd, .events = POLLIN };
	ppoll(p, n, &ts, NULL);
	now = pmd_now_ns();
	/* we were not looking (our output blocked, or we were stopped): not the storm's silence */
	if (s->loop_ns && now - s->loop_ns > 2 * TICK_NS)
		s->life_ns += now - s->loop_ns;
	s->loop_ns = now;
	take_signals(s);
	drain(s);
	read_kmsg(s);
	try_reap(s);
}

static uint64_t leash(const struct sup *s)
{
	uint64_t l = s->cfg->hang_timeout_ns;

	return s->splat_ns && l > PMD_SPLAT_LEASH_NS ? PMD_SPLAT_LEASH_NS : l;
}

/* Silent, and outside the main loop not using CPU either, for longer than the leash. */
static bool storm_stuck(struct sup *s)
{
	uint64_t now = pmd_now_ns(), since;

	if (s->v.phase != PMD_PHASE_RUN || s->v.ended) {
		unsigned long long t = cpu_ticks(s->pid);

		if (t != s->cpu) {
			s->cpu = t;
			s->life_ns = now;
		}
	}
	since = s->life_ns > s->v.quiet_until_ns ? s->life_ns : s->v.quiet_until_ns;
	return now > since + leash(s);
}

static void append_dump(struct pmd_run *run, const char *title, const char *dump)
{
	size_t a = run->mon.hang_dump ? strlen(run->mon.hang_dump) : 0;
	char *t = malloc(a + strlen(title) + strlen(dump) + 2);

	if (!t)
		return;
	sprintf(t, "%s%s\n%s", a ? run->mon.hang_dump : "", title, dump);
	free(run->mon.hang_dump);
	run->mon.hang_dump = t;
}

/* The first task line of a dump, without its newline: "task T comm state S wchan W". */
static void first_task(const char *dump, char *out, size_t len)
{
	const char *nl = dump ? strchr(dump, '\n') : NULL;

	snprintf(out, len, "%.*s", nl ? (int)(nl - dump) : 0, nl ? dump : "");
}

static void post_event(struct sup *s, enum pmd_event_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void post_event(struct sup *s, enum pmd_event_kind kind, const char *fmt, ...)
{
	struct pmd_event ev;
	va_list ap;

	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.t_ns = pmd_now_ns();
	ev.worker = -1;
	ev.chunk = -1;
	va_start(ap, fmt);
	vsnprintf(ev.text, sizeof(ev.text), fmt, ap);
	va_end(ap);
	pmd_event_post(s->run, &ev);
}

static void declare_stuck(struct sup *s)
{
	static const char *const doing[] = { "made no progress in its start-up",
					     "stopped answering in its main loop",
					     "made no progress in its single worker's round",
					     "made no progress in its wind-down" };
	uint64_t since = s->life_ns > s->v.quiet_until_ns ? s->life_ns : s->v.quiet_until_ns;
	uint64_t silent = pmd_now_ns() - since;
	char *dump = pmd_task_dump(s->pid);
	char first[200];

	first_task(dump, first, sizeof(first));
	post_event(s, PMD_EV_HANG,
		   "the storm process (pid %d) %s for %.1fs%s (%s); its tasks are "
		   "in the report",
		   (int)s->pid,
		   s->v.ended ? "did not end after its results" : doing[s->v.phase & 3],
		   (double)silent / 1e9, s->splat_ns ? ", after a kernel splat" : "", first);
	if (dump)
		append_dump(s->run, "storm process, when it was found stuck:", dump);
	free(dump);
	if (!s->run->stop_reason[0] || !s->v.ended)
		snprintf(s->run->stop_reason, sizeof(s->run->stop_reason), "hang");
}

/* SIGKILL, and wait a while; an unkillable storm is left behind. */
static void kill_storm(struct sup *s)
{
	uint64_t end = pmd_now_ns() + KILL_WAIT_NS;
	char *dump, first[200];

	s->killed = true;
	kill(s->pid, SIGKILL);
	while (!s->reaped && pmd_now_ns() < end)
		pump(s, 100000000ull);
	if (s->reaped)
		return;
	s->left = true;
	dump = pmd_task_dump(s->pid);
	first_task(dump, first, sizeof(first));
	fprintf(stderr,
		"pmdstress: the storm process (pid %d) did not end within %.0fs of "
		"SIGKILL: a task of it is asleep in the kernel (%s); it is left behind "
		"and ends when the kernel lets it go\n",
		(int)s->pid, (double)KILL_WAIT_NS / 1e9, first);
	if (dump)
		append_dump(s->run, "storm process, left behind after SIGKILL:", dump);
	free(dump);
	/* its guardian holds what it changed; the storm may never let go of it */
	if (s->v.guard_pid > 0)
		kill(s->v.guard_pid, SIGUSR2);
}

static void supervise(struct sup *s)
{
	s->life_ns = pmd_now_ns();
	while (!s->reaped) {
		pump(s, TICK_NS);
		if (s->reaped)
			break;
		if (storm_stuck(s)) {
			declare_stuck(s);
			kill_storm(s);
			break;
		}
	}
	drain(s);
}

/* ---- a fatal signal for the supervisor ------------------------------------------ */

/*
 * SIGQUIT, SIGPIPE (our output closed), a crash of ours: the storm gets it
 * too, so that its handler puts back what it changed and dies of it
 * (src/run/fatal.c); its last words are passed on, and we die of it as well.
 * read, write, kill, waitpid, nanosleep and sigaction only.
 */
static void on_fatal(int sig)
{
	int saved = errno, out = fatal_to.out_fd, err = fatal_to.err_fd;
	struct sigaction dfl;
	unsigned i;

	if (fatal_to.pid > 0) {
		kill(fatal_to.pid, sig);
		for (i = 0; i < 2000 && waitpid(fatal_to.pid, NULL, WNOHANG) == 0; i++)
			nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
		relay(&out, STDOUT_FILENO);
		relay(&err, STDERR_FILENO);
	}
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	raise(sig); /* blocked while we run: it kills us as the handler returns */
	errno = saved;
}

static void fatal_install(const struct sup *s)
{
	static const int sigs[] = { SIGSEGV, SIGBUS,  SIGILL,  SIGFPE,	SIGABRT,
				    SIGSYS,  SIGQUIT, SIGPIPE, SIGXCPU, SIGXFSZ };
	struct sigaction sa;
	unsigned i;

	fatal_to.pid = s->pid;
	fatal_to.out_fd = s->out_fd;
	fatal_to.err_fd = s->err_fd;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fatal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

/* ---- the end -------------------------------------------------------------------- */

/*
 * Run on every CPU we may use, once. A CPU the storm's last thread left
 * may keep its mm (lazily, as the idle task's) until another process runs
 * there; the mm's last checks (check_mm(): "Bad rss-counter state",
 * pgtables_bytes) run only when it lets go.
 */
static void visit_cpus(void)
{
	cpu_set_t all, one;
	int c;

	if (sched_getaffinity(0, sizeof(all), &all))
		return;
	for (c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, &all))
			continue;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		if (!sched_setaffinity(0, sizeof(one), &one))
			sched_yield();
	}
	sched_setaffinity(0, sizeof(all), &all);
}

/*
 * khugepaged holds an mm it scans (one with MADV_HUGEPAGE areas) while its
 * cursor rests there, and lets it go only at its next pass, scan_sleep_millisecs
 * (10 s) later: until then the storm's mm is not freed and the splats of its
 * last checks are not printed (in a guest that ran only the storm, never
 * before pmdstress ended). A write of the setting, its own value, wakes
 * khugepaged for a pass now, and changes nothing.
 */
static void wake_khugepaged(void)
{
	static const char path[] =
		"/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs";
	char buf[32];
	ssize_t n;
	int fd;

	if (pmd_read_text(path, buf, sizeof(buf)) || !buf[0])
		return;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return; /* not root: the splats come when khugepaged comes */
	n = write(fd, buf, strlen(buf));
	(void)n; /* the same: nothing else to do about it */
	close(fd);
}

/*
 * What the storm left when it died (its fork and exec stressors' children,
 * killed by PR_SET_PDEATHSIG, and its settings guardian, which puts back
 * what it changed when it sees the storm gone) comes to us, the subreaper:
 * reap it, waiting a little for the guardian, so that pmdstress leaves no
 * process and its settings are back when it exits.
 */
static void reap_orphans(void)
{
	uint64_t end = pmd_now_ns() + KILL_WAIT_NS;

	while (pmd_now_ns() < end) {
		pid_t pid = waitpid(-1, NULL, WNOHANG);

		if (pid > 0)
			continue;
		if (pid < 0 && errno != EINTR)
			return; /* ECHILD: none left */
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	}
}

/* What the storm's end means; a status to exit with at once, or 0 to report. */
static int storm_gone(struct sup *s)
{
	int st = s->status, sig;

	if (s->left || s->killed)
		return 0; /* a hang, posted when it was found */
	if (WIFEXITED(st) && !s->v.ended) {
		if (WEXITSTATUS(st))
			return WEXITSTATUS(st); /* a run that could not start: it said why */
		post_event(s, PMD_EV_ERROR,
			   "the storm process (pid %d) ended without its results%s", (int)s->pid,
			   s->v.damaged ? " (a message of it failed its checks)" : "");
		return 0;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st)) {
		/* after its results: a sanitizer's finding at its exit, say */
		post_event(s, PMD_EV_ERROR,
			   "the storm process (pid %d) exited with %d after its "
			   "results",
			   (int)s->pid, WEXITSTATUS(st));
		return 0;
	}
	if (!WIFSIGNALED(st) || s->v.ended)
		return 0;
	sig = WTERMSIG(st);
	if (sig == SIGKILL && s->oom[0]) {
		s->run->resource_errors++;
		post_event(s, PMD_EV_ERROR,
			   "the storm process (pid %d) was killed by the OOM "
			   "killer: %.200s",
			   (int)s->pid, s->oom);
		snprintf(s->run->stop_reason, sizeof(s->run->stop_reason), "out of memory");
		return 0;
	}
	s->run->storm_signal = sig;
	post_event(s, PMD_EV_SIGNAL,
		   "the storm process (pid %d) died of signal %d (%s)%s, which "
		   "pmdstress did not send: its own memory or code was hit, not an arena chunk (a "
		   "kernel that corrupts memory does this)",
		   (int)s->pid, sig, strsignal(sig), WCOREDUMP(st) ? ", core dumped" : "");
	snprintf(s->run->stop_reason, sizeof(s->run->stop_reason), "%s", strsignal(sig));
	return 0;
}

static uint64_t read_taint(void)
{
	char buf[32];

	return pmd_read_text("/proc/sys/kernel/tainted", buf, sizeof(buf))
		   ? 0
		   : strtoull(buf, NULL, 10);
}

static void sup_free(struct sup *s)
{
	struct pmd_run *run = s->run;
	unsigned i, k;

	for (i = 0; i < PMD_MAX_STRESSORS; i++)
		for (k = 0; k < PMD_MAX_METRICS; k++)
			pmd_hist_free(&run->totals[i].hist[k]);
	free(run->rounds);
	pmd_events_fini(run);
	free(run->workers);
	free(run->numa.where);
	free(run->numa.bind_cpus);
	free(run->mon.klog);
	free(run->mon.hang_dump);
	pmd_storm_view_free(&s->v);
	free(s->log);
	if (s->kmsg_fd >= 0)
		close(s->kmsg_fd);
	if (s->sfd >= 0)
		close(s->sfd);
	if (s->msg_fd >= 0)
		close(s->msg_fd);
	if (s->out_fd >= 0)
		close(s->out_fd);
	if (s->err_fd >= 0)
		close(s->err_fd);
	free(run);
}

int pmd_run_main(const struct pmd_config *cfg, int argc, char **argv)
{
	struct sup s = { .cfg = cfg, .msg_fd = -1, .out_fd = -1, .err_fd = -1, .sfd = -1 };
	int msg[2], out[2], err[2], rc, e, kmsg_errno;
	pid_t parent = getpid();
	struct pmd_run *run;
	sigset_t watch;
	uint64_t seed;

	/* the storm blocks the stop signals itself; here SIGCHLD comes with them */
	sigemptyset(&s.set);
	sigaddset(&s.set, SIGINT);
	sigaddset(&s.set, SIGTERM);
	sigaddset(&s.set, SIGHUP);
	sigaddset(&s.set, SIGCHLD);
	watch = s.set;
	sigdelset(&watch, SIGCHLD);
	sigaddset(&watch, SIGUSR1); /* the signal watcher's own wake-up (src/run/sigwatch.c) */
	sigaddset(&s.set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &s.set, NULL);
	s.run = s.v.run = run = calloc(1, sizeof(*run));
	s.v.cfg = cfg;
	if (!run || pipe2(msg, O_CLOEXEC)) {
		e = errno;
		fprintf(stderr, "pmdstress: cannot start the storm process: %s: %s\n",
			run ? "pipe" : "no memory for the run", strerror(e));
		free(run);
		return e == EMFILE || e == ENFILE || e == ENOMEM ? 125 : 5;
	}
	run->cfg = cfg;
	run->storm_fd = -1;
	run->mon.kmsg_fd = -1;
	run->pagemap_fd = run->kpageflags_fd = -1;
	run->thp_share_end = -1;
	pmd_events_init(run);
	open_kmsg(&s);
	kmsg_errno = errno;
	/* for a storm that tells nothing: the log, the mask and the counters from our start */
	snprintf(run->mon.kmsg_status, sizeof(run->mon.kmsg_status),
		 s.kmsg_fd >= 0 ? "reading" : "unreadable (%s): kernel splats will not be seen",
		 strerror(kmsg_errno));
	run->mon.taint0 = run->mon.taint_seen = read_taint();
	run->mon.taint_ok = !access("/proc/sys/kernel/tainted", R_OK);
	pmd_vmstat_read(&run->vm_before);
	/* descriptors running out (RLIMIT_NOFILE), these go first */
	relay_pipe(STDOUT_FILENO, out);
	relay_pipe(STDERR_FILENO, err);
	/* what the storm leaves when it dies comes to us (reap_orphans()) */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	fflush(NULL);	       /* nothing buffered is written twice */
	seed = cfg->seed_used; /* the configuration is in the pool, which no fork child has */
	s.pid = fork();
	if (s.pid == 0) {
		/* ours, not the storm's: gone now, as the limit on descriptors counts them */
		close(msg[0]);
		if (out[0] >= 0)
			close(out[0]);
		if (err[0] >= 0)
			close(err[0]);
		if (s.kmsg_fd >= 0)
			close(s.kmsg_fd);
		storm_exec(parent, msg[1], out[1], err[1], argc, argv, seed);
	}
	e = errno;
	close(msg[1]);
	if (out[1] >= 0)
		close(out[1]);
	if (err[1] >= 0)
		close(err[1]);
	s.msg_fd = msg[0];
	s.out_fd = out[0];
	s.err_fd = err[0];
	fcntl(s.msg_fd, F_SETFL, O_NONBLOCK);
	if (s.pid < 0) {
		fprintf(stderr, "pmdstress: cannot start the storm process: fork: %s\n",
			strerror(e));
		sup_free(&s);
		return e == EAGAIN || e == ENOMEM ? 125 : 5;
	}
	fatal_install(&s);
	s.sfd = signalfd(-1, &s.set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s.sfd < 0)
		fprintf(stderr,
			"pmdstress: supervisor: no signalfd (%s): signals are taken "
			"every %llu ms\n",
			strerror(errno), (unsigned long long)(TICK_NS / 1000000));

	supervise(&s);
	if (s.reaped) {
		/*
		 * What is left in its process group: fork children that
		 * PR_SET_PDEATHSIG did not end (under memcheck one spun on for
		 * good after the storm had gone); its guardian has a session of
		 * its own, the exec stressor's children groups of their own.
		 */
		kill(-s.pid, SIGKILL);
		reap_orphans();
		/* a storm killed mid-round left its trace instance tracing on */
		pmd_race_trace_remove(s.pid);
	}
	/* from here on a signal ends the report, a second one the process (src/run/sigwatch.c) */
	pmd_sigwatch_start(&run->sigwatch, run, &watch);
	rc = storm_gone(&s);
	if (rc) {
		pmd_sigwatch_stop(&run->sigwatch);
		sup_free(&s);
		return rc;
	}
	if (!s.v.got_run) {
		pmd_sysinfo_read(&run->sys);
		pmd_numa_init(&run->numa);
	}
	if (!run->t_end)
		run->t_end = pmd_now_ns();
	if (!s.v.ended || !run->vm_after.n)
		pmd_vmstat_read(&run->vm_after);
	/* the storm's mm is gone: what its teardown printed is in the log now */
	wake_khugepaged();
	visit_cpus();
	nanosleep(&(struct timespec){ .tv_nsec = SETTLE_NS }, NULL);
	if (!run->mon.klog)
		run->mon.klog = calloc(1, PMD_KLOG_MAX);
	run->mon.context = "after the storm's last read of the log; read by its supervisor";
	log_after_storm(&s);
	pmd_monitor_stop(run); /* the taint mask */
	pmd_events_drain(run);
	if (run->memcg.dir[0] && !s.left)
		pmd_memcg_leave(&run->memcg); /* the storm's cgroup, if it could not remove it */
	rc = pmd_run_report(run, argc, argv);
	sup_free(&s);
	return rc;
}
