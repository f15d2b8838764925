// SPDX-License-Identifier: GPL-2.0
/*
 * KTAP results, the way kselftest.h prints them ("TAP version 13", a plan,
 * one "ok"/"not ok" line per check, "# Totals: ..."), so the kselftest
 * runner, KernelCI and any TAP consumer (prove) read a run's verdict check
 * by check: each stressor ran (or was skipped, with the reason, or did no
 * operation at all: a skip too, never a pass), the seed race ran,
 * no data corruption, no SIGSEGV/SIGBUS on a live chunk, no misplaced page,
 * no kernel splat or new taint, no hang, no internal error. A check that
 * could not run (nothing verified, nothing moved, the kernel log not
 * watched, no race possible) is a skip with the reason, never a pass.
 * Diagnostic lines ("# ...") before a result say what was seen; the JSON
 * report holds the rest.
 */
#include "report.h"

#include "config.h"
#include "forensics.h"
#include "run.h"
#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define KTAP_EVENTS_SHOWN 5 /* kept events quoted under a failed check */

struct ktap {
	FILE *out;
	unsigned n, pass, fail, skip;
};

/* One diagnostic line; a kernel line may hold anything, so keep it on one line. */
static void diag(struct ktap *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void diag(struct ktap *k, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	char *p;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	for (p = line; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	fprintf(k->out, "# %s\n", line);
}

static void result(struct ktap *k, bool ok, const char *name)
{
	k->n++;
	if (ok)
		k->pass++;
	else
		k->fail++;
	fprintf(k->out, "%s %u %s\n", ok ? "ok" : "not ok", k->n, name);
}

static void skipped(struct ktap *k, const char *name, const char *why)
{
	char reason[256], *p;

	k->n++;
	k->skip++;
	snprintf(reason, sizeof(reason), "%s", why);
	for (p = reason; *p; p++)
		if (*p == '\n' || *p == '#')
			*p = ' ';
	fprintf(k->out, "ok %u %s # SKIP %s\n", k->n, name, reason);
}

/* Quote the first kept events of @kind under the check they fail. */
static void show_events(struct ktap *k, const struct pmd_run *run, enum pmd_event_kind kind)
{
	unsigned i, shown = 0;

	for (i = 0; i < run->nkept && shown < KTAP_EVENTS_SHOWN; i++) {
		const struct pmd_event *e = &run->kept[i];

		if (e->kind != kind)
			continue;
		shown++;
		if (e->chunk >= 0 && kind == PMD_EV_CORRUPTION)
			diag(k, "%s at chunk %d page %d slot %d (0x%" PRIx64 "): expected 0x%" PRIx64
				" read 0x%" PRIx64 ", %u bad slot%s, %s-mapped, worker %d%s%s",
			     pmd_class_name(e->class), e->chunk, e->page, e->slot, e->addr,
			     e->expected, e->actual, e->bad_slots, e->bad_slots == 1 ? "" : "s",
			     pmd_thp_state_name(e->thp), e->worker, e->stressor ? " of " : "",
			     e->stressor ? e->stressor : "");
		else if (e->chunk >= 0)
			diag(k, "chunk %d page %d (0x%" PRIx64 "): %s", e->chunk, e->page, e->addr,
			     e->text);
		else
			diag(k, "%s%s%s", e->stressor ? e->stressor : "", e->stressor ? ": " : "",
			     e->text);
	}
	if (run->ev_count[kind] > shown)
		diag(k, "... %" PRIu64 " more; see the JSON report", run->ev_count[kind] - shown);
}

static void stressor_checks(struct ktap *k, const struct pmd_run *run)
{
	unsigned i;

	for (i = 0; i < run->nsinst; i++) {
		const struct pmd_sinst *si = &run->sinst[i];
		const struct pmd_totals *t = &run->totals[i];
		char name[96], why[160];

		snprintf(name, sizeof(name), "stressor_%s", si->st->name);
		if (si->skipped) {
			skipped(k, name, si->skipped);
			continue;
		}
		diag(k, "%s: %u worker%s, %" PRIu64 " ops, %" PRIu64 " faults", si->st->name,
		     si->nworkers, si->nworkers == 1 ? "" : "s", t->counter[0], t->faults);
		/*
		 * Ran but did nothing (a very short run, a paced partner whose
		 * first turn never came): it tested nothing, so it is no pass,
		 * and no failure either, the run was clean. Like kselftest mm's
		 * "no THP obtained", a skip with the reason.
		 */
		if (!t->counter[0]) {
			snprintf(why, sizeof(why), "ran %.2f s but did no operation (a short run or "
				 "a low rate): it tested nothing", pmd_run_seconds(run));
			skipped(k, name, why);
			continue;
		}
		result(k, true, name);
	}
}

/* A check about the whole run: vacuous (skipped) when nothing ran. */
static void run_check(struct ktap *k, const struct pmd_run *run, bool ran, const char *name,
		      uint64_t bad, const char *what, enum pmd_event_kind kind,
		      enum pmd_event_kind kind2)
{
	if (!ran) {
		skipped(k, name, "nothing ran: every stressor was skipped");
		return;
	}
	if (bad) {
		diag(k, "%" PRIu64 " %s", bad, what);
		show_events(k, run, kind);
		if (kind2 != kind)
			show_events(k, run, kind2);
	}
	result(k, !bad, name);
}

/*
 * No splat is only a pass if the kernel log was watched: the taint mask
 * alone misses the lines that do not taint ("bad pmd", a bad rss-counter
 * state). A new taint bit still fails it; watching less is a skip with the
 * reason (not root with dmesg_restrict=1).
 */
static void splat_check(struct ktap *k, const struct pmd_run *run, bool ran)
{
	const struct pmd_monitor *m = &run->mon;
	const uint64_t *ev = run->ev_count;
	bool kmsg = !strcmp(m->kmsg_status, "reading");
	char why[256];

	if (ran && !ev[PMD_EV_KERNEL_LOG] && !ev[PMD_EV_TAINT] && !kmsg) {
		snprintf(why, sizeof(why), "kernel log not watched: /dev/kmsg %s; %s",
			 m->kmsg_status[0] ? m->kmsg_status : "not opened",
			 m->taint_ok ? "only the taint mask was" : "the taint mask unreadable too");
		skipped(k, "no_kernel_splat", why);
		return;
	}
	run_check(k, run, ran, "no_kernel_splat", ev[PMD_EV_KERNEL_LOG] + ev[PMD_EV_TAINT],
		  "kernel log splat(s) or new taint", PMD_EV_KERNEL_LOG, PMD_EV_TAINT);
}

/* A stressor's counter by name (0 if it did not run or has no such metric). */
static uint64_t counter_of(const struct pmd_run *run, const char *stressor, const char *metric)
{
	unsigned i, m;

	for (i = 0; i < run->nsinst; i++) {
		const struct pmd_metric *mt = run->sinst[i].st->metrics;

		if (run->sinst[i].skipped || strcmp(run->sinst[i].st->name, stressor))
			continue;
		for (m = 0; mt && mt[m].name; m++)
			if (!strcmp(mt[m].name, metric))
				return run->totals[i].counter[m];
	}
	return 0;
}

/*
 * The seed race ran: a THP-path and a PTE-path fault met on one empty PMD in
 * some round. A skip, with the reason, where the kernel or the run offers
 * no way to make them meet, or too few seed rounds ran to say (a short or
 * broken-off run); a failure where SEED_ROUNDS_TO_JUDGE of them met none
 * (a fifth of them meet even in a TCG guest, but a host loaded by other
 * work has let a hundred of them pass with none).
 */
#define SEED_ROUNDS_TO_JUDGE 1000
static void seed_check(struct ktap *k, const struct pmd_run *run)
{
	const struct pmd_race *r = &run->race;
	const char *how;
	uint64_t seed = pmd_race_seed_count(r, &how);
	char why[256];

	if (!r->mech_set || !r->rounds) {
		skipped(k, "seed_race_exercised", "no fault-storm round ran");
		return;
	}
	/* one racer per group: nothing could meet, however long it ran */
	if (pmd_race_impossible(run, why, sizeof(why))) {
		skipped(k, "seed_race_exercised", why);
		return;
	}
	if (!r->mech) {
		skipped(k, "seed_race_exercised", r->mech_why);
		return;
	}
	diag(k, "seed race: %" PRIu64 " of %" PRIu64 " rounds (%s), %" PRIu64 " seed rounds", seed,
	     r->rounds, how, r->seed_rounds);
	if (!seed && r->seed_rounds < SEED_ROUNDS_TO_JUDGE) {
		snprintf(why, sizeof(why), "only %" PRIu64 " seed rounds ran, too few to judge "
			 "(%u)", r->seed_rounds, SEED_ROUNDS_TO_JUDGE);
		skipped(k, "seed_race_exercised", why);
		return;
	}
	result(k, seed > 0, "seed_race_exercised");
}

static void write_ktap(FILE *out, const struct pmd_run *run)
{
	const struct pmd_config *cfg = run->cfg;
	const uint64_t *ev = run->ev_count;
	struct ktap k = { .out = out };
	unsigned i, ran = 0, nchecks;
	char classes[256] = "";
	size_t n = 0;

	for (i = 0; i < run->nsinst; i++)
		ran += !run->sinst[i].skipped;
	/*
	 * one per stressor, then seed_race_exercised, no_corruption,
	 * no_fault_on_live_chunk, no_misplaced_page, no_lost_soft_dirty,
	 * no_kernel_splat, no_hang, no_internal_error
	 */
	nchecks = run->nsinst + 8;
	fprintf(out, "TAP version 13\n1..%u\n", nchecks);
	diag(&k, "pmdstress %s: scenario %s, seed 0x%" PRIx64 ", %u threads, %.2f s, kernel %s",
	     PMD_VERSION, cfg->scenario, cfg->seed_used, run->nworkers, pmd_run_seconds(run),
	     run->sys.release);
	stressor_checks(&k, run);
	seed_check(&k, run);

	n = (size_t)snprintf(classes, sizeof(classes), "bad page(s) by class:");
	for (i = 1; i < PMD_CLASS_COUNT; i++)
		if (run->class_count[i] && n < sizeof(classes))
			n += (size_t)snprintf(classes + n, sizeof(classes) - n, " %s %" PRIu64,
					      pmd_class_name(i), run->class_count[i]);
	if (ran && !cfg->verify && !ev[PMD_EV_CORRUPTION])
		skipped(&k, "no_corruption", "verification off (--verify off): no page was checked");
	else
		run_check(&k, run, ran, "no_corruption", ev[PMD_EV_CORRUPTION], classes,
			  PMD_EV_CORRUPTION, PMD_EV_CORRUPTION);
	run_check(&k, run, ran, "no_fault_on_live_chunk", ev[PMD_EV_SIGNAL],
		  "SIGSEGV/SIGBUS on a live arena chunk", PMD_EV_SIGNAL, PMD_EV_SIGNAL);
	if (ran && !ev[PMD_EV_MISPLACED] && !counter_of(run, "migrate", "held"))
		skipped(&k, "no_misplaced_page", "no held chunk was moved between nodes (migrate "
						 "did not run or moved none): nothing to misplace");
	else
		run_check(&k, run, ran, "no_misplaced_page", ev[PMD_EV_MISPLACED],
			  "held chunk(s) off the node the kernel said it moved them to",
			  PMD_EV_MISPLACED, PMD_EV_MISPLACED);
	if (ran && !ev[PMD_EV_SOFT_DIRTY] && counter_of(run, "softdirty", "referenced"))
		skipped(&k, "no_lost_soft_dirty", "the kernel has no soft-dirty tracking "
						  "(CONFIG_MEM_SOFT_DIRTY): referenced bits were "
						  "cleared instead, nothing to check");
	else if (ran && !ev[PMD_EV_SOFT_DIRTY] && !counter_of(run, "softdirty", "checked"))
		skipped(&k, "no_lost_soft_dirty", "no chunk written after a soft-dirty clear was "
						  "checked (softdirty did not run or found none)");
	else
		run_check(&k, run, ran, "no_lost_soft_dirty", ev[PMD_EV_SOFT_DIRTY],
			  "page(s) stored to after a soft-dirty clear that read clean",
			  PMD_EV_SOFT_DIRTY, PMD_EV_SOFT_DIRTY);
	splat_check(&k, run, ran);
	run_check(&k, run, ran, "no_hang", ev[PMD_EV_HANG], "worker(s) stopped making progress",
		  PMD_EV_HANG, PMD_EV_HANG);
	run_check(&k, run, ran, "no_internal_error", ev[PMD_EV_ERROR],
		  "error(s) that ended a stressor", PMD_EV_ERROR, PMD_EV_ERROR);
	diag(&k, "verdict: %s (exit %d)", run->verdict, run->exit_code);
	fprintf(out, "# Totals: pass:%u fail:%u xfail:0 xpass:0 skip:%u error:0\n", k.pass, k.fail,
		k.skip);
}

int pmd_report_ktap(const char *path, const struct pmd_run *run)
{
	char tmp[PMD_OPT_STRLEN + 32];
	FILE *f;
	int rc = 0;

	if (!strcmp(path, "-")) {
		f = pmd_report_open_stdout();
		if (!f)
			return -errno;
		write_ktap(f, run);
		return fclose(f) ? -errno : 0;
	}
	/* write then rename: a harness never reads half a result file */
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	write_ktap(f, run);
	if (ferror(f))
		rc = -EIO;
	if (fclose(f) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}
