// SPDX-License-Identifier: GPL-2.0
/* libinih driven through a line reader that counts lines and sees sections. */
#include "ini_reader.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <string.h>

struct reader {
	const char *pos;
	const char *origin;
	const struct pmd_ini_handlers *h;
	void *user;
	char *err;
	size_t errlen;
	int line;
	int sections;
	int failed; /* the first error is in err; stop reading */
};

static void fail(struct reader *r, const char *msg, const char *arg)
{
	/* the offending text, without its line end */
	snprintf(r->err, r->errlen, "%s:%d: %s%.*s", r->origin, r->line, msg,
		 (int)strcspn(arg, "\r\n"), arg);
	r->failed = 1;
}

/* A section header line: report its name to the loader before inih sees it. */
static void check_line(struct reader *r, const char *line)
{
	const char *p = line, *end;
	char name[128];

	if (*p == ' ' || *p == '\t') {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p && *p != '\n' && *p != '\r' && *p != ';' && *p != '#')
			fail(r, "indented line (continuation lines are not supported): ", p);
		return;
	}
	if (*p != '[')
		return;
	end = strchr(p, ']');
	if (!end) {
		fail(r, "section header without ']'", "");
		return;
	}
	if ((size_t)(end - p - 1) >= sizeof(name)) {
		fail(r, "section name too long", "");
		return;
	}
	snprintf(name, sizeof(name), "%.*s", (int)(end - p - 1), p + 1);
	r->sections++;
	if (r->h->on_section(r->user, name, r->line))
		r->failed = 1;
}

static char *read_line(char *str, int num, void *stream)
{
	struct reader *r = stream;
	const char *nl;
	size_t len;

	if (r->failed || !*r->pos)
		return NULL;
	nl = strchr(r->pos, '\n');
	len = nl ? (size_t)(nl - r->pos + 1) : strlen(r->pos);
	r->line++;
	if (len + 1 > (size_t)num) {
		fail(r, "line longer than 200 characters", "");
		return NULL;
	}
	memcpy(str, r->pos, len);
	str[len] = '\0';
	r->pos += len;
	check_line(r, str);
	return r->failed ? NULL : str;
}

static int on_pair(void *user, const char *section, const char *name, const char *value)
{
	struct reader *r = user;

	if (r->failed)
		return 0;
	if (r->h->on_key(r->user, section, name, value, r->line)) {
		r->failed = 1;
		return 0;
	}
	return 1;
}

int pmd_ini_parse(const char *text, const char *origin, const struct pmd_ini_handlers *h,
		  void *user, char *err, size_t errlen)
{
	/*
	 * A UTF-8 byte order mark (editors on other systems write one): skip it
	 * here, or the first "[section]" would reach inih but not check_line().
	 */
	const char *start = strncmp(text, "\xef\xbb\xbf", 3) ? text : text + 3;
	struct reader r = {
		.pos = start, .origin = origin, .h = h, .user = user, .err = err, .errlen = errlen,
	};
	int rc = ini_parse_stream(read_line, &r, on_pair, &r);

	if (r.failed)
		return -EINVAL;
	if (rc > 0) {
		snprintf(err, errlen, "%s:%d: syntax error (expected '[section]' or 'key = value')",
			 origin, rc);
		return -EINVAL;
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s: cannot parse (%s)", origin,
			 rc == -2 ? "out of memory" : "read error");
		return -EINVAL;
	}
	if (!r.sections) {
		snprintf(err, errlen, "%s: empty scenario (no '[section]' in it)", origin);
		return -EINVAL;
	}
	return 0;
}
