// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel oracle and the watchdog. /dev/kmsg is opened and seeked to its
 * end before the workers start, so only what the kernel says during the run
 * is read, at every priority. A matching line becomes an event with the
 * kernel's text, its timestamp on the run's clock, and the stressors and
 * chunks that were active then (chunks with an operation in their ring
 * within 100 ms before the line). As root, a marker line written at the
 * start and read back tells how far printk's clock is from the run's; else
 * they are taken to be the same, and the chunk window is widened. New taint
 * bits become an event with their letters. A worker whose heartbeat does
 * not move for --hang-timeout is a hang: every task's state, wchan and (as
 * root) kernel stack are dumped, and the run ends with its report, exit 4.
 */
#include "monitor.h"

#include "kmsg.h"
#include "run.h"
#include "stall.h"
#include "sysinfo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* the taint mask and the heartbeats: how often they are looked at */
#define SLOW_NS 500000000ull
/* how far apart printk's clock and CLOCK_MONOTONIC may be when we cannot measure it */
#define CLOCK_SLACK_UNKNOWN 250000000ull

static bool read_taint(uint64_t *mask)
{
	char buf[32];

	if (pmd_read_text("/proc/sys/kernel/tainted", buf, sizeof(buf)))
		return false;
	*mask = strtoull(buf, NULL, 10);
	return true;
}

/*
 * printk stamps a record with local_clock(), which is not CLOCK_MONOTONIC:
 * they start apart (here by a constant 53 ms) and part further over a
 * suspend. Where we may write to the log (root), one line of ours, stamped
 * between two reads of our clock and read back, gives the difference to
 * within half the write's duration; it also shows whoever reads dmesg
 * where the run began. It never matches a splat pattern (the unit test).
 */
