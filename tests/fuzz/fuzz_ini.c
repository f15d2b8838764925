// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: a scenario file. The bytes go where --config FILE puts
 * a file's text: defaults, the INI loader, the cross-field checks, then
 * everything is freed. Whatever the file holds, the answer is 0 or one
 * line that names the file: no crash, no leak, no hang, no line break in
 * the message (ASan, UBSan and LeakSanitizer watch the rest).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ORIGIN "fuzz.ini"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void bad_message(const char *what, const char *err)
{
	fprintf(stderr, "fuzz_ini: %s: '%s'\n", what, err);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pmd_config cfg;
	char err[PMD_ERRLEN] = "";
	char *text;

	/* the file reader refuses more than 1 MiB, and NUL bytes (the text ends there) */
	if (size > (1u << 20))
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (pmd_config_init(&cfg, err, sizeof(err)))
		bad_message("the defaults do not load", err);
	if (pmd_config_load_ini(&cfg, text, ORIGIN, err, sizeof(err))) {
		if (!err[0] || strchr(err, '\n') || !strstr(err, ORIGIN))
			bad_message("a refused file must get one line naming it", err);
	} else if (pmd_config_finish(&cfg, err, sizeof(err))) {
		if (!err[0] || strchr(err, '\n'))
			bad_message("a refused configuration must get one line", err);
	}
	pmd_config_free(&cfg);
	free(text);
	return 0;
}
