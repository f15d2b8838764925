// SPDX-License-Identifier: GPL-2.0
/*
 * Forensics: the command that reproduces a run, and the numbers that put
 * what the workers saw next to what the kernel counted.
 */
#include "forensics.h"

#include "config.h"
#include "run.h"

#include "units.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void append(char *buf, size_t len, size_t *n, const char *a, const char *b)
{
	bool quote = strpbrk(b, " \t'\"$\\;&|<>()") != NULL || !*b;
	int k = snprintf(buf + *n, len - *n, quote ? " --%s '%s'" : " --%s %s", a, b);

	if (k > 0 && (size_t)k < len - *n)
		*n += (size_t)k;
}

/* Output-only options do not change what runs. */
static bool output_only(const char *name)
{
	static const char *const skip[] = { "json", "jsonl", "ktap", "progress", "quiet", "seed",
					    "config", "stressors", "replay", "interval", NULL };
	unsigned i;

	for (i = 0; skip[i]; i++)
		if (!strcmp(name, skip[i]))
			return true;
	return false;
}

static void table_diff(const struct pmd_option *table, const void *base, const char *prefix,
		       char *buf, size_t len, size_t *n)
{
	const struct pmd_option *o;

	for (o = table; o && o->name; o++) {
		char cur[PMD_OPT_STRLEN + 8], def[PMD_OPT_STRLEN + 8], name[128];
		char tmp[PMD_OPT_STRLEN + 64];
		char *scratch = tmp;

		if (!*prefix && output_only(o->name))
			continue;
		pmd_opt_format(o, base, cur, sizeof(cur));
		/* the default, formatted the same way: parse it into scratch space */
		memset(tmp, 0, sizeof(tmp));
		if (pmd_opt_parse(o, scratch - o->offset, o->def ? o->def : "", def, sizeof(def)))
			continue;
		pmd_opt_format(o, scratch - o->offset, def, sizeof(def));
		if (!strcmp(cur, def))
			continue;
		snprintf(name, sizeof(name), "%s%s", prefix, o->name);
		append(buf, len, n, name, cur);
	}
}

void pmd_rerun_command(const struct pmd_run *run, char *buf, size_t len)
{
	const struct pmd_config *cfg = run->cfg;
	char list[PMD_OPT_STRLEN] = "", seed[32];
	size_t n = 0, ln = 0;
	unsigned i;
	int k;

	k = snprintf(buf, len, "pmdstress");
	n = k > 0 ? (size_t)k : 0;
	append(buf, len, &n, "config", cfg->scenario);
	snprintf(seed, sizeof(seed), "0x%llx", (unsigned long long)cfg->seed_used);
	append(buf, len, &n, "seed", seed);
	for (i = 0; pmd_stressors[i]; i++) {
		if (!cfg->st[i].enabled)
			continue;
		ln += (size_t)snprintf(list + ln, sizeof(list) - ln, "%s%s", ln ? "," : "",
				       pmd_stressors[i]->name);
	}
	append(buf, len, &n, "stressors", list);
	table_diff(pmd_global_options, cfg, "", buf, len, &n);
	for (i = 0; pmd_stressors[i]; i++) {
		char prefix[64];

		if (!cfg->st[i].enabled)
			continue;
		snprintf(prefix, sizeof(prefix), "%s-", pmd_stressors[i]->name);
		/* workers as resolved, so the same count runs whatever the scenario said */
		{
			char w[16];

			snprintf(w, sizeof(w), "%u", cfg->st[i].nworkers);
			snprintf(prefix, sizeof(prefix), "%s-workers", pmd_stressors[i]->name);
			append(buf, len, &n, prefix, w);
			snprintf(prefix, sizeof(prefix), "%s-", pmd_stressors[i]->name);
		}
		table_diff(pmd_stressors[i]->options, cfg->st[i].opts, prefix, buf, len, &n);
	}
}

bool pmd_race_of(const struct pmd_sinst *si, const struct pmd_totals *t, uint64_t *rounds,
		 uint64_t *hits)
{
	const struct pmd_metric *m = si->st->metrics;
	bool have = false;
	unsigned k;

	*rounds = *hits = 0;
	for (k = 0; m && m[k].name; k++) {
		if (m[k].flags & PMD_MF_RACE_ROUNDS) {
			*rounds += t->counter[k];
			have = true;
		}
		if (m[k].flags & PMD_MF_RACE_HITS)
			*hits += t->counter[k];
	}
	return have;
}

