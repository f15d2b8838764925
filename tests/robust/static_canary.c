// SPDX-License-Identifier: GPL-2.0
/*
 * Deliberate bugs for tests/robust/test_static_analysis.py: cppcheck and
 * clang-tidy must each report them with the project's own configuration,
 * so that a clean run over src/ and stress/ means something.
 */
#include <stdlib.h>
#include <string.h>

int canary_overflow(void);
int canary_null(int n);

int canary_overflow(void)
{
	char buf[8];

	memset(buf, 0, 16); /* past the end: both tools see it */
	return buf[0];
}

int canary_null(int n)
{
	int *p = NULL;

	if (n > 3)
		p = malloc(sizeof(*p));
	return *p; /* NULL when n <= 3, and a leak otherwise */
}
