// SPDX-License-Identifier: GPL-2.0
/* Async-signal-safe output to stderr (see sigsafe.h). */
#include "sigsafe.h"

#include <string.h>
#include <unistd.h>

void pmd_sigsafe_put(const char *s)
{
	size_t n = strlen(s); /* strlen is async-signal-safe since POSIX.1-2016 */

	while (n) {
		ssize_t k = write(STDERR_FILENO, s, n);

		if (k <= 0)
			return;
		s += k;
		n -= (size_t)k;
	}
}

void pmd_sigsafe_put_num(uint64_t v, unsigned base)
{
	char buf[24], *p = buf + sizeof(buf) - 1;

	*p = '\0';
	do
		*--p = "0123456789abcdef"[v % base];
	while ((v /= base) && p > buf);
	if (base == 16)
		pmd_sigsafe_put("0x");
	pmd_sigsafe_put(p);
}
