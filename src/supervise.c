// SPDX-License-Identifier: GPL-2.0
/*
 * The supervisor: a run is two processes. The storm (src/run.c,
 * pmd_storm_main) holds the workers, the arena and the stressors, and is
 * what a broken kernel breaks: a task that dies holding a lock leaves the
 * others asleep in the kernel, a corrupted heap kills it with SIGSEGV, and
 * the splats of its mm's teardown ("BUG: Bad rss-counter state", non-zero
 * pgtables_bytes) come after its last look at the log. So the process that
 * reads the kernel log, keeps the verdict and writes the reports is
 * another one, which shares no memory with the storm and learns what it
 * found from checked messages (src/storm.h): beats and events during the
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
 * Signals come here: the first is passed on to the storm, which stops and
 * reports as before; a second is passed on once the storm took the first,
 * and the supervisor exits with it. The storm is in a process group of its
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

#define TICK_NS 250000000ull	     /* the longest the supervisor sleeps */
#define KILL_WAIT_NS 3000000000ull   /* for the storm to end after SIGKILL */
#define TAKEN_WAIT_NS 500000000ull   /* for the storm to take a signal passed on */
#define SETTLE_NS 100000000ull	     /* after the CPUs' visit, before the log is read */
#define MSG_MAX (8u << 20)
#define LOG_MAX (4u << 20) /* bytes of records kept beyond what the storm covered */

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
	/* messages not yet taken */
	char *buf;
	size_t have, cap;
	bool damaged;  /* one failed its checks: nothing more is taken from the storm */
	bool got_run;  /* a RUN message was adopted */
	bool ended;    /* END came: the results are complete */
	uint32_t phase;
	int guard_pid;
	uint64_t storm_seq; /* the last kernel log record the storm's events cover */
	/* the log's records since then, as read: struct log_rec and its bytes, in order */
	char *log;
	size_t log_len, log_cap;
	uint64_t log_lost; /* records dropped: more than LOG_MAX came after the storm's */
	uint64_t life_ns, quiet_until_ns, loop_ns, splat_ns;
	unsigned long long cpu;
	int passed; /* the first signal, passed on */
	bool reaped, killed, left;
	int status;
	char oom[200]; /* the kernel's line, if the OOM killer took the storm */
};

/* For the fatal-signal handler (on_fatal), which has no other way to them: the storm, and its output. */
static struct {
	pid_t pid;
	int out_fd, err_fd;
} fatal_to = { 0, -1, -1 };

/* ---- the storm process ------------------------------------------------------ */

/*
 * The storm is this program again, a fresh image, with "--storm=FD,SEED"
 * before the run's own arguments (src/main.c). Not a forked copy of the
 * supervisor: what the fork and exec stressors fork must be the process
 * they forked before the split. A forked copy's heap cannot grow in place
 * (its first growth is a mapping of its own) and its mappings carry the
 * supervisor's anon_vma too, more to copy at every fork.
 */
static void __attribute__((noreturn)) storm_exec(pid_t parent, int msg_fd, int out_fd, int err_fd,
						 int argc, char **argv, uint64_t seed)
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
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
			 &st) != 2)
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

/* ---- what the storm says ---------------------------------------------------- */

static const struct pmd_stressor *known_stressor(const struct pmd_stressor *st)
{
	unsigned i;

	for (i = 0; pmd_stressors[i]; i++)
		if (pmd_stressors[i] == st)
			return st;
	return NULL;
}

static const char *known_name(const char *name)
{
	unsigned i;

	for (i = 0; name && pmd_stressors[i]; i++)
		if (pmd_stressors[i]->name == name)
			return name;
	return NULL;
}

#define TERMINATE(a) ((a)[sizeof(a) - 1] = '\0')

static void take_event(struct pmd_event *e, const struct pmd_event *from)
{
	*e = *from;
	e->stressor = known_name(from->stressor);
	if (e->ring_len > PMD_RING_LEN)
		e->ring_len = PMD_RING_LEN;
	TERMINATE(e->text);
}

