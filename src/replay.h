/* SPDX-License-Identifier: GPL-2.0 */
/* pmdstress run --replay A.json: rerun a report's effective options and seed. */
#ifndef PMD_REPLAY_H
#define PMD_REPLAY_H

#include <pmdstress/config.h>

#include <stdbool.h>
#include <stddef.h>

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

#endif
