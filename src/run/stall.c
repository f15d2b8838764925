// SPDX-License-Identifier: GPL-2.0
/*
 * The workers' clocks of their progress and of the children they wait for,
 * and the dump a hang leaves in the report. What a worker calls itself (a
 * slow beat, a look at its child, a stuck child) runs on its small stack
 * (--stack-size, 16K at least): no big frames here (CMakeLists.txt checks
 * them); the dump's buffers are on the heap.
 */
#include "stall.h"

#include "run.h"
#include "sysinfo.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A task's CPU time and run-queue wait (schedstat: "cpu_ns run_delay_ns
 * slices"; CONFIG_SCHED_INFO). False where the kernel does not keep them.
 */
bool pmd_read_schedstat(const char *path, uint64_t *cpu, uint64_t *rq)
{
	char buf[96];
	unsigned long long c, r;

	if (pmd_read_text(path, buf, sizeof(buf)) || sscanf(buf, "%llu %llu", &c, &r) != 2)
		return false;
	*cpu = c;
	*rq = r;
	return true;
}

/* Split @gap into still and busy, by the CPU time and run-queue wait since the reading. */
static void split_gap(uint64_t gap, uint64_t ran, uint64_t waited, uint64_t *still,
		      uint64_t *busy)
{
	*busy = gap > waited ? gap - waited : 0;
	*still = *busy > ran ? *busy - ran : 0;
}

void pmd_beat_slow(struct pmd_wstats *s, uint64_t now)
{
	uint64_t last = __atomic_load_n(&s->beat_ns, __ATOMIC_RELAXED), gap = last ? now - last : 0;
	uint64_t cpu, rq, ran = 0, waited = 0, still, busy;
	bool have = pmd_read_schedstat("/proc/thread-self/schedstat", &cpu, &rq);

	/* since the last reading, which is at most 100 ms before the gap began */
	if (have && __atomic_load_n(&s->rq_at, __ATOMIC_RELAXED)) {
		waited = rq - __atomic_load_n(&s->rq_ns, __ATOMIC_RELAXED);
		ran = cpu - __atomic_load_n(&s->cpu_ns, __ATOMIC_RELAXED);
	}
	split_gap(gap, ran, waited, &still, &busy);
	if (!have) /* no schedstat: who knows what it did; the longer limit judges it */
		still = 0;
	if (still > __atomic_load_n(&s->gap_max_ns, __ATOMIC_RELAXED))
		__atomic_store_n(&s->gap_max_ns, still, __ATOMIC_RELAXED);
	if (busy > __atomic_load_n(&s->busy_max_ns, __ATOMIC_RELAXED))
		__atomic_store_n(&s->busy_max_ns, busy, __ATOMIC_RELAXED);
	if (have) {
		__atomic_store_n(&s->rq_ns, rq, __ATOMIC_RELAXED);
		__atomic_store_n(&s->cpu_ns, cpu, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&s->rq_at, now, __ATOMIC_RELAXED);
}

uint64_t pmd_worker_stall(const struct pmd_wstats *ws, uint64_t now, uint64_t *busy)
{
	uint64_t beat = __atomic_load_n(&ws->beat_ns, __ATOMIC_RELAXED), cpu, rq;
	uint64_t ran = 0, waited = 0, still;
	int tid = __atomic_load_n(&ws->tid, __ATOMIC_RELAXED);
	char path[64];

	*busy = 0;
	if (!beat || now < beat)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
	if (tid <= 0 || !pmd_read_schedstat(path, &cpu, &rq)) {
		*busy = now - beat; /* no schedstat: only the longer limit can judge it */
		return 0;
	}
	if (__atomic_load_n(&ws->rq_at, __ATOMIC_RELAXED)) {
		waited = rq - __atomic_load_n(&ws->rq_ns, __ATOMIC_RELAXED);
		ran = cpu - __atomic_load_n(&ws->cpu_ns, __ATOMIC_RELAXED);
	}
	split_gap(now - beat, ran, waited, &still, busy);
	return still;
}

uint64_t pmd_busy_limit(uint64_t hang_timeout_ns)
{
	return hang_timeout_ns > 60000000000ull ? hang_timeout_ns : 60000000000ull;
}

void pmd_child_watch(struct pmd_child_watch *c, pid_t pid)
{
	c->pid = pid;
	c->progress = 0;
	c->moved_at = pmd_coarse_ns();
}

int pmd_child_look(const struct pmd_worker *w, struct pmd_child_watch *c)
{
	uint64_t now = pmd_coarse_ns(), cpu, rq;
	char path[64];

	/*
	 * Where the kernel keeps no schedstat, nothing can be seen to move:
	 * the child gets the longer limit from the start of the wait.
	 */
	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)c->pid);
	if (!pmd_read_schedstat(path, &cpu, &rq))
		return now - c->moved_at > pmd_busy_limit(w->si->cfg->hang_timeout_ns)
			       ? PMD_CHILD_STUCK
			       : PMD_CHILD_STILL;
	if (cpu + rq != c->progress) {
		c->progress = cpu + rq;
		c->moved_at = now;
		return PMD_CHILD_MOVING;
	}
	return now - c->moved_at > w->si->cfg->hang_timeout_ns ? PMD_CHILD_STUCK
								: PMD_CHILD_STILL;
}

/* Room to read one task's files, on the heap: the dump may run on a worker's stack. */
struct scratch {
	char path[320], comm[32], stat[512], wchan[96], stack[4096];
};