/* A stressor instance as the storm had it; false if it is not one this program has. */
static bool take_sinst(struct sup *s, struct pmd_sinst *si, const struct pmd_sinst *from)
{
	const struct pmd_stressor *st = known_stressor(from->st);
	int k = st ? pmd_stressor_index(st) : -1;

	if (k < 0)
		return false;
	memset(si, 0, sizeof(*si));
	si->st = st;
	si->run = s->run;
	si->cfg = s->cfg;
	si->arena = &s->run->arena;
	si->opts = s->cfg->st[k].opts;
	si->nworkers = from->nworkers;
	memcpy(si->why, from->why, sizeof(si->why));
	TERMINATE(si->why);
	si->skipped = from->skipped ? si->why : NULL; /* src/storm.c sent it as text */
	return true;
}

static void take_totals(struct pmd_totals *t, const struct pmd_totals *from)
{
	unsigned k;

	for (k = 0; k < PMD_MAX_METRICS; k++)
		pmd_hist_free(&t->hist[k]);
	memset(t, 0, sizeof(*t));
	memcpy(t->counter, from->counter, sizeof(t->counter));
	t->faults = from->faults;
	memcpy(t->thp, from->thp, sizeof(t->thp));
	for (k = 0; k < PMD_MAX_METRICS; k++) {
		t->hist[k].count = from->hist[k].count;
		t->hist[k].sum = from->hist[k].sum;
		t->hist[k].min = from->hist[k].min;
		t->hist[k].max = from->hist[k].max;
		/* the buckets come page by page (PMD_MSG_HIST); none yet */
	}
}

static void take_counts(struct pmd_run *run, const uint64_t *ev_count, const uint64_t *class_count,
			uint64_t posted, uint64_t dropped, uint64_t resource_errors)
{
	memcpy(run->ev_count, ev_count, sizeof(run->ev_count));
	memcpy(run->class_count, class_count, sizeof(run->class_count));
	run->ev_posted = posted;
	run->dropped = dropped;
	run->resource_errors = resource_errors;
}

static void take_sys(struct pmd_sysinfo *sys, const struct pmd_sysinfo *from)
{
	unsigned i;

	*sys = *from;
	TERMINATE(sys->release);
	TERMINATE(sys->version);
	TERMINATE(sys->machine);
	TERMINATE(sys->hostname);
	TERMINATE(sys->nodes_online);
	if (sys->nthp > sizeof(sys->thp) / sizeof(sys->thp[0]))
		sys->nthp = 0;
	if (sys->nmthp > PMD_MAX_MTHP)
		sys->nmthp = 0;
	for (i = 0; i < sys->nthp; i++) {
		TERMINATE(sys->thp[i].key);
		TERMINATE(sys->thp[i].value);
	}
	for (i = 0; i < sys->nmthp; i++) {
		TERMINATE(sys->mthp[i].key);
		TERMINATE(sys->mthp[i].value);
	}
}

static void take_vmstat(struct pmd_vmstat *v, const struct pmd_vmstat *from)
{
	unsigned i;

	*v = *from;
	if (v->n > PMD_VMSTAT_MAX)
		v->n = 0;
	for (i = 0; i < v->n; i++)
		TERMINATE(v->e[i].name);
}

/*
 * The storm's run struct, field by field: what the reports read, checked;
 * its pointers are the storm's and are never followed. @final: the results
 * (else what runs, from the start of the first round).
 */
