// SPDX-License-Identifier: GPL-2.0
/*
 * Parse, default, format and describe option values from the one declarative
 * table (include/pmdstress/option.h). Every error names the option, the value
 * and the allowed range, so the caller only has to print it.
 */
#include <pmdstress/option.h>

#include "units.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

void pmd_err_one_line(char *err, size_t len)
{
	char out[1024];
	size_t n = 0, cap = len < sizeof(out) ? len : sizeof(out);
	const unsigned char *p;

	if (!len)
		return;
	for (p = (const unsigned char *)err; *p && n + 1 < cap; p++) {
		if (*p >= 0x20 && *p != 0x7f) {
			out[n++] = (char)*p;
		} else {
			if (n + 5 > cap)
				break;
			n += (size_t)snprintf(out + n, cap - n, "\\x%02x", *p);
		}
	}
	out[n] = 0;
	memcpy(err, out, n + 1);
}

int pmd_errf(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	pmd_err_one_line(err, len);
	return -EINVAL;
}

static void *field(void *base, const struct pmd_option *opt)
{
	return (char *)base + opt->offset;
}

static const void *cfield(const void *base, const struct pmd_option *opt)
{
	return (const char *)base + opt->offset;
}

static const char *type_name(enum pmd_opt_type t)
{
	switch (t) {
	case PMD_OPT_BOOL:
		return "bool";
	case PMD_OPT_UINT:
		return "integer";
	case PMD_OPT_SIZE:
		return "size";
	case PMD_OPT_DURATION:
		return "duration";
	case PMD_OPT_ENUM:
		return "one of";
	case PMD_OPT_STRING:
		return "text";
	case PMD_OPT_SHARE:
		return "workers";
	}
	return "?";
}

static void format_bound(const struct pmd_option *opt, uint64_t v, char *buf, size_t len)
{
	if (opt->type == PMD_OPT_SIZE)
		pmd_format_size(v, buf, len);
	else if (opt->type == PMD_OPT_DURATION)
		pmd_format_duration(v, buf, len);
	else
		snprintf(buf, len, "%llu", (unsigned long long)v);
}

void pmd_opt_describe(const struct pmd_option *opt, char *buf, size_t len)
{
	char lo[32], hi[32];
	size_t n;
	int i;

	switch (opt->type) {
	case PMD_OPT_UINT:
	case PMD_OPT_SIZE:
	case PMD_OPT_DURATION:
		format_bound(opt, opt->min, lo, sizeof(lo));
		format_bound(opt, opt->max, hi, sizeof(hi));
		snprintf(buf, len, "%s %s..%s", type_name(opt->type), lo, hi);
		return;
	case PMD_OPT_ENUM:
		n = (size_t)snprintf(buf, len, "one of ");
		for (i = 0; opt->allowed[i] && n < len; i++)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "|" : "",
					      opt->allowed[i]);
		return;
	case PMD_OPT_BOOL:
		snprintf(buf, len, "on|off");
		return;
	case PMD_OPT_SHARE:
		snprintf(buf, len, "a count 1..%llu, a percentage 1%%..100%%, or rest",
			 (unsigned long long)opt->max);
		return;
	case PMD_OPT_STRING:
		snprintf(buf, len, "text up to %d bytes", PMD_OPT_STRLEN - 1);
		return;
	}
}

static int fail(const struct pmd_option *opt, const char *text, int err, char *buf, size_t len)
{
	char what[256];

	pmd_opt_describe(opt, what, sizeof(what));
	snprintf(buf, len, "%s: invalid value '%s' (%s%s)", opt->name, text,
		 err == -ERANGE ? "out of range; allowed: " : "expected ", what);
	return err;
}

static int parse_bool(const char *t, bool *out)
{
	static const char *const yes[] = { "1", "on", "yes", "true", NULL };
	static const char *const no[] = { "0", "off", "no", "false", NULL };
	int i;

	for (i = 0; yes[i]; i++)
		if (!strcasecmp(t, yes[i]))
			return *out = true, 0;
	for (i = 0; no[i]; i++)
		if (!strcasecmp(t, no[i]))
			return *out = false, 0;
	return -EINVAL;
}

static int parse_share(const struct pmd_option *opt, const char *t, struct pmd_share *s)
{
	size_t n = strlen(t);
	uint64_t v;
	int err;

	memset(s, 0, sizeof(*s));
	if (!strcasecmp(t, "rest"))
		return s->rest = true, 0;
	if (n > 1 && t[n - 1] == '%') {
		char num[24];

		if (n - 1 >= sizeof(num))
			return -ERANGE;
		memcpy(num, t, n - 1);
		num[n - 1] = '\0';
		err = pmd_parse_uint(num, &v);
		if (err)
			return err;
		if (v < 1 || v > 100)
			return -ERANGE;
		s->pct = (uint32_t)v;
		return 0;
	}
	err = pmd_parse_uint(t, &v);
	if (err)
		return err;
	if (v < opt->min || v > opt->max)
		return -ERANGE;
	s->count = (uint32_t)v;
	return 0;
}

