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

#include "restore_guard.h"
#include "run.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define BEAT_EVERY_NS 250000000ull
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
	struct pmd_msg_hdr h = { .magic = PMD_MSG_MAGIC, .type = type, .arg = arg, .len = len };
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
	w = calloc(n, sizeof(*w));
	if (!w)
		return -ENOMEM;
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
	free(w);
	return rc;
}

/* The pages of each result histogram that hold values (the rest read zero). */
static int send_hists(struct pmd_run *run)
{
	struct pmd_msg_hist *m = malloc(sizeof(*m));
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
	free(m);
	return rc;
}

static int send_rounds(struct pmd_run *run)
{
	struct pmd_round *r = malloc(sizeof(*r));
	unsigned i, s;
	int rc = 0;

	if (!r)
		return -ENOMEM;
	for (i = 0; i < run->nrounds && !rc; i++) {
		*r = run->rounds[i];
		for (s = 0; s < r->nsinst && s < PMD_MAX_STRESSORS; s++)
			skipped_as_text(&r->st[s].si);
		rc = send_msg(run, PMD_MSG_ROUND, 0, r,
			      (uint32_t)(offsetof(struct pmd_round, st) +
					 (r->nsinst < PMD_MAX_STRESSORS ? r->nsinst
									 : PMD_MAX_STRESSORS) *
						 sizeof(r->st[0])),
			      false);
	}
	free(r);
	return rc;
}

int pmd_storm_results(struct pmd_run *run, bool final)
{
	/* a copy, so that the reasons can travel as text without touching the run */
	struct pmd_run *c = malloc(sizeof(*c));
	unsigned i;
	int rc;

	if (run->storm_fd < 0)
		return 0;
	if (!c)
		return -ENOMEM;
	memcpy(c, run, sizeof(*c));
	for (i = 0; i < c->nsinst && i < PMD_MAX_STRESSORS; i++)
		skipped_as_text(&c->sinst[i]);
	rc = send_msg(run, PMD_MSG_RUN, final, c, sizeof(*c), false);
	free(c);
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