bool pmd_race_impossible(const struct pmd_run *run, char *why, size_t len)
{
	uint64_t rounds, hits;
	unsigned i;

	for (i = 0; i < run->nsinst; i++) {
		const struct pmd_sinst *si = &run->sinst[i];

		if (!si->skipped && si->nworkers && si->no_race[0] &&
		    pmd_race_of(si, &run->totals[i], &rounds, &hits)) {
			snprintf(why, len, "%s", si->no_race);
			return true;
		}
	}
	return false;
}

void pmd_reconcile(const struct pmd_run *run, struct pmd_reconcile *r)
{
	static const char *const pgalloc[] = { "pgalloc_dma", "pgalloc_dma32", "pgalloc_normal",
					       "pgalloc_movable", "pgalloc_high", NULL };
	unsigned i;
	int64_t d = 0;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < run->nsinst; i++) {
		r->worker_faults += run->totals[i].faults;
		r->thp_chunks += run->totals[i].thp[PMD_THPS_THP];
	}
	r->have_vmstat = pmd_vmstat_delta(&run->vm_before, &run->vm_after, "pgfault", &r->pgfault);
	pmd_vmstat_delta(&run->vm_before, &run->vm_after, "thp_fault_alloc", &r->thp_fault_alloc);
	pmd_vmstat_delta(&run->vm_before, &run->vm_after, "thp_fault_fallback",
			 &r->thp_fault_fallback);
	for (i = 0; pgalloc[i]; i++)
		if (pmd_vmstat_delta(&run->vm_before, &run->vm_after, pgalloc[i], &d))
			r->pgalloc += d;
	/*
	 * Every huge fault that won allocated 512 pages and mapped them; every
	 * other fault allocated about one. What the allocator handed out
	 * beyond that, in huge-page units, was allocated, cleared and thrown
	 * away by the losers of the PMD install race (system-wide: an estimate,
	 * close when the storm runs alone; partners that fork or copy add to it).
	 */
	d = 0;
	pmd_vmstat_delta(&run->vm_before, &run->vm_after, "thp_collapse_alloc", &d);
	if (r->thp_fault_alloc > 0) {
		/* khugepaged/MADV_COLLAPSE allocate huge pages too: not the race's */
		int64_t beyond = r->pgalloc - 512 * (r->thp_fault_alloc + (d > 0 ? d : 0)) - r->pgfault;

		r->contested_huge = beyond > 0 ? beyond / 512 : 0;
	}
}

/*
 * What the chunk went through before the bad read, newest last: the forensic
 * part of an event a reader of the text needs first (the JSON has it all).
 */
void pmd_ring_text(FILE *out, const struct pmd_run *run, const struct pmd_event *e)
{
	unsigned i = e->ring_len > 8 ? e->ring_len - 8 : 0;

	fprintf(out, "    chunk %d's last operations (of %u kept):", e->chunk, e->ring_len);
	for (; i < e->ring_len; i++) {
		const struct pmd_ring_entry *r = &e->ring[i];
		char t[16];

		pmd_format_ns((double)(r->t_ns > run->t0 ? r->t_ns - run->t0 : 0), t, sizeof(t));
		fprintf(out, " +%s %s w%u gen %u%s", t, pmd_op_name((unsigned)(r->word & 0xff)),
			(unsigned)((r->word >> 8) & 0xffff), (unsigned)((r->word >> 24) & 0xfff),
			i + 1 < e->ring_len ? ";" : "");
	}
	fprintf(out, "\n");
}


void pmd_forensic_dump(const struct pmd_run *run, const struct pmd_event *e)
{
	char cmd[2048], t[16];

	pmd_format_ns((double)(e->t_ns > run->t0 ? e->t_ns - run->t0 : 0), t, sizeof(t));
	pmd_rerun_command(run, cmd, sizeof(cmd));
	fprintf(stderr, "pmdstress: first corruption at +%s: %s addr 0x%" PRIx64 " chunk %d page %d "
			"slot %d: expected %#" PRIx64 " read %#" PRIx64 "; seed 0x%016" PRIx64 "\n",
		t, pmd_class_name(e->class), e->addr, e->chunk, e->page, e->slot, e->expected,
		e->actual, run->cfg->seed_used);
	if (e->ring_len)
		pmd_ring_text(stderr, run, e);
	fprintf(stderr, "    rerun: %s\n", cmd);
	fflush(stderr);
}