/*
 * Append one task's "id comm state wchan" line and its kernel stack (root
 * only: /proc/PID/stack is 0400) to the dump at *@n; @dir is its /proc
 * directory, @label what it is.
 */
static void dump_one(struct scratch *t, char *dump, size_t cap, size_t *n, const char *dir,
		     const char *label)
{
	const char *state = "?";
	char *p, *save = NULL;

	t->comm[0] = t->stat[0] = t->wchan[0] = t->stack[0] = '\0';
	snprintf(t->path, sizeof(t->path), "%s/comm", dir);
	pmd_read_text(t->path, t->comm, sizeof(t->comm));
	snprintf(t->path, sizeof(t->path), "%s/stat", dir);
	pmd_read_text(t->path, t->stat, sizeof(t->stat));
	p = strrchr(t->stat, ')'); /* "tid (comm) S ..." */
	if (p && p[1] == ' ' && p[2]) {
		p[3] = '\0';
		state = p + 2;
	}
	snprintf(t->path, sizeof(t->path), "%s/wchan", dir);
	pmd_read_text(t->path, t->wchan, sizeof(t->wchan));
	snprintf(t->path, sizeof(t->path), "%s/stack", dir);
	pmd_read_text(t->path, t->stack, sizeof(t->stack));
	*n += (size_t)snprintf(dump + *n, cap - *n, "%s %-15s state %s wchan %s\n", label, t->comm,
			       state, t->wchan[0] ? t->wchan : "-");
	for (p = strtok_r(t->stack, "\n", &save); p && *n + 256 < cap;
	     p = strtok_r(NULL, "\n", &save))
		*n += (size_t)snprintf(dump + *n, cap - *n, "    %s\n", p);
}

/*
 * Every task of ours and every child a worker waits for (the fork and exec
 * stressors publish it): state, wchan and kernel stack, taken once a run,
 * by the first to see a hang (the watchdog, a worker whose child did not
 * end, the join), before anything is killed.
 */
void pmd_hang_dump(struct pmd_run *run)
{
	struct pmd_monitor *m = &run->mon;
	size_t cap = 256u << 10, n = 0;
	struct scratch *t;
	struct dirent *de;
	char *dump;
	DIR *d;
	unsigned i;

	if (__atomic_exchange_n(&m->dumping, true, __ATOMIC_ACQ_REL))
		return;
	dump = malloc(cap);
	t = malloc(sizeof(*t));
	d = opendir("/proc/self/task");
	if (!dump || !t || !d) {
		free(dump);
		free(t);
		if (d)
			closedir(d);
		return;
	}
	dump[0] = '\0';
	while ((de = readdir(d)) && n + 512 < cap) {
		char dir[64], label[64];

		if (de->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof(dir), "/proc/self/task/%.32s", de->d_name);
		snprintf(label, sizeof(label), "task %.32s", de->d_name);
		dump_one(t, dump, cap, &n, dir, label);
	}
	closedir(d);
	for (i = 0; i < run->nworkers && n + 512 < cap; i++) {
		int pid = __atomic_load_n(&run->wstats[i].child, __ATOMIC_ACQUIRE);
		char dir[64], label[96];

		if (pid <= 0)
			continue;
		snprintf(dir, sizeof(dir), "/proc/%d", pid);
		snprintf(label, sizeof(label), "child %d of %s worker %u,", pid,
			 run->workers[i].si->st->name, run->workers[i].index);
		dump_one(t, dump, cap, &n, dir, label);
	}
	free(t);
	/* whole, then published: the report may be written while a worker still waits */
	__atomic_store_n(&m->hang_dump, dump, __ATOMIC_RELEASE);
}

void pmd_child_stuck(struct pmd_worker *w, pid_t pid, const char *what)
{
	struct pmd_run *run = w->si->run;
	char dir[64], stat[512] = "", wchan[96] = "";
	const char *state = "?";
	struct pmd_event ev;
	char *p;

	snprintf(dir, sizeof(dir), "/proc/%d/stat", (int)pid);
	pmd_read_text(dir, stat, sizeof(stat));
	p = strrchr(stat, ')');
	if (p && p[1] == ' ' && p[2]) {
		p[3] = '\0';
		state = p + 2;
	}
	snprintf(dir, sizeof(dir), "/proc/%d/wchan", (int)pid);
	pmd_read_text(dir, wchan, sizeof(wchan));
	memset(&ev, 0, sizeof(ev));
	ev.kind = PMD_EV_HANG;
	ev.t_ns = pmd_now_ns();
	ev.worker = (int)w->id;
	ev.stressor = w->si->st->name;
	ev.chunk = -1;
	snprintf(ev.text, sizeof(ev.text), "%s %d of %s worker %u stayed still (no CPU time, "
		 "no wait for one) for --hang-timeout %.1fs: state %s, wchan %s; killed (its stack "
		 "in the report)", what, (int)pid, w->si->st->name, w->index,
		 (double)w->si->cfg->hang_timeout_ns / 1e9, state, wchan[0] ? wchan : "-");
	/* the dump, if this is the first hang, shows the child as it is: not killed yet */
	if (__atomic_exchange_n(&run->mon.hang_posted, true, __ATOMIC_ACQ_REL)) {
		pmd_event_post(run, &ev); /* another hang was first: this child is news still */
		return;
	}
	pmd_hang_dump(run);
	pmd_event_post(run, &ev);
	pmd_run_abort(run, "hang");
}

