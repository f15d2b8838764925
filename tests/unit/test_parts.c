// SPDX-License-Identifier: GPL-2.0
/*
 * Workers cut into parts (the fault storm's groups): every worker's part
 * holds it, the parts tile the workers, and they differ in size by at most
 * one, also past 2^32 for worker x parts (65537 workers in groups of one:
 * a 32-bit product sent worker 65536 to group 0, whose gate then waited for
 * good for a worker that never came).
 */
#include "check.h"

#include <pmdstress/stressor.h>

static void check_cut(unsigned n, unsigned parts)
{
	unsigned j, bad = 0, first_bad = 0, lo = n, hi = 0, i;

	for (j = 0; j < n; j++) {
		unsigned p = pmd_part_of(j, n, parts);

		if (p >= parts || pmd_part_first(p, n, parts) > j ||
		    pmd_part_first(p + 1, n, parts) <= j) {
			if (!bad++)
				first_bad = j;
		}
	}
	for (i = 0; i < parts; i++) {
		unsigned size = pmd_part_first(i + 1, n, parts) - pmd_part_first(i, n, parts);

		lo = size < lo ? size : lo;
		hi = size > hi ? size : hi;
	}
	CHECK(!bad, "%u workers in %u parts: each in the part that holds it (%u not, first %u)", n,
	      parts, bad, first_bad);
	CHECK(pmd_part_first(0, n, parts) == 0 && pmd_part_first(parts, n, parts) == n && lo >= 1 &&
		      hi - lo <= 1,
	      "%u workers in %u parts: they tile the workers, sizes %u..%u", n, parts, lo, hi);
}

int main(void)
{
	check_cut(1, 1);
	check_cut(7, 3);
	check_cut(64, 58);
	check_cut(65536, 65536);
	check_cut(65537, 65537);
	check_cut(1000000, 1000000); /* --threads at most */
	check_cut(1000000, 333334);  /* --fault-group 3 */
	check_cut(1000000, 1);
	return check_done();
}
