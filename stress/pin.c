// SPDX-License-Identifier: GPL-2.0
/*
 * pin: pages of the arena taken by GUP into a pipe (vmsplice) and through
 * process_vm_readv/writev, on live rounds and on settled chunks.
 *
 * The races: vmsplice() takes its pages with get_user_pages_fast(), a
 * lockless walk of the page tables under the storm's faults, splits,
 * collapses and zaps: GUP-fast against a PMD that turns huge, splits or
 * goes none under it ("mm/khugepaged: fix GUP-fast interaction by sending
 * IPI", 2022, and its kin); where a page is not there it falls back to
 * the slow path, one more read fault on a round's pmd_none PMD (the huge
 * zero page). process_vm_readv/writev pin with pin_user_pages_remote()
 * (FOLL_PIN, under the mmap lock). The pipe keeps its page references
 * after the mapping is gone: a page it holds must not be freed and reused
 * under it (the refcounts of a huge page split with pinned subpages), and
 * a pin must see the page the process sees (CVE-2020-29374, "gup: document
 * and work around 'COW can break either way' issue", and the 5.19
 * PageAnonExclusive rework that replaced it).
 *
 * What is checked: on a live round's chunk (inside the disturb bracket,
 * so the round cannot close), every page vmsplice'd or read holds, in each
 * slot, zero or the stamp its worker writes this round, nothing else. On a
 * held settled chunk, pages are vmsplice'd into the pipe, dropped with
 * MADV_DONTNEED (the pipe's references are then the only ones; a huge PMD
 * splits with them pinned), read from the pipe and written back with
 * process_vm_writev (a write fault through a pin), and the chunk must then
 * read exactly what it held: a pin that saw other data, or a write through
 * a pin that did not land, is corruption of the verifier's usual classes.
 * What it may meet: EFAULT on an injected page, ENOMEM in a hole of split's
 * or the seed race's memcg window, EINTR; each counted, anything else
 * reported once per worker.
 */
#include <pmdstress/stressor.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

struct pin_opts {
	uint64_t rate;
	uint64_t pages;
	uint64_t live;
	uint64_t direct;
	char dir[PMD_OPT_STRLEN];
};

#define O(f) offsetof(struct pin_opts, f)
static const struct pmd_option pin_options[] = {
	{ "rate", PMD_OPT_UINT, O(rate), "100", 0, 1000000, NULL,
	  "operations per second, all workers together (0: as fast as possible)" },
	{ "pages", PMD_OPT_UINT, O(pages), "64", 1, 256, NULL,
	  "most pages one operation takes (at random from 1; the pipe is sized to hold them)" },
	{ "live", PMD_OPT_UINT, O(live), "50", 0, 100, NULL,
	  "percent of operations on a chunk whose round is under way (the rest hold a settled "
	  "chunk and write its pages back through a pin)" },
	{ "direct", PMD_OPT_UINT, O(direct), "50", 0, 100, NULL,
	  "percent of held operations that go through O_DIRECT I/O to a file (the rest through "
	  "a pipe and process_vm_writev)" },
	{ "dir", PMD_OPT_STRING, O(dir), "auto", 0, 0, NULL,
	  "directory of the O_DIRECT file (unlinked: O_TMPFILE), whose filesystem must take "
	  "O_DIRECT; auto: /var/tmp where it can, else that way is left out (direct_off counts "
	  "it); off: no O_DIRECT" },
	PMD_OPT_END,
};

enum {
	M_OPS,
	M_LIVE,
	M_HELD,
	M_SPLICED,
	M_READ,
	M_WRITTEN,
	M_DIRECT,
	M_DIRECT_OFF,
	M_LIVE_PAGES,
	M_HELD_PAGES,
	M_SHORT,
	M_NONE,
	M_EFAULT,
	M_ENOMEM,
	M_EINTR,
	M_EOTHER,
	L_SPLICE,
	L_READV,
	L_WRITEV,
	L_DWRITE,
	L_DREAD,
};

