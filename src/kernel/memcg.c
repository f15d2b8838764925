// SPDX-License-Identifier: GPL-2.0
/*
 * --memcg-headroom (see memcg.h and docs/memcg.md). The run's cgroup:
 *  - v2 ("0::/path" with the memory controller on the unified hierarchy):
 *    a sibling of ours, since a v2 cgroup with processes cannot pass the
 *    memory controller to children (the no-internal-process rule) but its
 *    parent already does, or a child of the root, which may;
 *  - v1: a child of our memory cgroup.
 * Charges stay where they were made (v2 never moves them, v1 by default
 * neither), so the run's cgroup holds only what the run touches after the
 * move: the arena's pages and page tables. Its limit is set to that usage
 * plus the headroom at every pmd_memcg_rearm(); with a headroom under 2 MiB
 * no huge page can be charged, a 4 KiB page can, and the storm keeps its
 * rounds small enough (--fault-pages) that they never reach the limit,
 * which would be an OOM kill (order-0 charges retry, then kill; only
 * charges above PAGE_ALLOC_COSTLY_ORDER fail back to the caller).
 */
#include "memcg.h"

#include "memlimit.h"
#include "run.h"
#include "units.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NAME_PREFIX "pmdstress-"

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), e = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0)
		e = -errno;
	else if ((size_t)n != strlen(s))
		e = -EIO;
	close(fd);
	return e;
}

static bool has_word(const char *path, const char *word)
{
	char buf[512], *sv, *t;
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (t = strtok_r(buf, " \n", &sv); t; t = strtok_r(NULL, " \n", &sv))
		if (!strcmp(t, word))
			return true;
	return false;
}

/* Cgroups an earlier run left behind (killed before it could remove its own). */
static void remove_stale(const char *parent)
{
	DIR *d = opendir(parent);
	struct dirent *e;
	char path[PMD_MEMCG_PATH + 300];

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(e->d_name, NAME_PREFIX, strlen(NAME_PREFIX)))
			continue;
		pid = strtol(e->d_name + strlen(NAME_PREFIX), &end, 10);
		if (*end || pid <= 0 || !kill((pid_t)pid, 0) || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", parent, e->d_name);
		(void)rmdir(path); /* EBUSY if someone uses it after all: leave it */
	}
	closedir(d);
}

static int open_file(const struct pmd_memcg *m, const char *v2name, const char *v1name)
{
	char path[PMD_MEMCG_PATH + 64];

	snprintf(path, sizeof(path), "%s/%s", m->dir, m->version == 2 ? v2name : v1name);
	return open(path, O_RDWR | O_CLOEXEC);
}

