// SPDX-License-Identifier: GPL-2.0
/*
 * Run control: build the run from the configuration, spawn the workers,
 * release them at once, watch the clock and the signals, stop, join,
 * verify, merge and report. The main thread never touches the arena.
 */
#include "run.h"

#include <pmdstress/pool.h>

#include "config.h"
#include "fatal.h"
#include "forensics.h"
#include "jsonl.h"
#include "memcg.h"
#include "progress.h"
#include "report.h"
#include "restore.h"
#include "sigsafe.h"
#include "stall.h"
#include "storm.h"
#include "units.h"

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <urcu.h>

uint64_t pmd_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static long futex_wait(uint32_t *word, uint32_t val, uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };

	return syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

static void futex_wake_all(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

bool pmd_should_stop(const struct pmd_worker *w)
{
	return __atomic_load_n(&w->si->run->stop, __ATOMIC_RELAXED);
}

__thread struct pmd_wstats *pmd_self;

bool pmd_aborting(const struct pmd_worker *w)
{
	return __atomic_load_n(&w->si->run->aborting, __ATOMIC_ACQUIRE);
}

bool pmd_sleep(const struct pmd_worker *w, uint64_t ns)
{
	struct pmd_run *run = w->si->run;
	uint64_t end = pmd_now_ns() + ns, now;

	/* asleep on purpose: the watchdog must not call this a hang, nor its gap a stall */
	pmd_beat_gap(w->stats, pmd_coarse_ns());
	__atomic_store_n(&w->stats->state, PMD_WS_SLEEPING, __ATOMIC_RELAXED);
	while (!__atomic_load_n(&run->stop, __ATOMIC_ACQUIRE) && (now = pmd_now_ns()) < end)
		futex_wait(&run->stop, 0, end - now);
	__atomic_store_n(&w->stats->beat_ns, pmd_coarse_ns(), __ATOMIC_RELAXED);
	__atomic_store_n(&w->stats->state, PMD_WS_RUNNING, __ATOMIC_RELAXED);
	return !__atomic_load_n(&run->stop, __ATOMIC_ACQUIRE);
}

/*
 * --partner-cpu: the sleep a partner worker owes for the CPU time it used
 * since its last pace, so that its share of a CPU stays at @ppm millionths.
 */
static uint64_t cpu_owed(const struct pmd_worker *w, uint32_t ppm)
{
	struct timespec ts;
	uint64_t t, prev;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	prev = w->stats->pace_cpu;
	w->stats->pace_cpu = t;
	return prev && t > prev ? (t - prev) * (1000000 - ppm) / ppm : 0;
}

bool pmd_pace(const struct pmd_worker *w, uint64_t *next, uint64_t rate)
{
	uint32_t ppm = w->si->run->partner_ppm;
	uint64_t period, now, owed = ppm ? cpu_owed(w, ppm) : 0;

	if (!rate && !owed)
		return !pmd_should_stop(w);
	now = pmd_now_ns();
	if (rate) {
		period = 1000000000ull * (w->si->nworkers ? w->si->nworkers : 1) / rate;
		if (*next + period < now)
			*next = now;
		*next += period;
	}
	if (owed && (!rate || *next < now + owed))
		*next = now + owed;
	return *next <= now ? !pmd_should_stop(w) : pmd_sleep(w, *next - now);
}

/*
 * --partner-cpu: with the fault storm running, each partner worker's share
 * of a CPU. The storm's racers need CPUs at the same moment to race at all;
 * partners at fixed rates took them on a slow machine (a TCG guest ran 16
 * rounds in 10 s with every partner, 130 without).
 */
static void partner_share(struct pmd_run *run)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned i, partners = 0;
	bool storm = false;

	run->partner_ppm = 0;
	for (i = 0; i < run->nsinst; i++) {
		const struct pmd_sinst *si = &run->sinst[i];

		if (si->skipped || !si->nworkers)
			continue;
		if (!strcmp(si->st->name, "fault"))
			storm = true;
		else
			partners += si->nworkers;
	}
	if (!storm || !partners || !run->cfg->partner_cpu)
		return;
	run->partner_ppm = (uint32_t)((uint64_t)(cpus > 0 ? cpus : 1) * run->cfg->partner_cpu *
				      10000 / partners);
	if (run->partner_ppm > 1000000 || !run->partner_ppm)
		run->partner_ppm = run->partner_ppm ? 1000000 : 1;
	if (run->partner_ppm == 1000000)
		run->partner_ppm = 0; /* a whole CPU each: no cap */
}

static void request_stop(struct pmd_run *run)
{
	__atomic_store_n(&run->stop, 1, __ATOMIC_RELEASE);
	futex_wake_all(&run->stop);
}

/*
 * The first to end the run says why, then raises aborting (release): who
 * sees it raised (acquire) reads the whole reason. strnlen and memcpy only:
 * the fault handler comes here. False if another was first.
 */
static bool abort_claim(struct pmd_run *run, const char *why)
{
	size_t n = strnlen(why, sizeof(run->abort_reason) - 1);

	if (__atomic_exchange_n(&run->abort_claimed, true, __ATOMIC_ACQ_REL))
		return false;
	memcpy(run->abort_reason, why, n);
	run->abort_reason[n] = '\0';
	__atomic_store_n(&run->aborting, true, __ATOMIC_RELEASE);
	return true;
}

