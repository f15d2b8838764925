// SPDX-License-Identifier: GPL-2.0
/*
 * Race evidence: which fault path each racer of a round took on the round's
 * contested PMD, from the kernel's side where it lets us.
 *
 * A racer's first store is the only access of its round that can find the
 * PMD none. Where tracefs can be had (root), the run gets a trace instance
 * of its own with kmem:mm_page_alloc and mm_page_free enabled for the
 * racers' threads only: in the first store's time span, an order-9
 * allocation is the THP path (do_huge_pmd_anonymous_page allocates the
 * huge page, then the page table it deposits), an order-0 zeroed unmovable
 * allocation not right after one is the PTE path on an empty PMD
 * (__pte_alloc; pte_alloc() calls it only when it read the PMD none), and
 * an order-9 free in between is a huge page given up (a failed charge:
 * the fault falls back to the PTE path). These events exist on every kernel
 * with tracing, kprobes or not. Without the trace, a round is inferred from
 * the faults each first store took and the chunk's state after the stores
 * (pmd_race_infer says how). Both are kept, so a run with the trace also
 * measures the inference.
 */
#include "race.h"
#include "sysinfo.h"

#include "run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* trace text has microsecond timestamps: a span is widened by this much */
#define TS_SLACK_NS 2000ull
/* a round is matched once the trace has been read this long past its end */
#define SETTLE_NS (5ull * 1000 * 1000)
#define POLL_NS (100ull * 1000 * 1000)
#define TRACEFS "/sys/kernel/tracing"

/* ---- inference (no trace) --------------------------------------------------- */

/*
 * A seed round's racers store into pages of their own. A THP-path fault
 * that finds the PMD taken when its 2 MiB is cleared returns without
 * mapping anything, and the store faults again: two faults, unless another
 * racer's sweep mapped its page meanwhile (on a slow machine the others
 * sweep their whole window while it clears); then its one fault took as
 * long as clearing a huge page takes here (half the learned time at
 * least), which a PTE-path fault does not. If the chunk is PTE-mapped
 * after the stores, what took the PMD was a page table: the THP path lost
 * to the PTE path. A PTE-role racer (THP disabled for it)
 * whose store faulted while the chunk ends PMD-mapped decided on the PTE
 * path and lost the PMD to a huge one (a store after the huge PMD landed
 * does not fault). Rounds a partner changed are left out. What it cannot
 * see: a PTE-path racer that lost to a huge PMD in a round without roles
 * (the memcg way), and a fault that read the PMD after the huge one landed
 * but before its own lockless check (a microsecond, against the ~100 us a
 * huge page takes to clear); the trace sees both.
 */
enum pmd_race_inference pmd_race_infer(const struct pmd_race_round *rr)
{
	unsigned i;

	if (!rr->seed || rr->disturbed)
		return PMD_INFER_NONE;
	for (i = 0; i < rr->nracers && i < PMD_RACE_MAX_RACERS; i++) {
		const struct pmd_racer_span *r = &rr->r[i];

		if (!r->hi || r->faults == 0xff)
			continue;
		if (rr->end_state == PMD_THPS_PTE && r->role != PMD_ROLE_PTE &&
		    (r->faults >= 2 ||
		     (r->faults == 1 && rr->clear_ns && r->hi - r->lo >= rr->clear_ns / 2)))
			return PMD_INFER_THP_LOST;
		/* THP disabled for it (prctl): its fault decided on the PTE path */
		if (rr->end_state == PMD_THPS_THP && r->role == PMD_ROLE_PTE && r->faults >= 1 &&
		    (rr->mech & PMD_SEED_MECH_PRCTL))
			return PMD_INFER_PTE_LOST;
	}
	return PMD_INFER_NONE;
}

/* ---- trace events ------------------------------------------------------------ */

static const char *field(const char *line, const char *name)
{
	const char *p = strstr(line, name);

	return p ? p + strlen(name) : NULL;
}

/* N of the task name "pmd/fault/N" that ends at @end (the '-' before the tid), else -1. */
static int fault_worker(const char *line, const char *end)
{
	static const char name[] = "pmd/fault/";
	const char *p = line;
	int n = 0;

	while (p < end && *p == ' ')
		p++;
	if ((size_t)(end - p) <= sizeof(name) - 1 || strncmp(p, name, sizeof(name) - 1))
		return -1;
	for (p += sizeof(name) - 1; p < end; p++) {
		if (*p < '0' || *p > '9' || n > 100000)
			return -1;
		n = n * 10 + (*p - '0');
	}
	return n;
}

/* What the storm writes to its instance's trace_marker (by_name: see race_tracer) */
#define SELF_MARK "pmdstress-storm"

/*
 * "  pmd/fault/0-1234   [001] .....   157.167049: mm_page_alloc: page=...
 * pfn=0x... order=9 migratetype=1 gfp_flags=GFP_TRANSHUGE..." (task name,
 * thread id, CPU, flags, seconds.microseconds, event, fields); with the
 * record-tgid option "pmd/fault/0-1234 (   1200) [001] ..." (thread group).
 */