static const struct pmd_metric pin_metrics[] = {
	[M_OPS] = { "ops", PMD_METRIC_COUNT, "operations on live rounds and held chunks" },
	[M_LIVE] = { "live", PMD_METRIC_COUNT, "operations on a chunk whose round was under way",
		     PMD_BETTER_NONE },
	[M_HELD] = { "held", PMD_METRIC_COUNT, "operations on a held settled chunk",
		     PMD_BETTER_NONE },
	[M_SPLICED] = { "spliced_pages", PMD_METRIC_COUNT, "pages vmsplice'd into the pipe",
			PMD_BETTER_NONE },
	[M_READ] = { "readv_pages", PMD_METRIC_COUNT, "pages read with process_vm_readv",
		     PMD_BETTER_NONE },
	[M_WRITTEN] = { "writev_pages", PMD_METRIC_COUNT,
			"pages written back with process_vm_writev after MADV_DONTNEED",
			PMD_BETTER_NONE },
	[M_DIRECT] = { "direct_pages", PMD_METRIC_COUNT,
		       "pages written to the file with O_DIRECT, dropped, and read back into "
		       "place with O_DIRECT", PMD_BETTER_NONE },
	[M_DIRECT_OFF] = { "direct_off", PMD_METRIC_COUNT,
			   "held operations due for O_DIRECT that went through the pipe: the "
			   "directory's filesystem refused O_DIRECT", PMD_BETTER_NONE },
	[M_LIVE_PAGES] = { "live_pages", PMD_METRIC_COUNT,
			   "pages taken from a live round checked: zero or this round's stamps",
			   PMD_BETTER_NONE },
	[M_HELD_PAGES] = { "held_pages", PMD_METRIC_COUNT,
			   "pages of held chunks checked after the write back: exactly as before",
			   PMD_BETTER_NONE },
	[M_SHORT] = { "short", PMD_METRIC_COUNT,
		      "write backs the kernel cut short (the rest stored by hand, then checked)",
		      PMD_BETTER_NONE },
	[M_NONE] = { "no_chunk", PMD_METRIC_COUNT, "operations that found no chunk to take",
		     PMD_BETTER_NONE },
	[M_EFAULT] = { "efault", PMD_METRIC_COUNT, "EFAULT: an injected page", PMD_BETTER_NONE },
	[M_ENOMEM] = { "enomem", PMD_METRIC_COUNT,
		       "ENOMEM: a hole of split's, or the seed race's memcg window",
		       PMD_BETTER_NONE },
	[M_EINTR] = { "eintr", PMD_METRIC_COUNT, "EINTR: a signal (the run stopping)",
		      PMD_BETTER_NONE },
	[M_EOTHER] = { "other_errors", PMD_METRIC_COUNT, "any other error (reported)",
		       PMD_BETTER_NONE },
	[L_SPLICE] = { "splice_call", PMD_METRIC_LATENCY, "one vmsplice of the pages" },
	[L_READV] = { "readv_call", PMD_METRIC_LATENCY, "one process_vm_readv of the pages" },
	[L_WRITEV] = { "writev_call", PMD_METRIC_LATENCY, "one process_vm_writev of the pages" },
	[L_DWRITE] = { "direct_write", PMD_METRIC_LATENCY, "one O_DIRECT write of the pages" },
	[L_DREAD] = { "direct_read", PMD_METRIC_LATENCY, "one O_DIRECT read back into them" },
	{ NULL },
};

/* A worker's pipe and the buffer its pages are read into. */
struct pin_wpriv {
	int rd, wr;
	int dfd;	/* the O_DIRECT file, or -1 */
	bool no_direct; /* --pin-dir off */
	size_t cap; /* bytes the pipe holds */
	uint64_t *buf;
};

static unsigned error_metric(int err)
{
	return err == EFAULT ? M_EFAULT :
	       err == ENOMEM ? M_ENOMEM :
	       err == EINTR  ? M_EINTR :
			       M_EOTHER;
}