static void measure_clock(struct pmd_run *run)
{
	struct pmd_monitor *m = &run->mon;
	char line[128], buf[8192];
	uint64_t before, after;
	int fd, len;

	m->clock_off_ns = 0;
	m->clock_slack_ns = CLOCK_SLACK_UNKNOWN;
	m->clock_measured = false;
	fd = open("/dev/kmsg", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	lseek(fd, 0, SEEK_END);
	len = snprintf(line, sizeof(line), "<5>pmdstress: run start, seed %#llx, pid %d\n",
		       (unsigned long long)run->cfg->seed_used, (int)getpid());
	before = pmd_now_ns();
	if (write(fd, line, (size_t)len) != len) {
		close(fd);
		return;
	}
	after = pmd_now_ns();
	line[len - 1] = '\0'; /* the record's text: no level prefix, no newline */
	for (;;) {
		struct pmd_kmsg_record r;
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		if (n < 0 && errno == EPIPE)
			continue;
		if (n <= 0)
			break; /* not there: the write was ratelimited away */
		buf[n] = '\0';
		if (!pmd_kmsg_parse(buf, (size_t)n, &r) || strcmp(r.text, line + 3))
			continue;
		m->clock_off_ns =
		    (int64_t)(r.ts_us * 1000) - (int64_t)(before + (after - before) / 2);
		m->clock_slack_ns = (after - before) / 2 + 1000; /* and the stamp's microsecond */
		m->clock_measured = true;
		break;
	}
	close(fd);
}

const char *pmd_kmsg_state_name(enum pmd_kmsg_state s)
{
	static const char *const names[] = { "not_opened", "reading", "unprivileged", "blind" };

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

/*
 * /dev/kmsg opened for reading, or -errno. What is there must be the
 * kernel's log device (char 1:11): in a container it can be missing, or be
 * another file bound over it (/dev/null reads as a log that never says
 * anything), and a run that read nothing would pass for a clean one.
 */
static int open_kmsg(void)
{
	struct stat st;
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISCHR(st.st_mode) || major(st.st_rdev) != 1 ||
	    minor(st.st_rdev) != 11) {
		close(fd);
		return -ENODEV;
	}
	return fd;
}

void pmd_monitor_open(struct pmd_run *run)
{
	struct pmd_monitor *m = &run->mon;
	int fd = open_kmsg();

	m->kmsg_fd = fd < 0 ? -1 : fd;
	if (fd >= 0) {
		/* from the run's start: skip everything logged before */
		lseek(m->kmsg_fd, 0, SEEK_END);
		m->kmsg_state = PMD_KMSG_READING;
		snprintf(m->kmsg_status, sizeof(m->kmsg_status), "reading");
		measure_clock(run);
	} else if (run->sys.root) {
		m->kmsg_state = PMD_KMSG_BLIND;
		snprintf(m->kmsg_status, sizeof(m->kmsg_status),
			 "unreadable as root (%s): no kernel splat can be seen",
			 fd == -ENODEV ? "not the kernel log device" : strerror(-fd));
		fprintf(stderr, "pmdstress: kernel log: /dev/kmsg %s; the run cannot judge the "
				"kernel (exit 125 unless it finds something)\n", m->kmsg_status);
	} else {
		char restrict_[8] = "";

		m->kmsg_state = PMD_KMSG_UNPRIVILEGED;
		pmd_read_text("/proc/sys/kernel/dmesg_restrict", restrict_, sizeof(restrict_));
		snprintf(m->kmsg_status, sizeof(m->kmsg_status),
			 "unreadable (%s), not root%s: kernel splats will not be seen",
			 fd == -ENODEV ? "not the kernel log device" : strerror(-fd),
			 restrict_[0] == '1' ? " and kernel.dmesg_restrict is 1" : "");
		fprintf(stderr, "pmdstress: kernel log: /dev/kmsg %s\n", m->kmsg_status);
	}
	m->taint_ok = read_taint(&m->taint0);
	m->taint_seen = m->taint0;
	{
		uint64_t cpu, rq;

		m->schedstat_ok = pmd_read_schedstat("/proc/thread-self/schedstat", &cpu, &rq);
	}
	if (!m->klog)
		m->klog = calloc(1, PMD_KLOG_MAX);
}

/* Which stressors run and which chunks were touched around @t: the line's context. */
static void active_at(const struct pmd_run *run, uint64_t t, char *buf, size_t len)
{
	const uint64_t before = 100000000ull + run->mon.clock_slack_ns;
	const uint64_t after = 10000000ull + run->mon.clock_slack_ns;
	size_t n = 0;
	unsigned i, j, found = 0;

	n += (size_t)snprintf(buf + n, len - n, " [active:");
	for (i = 0; i < run->nsinst && n < len; i++)
		if (!run->sinst[i].skipped)
			n += (size_t)snprintf(buf + n, len - n, " %s", run->sinst[i].st->name);
	for (i = 0; run->arena.chunks && i < run->arena.nchunks && found < 8 && n < len; i++) {
		const struct pmd_chunk *c = &run->arena.chunks[i];

		for (j = 0; j < PMD_RING_LEN; j++) {
			uint64_t e = __atomic_load_n(&c->ring[j].t_ns, __ATOMIC_RELAXED);

			if (e && e <= t + after && e + before >= t) {
				n += (size_t)snprintf(buf + n, len - n, "%s%u", found ? "," : "; chunks ",
						      c->index);
				found++;
				break;
			}
		}
	}
	if (n < len)
		snprintf(buf + n, len - n, "]");
}

static void keep_line(struct pmd_monitor *m, uint64_t ts_us, const char *text)
{
	int n;

	if (!m->klog || m->klog_len + 2 >= PMD_KLOG_MAX)
		return;
	n = snprintf(m->klog + m->klog_len, PMD_KLOG_MAX - m->klog_len, "[%5" PRIu64 ".%06" PRIu64
		     "] %s\n", ts_us / 1000000, ts_us % 1000000, text);
	if (n > 0)
		m->klog_len += (size_t)n < PMD_KLOG_MAX - m->klog_len ? (size_t)n : 0;
}

static void kernel_line(struct pmd_run *run, const struct pmd_kmsg_record *r)
{
	struct pmd_monitor *m = &run->mon;
	const char *what = pmd_kmsg_match(r->text);
	struct pmd_event ev;
	char ctx[160];

	if (!what) {
		/* the call trace and registers after a splat are worth keeping */
		if (m->context_left) {
			m->context_left--;
			keep_line(m, r->ts_us, r->text);
		}
		return;
	}
	keep_line(m, r->ts_us, r->text);
	m->context_left = 40;
	memset(&ev, 0, sizeof(ev));
	ev.kind = PMD_EV_KERNEL_LOG;
	ev.t_ns = (uint64_t)((int64_t)(r->ts_us * 1000) - m->clock_off_ns); /* on our clock */
	ev.worker = -1;
	ev.chunk = -1;
	if (m->context)
		snprintf(ctx, sizeof(ctx), " [%s]", m->context);
	else
		active_at(run, ev.t_ns, ctx, sizeof(ctx));
	snprintf(ev.text, sizeof(ev.text), "%s: %.150s%.140s", what, r->text, ctx);
	pmd_event_post(run, &ev);
}

void pmd_monitor_record(struct pmd_run *run, char *buf, size_t len)
{
	struct pmd_kmsg_record r;

	if (!pmd_kmsg_parse(buf, len, &r))
		return;
	run->mon.kmsg_seq = r.seq;
	kernel_line(run, &r);
}

static void drain_kmsg(struct pmd_run *run)
{
	struct pmd_monitor *m = &run->mon;
	char buf[8192];

	if (m->kmsg_fd < 0)
		return;
	for (;;) {
		ssize_t n = read(m->kmsg_fd, buf, sizeof(buf) - 1);

		if (n < 0 && errno == EPIPE)
			continue; /* records were overwritten before we read them */
		if (n <= 0)
			return;
		buf[n] = '\0';
		pmd_monitor_record(run, buf, (size_t)n);
	}
}

static void check_taint(struct pmd_run *run)
{
	struct pmd_monitor *m = &run->mon;
	uint64_t now, fresh;
	struct pmd_event ev;
	char letters[72];

	if (!m->taint_ok || !read_taint(&now))
		return;
	fresh = now & ~m->taint_seen;
	if (!fresh)
		return;
	m->taint_seen |= now;
	pmd_taint_letters(fresh, letters, sizeof(letters));
	memset(&ev, 0, sizeof(ev));
	ev.kind = PMD_EV_TAINT;
	ev.t_ns = pmd_now_ns();
	ev.worker = -1;
	ev.chunk = -1;
	snprintf(ev.text, sizeof(ev.text), "new taint %s (mask %#" PRIx64 ", was %#" PRIx64 ")",
		 letters, now, m->taint0);
	pmd_event_post(run, &ev);
}

char *pmd_task_dump(pid_t pid)
{
	size_t cap = 256u << 10, n = 0;
	char dir[64], *out;
	struct dirent *de;
	DIR *d;

	if (pid)
		snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	else
		snprintf(dir, sizeof(dir), "/proc/self/task");
	d = opendir(dir);
	out = malloc(cap);
	if (!out || !d) {
		if (d)
			closedir(d);
		free(out);
		return NULL;
	}
	out[0] = '\0';
	while ((de = readdir(d)) && n + 512 < cap) {
		char path[384], comm[32] = "", stat[512] = "", wchan[96] = "", stack[4096] = "";
		const char *state = "?";
		char *p, *save = NULL;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/comm", dir, de->d_name);
		pmd_read_text(path, comm, sizeof(comm));
		snprintf(path, sizeof(path), "%s/%s/stat", dir, de->d_name);
		pmd_read_text(path, stat, sizeof(stat));
		p = strrchr(stat, ')'); /* "tid (comm) S ..." */
		if (p && p[1] == ' ' && p[2]) {
			p[3] = '\0';
			state = p + 2;
		}
		snprintf(path, sizeof(path), "%s/%s/wchan", dir, de->d_name);
		pmd_read_text(path, wchan, sizeof(wchan));
		snprintf(path, sizeof(path), "%s/%s/stack", dir, de->d_name);
		pmd_read_text(path, stack, sizeof(stack));
		n += (size_t)snprintf(out + n, cap - n, "task %s %-15s state %s wchan %s\n",
				      de->d_name, comm, state, wchan[0] ? wchan : "-");
		for (p = strtok_r(stack, "\n", &save); p && n + 256 < cap;
		     p = strtok_r(NULL, "\n", &save))
			n += (size_t)snprintf(out + n, cap - n, "    %s\n", p);
	}
	closedir(d);
	return out;
}

bool pmd_monitor_child_moving(struct pmd_run *run, unsigned i)
{
	struct pmd_monitor *m = &run->mon;
	int pid = __atomic_load_n(&run->wstats[i].child, __ATOMIC_ACQUIRE);
	uint64_t cpu, rq, was;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
	if (pid <= 0 || !m->child_seen || !pmd_read_schedstat(path, &cpu, &rq))
		return false;
	was = m->child_seen[i];
	m->child_seen[i] = cpu + rq;
	if (was && cpu + rq != was)
		m->child_moved[i] = pmd_now_ns();
	return m->child_moved[i] && pmd_now_ns() - m->child_moved[i] < 1000000000ull;
}

bool pmd_monitor_worker_busy(struct pmd_run *run, unsigned i)
{
	uint64_t busy, still = pmd_worker_stall(&run->wstats[i], pmd_coarse_ns(), &busy);

	return still <= run->cfg->hang_timeout_ns && busy > still;
}

bool pmd_monitor_kill_child(struct pmd_run *run, unsigned i)
{
	int32_t pid = __atomic_load_n(&run->wstats[i].child, __ATOMIC_ACQUIRE);

	/*
	 * Marked first (its pid negated), so that the worker, once it reaped
	 * it, knows the run killed it: not a death to report. Published until
	 * reaped, the pid is still ours.
	 */
	if (pid <= 0 || !__atomic_compare_exchange_n(&run->wstats[i].child, &pid, -pid, false,
						     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return false;
	return !kill(pid, SIGKILL);
}

unsigned pmd_monitor_kill_children(struct pmd_run *run)
{
	unsigned i, n = 0;

	for (i = 0; run->wstats && i < run->nworkers; i++)
		n += pmd_monitor_kill_child(run, i);
	return n;
}

/* One hang a run: the first says it, the run ends with its report. */
static void post_hang(struct pmd_run *run, struct pmd_event *ev, bool abort)
{
	if (__atomic_exchange_n(&run->mon.hang_posted, true, __ATOMIC_ACQ_REL))
		return;
	pmd_hang_dump(run);
	pmd_event_post(run, ev);
	if (abort)
		pmd_run_abort(run, "hang");
}

void pmd_monitor_post_hang(struct pmd_run *run, struct pmd_event *ev)
{
	post_hang(run, ev, false);
}

static void check_heartbeats(struct pmd_run *run, uint64_t now)
{
	struct pmd_monitor *m = &run->mon;
	uint64_t limit = run->cfg->hang_timeout_ns, busy;
	unsigned i, hung = 0, first = 0;
	struct pmd_event ev;

	if (!m->hb_last)
		return;
	/* the kernel splatted: a stall now is the kernel's, not slowness (supervise.c) */
	if (__atomic_load_n(&run->ev_count[PMD_EV_KERNEL_LOG], __ATOMIC_RELAXED) &&
	    limit > PMD_SPLAT_LEASH_NS)
		limit = PMD_SPLAT_LEASH_NS;
	for (i = 0; i < run->nworkers; i++) {
		const struct pmd_wstats *ws = &run->wstats[i];
		uint64_t hb = pmd_counter_read(&ws->heartbeat);
		uint32_t st = __atomic_load_n(&ws->state, __ATOMIC_RELAXED);

		/* a worker that finished or sleeps on purpose is not hung */
		if (hb != m->hb_last[i] || st != PMD_WS_RUNNING || !m->hb_when[i]) {
			m->hb_last[i] = hb;
			m->hb_when[i] = now;
			continue;
		}
		/*
		 * Over the limit as the watchdog saw it; then the worker's own
		 * clock, less its wait for a CPU, must say so too. A worker that
		 * waits for a child judges the child itself (pmd_child_look()).
		 */
		if (now - m->hb_when[i] > limit && !__atomic_load_n(&ws->child, __ATOMIC_ACQUIRE) &&
		    (pmd_worker_stall(ws, pmd_coarse_ns(), &busy) > limit ||
		     busy > pmd_busy_limit(limit)) && !hung++)
			first = i;
	}
	if (!hung)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.kind = PMD_EV_HANG;
	ev.t_ns = now;
	ev.worker = (int)run->workers[first].id;
	ev.stressor = run->workers[first].si->st->name;
	ev.chunk = -1;
	snprintf(ev.text, sizeof(ev.text), "%u worker%s without progress for %.1fs (first: %s "
		 "worker %u); task states in the report", hung, hung == 1 ? "" : "s",
		 (double)limit / 1e9, ev.stressor, run->workers[first].index);
	post_hang(run, &ev, true);
}

/*
 * The longest any worker went between two beats, by its own clock: the
 * watchdog above sees a stall only while it lasts and only if it can look,
 * and a stall of the whole process (stopped, or not scheduled: the main
 * thread too) ends before it looks again; one across the run's end ends in
 * the join. Each worker timed its own gaps; one over the limit is a hang,
 * seen after it ended. Returns whether it posted one.
 */
static bool check_gaps(struct pmd_run *run, uint64_t now, bool abort)
{
	struct pmd_monitor *m = &run->mon;
	uint64_t limit = run->cfg->hang_timeout_ns, gap = 0, busy = 0;
	unsigned i, worst = 0, busiest = 0;
	struct pmd_event ev;

	for (i = 0; run->wstats && i < run->nworkers; i++) {
		uint64_t g = __atomic_load_n(&run->wstats[i].gap_max_ns, __ATOMIC_RELAXED);
		uint64_t b = __atomic_load_n(&run->wstats[i].busy_max_ns, __ATOMIC_RELAXED);

		if (g > gap) {
			gap = g;
			worst = i;
		}
		if (b > busy) {
			busy = b;
			busiest = i;
		}
	}
	if (gap > m->gap_max_ns) {
		m->gap_max_ns = gap;
		snprintf(m->gap_worker, sizeof(m->gap_worker), "%s/%u",
			 run->workers[worst].si->st->name, run->workers[worst].index);
	}
	if (busy > m->busy_max_ns)
		m->busy_max_ns = busy;
	if (m->hang_posted || (gap <= limit && busy <= pmd_busy_limit(limit)))
		return false;
	if (gap <= limit)
		worst = busiest;
	memset(&ev, 0, sizeof(ev));
	ev.kind = PMD_EV_HANG;
	ev.t_ns = now;
	ev.worker = (int)run->workers[worst].id;
	ev.stressor = run->workers[worst].si->st->name;
	ev.chunk = -1;
	if (gap > limit)
		snprintf(ev.text, sizeof(ev.text), "%s worker %u went %.1fs without progress (by "
			 "its own clock: neither on a CPU nor waiting for one), over --hang-timeout "
			 "%.1fs; seen after it went on: the whole run stalled (stopped, or blocked)",
			 ev.stressor, run->workers[worst].index, (double)gap / 1e9,
			 (double)limit / 1e9);
	else
		snprintf(ev.text, sizeof(ev.text), "%s worker %u ran %.1fs on a CPU without "
			 "finishing an op, over %.0fs: a livelock, or an op too long for the run",
			 ev.stressor, run->workers[worst].index, (double)busy / 1e9,
			 (double)pmd_busy_limit(limit) / 1e9);
	post_hang(run, &ev, abort);
	return true;
}

/*
 * No thread of its own: the main thread does this between its samples,
 * woken by the log (kmsg_fd is in its poll) or at the next slow check. A
 * monitor thread was one thread more in every threaded run, and every
 * fork of the run copied its stack's pages and page table, which the
 * child's exit freed again: the threaded fork row ran 2-3% below the bare
 * loop with two sleeping threads, and a build without the thread within
 * 1% (docs/benchmarks.md, "Pages and fork"). Its stack could not come
 * from memory no child gets: glibc keeps a thread's descriptor there.
 */
uint64_t pmd_monitor_tick(struct pmd_run *run, uint64_t now)
{
	struct pmd_monitor *m = &run->mon;

	drain_kmsg(run);
	if (now >= m->next_slow) {
		check_taint(run);
		if (!__atomic_load_n(&run->aborting, __ATOMIC_ACQUIRE)) {
			check_heartbeats(run, now);
			check_gaps(run, now, true);
		}
		m->next_slow = now + SLOW_NS;
	}
	return m->next_slow;
}

void pmd_monitor_start(struct pmd_run *run)
{
	struct pmd_monitor *m = &run->mon;

	free(m->hb_last);
	free(m->hb_when);
	free(m->child_seen);
	free(m->child_moved);
	m->hb_last = calloc(run->nworkers ? run->nworkers : 1, sizeof(uint64_t));
	m->hb_when = calloc(run->nworkers ? run->nworkers : 1, sizeof(uint64_t));
	m->child_seen = calloc(run->nworkers ? run->nworkers : 1, sizeof(uint64_t));
	m->child_moved = calloc(run->nworkers ? run->nworkers : 1, sizeof(uint64_t));
	m->next_slow = 0;
}

void pmd_monitor_stop(struct pmd_run *run)
{
	/* what the kernel said while the workers wound down */
	drain_kmsg(run);
	check_taint(run);
	/* and every worker's longest stall, the last stretch to its end included */
	check_gaps(run, pmd_now_ns(), false);
}

void pmd_monitor_close(struct pmd_run *run)
{
	struct pmd_monitor *m = &run->mon;

	if (m->kmsg_fd >= 0)
		close(m->kmsg_fd);
	m->kmsg_fd = -1;
	free(m->hb_last);
	free(m->hb_when);
	free(m->child_seen);
	free(m->child_moved);
	m->hb_last = m->hb_when = m->child_seen = m->child_moved = NULL;
}
