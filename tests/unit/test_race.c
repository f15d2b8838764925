// SPDX-License-Identifier: GPL-2.0
/*
 * Race evidence: trace lines as this project's 6.18 development VM printed
 * them (kmem:mm_page_alloc/mm_page_free in a tracefs instance, trace_clock
 * mono; thread ids changed), the path each racer took, and the inference
 * from fault counts that runs without the trace.
 */
#include "check.h"
#include "race.h"

#include <stdlib.h>
#include <string.h>

/* One seed round: racer 101 on the THP path loses to racer 202's page table. */
static const char *const seed_round[] = {
	/* the THP-role racer's huge page, cleared for ~100 us */
	"     pmd/fault/1-101     [000] .....  3274.349769: mm_page_alloc: page=000000000bd4eadb "
	"pfn=0x161200 order=9 migratetype=1 gfp_flags=GFP_TRANSHUGE|__GFP_NORETRY|__GFP_THISNODE",
	/* the PTE-role racer's __pte_alloc, meanwhile */
	"     pmd/fault/0-202     [001] .....  3274.349790: mm_page_alloc: page=000000002021d2b2 "
	"pfn=0x109d6d order=0 migratetype=0 gfp_flags=GFP_KERNEL_ACCOUNT|__GFP_ZERO|__GFP_COMP",
	/* not a page table: slab refills are not zeroed */
	"     pmd/fault/0-202     [001] ...1.  3274.349795: mm_page_alloc: page=000000004a0e4823 "
	"pfn=0x109c42 order=0 migratetype=0 gfp_flags=GFP_NOWAIT",
	/* the THP racer's deposit, after clearing */
	"     pmd/fault/1-101     [000] .....  3274.349876: mm_page_alloc: page=000000002021d2b3 "
	"pfn=0x109d6e order=0 migratetype=0 gfp_flags=GFP_KERNEL_ACCOUNT|__GFP_ZERO|__GFP_COMP",
	/* the PMD was taken: its huge page goes back */
	"     pmd/fault/1-101     [000] .....  3274.349880: mm_page_free: page=000000000bd4eadb "
	"pfn=0x161200 order=9",
	NULL,
};

#define SEC(s, us) ((uint64_t)(s) * 1000000000ull + (uint64_t)(us) * 1000ull)

static size_t parse_all(const char *const *lines, struct pmd_race_ev *ev)
{
	size_t n = 0;

	for (; *lines; lines++)
		if (pmd_race_parse_line(*lines, &ev[n]))
			n++;
	return n;
}

static void test_parse(void)
{
	struct pmd_race_ev ev;

	CHECK(pmd_race_parse_line(seed_round[0], &ev), "an order-9 allocation parses");
	CHECK_EQ_U64(ev.tid, 101, "its thread");
	CHECK_EQ_U64(ev.kind, PMD_EV_HUGE_ALLOC, "a huge page");
	CHECK_EQ_U64(ev.ts, SEC(3274, 349769), "its time, in ns");
	CHECK(pmd_race_parse_line(seed_round[1], &ev) && ev.kind == PMD_EV_PGTABLE && ev.tid == 202,
	      "a zeroed unmovable order-0 page: a page table");
	CHECK(!pmd_race_parse_line(seed_round[2], &ev), "GFP_NOWAIT without __GFP_ZERO: not ours");
	CHECK(pmd_race_parse_line(seed_round[4], &ev) && ev.kind == PMD_EV_HUGE_FREE,
	      "an order-9 free");
	CHECK(!pmd_race_parse_line("# tracer: nop", &ev), "a header line");
	CHECK(!pmd_race_parse_line("CPU:1 [LOST 12 EVENTS]", &ev), "a lost-events line");
	CHECK(!pmd_race_parse_line("  bash-2922 [000] ..... 3306.694456: sched_switch: x", &ev),
	      "another event");
	/* a task name with dashes and spaces: the thread id is after the last dash */
	CHECK(pmd_race_parse_line("   kworker/u4:2-ev-77    [001] d..1.  12.000001: mm_page_alloc: "
				  "page=0 pfn=0x1 order=9 migratetype=1 gfp_flags=GFP_TRANSHUGE",
				  &ev) &&
		      ev.tid == 77,
	      "comm with dashes");
}

