/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The man page, pmdstress(1), in roff: written from the option tables, the
 * stressor registry, the builtin scenarios and usage.h's commands and exit
 * statuses, the same sources --help prints, so the two never disagree. The
 * build writes it to build/pmdstress.1 (tools/man/pmdstress-man.c).
 */
#ifndef PMD_MANPAGE_H
#define PMD_MANPAGE_H

#include <stdio.h>

void pmd_manpage(FILE *out);

#endif
