// SPDX-License-Identifier: GPL-2.0
/* The tool's memory pool: zero-filled blocks, reuse, few mappings, none in a child. */
#include "check.h"

#include <pmdstress/pool.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define HIST (144u << 10) /* a histogram's buckets */

static bool all_zero(const char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* Pages of [p, p + len) resident, by mincore(); -1 if it fails. */
static long resident(const void *p, size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), n = (len + pg - 1) / pg, i;
	unsigned char *vec = malloc(n);
	long r = 0;

	if (!vec || mincore((void *)p, len, vec)) {
		free(vec);
		return -1;
	}
	for (i = 0; i < n; i++)
		r += vec[i] & 1;
	free(vec);
	return r;
}

int main(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	char *a, *b, *c, *many[1000];
	unsigned i, chunks;
	bool ok;
	int status;
	pid_t pid;

	errno = 0;
	CHECK(!pmd_pool_alloc(0) && errno == EINVAL, "a zero-length block is refused (EINVAL)");

	a = pmd_pool_alloc(100);
	CHECK(a && !((uintptr_t)a % pg), "a block is page-aligned");
	CHECK(a && all_zero(a, pg), "a new block reads zero");
	CHECK_EQ_U64(pmd_pool_mappings(), 1, "the first block maps one chunk");
	b = pmd_pool_alloc(HIST);
	CHECK(b == a + pg, "the next block follows it (first fit)");
	memset(b, 0xa5, HIST);
	CHECK_EQ_U64(resident(b, HIST), HIST / pg, "written pages are resident");
	pmd_pool_free(b, HIST);
	CHECK_EQ_U64(resident(b, HIST), 0, "a freed block's pages are gone");
	c = pmd_pool_alloc(HIST);
	CHECK(c == b, "a freed block is handed out again");
	CHECK(c && all_zero(c, HIST), "and reads zero");

	/* 1000 histograms: 141 MiB, more than a chunk */
	pmd_pool_free(c, HIST);
	for (i = 0, ok = true; i < 1000; i++) {
		many[i] = pmd_pool_alloc(HIST);
		if (!many[i])
			ok = false;
		else
			many[i][HIST - 1] = 1;
	}
	CHECK(ok, "1000 histograms fit");
	chunks = pmd_pool_mappings();
	CHECK(chunks >= 2 && chunks <= 4, "in a few chunks: %u", chunks);
	for (i = 0; i < 1000; i += 2)
		pmd_pool_free(many[i], HIST);
	for (i = 1; i < 1000; i += 2)
		pmd_pool_free(many[i], HIST);
	for (i = 0, ok = true; i < 1000; i++) {
		many[i] = pmd_pool_alloc(HIST);
		ok = ok && many[i] && many[i][HIST - 1] == 0;
	}
	CHECK(ok, "freed in any order, they are handed out again, zero");
	CHECK_EQ_U64(pmd_pool_mappings(), chunks, "with no chunk more");
	for (i = 0; i < 1000; i++)
		pmd_pool_free(many[i], HIST);

	/* realloc moves what was written, and a sparse block stays sparse */
	b = pmd_pool_alloc(64 * pg);
	b[0] = 1;
	b[40 * pg + 7] = 2;
	c = pmd_pool_realloc(b, 64 * pg, 128 * pg);
	CHECK(c && c[0] == 1 && c[40 * pg + 7] == 2, "realloc keeps the contents");
	/* before any read: a read maps the zero page, which mincore() counts */
	CHECK_EQ_U64(resident(c, 128 * pg), 2, "only the written pages were copied");
	CHECK(c && all_zero(c + pg, 39 * pg) && all_zero(c + 64 * pg, 64 * pg),
	      "the rest reads zero");
	CHECK_EQ_U64(resident(b, 64 * pg), 0, "the old block is freed");
	c[5] = 3;

	/* no fork child gets the pool */
	pid = fork();
	if (pid == 0)
		_exit(resident(c, pg) == -1 && errno == ENOMEM ? 0 : 1);
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		  WEXITSTATUS(status) == 0,
	      "a fork child has none of the pool mapped");
	return check_done();
}