/* Count @err; report it (once per worker and kind) unless a partner or the run explains it. */
static void pin_error(struct pmd_worker *w, int err, const char *call, unsigned chunk)
{
	unsigned m = error_metric(err);
	bool expected;

	pmd_count(w, m, 1);
	switch (err) {
	case EFAULT:
		/*
		 * process_vm_* and vmsplice say EFAULT for any page they could not
		 * pin, an ENOMEM inside GUP too: the seed race's memcg window (a
		 * 6.1 guest's process_vm_readv, its fault in that window's OOM) or
		 * a hole explains it as it would the ENOMEM.
		 */
		expected = pmd_inject_get(w->si->run)->kind != PMD_INJECT_NONE ||
			   __atomic_load_n(&w->si->arena->holes, __ATOMIC_ACQUIRE) ||
			   pmd_enomem_own(w, ENOMEM);
		break;
	case ENOMEM:
		expected = __atomic_load_n(&w->si->arena->holes, __ATOMIC_ACQUIRE) ||
			   pmd_enomem_own(w, err);
		break;
	case EINTR:
		expected = true;
		break;
	default:
		expected = false;
	}
	if (!expected && pmd_counter_read(&w->stats->counter[m]) == 1)
		pmd_worker_error(w, -err, "pin: %s of chunk %u", call, chunk);
}

/* vmsplice @len bytes at @at into the pipe: bytes taken, or -errno if none. */
static ssize_t splice_in(struct pmd_worker *w, struct pin_wpriv *p, char *at, size_t len)
{
	size_t done = 0;
	uint64_t t0 = pmd_now_ns();

	while (done < len) {
		struct iovec iov = { at + done, len - done };
		ssize_t n = vmsplice(p->wr, &iov, 1, SPLICE_F_NONBLOCK);

		if (n <= 0) {
			if (!done)
				done = n < 0 ? (size_t)-errno : (size_t)-EIO;
			break;
		}
		done += (size_t)n;
	}
	pmd_latency(w, L_SPLICE, pmd_now_ns() - t0);
	return (ssize_t)done;
}

/* Read @len bytes the pipe holds into the buffer; false (reported) if it cannot. */
static bool drain(struct pmd_worker *w, struct pin_wpriv *p, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = read(p->rd, (char *)p->buf + done, len - done);

		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		pmd_worker_error(w, n < 0 ? -errno : -EIO, "pin: reading back %zu spliced bytes "
				 "(got %zu)", len, done);
		return false;
	}
	return true;
}

/* Pages [lo, lo + n) drawn at random, n from 1 to the option's (and the pipe's) bound. */
static unsigned draw_range(struct pmd_worker *w, const struct pin_wpriv *p, unsigned *lo)
{
	const struct pin_opts *o = w->si->opts;
	unsigned most = (unsigned)o->pages, n;

	if (most > p->cap / PMD_PAGE_SIZE)
		most = (unsigned)(p->cap / PMD_PAGE_SIZE);
	n = 1 + (unsigned)pmd_rand_below(w, most);
	*lo = (unsigned)pmd_rand_below(w, PMD_CHUNK_PAGES - n + 1);
	return n;
}

/*
 * Take pages of live chunk @c (entered at @addr, bracketed) by one path or
 * the other and judge what was seen.
 */
