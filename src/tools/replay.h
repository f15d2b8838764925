/* SPDX-License-Identifier: GPL-2.0 */
/* pmdstress run --replay A.json: rerun a report's effective options and seed. */
#ifndef PMD_REPLAY_H
#define PMD_REPLAY_H

#include <pmdstress/config.h>

#include "sysinfo.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* True if @argv (after "run") holds --replay. */
bool pmd_replay_requested(int argc, char **argv);

/*
 * Build @cfg (fresh from pmd_config_init()) from the report's options,
 * stressors and seed, with the other options of @argv applied over them,
 * and finish it. Prints on stderr what differs between the machine the
 * report was made on and this one. Returns 0, or -EINVAL with one line in
 * @err naming the file and field, or the option, that was wrong.
 */
int pmd_replay_config(struct pmd_config *cfg, int argc, char **argv, char *err, size_t errlen);

/*
 * The "replay" block of the report of a replay of @path: {"of": path,
 * "differences": [{"what", "then", "now"}...]}, "then" from @path's system
 * block and "now" from @now (the system block the new report records). If
 * @path cannot be read any more, "differences" is null and "error" says why.
 */
json_t *pmd_replay_json(const char *path, const struct pmd_sysinfo *now);
/* For the text report: which report this replays and one line per difference. */
void pmd_replay_text(FILE *out, const char *path, const struct pmd_sysinfo *now);

#endif
