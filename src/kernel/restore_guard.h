/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The restore service's last line: a small process that outlives pmdstress
 * and puts the saved kernel settings back if pmdstress died without doing
 * it (SIGKILL, the OOM killer). Used by src/kernel/restore.c only.
 */
#ifndef PMD_RESTORE_GUARD_H
#define PMD_RESTORE_GUARD_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Start the guardian, once per process; it keeps @keep_fd (the settings
 * lock) open until it is done. Returns 0 or -errno (a warning is printed:
 * the run goes on without it).
 */
int pmd_guard_start(int keep_fd);
/*
 * Before the start: the run is process @pid, of which this one is a part
 * (the storm of src/run/supervise.c). The guardian names it, and writes to its
 * stderr: the storm's own may be a pipe that nobody reads once the run's
 * process is gone.
 */
void pmd_guard_run_pid(pid_t pid);
/* Hand the guardian one saved value (before the setting is first written). */
void pmd_guard_saved(const char *path, const char *value, size_t len);
/* Everything was put back: let the guardian go, and reap it. Async-signal-safe. */
void pmd_guard_done(void);
/*
 * The guardian's pid, 0 if none. SIGUSR2 makes it put the settings back at
 * once: the supervisor's word when it leaves a storm stuck in the kernel
 * behind (src/run/supervise.c), which may hold the other end for good.
 */
int pmd_guard_pid(void);

#endif
