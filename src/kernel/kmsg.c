// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/kmsg records and the splats a stress run must notice. The list is
 * the kernel's own wording: the mm reports (mm/memory.c print_bad_pte(),
 * mm/page_alloc.c bad_page(), kernel/fork.c check_mm(),
 * mm/pgtable-generic.c pmd_clear_bad(), lib/list_debug.c), every BUG() and
 * WARN() (those in mm/, the mm headers and arch/<arch>/mm/ named apart), the
 * oopses, the sanitizers (KASAN, KCSAN, KFENCE, KMSAN, UBSAN), lockdep,
 * sleeping in atomic context, RCU stalls, soft and hard lockups, hung tasks.
 * A mm run's kernel bug may show as any of them: a lock order lockdep
 * catches in the fault path is a bug before it is a deadlock.
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

/*
 * Splats found by their wording alone: the header line of each report, in
 * the kernel's own words. A line that holds two needles is the first one's
 * kind. Where a needle alone is common words, @then must follow it on the
 * same line: a user process's "traps: a.out[42] general protection fault
 * ip:..." is no kernel oops, and only the oops goes on with " [#1]".
 * BUG() and WARN() are told apart by the file they name, below.
 */
static const struct {
	const char *needle, *then, *what;
} pats[] = {
	{ "BUG: Bad page map", NULL, "bad page map" },
	{ "BUG: Bad page state", NULL, "bad page state" },
	{ "BUG: Bad rss-counter state", NULL, "bad rss-counter state" },
	{ "BUG: non-zero pgtables_bytes", NULL, "non-zero pgtables_bytes" },
	{ "non-zero nr_ptes", NULL, "non-zero nr_ptes" },
	{ "non-zero nr_pmds", NULL, "non-zero nr_pmds" },
	{ "bad pmd", NULL, "bad pmd" },
	{ "bad pud", NULL, "bad pud" },
	{ "bad p4d", NULL, "bad p4d" },
	{ "bad pgd", NULL, "bad pgd" },
	{ "bad pte", NULL, "bad pte" },
	{ "BUG: unable to handle page fault", NULL, "kernel page fault" },
	{ "BUG: unable to handle kernel", NULL, "kernel page fault" },
	{ "page dumped because", NULL, "page dump" },
	{ "list_del corruption", NULL, "list corruption" },
	{ "list_add corruption", NULL, "list corruption" },
	{ "general protection fault", " [#", "general protection fault" },
	{ "Oops:", NULL, "oops" },
	/* the sanitizers: mm/kasan/report.c, kernel/kcsan/report.c, mm/kfence/report.c,
	 * mm/kmsan/report.c, lib/ubsan.c ("UBSAN: %s in %s:%d:%d") */
	{ "BUG: KASAN:", NULL, "KASAN report" },
	{ "BUG: KCSAN:", NULL, "KCSAN report" },
	{ "BUG: KFENCE:", NULL, "KFENCE report" },
	{ "BUG: KMSAN:", NULL, "KMSAN report" },
	{ "UBSAN: ", " in ", "UBSAN report" },
	/* lockdep (kernel/locking/lockdep.c), "[ INFO: ... ]" before 4.9 */
	{ "possible circular locking dependency detected", NULL, "lockdep: circular locking" },
	{ "possible recursive locking detected", NULL, "lockdep: recursive locking" },
	{ "possible irq lock inversion dependency detected", NULL,
	  "lockdep: irq lock inversion" },
	{ "inconsistent lock state", NULL, "lockdep: inconsistent lock state" },
	{ "bad unlock balance detected", NULL, "lockdep: bad unlock balance" },
	{ "lock held when returning to user space", NULL,
	  "lockdep: lock held on return to user space" },
	{ "suspicious RCU usage", NULL, "lockdep: suspicious RCU usage" },
	/* kernel/sched/core.c */
	{ "BUG: sleeping function called from invalid context", NULL,
	  "sleeping function in atomic context" },
	{ "BUG: scheduling while atomic", NULL, "scheduling while atomic" },
	/* kernel/rcu/tree_stall.h, tree_exp.h, tasks.h */
	{ "self-detected stall on CPU", NULL, "RCU stall" },
	{ "detected stall on CPU", NULL, "RCU stall" },
	{ "detected stalls on CPUs", NULL, "RCU stall" },
	{ "detected expedited stalls on CPUs", NULL, "RCU stall" },
	{ "detected stalls on tasks", NULL, "RCU stall" },
	/* kernel/watchdog.c, kernel/hung_task.c */
	{ "soft lockup - CPU", NULL, "soft lockup" },
	{ "Watchdog detected hard LOCKUP", NULL, "hard lockup" },
	{ "INFO: task ", " blocked for more than ", "hung task" },
};

