/* SPDX-License-Identifier: GPL-2.0 */
/* A very small test harness for the unit tests: TAP lines, a failure count. */
#ifndef PMD_TEST_CHECK_H
#define PMD_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int check_failed, check_count;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		check_count++;                                                                     \
		if (cond) {                                                                        \
			printf("ok %d - ", check_count);                                           \
		} else {                                                                           \
			check_failed++;                                                            \
			printf("not ok %d - %s:%d: ", check_count, __FILE__, __LINE__);            \
		}                                                                                  \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
	} while (0)

#define CHECK_EQ_U64(a, b, what)                                                                   \
	do {                                                                                       \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                   \
		CHECK(a_ == b_, "%s: %" PRIu64 " == %" PRIu64, what, a_, b_);                      \
	} while (0)

#define CHECK_STR(a, b, what)                                                                      \
	do {                                                                                       \
		const char *a_ = (a), *b_ = (b);                                                   \
		CHECK(a_ && b_ && !strcmp(a_, b_), "%s: '%s' == '%s'", what, a_ ? a_ : "(null)",   \
		      b_ ? b_ : "(null)");                                                         \
	} while (0)

#define CHECK_CONTAINS(hay, needle, what)                                                          \
	do {                                                                                       \
		const char *h_ = (hay), *n_ = (needle);                                            \
		CHECK(h_ && strstr(h_, n_), "%s: '%s' contains '%s'", what, h_ ? h_ : "(null)",    \
		      n_);                                                                         \
	} while (0)

static inline int check_done(void)
{
	printf("1..%d\n", check_count);
	if (check_failed)
		printf("# %d of %d checks failed\n", check_failed, check_count);
	return check_failed ? 1 : 0;
}

#endif
