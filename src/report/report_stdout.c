// SPDX-License-Identifier: GPL-2.0
/*
 * A machine-read report on stdout ("--json -", "--ktap -") owns it: the
 * real stdout is kept aside for that report alone, and everything else
 * written there (the start line, status lines, the text report) goes to
 * stderr, so that what a harness reads from stdout parses.
 */
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

/*
 * The real stdout while a report owns it. Like stdout itself this is
 * process state, not run state: set once by main before the run starts.
 */
static int kept_stdout_fd = -1;

int pmd_report_take_stdout(void)
{
	fflush(stdout);
	/* close-on-exec: the storm process (src/run/supervise.c) holds no report's stdout */
	kept_stdout_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (kept_stdout_fd < 0)
		return -errno;
	if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
		return -errno;
	return 0;
}

FILE *pmd_report_open_stdout(void)
{
	int fd = dup(kept_stdout_fd >= 0 ? kept_stdout_fd : STDOUT_FILENO);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!f && fd >= 0) {
		int err = errno;

		close(fd);
		errno = err;
	}
	return f;
}