void pmd_run_abort_signal(struct pmd_run *run)
{
	if (!abort_claim(run, "fault on a live chunk"))
		return;
	__atomic_store_n(&run->stop, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &run->stop, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	/* the main thread itself needs no wake-up (after the run SIGUSR1 would kill it) */
	if ((pid_t)syscall(SYS_gettid) != run->main_tid)
		syscall(SYS_tgkill, getpid(), run->main_tid, SIGUSR1);
}

/* The handler's event, posted from the main thread (posting allocates). */
static void post_fatal_event(struct pmd_run *run)
{
	struct pmd_event *ev = &run->fatal_ev;
	char thread[17];

	if (__atomic_load_n(&run->fatal_pending, __ATOMIC_ACQUIRE) != 2)
		return;
	memcpy(thread, ev->text, sizeof(thread));
	thread[16] = '\0';
	ev->thp = pmd_thp_probe(run, &run->arena.chunks[ev->chunk], &ev->pfn);
	snprintf(ev->text, sizeof(ev->text),
		 "%s (si_code %d) at %#llx on live chunk %d page %d in %s; chunk state %s%s, "
		 "generation %u", ev->signo == SIGBUS ? "SIGBUS" : "SIGSEGV", ev->si_code,
		 (unsigned long long)ev->addr, ev->chunk, ev->page, thread,
		 (const char *[]){ "idle", "round", "held", "?" }[ev->chunk_state &
								    PMD_CHUNK_STATE_MASK & 3],
		 (ev->chunk_state & PMD_CHUNK_RETIRED) ? " retired" : "", ev->gen);
	pmd_event_post(run, ev);
	__atomic_store_n(&run->fatal_pending, 3, __ATOMIC_RELEASE);
}

void pmd_run_abort(struct pmd_run *run, const char *why)
{
	if (!abort_claim(run, why))
		return;
	request_stop(run);
	/* wake the main thread out of its sigtimedwait */
	pthread_kill(run->main_thread, SIGUSR1);
}

uint64_t pmd_rand(struct pmd_worker *w)
{
	/* xorshift128+: fast, and good enough to pick pages and orders */
	uint64_t s1 = w->rng[0];
	const uint64_t s0 = w->rng[1];

	w->rng[0] = s0;
	s1 ^= s1 << 23;
	w->rng[1] = s1 ^ s0 ^ (s1 >> 18) ^ (s0 >> 5);
	return w->rng[1] + s0;
}

unsigned pmd_pick_weighted(struct pmd_worker *w, const uint64_t *weight, unsigned n,
			   uint64_t total)
{
	uint64_t r = pmd_rand_below(w, total);
	unsigned k;

	for (k = 0; k + 1 < n; k++) {
		if (r < weight[k])
			return k;
		r -= weight[k];
	}
	return n - 1;
}

static void seed_rng(struct pmd_worker *w, uint64_t seed)
{
	w->rng[0] = pmd_stamp_mix(seed ^ (0x9e3779b97f4a7c15ull * (w->id + 1)));
	w->rng[1] = pmd_stamp_mix(w->rng[0] ^ 0xd1b54a32d192ed03ull);
	if (!w->rng[0] && !w->rng[1])
		w->rng[1] = 1;
}

bool pmd_enomem_own(const struct pmd_worker *w, int err)
{
	/*
	 * Since its last beat: the op that failed began after it. A fork
	 * is kept out of windows (pmd_memcg_charge_begin()): one that failed
	 * in such a section met none, whatever closed before it began.
	 */
	uint64_t since = __atomic_load_n(&w->stats->beat_ns, __ATOMIC_RELAXED);
	uint64_t kept = pmd_memcg_charged_until();

	return (err == ENOMEM || err == -ENOMEM) &&
	       pmd_memcg_window_since(w->si->run, kept > since ? kept : since);
}

void pmd_worker_error(struct pmd_worker *w, int err, const char *fmt, ...)
{
	struct pmd_run *run = w->si->run;
	struct pmd_event ev;
	va_list ap;
	size_t n;

	memset(&ev, 0, sizeof(ev));
	ev.kind = PMD_EV_ERROR;
	ev.t_ns = pmd_now_ns();
	ev.worker = (int)w->id;
	ev.stressor = w->si->st->name;
	ev.chunk = -1;
	va_start(ap, fmt);
	vsnprintf(ev.text, sizeof(ev.text), fmt, ap);
	va_end(ap);
	n = strlen(ev.text);
	err = err < 0 ? -err : err;
	if (err)
		snprintf(ev.text + n, sizeof(ev.text) - n, ": %s", strerror(err));
	/*
	 * A limit ran out, nothing broke: only where one the run can name was
	 * near (src/kernel/reslimits.c). Else the kernel said ENOMEM or EAGAIN with no
	 * reason the run can see, and that is the kernel's error or ours.
	 */
	/*
	 * The seed race's memcg way set that limit itself, on purpose, around
	 * the op: neither the machine's limit ("resources" would have bisect
	 * skip a good kernel) nor the kernel's error. Said, not a finding;
	 * stressors that can go on after one do (pmd_enomem_own()).
	 */
	if (pmd_enomem_own(w, err)) {
		__atomic_fetch_add(&run->own_limit_errors, 1, __ATOMIC_RELAXED);
		fprintf(stderr, "pmdstress: %s worker %u stops: %s (a seed round's memcg window "
				"was open: the run's own limit, not a finding)\n",
			w->si->st->name, w->index, ev.text);
		return;
	}
	if (err == EAGAIN || err == ENOMEM) {
		char why[224];
		bool named = pmd_limits_explain(&run->limits, err, why, sizeof(why));

		n = strlen(ev.text);
		snprintf(ev.text + n, sizeof(ev.text) - n, named ? " (near a limit: %s)"
								 : " (no limit near: %s)", why);
		if (named) {
			__atomic_fetch_add(&run->resource_errors, 1, __ATOMIC_RELAXED);
			pmd_event_post(run, &ev);
			return;
		}
	}
	if (!__atomic_exchange_n(&run->internal_claimed, true, __ATOMIC_ACQ_REL))
		memcpy(run->first_internal, ev.text, sizeof(run->first_internal));
	pmd_event_post(run, &ev);
}

const struct pmd_inject *pmd_inject_get(const struct pmd_run *run)
{
	return &run->inject;
}

bool pmd_inject_claim(struct pmd_run *run)
{
	return __atomic_exchange_n(&run->inject_done, 1, __ATOMIC_ACQ_REL) == 0;
}

int pmd_inject_parse(const char *text, unsigned nchunks, struct pmd_inject *inj, char *err,
		     size_t errlen)
{
	static const char *const names[] = { "lost_write", "stale", "foreign",
					     "nonzero_after_zap", "cow_leak", NULL };
	char buf[PMD_OPT_STRLEN], *save = NULL, *tok;
	unsigned vals[5] = { 0, 0, 0, 1, 1 }, i, n = 0;

	memset(inj, 0, sizeof(*inj));
	if (!*text)
		return 0;
	snprintf(buf, sizeof(buf), "%s", text);
	tok = strtok_r(buf, ":", &save);
	for (i = 0; names[i]; i++) {
		if (tok && !strcmp(tok, names[i])) {
			inj->kind = PMD_INJECT_CORRUPT;
			inj->class = (enum pmd_class)(PMD_CLASS_LOST_WRITE + i);
		}
	}
	if (tok && !strcmp(tok, "hang"))
		inj->kind = PMD_INJECT_HANG;
	if (tok && !strcmp(tok, "segv"))
		inj->kind = PMD_INJECT_SEGV;
	if (tok && !strcmp(tok, "segv_final"))
		inj->kind = PMD_INJECT_SEGV_FINAL;
	if (tok && !strcmp(tok, "sigbus"))
		inj->kind = PMD_INJECT_SIGBUS;
	if (tok && !strcmp(tok, "zap"))
		inj->kind = PMD_INJECT_ZAP;
	if (inj->kind == PMD_INJECT_NONE) {
		snprintf(err, errlen, "--inject: invalid value '%s' (expected lost_write, stale, "
				      "foreign, nonzero_after_zap, cow_leak, hang, segv, segv_final, "
				      "sigbus or zap, then :chunk:page:slot:after:pages)", text);
		return -EINVAL;
	}
	while ((tok = strtok_r(NULL, ":", &save)) && n < 5) {
		char *end;
		unsigned long v = strtoul(tok, &end, 10);

		if (*end || v > 1000000) {
			snprintf(err, errlen, "--inject: invalid number '%s' in '%s'", tok, text);
			return -EINVAL;
		}
		vals[n++] = (unsigned)v;
	}
	inj->chunk = vals[0];
	inj->page = vals[1];
	inj->slot = vals[2];
	inj->after_rounds = vals[3];
	inj->pages = vals[4];
	/* else the injection silently never happens, and a self-test proves nothing */
	if (inj->chunk >= nchunks) {
		snprintf(err, errlen, "--inject: chunk must be below %u (the arena's chunks), in '%s'",
			 nchunks, text);
		return -EINVAL;
	}
	if (inj->page >= PMD_CHUNK_PAGES || inj->slot >= PMD_PAGE_SLOTS || !inj->pages ||
	    inj->page + inj->pages > PMD_CHUNK_PAGES) {
		snprintf(err, errlen, "--inject: page must be below %lu (and page + pages at most "
				      "that), slot below %lu, in '%s'",
			 (unsigned long)PMD_CHUNK_PAGES, (unsigned long)PMD_PAGE_SLOTS, text);
		return -EINVAL;
	}
	return 0;
}

/* ---- workers ---------------------------------------------------------------- */

/* A worker's life; @own_thread false: on the main thread (--single-thread). */
static void worker_run(struct pmd_worker *w, bool own_thread)
{
	struct pmd_sinst *si = w->si;
	struct pmd_run *run = si->run;
	char name[16];
	int rc;

	if (own_thread) {
		/* perf bench's habit: ps, top and perf show who is who */
		snprintf(name, sizeof(name), "pmd/%.6s/%u", si->st->name, w->index);
		prctl(PR_SET_NAME, name, 0, 0, 0);
		pmd_fatal_thread_init(); /* a stack of its own for the fatal-signal handler */
	}
	rcu_register_thread();
	rc = pmd_numa_bind_worker(&run->numa, w->id); /* --cpu-nodes */
	if (rc)
		pmd_worker_error(w, rc, "binding worker %u to node %d's CPUs (--cpu-nodes)", w->id,
				 run->numa.where[w->id].bound);
	/* release: the race trace reads it before the workers go (src/kernel/race.c) */
	__atomic_store_n(&w->tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	__atomic_store_n(&w->stats->state, PMD_WS_RUNNING, __ATOMIC_RELAXED);
	while (!__atomic_load_n(&run->go, __ATOMIC_ACQUIRE))
		futex_wait(&run->go, 0, 1000000000ull);
	/*
	 * Run even if the run was stopped already (a signal that was pending at
	 * the start): every stressor sees the stop at its first check, and one
	 * whose workers meet at a gate needs all of them there, or those that
	 * came wait for the rest for good. Only go == 2 (a setup refused the
	 * run; there is no state to run on) sends a worker home at once.
	 */
	if (!si->skipped && si->st->run && __atomic_load_n(&run->go, __ATOMIC_ACQUIRE) == 1) {
		/* the watchdog's clock of this worker starts now, run-queue wait read */
		pmd_self = w->stats;
		__atomic_store_n(&w->stats->tid, (int32_t)syscall(SYS_gettid), __ATOMIC_RELAXED);
		pmd_beat_slow(w->stats, pmd_coarse_ns());
		__atomic_store_n(&w->stats->beat_ns, pmd_coarse_ns(), __ATOMIC_RELAXED);
		rc = si->st->run(w);
		/* its last stretch: a stall across the run's end is judged too */
		pmd_beat_gap(w->stats, pmd_coarse_ns());
		pmd_self = NULL;
		if (rc)
			pmd_worker_error(w, rc, "%s worker %u stopped", si->st->name, w->index);
	}
	pmd_numa_worker_done(&run->numa, w->id); /* where it ran, for the report */
	rcu_unregister_thread();
	if (own_thread)
		pmd_fatal_thread_fini();
	__atomic_store_n(&w->stats->state, PMD_WS_DONE, __ATOMIC_RELAXED);
	/* every stressor finished its work before the clock ran out: tell main */
	if (__atomic_sub_fetch(&run->live, 1, __ATOMIC_ACQ_REL) == 0 && own_thread)
		pthread_kill(run->main_thread, SIGUSR1);
}

static void *worker_main(void *arg)
{
	worker_run(arg, true);
	return NULL;
}

static int alloc_workers(struct pmd_run *run)
{
	const struct pmd_config *cfg = run->cfg;
	size_t bytes;
	unsigned i, j, id = 0;

	for (i = 0; i < run->nsinst; i++)
		run->nworkers += run->sinst[i].skipped ? 0 : run->sinst[i].nworkers;
	bytes = sizeof(struct pmd_wstats) * (run->nworkers ? run->nworkers : 1);
	/*
	 * Lazily populated: a worker's stats cost only the pages it writes.
	 * From the pool (pmdstress/pool.h), which no child inherits (the fork
	 * and exec children never count, see stress/fork.h): fork() then
	 * leaves these pages writable, and a worker's next count after every
	 * fork is no copy-on-write fault.
	 */
	run->wstats = pmd_pool_alloc(bytes);
	if (!run->wstats)
		return -errno;
	run->workers = calloc(run->nworkers ? run->nworkers : 1, sizeof(*run->workers));
	run->threads = calloc(run->nworkers ? run->nworkers : 1, sizeof(*run->threads));
	run->started = calloc(run->nworkers ? run->nworkers : 1, sizeof(*run->started));
	if (!run->workers || !run->threads || !run->started || pmd_storm_reserve(run))
		return -ENOMEM;
	for (i = 0; i < run->nsinst; i++) {
		struct pmd_sinst *si = &run->sinst[i];
		const struct pmd_metric *m;

		if (si->skipped)
			continue;
		si->workers = &run->workers[id];
		for (j = 0; j < si->nworkers; j++, id++) {
			struct pmd_worker *w = &run->workers[id];
			unsigned k;

			w->si = si;
			w->id = id;
			w->index = j;
			w->stats = &run->wstats[id];
			seed_rng(w, cfg->seed_used);
			for (k = 0, m = si->st->metrics; m && m->name; m++, k++)
				if (m->kind == PMD_METRIC_LATENCY && pmd_hist_init(&w->stats->hist[k]))
					return -ENOMEM;
		}
	}
	return 0;
}

/* Create every thread; on failure keep those that exist and say so loudly. */
static unsigned spawn_workers(struct pmd_run *run)
{
	pthread_attr_t attr;
	unsigned i, made = 0;
	int rc = 0;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, run->cfg->stack_size);
	for (i = 0; i < run->nworkers; i++) {
		rc = pthread_create(&run->threads[i], &attr, worker_main, &run->workers[i]);
		if (rc)
			break;
		run->started[i] = true;
		made++;
	}
	pthread_attr_destroy(&attr);
	__atomic_store_n(&run->live, made, __ATOMIC_RELEASE);
	if (made < run->nworkers) {
		fprintf(stderr, "pmdstress: only %u of %u worker threads could be created (%s); "
				"running with fewer\n", made, run->nworkers, strerror(rc));
		/* stressors keep the workers that exist */
		for (i = 0; i < run->nsinst; i++) {
			struct pmd_sinst *si = &run->sinst[i];
			unsigned first, have;

			if (si->skipped || !si->nworkers)
				continue;
			first = (unsigned)(si->workers - run->workers);
			have = made > first ? made - first : 0;
			if (have < si->nworkers)
				si->nworkers = have;
			if (!si->nworkers)
				si->skipped = "no worker thread could be created";
		}
	}
	return made;
}

/* ---- the main loop ------------------------------------------------------------ */

static void block_signals(sigset_t *set)
{
	/* all of it: the run keeps a copy, which goes whole to the supervisor (src/run/storm.c) */
	memset(set, 0, sizeof(*set));
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGUSR1); /* the last worker to finish */
	pthread_sigmask(SIG_BLOCK, set, NULL);
}

