// SPDX-License-Identifier: GPL-2.0
/*
 * The line a JSON value is on. jansson says where a syntax error is, but a
 * document it parsed keeps no positions, and an error found afterwards
 * ("options.global.threads: expected a string") should name the line like
 * the INI reader does. So, only when such an error is written, the file is
 * read again and walked with the path in hand: the line of the value at
 * the path, or, for a missing member, of the deepest object or array on the
 * way to it. The text was valid JSON a moment ago; anything unexpected (it
 * changed, it nests deeper than MAX_DEPTH) just gives no line.
 */
#include "jsonline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64
#define MAX_TEXT (64u << 20)

struct walk {
	const char *p, *end;
	unsigned line;
	const char *want;
	size_t best_len; /* the longest prefix of want seen so far */
	unsigned best_line;
	int found;
};

static void skip_ws(struct walk *w)
{
	while (w->p < w->end && (*w->p == ' ' || *w->p == '\t' || *w->p == '\n' || *w->p == '\r')) {
		if (*w->p == '\n')
			w->line++;
		w->p++;
	}
}

/* A string at w->p; its raw text (escapes left as they are) into @buf. */
static int string(struct walk *w, char *buf, size_t len)
{
	size_t n = 0;

	if (w->p >= w->end || *w->p != '"')
		return -1;
	for (w->p++; w->p < w->end && *w->p != '"'; w->p++) {
		if (*w->p == '\\' && w->p + 1 < w->end) {
			if (buf && n + 1 < len)
				buf[n++] = *w->p;
			w->p++;
		}
		if (buf && n + 1 < len)
			buf[n++] = *w->p;
	}
	if (buf)
		buf[n] = '\0';
	if (w->p >= w->end)
		return -1;
	w->p++;
	return 0;
}

/* Note that the value at @path starts here. */
static void visit(struct walk *w, const char *path, size_t plen)
{
	if (!strcmp(path, w->want)) {
		w->found = 1;
		w->best_line = w->line;
		w->best_len = plen;
	} else if ((!plen || (!strncmp(w->want, path, plen) &&
			      (w->want[plen] == '.' || w->want[plen] == '['))) &&
		   (plen > w->best_len || !w->best_line)) {
		w->best_len = plen;
		w->best_line = w->line;
	}
}

/* After a member or element: 1 if another follows, 0 at @close, -1 on anything else. */
static int next(struct walk *w, char close)
{
	skip_ws(w);
	if (w->p < w->end && *w->p == ',') {
		w->p++;
		return 1;
	}
	return w->p < w->end && *w->p++ == close ? 0 : -1;
}

static int value(struct walk *w, char *path, size_t plen, unsigned depth)
{
	char key[128];
	size_t i = 0, n;
	int rc;

	skip_ws(w);
	if (w->p >= w->end || depth > MAX_DEPTH)
		return -1;
	if (!w->found)
		visit(w, path, plen);
	if (*w->p == '"')
		return string(w, NULL, 0);
	if (*w->p != '{' && *w->p != '[') {
		while (w->p < w->end && !strchr(",]} \t\r\n", *w->p))
			w->p++;
		return 0;
	}
	if (*w->p++ == '{') {
		skip_ws(w);
		if (w->p < w->end && *w->p == '}')
			return w->p++, 0;
		for (;;) {
			skip_ws(w);
			if (string(w, key, sizeof(key)))
				return -1;
			skip_ws(w);
			if (w->p >= w->end || *w->p++ != ':')
				return -1;
			n = (size_t)snprintf(path + plen, JSONLINE_PATH - plen, "%s%s", plen ? "." : "",
					     key);
			if (plen + n >= JSONLINE_PATH || value(w, path, plen + n, depth + 1))
				return -1;
			path[plen] = '\0';
			if ((rc = next(w, '}')) <= 0)
				return rc;
		}
	}
	skip_ws(w);
	if (w->p < w->end && *w->p == ']')
		return w->p++, 0;
	for (;; i++) {
		n = (size_t)snprintf(path + plen, JSONLINE_PATH - plen, "[%zu]", i);
		if (plen + n >= JSONLINE_PATH || value(w, path, plen + n, depth + 1))
			return -1;
		path[plen] = '\0';
		if ((rc = next(w, ']')) <= 0)
			return rc;
	}
}

unsigned pmd_json_line_in(const char *text, size_t len, const char *path)
{
	struct walk w = { .p = text, .end = text + len, .line = 1, .want = path };
	char buf[JSONLINE_PATH] = "";

	value(&w, buf, 0, 0);
	return w.best_line;
}

unsigned pmd_json_line_of(const char *file, const char *path)
{
	FILE *f = fopen(file, "rb");
	char *text = NULL;
	size_t len = 0, cap = 0;
	unsigned line = 0;

	if (!f)
		return 0;
	for (;;) {
		size_t got;

		if (len == cap) {
			char *t = cap < MAX_TEXT ? realloc(text, cap ? cap * 2 : 65536) : NULL;

			if (!t)
				goto out;
			text = t;
			cap = cap ? cap * 2 : 65536;
		}
		got = fread(text + len, 1, cap - len, f);
		if (!got)
			break;
		len += got;
	}
	line = pmd_json_line_in(text, len, path);
out:
	free(text);
	fclose(f);
	return line;
}
