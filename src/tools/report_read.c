// SPDX-License-Identifier: GPL-2.0
/* Loading and checking pmdstress JSON reports, with errors that name file and field. */
#include "report_read.h"

#include "jsonline.h"
#include "report.h"

#include <pmdstress/option.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int pmd_jerr(const struct pmd_jctx *x, const char *where, const char *fmt, ...)
{
	char msg[384];
	unsigned line;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* file:line: like the INI reader, when the value's line can be found */
	line = where && *where ? pmd_json_line_of(x->file, where) : 0;
	if (line)
		snprintf(x->err, x->errlen, "%s:%u: %s: %s", x->file, line, where, msg);
	else if (where && *where)
		snprintf(x->err, x->errlen, "%s: %s: %s", x->file, where, msg);
	else
		snprintf(x->err, x->errlen, "%s: %s", x->file, msg);
	pmd_err_one_line(x->err, x->errlen); /* a key or value may hold a newline */
	return -EINVAL;
}

const char *pmd_jkind_name(enum pmd_jkind kind)
{
	static const char *const names[] = { "an object", "an array", "a string", "a number",
					     "an integer", "true or false" };

	return names[kind];
}

static const char *found_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		return "null";
	}
	return "something else";
}

static bool kind_matches(const json_t *v, enum pmd_jkind kind)
{
	switch (kind) {
	case PMD_J_OBJECT:
		return json_is_object(v);
	case PMD_J_ARRAY:
		return json_is_array(v);
	case PMD_J_STRING:
		return json_is_string(v);
	case PMD_J_NUMBER:
		return json_is_number(v);
	case PMD_J_INTEGER:
		return json_is_integer(v);
	case PMD_J_BOOL:
		return json_is_boolean(v);
	}
	return false;
}

bool pmd_jis(const struct pmd_jctx *x, const json_t *v, const char *where, enum pmd_jkind kind)
{
	if (kind_matches(v, kind))
		return true;
	pmd_jerr(x, where, "expected %s, found %s", pmd_jkind_name(kind), found_name(v));
	return false;
}

json_t *pmd_jget(const struct pmd_jctx *x, const json_t *obj, const char *where, const char *key,
		 enum pmd_jkind kind)
{
	char path[512];
	json_t *v = json_object_get(obj, key);

	snprintf(path, sizeof(path), "%s%s%s", where, *where ? "." : "", key);
	if (!v) {
		pmd_jerr(x, path, "missing");
		return NULL;
	}
	return pmd_jis(x, v, path, kind) ? v : NULL;
}

json_t *pmd_jat(const struct pmd_jctx *x, const json_t *arr, const char *where, size_t i,
		enum pmd_jkind kind)
{
	char path[512];
	json_t *v = json_array_get(arr, i);

	snprintf(path, sizeof(path), "%s[%zu]", where, i);
	if (!v) {
		pmd_jerr(x, path, "missing");
		return NULL;
	}
	return pmd_jis(x, v, path, kind) ? v : NULL;
}

double pmd_jnum(const json_t *v)
{
	return json_number_value(v);
}

json_t *pmd_report_load_version(const char *path, char *err, size_t errlen, long long *version)
{
	struct pmd_jctx x = { .file = path, .err = err, .errlen = errlen };
	json_error_t je;
	struct stat sb;
	json_t *doc, *v;

	*version = 0;
	if (stat(path, &sb)) {
		pmd_jerr(&x, NULL, "cannot open: %s", strerror(errno));
		return NULL;
	}
	if (!S_ISREG(sb.st_mode)) {
		pmd_jerr(&x, NULL, "not a regular file");
		return NULL;
	}
	doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!doc) {
		/* jansson says where it stopped; at the very end, the file was cut short */
		bool at_end = je.position >= (int)sb.st_size;

		pmd_jerr(&x, NULL, "not valid JSON (line %d, column %d: %s)%s", je.line, je.column,
			 je.text, at_end ? "; the file ends early: truncated?" : "");
		return NULL;
	}
	if (!json_is_object(doc)) {
		pmd_jerr(&x, NULL, "not a pmdstress report (the top level is %s, not an object)",
			 found_name(doc));
		goto bad;
	}
	v = json_object_get(doc, "schema");
	if (!json_is_string(v) || strcmp(json_string_value(v), "pmdstress-report")) {
		pmd_jerr(&x, NULL, "not a pmdstress report (no \"schema\": \"pmdstress-report\")");
		goto bad;
	}
	v = pmd_jget(&x, doc, "", "schema_version", PMD_J_INTEGER);
	if (!v)
		goto bad;
	*version = json_integer_value(v);
	if (json_integer_value(v) != PMD_SCHEMA_VERSION) {
		pmd_jerr(&x, "schema_version",
			 "version %lld, but this pmdstress (%s) reads version %d reports",
			 (long long)json_integer_value(v), PMD_VERSION, PMD_SCHEMA_VERSION);
		goto bad;
	}
	return doc;
bad:
	json_decref(doc);
	return NULL;
}

json_t *pmd_report_load(const char *path, char *err, size_t errlen)
{
	long long version;

	return pmd_report_load_version(path, err, errlen, &version);
}
