// SPDX-License-Identifier: GPL-2.0
/*
 * A deliberate bug for tests/fuzz/test_fuzz.py: libFuzzer must find the
 * input "pmd!" from the seed "pmd" and ASan must report the overflow, so
 * that a clean fuzz run of the real targets means something here.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

volatile char canary_sink; /* the compiler must not drop the bad copy */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *p;

	/* byte by byte: each comparison is new coverage on the way to "pmd!" */
	if (size < 4 || data[0] != 'p' || data[1] != 'm' || data[2] != 'd' || data[3] != '!')
		return 0;
	p = malloc(4);
	if (!p)
		return 0;
	memcpy(p, data, size + 1); /* one byte past the input, and past p */
	canary_sink = p[size];
	free(p);
	return 0;
}
