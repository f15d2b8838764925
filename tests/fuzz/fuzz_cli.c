// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: a command line. The bytes, split at NUL bytes, are the
 * arguments after "pmdstress run": the scenario (a builtin only: a fuzzer
 * must not open files such as /dev/stdin), every option in order, the
 * cross-field checks. The answer is 0 or one line (main.c shows the control
 * bytes of an echoed argument as \xNN); nothing crashes or leaks.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pmd_config cfg;
	char err[PMD_ERRLEN] = "", *buf, *argv[MAX_ARGS + 1], *p;
	int argc = 0, i;

	if (size > 4096)
		return 0;
	buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	for (p = buf; p < buf + size && argc < MAX_ARGS; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	/* --config names a builtin here; a path would read whatever file it names */
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "--config", 8) &&
		    (strchr(argv[i], '/') || (i + 1 < argc && strchr(argv[i + 1], '/')) ||
		     strstr(argv[i], ".ini") || (i + 1 < argc && strstr(argv[i + 1], ".ini")))) {
			free(buf);
			return 0;
		}
	}
	if (pmd_config_init(&cfg, err, sizeof(err)))
		abort();
	if (pmd_config_from_argv(&cfg, argc, argv, err, sizeof(err)) ||
	    pmd_config_finish(&cfg, err, sizeof(err))) {
		/* a line break the message has of its own (main.c escapes those it echoes) */
		if (!err[0] || (strchr(err, '\n') && !memchr(data, '\n', size))) {
			fprintf(stderr, "fuzz_cli: a refusal must get one line: '%s'\n", err);
			abort();
		}
	}
	pmd_config_free(&cfg);
	free(buf);
	return 0;
}