static void pin_live(struct pmd_worker *w, struct pin_wpriv *p, struct pmd_chunk *c, char *addr)
{
	bool splice = pmd_rand(w) & 1;
	unsigned lo, n = draw_range(w, p, &lo), i;
	ssize_t got;
	char *at;
	uint64_t t0;

	at = addr + (size_t)lo * PMD_PAGE_SIZE;
	t0 = pmd_now_ns();
	if (splice) {
		got = splice_in(w, p, at, (size_t)n * PMD_PAGE_SIZE);
		if (got > 0 && !drain(w, p, (size_t)got))
			got = 0;
	} else {
		struct iovec local = { p->buf, (size_t)n * PMD_PAGE_SIZE };
		struct iovec remote = { at, local.iov_len };

		got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
		if (got < 0)
			got = -errno;
		pmd_latency(w, L_READV, pmd_now_ns() - t0);
	}
	pmd_chunk_log(c, t0, splice ? PMD_OP_PIN_SPLICE : PMD_OP_PIN_READ, w->id,
		      lo | n << 9);
	pmd_count(w, M_OPS, 1);
	pmd_count(w, M_LIVE, 1);
	if (got < 0) {
		pin_error(w, (int)-got, splice ? "vmsplice" : "process_vm_readv", c->index);
	} else {
		unsigned pages = (unsigned)((size_t)got / PMD_PAGE_SIZE);

		pmd_count(w, splice ? M_SPLICED : M_READ, pages);
		for (i = 0; w->si->cfg->verify && i < pages; i++)
			pmd_verify_copy_in_round(w, c, lo + i, p->buf + (size_t)i * PMD_PAGE_SLOTS,
						 splice ? ", read back through a vmsplice'd pipe" :
							  ", read by process_vm_readv");
		if (w->si->cfg->verify)
			pmd_count(w, M_LIVE_PAGES, pages);
	}
}

/*
 * Bytes @from to @to of the buffer stored at @at, in held chunk @c, by hand:
 * what the kernel left undone. The held steps' system calls run outside any
 * section (pmd_chunk_held_addr()); loads and stores enter one.
 */
static void store_back(struct pmd_chunk *c, const struct pin_wpriv *p, char *at, size_t from,
		       size_t to)
{
	size_t k;

	if (!pmd_chunk_enter(c))
		return;
	for (k = from / sizeof(uint64_t); k < to / sizeof(uint64_t); k++)
		pmd_store((uint64_t *)at + k, p->buf[k]);
	pmd_chunk_exit(c);
}

/* The buffer filled from @len bytes at @at, in held chunk @c, by loads; false if retired. */
static bool load_copy(struct pmd_chunk *c, struct pin_wpriv *p, const char *at, size_t len)
{
	size_t k;

	if (!pmd_chunk_enter(c))
		return false;
	for (k = 0; k < len / sizeof(uint64_t); k++)
		p->buf[k] = pmd_load((const uint64_t *)at + k);
	pmd_chunk_exit(c);
	return true;
}

/*
 * Held chunk @c's pages [lo, lo + n) into the pipe, dropped, read back and
 * written through a pin (process_vm_writev).
 */
static unsigned held_pipe(struct pmd_worker *w, struct pin_wpriv *p, struct pmd_chunk *c,
			  char *at, unsigned lo, unsigned n)
{
	struct iovec local, remote;
	unsigned pages;
	ssize_t got, put;
	uint64_t t0;

	t0 = pmd_now_ns();
	got = splice_in(w, p, at, (size_t)n * PMD_PAGE_SIZE);
	if (got < 0) {
		pin_error(w, (int)-got, "vmsplice", c->index);
		return 0;
	}
	pages = (unsigned)((size_t)got / PMD_PAGE_SIZE);
	pmd_count(w, M_SPLICED, pages);
	/* the pipe's references are the pages' only ones now; a huge PMD splits under them */
	if (madvise(at, (size_t)got, MADV_DONTNEED)) {
		int err = errno;

		/* it may have dropped some of the range before it failed: all stored back */
		if (drain(w, p, (size_t)got))
			store_back(c, p, at, 0, (size_t)got);
		pin_error(w, err, "MADV_DONTNEED", c->index);
		return 0;
	}
	pmd_chunk_log(c, t0, PMD_OP_PIN_SPLICE, w->id, lo | pages << 9);
	if (!drain(w, p, (size_t)got))
		return 0; /* reported: the run ends with an error, the pages read zero */
	local = (struct iovec){ p->buf, (size_t)got };
	remote = (struct iovec){ at, (size_t)got };
	t0 = pmd_now_ns();
	put = process_vm_writev(getpid(), &local, 1, &remote, 1, 0);
	pmd_latency(w, L_WRITEV, pmd_now_ns() - t0);
	pmd_chunk_log(c, t0, PMD_OP_PIN_WRITE, w->id, lo | pages << 9);
	if (put < 0) {
		pin_error(w, errno, "process_vm_writev", c->index);
		put = 0;
	}
	/* what the kernel did not take is stored by hand: the chunk's contents stay known */
	if (put < got) {
		pmd_count(w, M_SHORT, 1);
		store_back(c, p, at, (size_t)put, (size_t)got);
	}
	pmd_count(w, M_WRITTEN, (uint64_t)put / PMD_PAGE_SIZE);
	return pages;
}

