// SPDX-License-Identifier: GPL-2.0
/* pmdstress: subcommands. */
#include "config.h"
#include "report.h"
#include "run.h"

#include <stdio.h>
#include <string.h>

static int usage_error(const char *msg)
{
	fprintf(stderr, "pmdstress: %s\n", msg);
	return 2;
}

static int cmd_run(int argc, char **argv, int full_argc, char **full_argv)
{
	struct pmd_config cfg;
	char err[PMD_ERRLEN];
	int rc;

	if (pmd_config_init(&cfg, err, sizeof(err)))
		return fprintf(stderr, "pmdstress: internal error: %s\n", err), 5;
	if (pmd_config_from_argv(&cfg, argc, argv, err, sizeof(err)) ||
	    pmd_config_finish(&cfg, err, sizeof(err))) {
		pmd_config_free(&cfg);
		return usage_error(err);
	}
	rc = pmd_run_main(&cfg, full_argc, full_argv);
	pmd_config_free(&cfg);
	return rc;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "run";
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			pmd_config_help(stdout);
			return 0;
		}
	}
	if (!strcmp(cmd, "help")) {
		pmd_config_help(stdout);
		return 0;
	}
	if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
		printf("pmdstress %s (report schema %d, stressor contract %d)\n", PMD_VERSION,
		       PMD_SCHEMA_VERSION, PMD_STRESSOR_ABI);
		return 0;
	}
	if (!strcmp(cmd, "list")) {
		pmd_config_list(stdout);
		return 0;
	}
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 2, argv + 2, argc, argv);
	if (!strncmp(cmd, "--", 2) || argc == 1)
		return cmd_run(argc - 1, argv + 1, argc, argv);
	fprintf(stderr, "pmdstress: unknown command '%s' (commands: run, list, help, version; "
			"options start with --)\n", cmd);
	return 2;
}
