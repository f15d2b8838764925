/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading pmdstress JSON reports back (compare, replay, plot): load a file,
 * check that it is a report of the schema version this binary writes, and
 * typed field access whose errors are one line naming the file and the
 * field's path ("b.json: stressors[0].latency.zap.p99: expected a number,
 * found a string"), never a crash on whatever the file holds.
 */
#ifndef PMD_REPORT_READ_H
#define PMD_REPORT_READ_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Load @path; NULL (and one line in @err) unless it is a report we read. */
json_t *pmd_report_load(const char *path, char *err, size_t errlen);
/*
 * The same, and @version gets the file's schema_version when it is a
 * pmdstress report with an integer one, 0 otherwise: so a caller can tell
 * "a version I do not know" from "broken".
 */
json_t *pmd_report_load_version(const char *path, char *err, size_t errlen, long long *version);

enum pmd_jkind {
	PMD_J_OBJECT,
	PMD_J_ARRAY,
	PMD_J_STRING,
	PMD_J_NUMBER, /* integer or real */
	PMD_J_INTEGER,
	PMD_J_BOOL,
};

/* Where errors about one file are written. */
struct pmd_jctx {
	const char *file;
	char *err;
	size_t errlen;
};

/*
 * @obj's member @key, of @kind; @where is @obj's path in the document ("" at
 * the top). NULL, with the error written, if it is missing or of another kind.
 */
json_t *pmd_jget(const struct pmd_jctx *x, const json_t *obj, const char *where, const char *key,
		 enum pmd_jkind kind);
/* Same for an array element; @where is the array's path. */
json_t *pmd_jat(const struct pmd_jctx *x, const json_t *arr, const char *where, size_t i,
		enum pmd_jkind kind);
/* Check that @v (at @where) is of @kind; false with the error written otherwise. */
bool pmd_jis(const struct pmd_jctx *x, const json_t *v, const char *where, enum pmd_jkind kind);
/* Write "<file>: <where>: <message>" into the context's error buffer; returns -EINVAL. */
int pmd_jerr(const struct pmd_jctx *x, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

double pmd_jnum(const json_t *v);
const char *pmd_jkind_name(enum pmd_jkind kind);

#endif