/*
 * Held chunk @c's pages [lo, lo + n) written to the file with O_DIRECT (the
 * block layer pins them), dropped, and read back into place with O_DIRECT
 * (pinned for writing: fresh pages faulted in by GUP, filled by the
 * device). A copy is taken first, by loads: what the kernel does not read
 * back is stored by hand.
 */
static unsigned held_direct(struct pmd_worker *w, struct pin_wpriv *p, struct pmd_chunk *c,
			    char *at, unsigned lo, unsigned n)
{
	size_t len = (size_t)n * PMD_PAGE_SIZE;
	ssize_t put, got;
	uint64_t t0;

	if (!load_copy(c, p, at, len))
		return 0;
	t0 = pmd_now_ns();
	put = pwrite(p->dfd, at, len, 0);
	pmd_latency(w, L_DWRITE, pmd_now_ns() - t0);
	if (put < 0) {
		pin_error(w, errno, "O_DIRECT write", c->index);
		return 0;
	}
	len = (size_t)put / PMD_PAGE_SIZE * PMD_PAGE_SIZE;
	if (!len)
		return 0;
	if (madvise(at, len, MADV_DONTNEED)) {
		int err = errno;

		/* it may have dropped some of the range before it failed: all stored back */
		store_back(c, p, at, 0, len);
		pin_error(w, err, "MADV_DONTNEED", c->index);
		return 0;
	}
	pmd_chunk_log(c, t0, PMD_OP_PIN_DIRECT, w->id, lo | (unsigned)(len / PMD_PAGE_SIZE) << 9);
	t0 = pmd_now_ns();
	got = pread(p->dfd, at, len, 0);
	pmd_latency(w, L_DREAD, pmd_now_ns() - t0);
	if (got < 0) {
		pin_error(w, errno, "O_DIRECT read", c->index);
		got = 0;
	}
	got = got / (ssize_t)PMD_PAGE_SIZE * (ssize_t)PMD_PAGE_SIZE;
	if ((size_t)got < len) {
		pmd_count(w, M_SHORT, 1);
		store_back(c, p, at, (size_t)got, len);
	}
	pmd_count(w, M_DIRECT, (uint64_t)got / PMD_PAGE_SIZE);
	return (unsigned)(len / PMD_PAGE_SIZE);
}

/* Held chunk @c (at @addr, no section entered): then its pages must hold what they held. */
static void pin_held(struct pmd_worker *w, struct pin_wpriv *p, struct pmd_chunk *c, char *addr)
{
	const struct pin_opts *o = w->si->opts;
	unsigned lo, n = draw_range(w, p, &lo), pages;
	char *at = addr + (size_t)lo * PMD_PAGE_SIZE;
	bool direct = pmd_rand_below(w, 100) < o->direct;

	pmd_count(w, M_OPS, 1);
	pmd_count(w, M_HELD, 1);
	if (direct && p->dfd < 0) {
		if (!p->no_direct)
			pmd_count(w, M_DIRECT_OFF, 1);
		direct = false;
	}
	pages = direct ? held_direct(w, p, c, at, lo, n) : held_pipe(w, p, c, at, lo, n);
	if (pages && w->si->cfg->verify && (addr = pmd_chunk_enter(c))) {
		pmd_verify_pages(w, c, addr, lo, lo + pages);
		pmd_count(w, M_HELD_PAGES, pages);
		pmd_chunk_exit(c);
	}
}


