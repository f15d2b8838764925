/* SPDX-License-Identifier: GPL-2.0 */
/* Building the effective configuration: defaults, scenario file, command line. */
#ifndef PMD_CONFIG_INTERNAL_H
#define PMD_CONFIG_INTERNAL_H

#include <pmdstress/config.h>
#include <pmdstress/stressor.h>

#include <stdio.h>

#define PMD_ERRLEN 512

/*
 * The smallest --stack-size: glibc's PTHREAD_STACK_MIN, below which
 * pthread_attr_setstacksize() refuses. About 12.5K of it is left to the
 * worker, well above its deepest path, about 7K with libc's frames
 * (CMakeLists.txt, PMD_WORKER_SOURCES).
 */
#define PMD_STACK_MIN (16u << 10)

extern const struct pmd_option pmd_global_options[];
extern const struct pmd_option pmd_common_options[]; /* every stressor section has these */

/* A scenario compiled into the binary from configs/<name>.ini. */
struct pmd_scenario {
	const char *name;
	const char *summary; /* the file's first comment line */
	const char *text;
};
extern const struct pmd_scenario pmd_scenarios[];
const struct pmd_scenario *pmd_scenario_find(const char *name);

/* Defaults for everything; allocates each stressor's option block. */
int pmd_config_init(struct pmd_config *cfg, char *err, size_t errlen);
void pmd_config_free(struct pmd_config *cfg);

/*
 * Load a scenario: a builtin name ("race") or an INI file path. @origin
 * names it in errors. Sections enable stressors; keys set their options.
 */
int pmd_config_load_ini(struct pmd_config *cfg, const char *text, const char *origin, char *err,
			size_t errlen);
int pmd_config_load_scenario(struct pmd_config *cfg, const char *name_or_path, char *err,
			     size_t errlen);

/* Apply one command-line option: "--name", "--name=value", "--no-name". */
int pmd_config_apply_cli(struct pmd_config *cfg, const char *name, const char *value,
			 bool *used_value, char *err, size_t errlen);
/* Enable exactly the stressors named in a comma list. */
int pmd_config_select(struct pmd_config *cfg, const char *list, char *err, size_t errlen);

/* Cross-field checks and derived values (workers, seed). */
int pmd_config_finish(struct pmd_config *cfg, char *err, size_t errlen);

/* Parse argv (after the subcommand): scenario first, then the rest in order. */
int pmd_config_from_argv(struct pmd_config *cfg, int argc, char **argv, char *err,
			 size_t errlen);

void pmd_config_help(FILE *out);
void pmd_config_list(FILE *out);

/* Index of stressor @st in the registry, or -1. */
int pmd_stressor_index(const struct pmd_stressor *st);

#endif
