// SPDX-License-Identifier: GPL-2.0
/* Writes pmdstress(1) on stdout, from the tables --help prints (src/cli/manpage.c). */
#include "manpage.h"

int main(void)
{
	pmd_manpage(stdout);
	return ferror(stdout) || fflush(stdout) ? 1 : 0;
}