static int wait_signal(const sigset_t *set, uint64_t ns, siginfo_t *si)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };
	int sig = sigtimedwait(set, si, &ts);

	return sig > 0 ? sig : 0;
}

/*
 * The main loop's wait: a signal, a line in the kernel log (the monitor's
 * work is the main thread's: monitor.c), or the time. The signals stay
 * blocked and come through @sfd; without it, sigtimedwait(), and the log
 * is read at least every 100 ms.
 */
static int wait_event(struct pmd_run *run, int sfd, const sigset_t *set, uint64_t ns)
{
	struct pollfd p[2] = { { .fd = sfd, .events = POLLIN },
			       { .fd = run->mon.kmsg_fd, .events = POLLIN } };
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };
	struct signalfd_siginfo si;

	if (sfd < 0)
		return wait_signal(set, ns < 100000000ull ? ns : 100000000ull, NULL);
	if (ppoll(p, 2, &ts, NULL) <= 0 || !(p[0].revents & POLLIN))
		return 0;
	return read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si) ? (int)si.ssi_signo : 0;
}

static void first_corruption_dump(struct pmd_run *run)
{
	unsigned i;

	for (i = 0; !run->dumped && i < run->nkept; i++)
		if (run->kept[i].kind == PMD_EV_CORRUPTION) {
			pmd_forensic_dump(run, &run->kept[i]);
			run->dumped = true;
		}
}

