// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/kmsg records and the mm splats a stress run must notice. The list
 * is the kernel's own wording (mm/memory.c print_bad_pte(), mm/page_alloc.c
 * bad_page(), kernel/fork.c check_mm(), mm/pgtable-generic.c pmd_clear_bad(),
 * lib/list_debug.c, BUG()/WARN() in mm/, the page fault oops, RCU stalls).
 */
#include "kmsg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool pmd_kmsg_parse(char *buf, size_t len, struct pmd_kmsg_record *r)
{
	char *semi, *end, *p = buf;
	unsigned long long prio, seq, ts;

	if (!len)
		return false;
	buf[len < 1 ? 0 : len - (buf[len - 1] == '\n' ? 1 : 0)] = '\0';
	semi = strchr(buf, ';');
	if (!semi)
		return false;
	prio = strtoull(p, &end, 10);
	if (end == p || *end != ',')
		return false;
	p = end + 1;
	seq = strtoull(p, &end, 10);
	if (end == p || *end != ',')
		return false;
	p = end + 1;
	ts = strtoull(p, &end, 10);
	if (end == p || (*end != ',' && *end != ';'))
		return false;
	r->level = (unsigned)(prio & 7);
	r->facility = (unsigned)(prio >> 3);
	r->seq = seq;
	r->ts_us = ts;
	r->text = semi + 1;
	/* continuation lines (" SUBSYSTEM=...") are dictionary data, not text */
	end = strchr(semi + 1, '\n');
	if (end)
		*end = '\0';
	r->len = strlen(r->text);
	return true;
}

const char *pmd_kmsg_match(const char *line)
{
	static const struct {
		const char *needle, *what;
	} pats[] = {
		{ "BUG: Bad page map", "bad page map" },
		{ "BUG: Bad page state", "bad page state" },
		{ "BUG: Bad rss-counter state", "bad rss-counter state" },
		{ "BUG: non-zero pgtables_bytes", "non-zero pgtables_bytes" },
		{ "non-zero nr_ptes", "non-zero nr_ptes" },
		{ "non-zero nr_pmds", "non-zero nr_pmds" },
		{ "bad pmd", "bad pmd" },
		{ "bad pud", "bad pud" },
		{ "bad pte", "bad pte" },
		{ "kernel BUG at mm/", "kernel BUG in mm" },
		{ "kernel BUG at include/linux/mm", "kernel BUG in mm" },
		{ "kernel BUG at", "kernel BUG" },
		{ "BUG: unable to handle page fault", "kernel page fault" },
		{ "BUG: unable to handle kernel", "kernel page fault" },
		{ "BUG: KASAN", "KASAN report" },
		{ "page dumped because", "page dump" },
		{ "list_del corruption", "list corruption" },
		{ "list_add corruption", "list corruption" },
		{ "general protection fault", "general protection fault" },
		{ "Oops:", "oops" },
		{ "self-detected stall", "RCU stall" },
		{ "detected stalls on CPUs", "RCU stall" },
		{ "rcu_preempt detected stall", "RCU stall" },
		{ "rcu_sched detected stall", "RCU stall" },
		{ "soft lockup - CPU", "soft lockup" },
		{ "blocked for more than", "hung task" },
	};
	size_t i;

	for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++)
		if (strstr(line, pats[i].needle))
			return pats[i].what;
	/* a WARN() in mm/: "WARNING: CPU: 1 PID: 42 at mm/huge_memory.c:2345 f+0x1/0x2" */
	if (strstr(line, "WARNING:") && (strstr(line, " at mm/") || strstr(line, "WARNING: at mm/")))
		return "warning in mm";
	return NULL;
}

void pmd_taint_letters(uint64_t mask, char *buf, size_t len)
{
	/* kernel/panic.c taint_flags[], in bit order */
	static const char letters[] = "PFSRMBUDAWCIOELKXTN";
	size_t n = 0;
	unsigned i;

	for (i = 0; i < 64 && n + 1 < len; i++) {
		if (!(mask & (1ull << i)))
			continue;
		buf[n++] = i < sizeof(letters) - 1 ? letters[i] : '?';
	}
	buf[n] = '\0';
}
