// SPDX-License-Identifier: GPL-2.0
/*
 * Run control: build the run from the configuration, spawn the workers,
 * release them at once, watch the clock and the signals, stop, join,
 * verify, merge and report. The main thread never touches the arena.
 */
#include "run.h"

#include "config.h"
#include "progress.h"
#include "report.h"
#include "units.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
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

bool pmd_sleep(const struct pmd_worker *w, uint64_t ns)
{
	struct pmd_run *run = w->si->run;
	uint64_t end = pmd_now_ns() + ns, now;

	while (!__atomic_load_n(&run->stop, __ATOMIC_ACQUIRE) && (now = pmd_now_ns()) < end)
		futex_wait(&run->stop, 0, end - now);
	return !__atomic_load_n(&run->stop, __ATOMIC_ACQUIRE);
}

static void request_stop(struct pmd_run *run)
{
	__atomic_store_n(&run->stop, 1, __ATOMIC_RELEASE);
	futex_wake_all(&run->stop);
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

static void seed_rng(struct pmd_worker *w, uint64_t seed)
{
	w->rng[0] = pmd_stamp_mix(seed ^ (0x9e3779b97f4a7c15ull * (w->id + 1)));
	w->rng[1] = pmd_stamp_mix(w->rng[0] ^ 0xd1b54a32d192ed03ull);
	if (!w->rng[0] && !w->rng[1])
		w->rng[1] = 1;
}

void pmd_worker_error(struct pmd_worker *w, int err, const char *fmt, ...)
{
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
	if (err)
		snprintf(ev.text + n, sizeof(ev.text) - n, ": %s", strerror(err < 0 ? -err : err));
	pmd_event_post(w->si->run, &ev);
}

const struct pmd_inject *pmd_inject_get(const struct pmd_run *run)
{
	return &run->inject;
}

bool pmd_inject_claim(struct pmd_run *run)
{
	return __atomic_exchange_n(&run->inject_done, 1, __ATOMIC_ACQ_REL) == 0;
}

int pmd_inject_parse(const char *text, struct pmd_inject *inj, char *err, size_t errlen)
{
	static const char *const names[] = { "lost_write", "stale", "foreign",
					     "nonzero_after_zap", "cow_leak", NULL };
	char buf[PMD_OPT_STRLEN], *save = NULL, *tok;
	unsigned vals[4] = { 0, 0, 0, 1 }, i, n = 0;

	memset(inj, 0, sizeof(*inj));
	if (!*text)
		return 0;
	snprintf(buf, sizeof(buf), "%s", text);
	tok = strtok_r(buf, ":", &save);
	for (i = 0; names[i]; i++)
		if (tok && !strcmp(tok, names[i]))
			inj->class = (enum pmd_class)(PMD_CLASS_LOST_WRITE + i);
	if (inj->class == PMD_CLASS_OK) {
		snprintf(err, errlen, "--inject: invalid value '%s' (expected lost_write, stale, "
				      "foreign, nonzero_after_zap or cow_leak, then "
				      ":chunk:page:slot:after)", text);
		return -EINVAL;
	}
	while ((tok = strtok_r(NULL, ":", &save)) && n < 4) {
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
	if (inj->page >= PMD_CHUNK_PAGES || inj->slot >= PMD_PAGE_SLOTS) {
		snprintf(err, errlen, "--inject: page must be below %lu and slot below %lu in '%s'",
			 (unsigned long)PMD_CHUNK_PAGES, (unsigned long)PMD_PAGE_SLOTS, text);
		return -EINVAL;
	}
	return 0;
}

/* ---- workers ---------------------------------------------------------------- */

static void *worker_main(void *arg)
{
	struct pmd_worker *w = arg;
	struct pmd_sinst *si = w->si;
	struct pmd_run *run = si->run;
	char name[16];
	int rc;

	/* perf bench's habit: ps, top and perf show who is who */
	snprintf(name, sizeof(name), "pmd/%.6s/%u", si->st->name, w->index);
	prctl(PR_SET_NAME, name, 0, 0, 0);
	rcu_register_thread();
	while (!__atomic_load_n(&run->go, __ATOMIC_ACQUIRE))
		futex_wait(&run->go, 0, 1000000000ull);
	if (!si->skipped && si->st->run && !__atomic_load_n(&run->stop, __ATOMIC_ACQUIRE)) {
		rc = si->st->run(w);
		if (rc)
			pmd_worker_error(w, rc, "%s worker %u stopped", si->st->name, w->index);
	}
	rcu_unregister_thread();
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
	/* lazily populated: a worker's stats cost only the pages it writes */
	run->wstats = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (run->wstats == MAP_FAILED) {
		run->wstats = NULL;
		return -errno;
	}
	madvise(run->wstats, bytes, MADV_NOHUGEPAGE);
	run->workers = calloc(run->nworkers ? run->nworkers : 1, sizeof(*run->workers));
	run->threads = calloc(run->nworkers ? run->nworkers : 1, sizeof(*run->threads));
	run->started = calloc(run->nworkers ? run->nworkers : 1, sizeof(*run->started));
	if (!run->workers || !run->threads || !run->started)
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
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, set, NULL);
}

static int wait_signal(const sigset_t *set, uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };
	int sig = sigtimedwait(set, NULL, &ts);

	return sig > 0 ? sig : 0;
}

