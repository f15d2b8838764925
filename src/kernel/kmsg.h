/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel log as an oracle: parse /dev/kmsg records, recognise the
 * kernel's splats, decode taint bits into letters.
 */
#ifndef PMD_KMSG_H
#define PMD_KMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pmd_kmsg_record {
	unsigned level, facility;
	uint64_t seq;
	uint64_t ts_us; /* the kernel's timestamp (local_clock, microseconds) */
	const char *text;
	size_t len;
};

/* Parse one record as read(2) from /dev/kmsg returns it ("6,12,345,-;text\n..."). */
bool pmd_kmsg_parse(char *buf, size_t len, struct pmd_kmsg_record *r);
/* The kind of splat @line is, or NULL: "bad page map", "kernel BUG in mm", "warning", ... */
const char *pmd_kmsg_match(const char *line);
/* The @i-th fixed needle pmd_kmsg_match() looks for, NULL past the last: for its test. */
const char *pmd_kmsg_pattern(size_t i);
/* Letters for the bits of @mask, e.g. 0x240 -> "BW" (kernel/panic.c's taint_flags). */
void pmd_taint_letters(uint64_t mask, char *buf, size_t len);

#endif