static void take_run(struct sup *s, const struct pmd_run *r, bool final)
{
	struct pmd_run *run = s->run;
	unsigned i, n;

	run->arena = r->arena;
	run->arena.chunks = NULL;
	run->arena.spare = NULL;
	run->arena.unmapped = true; /* base and size are only a record here */
	n = r->nsinst < PMD_MAX_STRESSORS ? r->nsinst : PMD_MAX_STRESSORS;
	for (i = 0; i < n && take_sinst(s, &run->sinst[i], &r->sinst[i]); i++)
		take_totals(&run->totals[i], &r->totals[i]);
	run->nsinst = i;
	run->nworkers = r->nworkers;
	run->t0 = r->t0;
	run->t_end = r->t_end;
	run->wall_start = r->wall_start;
	run->t_origin = r->t_origin;
	run->start_ns = r->start_ns;
	run->start_rss_before = r->start_rss_before;
	run->start_rss_after = r->start_rss_after;
	if (!run->stop_signal && r->stop_signal > 0 && r->stop_signal < 65)
		run->stop_signal = r->stop_signal;
	memcpy(run->stop_reason, r->stop_reason, sizeof(run->stop_reason));
	TERMINATE(run->stop_reason);
	run->aborting = r->aborting;
	memcpy(run->abort_reason, r->abort_reason, sizeof(run->abort_reason));
	TERMINATE(run->abort_reason);
	take_counts(run, r->ev_count, r->class_count, r->ev_posted, r->dropped,
		    r->resource_errors);
	run->nkept = r->nkept < PMD_EVENTS_KEPT ? r->nkept : PMD_EVENTS_KEPT;
	for (i = 0; i < run->nkept; i++)
		take_event(&run->kept[i], &r->kept[i]);
	run->dumped = r->dumped;
	/* the probe's descriptors, as "was open": pmd_thp_probe_method() reads only that */
	run->pagemap_fd = r->pagemap_fd >= 0 ? INT32_MAX : -1;
	run->kpageflags_fd = r->kpageflags_fd >= 0 ? INT32_MAX : -1;
	run->scan_ok = r->scan_ok;
	take_sys(&run->sys, &r->sys);
	free(run->numa.where);
	free(run->numa.bind_cpus);
	run->numa = r->numa;
	run->numa.bind_cpus = NULL;
	run->numa.where = NULL;
	run->numa.nwhere = 0;
	if (run->numa.nnodes > PMD_MAX_NODES)
		run->numa.nnodes = 0;
	for (i = 0; i < run->numa.nnodes; i++)
		TERMINATE(run->numa.node[i].cpus);
	TERMINATE(run->numa.balancing_was);
	run->memcg = r->memcg;
	run->memcg.on = false; /* the storm's to leave; only its folder is ours to remove */
	run->memcg.usage_fd = run->memcg.limit_fd = -1;
	TERMINATE(run->memcg.home);
	TERMINATE(run->memcg.dir);
	take_vmstat(&run->vm_before, &r->vm_before);
	if (final)
		take_vmstat(&run->vm_after, &r->vm_after);
	run->thp_share_end = r->thp_share_end;
	run->arena_rss_end = r->arena_rss_end;
	run->arena_huge_end = r->arena_huge_end;
	run->tool_rss_end = r->tool_rss_end;
	run->measured_secs = r->measured_secs;
	memcpy(run->mon.kmsg_status, r->mon.kmsg_status, sizeof(run->mon.kmsg_status));
	TERMINATE(run->mon.kmsg_status);
	run->mon.clock_off_ns = r->mon.clock_off_ns;
	run->mon.clock_slack_ns = r->mon.clock_slack_ns;
	run->mon.clock_measured = r->mon.clock_measured;
	run->mon.taint_ok = r->mon.taint_ok;
	run->mon.taint0 = r->mon.taint0;
	run->mon.taint_seen = r->mon.taint_seen;
	/* at the start its log position runs ahead of the events it forwarded */
	if (final && r->mon.kmsg_seq > s->storm_seq)
		s->storm_seq = r->mon.kmsg_seq;
	s->got_run = true;
}