int pmd_opt_parse(const struct pmd_option *opt, void *base, const char *text, char *err,
		  size_t errlen)
{
	uint64_t v = 0;
	int rc = 0;
	int i;

	if (!text)
		text = "";
	switch (opt->type) {
	case PMD_OPT_BOOL:
		rc = parse_bool(text, field(base, opt));
		break;
	case PMD_OPT_UINT:
	case PMD_OPT_SIZE:
	case PMD_OPT_DURATION:
		if (text[0] == '-')
			rc = -ERANGE; /* negative sizes and counts are never allowed */
		else if (opt->type == PMD_OPT_UINT)
			rc = pmd_parse_uint(text, &v);
		else if (opt->type == PMD_OPT_SIZE)
			rc = pmd_parse_size(text, &v);
		else
			rc = pmd_parse_duration(text, &v);
		if (!rc && (v < opt->min || v > opt->max))
			rc = -ERANGE;
		if (!rc)
			*(uint64_t *)field(base, opt) = v;
		break;
	case PMD_OPT_ENUM:
		rc = -EINVAL;
		for (i = 0; opt->allowed[i]; i++) {
			if (!strcasecmp(text, opt->allowed[i])) {
				*(unsigned *)field(base, opt) = (unsigned)i;
				rc = 0;
				break;
			}
		}
		break;
	case PMD_OPT_STRING:
		if (strlen(text) >= PMD_OPT_STRLEN)
			rc = -ERANGE;
		else
			snprintf(field(base, opt), PMD_OPT_STRLEN, "%s", text);
		break;
	case PMD_OPT_SHARE:
		rc = parse_share(opt, text, field(base, opt));
		break;
	}
	if (rc)
		return fail(opt, text, rc, err, errlen);
	return 0;
}

int pmd_opt_defaults(const struct pmd_option *table, void *base, char *err, size_t errlen)
{
	const struct pmd_option *o;
	int rc;

	for (o = table; o->name; o++) {
		rc = pmd_opt_parse(o, base, o->def ? o->def : "", err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

void pmd_opt_format(const struct pmd_option *opt, const void *base, char *buf, size_t len)
{
	const void *f = cfield(base, opt);
	const struct pmd_share *s;

	switch (opt->type) {
	case PMD_OPT_BOOL:
		snprintf(buf, len, "%s", *(const bool *)f ? "on" : "off");
		return;
	case PMD_OPT_UINT:
		snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)f);
		return;
	case PMD_OPT_SIZE:
		pmd_format_size(*(const uint64_t *)f, buf, len);
		return;
	case PMD_OPT_DURATION:
		pmd_format_duration(*(const uint64_t *)f, buf, len);
		return;
	case PMD_OPT_ENUM:
		snprintf(buf, len, "%s", opt->allowed[*(const unsigned *)f]);
		return;
	case PMD_OPT_STRING:
		snprintf(buf, len, "%s", (const char *)f);
		return;
	case PMD_OPT_SHARE:
		s = f;
		if (s->rest)
			snprintf(buf, len, "rest");
		else if (s->pct)
			snprintf(buf, len, "%u%%", s->pct);
		else
			snprintf(buf, len, "%u", s->count);
		return;
	}
}

const struct pmd_option *pmd_opt_find(const struct pmd_option *table, const char *name)
{
	const struct pmd_option *o;

	for (o = table; o && o->name; o++)
		if (!strcmp(o->name, name))
			return o;
	return NULL;
}

/* Damerau-free Levenshtein distance; names are short. */
static unsigned edit_distance(const char *a, const char *b)
{
	unsigned prev[64], cur[64];
	size_t la = strlen(a), lb = strlen(b), i, j;

	if (la >= 63 || lb >= 63)
		return 99;
	for (j = 0; j <= lb; j++)
		prev[j] = (unsigned)j;
	for (i = 1; i <= la; i++) {
		cur[0] = (unsigned)i;
		for (j = 1; j <= lb; j++) {
			unsigned sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			unsigned del = prev[j] + 1, ins = cur[j - 1] + 1;

			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, sizeof(unsigned) * (lb + 1));
	}
	return prev[lb];
}

const char *pmd_opt_suggest(const struct pmd_option *table, const char *name)
{
	const struct pmd_option *o;
	const char *best = NULL;
	unsigned best_d = 99;

	for (o = table; o && o->name; o++) {
		unsigned d;

		if (o->flags & PMD_OPTF_HIDDEN)
			continue;
		d = edit_distance(name, o->name);
		if (d < best_d) {
			best_d = d;
			best = o->name;
		}
	}
	/* close enough to be a typo: at most a third of the name wrong */
	if (best && best_d <= 1 + strlen(name) / 3)
		return best;
	return NULL;
}
