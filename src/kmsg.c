// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/kmsg records and the mm splats a stress run must notice. The list
 * is the kernel's own wording (mm/memory.c print_bad_pte(), mm/page_alloc.c
 * bad_page(), kernel/fork.c check_mm(), mm/pgtable-generic.c pmd_clear_bad(),
 * lib/list_debug.c, BUG()/WARN() in mm/, the mm headers and arch/<arch>/mm/,
 * the page fault oops, RCU stalls, soft lockups, hung tasks).
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
 * Splats found by their wording alone. A line that holds two needles is the
 * first one's kind. BUG() and WARN() are told apart by the file they name,
 * below.
 */
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
	{ "bad p4d", "bad p4d" },
	{ "bad pgd", "bad pgd" },
	{ "bad pte", "bad pte" },
	{ "BUG: unable to handle page fault", "kernel page fault" },
	{ "BUG: unable to handle kernel", "kernel page fault" },
	{ "BUG: KASAN", "KASAN report" },
	{ "page dumped because", "page dump" },
	{ "list_del corruption", "list corruption" },
	{ "list_add corruption", "list corruption" },
	{ "general protection fault", "general protection fault" },
	{ "Oops:", "oops" },
	/* kernel/rcu/tree_stall.h, tree_exp.h, tasks.h */
	{ "self-detected stall on CPU", "RCU stall" },
	{ "detected stall on CPU", "RCU stall" },
	{ "detected stalls on CPUs", "RCU stall" },
	{ "detected expedited stalls on CPUs", "RCU stall" },
	{ "detected stalls on tasks", "RCU stall" },
	{ "soft lockup - CPU", "soft lockup" },
	{ "blocked for more than", "hung task" },
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

/*
 * The file a WARN() names, in each wording kernel/panic.c __warn() had:
 * "WARNING: CPU: 1 PID: 42 at mm/memory.c:12 f+0x1/0x2" (3.x to 6.x),
 * "WARNING: mm/memory.c:12 at f+0x1/0x2, CPU#1: a.out/42" (since 6.19),
 * "WARNING: at mm/memory.c:12 f()" (2.6).
 */
static const char *warn_file(const char *line)
{
	const char *p = strstr(line, "WARNING: ");

	if (!p)
		return NULL;
	p += strlen("WARNING: ");
	if (!strncmp(p, "CPU: ", 5)) {
		p = strstr(p, " at ");
		return p ? p + 4 : NULL;
	}
	if (!strncmp(p, "at ", 3))
		p += 3;
	return p;
}

const char *pmd_kmsg_match(const char *line)
{
	const char *p = strstr(line, "kernel BUG at ");
	size_t i;

	if (p)
		return mm_file(p + strlen("kernel BUG at ")) ? "kernel BUG in mm" : "kernel BUG";
	for (i = 0; i < sizeof(pats) / sizeof(pats[0]); i++)
		if (strstr(line, pats[i].needle))
			return pats[i].what;
	p = warn_file(line);
	if (p && mm_file(p))
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