bool pmd_race_parse_line(const char *line, struct pmd_race_ev *ev)
{
	const char *br = strstr(line, "] "), *q, *o, *mt;
	unsigned long sec = 0, usec = 0;
	bool alloc;

	memset(ev, 0, sizeof(*ev));
	ev->worker = -1;
	if (line[0] == '#' || !br || !(q = strstr(line, " [")))
		return false;
	/* the thread id: the digits before " [", after the last '-' of "comm-tid" */
	while (q > line && q[-1] == ' ')
		q--;
	if (q > line && q[-1] == ')') {
		/* "(  tgid)" first; "(-------)" where the kernel did not record it */
		const char *open = q - 1;

		while (open > line && open[-1] != '(')
			open--;
		if (open == line)
			return false;
		ev->tgid = atoi(open + strspn(open, " "));
		for (q = open - 1; q > line && q[-1] == ' '; q--)
			;
	}
	{
		const char *d = q;

		while (d > line && d[-1] >= '0' && d[-1] <= '9')
			d--;
		if (d == q || d == line || d[-1] != '-')
			return false;
		ev->tid = atoi(d);
		ev->worker = fault_worker(line, d - 1);
	}
	/* after the CPU: flags (may be absent), then "SEC.USEC:" */
	for (q = br + 2; *q; q++) {
		if (*q >= '0' && *q <= '9' && sscanf(q, "%lu.%lu:", &sec, &usec) == 2)
			break;
	}
	if (!*q)
		return false;
	ev->ts = (uint64_t)sec * 1000000000ull + (uint64_t)usec * 1000ull;
	if (strstr(q, " tracing_mark_write: " SELF_MARK)) {
		ev->kind = PMD_EV_SELF;
		return true;
	}
	/* kprobe events of ours (pmd_thp_path, pmd_pte_path: see trace_start) */
	if (strstr(q, " pmd_thp_path: ")) {
		ev->kind = PMD_EV_KP_THP;
		return true;
	}
	if (strstr(q, " pmd_pte_path: ")) {
		ev->kind = PMD_EV_KP_PTE;
		return true;
	}
	if (strstr(q, " mm_page_alloc: "))
		alloc = true;
	else if (strstr(q, " mm_page_free: "))
		alloc = false;
	else
		return false;
	o = field(q, " order=");
	if (!o)
		return false;
	if (atoi(o) == 9) {
		ev->kind = alloc ? PMD_EV_HUGE_ALLOC : PMD_EV_HUGE_FREE;
		return true;
	}
	mt = field(q, " migratetype=");
	/* a page table: order 0, unmovable, zeroed (GFP_PGTABLE_USER) */
	if (alloc && atoi(o) == 0 && mt && atoi(mt) == 0 && strstr(q, "__GFP_ZERO")) {
		ev->kind = PMD_EV_PGTABLE;
		return true;
	}
	return false;
}

/*
 * The THP path allocates its huge page, then the page table it deposits
 * (or gives the huge page back when the charge fails); a page table with no
 * huge page open before it is __pte_alloc's, the PTE path on an empty PMD.
 */
unsigned pmd_race_classify(const struct pmd_race_ev *ev, size_t n, int tid, uint64_t lo,
			   uint64_t hi)
{
	unsigned paths = 0, open = 0;
	size_t i;

	lo = lo > TS_SLACK_NS ? lo - TS_SLACK_NS : 0;
	for (i = 0; i < n; i++) {
		if (ev[i].tid != tid || ev[i].ts < lo || ev[i].ts > hi)
			continue;
		switch (ev[i].kind) {
		case PMD_EV_HUGE_ALLOC:
			paths |= PMD_PATH_THP;
			open++;
			break;
		case PMD_EV_HUGE_FREE:
			if (open)
				open--;
			break;
		case PMD_EV_PGTABLE:
			if (open)
				open--; /* the THP path's deposit */
			else
				paths |= PMD_PATH_PTE;
			break;
		}
	}
	return paths;
}

unsigned pmd_race_classify_kprobe(const struct pmd_race_ev *ev, size_t n, int tid, uint64_t lo,
				  uint64_t hi)
{
	unsigned paths = 0;
	size_t i;

	lo = lo > TS_SLACK_NS ? lo - TS_SLACK_NS : 0;
	for (i = 0; i < n; i++) {
		if (ev[i].tid != tid || ev[i].ts < lo || ev[i].ts > hi)
			continue;
		if (ev[i].kind == PMD_EV_KP_THP)
			paths |= PMD_PATH_THP;
		else if (ev[i].kind == PMD_EV_KP_PTE)
			paths |= PMD_PATH_PTE;
	}
	return paths;
}

bool pmd_race_seed_of(const unsigned *paths, unsigned n)
{
	unsigned i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			if (i != j && (paths[i] & PMD_PATH_THP) && (paths[j] & PMD_PATH_PTE))
				return true;
	return false;
}

/* ---- the storm's records ------------------------------------------------------- */

