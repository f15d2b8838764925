/* SPDX-License-Identifier: GPL-2.0 */
/* Sizes and durations as people type them: 2M, 1G, 90s, 8h. */
#ifndef PMD_UNITS_H
#define PMD_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* "4096", "64K", "2M", "1G", "1T", "2MiB" -> bytes. Returns 0, -EINVAL or -ERANGE. */
int pmd_parse_size(const char *text, uint64_t *out);
/* "10" (seconds), "500ms", "90s", "5m", "8h", "100us", "20ns" -> nanoseconds. */
int pmd_parse_duration(const char *text, uint64_t *out_ns);
/* Plain unsigned decimal or 0x hex, whole string, no sign. */
int pmd_parse_uint(const char *text, uint64_t *out);

/* Shortest exact form: 2097152 -> "2M", 1536 -> "1536". */
void pmd_format_size(uint64_t bytes, char *buf, size_t len);
/* Shortest exact form: 90e9 -> "90s", 3600e9 -> "1h", 1500000 -> "1500us". */
void pmd_format_duration(uint64_t ns, char *buf, size_t len);
/* For people: 2270 -> "2.27us", 1.5e9 -> "1.50s" (three significant digits). */
void pmd_format_ns(double ns, char *buf, size_t len);

#endif
