/* SPDX-License-Identifier: GPL-2.0 */
/* Report writers: the text report for people and the versioned JSON document. */
#ifndef PMD_REPORT_H
#define PMD_REPORT_H

#include <stdio.h>

struct pmd_run;

#define PMD_VERSION "0.1.0"
#define PMD_SCHEMA_VERSION 1

/* One header line before the run starts: what runs, with which seed. */
void pmd_report_start(FILE *out, const struct pmd_run *run);
void pmd_report_text(FILE *out, const struct pmd_run *run);
/*
 * Writes @path atomically (temp file + rename); "-" writes to the stdout
 * pmd_report_take_stdout() kept aside. Returns 0 or -errno.
 */
int pmd_report_json(const char *path, const struct pmd_run *run, int argc, char **argv);
/* KTAP results (src/report/report_ktap.c): one line per check, kselftest's totals; "-" as above. */
int pmd_report_ktap(const char *path, const struct pmd_run *run);
/*
 * --json - or --ktap - (src/report/report_stdout.c): keep stdout for that report and
 * send everything else written there to stderr; then open what was kept.
 */
int pmd_report_take_stdout(void);
FILE *pmd_report_open_stdout(void);

struct json_t;
/* The report document (jansson); the caller owns the reference. */
struct json_t *pmd_report_json_doc(const struct pmd_run *run, int argc, char **argv);
struct pmd_hist;
struct json_t *pmd_hist_json(const struct pmd_hist *h);

/* Seconds the workers ran. */
double pmd_run_seconds(const struct pmd_run *run);

#endif