struct race_tracer {
	char dir[128];		 /* the run's instance */
	char kprobes[64];	 /* the group of our kprobe events, "" if none */
	int pipe_fd;
	bool mounted;		 /* tracefs was mounted by us */
	uint64_t started;	 /* pmd_now_ns() once events flow */
	pthread_mutex_t lock;	 /* the records below */
	struct pmd_race_round *rec;
	size_t nrec, caprec;
	struct pmd_race_ev *ev; /* read, not yet needed no more */
	size_t nev, capev;
	char part[512]; /* a line cut by the end of a read */
	size_t npart;
	uint64_t lost_until; /* the trace lost events before this time */
	uint64_t nseen;	     /* events of the racers taken in all */
	/*
	 * In a pid namespace of its own (a container, tools/fresh-debian) the
	 * events carry the host's thread ids, which mean nothing here: the
	 * racers are filtered by task name ("pmd/fault/N"), the lines show
	 * thread groups (record-tgid), the storm learns its own from a mark it
	 * writes (host_tgid), and an event of its group is taken for fault
	 * worker N's. host_tid[N] is the first thread id seen for that name;
	 * another one for it would make the trace untrustworthy (clash).
	 */
	bool by_name;
	bool clash;
	int host_tgid;
	unsigned nfault;
	int *local_tid, *host_tid;
};

void pmd_race_mechanisms(struct pmd_run *run, unsigned mech, const char *why)
{
	run->race.mech = mech;
	run->race.mech_set = true;
	snprintf(run->race.mech_why, sizeof(run->race.mech_why), "%s", why ? why : "");
}

void pmd_race_post(struct pmd_worker *w, const struct pmd_race_round *rr)
{
	struct pmd_race *r = &w->si->run->race;
	struct race_tracer *tr = __atomic_load_n(&r->tr, __ATOMIC_ACQUIRE);
	enum pmd_race_inference inf = pmd_race_infer(rr);

	__atomic_add_fetch(&r->rounds, 1, __ATOMIC_RELAXED);
	if (rr->collided)
		__atomic_add_fetch(&r->collided, 1, __ATOMIC_RELAXED);
	if (rr->seed)
		__atomic_add_fetch(&r->seed_rounds, 1, __ATOMIC_RELAXED);
	if (rr->disturbed)
		__atomic_add_fetch(&r->disturbed, 1, __ATOMIC_RELAXED);
	if (inf != PMD_INFER_NONE)
		__atomic_add_fetch(&r->inferred, 1, __ATOMIC_RELAXED);
	if (inf == PMD_INFER_THP_LOST)
		__atomic_add_fetch(&r->inferred_thp_lost, 1, __ATOMIC_RELAXED);
	if (inf == PMD_INFER_PTE_LOST)
		__atomic_add_fetch(&r->inferred_pte_lost, 1, __ATOMIC_RELAXED);
	if (!tr || rr->t_start < tr->started)
		return;
	pthread_mutex_lock(&tr->lock);
	if (tr->nrec == tr->caprec) {
		size_t cap = tr->caprec ? tr->caprec * 2 : 1024;
		void *p = realloc(tr->rec, cap * sizeof(*tr->rec));

		if (p) {
			tr->rec = p;
			tr->caprec = cap;
		}
	}
	if (tr->nrec < tr->caprec)
		tr->rec[tr->nrec++] = *rr;
	pthread_mutex_unlock(&tr->lock);
}

/* ---- the trace instance ----------------------------------------------------------- */

static int put(const struct race_tracer *tr, const char *file, const char *value)
{
	char path[256];
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/%s", tr->dir, file);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, value, strlen(value)) != (ssize_t)strlen(value))
		err = errno ? -errno : -EIO;
	close(fd);
	return err;
}

static bool file_has(const char *path, const char *word)
{
	char buf[512];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, word) != NULL;
}

/* tracefs where the kernel has it, mounted if it is not; "" with @why if not. */
static bool tracefs_root(struct race_tracer *tr, char *why, size_t len)
{
	struct stat st;

	if (!stat(TRACEFS "/instances", &st))
		return true;
	if (stat(TRACEFS, &st)) {
		snprintf(why, len, "no %s (a kernel without tracing)", TRACEFS);
		return false;
	}
	if (mount("nodev", TRACEFS, "tracefs", 0, NULL)) {
		snprintf(why, len, "cannot mount tracefs on %s: %s", TRACEFS, strerror(errno));
		return false;
	}
	tr->mounted = true;
	if (!stat(TRACEFS "/instances", &st))
		return true;
	snprintf(why, len, "tracefs has no instances directory");
	return false;
}

