/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Output that is safe in a signal handler and in a forked child of a
 * threaded process: write(2) on stderr, no stdio, no malloc, no locks.
 */
#ifndef PMD_SIGSAFE_H
#define PMD_SIGSAFE_H

#include <stdint.h>

/* Write @s to stderr, all of it unless write() fails. */
void pmd_sigsafe_put(const char *s);

/* Write @v in @base (10 or 16; 16 with a 0x prefix) to stderr. */
void pmd_sigsafe_put_num(uint64_t v, unsigned base);

#endif
