// SPDX-License-Identifier: GPL-2.0
/* Sizes and durations as people type them, and back. */
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

int pmd_parse_uint(const char *text, uint64_t *out)
{
	const char *p = text;
	uint64_t v = 0;
	unsigned base = 10;

	if (!p || !*p)
		return -EINVAL;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
		if (!*p)
			return -EINVAL;
	}
	for (; *p; p++) {
		unsigned d;

		if (isdigit((unsigned char)*p))
			d = (unsigned)(*p - '0');
		else if (base == 16 && isxdigit((unsigned char)*p))
			d = (unsigned)(tolower((unsigned char)*p) - 'a' + 10);
		else
			return -EINVAL;
		if (v > (UINT64_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

/* Split "12ms" into the number 12 and the suffix "ms". */
static int split_number(const char *text, uint64_t *num, const char **suffix)
{
	char digits[32];
	size_t n = 0;

	if (!text)
		return -EINVAL;
	while (isspace((unsigned char)*text))
		text++;
	while (isdigit((unsigned char)text[n]))
		n++;
	if (n == 0)
		return -EINVAL;
	if (n >= sizeof(digits))
		return -ERANGE;
	memcpy(digits, text, n);
	digits[n] = '\0';
	*suffix = text + n;
	return pmd_parse_uint(digits, num);
}

static bool suffix_is(const char *s, const char *a, const char *b, const char *c)
{
	return !strcasecmp(s, a) || (b && !strcasecmp(s, b)) || (c && !strcasecmp(s, c));
}

static int mul_checked(uint64_t v, uint64_t m, uint64_t *out)
{
	if (m && v > UINT64_MAX / m)
		return -ERANGE;
	*out = v * m;
	return 0;
}

int pmd_parse_size(const char *text, uint64_t *out)
{
	const char *sfx;
	uint64_t v, mult;
	int err = split_number(text, &v, &sfx);

	if (err)
		return err;
	if (!*sfx || suffix_is(sfx, "b", NULL, NULL))
		mult = 1;
	else if (suffix_is(sfx, "k", "kb", "kib"))
		mult = 1ull << 10;
	else if (suffix_is(sfx, "m", "mb", "mib"))
		mult = 1ull << 20;
	else if (suffix_is(sfx, "g", "gb", "gib"))
		mult = 1ull << 30;
	else if (suffix_is(sfx, "t", "tb", "tib"))
		mult = 1ull << 40;
	else
		return -EINVAL;
	return mul_checked(v, mult, out);
}

/*
 * "1.5s", "0.25m": a decimal fraction, as long as it comes to whole
 * nanoseconds ("1.5ns" does not). Sizes stay whole numbers.
 */
static int add_fraction(const char *digits, size_t n, uint64_t mult, uint64_t *ns)
{
	uint64_t f = 0, scale = 1, part;
	size_t i;

	if (n == 0)
		return -EINVAL; /* "1.s" */
	if (n > 18)
		return -ERANGE; /* past a nanosecond of any unit */
	for (i = 0; i < n; i++) {
		f = f * 10 + (uint64_t)(digits[i] - '0');
		scale *= 10;
	}
	if (mul_checked(f, mult, &part) || part % scale)
		return -EINVAL; /* finer than a nanosecond */
	part /= scale;
	if (*ns > UINT64_MAX - part)
		return -ERANGE;
	*ns += part;
	return 0;
}

int pmd_parse_duration(const char *text, uint64_t *out_ns)
{
	const char *sfx, *frac = NULL;
	size_t nfrac = 0;
	uint64_t v, mult, ns;
	int err = split_number(text, &v, &sfx);

	if (err)
		return err;
	if (*sfx == '.') {
		frac = ++sfx;
		while (isdigit((unsigned char)*sfx))
			sfx++;
		nfrac = (size_t)(sfx - frac);
	}
	if (!*sfx || suffix_is(sfx, "s", "sec", NULL))
		mult = 1000000000ull;
	else if (suffix_is(sfx, "ns", NULL, NULL))
		mult = 1;
	else if (suffix_is(sfx, "us", NULL, NULL))
		mult = 1000ull;
	else if (suffix_is(sfx, "ms", NULL, NULL))
		mult = 1000000ull;
	else if (suffix_is(sfx, "m", "min", NULL))
		mult = 60ull * 1000000000ull;
	else if (suffix_is(sfx, "h", NULL, NULL))
		mult = 3600ull * 1000000000ull;
	else if (suffix_is(sfx, "d", NULL, NULL))
		mult = 86400ull * 1000000000ull;
	else
		return -EINVAL;
	err = mul_checked(v, mult, &ns);
	if (!err && frac)
		err = add_fraction(frac, nfrac, mult, &ns);
	if (!err)
		*out_ns = ns;
	return err;
}

void pmd_format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char sfx[] = "KMGT";
	int i;

	for (i = 3; i >= 0; i--) {
		uint64_t unit = 1ull << (10 * (i + 1));

		if (bytes && bytes % unit == 0) {
			snprintf(buf, len, "%llu%c", (unsigned long long)(bytes / unit), sfx[i]);
			return;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)bytes);
}

void pmd_format_duration(uint64_t ns, char *buf, size_t len)
{
	static const struct {
		uint64_t ns;
		const char *sfx;
	} units[] = {
		{ 3600000000000ull, "h" }, { 60000000000ull, "m" }, { 1000000000ull, "s" },
		{ 1000000ull, "ms" },	   { 1000ull, "us" },
	};
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (ns && ns % units[i].ns == 0) {
			snprintf(buf, len, "%llu%s", (unsigned long long)(ns / units[i].ns),
				 units[i].sfx);
			return;
		}
	}
	snprintf(buf, len, "%lluns", (unsigned long long)ns);
}

void pmd_format_ns(double ns, char *buf, size_t len)
{
	static const struct {
		double div;
		const char *sfx;
	} units[] = { { 1e9, "s" }, { 1e6, "ms" }, { 1e3, "us" }, { 1, "ns" } };
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		double v = ns / units[i].div;

		if (v >= 1.0 || units[i].div == 1) {
			/* three significant digits */
			int prec = v >= 100 ? 0 : v >= 10 ? 1 : 2;

			snprintf(buf, len, "%.*f%s", prec, v, units[i].sfx);
			return;
		}
	}
}