static int fail(char *err, size_t len, int e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t len, int e, const char *fmt, ...)
{
	char what[PMD_MEMCG_PATH + 128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(err, len, "--memcg-headroom: %s: %s%s", what, strerror(e),
		 e == EACCES || e == EPERM ? " (needs root)" : "");
	return -e;
}

int pmd_memcg_enter(struct pmd_memcg *m, uint64_t headroom, char *err, size_t errlen)
{
	char self[PMD_MEMCG_PATH], parent[PMD_MEMCG_PATH], path[PMD_MEMCG_PATH + 64];
	char pid[32];
	size_t top;
	int e;

	memset(m, 0, sizeof(*m));
	m->usage_fd = m->limit_fd = -1;
	m->headroom = headroom;
	m->version = pmd_memcg_self(self, sizeof(self), &top);
	if (!m->version) {
		snprintf(err, errlen, "--memcg-headroom: no memory cgroup hierarchy is mounted "
				      "(cgroup2 with the memory controller, or v1's memory)");
		return -ENOENT;
	}
	snprintf(parent, sizeof(parent), "%s", self);
	if (m->version == 2) {
		/* ours has processes: unless it is the root, its parent hands memory down */
		if (strlen(self) > top)
			*strrchr(parent, '/') = '\0';
		snprintf(path, sizeof(path), "%s/cgroup.subtree_control", parent);
		/* enabling it is a change to the system that would outlive the run: ask */
		if (!has_word(path, "memory")) {
			snprintf(err, errlen, "--memcg-headroom: the memory controller is not "
					      "enabled for the children of %s (echo +memory > %s)",
				 parent, path);
			return -ENOTSUP;
		}
	}
	remove_stale(parent);
	snprintf(m->home, sizeof(m->home), "%s", self);
	if ((size_t)snprintf(m->dir, sizeof(m->dir), "%s/" NAME_PREFIX "%d", parent,
			     (int)getpid()) >= sizeof(m->dir)) {
		snprintf(err, errlen, "--memcg-headroom: cgroup path under %s too long", parent);
		return -ENAMETOOLONG;
	}
	if (mkdir(m->dir, 0755) && errno != EEXIST)
		return fail(err, errlen, errno, "cannot create %s", m->dir);
	m->usage_fd = open_file(m, "memory.current", "memory.usage_in_bytes");
	m->limit_fd = open_file(m, "memory.max", "memory.limit_in_bytes");
	if (m->usage_fd < 0 || m->limit_fd < 0) {
		e = errno;
		pmd_memcg_leave(m);
		return fail(err, errlen, e, "cannot open the limit files of %s", m->dir);
	}
	snprintf(path, sizeof(path), "%s/cgroup.procs", m->dir);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if ((e = write_str(path, pid))) {
		pmd_memcg_leave(m);
		return fail(err, errlen, -e, "cannot move the process into %s", m->dir);
	}
	m->on = true;
	return 0;
}

static void rearm(struct pmd_memcg *m)
{
	char buf[32], *end;
	uint64_t usage, seen;
	ssize_t n = pread(m->usage_fd, buf, sizeof(buf) - 1, 0);
	int len;

	if (n <= 0)
		goto err;
	buf[n] = '\0';
	errno = 0;
	usage = (uint64_t)strtoull(buf, &end, 10);
	if (end == buf || errno)
		goto err;
	len = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)usage + m->headroom);
	if (pwrite(m->limit_fd, buf, (size_t)len, 0) != len)
		goto err;
	__atomic_add_fetch(&m->rearms, 1, __ATOMIC_RELAXED);
	seen = __atomic_load_n(&m->usage_max, __ATOMIC_RELAXED);
	while (usage > seen && !__atomic_compare_exchange_n(&m->usage_max, &seen, usage, true,
							     __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return;
err:
	m->last_errno = n < 0 ? errno : EIO;
	__atomic_add_fetch(&m->rearm_errors, 1, __ATOMIC_RELAXED);
}

void pmd_memcg_rearm(struct pmd_run *run)
{
	/* the seed race's memcg way sets its limit per seed round only */
	if (run->memcg.on && !run->memcg.seed)
		rearm(&run->memcg);
}

/*
 * While a seed round's window is open, little is left below the limit;
 * anything else the run charges then would have the memcg OOM killer take
 * pmdstress itself (it did, with the window open for a huge page's whole
 * clearing). With oom_score_adj -1000 the killer finds no victim in the
 * cgroup and the charge fails instead (a page fault is retried), for the
 * microseconds until the window closes. Put back at leave().
 */
static void oom_shield(struct pmd_memcg *m)
{
	int fd = open("/proc/self/oom_score_adj", O_RDWR | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return;
	n = read(fd, m->oom_adj, sizeof(m->oom_adj) - 1);
	if (n > 0 && pwrite(fd, "-1000", 5, 0) == 5)
		m->oom_adj[n] = '\0';
	else
		m->oom_adj[0] = '\0';
	close(fd);
}

static void oom_unshield(struct pmd_memcg *m)
{
	int fd;

	if (!m->oom_adj[0])
		return;
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, m->oom_adj, strlen(m->oom_adj)) < 0)
			m->last_errno = errno;
		close(fd);
	}
	m->oom_adj[0] = '\0';
}