/* Append to the system's kprobe_events (a write there replaces it unless O_APPEND). */
static int kprobe_events(const char *text)
{
	int fd = open(TRACEFS "/kprobe_events", O_WRONLY | O_APPEND | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		err = errno ? -errno : -EIO;
	close(fd);
	return err;
}

/*
 * Where the kernel has kprobe events: one on each path's function, in a
 * group of the run's own, enabled in its instance beside the page events
 * and filtered to the racers as they are. They say directly which path a
 * racer entered, and so check what the page events are read to mean;
 * nothing depends on them.
 */
static void kprobes_start(struct race_tracer *tr, const char *who)
{
	char text[256], path[200];
	int err;

	snprintf(tr->kprobes, sizeof(tr->kprobes), "pmdstress_%d", (int)getpid());
	snprintf(text, sizeof(text), "p:%s/pmd_thp_path do_huge_pmd_anonymous_page\n"
		 "p:%s/pmd_pte_path __pte_alloc\n", tr->kprobes, tr->kprobes);
	if (kprobe_events(text)) {
		tr->kprobes[0] = '\0';
		return;
	}
	snprintf(path, sizeof(path), "events/%s/filter", tr->kprobes);
	err = who[0] ? put(tr, path, who) : 0;
	snprintf(path, sizeof(path), "events/%s/enable", tr->kprobes);
	if (err || put(tr, path, "1")) {
		snprintf(text, sizeof(text), "-:%s/pmd_thp_path\n-:%s/pmd_pte_path\n", tr->kprobes,
			 tr->kprobes);
		kprobe_events(text);
		tr->kprobes[0] = '\0';
	}
}

static void tracer_free(struct race_tracer *tr)
{
	if (tr->pipe_fd >= 0)
		close(tr->pipe_fd);
	if (tr->dir[0]) {
		put(tr, "tracing_on", "0");
		rmdir(tr->dir);
	}
	if (tr->kprobes[0]) {
		char text[160];

		snprintf(text, sizeof(text), "-:%s/pmd_thp_path\n-:%s/pmd_pte_path\n", tr->kprobes,
			 tr->kprobes);
		kprobe_events(text);
	}
	if (tr->mounted)
		umount2(TRACEFS, MNT_DETACH);
	pthread_mutex_destroy(&tr->lock);
	free(tr->rec);
	free(tr->ev);
	free(tr->local_tid);
	free(tr->host_tid);
	free(tr);
}

/*
 * Instances are named by pid namespace and pid: a run in a container or a
 * chroot with a pid namespace of its own shares tracefs with the host, and
 * a pid means nothing outside its namespace.
 */
static void instance_path(char *path, size_t len, int pid)
{
	snprintf(path, len, TRACEFS "/instances/pmdstress-%lu-%d", pmd_pid_ns(), pid);
}

/* What a process of @pid left when it died: its instance, then its kprobe events. */
static void remove_left(int pid)
{
	char path[160], text[160];

	instance_path(path, sizeof(path), pid);
	if (rmdir(path) && errno != ENOENT)
		return; /* busy: someone still reads it, and its kprobes are enabled there */
	snprintf(text, sizeof(text), "-:pmdstress_%d/pmd_thp_path\n-:pmdstress_%d/pmd_pte_path\n",
		 pid, pid);
	if (!access(TRACEFS "/kprobe_events", W_OK))
		kprobe_events(text);
}

/*
 * Instances of runs that were killed before they could remove theirs (a
 * storm process the kernel killed, a SIGKILL): each traced on, into a
 * buffer of its own, the threads of its pids, whoever has them now. Only
 * this pid namespace's: another's pids cannot be looked up from here (a
 * run in a chroot with a pid namespace of its own had its instance taken
 * away by a run outside it, and traced nothing).
 */
static void remove_stale(void)
{
	DIR *d = opendir(TRACEFS "/instances");
	unsigned long ns = pmd_pid_ns();
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end;
		unsigned long their;
		long pid;

		if (strncmp(e->d_name, "pmdstress-", 10))
			continue;
		their = strtoul(e->d_name + 10, &end, 10);
		if (*end != '-' || their != ns)
			continue;
		pid = strtol(end + 1, &end, 10);
		if (*end || pid <= 0 || pid > INT_MAX || !kill((pid_t)pid, 0) || errno != ESRCH)
			continue;
		remove_left((int)pid);
	}
	closedir(d);
}

