// SPDX-License-Identifier: GPL-2.0
/*
 * The storm's messages to its supervisor (see storm.h). Everything is sent
 * from the storm's main thread. The results go once, at the end, as the run
 * struct itself followed by what it points to (histogram pages, rounds,
 * workers, the hang dump and kernel lines): the supervisor copies field by
 * field only what it knows and checks, never a pointer. Beats and events are
 * small and go during the run, so that a storm that dies or hangs later has
 * already told what it found.
 */
#include "storm.h"

#include "config.h"
#include "restore_guard.h"
#include "run.h"

#include <pmdstress/pool.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define BEAT_EVERY_NS 250000000ull
#define MSG_MAX (8u << 20) /* the largest message the supervisor takes */
/* a beat or an event waits rather than fill the pipe past this (it holds 64 KiB) */
#define PIPE_ROOM (48u << 10)

uint64_t pmd_msg_sum(const void *p, uint32_t len)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull ^ len;
	uint32_t i = 0;

	/* FNV-1a over 8-byte words, then the tail: a few hundred microseconds for the run struct */
	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static int write_all(int fd, const void *p, size_t len)
{
	const char *c = p;

	while (len) {
		ssize_t n = write(fd, c, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One message. @quiet: skip it rather than block on a pipe its reader is not emptying. */
static int send_msg(struct pmd_run *run, enum pmd_msg_type type, uint32_t arg, const void *p,
		    uint32_t len, bool quiet)
{
	struct pmd_msg_hdr h = { .magic = PMD_MSG_MAGIC, .type = type, .arg = arg, .len = len,
				 .image = (uintptr_t)pmd_stressors };
	int queued = 0, rc;

	if (run->storm_fd < 0)
		return 0;
	if (quiet && (ioctl(run->storm_fd, FIONREAD, &queued) || queued > (int)PIPE_ROOM))
		return -EAGAIN;
	h.sum = pmd_msg_sum(p, len);
	rc = write_all(run->storm_fd, &h, sizeof(h));
	if (!rc)
		rc = write_all(run->storm_fd, p, len);
	if (rc) {
		/* the supervisor is gone (it takes the storm with it): nothing more to say */
		close(run->storm_fd);
		run->storm_fd = -1;
	}
	return rc;
}

static void beat_now(struct pmd_run *run, enum pmd_phase phase, uint64_t quiet_ns)
{
	struct pmd_beat b;
	unsigned k;

	memset(&b, 0, sizeof(b));
	b.phase = phase;
	b.guard_pid = pmd_guard_pid();
	b.quiet_ns = quiet_ns;
	b.kmsg_seq = run->storm_seq;
	b.t0 = run->t0;
	b.t_origin = run->t_origin;
	for (k = 0; k < PMD_EV_KIND_COUNT; k++)
		b.ev_count[k] = __atomic_load_n(&run->ev_count[k], __ATOMIC_RELAXED);
	for (k = 0; k < PMD_CLASS_COUNT; k++)
		b.class_count[k] = __atomic_load_n(&run->class_count[k], __ATOMIC_RELAXED);
	b.ev_posted = __atomic_load_n(&run->ev_posted, __ATOMIC_RELAXED);
	b.dropped = __atomic_load_n(&run->dropped, __ATOMIC_RELAXED);
	b.resource_errors = __atomic_load_n(&run->resource_errors, __ATOMIC_RELAXED);
	if (!send_msg(run, PMD_MSG_BEAT, 0, &b, sizeof(b), true)) {
		run->storm_beat_ns = pmd_now_ns();
		run->storm_phase = phase;
	}
}

void pmd_storm_beat(struct pmd_run *run, enum pmd_phase phase, uint64_t quiet_ns)
{
	if (run->storm_fd < 0)
		return;
	if (phase == run->storm_phase && !quiet_ns &&
	    pmd_now_ns() - run->storm_beat_ns < BEAT_EVERY_NS)
		return;
	beat_now(run, phase, quiet_ns);
}

void pmd_storm_events(struct pmd_run *run)
{
	/*
	 * The log position first: every line read up to it has its event in
	 * the queue already (the main thread posts them as it reads), so once
	 * they are forwarded the supervisor may leave those lines to us.
	 */
	uint64_t seq = run->mon.kmsg_seq;

	pmd_events_drain(run);
	if (run->storm_fd < 0)
		return;
	while (run->storm_sent < run->nkept) {
		if (send_msg(run, PMD_MSG_EVENT, 0, &run->kept[run->storm_sent],
			     sizeof(run->kept[0]), true))
			return; /* the rest go with the next drain, or with the results */
		run->storm_sent++;
	}
	run->storm_seq = seq;
	beat_now(run, run->storm_phase, 0);
}

/* A reason formatted elsewhere (the configuration, a stressor) travels as text. */
static void skipped_as_text(struct pmd_sinst *si)
{
	if (si->skipped && si->skipped != si->why) {
		snprintf(si->why, sizeof(si->why), "%s", si->skipped);
		si->skipped = si->why;
	}
}

static int send_workers(struct pmd_run *run)
{
	size_t n = run->nworkers, i;
	struct pmd_msg_worker *w;
	int rc;

	if (!n || !run->workers)
		return 0;
	if (n * sizeof(*w) > run->storm_buf_len)
		return -ENOMEM;
	w = memset(run->storm_buf, 0, n * sizeof(*w));
	for (i = 0; i < n; i++) {
		const struct pmd_numa_where *at = i < run->numa.nwhere ? &run->numa.where[i] : NULL;

		w[i].sinst = (uint32_t)(run->workers[i].si - run->sinst);
		w[i].index = run->workers[i].index;
		w[i].id = run->workers[i].id;
		w[i].bound = at ? at->bound : -1;
		w[i].cpu = at ? at->cpu : -1;
		w[i].node = at ? at->node : -1;
		w[i].err = at ? at->err : 0;
	}
	rc = send_msg(run, PMD_MSG_WORKERS, (uint32_t)run->numa.nwhere, w,
		      (uint32_t)(n * sizeof(*w)), false);
	return rc;
}

/* The pages of each result histogram that hold values (the rest read zero). */
static int send_hists(struct pmd_run *run)
{
	struct pmd_msg_hist *m = run->storm_buf;
	unsigned i, k, p;
	int rc = 0;

	if (!m)
		return -ENOMEM;
	for (i = 0; i < run->nsinst && !rc; i++) {
		for (k = 0; k < PMD_MAX_METRICS && !rc; k++) {
			const struct pmd_hist *h = &run->totals[i].hist[k];

			for (p = 0; h->buckets && p < 64 && !rc; p++) {
				if (!(h->touched & (1ull << p)) ||
				    (size_t)(p + 1) * PMD_MSG_HIST_BUCKETS > PMD_HIST_BUCKETS)
					continue;
				m->sinst = i;
				m->metric = k;
				m->page = p;
				m->pad = 0;
				memcpy(m->bucket, h->buckets + (size_t)p * PMD_MSG_HIST_BUCKETS,
				       sizeof(m->bucket));
				rc = send_msg(run, PMD_MSG_HIST, 0, m, sizeof(*m), false);
			}
		}
	}
	return rc;
}

static int send_rounds(struct pmd_run *run)
{
	struct pmd_round *r = run->storm_buf;
	unsigned i, s;
	uint32_t len;
	int rc = 0;

	if (!r)
		return -ENOMEM;
	for (i = 0; i < run->nrounds && !rc; i++) {
		*r = run->rounds[i];
		if (r->nsinst > PMD_MAX_STRESSORS)
			r->nsinst = PMD_MAX_STRESSORS;
		for (s = 0; s < r->nsinst; s++)
			skipped_as_text(&r->st[s].si);
		/* the stressors the round had: the rest of the entry is zero */
		len = (uint32_t)(offsetof(struct pmd_round, st) + r->nsinst * sizeof(r->st[0]));
		rc = send_msg(run, PMD_MSG_ROUND, 0, r, len, false);
	}
	return rc;
}

/*
 * Workers that never came back (parked in the fatal handler, hung by
 * --inject hang) are not joined, and may still store to the run's atomic
 * words while it is copied: after a live fault the handler stores `stop`
 * after the reason, and a later store by another thread ends the release
 * sequence an acquire load would have synchronised with (ThreadSanitizer
 * saw a memcpy race with that store). So the copy reads the run a word at
 * a time with relaxed atomic loads, after acquire loads of the flags that
 * publish the plain fields those workers write (the abort reason, the
 * fatal event); a field not yet published is left empty in the copy.
 */
/* Whether byte `off` of the run lies in a plain field not yet published. */
static bool unpublished(size_t off, bool reason, uint32_t fatal)
{
	size_t r = offsetof(struct pmd_run, abort_reason), f = offsetof(struct pmd_run, fatal_ev);

	return (!reason && off >= r && off < r + sizeof(((struct pmd_run *)0)->abort_reason)) ||
	       (fatal < 2 && off >= f && off < f + sizeof(((struct pmd_run *)0)->fatal_ev));
}

static void snapshot_run(struct pmd_run *c, const struct pmd_run *run)
{
	const uint64_t *src = (const uint64_t *)(const void *)run;
	uint64_t *dst = (uint64_t *)(void *)c;
	bool reason = __atomic_load_n(&run->aborting, __ATOMIC_ACQUIRE);
	uint32_t fatal = __atomic_load_n(&run->fatal_pending, __ATOMIC_ACQUIRE);
	size_t i, b;

	_Static_assert(sizeof(struct pmd_run) % sizeof(uint64_t) == 0, "run is words");
	(void)__atomic_load_n(&run->abort_claimed, __ATOMIC_ACQUIRE);
	(void)__atomic_load_n(&run->inject_done, __ATOMIC_ACQUIRE);
	(void)__atomic_load_n(&run->stop, __ATOMIC_ACQUIRE);
	for (i = 0; i < sizeof(*c) / sizeof(uint64_t); i++) {
		size_t off = i * sizeof(uint64_t);

		if (!unpublished(off, reason, fatal) && !unpublished(off + 7, reason, fatal)) {
			dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
			continue;
		}
		for (b = off; b < off + sizeof(uint64_t); b++)
			((unsigned char *)c)[b] = unpublished(b, reason, fatal) ? 0 :
				__atomic_load_n((const unsigned char *)run + b, __ATOMIC_RELAXED);
	}
}

int pmd_storm_reserve(struct pmd_run *run)
{
	size_t len = sizeof(struct pmd_run);

	if (run->storm_fd < 0)
		return 0;
	if (len < sizeof(struct pmd_msg_hist))
		len = sizeof(struct pmd_msg_hist);
	if (len < sizeof(struct pmd_round))
		len = sizeof(struct pmd_round);
	if (len < run->nworkers * sizeof(struct pmd_msg_worker))
		len = run->nworkers * sizeof(struct pmd_msg_worker);
	if (len <= run->storm_buf_len)
		return 0;
	if (run->storm_buf)
		pmd_pool_free(run->storm_buf, run->storm_buf_len);
	run->storm_buf_len = 0;
	/* from the pool: the fork and exec stressors' children do not copy it */
	run->storm_buf = pmd_pool_alloc(len);
	if (!run->storm_buf)
		return -ENOMEM;
	run->storm_buf_len = len;
	return 0;
}

int pmd_storm_results(struct pmd_run *run, bool final)
{
	/* a copy, so that the reasons can travel as text without touching the run */
	struct pmd_run *c;
	unsigned i;
	int rc;

	if (run->storm_fd < 0)
		return 0;
	if (pmd_storm_reserve(run))
		return -ENOMEM;
	c = run->storm_buf;
	snapshot_run(c, run);
	for (i = 0; i < c->nsinst && i < PMD_MAX_STRESSORS; i++)
		skipped_as_text(&c->sinst[i]);
	rc = send_msg(run, PMD_MSG_RUN, final, c, sizeof(*c), false);
	if (!rc)
		rc = send_workers(run);
	if (!rc && final)
		rc = send_hists(run);
	if (!rc && final)
		rc = send_rounds(run);
	if (!rc && final && run->mon.hang_dump)
		rc = send_msg(run, PMD_MSG_TEXT, 0, run->mon.hang_dump,
			      (uint32_t)strlen(run->mon.hang_dump), false);
	if (!rc && final && run->mon.klog_len)
		rc = send_msg(run, PMD_MSG_TEXT, 1, run->mon.klog, (uint32_t)run->mon.klog_len,
			      false);
	if (!rc && final)
		rc = send_msg(run, PMD_MSG_END, 0, NULL, 0, false);
	if (!rc)
		run->storm_sent = run->nkept;
	return rc;
}

/* ---- the supervisor's side ------------------------------------------------------ */

/* Ours of the stressor the storm's @st points to, or NULL. */
static const struct pmd_stressor *known_stressor(const struct pmd_storm_view *s,
						 const struct pmd_stressor *st)
{
	unsigned i;

	for (i = 0; pmd_stressors[i]; i++)
		if ((uintptr_t)pmd_stressors[i] + s->image_delta == (uintptr_t)st)
			return pmd_stressors[i];
	return NULL;
}

/* Ours of the stressor name the storm's @name points to, or NULL. */
static const char *known_name(const struct pmd_storm_view *s, const char *name)
{
	unsigned i;

	for (i = 0; name && pmd_stressors[i]; i++)
		if ((uintptr_t)pmd_stressors[i]->name + s->image_delta == (uintptr_t)name)
			return pmd_stressors[i]->name;
	return NULL;
}

#define TERMINATE(a) ((a)[sizeof(a) - 1] = '\0')

static void take_event(const struct pmd_storm_view *s, struct pmd_event *e,
		       const struct pmd_event *from)
{
	*e = *from;
	e->stressor = known_name(s, from->stressor);
	if (e->ring_len > PMD_RING_LEN)
		e->ring_len = PMD_RING_LEN;
	TERMINATE(e->text);
}

/* A stressor instance as the storm had it; false if it is not one this program has. */
static bool take_sinst(struct pmd_storm_view *s, struct pmd_sinst *si, const struct pmd_sinst *from)
{
	const struct pmd_stressor *st = known_stressor(s, from->st);
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
	si->skipped = from->skipped ? si->why : NULL; /* src/run/storm.c sent it as text */
	memcpy(si->no_race, from->no_race, sizeof(si->no_race));
	TERMINATE(si->no_race);
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
static void take_run(struct pmd_storm_view *s, const struct pmd_run *r, bool final)
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
	run->inject_done = r->inject_done ? 1 : 0;
	memcpy(run->abort_reason, r->abort_reason, sizeof(run->abort_reason));
	TERMINATE(run->abort_reason);
	take_counts(run, r->ev_count, r->class_count, r->ev_posted, r->dropped, r->resource_errors);
	memcpy(run->first_internal, r->first_internal, sizeof(run->first_internal));
	TERMINATE(run->first_internal);
	run->nkept = r->nkept < PMD_EVENTS_KEPT ? r->nkept : PMD_EVENTS_KEPT;
	for (i = 0; i < run->nkept; i++)
		take_event(s, &run->kept[i], &r->kept[i]);
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
	/* the storm's to leave, its keeper, its OOM shield; only its folder is ours to remove */
	run->memcg.on = run->memcg.seed = run->memcg.keeper_on = false;
	memset(&run->memcg.keeper, 0, sizeof(run->memcg.keeper));
	run->memcg.oom_adj[0] = '\0';
	run->memcg.usage_fd = run->memcg.limit_fd = -1;
	TERMINATE(run->memcg.home);
	TERMINATE(run->memcg.dir);
	TERMINATE(run->memcg.home_procs);
	/* what its rounds raced, read from its trace where its racers' tids were known */
	run->race = r->race;
	run->race.tr = NULL;
	TERMINATE(run->race.mech_why);
	TERMINATE(run->race.trace_why);
	run->partner_ppm = r->partner_ppm;
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
	run->mon.kmsg_state = r->mon.kmsg_state <= PMD_KMSG_BLIND ? r->mon.kmsg_state
								  : PMD_KMSG_NOT_OPENED;
	run->mon.gap_max_ns = r->mon.gap_max_ns;
	run->mon.busy_max_ns = r->mon.busy_max_ns;
	run->mon.schedstat_ok = r->mon.schedstat_ok;
	memcpy(run->mon.gap_worker, r->mon.gap_worker, sizeof(run->mon.gap_worker));
	TERMINATE(run->mon.gap_worker);
	/* at the start its log position runs ahead of the events it forwarded */
	if (final && r->mon.kmsg_seq > s->kmsg_seq)
		s->kmsg_seq = r->mon.kmsg_seq;
	s->got_run = true;
}

static void take_workers(struct pmd_storm_view *s, const struct pmd_msg_worker *w, size_t n,
			 uint32_t nwhere)
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

static void take_hist(struct pmd_storm_view *s, const struct pmd_msg_hist *m)
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

static void take_round(struct pmd_storm_view *s, const struct pmd_round *from, uint32_t len)
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

static void take_text(struct pmd_storm_view *s, uint32_t which, const char *p, uint32_t len)
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

static void take_beat(struct pmd_storm_view *s, const struct pmd_beat *b, uint64_t now)
{
	s->phase = b->phase;
	s->quiet_until_ns = b->quiet_ns ? now + b->quiet_ns : 0;
	s->guard_pid = b->guard_pid > 0 ? b->guard_pid : 0;
	if (b->kmsg_seq > s->kmsg_seq)
		s->kmsg_seq = b->kmsg_seq;
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
static bool take_message(struct pmd_storm_view *s, const struct pmd_msg_hdr *h, const char *p,
			 uint64_t now)
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
			take_event(s, &run->kept[run->nkept++], (const struct pmd_event *)p);
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

bool pmd_storm_read(struct pmd_storm_view *s, int fd)
{
	uint64_t now = pmd_now_ns();
	size_t off = 0;

	bool open = true;

	while (open && !s->damaged) {
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
		n = read(fd, s->buf + s->have, s->cap - s->have);
		if (n > 0) {
			s->have += (size_t)n;
			s->last_ns = now;
			continue;
		}
		open = n < 0 && (errno == EAGAIN || errno == EINTR);
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
			memmove(s->buf + off + sizeof(h) - ((uintptr_t)p & 7), p,
				s->have - off - sizeof(h));
			s->have -= (uintptr_t)p & 7;
			off -= (uintptr_t)p & 7;
			p = s->buf + off + sizeof(h);
		}
		s->image_delta = (uintptr_t)h.image - (uintptr_t)pmd_stressors;
		if (pmd_msg_sum(p, h.len) != h.sum || !take_message(s, &h, p, now)) {
			s->damaged = true;
			break;
		}
		off += sizeof(h) + h.len;
	}
	if (s->damaged) {
		s->have = 0;
		return false;
	}
	memmove(s->buf, s->buf + off, s->have - off);
	s->have -= off;
	return open;
}

void pmd_storm_view_free(struct pmd_storm_view *s)
{
	free(s->buf);
	s->buf = NULL;
	s->have = s->cap = 0;
}