static void lift(struct pmd_memcg *m)
{
	if (pwrite(m->limit_fd, m->version == 2 ? "max" : "-1", m->version == 2 ? 3 : 2, 0) < 0) {
		m->last_errno = errno;
		__atomic_add_fetch(&m->rearm_errors, 1, __ATOMIC_RELAXED);
	}
}

/*
 * Close window @seq (false if it is not open as @seq any more). The time is
 * stamped before the close and after the lift: an ENOMEM met in the window
 * is told from the machine's by it (pmd_memcg_window_since()), and one met
 * between the close and the lift, with the limit still tight, too.
 */
static bool close_window(struct pmd_memcg *m, uint32_t seq)
{
	__atomic_store_n(&m->win_closed_ns, pmd_coarse_ns(), __ATOMIC_SEQ_CST);
	if (!__atomic_compare_exchange_n(&m->win_seq, &seq, seq + 1, false, __ATOMIC_SEQ_CST,
					 __ATOMIC_SEQ_CST))
		return false;
	lift(m);
	__atomic_store_n(&m->win_closed_ns, pmd_coarse_ns(), __ATOMIC_SEQ_CST);
	return true;
}

bool pmd_memcg_window_since(const struct pmd_run *run, uint64_t since)
{
	const struct pmd_memcg *m = &run->memcg;

	if (!m->seed)
		return false;
	return (__atomic_load_n(&m->win_seq, __ATOMIC_SEQ_CST) & 1) ||
	       __atomic_load_n(&m->win_closed_ns, __ATOMIC_SEQ_CST) >= since;
}

static long futex_op(uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, word, op, val, ts, NULL, 0);
}

/*
 * The keeper: a window closes when its first PTE-role racer is done, but
 * that racer may be the one stuck: a 4 KiB charge that met the limit (a
 * partner charged the room away) fails, its fault is retried, the window
 * never closes, and every thread that faults then is stuck the same way (a
 * TCG guest hung for good). This thread, which allocates nothing, lifts a
 * window that stayed open for SEED_WINDOW_MAX_NS whatever the racers do.
 */
#define SEED_WINDOW_MAX_NS (20ull * 1000 * 1000)

