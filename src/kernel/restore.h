/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The settings-restore service: kernel settings a stressor changes (THP
 * sysfs knobs) are remembered before their first write and written back
 * when the run ends, on SIGINT/SIGTERM, on the second-signal exit, at
 * exit() and from the fatal-signal handler. Stressors use the API in
 * <pmdstress/stressor.h> (pmd_restore_save, pmd_restore_write); the
 * engine uses this header.
 */
#ifndef PMD_RESTORE_H
#define PMD_RESTORE_H

#include <stdbool.h>

/* Make this process the owner of the saved settings; registers atexit. Idempotent. */
void pmd_restore_install(void);

/*
 * Write every saved value back, and refuse any pmd_restore_write() from now
 * on (waits, bounded, for writes already under way). Async-signal-safe:
 * open/write/close only, no malloc, no stdio, no locks. Idempotent: calling
 * it again writes the same values again. Does nothing in a forked child.
 * Returns the number of settings that could not be written back.
 */
unsigned pmd_restore_all(void);

/* Settings saved so far (for reports and tests). */
unsigned pmd_restore_count(void);

/* True in the process that owns the settings (not a forked child). Async-signal-safe. */
bool pmd_restore_is_owner(void);

#endif