static void pin_once(struct pmd_worker *w, struct pin_wpriv *p)
{
	const struct pin_opts *o = w->si->opts;
	struct pmd_arena *a = w->si->arena;
	/* both drawn either way: what follows does not depend on the rounds' timing */
	bool live = pmd_rand_below(w, 100) < o->live;
	unsigned start = (unsigned)pmd_rand_below(w, a->nchunks);
	struct pmd_chunk *c;
	char *addr;

	if (live && (c = pmd_arena_enter_live(a, start, &addr))) {
		pin_live(w, p, c, addr);
		pmd_chunk_disturb_end(c);
		pmd_chunk_exit(c);
		return;
	}
	c = pmd_arena_hold_settled(a, start, a->nchunks);
	if (!c) {
		pmd_count(w, M_NONE, 1);
		return;
	}
	/* held: the system calls (O_DIRECT, pipes) outside any section */
	addr = pmd_chunk_held_addr(c);
	if (addr)
		pin_held(w, p, c, addr);
	pmd_chunk_release(c, PMD_CHUNK_IDLE);
}

static int pin_run(struct pmd_worker *w)
{
	const struct pin_opts *o = w->si->opts;
	struct pin_wpriv *p = w->priv;
	uint64_t next = pmd_now_ns();

	while (!pmd_should_stop(w)) {
		pin_once(w, p);
		pmd_beat(w);
		if (!pmd_pace(w, &next, o->rate))
			break;
	}
	return 0;
}

/*
 * An unlinked file in @dir open for O_DIRECT I/O, checked with one aligned
 * write: its fd, or -errno where the filesystem refuses O_DIRECT (EINVAL:
 * tmpfs before 6.6, an initramfs) or the directory cannot hold it.
 */
static int open_direct(const char *dir, void *page)
{
	char path[PMD_OPT_STRLEN + 32];
	int fd;

	fd = open(dir, O_TMPFILE | O_RDWR | O_DIRECT | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR)) {
		/* no O_TMPFILE there: a named file, unlinked at once */
		snprintf(path, sizeof(path), "%s/pmdstress-pin-XXXXXX", dir);
		fd = mkostemp(path, O_CLOEXEC);
		if (fd >= 0) {
			unlink(path);
			if (fcntl(fd, F_SETFL, O_DIRECT)) {
				int err = errno;

				close(fd);
				return -err;
			}
		}
	}
	if (fd < 0)
		return -errno;
	if (pwrite(fd, page, PMD_PAGE_SIZE, 0) != (ssize_t)PMD_PAGE_SIZE) {
		int err = errno ? errno : EIO;

		close(fd);
		return -err;
	}
	return fd;
}

