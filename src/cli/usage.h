/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the program offers at its surface, written once: its commands and
 * their synopses, and its exit statuses. --help, the "unknown command" line
 * and the man page (build/pmdstress.1) print them from here, and a test
 * holds README's exit table and each command's own --help to them.
 */
#ifndef PMD_USAGE_H
#define PMD_USAGE_H

#include <stdio.h>

struct pmd_command {
	const char *name;
	const char *synopsis; /* after "pmdstress " */
	const char *summary;
};

/* The commands, in the order --help lists them; ends with a NULL name. */
extern const struct pmd_command pmd_commands[];

struct pmd_exit_status {
	int code;
	const char *brief;   /* a few words, for --help's one line */
	const char *meaning; /* a sentence, for the man page */
};

/* A run's exit statuses, in order; ends with code -1. */
extern const struct pmd_exit_status pmd_exit_statuses[];

/* "usage: pmdstress ..." and one continuation line per other command. */
void pmd_usage_lines(FILE *out);
/* "Exit: 0 clean, 1 ..." folded to lines of at most 80 columns. */
void pmd_exit_line(FILE *out);
/* "run, list, compare, ...": every command's name, for a one-line message. */
void pmd_command_names(char *buf, size_t len);

#endif