static void on_second_signal(struct pmd_run *run, int sig)
{
	fprintf(stderr, "\npmdstress: second %s: exiting at once, no report\n", strsignal(sig));
	(void)run;
	_exit(128 + sig);
}

static void main_loop(struct pmd_run *run, const sigset_t *set, char *why, size_t whylen)
{
	const struct pmd_config *cfg = run->cfg;
	uint64_t deadline = run->t0 + cfg->duration_ns, next = run->t0 + cfg->interval_ns;
	struct pmd_progress prog;

	pmd_progress_init(&prog, run);
	for (;;) {
		uint64_t now = pmd_now_ns(), until = deadline < next ? deadline : next;
		int sig;

		if (now >= deadline) {
			snprintf(why, whylen, "duration");
			break;
		}
		sig = wait_signal(set, until > now ? until - now : 0);
		if (sig) {
			snprintf(why, whylen, "%s", strsignal(sig));
			run->stop_signal = sig;
			break;
		}
		now = pmd_now_ns();
		if (now >= next) {
			pmd_events_drain(run);
			pmd_progress_tick(&prog, run, now);
			next += cfg->interval_ns;
		}
	}
	request_stop(run);
	pmd_progress_done(&prog, run);
}

/* Join every worker; a worker that will not come back within the hang timeout is a hang. */
static bool join_workers(struct pmd_run *run, const sigset_t *set)
{
	uint64_t deadline = pmd_now_ns() + run->cfg->hang_timeout_ns;
	unsigned i;

	for (i = 0; i < run->nworkers; i++) {
		if (!run->started[i])
			continue;
		for (;;) {
			struct timespec ts;
			uint64_t t = (uint64_t)time(NULL);
			int sig;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 100000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			if (!pthread_timedjoin_np(run->threads[i], NULL, &ts))
				break;
			(void)t;
			sig = wait_signal(set, 0);
			if (sig)
				on_second_signal(run, sig);
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
				pmd_event_post(run, &ev);
				return false;
			}
		}
		run->started[i] = false;
	}
	return true;
}

