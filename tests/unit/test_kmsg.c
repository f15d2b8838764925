// SPDX-License-Identifier: GPL-2.0
/* The kernel log oracle: record parsing, splat matching (real splat text), taint letters. */
#include "check.h"
#include "kmsg.h"

static void match(const char *line, const char *want)
{
	const char *got = pmd_kmsg_match(line);

	if (want)
		CHECK(got && !strcmp(got, want), "'%.60s' -> %s (got %s)", line, want,
		      got ? got : "nothing");
	else
		CHECK(!got, "'%.60s' is not a splat (got %s)", line, got ? got : "nothing");
}

static const struct {
	const char *line, *what;
} splats[] = {
	{ "BUG: Bad page map in process a.out  pte:800000010ba5a867 pmd:10b5b1067",
	  "bad page map" },
	{ "BUG: Bad page state in process kcompactd0  pfn:10a000", "bad page state" },
	{ "BUG: Bad rss-counter state mm:00000000b25ee2f9 type:MM_ANONPAGES val:512",
	  "bad rss-counter state" },
	{ "BUG: Bad rss-counter state mm:ffff88003a3e9400 idx:1 val:512", "bad rss-counter state" },
	{ "BUG: non-zero pgtables_bytes on freeing mm: 4096", "non-zero pgtables_bytes" },
	{ "BUG: non-zero nr_ptes on freeing mm: 1", "non-zero nr_ptes" },
	{ "BUG: non-zero nr_pmds on freeing mm: 1", "non-zero nr_pmds" },
	{ "mm/pgtable-generic.c:53: bad pmd 00000000c3bd5b6c(80000001fd0008e7)", "bad pmd" },
	{ "mm/pgtable-generic.c:41: bad pud 00000000a5f1b2c4(0000000102b4f067)", "bad pud" },
	{ "mm/pgtable-generic.c:35: bad p4d 000000006c2d3a1e(0000000102b4e067)", "bad p4d" },
	{ "mm/pgtable-generic.c:28: bad pgd 00000000d8e3a9f1(0000000102b4d067)", "bad pgd" },
	{ "mm/memory.c:539: bad pte 0000000012a6e0d7(8000000101cb1867)", "bad pte" },
	{ "kernel BUG at mm/huge_memory.c:2183!", "kernel BUG in mm" },
	{ "kernel BUG at include/linux/mm.h:1273!", "kernel BUG in mm" },
	{ "kernel BUG at include/linux/swapops.h:117!", "kernel BUG in mm" },
	{ "kernel BUG at arch/x86/mm/physaddr.c:28!", "kernel BUG in mm" },
	{ "kernel BUG at fs/buffer.c:100!", "kernel BUG" },
	{ "WARNING: CPU: 1 PID: 4242 at mm/huge_memory.c:2760 split_huge_pmd_locked+0x60/0x70",
	  "warning in mm" },
	{ "WARNING: CPU: 0 PID: 877 at include/linux/mm.h:1539 folio_put+0x3a/0x40",
	  "warning in mm" },
	{ "WARNING: CPU: 3 PID: 1 at arch/x86/mm/pat/set_memory.c:665 __cpa_process_fault+0x1/0x2",
	  "warning in mm" },
	{ "WARNING: CPU: 2 PID: 51 at arch/arm64/mm/fault.c:123 do_mem_abort+0x1/0x2",
	  "warning in mm" },
	{ "WARNING: mm/memory.c:6145 at handle_mm_fault+0x3c/0x2a0, CPU#1: a.out/4242",
	  "warning in mm" },
	{ "WARNING: at mm/page_alloc.c:2423 __alloc_pages_nodemask+0x22e/0x790()",
	  "warning in mm" },
	{ "BUG: unable to handle page fault for address: ffff888100000000", "kernel page fault" },
	{ "BUG: unable to handle kernel paging request at ffffea0004000000", "kernel page fault" },
	{ "BUG: unable to handle kernel NULL pointer dereference at 0000000000000008",
	  "kernel page fault" },
	{ "BUG: KASAN: use-after-free in zap_pte_range+0x9b6/0xd90", "KASAN report" },
	{ "page dumped because: VM_BUG_ON_FOLIO(!folio_test_locked(folio))", "page dump" },
	{ "list_del corruption. prev->next should be ffff88810b0e6c48, but was ffff8881",
	  "list corruption" },
	{ "list_add corruption. next->prev should be prev (ffff8881), but was ffff8882. "
	  "(next=ffff8883).", "list corruption" },
	{ "general protection fault, probably for non-canonical address 0xdead000000000100: "
	  "0000 [#1] PREEMPT SMP NOPTI", "general protection fault" },
	{ "Oops: 0000 [#1] PREEMPT SMP NOPTI", "oops" },
	{ "rcu: INFO: rcu_preempt self-detected stall on CPU", "RCU stall" },
	{ "INFO: rcu_bh detected stall on CPU 1 (t=2500 jiffies)", "RCU stall" },
	{ "rcu: INFO: rcu_sched detected stalls on CPUs/tasks:", "RCU stall" },
	{ "rcu: INFO: rcu_preempt detected expedited stalls on CPUs/tasks: { 3-... } 21004 "
	  "jiffies s: 1013 root: 0x8/.", "RCU stall" },
	{ "INFO: rcu_tasks detected stalls on tasks:", "RCU stall" },
	{ "INFO: rcu_tasks_trace detected stalls on tasks:", "RCU stall" },
	{ "watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [pmdstress:4242]", "soft lockup" },
	{ "INFO: task pmdstress:4242 blocked for more than 122 seconds.", "hung task" },
};