const char *pmd_kmsg_pattern(size_t i)
{
	return i < sizeof(pats) / sizeof(pats[0]) ? pats[i].needle : NULL;
}

/*
 * A file whose BUG() or WARN() is about memory management: mm/, the mm
 * headers (not include/linux/mmc/, the MMC card layer), arch/<arch>/mm/.
 */
static bool mm_file(const char *f)
{
	static const char *const heads[] = {
		"mm/",
		"include/linux/mm.h",
		"include/linux/mm_inline.h",
		"include/linux/mm_types.h",
		"include/linux/mmzone.h",
		"include/linux/mmap_lock.h",
		"include/linux/huge_mm.h",
		"include/linux/pgtable.h",
		"include/linux/page-flags.h",
		"include/linux/page_ref.h",
		"include/linux/rmap.h",
		"include/linux/swapops.h",
	};
	const char *slash;
	size_t i;

	for (i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
		if (!strncmp(f, heads[i], strlen(heads[i])))
			return true;
	if (strncmp(f, "arch/", 5))
		return false;
	slash = strchr(f + 5, '/');
	return slash && !strncmp(slash, "/mm/", 4);
}

/* @p at "<digits>" followed by @after: past them, else NULL. */
static const char *skip_number(const char *p, const char *after)
{
	const char *q = p;

	while (*q >= '0' && *q <= '9')
		q++;
	if (q == p || strncmp(q, after, strlen(after)))
		return NULL;
	return q + strlen(after);
}

/*
 * Whether @line is the first line of a WARN(), in each wording kernel/panic.c
 * __warn() had, and the file it names ("" if none) in *@file:
 * "WARNING: CPU: 1 PID: 42 at mm/memory.c:12 f+0x1/0x2" (3.x to 6.18),
 * "WARNING: mm/memory.c:12 at f+0x1/0x2, CPU#1: a.out/42" (since 6.19),
 * "WARNING: at f+0x1/0x2, CPU#1: a.out/42" (since 6.19, no file known),
 * "WARNING: at mm/memory.c:12 f()" (2.6). Other "WARNING: " lines (lockdep's
 * headers, matched above; a daemon's "WARNING: /etc/ssh/moduli does not
 * exist") are not a WARN().
 */
static bool warn_line(const char *line, const char **file)
{
	const char *p = strstr(line, "WARNING: "), *at, *colon, *cpu;

	if (!p)
		return false;
	p += strlen("WARNING: ");
	*file = "";
	if (!strncmp(p, "CPU: ", 5)) {
		p = skip_number(p + 5, " PID: ");
		p = p ? skip_number(p, " at ") : NULL;
		if (p)
			*file = p;
		return p != NULL;
	}
	if (!strncmp(p, "at ", 3)) {
		*file = p + 3;
		return true;
	}
	/* "<file>:<line> at <function>, CPU#<n>: ", the file without a space */
	at = strstr(p, " at ");
	colon = strchr(p, ':');
	if (!at || !colon || colon > at || memchr(p, ' ', (size_t)(colon - p)) ||
	    !skip_number(colon + 1, " at "))
		return false;
	cpu = strstr(at, ", CPU#");
	if (!cpu || !skip_number(cpu + 6, ": "))
		return false;
	*file = p;
	return true;
}

const char *pmd_kmsg_match(const char *line)
{
	const char *p = strstr(line, "kernel BUG at "), *file;
	size_t i;

	if (p)
		return mm_file(p + strlen("kernel BUG at ")) ? "kernel BUG in mm" : "kernel BUG";
	for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
		p = strstr(line, pats[i].needle);
		if (p && (!pats[i].then || strstr(p + strlen(pats[i].needle), pats[i].then)))
			return pats[i].what;
	}
	/* every WARN(), whatever the taint mask already says: W is set once for good */
	if (warn_line(line, &file))
		return mm_file(file) ? "warning in mm" : "warning";
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