static void take_workers(struct sup *s, const struct pmd_msg_worker *w, size_t n, uint32_t nwhere)
{
	struct pmd_run *run = s->run;
	size_t i;

	free(run->workers);
	free(run->numa.where);
	run->numa.where = NULL;
	run->numa.nwhere = 0;
	run->workers = calloc(n ? n : 1, sizeof(*run->workers));
	run->numa.where = calloc(n ? n : 1, sizeof(*run->numa.where));
	if (!run->workers || !run->numa.where) {
		run->nworkers = 0;
		return;
	}
	for (i = 0; i < n; i++) {
		struct pmd_worker *wk = &run->workers[i];

		wk->si = &run->sinst[w[i].sinst < run->nsinst ? w[i].sinst : 0];
		wk->index = w[i].index;
		wk->id = w[i].id;
		run->numa.where[i].bound = w[i].bound;
		run->numa.where[i].cpu = w[i].cpu;
		run->numa.where[i].node = w[i].node;
		run->numa.where[i].err = w[i].err;
	}
	run->nworkers = run->nsinst ? (unsigned)n : 0;
	run->numa.nwhere = nwhere < n ? nwhere : (unsigned)n;
}

static void take_hist(struct sup *s, const struct pmd_msg_hist *m)
{
	struct pmd_hist *h;

	if (m->sinst >= s->run->nsinst || m->metric >= PMD_MAX_METRICS || m->page >= 64 ||
	    (size_t)(m->page + 1) * PMD_MSG_HIST_BUCKETS > PMD_HIST_BUCKETS)
		return;
	h = &s->run->totals[m->sinst].hist[m->metric];
	if (!h->buckets) {
		struct pmd_hist keep = *h;

		if (pmd_hist_init(h))
			return;
		h->count = keep.count;
		h->sum = keep.sum;
		h->min = keep.min;
		h->max = keep.max;
	}
	memcpy(h->buckets + (size_t)m->page * PMD_MSG_HIST_BUCKETS, m->bucket, sizeof(m->bucket));
	h->touched |= 1ull << m->page;
}

static void take_round(struct sup *s, const struct pmd_round *from, uint32_t len)
{
	struct pmd_run *run = s->run;
	struct pmd_round *r, *grown;
	unsigned i, k;

	if (len < offsetof(struct pmd_round, st) || from->nsinst > PMD_MAX_STRESSORS ||
	    len != offsetof(struct pmd_round, st) + from->nsinst * sizeof(from->st[0]))
		return;
	if (run->nrounds == run->rounds_cap) {
		unsigned cap = run->rounds_cap ? 2 * run->rounds_cap : 8;

		grown = realloc(run->rounds, cap * sizeof(*grown));
		if (!grown)
			return;
		run->rounds = grown;
		run->rounds_cap = cap;
	}
	r = &run->rounds[run->nrounds];
	memset(r, 0, sizeof(*r));
	r->index = from->index;
	r->warmup = from->warmup;
	r->secs = from->secs;
	memcpy(r->stop_reason, from->stop_reason, sizeof(r->stop_reason));
	TERMINATE(r->stop_reason);
	for (i = 0; i < from->nsinst && take_sinst(s, &r->st[i].si, &from->st[i].si); i++) {
		take_totals(&r->st[i].t, &from->st[i].t);
		for (k = 0; k < PMD_MAX_METRICS; k++)
			r->st[i].lat[k] = from->st[i].lat[k];
	}
	r->nsinst = i;
	run->nrounds++;
}

static void take_text(struct sup *s, uint32_t which, const char *p, uint32_t len)
{
	struct pmd_monitor *m = &s->run->mon;
	/* the kernel lines grow here too (the log read after the storm): the monitor's size */
	size_t cap = which ? PMD_KLOG_MAX : (size_t)len + 1;
	char *t = calloc(1, cap);

	if (!t)
		return;
	if (len >= cap)
		len = (uint32_t)cap - 1;
	memcpy(t, p, len);
	t[len] = '\0';
	if (which == 0) {
		free(m->hang_dump);
		m->hang_dump = t;
		return;
	}
	free(m->klog);
	m->klog = t;
	m->klog_len = strlen(t);
}

