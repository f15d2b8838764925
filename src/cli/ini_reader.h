/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libinih, with what a scenario loader needs on top: the line number of
 * every key, a callback for every section header (also empty ones), and a
 * stop at the first error so that the error reported is the first one.
 */
#ifndef PMD_INI_READER_H
#define PMD_INI_READER_H

#include <stddef.h>

struct pmd_ini_handlers {
	/* return 0 or -errno (with the message already in the caller's buffer) */
	int (*on_section)(void *user, const char *section, int line);
	int (*on_key)(void *user, const char *section, const char *name, const char *value,
		      int line);
};

int pmd_ini_parse(const char *text, const char *origin, const struct pmd_ini_handlers *h,
		  void *user, char *err, size_t errlen);

#endif
