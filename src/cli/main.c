// SPDX-License-Identifier: GPL-2.0
/* pmdstress: subcommands. */
#include "compare.h"
#include "config.h"
#include "plot.h"
#include "replay.h"
#include "report.h"
#include "restore_guard.h"
#include "run.h"
#include "usage.h"

#include <pmdstress/pool.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static void help(void)
{
	unsigned i;

	pmd_config_help(stdout);
	printf("\nCommands (compare and plot have a --help of their own):\n");
	for (i = 0; pmd_commands[i].name; i++)
		printf("  %-14s %s\n", pmd_commands[i].name, pmd_commands[i].summary);
}

static int usage_error(const char *msg)
{
	char line[1024];

	/* one line, whatever the offending value held: control bytes are shown as \xNN */
	snprintf(line, sizeof(line), "%s", msg);
	pmd_err_one_line(line, sizeof(line));
	fprintf(stderr, "pmdstress: %s\n", line);
	return 2;
}

/* The storm process of a run (src/run/supervise.c): its end of the pipe, and the seed. */
struct storm_args {
	int fd;
	uint64_t seed;
};

/*
 * Parse the run's options; @storm: in the storm process, which parses what
 * its supervisor parsed and printed already (a replay's differences), and
 * runs with the seed the supervisor drew.
 */
static int cmd_run(int argc, char **argv, int full_argc, char **full_argv,
		   const struct storm_args *storm)
{
	/*
	 * The configuration (16 KiB) comes from the pool, as the run's state
	 * does (src/run/run.c): on the stack its pages were copied by every fork of
	 * the fork and exec stressors. No child reads it. Never given back:
	 * one configuration per process.
	 */
	struct pmd_config *cfg = pmd_pool_alloc(sizeof(*cfg));
	char err[PMD_ERRLEN];
	int rc, quiet = -1, null;

	if (!cfg)
		return fprintf(stderr, "pmdstress: cannot allocate the configuration: %s\n",
			       strerror(errno)),
		       5;
	if (pmd_config_init(cfg, err, sizeof(err)))
		return fprintf(stderr, "pmdstress: internal error: %s\n", err), 5;
	if (storm && (null = open("/dev/null", O_WRONLY | O_CLOEXEC)) >= 0) {
		quiet = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
		if (quiet >= 0)
			dup2(null, STDERR_FILENO);
		close(null);
	}
	rc = pmd_replay_requested(argc, argv) ? pmd_replay_config(cfg, argc, argv, err, sizeof(err))
					      : pmd_config_from_argv(cfg, argc, argv, err, sizeof(err)) ||
							pmd_config_finish(cfg, err, sizeof(err));
	if (quiet >= 0) {
		dup2(quiet, STDERR_FILENO);
		close(quiet);
	}
	if (rc) {
		pmd_config_free(cfg);
		return usage_error(err);
	}
	if (storm) {
		cfg->seed_used = storm->seed;
		rc = pmd_storm_main(cfg, storm->fd);
		pmd_config_free(cfg);
		return rc;
	}
	/* (two outputs on stdout, or in one file, were refused by pmd_config_finish) */
	/* stdout is the report's alone: the text goes to stderr */
	rc = strcmp(cfg->ktap, "-") && strcmp(cfg->json, "-") ? 0 : pmd_report_take_stdout();
	if (rc) {
		fprintf(stderr, "pmdstress: cannot keep stdout for --%s -: %s\n",
			strcmp(cfg->json, "-") ? "ktap" : "json", strerror(-rc));
		pmd_config_free(cfg);
		return 5;
	}
	rc = pmd_run_main(cfg, full_argc, full_argv);
	pmd_config_free(cfg);
	return rc;
}

/* "--storm=FD,SEED" then the run's arguments as its supervisor got them. */
static int storm_main(int argc, char **argv)
{
	struct storm_args st;
	char *end;

	st.fd = (int)strtol(argv[1] + strlen("--storm="), &end, 10);
	st.seed = *end == ',' ? strtoull(end + 1, &end, 16) : 0;
	if (*end || st.fd < 3 || !st.seed) {
		fprintf(stderr, "pmdstress: %s: not a storm process's argument\n", argv[1]);
		return 2;
	}
	prctl(PR_SET_NAME, "pmd/storm", 0, 0, 0); /* for ps, and the task dumps */
	pmd_guard_run_pid(getppid());
	argv[1] = argv[0];
	argc--;
	argv++;
	if (argc > 1 && !strcmp(argv[1], "run"))
		return cmd_run(argc - 2, argv + 2, argc, argv, &st);
	return cmd_run(argc - 1, argv + 1, argc, argv, &st);
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "run";
	int i;

	/* the exec stressor's child program: nothing to do, and as little as possible */
	if (argc > 1 && !strcmp(argv[1], "--exec-child"))
		return 0;
	if (argc > 1 && !strncmp(argv[1], "--storm=", strlen("--storm=")))
		return storm_main(argc, argv);
	/* these read reports, not run options: their --help is their own */
	if (!strcmp(cmd, "compare"))
		return pmd_compare_main(argc - 2, argv + 2);
	if (!strcmp(cmd, "plot"))
		return pmd_plot_main(argc - 2, argv + 2);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			help();
			return 0;
		}
	}
	if (!strcmp(cmd, "help")) {
		help();
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
		return cmd_run(argc - 2, argv + 2, argc, argv, NULL);
	if (!strncmp(cmd, "--", 2) || argc == 1)
		return cmd_run(argc - 1, argv + 1, argc, argv, NULL);
	{
		struct pmd_option cmds[16] = { PMD_OPT_END };
		const char *s;
		char names[128];

		for (i = 0; i < 15 && pmd_commands[i].name; i++)
			cmds[i].name = pmd_commands[i].name;
		s = pmd_opt_suggest(cmds, cmd);
		pmd_command_names(names, sizeof(names));
		if (s)
			fprintf(stderr, "pmdstress: unknown command '%s' (did you mean '%s'?)\n", cmd,
				s);
		else
			fprintf(stderr, "pmdstress: unknown command '%s' (commands: %s; options start "
					"with --)\n",
				cmd, names);
	}
	return 2;
}