static void main_loop(struct pmd_run *run, const sigset_t *set, char *why, size_t whylen)
{
	const struct pmd_config *cfg = run->cfg;
	uint64_t deadline = run->t0 + cfg->duration_ns, next = run->t0 + cfg->interval_ns;
	int sfd = signalfd(-1, set, SFD_CLOEXEC | SFD_NONBLOCK), sfd_errno = errno;
	uint64_t slow = pmd_monitor_tick(run, pmd_now_ns()), tpoll;
	struct pmd_progress prog;
	static bool said;

	if (sfd < 0 && !said) { /* out of descriptors (RLIMIT_NOFILE): once a run */
		fprintf(stderr, "pmdstress: no signalfd (%s): signals and the kernel log are "
				"looked at every 100 ms\n", strerror(sfd_errno));
		said = true;
	}
	pmd_progress_init(&prog, run);
	for (;;) {
		uint64_t now = pmd_now_ns(), until = deadline < next ? deadline : next;
		int sig = __atomic_load_n(&run->stop_signal, __ATOMIC_ACQUIRE);

		if (slow < until)
			until = slow;

		/* a signal the watcher took during start-up: the round ends by it at once */
		if (sig) {
			snprintf(why, whylen, "%s", strsignal(sig));
			break;
		}
		if (now >= deadline) {
			snprintf(why, whylen, "duration");
			break;
		}
		sig = wait_event(run, sfd, set, until > now ? until - now : 0);
		slow = pmd_monitor_tick(run, pmd_now_ns()); /* a hang aborts the run */
		pmd_storm_beat(run, PMD_PHASE_RUN, 0);
		tpoll = pmd_race_trace_poll(run);
		if (tpoll < slow)
			slow = tpoll;
		if (__atomic_load_n(&run->aborting, __ATOMIC_ACQUIRE)) {
			snprintf(why, whylen, "%s", run->abort_reason);
			break;
		}
		/*
		 * SIGUSR1 only wakes us up: the last worker sends it after the count
		 * reached 0, and one sent when a bench round ended by its duration
		 * arrives pending in the next round, which must not end because of it.
		 */
		if (!__atomic_load_n(&run->live, __ATOMIC_ACQUIRE)) {
			snprintf(why, whylen, "done");
			break;
		}
		if (sig && sig != SIGUSR1) {
			snprintf(why, whylen, "%s", strsignal(sig));
			run->stop_signal = sig;
			break;
		}
		now = pmd_now_ns();
		if (now >= next) {
			struct pmd_sample sample;

			pmd_storm_events(run);
			first_corruption_dump(run);
			pmd_sample_take(run, &sample);
			pmd_progress_tick(&prog, run, &run->last_sample, &sample);
			pmd_jsonl_write(run, &run->last_sample, &sample);
			run->last_sample = sample;
			next += cfg->interval_ns;
		}
	}
	if (sfd >= 0)
		close(sfd);
	request_stop(run);
	pmd_storm_beat(run, PMD_PHASE_END, 0);
	pmd_progress_done(&prog, run);
}

/*
 * --single-thread: the one worker runs here, on the main thread, and no
 * other thread exists while it does, so its forks copy a single-threaded
 * process. The clock is an interval timer and SIGINT/SIGTERM/SIGHUP are
 * taken by a handler for the round; both only ask the worker to stop.
 */
static struct pmd_run *solo_run;
static volatile sig_atomic_t solo_sig;
static void release_workers(struct pmd_run *run);

static void solo_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (sig != SIGALRM && solo_sig)
		pmd_signal_again(solo_sig, sig, si->si_code, si->si_pid);
	else if (sig != SIGALRM)
		solo_sig = sig;
	request_stop(solo_run); /* an atomic store and a futex wake: safe here */
}

static void solo_round(struct pmd_run *run, char *why, size_t whylen)
{
	static const int sigs[] = { SIGALRM, SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa, old[4];
	struct itimerval it;
	sigset_t mask;
	unsigned i;

	solo_run = run;
	/* one the watcher took during start-up is the first: the next exits at once */
	solo_sig = __atomic_load_n(&run->stop_signal, __ATOMIC_ACQUIRE);
	if (solo_sig)
		request_stop(run);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = solo_handler;
	sa.sa_flags = SA_RESTART | SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&mask);
	for (i = 0; i < 4; i++) {
		sigaddset(&sa.sa_mask, sigs[i]);
		sigaddset(&mask, sigs[i]);
	}
	for (i = 0; i < 4; i++)
		sigaction(sigs[i], &sa, &old[i]);
	release_workers(run);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = (time_t)(run->cfg->duration_ns / 1000000000ull);
	it.it_value.tv_usec = (suseconds_t)(run->cfg->duration_ns % 1000000000ull / 1000);
	if (!it.it_value.tv_sec && !it.it_value.tv_usec)
		it.it_value.tv_usec = 1;
	setitimer(ITIMER_REAL, &it, NULL);
	/* no beat until the worker is back: silent for the duration, not stuck */
	pmd_storm_beat(run, PMD_PHASE_SOLO, run->cfg->duration_ns);
	pthread_sigmask(SIG_UNBLOCK, &mask, NULL);
	worker_run(&run->workers[0], false);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	for (i = 0; i < 4; i++)
		sigaction(sigs[i], &old[i], NULL);
	if (solo_sig) {
		run->stop_signal = solo_sig;
		snprintf(why, whylen, "%s", strsignal(solo_sig));
	} else if (__atomic_load_n(&run->aborting, __ATOMIC_ACQUIRE)) {
		snprintf(why, whylen, "%s", run->abort_reason);
	} else {
		snprintf(why, whylen, "%s", __atomic_load_n(&run->stop, __ATOMIC_ACQUIRE)
						    ? "duration" : "done");
	}
	request_stop(run);
	pmd_storm_beat(run, PMD_PHASE_END, 0);
}

