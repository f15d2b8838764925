// SPDX-License-Identifier: GPL-2.0
/*
 * The tool's own bulk memory in a few mappings (see include/pmdstress/pool.h).
 *
 * Why not a mapping per object, each MADV_DONTFORK: a mapping no child gets
 * is still not free to fork. Since Linux 6.8 fork() duplicates the parent's
 * whole maple tree and then erases every VM_DONTCOPY entry from the child's
 * ("fork: Use __mt_dup() to duplicate maple tree in dup_mmap()"). On the
 * development VM (6.18, a 64 MiB THP parent forking and reaping a child that
 * exits at once) each MADV_DONTFORK mapping took about 0.5% off fork/s under
 * `taskset -c 0` and 0.35% unpinned: 16 of them 9% and 5%
 * (docs/benchmarks.md, "Mappings and fork", BARE_DONTFORK_MAPS). With a
 * mapping per histogram, the measured sums and the rounds' record made at
 * the end of the first round were four mappings more in every later round:
 * pinned, round 2 forked at 0.942 of round 1.
 *
 * So: chunks of CHUNK bytes (more for a larger request), MAP_NORESERVE,
 * MADV_NOHUGEPAGE (a few touched pages never become 2 MiB) and MADV_DONTFORK
 * (no child records anything, and a page fork() does not share is no
 * copy-on-write fault for the parent's next write), never unmapped. Chunks
 * the kernel places side by side end up one mapping. Freed ranges are
 * MADV_DONTNEED'ed (pages gone, zero-filled when used again) and kept in a
 * sorted list of holes, first fit, coalesced. A process needs a chunk or
 * two: the workers' histograms are 144 KiB of address space each.
 */
#include <pmdstress/pool.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CHUNK ((size_t)64 << 20)

struct hole {
	uintptr_t start;
	size_t len;
};

#define MAX_CHUNKS 256

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* the mappings, for a fork child to let go of without the lock (pmd_pool_forget()) */
static struct hole chunks[MAX_CHUNKS];
static unsigned nchunks_seen; /* atomic */
static struct hole *holes; /* sorted by start, none adjacent */
static size_t nholes, holes_cap;
static unsigned nchunks;

static size_t page_round(size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (len + pg - 1) & ~(pg - 1);
}

/* Take hole @i out of the list. */
static void hole_drop(size_t i)
{
	memmove(&holes[i], &holes[i + 1], (nholes - i - 1) * sizeof(*holes));
	nholes--;
}

/* Insert [start, start + len) into the hole list, merged with its neighbours. */
static int hole_add(uintptr_t start, size_t len)
{
	size_t lo = 0, hi = nholes;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (holes[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* holes[lo - 1] lies below, holes[lo] above */
	if (lo > 0 && holes[lo - 1].start + holes[lo - 1].len == start) {
		holes[lo - 1].len += len;
		if (lo < nholes && start + len == holes[lo].start) {
			holes[lo - 1].len += holes[lo].len;
			hole_drop(lo);
		}
		return 0;
	}
	if (lo < nholes && start + len == holes[lo].start) {
		holes[lo].start = start;
		holes[lo].len += len;
		return 0;
	}
	if (nholes == holes_cap) {
		size_t cap = holes_cap ? 2 * holes_cap : 64;
		struct hole *h = realloc(holes, cap * sizeof(*holes));

		if (!h)
			return -ENOMEM;
		holes = h;
		holes_cap = cap;
	}
	memmove(&holes[lo + 1], &holes[lo], (nholes - lo) * sizeof(*holes));
	holes[lo].start = start;
	holes[lo].len = len;
	nholes++;
	return 0;
}

static int chunk_add(size_t len)
{
	size_t size = len > CHUNK ? len : CHUNK;
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	int err;

	if (p == MAP_FAILED)
		return -errno;
	madvise(p, size, MADV_NOHUGEPAGE);
	madvise(p, size, MADV_DONTFORK);
	err = hole_add((uintptr_t)p, size);
	if (err) {
		munmap(p, size);
		return err;
	}
	if (nchunks < MAX_CHUNKS) {
		chunks[nchunks].start = (uintptr_t)p;
		chunks[nchunks].len = size;
		__atomic_store_n(&nchunks_seen, nchunks + 1, __ATOMIC_RELEASE);
	}
	nchunks++;
	return 0;
}

/*
 * A fork child has none of the pool's mappings (MADV_DONTFORK), so their
 * munmap() changes nothing in the kernel; it tells the truth to whoever
 * keeps its own map of the address space: valgrind's leak check, at the
 * child's exit, scans every range it believes mapped, and over 64 MiB of
 * absent pool it takes a SIGSEGV per word, minutes per child.
 */
void pmd_pool_forget(void)
{
	unsigned i, n = __atomic_load_n(&nchunks_seen, __ATOMIC_ACQUIRE);

	for (i = 0; i < n; i++)
		munmap((void *)chunks[i].start, chunks[i].len);
}

void *pmd_pool_alloc(size_t len)
{
	void *p = NULL;
	size_t i;
	int err = 0;

	if (!len) {
		errno = EINVAL;
		return NULL;
	}
	len = page_round(len);
	pthread_mutex_lock(&lock);
	for (;;) {
		for (i = 0; i < nholes && holes[i].len < len; i++)
			;
		if (i < nholes)
			break;
		err = chunk_add(len);
		if (err)
			break;
	}
	if (!err) {
		p = (void *)holes[i].start;
		holes[i].start += len;
		holes[i].len -= len;
		if (!holes[i].len)
			hole_drop(i);
	}
	pthread_mutex_unlock(&lock);
	if (err)
		errno = -err;
	return p;
}

void pmd_pool_free(void *p, size_t len)
{
	if (!p || !len)
		return;
	len = page_round(len);
	/* the pages go now; the range reads zero when it is handed out again */
	madvise(p, len, MADV_DONTNEED);
	pthread_mutex_lock(&lock);
	/* no room to note the hole (out of memory): the range stays unused */
	(void)hole_add((uintptr_t)p, len);
	pthread_mutex_unlock(&lock);
}

void *pmd_pool_realloc(void *p, size_t oldlen, size_t newlen)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), keep = oldlen < newlen ? oldlen : newlen;
	size_t n = page_round(keep), npages = n / pg, i;
	char *q = pmd_pool_alloc(newlen);
	unsigned char *vec;

	if (!q || !p)
		return q;
	vec = malloc(npages ? npages : 1);
	/* a page mincore() does not call resident was never written: it reads zero */
	if (!vec || mincore(p, n, vec)) {
		memcpy(q, p, keep);
	} else {
		for (i = 0; i < npages; i++)
			if (vec[i] & 1)
				memcpy(q + i * pg, (char *)p + i * pg, pg); /* both page-rounded */
	}
	free(vec);
	pmd_pool_free(p, oldlen);
	return q;
}

unsigned pmd_pool_mappings(void)
{
	unsigned n;

	pthread_mutex_lock(&lock);
	n = nchunks;
	pthread_mutex_unlock(&lock);
	return n;
}
