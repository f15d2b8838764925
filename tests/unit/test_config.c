// SPDX-License-Identifier: GPL-2.0
/*
 * The option table, the command line and INI scenarios: defaults, every
 * kind of bad input with the message a user sees, "did you mean", and the
 * command line overriding the file.
 */
#include "check.h"
#include "config.h"

#include <stdlib.h>

static char err[PMD_ERRLEN];

static int argv_cfg(struct pmd_config *cfg, const char *line)
{
	char buf[1024], *argv[64], *save = NULL, *tok;
	int argc = 0, rc;

	snprintf(buf, sizeof(buf), "%s", line);
	for (tok = strtok_r(buf, " ", &save); tok && argc < 63; tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	err[0] = '\0';
	pmd_config_free(cfg);
	if (pmd_config_init(cfg, err, sizeof(err)))
		return -1;
	rc = pmd_config_from_argv(cfg, argc, argv, err, sizeof(err));
	if (!rc)
		rc = pmd_config_finish(cfg, err, sizeof(err));
	return rc;
}

static int ini_cfg(struct pmd_config *cfg, const char *text)
{
	err[0] = '\0';
	pmd_config_free(cfg);
	if (pmd_config_init(cfg, err, sizeof(err)))
		return -1;
	return pmd_config_load_ini(cfg, text, "t.ini", err, sizeof(err));
}

#define BAD_ARGV(line, needle)                                                                     \
	do {                                                                                       \
		int rc_ = argv_cfg(&cfg, line);                                                    \
		CHECK(rc_ != 0, "rejected: %s", line);                                             \
		CHECK_CONTAINS(err, needle, "message for: " line);                                 \
	} while (0)

#define BAD_INI(text, needle)                                                                      \
	do {                                                                                       \
		int rc_ = ini_cfg(&cfg, text);                                                     \
		CHECK(rc_ != 0, "ini rejected: %s", needle);                                       \
		CHECK_CONTAINS(err, needle, "ini message");                                        \
	} while (0)

static unsigned fault_idx(void)
{
	return (unsigned)pmd_stressor_index(pmd_stressor_find("fault"));
}

int main(void)
{
	struct pmd_config cfg;
	char v[64];
	const struct pmd_option *o;

	memset(&cfg, 0, sizeof(cfg));
	/* an error is one line whatever the value held (fuzz_report found a key with a newline) */
	pmd_errf(err, sizeof(err), "no option --%s here", "c\nfig\x7f");
	CHECK_STR(err, "no option --c\\x0afig\\x7f here", "control bytes shown as \\xNN");
	pmd_errf(err, 12, "%s", "abcdefgh\n\n");
	CHECK_STR(err, "abcdefgh", "an escape that does not fit is cut whole");
	CHECK(argv_cfg(&cfg, "") == 0, "defaults load the race scenario: %s", err);
	CHECK_EQ_U64(cfg.duration_ns, 10000000000ull, "default duration 10s");
	CHECK_EQ_U64(cfg.size, 64ull << 20, "default size 64M");
	CHECK(cfg.verify, "verify on by default");
	CHECK(cfg.st[fault_idx()].enabled, "race enables fault");
	CHECK(cfg.threads >= 8, "auto threads at least 8 (%" PRIu64 ")", cfg.threads);
	CHECK(cfg.seed_used != 0, "a seed is always picked");

	CHECK(argv_cfg(&cfg, "--stressors fault --threads 64 --duration=2m --size 128M --shared "
			     "--thp nohuge --seed 0x10") == 0, "a full command line: %s", err);
	CHECK_EQ_U64(cfg.threads, 64, "--threads 64");
	CHECK_EQ_U64(cfg.duration_ns, 120000000000ull, "--duration=2m");
	CHECK_EQ_U64(cfg.size, 128ull << 20, "--size 128M");
	CHECK(cfg.shared, "--shared without a value");
	CHECK_EQ_U64(cfg.thp, 1, "--thp nohuge");
	CHECK_EQ_U64(cfg.seed_used, 16, "--seed 0x10");
	CHECK_EQ_U64(cfg.st[fault_idx()].nworkers, 64, "fault alone takes the rest: 64");
	CHECK(argv_cfg(&cfg, "--threads 64") == 0, "the race with 64 threads: %s", err);
	{
		unsigned i, partners = 0, sum = 0;

		for (i = 0; pmd_stressors[i]; i++) {
			if (!cfg.st[i].enabled)
				continue;
			sum += cfg.st[i].nworkers;
			partners += i != fault_idx();
		}
		CHECK_EQ_U64(sum, 64, "the race's workers add up to --threads");
		CHECK_EQ_U64(cfg.st[fault_idx()].nworkers, 64 - partners,
			     "the storm takes what the partners (one each) leave");
	}
	CHECK(argv_cfg(&cfg, "--threads 4") == 0, "a small --threads still runs: %s", err);
	{
		unsigned i, dropped = 0;

		for (i = 0; pmd_stressors[i]; i++)
			dropped += cfg.st[i].enabled && cfg.st[i].dropped[0];
		CHECK(cfg.st[fault_idx()].nworkers >= 2, "the storm keeps half of 4");
		CHECK(dropped > 0, "partners that do not fit are dropped, each with a reason");
	}
	CHECK(argv_cfg(&cfg, "--shared --no-shared --verify off") == 0, "--no-shared: %s", err);
	CHECK(!cfg.shared && !cfg.verify, "--no-shared and --verify off");
	CHECK(argv_cfg(&cfg, "--fault-order random --fault-group 8") == 0, "stressor options: %s",
	      err);
	o = pmd_opt_find(pmd_stressor_find("fault")->options, "order");
	pmd_opt_format(o, cfg.st[fault_idx()].opts, v, sizeof(v));
	CHECK_STR(v, "random", "--fault-order random");

	BAD_ARGV("--threads -4", "threads: invalid value '-4'");
	BAD_ARGV("--threads 2000000", "out of range; allowed: integer 0..1000000");
	BAD_ARGV("--threads lots", "expected integer 0..1000000");
	BAD_ARGV("--size 3M", "must be a multiple of 2M");
	BAD_ARGV("--size -2M", "size: invalid value '-2M'");
	BAD_ARGV("--size 200G", "larger than this machine's memory");
	BAD_ARGV("--size 1P", "size: invalid value '1P'");
	BAD_ARGV("--duration 0", "out of range; allowed: duration 1ms..");
	BAD_ARGV("--duration 10 minutes", "unexpected argument 'minutes'");
	BAD_ARGV("--thp sometimes", "expected one of madvise|nohuge|toggle|inherit");
	BAD_ARGV("--thred 4", "unknown option --thred (did you mean --threads?)");
	BAD_ARGV("--fault-ordr random", "did you mean --fault-order?");
	BAD_ARGV("--fault-order sideways", "--fault-order: invalid value 'sideways' (expected one of mixed|forward|backward|random");
	BAD_ARGV("--fault-group 513", "group: invalid value '513'");
	BAD_ARGV("--frobnicate", "unknown option --frobnicate (see --help)");
	BAD_ARGV("--threads", "--threads needs a value");
	BAD_ARGV("--stressors faul", "unknown stressor 'faul' (did you mean 'fault'?)");
	BAD_ARGV("--config nosuch", "no scenario 'nosuch'");
	BAD_ARGV("--config /nonexistent/x.ini", "cannot open scenario file");
	BAD_ARGV("--threads 1 --fault-workers 2", "too few for the workers asked for");
	BAD_ARGV("--fault-workers 0", "workers: invalid value '0'");
	BAD_ARGV("--fault-workers 150%", "workers: invalid value '150%'");
	BAD_ARGV("--shared=maybe", "--shared");

	/* scenario files */
	CHECK(ini_cfg(&cfg, "; comment\n[global]\nthreads = 12\nsize = 32M\n\n[fault]\n"
			    "workers = 50%\norder = backward ; inline comment\n") == 0,
	      "a good file: %s", err);
	CHECK(pmd_config_finish(&cfg, err, sizeof(err)) == 0, "finish: %s", err);
	CHECK_EQ_U64(cfg.st[fault_idx()].nworkers, 6, "workers = 50% of 12");
	CHECK_EQ_U64(cfg.threads, 6, "threads become what the stressors use");
	CHECK(ini_cfg(&cfg, "[fault]\n") == 0 && cfg.st[fault_idx()].enabled,
	      "an empty section enables its stressor");
	BAD_INI("", "t.ini: empty scenario");
	BAD_INI("; only a comment\n", "empty scenario");
	BAD_INI("[global]\nthreads = 4\n[faul]\n", "t.ini:3: unknown stressor 'faul' (did you mean 'fault'?)");
	BAD_INI("[fault]\n[fault]\n", "t.ini:2: duplicate section [fault]");
	BAD_INI("[global]\n[global]\n", "t.ini:2: duplicate section [global]");
	BAD_INI("[global]\nthreads = 4\nthreads = 5\n", "t.ini:3: [global] duplicate key 'threads'");
	BAD_INI("[global]\nthreds = 4\n", "t.ini:2: [global] unknown key 'threds' (did you mean 'threads'?)");
	BAD_INI("threads = 4\n", "t.ini:1: 'threads' is outside any section");
	BAD_INI("[global]\nsize = 3M\nthreads = x\n", "t.ini:3: [global] threads: invalid value 'x'");
	BAD_INI("[fault]\norder = sideways\n", "t.ini:2: [fault] order: invalid value 'sideways'");
	BAD_INI("[global]\nconfig = race\n", "only accepted on the command line");
	BAD_INI("[global]\nthis is not ini\n", "t.ini:2: syntax error");
	BAD_INI("[global\n", "t.ini:1: section header without ']'");
	BAD_INI("[]\n", "empty section name");
	BAD_INI("[global]\n  threads = 4\n", "t.ini:2: indented line");
	BAD_INI("\x7f\x45\x4c\x46\x02\x01\x01\n\x01\x02\x03\n", "syntax error");
	{
		char longline[400];

		memset(longline, 'a', sizeof(longline));
		memcpy(longline, "[global]\nthreads=", 17);
		longline[sizeof(longline) - 1] = '\0';
		BAD_INI(longline, "t.ini:2: line longer than 200 characters");
	}

	/* the command line wins over the file */
	{
		char *argv[] = { "--config", "race", "--duration", "3s", NULL };

		pmd_config_free(&cfg);
		pmd_config_init(&cfg, err, sizeof(err));
		CHECK(pmd_config_from_argv(&cfg, 4, argv, err, sizeof(err)) == 0, "race + override");
		CHECK_EQ_U64(cfg.duration_ns, 3000000000ull, "CLI duration overrides race.ini");
	}
	/* every builtin scenario loads and finishes */
	{
		unsigned i;

		for (i = 0; pmd_scenarios[i].name; i++) {
			char *argv[] = { "--config", (char *)pmd_scenarios[i].name, NULL };

			pmd_config_free(&cfg);
			pmd_config_init(&cfg, err, sizeof(err));
			CHECK(pmd_config_from_argv(&cfg, 2, argv, err, sizeof(err)) == 0 &&
				      pmd_config_finish(&cfg, err, sizeof(err)) == 0,
			      "builtin scenario %s loads: %s", pmd_scenarios[i].name, err);
		}
	}
	/* did-you-mean is conservative */
	CHECK(pmd_opt_suggest(pmd_global_options, "zzzzzzzz") == NULL, "no wild suggestions");
	CHECK_STR(pmd_opt_suggest(pmd_global_options, "duraton"), "duration", "duraton -> duration");
	pmd_config_free(&cfg);
	return check_done();
}