/* Join every worker; a worker that will not come back within the hang timeout is a hang. */
static bool join_workers(struct pmd_run *run, const sigset_t *set)
{
	/* after a hang or a fault on a live chunk, do not wait long for the rest */
	bool aborting = __atomic_load_n(&run->aborting, __ATOMIC_ACQUIRE), all = true;
	/*
	 * A second past the hang timeout: a worker waiting for a child judges
	 * it by the same timeout from its last beat, and says which it was.
	 */
	uint64_t deadline = pmd_now_ns() + (aborting ? 2000000000ull
						     : run->cfg->hang_timeout_ns + 1000000000ull);
	unsigned i;

	for (i = 0; i < run->nworkers; i++) {
		bool joined = false, busy_checked = false;

		if (!run->started[i])
			continue;
		for (;;) {
			struct timespec ts;
			uint64_t t = (uint64_t)time(NULL);
			siginfo_t si;
			int sig;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 100000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			if (!pthread_timedjoin_np(run->threads[i], NULL, &ts)) {
				joined = true;
				break;
			}
			(void)t;
			/* as in the main loop: the log, the taint mask, the heartbeats */
			pmd_monitor_tick(run, pmd_now_ns());
			pmd_storm_beat(run, PMD_PHASE_END, 0);
			sig = wait_signal(set, 0, &si);
			/* again only if a first one stopped the run; else the round was ending */
			if (sig && sig != SIGUSR1 && run->stop_signal)
				pmd_signal_again(run->stop_signal, sig, si.si_code, si.si_pid);
			else if (sig && sig != SIGUSR1) {
				run->stop_signal = sig; /* no next bench round */
				snprintf(run->stop_reason, sizeof(run->stop_reason), "%s",
					 strsignal(sig));
			}
			/*
			 * A worker parked in the fault handler never returns: leave
			 * it, but join the others (each gets one more try), so
			 * that none that finished is left unjoined.
			 */
			if (pmd_now_ns() > deadline &&
			    __atomic_load_n(&run->aborting, __ATOMIC_ACQUIRE)) {
				all = false;
				break;
			}
			/*
			 * One blocked in waitpid() on a child that still moves (its
			 * exit slow under valgrind): the child was only not done,
			 * and is killed unjudged, as at the stop of a judged wait.
			 */
			if (pmd_monitor_child_moving(run, i))
				pmd_monitor_kill_child(run, i);
			/* one still on a CPU (a long op: a 1 GiB round) gets the longer limit */
			if (pmd_now_ns() > deadline && !busy_checked) {
				busy_checked = true;
				if (pmd_monitor_worker_busy(run, i))
					deadline += pmd_busy_limit(run->cfg->hang_timeout_ns) -
						    run->cfg->hang_timeout_ns;
			}
			if (pmd_now_ns() > deadline) {
				struct pmd_event ev;

				memset(&ev, 0, sizeof(ev));
				ev.kind = PMD_EV_HANG;
				ev.t_ns = pmd_now_ns();
				ev.worker = (int)run->workers[i].id;
				ev.stressor = run->workers[i].si->st->name;
				ev.chunk = -1;
				snprintf(ev.text, sizeof(ev.text),
					 "worker %u (%s) did not stop within --hang-timeout", i,
					 ev.stressor);
				if (run->wstats[i].child > 0) /* said before it is killed below */
					snprintf(ev.text + strlen(ev.text),
						 sizeof(ev.text) - strlen(ev.text),
						 ": it waits for its child %d, stuck (state in the "
						 "report); killed", (int)run->wstats[i].child);
				pmd_monitor_post_hang(run, &ev); /* the dump: a child it waits for too */
				/*
				 * One waiting for a stuck child (a plain waitpid) comes
				 * back once the child is killed: never leave it behind,
				 * and give the workers the aborted run's 2 s.
				 */
				if (pmd_monitor_kill_children(run) && abort_claim(run, "hang")) {
					deadline = pmd_now_ns() + 2000000000ull;
					continue;
				}
				return false;
			}
		}
		if (joined)
			run->started[i] = false;
	}
	return all;
}

static void merge_totals(struct pmd_run *run)
{
	unsigned i, j, k, nomem = 0;

	for (i = 0; i < run->nsinst; i++) {
		struct pmd_sinst *si = &run->sinst[i];
		struct pmd_totals *t = &run->totals[i];
		const struct pmd_metric *m;

		for (k = 0, m = si->st->metrics; m && m->name; m++, k++)
			if (m->kind == PMD_METRIC_LATENCY && pmd_hist_init(&t->hist[k]) &&
			    !nomem++)
				fprintf(stderr, "pmdstress: no memory for the %s latency histogram "
						"(RLIMIT_AS?): its percentiles read 0\n",
					m->name);
		if (si->skipped)
			continue;
		for (j = 0; j < si->nworkers; j++) {
			const struct pmd_wstats *ws = si->workers[j].stats;

			for (k = 0, m = si->st->metrics; m && m->name; m++, k++) {
				if (m->kind == PMD_METRIC_LATENCY)
					pmd_hist_merge(&t->hist[k], &ws->hist[k]);
				else
					t->counter[k] += pmd_counter_read(&ws->counter[k]);
			}
			t->faults += pmd_counter_read(&ws->faults);
			for (k = 0; k < PMD_THPS_COUNT; k++)
				t->thp[k] += pmd_counter_read(&ws->thp[k]);
		}
	}
}

/*
 * A stressor the user named with --stressors that did not run: the run
 * did not test what it was asked to. @why gets the first, with its reason.
 */
static bool named_skipped(const struct pmd_run *run, char *why, size_t len)
{
	char list[PMD_OPT_STRLEN], *save = NULL, *tok;
	unsigned i;

	snprintf(list, sizeof(list), "%s", run->cfg->stressors);
	for (tok = strtok_r(list, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save))
		for (i = 0; i < run->nsinst; i++)
			if (run->sinst[i].skipped && !strcmp(run->sinst[i].st->name, tok)) {
				snprintf(why, len, "%s, named by --stressors, could not run: %.180s",
					 tok, run->sinst[i].skipped);
				return true;
			}
	return false;
}