static void merge_totals(struct pmd_run *run)
{
	unsigned i, j, k;

	for (i = 0; i < run->nsinst; i++) {
		struct pmd_sinst *si = &run->sinst[i];
		struct pmd_totals *t = &run->totals[i];
		const struct pmd_metric *m;

		for (k = 0, m = si->st->metrics; m && m->name; m++, k++)
			if (m->kind == PMD_METRIC_LATENCY)
				pmd_hist_init(&t->hist[k]);
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

static void decide_verdict(struct pmd_run *run)
{
	unsigned i, ran = 0;

	for (i = 0; i < run->nsinst; i++)
		ran += !run->sinst[i].skipped;
	if (run->ev_count[PMD_EV_CORRUPTION]) {
		run->exit_code = 1;
		snprintf(run->verdict, sizeof(run->verdict), "data corruption: %llu bad page%s",
			 (unsigned long long)run->ev_count[PMD_EV_CORRUPTION],
			 run->ev_count[PMD_EV_CORRUPTION] == 1 ? "" : "s");
	} else if (run->ev_count[PMD_EV_SIGNAL]) {
		run->exit_code = 1;
		snprintf(run->verdict, sizeof(run->verdict), "fault on a live chunk");
	} else if (run->ev_count[PMD_EV_KERNEL_LOG] || run->ev_count[PMD_EV_TAINT]) {
		run->exit_code = 3;
		snprintf(run->verdict, sizeof(run->verdict), "kernel log splat or new taint");
	} else if (run->ev_count[PMD_EV_HANG]) {
		run->exit_code = 4;
		snprintf(run->verdict, sizeof(run->verdict), "hang");
	} else if (run->ev_count[PMD_EV_ERROR]) {
		run->exit_code = 5;
		snprintf(run->verdict, sizeof(run->verdict), "internal error in a stressor");
	} else if (!ran) {
		run->exit_code = 125;
		snprintf(run->verdict, sizeof(run->verdict), "nothing could run here: every "
							     "stressor was skipped");
	} else {
		run->exit_code = 0;
		snprintf(run->verdict, sizeof(run->verdict), "clean");
	}
}

static int setup_instances(struct pmd_run *run)
{
	const struct pmd_config *cfg = run->cfg;
	unsigned i;

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
		if ((si->st->flags & PMD_SF_ROOT) && !run->sys.root)
			si->skipped = "needs root";
		else if (si->st->supported)
			si->skipped = si->st->supported(si);
	}
	return 0;
}

static void call_setups(struct pmd_run *run)
{
	unsigned i;

	for (i = 0; i < run->nsinst; i++) {
		struct pmd_sinst *si = &run->sinst[i];
		int rc;

		if (si->skipped || !si->st->setup)
			continue;
		rc = si->st->setup(si);
		if (rc) {
			snprintf(si->why, sizeof(si->why), "setup failed: %s", strerror(-rc));
			si->skipped = si->why;
			run->setup_failed[i] = true;
		}
	}
}

static void call_verifies_and_teardowns(struct pmd_run *run)
{
	unsigned i;

	for (i = 0; i < run->nsinst; i++) {
		struct pmd_sinst *si = &run->sinst[i];

		if (!si->skipped && si->st->verify)
			si->st->verify(si);
		if ((!si->skipped || run->setup_failed[i]) && si->st->teardown)
			si->st->teardown(si);
	}
}

static void release_workers(struct pmd_run *run)
{
	run->t0 = pmd_now_ns();
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

int pmd_run_main(const struct pmd_config *cfg, int argc, char **argv)
{
	struct pmd_run *run = calloc(1, sizeof(*run));
	char why[64] = "", err[PMD_ERRLEN];
	sigset_t set;
	bool joined;
	int rc;

	if (!run)
		return 5;
	run->cfg = cfg;
	run->pagemap_fd = run->kpageflags_fd = -1;
	run->thp_share_end = -1;
	pmd_events_init(run);
	pmd_sysinfo_read(&run->sys);
	if (pmd_inject_parse(cfg->inject, &run->inject, err, sizeof(err)))
		return fail_run(run, 2, "%s", err);
	rc = pmd_arena_create(&run->arena, cfg);
	if (rc) {
		char sz[32];

		pmd_format_size(cfg->size, sz, sizeof(sz));
		return fail_run(run, 125, "cannot map a %s arena: %s (lower --size, or raise "
					  "RLIMIT_AS / free memory)", sz, strerror(-rc));
	}
	pmd_thp_probe_init(run);
	setup_instances(run);
	rc = alloc_workers(run);
	if (rc)
		return fail_run(run, 125, "cannot allocate %u workers: %s", run->nworkers,
				strerror(-rc));
	block_signals(&set);
	spawn_workers(run);
	call_setups(run);
	pmd_vmstat_read(&run->vm_before);
	run->wall_start = (uint64_t)time(NULL);
	pmd_report_start(stdout, run);
	release_workers(run);
	main_loop(run, &set, why, sizeof(why));
	snprintf(run->stop_reason, sizeof(run->stop_reason), "%s", why);
	joined = join_workers(run, &set);
	run->t_end = pmd_now_ns();
	pmd_vmstat_read(&run->vm_after);
	if (joined)
		call_verifies_and_teardowns(run);
	pmd_events_drain(run);
	merge_totals(run);
	if (!pmd_arena_smaps(&run->arena, &run->arena_rss_end, &run->arena_huge_end) &&
	    run->arena_rss_end)
		run->thp_share_end = (double)run->arena_huge_end / (double)run->arena_rss_end;
	decide_verdict(run);
	if (!cfg->quiet)
		pmd_report_text(stdout, run);
	if (cfg->json[0] && pmd_report_json(cfg->json, run, argc, argv))
		fprintf(stderr, "pmdstress: cannot write the JSON report to %s\n", cfg->json);
	fflush(stdout);
	fprintf(stderr, "pmdstress: %s (exit %d)\n", run->verdict, run->exit_code);
	if (!joined) /* a worker is stuck in the kernel: do not wait for it */
		_exit(run->exit_code);
	rc = run->exit_code;
	pmd_thp_probe_fini(run);
	pmd_arena_destroy(&run->arena);
	return rc;
}