static void *keeper_main(void *arg)
{
	struct pmd_memcg *m = arg;

	prctl(PR_SET_NAME, "pmd/memcg", 0, 0, 0);
	while (!__atomic_load_n(&m->keeper_stop, __ATOMIC_ACQUIRE)) {
		uint32_t seq = __atomic_load_n(&m->win_seq, __ATOMIC_ACQUIRE);
		struct timespec ts = { 0, (long)SEED_WINDOW_MAX_NS };

		if (!(seq & 1)) { /* closed: wait for one to open (or a stop) */
			futex_op(&m->win_seq, FUTEX_WAIT_PRIVATE, seq, NULL);
			continue;
		}
		/* open: give it its time, then close it if it is still this one */
		if (futex_op(&m->win_seq, FUTEX_WAIT_PRIVATE, seq, &ts) && errno == ETIMEDOUT &&
		    close_window(m, seq))
			__atomic_add_fetch(&m->win_forced, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

int pmd_memcg_seed_enter(struct pmd_run *run, char *why, size_t len)
{
	struct pmd_memcg *m = &run->memcg;
	int e;

	if (m->on) {
		snprintf(why, len, "memcg: --memcg-headroom sets the run's limit already");
		return -EEXIST;
	}
	if (geteuid()) {
		snprintf(why, len, "memcg: not root (the run's own memory cgroup needs root)");
		return -EPERM;
	}
	e = pmd_memcg_enter(m, 0, why, len);
	if (e)
		return e;
	/* no limit until a seed round sets one */
	if (pwrite(m->limit_fd, m->version == 2 ? "max" : "-1", m->version == 2 ? 3 : 2, 0) < 0) {
		e = -errno;
		snprintf(why, len, "memcg: cannot lift the limit of %s: %s", m->dir, strerror(-e));
		pmd_memcg_leave(m);
		return e;
	}
	m->win_seq = 0;
	m->keeper_stop = 0;
	e = pthread_create(&m->keeper, NULL, keeper_main, m);
	if (e) {
		snprintf(why, len, "memcg: cannot start the window's keeper: %s", strerror(e));
		pmd_memcg_leave(m);
		return -e;
	}
	m->keeper_on = true;
	snprintf(m->home_procs, sizeof(m->home_procs), "%s/cgroup.procs", m->home);
	m->seed = true;
	oom_shield(m);
	/* ENOMEM is judged against the limits that hold the run where it is now */
	pmd_limits_rebase(&run->limits);
	return 0;
}

int pmd_memcg_fork_prepare(const struct pmd_run *run)
{
	const struct pmd_memcg *m = &run->memcg;

	return m->seed && m->home_procs[0] ? open(m->home_procs, O_WRONLY | O_CLOEXEC) : -1;
}

void pmd_memcg_fork_child(int fd)
{
	/* "0": the process that writes; if it fails, the child is charged here as before */
	if (fd >= 0 && write(fd, "0", 1) == 1)
		close(fd);
}

void pmd_memcg_fork_parent(int fd)
{
	if (fd >= 0)
		close(fd);
}

/*
 * One window at a time (a group that finds one open races without), and
 * none while a big charger is at work: the seq_cst pair (chargers up, then
 * the window's state read; the window opened, then chargers read) means
 * either the charger waits for the window or the window is not opened.
 */
bool pmd_memcg_seed_tight(struct pmd_run *run, uint64_t room)
{
	struct pmd_memcg *m = &run->memcg;
	uint32_t seq;

	if (!m->seed || __atomic_load_n(&m->chargers, __ATOMIC_SEQ_CST))
		return false;
	seq = __atomic_load_n(&m->win_seq, __ATOMIC_SEQ_CST);
	if ((seq & 1) || !__atomic_compare_exchange_n(&m->win_seq, &seq, seq + 1, false,
						      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return false;
	if (__atomic_load_n(&m->chargers, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&m->win_seq, seq + 2, __ATOMIC_SEQ_CST);
		return false;
	}
	m->headroom = room;
	rearm(m);
	__atomic_add_fetch(&m->seed_tight, 1, __ATOMIC_RELAXED);
	futex_op(&m->win_seq, FUTEX_WAKE_PRIVATE, 1, NULL); /* the keeper starts its clock */
	return true;
}

void pmd_memcg_seed_loose(struct pmd_run *run)
{
	struct pmd_memcg *m = &run->memcg;
	uint32_t seq = __atomic_load_n(&m->win_seq, __ATOMIC_ACQUIRE);

	if (!m->seed || !(seq & 1))
		return;
	if (close_window(m, seq))
		futex_op(&m->win_seq, FUTEX_WAKE_PRIVATE, 1, NULL); /* the keeper's clock stops */
}

void pmd_memcg_charge_begin(struct pmd_run *run)
{
	struct pmd_memcg *m = &run->memcg;
	uint32_t seq;

	if (!m->seed)
		return;
	__atomic_add_fetch(&m->chargers, 1, __ATOMIC_SEQ_CST);
	/* an open window closes within microseconds, or the keeper's 20 ms */
	while ((seq = __atomic_load_n(&m->win_seq, __ATOMIC_SEQ_CST)) & 1) {
		struct timespec ts = { 0, 1000000 };

		futex_op(&m->win_seq, FUTEX_WAIT_PRIVATE, seq, &ts);
	}
}

/* When this thread's last charger section ended: no window was open in it. */
static __thread uint64_t charged_until;

void pmd_memcg_charge_end(struct pmd_run *run)
{
	struct pmd_memcg *m = &run->memcg;

	if (!m->seed)
		return;
	charged_until = pmd_coarse_ns();
	__atomic_sub_fetch(&m->chargers, 1, __ATOMIC_SEQ_CST);
}

uint64_t pmd_memcg_charged_until(void)
{
	return charged_until;
}

void pmd_memcg_leave(struct pmd_memcg *m)
{
	char path[PMD_MEMCG_PATH + 64], pid[32];
	int i;

	if (!m->dir[0])
		return;
	if (m->usage_fd >= 0)
		close(m->usage_fd);
	if (m->limit_fd >= 0)
		close(m->limit_fd);
	m->usage_fd = m->limit_fd = -1;
	if (m->on) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", m->home);
		snprintf(pid, sizeof(pid), "%d", (int)getpid());
		if (write_str(path, pid))
			fprintf(stderr, "pmdstress: --memcg-headroom: cannot move back to %s\n",
				m->home);
	}
	m->on = false;
	if (m->keeper_on) {
		__atomic_store_n(&m->keeper_stop, 1, __ATOMIC_RELEASE);
		__atomic_add_fetch(&m->win_seq, 2, __ATOMIC_SEQ_CST);
		futex_op(&m->win_seq, FUTEX_WAKE_PRIVATE, 1, NULL);
		pthread_join(m->keeper, NULL);
		m->keeper_on = false;
	}
	if (m->seed) {
		oom_unshield(m);
		m->seed = false;
	}
	/* a cgroup whose last task just left may be busy for a moment */
	for (i = 0; rmdir(m->dir) && errno == EBUSY && i < 100; i++)
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	m->dir[0] = '\0';
}

json_t *pmd_memcg_json(const struct pmd_run *run)
{
	const struct pmd_memcg *m = &run->memcg;
	json_t *o;
	int64_t d = 0;

	if (!run->cfg->memcg_headroom && !m->seed_tight)
		return json_null();
	o = json_object();
	json_object_set_new(o, "seed_windows", json_integer((json_int_t)m->seed_tight));
	json_object_set_new(o, "seed_windows_forced", json_integer((json_int_t)m->win_forced));
	json_object_set_new(o, "headroom", json_integer((json_int_t)m->headroom));
	json_object_set_new(o, "version", json_integer(m->version));
	json_object_set_new(o, "home", json_string(m->home));
	json_object_set_new(o, "rearms", json_integer((json_int_t)m->rearms));
	json_object_set_new(o, "rearm_errors", json_integer((json_int_t)m->rearm_errors));
	json_object_set_new(o, "usage_max", json_integer((json_int_t)m->usage_max));
	if (pmd_vmstat_delta(&run->vm_before, &run->vm_after, "thp_fault_fallback_charge", &d))
		json_object_set_new(o, "thp_fault_fallback_charge", json_integer(d));
	else
		json_object_set_new(o, "thp_fault_fallback_charge", json_null());
	return o;
}

void pmd_memcg_text(FILE *out, const struct pmd_run *run)
{
	const struct pmd_memcg *m = &run->memcg;
	char head[32], max[32];
	int64_t d = 0;

	if (!run->cfg->memcg_headroom && !m->seed_tight)
		return;
	pmd_format_size(m->headroom, head, sizeof(head));
	pmd_format_size(m->usage_max, max, sizeof(max));
	if (m->seed_tight)
		fprintf(out, "memcg (v%d, from %s): no limit but in %llu seed rounds' first stores "
			     "(usage + %s; %llu closed by the keeper, %llu failed), highest usage %s",
			m->version, m->home, (unsigned long long)m->seed_tight, head,
			(unsigned long long)m->win_forced, (unsigned long long)m->rearm_errors,
			max);
	else
		fprintf(out, "memcg (v%d, from %s): limit = usage + %s, set %llu times (%llu "
			     "failed), highest usage %s",
			m->version, m->home, head, (unsigned long long)m->rearms,
			(unsigned long long)m->rearm_errors, max);
	if (pmd_vmstat_delta(&run->vm_before, &run->vm_after, "thp_fault_fallback_charge", &d))
		fprintf(out, "; THP charges failed (thp_fault_fallback_charge): %lld",
			(long long)d);
	fputc('\n', out);
}