void pmd_race_trace_remove(int pid)
{
	struct stat st;

	if (!geteuid() && !stat(TRACEFS "/instances", &st))
		remove_left(pid);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

bool pmd_race_pid_filter(int *tid, size_t n, char *buf, size_t len)
{
	size_t f = 0, i, j;

	buf[0] = '\0';
	qsort(tid, n, sizeof(*tid), cmp_int);
	for (i = 0; i < n && f < len; i = j) {
		for (j = i + 1; j < n && tid[j] <= tid[j - 1] + 1; j++)
			;
		f += (size_t)(tid[j - 1] > tid[i]
				      ? snprintf(buf + f, len - f,
						 "%scommon_pid >= %d && common_pid <= %d",
						 f ? " || " : "", tid[i], tid[j - 1])
				      : snprintf(buf + f, len - f, "%scommon_pid == %d",
						 f ? " || " : "", tid[i]));
	}
	if (f >= len)
		buf[0] = '\0';
	return n && buf[0];
}

/*
 * The fault workers' thread ids as a common_pid filter (pmd_race_pid_filter)
 * and as a set_event_pid list; false if none. The filter is what the events
 * get: set_event_pid hooks the scheduler's tracepoints, and turning those
 * on and off patches the wake-up path's code while every CPU runs it (a
 * TCG guest once took an int3 oops in ttwu_do_activate doing it). Only a
 * filter too long for the kernel (a page) falls back to set_event_pid.
 */
static bool racer_tids(struct pmd_run *run, struct race_tracer *tr, char *filter, size_t flen,
		       char *list, size_t llen)
{
	uint64_t end = pmd_now_ns() + 2000000000ull;
	size_t n = 0, l = 0, i;
	int *tid = calloc(run->nworkers ? run->nworkers : 1, sizeof(*tid));

	filter[0] = list[0] = '\0';
	tr->local_tid = calloc(run->nworkers ? run->nworkers : 1, sizeof(*tr->local_tid));
	tr->host_tid = calloc(run->nworkers ? run->nworkers : 1, sizeof(*tr->host_tid));
	if (!tid || !tr->local_tid || !tr->host_tid) {
		free(tid);
		return false;
	}
	for (i = 0; i < run->nworkers; i++) {
		struct pmd_worker *w = &run->workers[i];

		if (strcmp(w->si->st->name, "fault") || w->si->skipped)
			continue;
		/* set by the worker before it waits at the start */
		while (!__atomic_load_n(&w->tid, __ATOMIC_ACQUIRE) && pmd_now_ns() < end)
			usleep(1000);
		if (w->tid)
			tid[n++] = w->tid;
		if (w->index < run->nworkers) {
			tr->local_tid[w->index] = w->tid;
			if (w->index >= tr->nfault)
				tr->nfault = w->index + 1;
		}
	}
	for (i = 0; i < n && l + 16 < llen; i++)
		l += (size_t)snprintf(list + l, llen - l, "%s%d", l ? " " : "", tid[i]);
	if (tr->by_name)
		snprintf(filter, flen, "comm ~ \"pmd/fault/*\"");
	else
		pmd_race_pid_filter(tid, n, filter, flen);
	free(tid);
	return n > 0;
}

void pmd_race_trace_start(struct pmd_run *run)
{
	struct pmd_race *r = &run->race;
	struct race_tracer *tr;
	char pids[8192], who[3000], alloc[3200], free_[3200];
	int err = 0;

	r->tracing = false;
	if (run->cfg->race_trace == PMD_RACE_TRACE_OFF) {
		snprintf(r->trace_why, sizeof(r->trace_why), "--race-trace off");
		return;
	}
	if (geteuid()) {
		snprintf(r->trace_why, sizeof(r->trace_why), "not root: tracefs needs root");
		return;
	}
	tr = calloc(1, sizeof(*tr));
	if (!tr)
		return;
	tr->pipe_fd = -1;
	pthread_mutex_init(&tr->lock, NULL);
	/*
	 * Room for a few seconds of rounds and events, touched now: the main
	 * thread's later growth would be charged inside a seed round's memcg
	 * window (stress/fault_seed.h), where little is left.
	 */
	tr->caprec = 8192;
	tr->capev = 65536;
	tr->rec = calloc(tr->caprec, sizeof(*tr->rec));
	tr->ev = calloc(tr->capev, sizeof(*tr->ev));
	if (!tr->rec || !tr->ev) {
		snprintf(r->trace_why, sizeof(r->trace_why), "no memory for the trace's records");
		goto fail;
	}
	memset(tr->rec, 0xff, tr->caprec * sizeof(*tr->rec));
	memset(tr->ev, 0xff, tr->capev * sizeof(*tr->ev));
	if (!tracefs_root(tr, r->trace_why, sizeof(r->trace_why)))
		goto fail;
	remove_stale();
	if (!file_has(TRACEFS "/events/kmem/mm_page_alloc/format", "order")) {
		snprintf(r->trace_why, sizeof(r->trace_why),
			 "no kmem:mm_page_alloc trace event in this kernel");
		goto fail;
	}
	if (!file_has(TRACEFS "/trace_clock", "mono")) {
		snprintf(r->trace_why, sizeof(r->trace_why), "no 'mono' trace clock");
		goto fail;
	}
	tr->by_name = pmd_in_child_pidns();
	if (!racer_tids(run, tr, who, sizeof(who), pids, sizeof(pids))) {
		snprintf(r->trace_why, sizeof(r->trace_why), "no fault worker to trace");
		goto fail;
	}
	snprintf(alloc, sizeof(alloc), "(order == 9 || (order == 0 && migratetype == 0))%s%s%s",
		 who[0] ? " && (" : "", who, who[0] ? ")" : "");
	snprintf(free_, sizeof(free_), "order == 9%s%s%s", who[0] ? " && (" : "", who,
		 who[0] ? ")" : "");
	instance_path(tr->dir, sizeof(tr->dir), (int)getpid());
	if (mkdir(tr->dir, 0700)) {
		err = -errno;
		tr->dir[0] = '\0';
		snprintf(r->trace_why, sizeof(r->trace_why), "cannot make a tracefs instance: %s",
			 strerror(-err));
		goto fail;
	}
	/* mono: the clock of pmd_now_ns(), so the spans and the events line up */
	if ((err = put(tr, "trace_clock", "mono")) || (err = put(tr, "buffer_size_kb", "4096")) ||
	    (err = put(tr, "events/kmem/mm_page_alloc/filter", alloc)) ||
	    (err = put(tr, "events/kmem/mm_page_free/filter", free_)) ||
	    (!who[0] && (err = put(tr, "set_event_pid", pids))) ||
	    (tr->by_name && (err = put(tr, "options/record-tgid", "1"))) ||
	    (err = put(tr, "events/kmem/mm_page_alloc/enable", "1")) ||
	    (err = put(tr, "events/kmem/mm_page_free/enable", "1"))) {
		snprintf(r->trace_why, sizeof(r->trace_why), "setting up the tracefs instance: %s",
			 strerror(-err));
		goto fail;
	}
	if (!access(TRACEFS "/kprobe_events", W_OK))
		kprobes_start(tr, who);
	r->kprobes = tr->kprobes[0] != '\0';
	if ((err = put(tr, "tracing_on", "1"))) {
		snprintf(r->trace_why, sizeof(r->trace_why), "starting the trace: %s",
			 strerror(-err));
		goto fail;
	}
	{
		char path[160];

		snprintf(path, sizeof(path), "%s/trace_pipe", tr->dir);
		tr->pipe_fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	}
	if (tr->pipe_fd < 0) {
		snprintf(r->trace_why, sizeof(r->trace_why), "cannot open trace_pipe: %s",
			 strerror(errno));
		goto fail;
	}
	/* before any round: the mark's line, with the storm's thread group, comes first */
	if (tr->by_name && (err = put(tr, "trace_marker", SELF_MARK))) {
		snprintf(r->trace_why, sizeof(r->trace_why), "writing the instance's trace_marker: %s",
			 strerror(-err));
		goto fail;
	}
	tr->started = pmd_now_ns();
	/* release: a worker that sees the tracer sees it set up */
	__atomic_store_n(&r->tr, tr, __ATOMIC_RELEASE);
	r->tracing = true;
	r->trace_by_name = tr->by_name;
	return;
fail:
	tracer_free(tr);
}

static void add_event(struct race_tracer *tr, const struct pmd_race_ev *ev)
{
	if (tr->nev == tr->capev) {
		size_t cap = tr->capev ? tr->capev * 2 : 4096;
		void *p = realloc(tr->ev, cap * sizeof(*tr->ev));

		if (!p)
			return;
		tr->ev = p;
		tr->capev = cap;
	}
	tr->ev[tr->nev++] = *ev;
	tr->nseen++;
}

static void take_line(struct race_tracer *tr, const char *line, uint64_t now)
{
	struct pmd_race_ev ev;

	/* "CPU:1 [LOST 12 EVENTS]": rounds up to now cannot be judged */
	if (strstr(line, "[LOST ") && strstr(line, " EVENTS]")) {
		tr->lost_until = now;
		return;
	}
	if (!pmd_race_parse_line(line, &ev))
		return;
	if (ev.kind == PMD_EV_SELF) {
		if (tr->by_name && !tr->host_tgid)
			tr->host_tgid = ev.tgid;
		return;
	}
	if (tr->by_name) {
		if (!tr->host_tgid || ev.tgid != tr->host_tgid || ev.worker < 0 ||
		    (unsigned)ev.worker >= tr->nfault)
			return;
		if (!tr->host_tid[ev.worker])
			tr->host_tid[ev.worker] = ev.tid;
		else if (tr->host_tid[ev.worker] != ev.tid)
			tr->clash = true;
		ev.tid = tr->local_tid[ev.worker];
	}
	add_event(tr, &ev);
}

/* Read what the trace holds; lines cut by a read are kept for the next. */
static void read_pipe(struct race_tracer *tr, uint64_t now)
{
	char buf[65536];

	for (;;) {
		ssize_t n = read(tr->pipe_fd, buf, sizeof(buf));
		ssize_t i, start = 0;

		if (n <= 0)
			return;
		for (i = 0; i < n; i++) {
			if (buf[i] != '\n')
				continue;
			if (tr->npart) {
				size_t take = (size_t)(i - start);

				if (tr->npart + take >= sizeof(tr->part))
					take = sizeof(tr->part) - tr->npart - 1;
				memcpy(tr->part + tr->npart, buf + start, take);
				tr->part[tr->npart + take] = '\0';
				take_line(tr, tr->part, now);
				tr->npart = 0;
			} else {
				buf[i] = '\0';
				take_line(tr, buf + start, now);
			}
			start = i + 1;
		}
		if (start < n) {
			size_t take = (size_t)(n - start);

			if (tr->npart + take >= sizeof(tr->part))
				take = sizeof(tr->part) - tr->npart - 1;
			memcpy(tr->part + tr->npart, buf + start, take);
			tr->npart += take;
		}
	}
}

static int ev_cmp(const void *a, const void *b)
{
	const struct pmd_race_ev *x = a, *y = b;

	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* One round against the events read: the paths its racers took. */
static void judge(struct pmd_race *r, struct race_tracer *tr, const struct pmd_race_round *rr)
{
	unsigned paths[PMD_RACE_MAX_RACERS], i, thp = 0, pte = 0;
	bool seed, inferred = pmd_race_infer(rr) != PMD_INFER_NONE;

	if (rr->disturbed)
		return;
	if (rr->t_start <= tr->lost_until) {
		r->trace_lost++;
		return;
	}
	/*
	 * A reader's first touch is a load: its fault maps the (huge) zero
	 * page, and the huge zero path deposits a page table, which reads as
	 * the PTE path here. It installs no page of its own: not a racer of
	 * the seed race, whatever its allocations say.
	 */
	for (i = 0; i < rr->nracers && i < PMD_RACE_MAX_RACERS; i++) {
		paths[i] = rr->r[i].hi && i >= rr->readers
				   ? pmd_race_classify(tr->ev, tr->nev, rr->r[i].tid, rr->r[i].lo,
						       rr->r[i].hi)
				   : 0;
		thp |= paths[i] & PMD_PATH_THP;
		pte |= paths[i] & PMD_PATH_PTE;
		if (paths[i] == (PMD_PATH_THP | PMD_PATH_PTE))
			r->traced_mixed_racer++;
	}
	seed = pmd_race_seed_of(paths, i);
	if (r->kprobes) {
		unsigned kp[PMD_RACE_MAX_RACERS], j;
		bool kseed;

		for (j = 0; j < i; j++)
			kp[j] = rr->r[j].hi && j >= rr->readers
					? pmd_race_classify_kprobe(tr->ev, tr->nev, rr->r[j].tid,
								   rr->r[j].lo, rr->r[j].hi)
					: 0;
		kseed = pmd_race_seed_of(kp, i);
		r->kp_seed += kseed;
		r->kp_agree += kseed && seed;
		r->kp_only += kseed && !seed;
		r->ev_only += seed && !kseed;
	}
	r->traced_rounds++;
	if (seed)
		r->traced_seed++;
	else if (thp && !pte)
		r->traced_thp_only++;
	else if (pte && !thp)
		r->traced_pte_only++;
	if (rr->seed) {
		if (seed && inferred)
			r->agree++;
		else if (inferred)
			r->inferred_only++;
		else if (seed)
			r->traced_only++;
	}
}

/* Judge the rounds whose end the trace has surely passed; forget old events. */
static void match(struct pmd_race *r, struct race_tracer *tr, uint64_t upto)
{
	uint64_t keep_from = upto;
	size_t i, kept = 0, e;

	qsort(tr->ev, tr->nev, sizeof(*tr->ev), ev_cmp);
	pthread_mutex_lock(&tr->lock);
	for (i = 0; i < tr->nrec; i++) {
		struct pmd_race_round *rr = &tr->rec[i];

		if (rr->t_end > upto) {
			if (rr->t_start < keep_from)
				keep_from = rr->t_start;
			tr->rec[kept++] = *rr;
			continue;
		}
		judge(r, tr, rr);
	}
	tr->nrec = kept;
	pthread_mutex_unlock(&tr->lock);
	keep_from = keep_from > TS_SLACK_NS ? keep_from - TS_SLACK_NS : 0;
	for (e = 0; e < tr->nev && tr->ev[e].ts < keep_from; e++)
		;
	memmove(tr->ev, tr->ev + e, (tr->nev - e) * sizeof(*tr->ev));
	tr->nev -= e;
}

uint64_t pmd_race_trace_poll(struct pmd_run *run)
{
	struct race_tracer *tr = run->race.tr;
	uint64_t now = pmd_now_ns();

	if (!tr)
		return UINT64_MAX;
	read_pipe(tr, now);
	match(&run->race, tr, now > SETTLE_NS ? now - SETTLE_NS : 0);
	return pmd_now_ns() + POLL_NS;
}

/*
 * The trace cannot be believed (@why): none of its figures stands, the
 * seed race is counted by inference, and the report says why not traced.
 */
static void trace_void(struct pmd_race *r, const char *why)
{
	r->traced_rounds = r->traced_seed = r->traced_thp_only = r->traced_pte_only = 0;
	r->traced_mixed_racer = r->agree = r->inferred_only = r->traced_only = r->trace_lost = 0;
	r->kprobes = false;
	r->kp_seed = r->kp_agree = r->kp_only = r->ev_only = 0;
	r->tracing = false;
	snprintf(r->trace_why, sizeof(r->trace_why), "%s", why);
}

const char *pmd_race_trace_void_why(uint64_t traced, uint64_t seen, bool by_name, bool clash)
{
	if (clash)
		return "the racers were traced by task name (a pid namespace of its own) and two "
		       "threads of the run had one name";
	if (seen || traced < 100)
		return NULL;
	return by_name ? "the trace saw no event of the racers, traced by task name (a pid "
			 "namespace of its own)"
		       : "the trace saw no event of the racers' thread ids";
}

void pmd_race_trace_stop(struct pmd_run *run)
{
	struct race_tracer *tr = run->race.tr;
	uint64_t now = pmd_now_ns();
	const char *why;

	if (!tr)
		return;
	/* every round has ended: read what is left and judge them all */
	put(tr, "tracing_on", "0");
	read_pipe(tr, now);
	match(&run->race, tr, UINT64_MAX);
	run->race.tr = NULL;
	why = pmd_race_trace_void_why(run->race.traced_rounds, tr->nseen, tr->by_name, tr->clash);
	if (why)
		trace_void(&run->race, why);
	tracer_free(tr);
}

uint64_t pmd_race_seed_count(const struct pmd_race *r, const char **how)
{
	if (r->traced_rounds) {
		if (how)
			*how = "traced";
		return r->traced_seed;
	}
	if (how)
		*how = "inferred";
	return r->inferred;
}

struct json_t *pmd_race_json(const struct pmd_run *run, double secs)
{
	const struct pmd_race *r = &run->race;
	json_t *o = json_object(), *ev = json_object(), *mechs = json_array();
	const char *how;
	uint64_t seed = pmd_race_seed_count(r, &how);

	json_object_set_new(o, "rounds", json_integer((json_int_t)r->rounds));
	json_object_set_new(o, "collided", json_integer((json_int_t)r->collided));
	json_object_set_new(o, "seed_race", json_integer((json_int_t)seed));
	json_object_set_new(o, "seed_rounds", json_integer((json_int_t)r->seed_rounds));
	json_object_set_new(o, "rounds_per_s", json_real(secs > 0 ? (double)r->rounds / secs : 0));
	json_object_set_new(o, "collided_per_s",
			    json_real(secs > 0 ? (double)r->collided / secs : 0));
	json_object_set_new(o, "seed_race_per_s", json_real(secs > 0 ? (double)seed / secs : 0));
	json_object_set_new(o, "disturbed", json_integer((json_int_t)r->disturbed));
	if (r->mech & PMD_SEED_MECH_PRCTL)
		json_array_append_new(mechs, json_string("prctl"));
	if (r->mech & PMD_SEED_MECH_MEMCG)
		json_array_append_new(mechs, json_string("memcg"));
	json_object_set_new(o, "mechanisms", mechs);
	json_object_set_new(o, "mechanisms_why", json_string(r->mech_why));
	json_object_set_new(ev, "seed_race", json_string(how));
	json_object_set_new(ev, "collided",
			    json_string("the racers' first stores overlapped in time (their "
					"clock readings before and after)"));
	json_object_set_new(ev, "inferred",
			    json_string("a seed round whose chunk ended PTE-mapped while a racer's "
					"first store took two faults (a THP-path fault lost the PMD "
					"to a page table), or ended PMD-mapped while a PTE-role "
					"racer's store faulted (a PTE-path fault lost it to a huge "
					"PMD); getrusage minor faults and the chunk's THP probe"));
	json_object_set_new(ev, "inferred_rounds", json_integer((json_int_t)r->inferred));
	json_object_set_new(ev, "inferred_thp_lost", json_integer((json_int_t)r->inferred_thp_lost));
	json_object_set_new(ev, "inferred_pte_lost", json_integer((json_int_t)r->inferred_pte_lost));
	json_object_set_new(ev, "trace", json_boolean(r->tracing || r->traced_rounds));
	if (r->traced_rounds || r->tracing) {
		json_t *t = json_object();

		json_object_set_new(t, "method",
				    json_string("tracefs instance, kmem:mm_page_alloc (order 9: the "
						"THP path; order 0 unmovable zeroed with no huge page "
						"open: __pte_alloc, the PTE path) and mm_page_free "
						"(order 9) of the racers' threads in their first "
						"stores"));
		json_object_set_new(t, "racers_by",
				    json_string(r->trace_by_name
							? "task name, in the run's thread group (a "
							  "pid namespace of its own: the events' "
							  "thread ids are the host's)"
							: "thread id"));
		json_object_set_new(t, "rounds", json_integer((json_int_t)r->traced_rounds));
		json_object_set_new(t, "seed_race", json_integer((json_int_t)r->traced_seed));
		json_object_set_new(t, "thp_only", json_integer((json_int_t)r->traced_thp_only));
		json_object_set_new(t, "pte_only", json_integer((json_int_t)r->traced_pte_only));
		json_object_set_new(t, "racer_both_paths",
				    json_integer((json_int_t)r->traced_mixed_racer));
		json_object_set_new(t, "lost_rounds", json_integer((json_int_t)r->trace_lost));
		json_object_set_new(t, "agree", json_integer((json_int_t)r->agree));
		json_object_set_new(t, "inferred_only", json_integer((json_int_t)r->inferred_only));
		json_object_set_new(t, "traced_only", json_integer((json_int_t)r->traced_only));
		if (r->kprobes) {
			json_t *k = json_object();

			json_object_set_new(k, "method",
					    json_string("kprobe events on do_huge_pmd_anonymous_page "
							"and __pte_alloc of the racers' threads"));
			json_object_set_new(k, "seed_race", json_integer((json_int_t)r->kp_seed));
			json_object_set_new(k, "agree", json_integer((json_int_t)r->kp_agree));
			json_object_set_new(k, "kprobe_only", json_integer((json_int_t)r->kp_only));
			json_object_set_new(k, "events_only", json_integer((json_int_t)r->ev_only));
			json_object_set_new(t, "kprobes", k);
		}
		json_object_set_new(ev, "traced", t);
	} else {
		json_object_set_new(ev, "trace_off", json_string(r->trace_why));
	}
	json_object_set_new(o, "evidence", ev);
	return o;
}