static const char *const near_misses[] = {
	"WARNING: CPU: 0 PID: 1 at drivers/gpu/drm/foo.c:12 bar+0x1/0x2",
	"WARNING: CPU: 1 PID: 2 at drivers/gpu/drm/drm_mm.c:1000 drm_mm_takedown+0x1/0x2",
	"WARNING: CPU: 1 PID: 2 at include/linux/mmc/host.h:12 mmc_f+0x1/0x2",
	"WARNING: CPU: 1 PID: 2 at arch/x86/kernel/fpu/core.c:100 f+0x1/0x2",
	"WARNING: drivers/net/foo.c:12 at bar+0x1/0x2, CPU#0: kworker/0:1/12",
	"WARNING: at handle_mm_fault+0x3c/0x2a0, CPU#1: a.out/4242",
	"x86/mm: Memory block size: 128MB",
	"rcu: \tRCU CPU stall warnings timeout set to 100 (rcu_cpu_stall_timeout).",
	"rcu: Hierarchical RCU implementation.",
	"\"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\" disables this message.",
	"NMI watchdog: Enabled. Permanently consumes one hw-PMU counter.",
	"pmdstress: run start, seed 0x2a, pid 4242",
	"EXT4-fs (vda): mounted filesystem",
	"systemd[1]: Started Daily apt upgrade and clean activities.",
};

int main(void)
{
	struct pmd_kmsg_record r;
	char rec[] = "4,1234,5678901,-;BUG: Bad page map in process pmd/fault/3  pte:8000000123 "
		     "pmd:1234067\n SUBSYSTEM=mm\n";
	char bad[] = "garbage without fields";
	char buf[64];
	size_t i;

	CHECK(pmd_kmsg_parse(rec, sizeof(rec) - 1, &r), "parse a record");
	CHECK_EQ_U64(r.level, 4, "level");
	CHECK_EQ_U64(r.seq, 1234, "sequence");
	CHECK_EQ_U64(r.ts_us, 5678901, "timestamp");
	CHECK(!strncmp(r.text, "BUG: Bad page map in process", 28), "text starts after ';'");
	CHECK(!strstr(r.text, "SUBSYSTEM"), "dictionary lines are not text");
	CHECK(!pmd_kmsg_parse(bad, sizeof(bad) - 1, &r), "reject a line without fields");

	/* the kernel's own wording, from real splats */
	for (i = 0; i < sizeof(splats) / sizeof(splats[0]); i++)
		match(splats[i].line, splats[i].what);
	/* every needle has a real line above that carries it */
	for (i = 0; pmd_kmsg_pattern(i); i++) {
		const char *needle = pmd_kmsg_pattern(i);
		size_t j;

		for (j = 0; j < sizeof(splats) / sizeof(splats[0]); j++)
			if (strstr(splats[j].line, needle))
				break;
		CHECK(j < sizeof(splats) / sizeof(splats[0]), "'%s' has a test line", needle);
	}
	/* and what is not one, some of it close */
	for (i = 0; i < sizeof(near_misses) / sizeof(near_misses[0]); i++)
		match(near_misses[i], NULL);

	pmd_taint_letters(0, buf, sizeof(buf));
	CHECK_STR(buf, "", "no taint");
	pmd_taint_letters((1u << 5) | (1u << 9), buf, sizeof(buf));
	CHECK_STR(buf, "BW", "bad page + warning");
	pmd_taint_letters((1u << 7) | (1u << 6), buf, sizeof(buf));
	CHECK_STR(buf, "UD", "user + died");
	return check_done();
}