static void take_beat(struct sup *s, const struct pmd_beat *b, uint64_t now)
{
	s->phase = b->phase;
	s->quiet_until_ns = b->quiet_ns ? now + b->quiet_ns : 0;
	s->guard_pid = b->guard_pid > 0 ? b->guard_pid : 0;
	if (b->kmsg_seq > s->storm_seq)
		s->storm_seq = b->kmsg_seq;
	if (s->ended)
		return;
	if (!s->run->t0) {
		s->run->t0 = b->t0;
		s->run->t_origin = b->t_origin;
	}
	take_counts(s->run, b->ev_count, b->class_count, b->ev_posted, b->dropped,
		    b->resource_errors);
}

/* One message; false if it cannot be one the storm meant to send. */
static bool take_message(struct sup *s, const struct pmd_msg_hdr *h, const char *p, uint64_t now)
{
	struct pmd_run *run = s->run;

	switch (h->type) {
	case PMD_MSG_BEAT:
		if (h->len != sizeof(struct pmd_beat))
			return false;
		take_beat(s, (const struct pmd_beat *)p, now);
		return true;
	case PMD_MSG_EVENT:
		if (h->len != sizeof(struct pmd_event))
			return false;
		if (run->nkept < PMD_EVENTS_KEPT)
			take_event(&run->kept[run->nkept++], (const struct pmd_event *)p);
		return true;
	case PMD_MSG_RUN:
		if (h->len != sizeof(struct pmd_run))
			return false;
		take_run(s, (const struct pmd_run *)p, h->arg == 1);
		return true;
	case PMD_MSG_WORKERS:
		if (h->len % sizeof(struct pmd_msg_worker))
			return false;
		take_workers(s, (const struct pmd_msg_worker *)p,
			     h->len / sizeof(struct pmd_msg_worker), h->arg);
		return true;
	case PMD_MSG_HIST:
		if (h->len != sizeof(struct pmd_msg_hist))
			return false;
		take_hist(s, (const struct pmd_msg_hist *)p);
		return true;
	case PMD_MSG_ROUND:
		take_round(s, (const struct pmd_round *)p, h->len);
		return true;
	case PMD_MSG_TEXT:
		take_text(s, h->arg, p, h->len);
		return true;
	case PMD_MSG_END:
		s->ended = true;
		return true;
	}
	return false;
}

/* Read what the storm sent and take every whole message. */
static void read_messages(struct sup *s)
{
	uint64_t now = pmd_now_ns();
	size_t off = 0;

	while (s->msg_fd >= 0) {
		ssize_t n;

		if (s->cap - s->have < 65536) {
			size_t cap = s->cap ? 2 * s->cap : 1u << 20;
			char *b = cap <= 2 * (size_t)MSG_MAX ? realloc(s->buf, cap) : NULL;

			if (!b) {
				s->damaged = true;
				break;
			}
			s->buf = b;
			s->cap = cap;
		}
		n = read(s->msg_fd, s->buf + s->have, s->cap - s->have);
		if (n > 0) {
			s->have += (size_t)n;
			s->life_ns = now;
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			close(s->msg_fd);
			s->msg_fd = -1;
		}
		break;
	}
	while (!s->damaged && s->have - off >= sizeof(struct pmd_msg_hdr)) {
		struct pmd_msg_hdr h;
		const char *p = s->buf + off + sizeof(h);

		memcpy(&h, s->buf + off, sizeof(h));
		if (h.magic != PMD_MSG_MAGIC || h.len > MSG_MAX) {
			s->damaged = true;
			break;
		}
		if (s->have - off - sizeof(h) < h.len)
			break;
		/* a payload is taken aligned: the run struct holds 8-byte fields */
		if (h.len && ((uintptr_t)p & 7)) {
			memmove(s->buf + off + sizeof(h) - ((uintptr_t)p & 7), p, s->have - off - sizeof(h));
			s->have -= (uintptr_t)p & 7;
			off -= (uintptr_t)p & 7;
			p = s->buf + off + sizeof(h);
		}
		if (pmd_msg_sum(p, h.len) != h.sum || !take_message(s, &h, p, now)) {
			s->damaged = true;
			break;
		}
		off += sizeof(h) + h.len;
	}
	if (s->damaged) {
		if (s->msg_fd >= 0)
			close(s->msg_fd);
		s->msg_fd = -1;
		s->have = 0;
		return;
	}
	memmove(s->buf, s->buf + off, s->have - off);
	s->have -= off;
}