/* In a pid namespace of its own: lines with thread groups (record-tgid), and the storm's mark. */
static void test_parse_by_name(void)
{
	struct pmd_race_ev ev;

	CHECK(pmd_race_parse_line("     pmd/fault/12-4101  (   4090) [001] .....  3274.349769: "
				  "mm_page_alloc: page=0 pfn=0x161200 order=9 migratetype=1 "
				  "gfp_flags=GFP_TRANSHUGE",
				  &ev),
	      "a line with a thread group parses");
	CHECK(ev.tid == 4101 && ev.tgid == 4090 && ev.worker == 12 && ev.kind == PMD_EV_HUGE_ALLOC,
	      "its thread, group, fault worker index and kind");
	CHECK(pmd_race_parse_line("  pmd/storm-4090 (   4090) [000] ...1.   12.000001: "
				  "tracing_mark_write: pmdstress-storm",
				  &ev) &&
		      ev.kind == PMD_EV_SELF && ev.tgid == 4090 && ev.worker == -1,
	      "the storm's mark: its thread group");
	CHECK(pmd_race_parse_line("  pmd/fault/3-77 (-------) [000] .....  12.000001: mm_page_free: "
				  "page=0 pfn=0x1 order=9",
				  &ev) &&
		      ev.tgid == 0 && ev.tid == 77 && ev.worker == 3,
	      "a group the kernel did not record: 0");
	CHECK(!pmd_race_parse_line("  pmd/fault/3-77 -------) [000] .....  12.000001: "
				   "mm_page_free: page=0 pfn=0x1 order=9",
				   &ev),
	      "an unopened group: not a line of ours");
	CHECK(pmd_race_parse_line("  pmd/fault/x-77 [000] .....  12.000001: mm_page_free: page=0 "
				  "pfn=0x1 order=9",
				  &ev) &&
		      ev.worker == -1,
	      "pmd/fault/ without a number: no worker");
	CHECK(pmd_race_parse_line("  pmd/zap/2-78 [000] .....  12.000001: mm_page_free: page=0 "
				  "pfn=0x1 order=9",
				  &ev) &&
		      ev.worker == -1 && ev.tgid == 0,
	      "another stressor's thread: no fault worker");
}

/* A trace that saw none of the racers over many rounds is blind, not a kernel without races. */
static void test_void(void)
{
	CHECK(pmd_race_trace_void_why(5000, 0, false, false) != NULL, "no event in 5000 rounds");
	CHECK(strstr(pmd_race_trace_void_why(5000, 0, true, false), "task name") != NULL,
	      "by name: said so");
	CHECK(pmd_race_trace_void_why(99, 0, false, false) == NULL, "too few rounds to tell");
	CHECK(pmd_race_trace_void_why(5000, 1, false, false) == NULL, "an event: believed");
	CHECK(pmd_race_trace_void_why(5000, 9000, true, true) != NULL, "two threads of one name");
}

static void test_classify(void)
{
	struct pmd_race_ev ev[16];
	size_t n = parse_all(seed_round, ev);
	unsigned paths[2];

	CHECK_EQ_U64(n, 4, "events of ours in the round");
	/* spans as the racers measured them around their first store */
	paths[0] = pmd_race_classify(ev, n, 101, SEC(3274, 349765), SEC(3274, 349890));
	paths[1] = pmd_race_classify(ev, n, 202, SEC(3274, 349786), SEC(3274, 349799));
	CHECK_EQ_U64(paths[0], PMD_PATH_THP, "101 took the THP path (its page table was the deposit)");
	CHECK_EQ_U64(paths[1], PMD_PATH_PTE, "202 took the PTE path on the empty PMD");
	CHECK(pmd_race_seed_of(paths, 2), "a seed race");
	/* events outside a racer's span are not its first store's */
	CHECK_EQ_U64(pmd_race_classify(ev, n, 202, SEC(3274, 349800), SEC(3274, 349900)), 0,
		     "202 after its first store");
	/* the microsecond text: an event just before the span's start still counts */
	CHECK_EQ_U64(pmd_race_classify(ev, n, 101, SEC(3274, 349769) + 900, SEC(3274, 349890)),
		     PMD_PATH_THP, "slack for microsecond timestamps");
	{
		unsigned same[2] = { PMD_PATH_THP, PMD_PATH_THP };
		unsigned one[2] = { PMD_PATH_THP | PMD_PATH_PTE, 0 };

		CHECK(!pmd_race_seed_of(same, 2), "THP against THP is no seed race");
		CHECK(!pmd_race_seed_of(one, 2), "one racer falling back alone is none either");
	}
	/* a failed charge: huge page allocated and freed, then __pte_alloc in the same fault */
	{
		struct pmd_race_ev fb[3] = {
			{ SEC(10, 1), 7, PMD_EV_HUGE_ALLOC },
			{ SEC(10, 2), 7, PMD_EV_HUGE_FREE },
			{ SEC(10, 3), 7, PMD_EV_PGTABLE },
		};

		CHECK_EQ_U64(pmd_race_classify(fb, 3, 7, SEC(10, 0), SEC(10, 9)),
			     PMD_PATH_THP | PMD_PATH_PTE, "fallback: both paths, in that order");
	}
}

