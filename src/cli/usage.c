// SPDX-License-Identifier: GPL-2.0
/* The commands and exit statuses, written once: see usage.h. */
#include "usage.h"

#include <string.h>

const struct pmd_command pmd_commands[] = {
	{ "run", "[run] [--config SCENARIO|FILE.ini] [--OPTION VALUE]...",
	  "race the faults and verify every page (the default command)" },
	{ "run --replay", "run --replay A.json [--OPTION VALUE]...",
	  "rerun A's options and seed, saying what differs on this machine" },
	{ "compare",
	  "compare A.json B.json [C.json ...] [--threshold PCT] [--all] [--gate FIGURES] "
	  "[--include-warmup] [--force]",
	  "before/after table of reports, Welch's t-test over their bench rounds" },
	{ "plot", "plot A.json [B.json ...] -o DIR [--jsonl FILE]...",
	  "latency distributions and time series as PNG and SVG (gnuplot)" },
	{ "list", "list", "the stressors and the builtin scenarios" },
	{ "help", "help | --help", "this help" },
	{ "version", "version", "the version, report schema and stressor contract" },
	{ NULL, NULL, NULL },
};

const struct pmd_exit_status pmd_exit_statuses[] = {
	{ 0, "clean", "clean: every stressor that ran verified clean, no kernel splat, no hang" },
	{ 1, "corruption",
	  "data corruption (a verifier class), a SIGSEGV/SIGBUS on a live chunk, or a page "
	  "found off the node it was moved to" },
	{ 2, "usage",
	  "usage or configuration error (bad option, bad scenario file, bad JSON, "
	  "an arena that cannot fit, a stressor given nothing to do)" },
	{ 3, "kernel splat/taint", "kernel log splat or new taint" },
	{ 4, "hang", "hang: a worker made no progress within --hang-timeout" },
	{ 5, "internal error", "internal error (a stressor's syscall failed in a way that ends it)" },
	{ 6, "stopped without a report",
	  "stopped at once by a second signal (another signal, or a second Ctrl-C) while the "
	  "first one's stop was under way: settings restored, no report" },
	{ 125, "cannot run here",
	  "cannot run here (the arena cannot be mapped, every stressor skipped, ...), or every "
	  "error was a limit running out: git bisect run skips" },
	{ -1, NULL, NULL },
};

void pmd_usage_lines(FILE *out)
{
	unsigned i;

	for (i = 0; pmd_commands[i].name; i++)
		fprintf(out, "%s pmdstress %s\n",
			i ? "      " : "usage:", pmd_commands[i].synopsis);
}

void pmd_exit_line(FILE *out)
{
	unsigned i, col = 0;

	for (i = 0; pmd_exit_statuses[i].code >= 0; i++) {
		char item[96];
		int n = snprintf(item, sizeof(item), "%d %s%s", pmd_exit_statuses[i].code,
				 pmd_exit_statuses[i].brief,
				 pmd_exit_statuses[i + 1].code >= 0 ? "," : ".");

		if (!i)
			col = (unsigned)fprintf(out, "Exit:");
		else if (col + 1 + (unsigned)n > 80)
			col = (unsigned)fprintf(out, "\n     ");
		col += (unsigned)fprintf(out, " %s", item);
	}
	fputc('\n', out);
}

void pmd_command_names(char *buf, size_t len)
{
	size_t n = 0;
	unsigned i;

	buf[0] = '\0';
	for (i = 0; pmd_commands[i].name && n < len; i++)
		if (!strchr(pmd_commands[i].name, ' '))
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "",
					      pmd_commands[i].name);
}