static void decide_verdict(struct pmd_run *run)
{
	uint64_t resources = __atomic_load_n(&run->resource_errors, __ATOMIC_RELAXED);
	unsigned i, ran = 0;
	char why[224];

	for (i = 0; i < run->nsinst; i++)
		ran += !run->sinst[i].skipped;
	if (run->ev_count[PMD_EV_CORRUPTION]) {
		run->exit_code = 1;
		run->status = "corruption";
		snprintf(run->verdict, sizeof(run->verdict), "data corruption: %llu bad page%s",
			 (unsigned long long)run->ev_count[PMD_EV_CORRUPTION],
			 run->ev_count[PMD_EV_CORRUPTION] == 1 ? "" : "s");
	} else if (run->ev_count[PMD_EV_SIGNAL] && run->storm_signal) {
		/* the storm's own memory or code, hit as a chunk may be (src/run/supervise.c) */
		run->exit_code = 1;
		run->status = "crash";
		snprintf(run->verdict, sizeof(run->verdict),
			 "the storm process died of signal %d (%s)", run->storm_signal,
			 strsignal(run->storm_signal));
	} else if (run->ev_count[PMD_EV_SIGNAL]) {
		run->exit_code = 1;
		run->status = "live_fault";
		snprintf(run->verdict, sizeof(run->verdict), "fault on a live chunk");
	} else if (run->ev_count[PMD_EV_MISPLACED]) {
		/* the data is intact, but the kernel did not do what it said it did */
		run->exit_code = 1;
		run->status = "misplaced";
		snprintf(run->verdict, sizeof(run->verdict),
			 "%llu held chunk%s found off the node the kernel said it moved %s to",
			 (unsigned long long)run->ev_count[PMD_EV_MISPLACED],
			 run->ev_count[PMD_EV_MISPLACED] == 1 ? "" : "s",
			 run->ev_count[PMD_EV_MISPLACED] == 1 ? "it" : "them");
	} else if (run->ev_count[PMD_EV_SOFT_DIRTY]) {
		/* the same: the data is there, the kernel's record of the store is not */
		run->exit_code = 1;
		run->status = "soft_dirty";
		snprintf(run->verdict, sizeof(run->verdict),
			 "%llu chunk%s with pages stored to after a soft-dirty clear that read clean",
			 (unsigned long long)run->ev_count[PMD_EV_SOFT_DIRTY],
			 run->ev_count[PMD_EV_SOFT_DIRTY] == 1 ? "" : "s");
	} else if (run->ev_count[PMD_EV_KERNEL_LOG] || run->ev_count[PMD_EV_TAINT]) {
		run->exit_code = 3;
		run->status = "kernel";
		snprintf(run->verdict, sizeof(run->verdict), "kernel log splat or new taint");
	} else if (run->ev_count[PMD_EV_HANG]) {
		run->exit_code = 4;
		run->status = "hang";
		snprintf(run->verdict, sizeof(run->verdict), "hang");
	} else if (run->ev_count[PMD_EV_ERROR] > resources) {
		/* an error no limit explains: the line names the call, the errno, the chunk */
		run->exit_code = 5;
		run->status = "internal";
		snprintf(run->verdict, sizeof(run->verdict), "internal error: %.230s",
			 run->first_internal);
	} else if (run->mon.kmsg_state == PMD_KMSG_BLIND) {
		/* nothing found, but nothing could have been: not a good kernel either */
		run->exit_code = 125;
		run->status = "blind";
		snprintf(run->verdict, sizeof(run->verdict), "kernel log %s",
			 run->mon.kmsg_status);
	} else if (named_skipped(run, why, sizeof(why))) {
		/* what the user asked for by name was not tested: not a pass */
		run->exit_code = 125;
		run->status = "skipped";
		snprintf(run->verdict, sizeof(run->verdict), "%s", why);
	} else if (run->ev_count[PMD_EV_ERROR]) {
		/* every error was a limit the run names running out: not a result for this kernel */
		run->exit_code = 125;
		run->status = "resources";
		snprintf(run->verdict, sizeof(run->verdict),
			 "out of resources: %llu stressor error%s, each EAGAIN or ENOMEM with a "
			 "limit near (the events say which)",
			 (unsigned long long)run->ev_count[PMD_EV_ERROR],
			 run->ev_count[PMD_EV_ERROR] == 1 ? "" : "s");
	} else if (!ran) {
		run->exit_code = 125;
		run->status = "skipped";
		snprintf(run->verdict, sizeof(run->verdict), "nothing could run here: every "
							     "stressor was skipped");
	} else {
		run->exit_code = 0;
		run->status = "clean";
		snprintf(run->verdict, sizeof(run->verdict), "clean");
	}
}

static int setup_instances(struct pmd_run *run)
{
	const struct pmd_config *cfg = run->cfg;
	struct pmd_sinst *rest = NULL;
	unsigned i, spare = 0;

	for (i = 0; pmd_stressors[i]; i++) {
		const struct pmd_scfg *sc = &cfg->st[i];
		struct pmd_sinst *si;

		if (!sc->enabled)
			continue;
		si = &run->sinst[run->nsinst++];
		si->st = pmd_stressors[i];
		si->run = run;
		si->cfg = cfg;
		si->arena = &run->arena;
		si->opts = sc->opts;
		si->nworkers = sc->nworkers;
		if (sc->dropped[0])
			si->skipped = sc->dropped;
		else if ((si->st->flags & PMD_SF_ROOT) && !run->sys.root)
			si->skipped = "needs root";
		else if (si->st->supported)
			si->skipped = si->st->supported(si);
		/*
		 * A partner this machine cannot run (migrate on one NUMA node)
		 * gives its workers to the first 'rest' stressor, so --threads N
		 * still runs N threads; one dropped for want of threads had none.
		 */
		if (sc->workers.rest && !si->skipped && !rest)
			rest = si;
		else if (!sc->workers.rest && si->skipped && !sc->dropped[0])
			spare += si->nworkers;
	}
	if (rest)
		rest->nworkers += spare;
	return 0;
}

/*
 * Setup hooks. -EINVAL with a reason in si->why means the configuration
 * cannot work (e.g. too small an arena for the workers asked for): a usage
 * error for the whole run. Any other failure skips that stressor.
 */
static int call_setups(struct pmd_run *run, unsigned *nset)
{
	unsigned i;

	for (i = 0; i < run->nsinst; i++) {
		struct pmd_sinst *si = &run->sinst[i];
		int rc;

		*nset = i + 1; /* its teardown is due even if it is refused */
		if (si->skipped || !si->st->setup)
			continue;
		si->why[0] = '\0';
		rc = si->st->setup(si);
		if (rc == -EINVAL && si->why[0]) {
			fprintf(stderr, "pmdstress: %s: %s\n", si->st->name, si->why);
			run->setup_failed[i] = true;
			return 2;
		}
		if (rc) {
			snprintf(si->why, sizeof(si->why), "setup failed: %s", strerror(-rc));
			si->skipped = si->why;
			run->setup_failed[i] = true;
		}
	}
	return 0;
}

/*
 * The stressors' last verify hooks run on this thread: a fault the kernel
 * raises on a live chunk in one of them comes back here (pmd_fatal_escape)
 * with its event in the slot, the hook's RCU read-side sections left open
 * are closed, and the next stressor goes on.
 */
static void call_verifies_and_teardowns(struct pmd_run *run)
{
	static sigjmp_buf jb;
	volatile unsigned i;

	for (i = 0; i < run->nsinst; i++) {
		struct pmd_sinst *si = &run->sinst[i];

		if (!si->skipped && si->st->verify) {
			if (!sigsetjmp(jb, 1)) {
				pmd_fatal_escape(&jb);
				si->st->verify(si);
			} else {
				while (rcu_read_ongoing())
					rcu_read_unlock();
			}
			pmd_fatal_escape(NULL);
		}
		if ((!si->skipped || run->setup_failed[i]) && si->st->teardown)
			si->st->teardown(si);
	}
	post_fatal_event(run);
}

static void release_workers(struct pmd_run *run)
{
	run->t0 = pmd_now_ns();
	if (!run->t_origin)
		run->t_origin = run->t0;
	pmd_sample_take(run, &run->last_sample);
	run->last_sample.t_ns = run->t0;
	__atomic_store_n(&run->go, 1, __ATOMIC_RELEASE);
	futex_wake_all(&run->go);
}

