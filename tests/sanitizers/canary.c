// SPDX-License-Identifier: GPL-2.0
/*
 * Deliberate bugs for tests/sanitizers/: a leak, an overflow, undefined
 * behaviour and an uninitialised read, one per argument, so that a clean
 * sanitizer or valgrind run of pmdstress means something on this machine.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	volatile int big = INT_MAX;
	char *p;

	if (argc < 2)
		return 2;
	p = malloc(16);
	if (!p)
		return 2;
	if (!strcmp(argv[1], "leak")) {
		p[0] = 1;
		p = NULL; /* lost: LeakSanitizer and valgrind must say so */
		return 0;
	}
	if (!strcmp(argv[1], "overflow"))
		((volatile char *)p)[16] = 1; /* ASan: heap-buffer-overflow */
	if (!strcmp(argv[1], "ub"))
		printf("%d\n", big + argc); /* UBSan: signed integer overflow */
	if (!strcmp(argv[1], "uninit") && p[3]) /* valgrind: depends on uninitialised value */
		puts("set");
	free(p);
	return 0;
}
