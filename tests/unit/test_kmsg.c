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

int main(void)
{
	struct pmd_kmsg_record r;
	char rec[] = "4,1234,5678901,-;BUG: Bad page map in process pmd/fault/3  pte:8000000123 "
		     "pmd:1234067\n SUBSYSTEM=mm\n";
	char bad[] = "garbage without fields";
	char buf[64];

	CHECK(pmd_kmsg_parse(rec, sizeof(rec) - 1, &r), "parse a record");
	CHECK_EQ_U64(r.level, 4, "level");
	CHECK_EQ_U64(r.seq, 1234, "sequence");
	CHECK_EQ_U64(r.ts_us, 5678901, "timestamp");
	CHECK(!strncmp(r.text, "BUG: Bad page map in process", 28), "text starts after ';'");
	CHECK(!strstr(r.text, "SUBSYSTEM"), "dictionary lines are not text");
	CHECK(!pmd_kmsg_parse(bad, sizeof(bad) - 1, &r), "reject a line without fields");

	/* the kernel's own wording, from real splats */
	match("BUG: Bad page map in process a.out  pte:800000010ba5a867 pmd:10b5b1067", "bad page map");
	match("BUG: Bad page state in process kcompactd0  pfn:10a000", "bad page state");
	match("BUG: Bad rss-counter state mm:00000000b25ee2f9 type:MM_ANONPAGES val:512",
	      "bad rss-counter state");
	match("mm/pgtable-generic.c:53: bad pmd 00000000c3bd5b6c(80000001fd0008e7)", "bad pmd");
	match("mm/memory.c:539: bad pte 0000000012a6e0d7(8000000101cb1867)", "bad pte");
	match("kernel BUG at mm/huge_memory.c:2183!", "kernel BUG in mm");
	match("kernel BUG at include/linux/mm.h:1273!", "kernel BUG in mm");
	match("kernel BUG at fs/buffer.c:100!", "kernel BUG");
	match("WARNING: CPU: 1 PID: 4242 at mm/huge_memory.c:2760 split_huge_pmd_locked+0x60/0x70",
	      "warning in mm");
	match("BUG: unable to handle page fault for address: ffff888100000000", "kernel page fault");
	match("BUG: non-zero pgtables_bytes on freeing mm: 4096", "non-zero pgtables_bytes");
	match("list_del corruption. prev->next should be ffff88810b0e6c48, but was ffff8881", "list corruption");
	match("Oops: 0000 [#1] PREEMPT SMP NOPTI", "oops");
	match("rcu: INFO: rcu_preempt self-detected stall on CPU", "RCU stall");
	match("page dumped because: VM_BUG_ON_FOLIO(!folio_test_locked(folio))", "page dump");
	/* and what is not one */
	match("WARNING: CPU: 0 PID: 1 at drivers/gpu/drm/foo.c:12 bar+0x1/0x2", NULL);
	match("EXT4-fs (vda): mounted filesystem", NULL);
	match("systemd[1]: Started Daily apt upgrade and clean activities.", NULL);

	pmd_taint_letters(0, buf, sizeof(buf));
	CHECK_STR(buf, "", "no taint");
	pmd_taint_letters((1u << 5) | (1u << 9), buf, sizeof(buf));
	CHECK_STR(buf, "BW", "bad page + warning");
	pmd_taint_letters((1u << 7) | (1u << 6), buf, sizeof(buf));
	CHECK_STR(buf, "UD", "user + died");
	return check_done();
}