static int pin_setup(struct pmd_sinst *si)
{
	const struct pin_opts *o = si->opts;
	struct pin_wpriv *p = calloc(si->nworkers, sizeof(*p));
	unsigned i;

	if (!p)
		return -ENOMEM;
	si->priv = p;
	/* all closed-looking first: teardown after a failure here must not close fd 0 */
	for (i = 0; i < si->nworkers; i++)
		p[i].rd = p[i].wr = p[i].dfd = -1;
	for (i = 0; i < si->nworkers; i++) {
		int fds[2], sz, fd;

		if (pipe2(fds, O_CLOEXEC))
			return -errno;
		p[i].rd = fds[0];
		p[i].wr = fds[1];
		/* room for the most pages an operation takes; what the system allows if less */
		(void)fcntl(fds[1], F_SETPIPE_SZ, (int)(o->pages * PMD_PAGE_SIZE));
		sz = fcntl(fds[1], F_GETPIPE_SZ);
		if (sz < (int)PMD_PAGE_SIZE)
			return sz < 0 ? -errno : -EINVAL;
		p[i].cap = (size_t)sz;
		p[i].buf = aligned_alloc(PMD_PAGE_SIZE, p[i].cap);
		if (!p[i].buf)
			return -ENOMEM;
		memset(p[i].buf, 0, PMD_PAGE_SIZE);
		si->workers[i].priv = &p[i];
		p[i].no_direct = !strcmp(o->dir, "off");
		if (!o->direct || p[i].no_direct)
			continue;
		fd = open_direct(strcmp(o->dir, "auto") ? o->dir : "/var/tmp", p[i].buf);
		if (fd >= 0) {
			p[i].dfd = fd;
		} else if (strcmp(o->dir, "auto")) {
			/* a directory named by the user must do what was asked */
			snprintf(si->why, sizeof(si->why), "--pin-dir %.100s: no O_DIRECT file there: %s",
				 o->dir, strerror(-fd));
			return -EINVAL;
		}
	}
	return 0;
}

static void pin_teardown(struct pmd_sinst *si)
{
	struct pin_wpriv *p = si->priv;
	unsigned i;

	if (!p)
		return;
	for (i = 0; i < si->nworkers; i++) {
		if (p[i].rd >= 0)
			close(p[i].rd);
		if (p[i].wr >= 0)
			close(p[i].wr);
		if (p[i].dfd >= 0)
			close(p[i].dfd);
		free(p[i].buf);
	}
	free(p);
	si->priv = NULL;
}

/*
 * The three calls on one page of our own: vmsplice, then process_vm_writev
 * and _readv of the process itself (a seccomp filter or an LSM may refuse
 * them: Docker's default profile refuses process_vm_* without CAP_SYS_PTRACE).
 */
static const char *probe(char *why, size_t len)
{
	size_t psz = PMD_PAGE_SIZE;
	char *pg = mmap(NULL, psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t v = 0x50494e00ull, back = 0;
	struct iovec l = { &v, sizeof(v) }, r = { NULL, sizeof(v) };
	const char *call = NULL;
	int fds[2] = { -1, -1 }, err = 0;

	if (pg == MAP_FAILED)
		return NULL; /* memory is short now; the run finds out */
	r.iov_base = pg;
	if (process_vm_writev(getpid(), &l, 1, &r, 1, 0) != (ssize_t)sizeof(v))
		call = "process_vm_writev", err = errno;
	l.iov_base = &back;
	if (!call && (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != (ssize_t)sizeof(v) ||
		      back != v))
		call = "process_vm_readv", err = errno;
	if (!call && pipe2(fds, O_CLOEXEC))
		call = "pipe2", err = errno;
	if (!call) {
		struct iovec s = { pg, psz };

		if (vmsplice(fds[1], &s, 1, SPLICE_F_NONBLOCK) != (ssize_t)psz)
			call = "vmsplice", err = errno;
	}
	if (fds[0] >= 0) {
		close(fds[0]);
		close(fds[1]);
	}
	munmap(pg, psz);
	if (!call || err == ENOMEM || err == EINTR)
		return NULL;
	snprintf(why, len, "%s refused on our own memory: %s (a seccomp filter or an LSM)", call,
		 err ? strerror(err) : "short or wrong transfer");
	return why;
}

static const char *pin_supported(struct pmd_sinst *si)
{
	return probe(si->why, sizeof(si->why));
}

const struct pmd_stressor pmd_stressor_pin = {
	.abi = PMD_STRESSOR_ABI,
	.name = "pin",
	.summary = "GUP pins: vmsplice and process_vm_readv/writev of live and settled chunks",
	.options = pin_options,
	.opts_size = sizeof(struct pin_opts),
	.metrics = pin_metrics,
	.workers = "1",
	.supported = pin_supported,
	.setup = pin_setup,
	.run = pin_run,
	.teardown = pin_teardown,
};