static int fail_run(struct pmd_run *run, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail_run(struct pmd_run *run, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "pmdstress: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	run->exit_code = code;
	return code;
}

/* Free what one round built, so the next starts from a fresh arena and workers. */
static void round_cleanup(struct pmd_run *run)
{
	unsigned i, k;

	for (i = 0; run->wstats && i < run->nworkers; i++)
		for (k = 0; k < PMD_MAX_METRICS; k++)
			pmd_hist_free(&run->wstats[i].hist[k]);
	pmd_pool_free(run->wstats, sizeof(struct pmd_wstats) * (run->nworkers ? run->nworkers : 1));
	free(run->workers);
	free(run->threads);
	free(run->started);
	run->wstats = NULL;
	run->workers = NULL;
	run->threads = NULL;
	run->started = NULL;
	run->nworkers = 0;
	/* the used entries only: a memset of the rest makes untouched pages resident */
	memset(run->sinst, 0, run->nsinst * sizeof(run->sinst[0]));
	memset(run->setup_failed, 0, sizeof(run->setup_failed));
	run->nsinst = 0;
	__atomic_store_n(&run->stop, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&run->go, 0, __ATOMIC_RELEASE);
	pmd_thp_probe_fini(run);
	pmd_arena_destroy(&run->arena);
}

/*
 * The arena's spare slots: 4 if a stressor of the run moves chunks into
 * them, else none, and no PROT_NONE mapping for every fork to copy. From
 * the configuration: the arena is made before the stressors' instances.
 */
static unsigned spare_slots(const struct pmd_config *cfg)
{
	unsigned i;

	for (i = 0; pmd_stressors[i]; i++)
		if (cfg->st[i].enabled && (pmd_stressors[i]->flags & PMD_SF_SPARE_SLOTS))
			return 4;
	return 0;
}

/*
 * One measurement: map the arena, start the workers, run until the clock,
 * a signal or the stressors' own end, stop, join, verify, merge. Returns 0,
 * -1 if a worker hung (do not clean up: it may still be in the kernel), or
 * an exit code > 0 if the round could not start.
 */
static int run_round(struct pmd_run *run, const sigset_t *set, unsigned index)
{
	const struct pmd_config *cfg = run->cfg;
	char why[64] = "";
	unsigned i, nset = 0;
	bool joined;
	int rc;

	pmd_storm_beat(run, PMD_PHASE_START, 0);
	rc = pmd_arena_create(&run->arena, cfg, spare_slots(cfg));
	if (rc) {
		char sz[32];

		pmd_format_size(cfg->size, sz, sizeof(sz));
		return fail_run(run, 125, "cannot map a %s arena: %s (lower --size, or raise "
					  "RLIMIT_AS / free memory)", sz, strerror(-rc));
	}
	run->arena.reads_allocate = run->sys.zero_page_reads == 0;
	pmd_thp_probe_init(run);
	pmd_fatal_watch(run);
	if (pmd_thp_probe_unavailable(run))
		return fail_run(run, 125, "--thp-probe: %s", pmd_thp_probe_unavailable(run));
	setup_instances(run);
	rc = alloc_workers(run);
	if (!rc)
		rc = pmd_numa_round(&run->numa, run->nworkers);
	if (rc)
		return fail_run(run, 125, "cannot allocate %u workers: %s", run->nworkers,
				strerror(-rc));
#ifdef __GLIBC__
	/*
	 * Hand the heap's free pages back before the round (start-up parsed
	 * and freed a lot): fork() copies a page table entry for every present
	 * page of the parent, and the child's exit or exec drops it again, a
	 * cost per fork of pages nobody uses. During the aim9 fork row the
	 * heap went from 108 KiB resident to 48 (/proc/PID/smaps). Before the
	 * setups: from the brk stressor's setup on, nothing else may move the
	 * program break (stress/brk.c), and a trim shrinks it.
	 */
	malloc_trim(0);
#endif
	if (index == 0) {
		run->start_rss_before = pmd_self_rss();
		run->start_ns = pmd_now_ns();
	}
	if (cfg->single_thread) /* its worker runs on this thread: see solo_round() */
		__atomic_store_n(&run->live, run->nworkers, __ATOMIC_RELEASE);
	else
		spawn_workers(run);
	/*
	 * Before the setups: a stressor's setup may move the run into a memory
	 * cgroup of its own (the fault storm's memcg way), whose limit a
	 * tracefs instance's files would then count against
	 */
	if (!cfg->single_thread)
		pmd_race_trace_start(run);
	rc = call_setups(run, &nset);
	if (rc) {
		/* the workers wait at the start: send them home without running (go 2) */
		request_stop(run);
		__atomic_store_n(&run->go, 2, __ATOMIC_RELEASE);
		futex_wake_all(&run->go);
		join_workers(run, set);
		/* and undo the setups that ran, the refused one too (the contract's rule) */
		for (i = 0; i < nset; i++) {
			struct pmd_sinst *si = &run->sinst[i];

			if ((!si->skipped || run->setup_failed[i]) && si->st->teardown)
				si->st->teardown(si);
		}
		return rc;
	}
	partner_share(run);
	if (index == 0) {
		/* what it costs to bring the workers up: time, and memory per worker */
		run->start_ns = pmd_now_ns() - run->start_ns;
		run->start_rss_after = pmd_self_rss();
	}
	if (index == 0) {
		pmd_monitor_open(run);
		pmd_vmstat_read(&run->vm_before);
		run->wall_start = (uint64_t)time(NULL);
		pmd_report_start(stdout, run);
		/* what runs, for a report of what the supervisor knew if nothing else comes */
		pmd_storm_results(run, false);
	}
	pmd_sigwatch_stop(&run->sigwatch); /* the main loop takes the signals now */
	if (cfg->single_thread) {
		solo_round(run, why, sizeof(why));
	} else {
		release_workers(run);
		pmd_monitor_start(run);
		main_loop(run, set, why, sizeof(why));
	}
	snprintf(run->stop_reason, sizeof(run->stop_reason), "%s", why);
	joined = join_workers(run, set);
	if (joined)
		pmd_race_trace_stop(run);
	pmd_sigwatch_start(&run->sigwatch, run, set); /* verify, teardown, the report */
	run->t_end = pmd_now_ns();
	post_fatal_event(run);
	pmd_monitor_stop(run);
	if (joined)
		call_verifies_and_teardowns(run);
	pmd_events_drain(run);
	merge_totals(run);
	if (!pmd_arena_smaps(&run->arena, &run->arena_rss_end, &run->arena_huge_end,
			     &run->tool_rss_end) &&
	    run->arena_rss_end)
		run->thp_share_end = (double)run->arena_huge_end / (double)run->arena_rss_end;
	return joined ? 0 : -1;
}

/* Everything the run holds; after an early failure too. */
static void run_free(struct pmd_run *run)
{
	pmd_sigwatch_stop(&run->sigwatch);
	pmd_jsonl_close(run);
	round_cleanup(run);
	pmd_bench_free(run);
	pmd_monitor_close(run);
	pmd_numa_fini(&run->numa);
	pmd_memcg_leave(&run->memcg);
	pmd_race_trace_stop(run); /* a hung round's instance too */
	pmd_fatal_watch(NULL);
	free(run->mon.klog);
	if (run->storm_buf)
		pmd_pool_free(run->storm_buf, run->storm_buf_len);
	pmd_events_fini(run);
	free(run->mon.hang_dump);
}

int pmd_storm_main(const struct pmd_config *cfg, int fd)
{
	/*
	 * The run's state (170 KiB) comes from the pool, which no fork child
	 * gets: in .bss the pages of it the run writes (13 in the aim9 fork
	 * row) were copied by every fork of the fork and exec stressors and
	 * freed by every child's exit (docs/benchmarks.md, "Pages and fork").
	 * So no child may read it: they get what they need before the fork.
	 * Zero-filled, never freed: one run per process.
	 */
	static struct pmd_run no_pool; /* if the pool cannot map: as it was */
	struct pmd_run *run = pmd_pool_alloc(sizeof(*run));
	char err[PMD_ERRLEN];
	unsigned i, nrounds;
	int rc = 0;
	sigset_t set;

	if (!run)
		run = &no_pool;
	run->storm_fd = fd;
	/*
	 * First of all: a SIGINT, SIGTERM or SIGHUP from here on waits for the
	 * main loop, which ends the run with a report, instead of killing us
	 * half way through start-up with a kernel setting changed. Threads
	 * made later inherit the mask.
	 */
	block_signals(&set);
	run->cfg = cfg;
	/*
	 * And they are taken at once: the main loop is far off (a start-up of
	 * thousands of threads takes seconds), and a second Ctrl-C must exit
	 * at any moment, not merge into the first one pending.
	 */
	pmd_sigwatch_start(&run->sigwatch, run, &set);
	run->mon.kmsg_fd = -1;
	run->pagemap_fd = run->kpageflags_fd = -1;
	run->thp_share_end = -1;
	run->main_thread = pthread_self();
	run->main_tid = (pid_t)syscall(SYS_gettid);
	pmd_events_init(run);
	pmd_sysinfo_read(&run->sys);
	pmd_numa_init(&run->numa);
	if (pmd_numa_placement(&run->numa, cfg)) {
		rc = fail_run(run, 5, "--cpu-nodes %s: cannot resolve the placement",
			      cfg->cpu_nodes);
		goto out;
	}
	pmd_restore_install(); /* before anything changes a kernel setting */
	pmd_fatal_install();
	rc = pmd_numa_balancing_apply(&run->numa, cfg->numa_balancing);
	if (rc) {
		rc = fail_run(run, 125, "--numa-balancing: cannot set %s: %s%s",
				PMD_NUMA_BALANCING_PATH, strerror(-rc),
				rc == -EBUSY	? " (another pmdstress run is changing kernel "
						  "settings; run one at a time)"
				: rc == -ENOENT ? " (kernel without CONFIG_NUMA_BALANCING)"
				: rc == -EACCES || rc == -EPERM ? " (needs root)"
								: "");
		goto out;
	}
	if (cfg->memcg_headroom && pmd_memcg_enter(&run->memcg, cfg->memcg_headroom, err,
						   sizeof(err))) {
		rc = fail_run(run, 125, "%s", err);
		goto out;
	}
	if (pmd_inject_parse(cfg->inject, (unsigned)(cfg->size / PMD_CHUNK_SIZE), &run->inject, err,
			     sizeof(err))) {
		rc = fail_run(run, 2, "%s", err);
		goto out;
	}
	rc = pmd_jsonl_open(run, cfg->jsonl);
	if (rc) {
		rc = fail_run(run, 2, "--jsonl: cannot write '%s': %s", cfg->jsonl, strerror(-rc));
		goto out;
	}
	/* from here on an ENOMEM or EAGAIN is judged against the limits as they were */
	pmd_limits_start(&run->limits);
	/* bench mode: a warm-up round, reported apart, then the measured ones */
	nrounds = cfg->rounds ? (unsigned)cfg->rounds + (cfg->warmup ? 1 : 0) : 1;
	for (i = 0; i < nrounds; i++) {
		if (i)
			round_cleanup(run);
		rc = run_round(run, &set, i);
		if (rc > 0)
			goto out;
		if (cfg->rounds)
			pmd_bench_round_done(run, i, cfg->warmup && i == 0);
		if (rc < 0 || __atomic_load_n(&run->stop_signal, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&run->aborting, __ATOMIC_ACQUIRE))
			break;
	}
	pmd_jsonl_close(run);
	if (!rc) {
		/*
		 * Freeing the arena's last pages is kernel work too (a bad page
		 * state or map is often found only then): unmap it now, and read
		 * the log once more, so that the verdict includes what it said.
		 * Not after a hang: that worker may still be in the arena.
		 */
		pmd_arena_unmap(&run->arena);
		pmd_monitor_stop(run);
		pmd_events_drain(run);
	}
	/* every worker has stopped (or hangs): put back what stressors changed */
	pmd_restore_all();
	pmd_memcg_leave(&run->memcg);
	pmd_vmstat_read(&run->vm_after);
	if (cfg->rounds)
		pmd_bench_finish(run);
	/* what the storm printed goes out before the supervisor's report */
	fflush(NULL);
	if ((i = (unsigned)-pmd_storm_results(run, true)))
		fprintf(stderr, "pmdstress: the storm's results were not sent: %s\n", strerror((int)i));
	if (rc < 0) /* a worker is stuck in the kernel: do not wait for it */
		_exit(0);
	pmd_sigwatch_stop(&run->sigwatch);
	rc = 0;
out:
	run_free(run);
	return rc;
}

int pmd_run_report(struct pmd_run *run, int argc, char **argv)
{
	const struct pmd_config *cfg = run->cfg;
	int werr = 0, kerr = 0, sig, rc;

	decide_verdict(run);
	if (!cfg->quiet)
		pmd_report_text(stdout, run);
	if (cfg->json[0] && (werr = pmd_report_json(cfg->json, run, argc, argv)))
		fprintf(stderr, "pmdstress: cannot write the JSON report to %s: %s\n", cfg->json,
			strerror(werr < 0 ? -werr : EIO));
	if (cfg->ktap[0] && (kerr = pmd_report_ktap(cfg->ktap, run)))
		fprintf(stderr, "pmdstress: cannot write the KTAP results to %s: %s\n", cfg->ktap,
			strerror(kerr < 0 ? -kerr : EIO));
	/* a clean run whose report is missing is not clean to whoever reads the report */
	if ((werr || kerr) && !run->exit_code) {
		run->exit_code = 5;
		snprintf(run->verdict, sizeof(run->verdict), "clean, but a report asked for is "
							     "missing");
	}
	fflush(stdout);
	sig = __atomic_load_n(&run->stop_signal, __ATOMIC_ACQUIRE);
	if (sig && !run->exit_code)
		fprintf(stderr, "pmdstress: %s, stopped by %s, seed 0x%016llx (ending by the "
				"signal, exit %d)\n", run->verdict, strsignal(sig),
			(unsigned long long)cfg->seed_used, 128 + sig);
	else
		fprintf(stderr, "pmdstress: %s, seed 0x%016llx (exit %d)\n", run->verdict,
			(unsigned long long)cfg->seed_used, run->exit_code);
	pmd_sigwatch_stop(&run->sigwatch);
	rc = run->exit_code;
	if (sig && !rc) {
		/*
		 * A clean run a signal stopped: settings restored and the report
		 * out, it ends by the signal, as a program stopped by one does, so
		 * a shell, timeout(1) or git bisect run sees the interruption and
		 * does not take it for a finished clean run. A verdict other than
		 * clean keeps its exit code: it says more.
		 */
		sigset_t only;

		fflush(NULL);
		signal(sig, SIG_DFL);
		raise(sig);
		sigemptyset(&only); /* not a worker's pending SIGUSR1, which would win */
		sigaddset(&only, sig);
		pthread_sigmask(SIG_UNBLOCK, &only, NULL);
		_exit(128 + sig);
	}
	return rc;
}