/* ---- the kernel log, as the run goes ---------------------------------------- */

/* Forget the records the storm's events cover (their seq is at most storm_seq). */
static void log_prune(struct sup *s, size_t room)
{
	size_t off = 0;

	while (off < s->log_len) {
		struct log_rec h;

		memcpy(&h, s->log + off, sizeof(h));
		if (h.seq > s->storm_seq && s->log_len - off + room <= LOG_MAX)
			break;
		if (h.seq > s->storm_seq)
			s->log_lost++; /* no room: the oldest goes */
		off += sizeof(h) + h.len;
	}
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
		if (s->pid > 0 && strstr(r.text, who))
			snprintf(s->oom, sizeof(s->oom), "%s", r.text);
		if (r.seq > s->storm_seq)
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
		fprintf(stderr, "pmdstress: %" PRIu64 " kernel log records after the storm's last "
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

static void drain(struct sup *s)
{
	read_messages(s);
	relay(&s->out_fd, STDOUT_FILENO);
	relay(&s->err_fd, STDERR_FILENO);
}

static void pump(struct sup *s, uint64_t ns);

/* A second signal: no report. The storm exits with it, settings restored. */
static void __attribute__((noreturn)) second_signal(struct sup *s, int sig)
{
	uint64_t end;
	bool said = false;

	if (!s->reaped && !s->left) {
		/* not merged into the first one while that still waits to be taken */
		for (end = pmd_now_ns() + TAKEN_WAIT_NS;
		     !signal_taken(s->pid, s->passed) && pmd_now_ns() < end;)
			nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
		kill(s->pid, sig);
		for (end = pmd_now_ns() + KILL_WAIT_NS; !s->reaped && pmd_now_ns() < end;) {
			drain(s);
			try_reap(s);
			if (!s->reaped)
				nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
		}
		if (!s->reaped)
			kill(s->pid, SIGKILL);
		/* it said so itself: "second ...: exiting at once, no report" */
		said = s->reaped && WIFEXITED(s->status) && WEXITSTATUS(s->status) == 128 + sig;
	}
	drain(s);
	if (!said)
		fprintf(stderr, "\npmdstress: second %s: exiting at once, no report\n",
			strsignal(sig));
	_exit(128 + sig);
}

/* The next signal taken, 0 if none is pending. */
static int next_signal(struct sup *s)
{
	static const struct timespec now;
	struct signalfd_siginfo si;
	int sig;

	if (s->sfd >= 0)
		return read(s->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si) ? (int)si.ssi_signo : 0;
	sig = sigtimedwait(&s->set, NULL, &now);
	return sig > 0 ? sig : 0;
}

static void take_signals(struct sup *s)
{
	int sig;

	while ((sig = next_signal(s))) {
		if (sig == SIGCHLD)
			continue;
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

	if (s->phase != PMD_PHASE_RUN || s->ended) {
		unsigned long long t = cpu_ticks(s->pid);

		if (t != s->cpu) {
			s->cpu = t;
			s->life_ns = now;
		}
	}
	since = s->life_ns > s->quiet_until_ns ? s->life_ns : s->quiet_until_ns;
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
	uint64_t silent = pmd_now_ns() - (s->life_ns > s->quiet_until_ns ? s->life_ns
									 : s->quiet_until_ns);
	char *dump = pmd_task_dump(s->pid);
	char first[200];

	first_task(dump, first, sizeof(first));
	post_event(s, PMD_EV_HANG, "the storm process (pid %d) %s for %.1fs%s (%s); its tasks are "
		   "in the report", (int)s->pid,
		   s->ended ? "did not end after its results" : doing[s->phase & 3],
		   (double)silent / 1e9, s->splat_ns ? ", after a kernel splat" : "", first);
	if (dump)
		append_dump(s->run, "storm process, when it was found stuck:", dump);
	free(dump);
	if (!s->run->stop_reason[0] || !s->ended)
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
	fprintf(stderr, "pmdstress: the storm process (pid %d) did not end within %.0fs of "
			"SIGKILL: a task of it is asleep in the kernel (%s); it is left behind "
			"and ends when the kernel lets it go\n",
		(int)s->pid, (double)KILL_WAIT_NS / 1e9, first);
	if (dump)
		append_dump(s->run, "storm process, left behind after SIGKILL:", dump);
	free(dump);
	/* its guardian holds what it changed; the storm may never let go of it */
	if (s->guard_pid > 0)
		kill(s->guard_pid, SIGUSR2);
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
 * (src/fatal.c); its last words are passed on, and we die of it as well.
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
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL,  SIGFPE,  SIGABRT,
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
	if (WIFEXITED(st) && !s->ended) {
		if (WEXITSTATUS(st))
			return WEXITSTATUS(st); /* a run that could not start: it said why */
		post_event(s, PMD_EV_ERROR, "the storm process (pid %d) ended without its results%s",
			   (int)s->pid, s->damaged ? " (a message of it failed its checks)" : "");
		return 0;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st)) {
		/* after its results: a sanitizer's finding at its exit, say */
		post_event(s, PMD_EV_ERROR, "the storm process (pid %d) exited with %d after its "
			   "results", (int)s->pid, WEXITSTATUS(st));
		return 0;
	}
	if (!WIFSIGNALED(st) || s->ended)
		return 0;
	sig = WTERMSIG(st);
	if (sig == SIGKILL && s->oom[0]) {
		s->run->resource_errors++;
		post_event(s, PMD_EV_ERROR, "the storm process (pid %d) was killed by the OOM "
			   "killer: %.200s", (int)s->pid, s->oom);
		snprintf(s->run->stop_reason, sizeof(s->run->stop_reason), "out of memory");
		return 0;
	}
	s->run->storm_signal = sig;
	post_event(s, PMD_EV_SIGNAL, "the storm process (pid %d) died of signal %d (%s)%s, which "
		   "pmdstress did not send: its own memory or code was hit, not an arena chunk (a "
		   "kernel that corrupts memory does this)", (int)s->pid, sig, strsignal(sig),
		   WCOREDUMP(st) ? ", core dumped" : "");
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
	free(run->workers);
	free(run->numa.where);
	free(run->numa.bind_cpus);
	free(run->mon.klog);
	free(run->mon.hang_dump);
	free(s->buf);
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
	sigaddset(&watch, SIGUSR1); /* the signal watcher's own wake-up (src/sigwatch.c) */
	sigaddset(&s.set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &s.set, NULL);
	s.run = run = calloc(1, sizeof(*run));
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
	fflush(NULL); /* nothing buffered is written twice */
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
		fprintf(stderr, "pmdstress: cannot start the storm process: fork: %s\n", strerror(e));
		sup_free(&s);
		return e == EAGAIN || e == ENOMEM ? 125 : 5;
	}
	fatal_install(&s);
	s.sfd = signalfd(-1, &s.set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s.sfd < 0)
		fprintf(stderr, "pmdstress: supervisor: no signalfd (%s): signals are taken "
				"every %llu ms\n", strerror(errno),
			(unsigned long long)(TICK_NS / 1000000));

	supervise(&s);
	if (s.reaped)
		reap_orphans();
	/* from here on a signal ends the report, a second one the process (src/sigwatch.c) */
	pmd_sigwatch_start(&run->sigwatch, run, &watch);
	rc = storm_gone(&s);
	if (rc) {
		pmd_sigwatch_stop(&run->sigwatch);
		sup_free(&s);
		return rc;
	}
	if (!s.got_run) {
		pmd_sysinfo_read(&run->sys);
		pmd_numa_init(&run->numa);
	}
	if (!run->t_end)
		run->t_end = pmd_now_ns();
	if (!s.ended || !run->vm_after.n)
		pmd_vmstat_read(&run->vm_after);
	/* the storm's mm is gone: what its teardown printed is in the log now */
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