static void test_infer(void)
{
	struct pmd_race_round rr;

	memset(&rr, 0, sizeof(rr));
	rr.seed = 1;
	rr.mech = PMD_SEED_MECH_PRCTL;
	rr.nracers = 2;
	rr.r[0] = (struct pmd_racer_span){ .tid = 101, .role = PMD_ROLE_THP, .faults = 2, .lo = 1,
					   .hi = 100 };
	rr.r[1] = (struct pmd_racer_span){ .tid = 202, .role = PMD_ROLE_PTE, .faults = 1, .lo = 10,
					   .hi = 20 };
	rr.end_state = PMD_THPS_PTE;
	CHECK_EQ_U64(pmd_race_infer(&rr), PMD_INFER_THP_LOST,
		     "PTE-mapped, the THP racer faulted twice: its huge page lost to a table");
	rr.r[0].faults = 1;
	CHECK_EQ_U64(pmd_race_infer(&rr), PMD_INFER_NONE, "one fault each, PTE-mapped: nothing seen");
	/* its page mapped by another's sweep while it cleared: one long fault */
	rr.clear_ns = 150;
	CHECK_EQ_U64(pmd_race_infer(&rr), PMD_INFER_THP_LOST,
		     "one fault as long as half a huge page's clearing, PTE-mapped: it lost");
	rr.r[0].hi = 50;
	CHECK_EQ_U64(pmd_race_infer(&rr), PMD_INFER_NONE, "a short fault: a PTE-path one");
	rr.r[0].hi = 100;
	rr.clear_ns = 0;
	rr.end_state = PMD_THPS_THP;
	CHECK_EQ_U64(pmd_race_infer(&rr), PMD_INFER_PTE_LOST,
		     "PMD-mapped, the PTE-role racer faulted: its table lost to a huge PMD");
	rr.mech = PMD_SEED_MECH_MEMCG;
	CHECK_EQ_U64(pmd_race_infer(&rr), PMD_INFER_NONE,
		     "the memcg way: its fault decided THP first, fell back late: not inferred");
	rr.mech = PMD_SEED_MECH_PRCTL;
	rr.r[1].faults = 0;
	CHECK_EQ_U64(pmd_race_infer(&rr), PMD_INFER_NONE,
		     "the PTE-role store came after the huge PMD: no fault, no race");
	rr.r[1].faults = 1;
	rr.disturbed = 1;
	CHECK_EQ_U64(pmd_race_infer(&rr), PMD_INFER_NONE, "a partner changed the chunk: no word");
	rr.disturbed = 0;
	rr.seed = 0;
	CHECK_EQ_U64(pmd_race_infer(&rr), PMD_INFER_NONE, "not a seed round: no roles, no counts");
}

/* The racers' filter: consecutive ids as one range, and nothing when it does not fit. */
static void test_pid_filter(void)
{
	int tid[] = { 73, 10, 11, 80, 12, 74 }, one[] = { 5 }, dup[] = { 7, 7, 8 };
	char buf[200], tiny[40];

	CHECK(pmd_race_pid_filter(tid, 6, buf, sizeof(buf)), "six ids make a filter");
	CHECK(!strcmp(buf, "common_pid >= 10 && common_pid <= 12 || "
			   "common_pid >= 73 && common_pid <= 74 || common_pid == 80"),
	      "runs become ranges, sorted: '%s'", buf);
	CHECK(pmd_race_pid_filter(one, 1, buf, sizeof(buf)) && !strcmp(buf, "common_pid == 5"),
	      "one id: '%s'", buf);
	CHECK(pmd_race_pid_filter(dup, 3, buf, sizeof(buf)) &&
		      !strcmp(buf, "common_pid >= 7 && common_pid <= 8"),
	      "a repeated id stays in its run: '%s'", buf);
	CHECK(!pmd_race_pid_filter(tid, 6, tiny, sizeof(tiny)) && !tiny[0],
	      "too long for the buffer: no filter, not a cut one ('%s')", tiny);
	CHECK(!pmd_race_pid_filter(tid, 0, buf, sizeof(buf)) && !buf[0], "no ids, no filter");
}

int main(void)
{
	test_pid_filter();
	test_parse();
	test_parse_by_name();
	test_void();
	test_classify();
	test_infer();
	return check_done();
}
