/* SPDX-License-Identifier: GPL-2.0 */
/* The line of a JSON value, by its path, for error messages (src/report/jsonline.c). */
#ifndef PMD_JSONLINE_H
#define PMD_JSONLINE_H

#include <stddef.h>

#define JSONLINE_PATH 512

/*
 * The 1-based line on which the value at @path ("stressors[0].latency.zap",
 * "" for the top) starts in @text; for a missing member, the line of the
 * deepest object or array on the way to it; 0 if the text cannot be walked.
 */
unsigned pmd_json_line_in(const char *text, size_t len, const char *path);
/* The same for the file @file, read again. */
unsigned pmd_json_line_of(const char *file, const char *path);

#endif
