// SPDX-License-Identifier: GPL-2.0
/*
 * procwalk: /proc readers that walk the arena's page tables while the
 * storm changes them.
 *
 * The race: /proc/self/smaps, smaps_rollup and numa_maps walk every VMA's
 * page tables (walk_page_range() under the mmap or VMA read lock, through
 * smaps_pmd_entry() / gather_pte_stats()), and pagemap reads PTEs and huge
 * PMDs of a range (pagemap_pmd_range()), all while the fault storm installs
 * huge PMDs and page tables, zaps them, and partners split, collapse and
 * remap them. A walker that trusts a PMD it read without the lock, or
 * reads a huge PMD as a page table, is CVE-2012-1179's "bad pmd" (THP fault
 * vs MADV_DONTNEED/mincore/pagemap under the mmap read lock); a reader that
 * holds a lock too long shows as stalls in the storm's first-touch latency.
 *
 * What is read is checked, not just counted. smaps: every arena VMA has
 * Size, Rss and AnonHugePages; Size is its address range; Rss <= Size;
 * AnonHugePages <= Rss, a multiple of 2048 kB (no sum over the VMAs is
 * checked: smaps is not read at one instant, see read_smaps()). smaps_rollup:
 * AnonHugePages <= Rss, a multiple of 2048 kB. numa_maps: the per-node counts add up to the page count the line
 * gives (mapped=, else anon= or dirty=), and lines with pages say their
 * kernelpagesize_kB. pagemap: a full read, never present and swapped at
 * once, no file page in a private arena but the (huge) zero page, and no
 * PFN without CAP_SYS_ADMIN. Anything else is the kernel returning something malformed:
 * a run error naming what was read.
 *
 * How to tell it fired: reads and bytes per kind and their latency (a
 * reader held up by a fault, or holding one up, shows in the tail), and
 * "huge_seen" counts smaps reads that caught PMD-mapped huge pages in the
 * arena, i.e. walked huge PMDs the storm installed.
 * No --procwalk-align: files are read whole, pagemap from a chunk's start.
 */
#include <pmdstress/stressor.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LINE_BUF (64u << 10)	/* longest line a walker accepts */
#define REPORTS_PER_WORKER 4	/* malformed reads reported in full; the rest are counted */
#define HUGE_KB (PMD_CHUNK_SIZE >> 10)

#define PM_PFN_MASK ((1ull << 55) - 1)
#define PM_FILE (1ull << 61)
#define PM_SWAP (1ull << 62)
#define PM_PRESENT (1ull << 63)
#define KPF_ZERO_PAGE 24 /* /proc/kpageflags: the zero page, small or huge */

enum { K_SMAPS, K_ROLLUP, K_PAGEMAP, K_NUMA, K_COUNT };

static const char *const kind_path[K_COUNT] = {
	[K_SMAPS] = "/proc/self/smaps",
	[K_ROLLUP] = "/proc/self/smaps_rollup",
	[K_PAGEMAP] = "/proc/self/pagemap",
	[K_NUMA] = "/proc/self/numa_maps",
};

struct procwalk_opts {
	uint64_t rate;
	bool kind[K_COUNT];
	uint64_t pagemap_range;
};

#define O(f) offsetof(struct procwalk_opts, f)
static const struct pmd_option procwalk_options[] = {
	{ "rate", PMD_OPT_UINT, O(rate), "200", 0, 1000000, NULL,
	  "reads per second, all kinds and workers together (0: as fast as possible)" },
	{ "smaps", PMD_OPT_BOOL, O(kind[K_SMAPS]), "on", 0, 0, NULL,
	  "read /proc/self/smaps (every VMA's page tables)" },
	{ "smaps-rollup", PMD_OPT_BOOL, O(kind[K_ROLLUP]), "on", 0, 0, NULL,
	  "read /proc/self/smaps_rollup" },
	{ "pagemap", PMD_OPT_BOOL, O(kind[K_PAGEMAP]), "on", 0, 0, NULL,
	  "pread /proc/self/pagemap over arena ranges" },
	{ "numa-maps", PMD_OPT_BOOL, O(kind[K_NUMA]), "on", 0, 0, NULL,
	  "read /proc/self/numa_maps (where the kernel has NUMA)" },
	{ "pagemap-range", PMD_OPT_SIZE, O(pagemap_range), "2M", 4ull << 10, 1ull << 30, NULL,
	  "arena bytes one pagemap read covers, from a random chunk (clamped to the arena)" },
	PMD_OPT_END,
};

enum {
	M_OPS,
	M_BYTES,
	M_SMAPS,
	M_ROLLUP,
	M_PAGEMAP,
	M_NUMA,
	M_HUGE_SEEN,
	M_MALFORMED,
	M_LAT_SMAPS,
	M_LAT_ROLLUP,
	M_LAT_PAGEMAP,
	M_LAT_NUMA,
};

static const unsigned kind_count[K_COUNT] = { M_SMAPS, M_ROLLUP, M_PAGEMAP, M_NUMA };
static const unsigned kind_latency[K_COUNT] = { M_LAT_SMAPS, M_LAT_ROLLUP, M_LAT_PAGEMAP,
						M_LAT_NUMA };

static const struct pmd_metric procwalk_metrics[] = {
	[M_OPS] = { "ops", PMD_METRIC_COUNT, "reads, all kinds" },
	[M_BYTES] = { "bytes", PMD_METRIC_COUNT, "bytes read, all kinds" },
	[M_SMAPS] = { "smaps", PMD_METRIC_COUNT, "reads of /proc/self/smaps" },
	[M_ROLLUP] = { "smaps_rollup", PMD_METRIC_COUNT, "reads of /proc/self/smaps_rollup" },
	[M_PAGEMAP] = { "pagemap", PMD_METRIC_COUNT, "preads of /proc/self/pagemap" },
	[M_NUMA] = { "numa_maps", PMD_METRIC_COUNT, "reads of /proc/self/numa_maps" },
	[M_HUGE_SEEN] = { "huge_seen", PMD_METRIC_COUNT,
			  "smaps reads that found PMD-mapped huge pages in the arena",
			  PMD_BETTER_NONE },
	[M_MALFORMED] = { "malformed", PMD_METRIC_COUNT,
			  "reads whose contents failed a sanity check (reported)", PMD_BETTER_NONE },
	[M_LAT_SMAPS] = { "smaps_read", PMD_METRIC_LATENCY, "open, read and close smaps" },
	[M_LAT_ROLLUP] = { "smaps_rollup_read", PMD_METRIC_LATENCY,
			   "open, read and close smaps_rollup" },
	[M_LAT_PAGEMAP] = { "pagemap_read", PMD_METRIC_LATENCY, "one pagemap pread" },
	[M_LAT_NUMA] = { "numa_maps_read", PMD_METRIC_LATENCY, "open, read and close numa_maps" },
	{ NULL },
};

struct procwalk_priv {
	const struct procwalk_opts *o;
	unsigned kinds[K_COUNT], nkinds; /* the kinds this kernel has */
	bool pfn_hidden;		 /* no CAP_SYS_ADMIN: pagemap must hide PFNs */
};

/* One worker's buffers. */
struct walker {
	char *buf;	   /* LINE_BUF */
	uint64_t *pm;	   /* pagemap entries */
	size_t pm_len;	   /* entries pm holds */
	int pagemap_fd;
	int kpageflags_fd; /* root only; -1 otherwise */
	unsigned reported; /* malformed reads reported so far */
	char bad[240];	   /* what the last check found wrong */
};

/* ---- reading a /proc file line by line ------------------------------------- */

typedef void (*line_fn)(void *ctx, char *line);

/* Feed every line of @path to @fn; returns bytes read or -errno. */
static int64_t read_lines(struct walker *wk, const char *path, line_fn fn, void *ctx)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t have = 0;
	int64_t total = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n = read(fd, wk->buf + have, LINE_BUF - 1 - have);
		char *p = wk->buf, *end, *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			total = -errno;
			break;
		}
		if (!n) {
			if (have) {
				wk->buf[have] = '\0';
				fn(ctx, wk->buf);
			}
			break;
		}
		total += n;
		end = wk->buf + have + n;
		while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
			*nl = '\0';
			fn(ctx, p);
			p = nl + 1;
		}
		have = (size_t)(end - p);
		memmove(wk->buf, p, have);
		if (have == LINE_BUF - 1) {
			total = -E2BIG; /* no line of these files is that long */
			break;
		}
	}
	close(fd);
	return total;
}

static bool parse_kb(const char *line, const char *field, int64_t *kb)
{
	size_t n = strlen(field);
	char *end;
	unsigned long long v;

	if (strncmp(line, field, n))
		return false;
	v = strtoull(line + n, &end, 10);
	while (*end == ' ')
		end++;
	*kb = strcmp(end, "kB") ? -2 : (int64_t)v; /* -2: the field is there, garbled */
	return true;
}

static bool is_hex(char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
}

/* "start-end perms ..." -> start, end; false if @line is not a VMA header. */
static bool vma_header(const char *line, uint64_t *start, uint64_t *end)
{
	char *p;

	if (!is_hex(line[0]))
		return false;
	*start = strtoull(line, &p, 16);
	if (*p != '-')
		return false;
	*end = strtoull(p + 1, &p, 16);
	return *p == ' ';
}

/* ---- smaps and smaps_rollup ------------------------------------------------ */

struct smaps_ctx {
	struct walker *wk;
	uint64_t lo, hi;   /* the arena with its spare slots */
	bool rollup;
	bool in, whole;	   /* the current VMA overlaps / lies within the arena */
	uint64_t start, end;
	int64_t size, rss, huge, shmem_pmd; /* kB; -1 not seen */
	uint64_t arena_huge;		    /* kB, over the VMAs within the arena */
	unsigned vmas;
	bool headers_ok;
};

static void bad(struct walker *wk, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad(struct walker *wk, const char *fmt, ...)
{
	va_list ap;

	if (wk->bad[0])
		return; /* the first problem of a read is the one to report */
	va_start(ap, fmt);
	vsnprintf(wk->bad, sizeof(wk->bad), fmt, ap);
	va_end(ap);
}

static void smaps_flush(struct smaps_ctx *x)
{
	struct walker *wk = x->wk;
	const char *what = x->rollup ? "smaps_rollup" : "smaps";

	if (!x->in)
		return;
	x->in = false;
	if (x->rss < 0 || x->huge < 0 || (!x->rollup && x->size < 0)) {
		bad(wk, "%s: VMA %#llx-%#llx lacks a well-formed Size, Rss or AnonHugePages line",
		    what, (unsigned long long)x->start, (unsigned long long)x->end);
		return;
	}
	if (!x->rollup && (uint64_t)x->size != (x->end - x->start) >> 10)
		bad(wk, "smaps: VMA %#llx-%#llx says Size %lld kB, its range is %llu kB",
		    (unsigned long long)x->start, (unsigned long long)x->end, (long long)x->size,
		    (unsigned long long)((x->end - x->start) >> 10));
	else if (!x->rollup && x->rss > x->size)
		bad(wk, "smaps: VMA %#llx-%#llx has Rss %lld kB above its Size %lld kB",
		    (unsigned long long)x->start, (unsigned long long)x->end, (long long)x->rss,
		    (long long)x->size);
	else if (x->huge > x->rss)
		bad(wk, "%s: AnonHugePages %lld kB above Rss %lld kB (VMA %#llx)", what,
		    (long long)x->huge, (long long)x->rss, (unsigned long long)x->start);
	else if (x->huge % HUGE_KB || (x->shmem_pmd > 0 && x->shmem_pmd % HUGE_KB))
		bad(wk, "%s: AnonHugePages %lld kB / ShmemPmdMapped %lld kB not a multiple of "
			"%lu kB (VMA %#llx)", what, (long long)x->huge, (long long)x->shmem_pmd,
		    (unsigned long)HUGE_KB, (unsigned long long)x->start);
	if (x->whole)
		x->arena_huge += (uint64_t)x->huge;
}

static void smaps_line(void *ctx, char *line)
{
	struct smaps_ctx *x = ctx;
	uint64_t start, end;

	if (vma_header(line, &start, &end)) {
		smaps_flush(x);
		if (end <= start) {
			bad(x->wk, "smaps: VMA header with end <= start: '%.80s'", line);
			return;
		}
		x->start = start;
		x->end = end;
		/* the rollup's one header spans the whole address space */
		x->in = x->rollup || (start < x->hi && end > x->lo);
		x->whole = !x->rollup && start >= x->lo && end <= x->hi;
		x->size = x->rss = x->huge = x->shmem_pmd = -1;
		if (x->in) {
			x->vmas++;
			if (x->rollup && !strstr(line, "[rollup]"))
				bad(x->wk, "smaps_rollup: header without [rollup]: '%.80s'", line);
		}
		return;
	}
	if (!x->in)
		return;
	if (!parse_kb(line, "Size:", &x->size) && !parse_kb(line, "Rss:", &x->rss) &&
	    !parse_kb(line, "AnonHugePages:", &x->huge))
		parse_kb(line, "ShmemPmdMapped:", &x->shmem_pmd);
}

static int64_t read_smaps(struct pmd_worker *w, struct walker *wk, bool rollup, bool *huge_seen)
{
	const struct pmd_arena *a = w->si->arena;
	struct smaps_ctx x;
	int64_t n;

	memset(&x, 0, sizeof(x));
	x.wk = wk;
	x.rollup = rollup;
	x.lo = (uintptr_t)a->base;
	x.hi = x.lo + a->size + (uint64_t)a->nspare * PMD_CHUNK_SIZE;
	/*
	 * No bound on the arena's sum: smaps is read a buffer at a time, with
	 * the mmap lock dropped in between, so one page can be counted twice.
	 * A chunk split moves (mremap) to a spare slot between two reads is seen
	 * at both places, and a VMA that toggle's madvise merged backwards over
	 * VMAs already printed is printed again whole when the next read
	 * restarts inside it (CI saw 75776 kB for a 72 MiB arena + spare). Each
	 * VMA is printed under the lock, so the per-VMA checks are what holds.
	 */
	n = read_lines(wk, kind_path[rollup ? K_ROLLUP : K_SMAPS], smaps_line, &x);
	smaps_flush(&x);
	if (n < 0)
		return n;
	if (!x.vmas)
		bad(wk, "%s: %s", rollup ? "smaps_rollup" : "smaps",
		    rollup ? "no [rollup] header" : "no VMA of the arena");
	*huge_seen = !rollup && x.arena_huge > 0;
	return n;
}

/* ---- numa_maps --------------------------------------------------------------- */

struct numa_ctx {
	struct walker *wk;
	uint64_t lo, hi;
	uint64_t arena_pages;
};

static bool numeric(const char *s, uint64_t *v)
{
	char *end;

	*v = 0;
	if (*s < '0' || *s > '9')
		return false;
	*v = strtoull(s, &end, 10);
	return !*end;
}

static void numa_line(void *ctx, char *line)
{
	struct numa_ctx *x = ctx;
	uint64_t start, v = 0, nodes = 0, anon = 0, dirty = 0, mapped = 0, kps = 0;
	bool has_anon = false, has_dirty = false, has_mapped = false;
	char *save = NULL, *tok, *p;

	start = strtoull(line, &p, 16);
	if (p == line || *p != ' ') {
		bad(x->wk, "numa_maps: line without an address: '%.80s'", line);
		return;
	}
	if (start < x->lo || start >= x->hi)
		return;
	strtok_r(p, " ", &save); /* the policy */
	while ((tok = strtok_r(NULL, " ", &save))) {
		char *eq = strchr(tok, '=');
		bool num;

		if (!eq)
			continue; /* heap, stack, huge, ... */
		*eq = '\0';
		num = numeric(eq + 1, &v);
		if (tok[0] == 'N' && tok[1] >= '0' && tok[1] <= '9')
			nodes += num ? v : 0;
		else if (!strcmp(tok, "anon"))
			has_anon = true, anon = v;
		else if (!strcmp(tok, "dirty"))
			has_dirty = true, dirty = v;
		else if (!strcmp(tok, "mapped"))
			has_mapped = true, mapped = v;
		else if (!strcmp(tok, "kernelpagesize_kB"))
			kps = num ? v : 0;
		else
			continue; /* file=, mapmax=, active=, ...: not checked */
		if (!num) {
			bad(x->wk, "numa_maps %#llx: %s= is not a number", (unsigned long long)start,
			    tok);
			return;
		}
	}
	if (!nodes && !has_anon && !has_dirty && !has_mapped)
		return; /* nothing mapped: the kernel prints no counts */
	/* task_mmu.c: mapped= is printed unless pages equals anon or dirty */
	if (has_mapped ? nodes != mapped
		       : !((has_anon && nodes == anon) || (has_dirty && nodes == dirty)))
		bad(x->wk, "numa_maps %#llx: node counts add up to %llu pages, the line says "
			   "anon=%llu dirty=%llu mapped=%llu", (unsigned long long)start,
		    (unsigned long long)nodes, (unsigned long long)anon, (unsigned long long)dirty,
		    (unsigned long long)mapped);
	else if (anon > nodes || dirty > nodes || nodes > x->arena_pages)
		bad(x->wk, "numa_maps %#llx: %llu pages (anon=%llu dirty=%llu) in an arena of %llu",
		    (unsigned long long)start, (unsigned long long)nodes, (unsigned long long)anon,
		    (unsigned long long)dirty, (unsigned long long)x->arena_pages);
	else if (kps != PMD_PAGE_SIZE >> 10)
		bad(x->wk, "numa_maps %#llx: kernelpagesize_kB=%llu, expected %lu",
		    (unsigned long long)start, (unsigned long long)kps,
		    (unsigned long)(PMD_PAGE_SIZE >> 10));
}

static int64_t read_numa_maps(struct pmd_worker *w, struct walker *wk)
{
	const struct pmd_arena *a = w->si->arena;
	struct numa_ctx x = { .wk = wk };

	x.lo = (uintptr_t)a->base;
	x.hi = x.lo + a->size + (uint64_t)a->nspare * PMD_CHUNK_SIZE;
	x.arena_pages = (x.hi - x.lo) >> PMD_PAGE_SHIFT;
	return read_lines(wk, kind_path[K_NUMA], numa_line, &x);
}

/* ---- pagemap ----------------------------------------------------------------- */

/*
 * A present page of the private arena is anonymous, or the zero page: a
 * read fault maps the huge zero page into a pmd_none range of a THP VMA,
 * and pagemap reports that one with PM_FILE set (it is not anon), unlike
 * the small zero page. Only kpageflags (root) tells them apart; without it,
 * give the page the benefit of the doubt.
 */
static bool foreign_file_page(const struct walker *wk, uint64_t e)
{
	uint64_t pfn = e & PM_PFN_MASK, flags = 0;

	if (!pfn || wk->kpageflags_fd < 0 ||
	    pread(wk->kpageflags_fd, &flags, sizeof(flags), (off_t)(pfn * sizeof(flags))) !=
		    sizeof(flags))
		return false;
	return !(flags & (1ull << KPF_ZERO_PAGE));
}

static int64_t read_pagemap(struct pmd_worker *w, struct walker *wk)
{
	const struct procwalk_priv *pp = w->si->priv;
	struct pmd_arena *a = w->si->arena;
	struct pmd_chunk *c = &a->chunks[pmd_rand_below(w, a->nchunks)];
	char *addr = pmd_chunk_enter(c), *home_end = a->base + a->size;
	size_t len = pp->o->pagemap_range, n, i;
	uint64_t t = pmd_now_ns();
	ssize_t got;

	if (!addr)
		return 0; /* retired: being remapped right now */
	pmd_chunk_exit(c);
	/* a chunk moved to a spare slot has no neighbours */
	if (addr < a->base || addr >= home_end)
		len = PMD_CHUNK_SIZE;
	else if (len > (size_t)(home_end - addr))
		len = (size_t)(home_end - addr);
	n = (len + PMD_PAGE_SIZE - 1) >> PMD_PAGE_SHIFT;
	got = pread(wk->pagemap_fd, wk->pm, n * sizeof(uint64_t),
		    (off_t)(((uintptr_t)addr >> PMD_PAGE_SHIFT) * sizeof(uint64_t)));
	if (got < 0)
		return -errno;
	pmd_chunk_log(c, t, PMD_OP_PAGEMAP_READ, w->id, (uint32_t)n);
	if ((size_t)got != n * sizeof(uint64_t)) {
		bad(wk, "pagemap: short read at %p: %zd of %zu bytes", (void *)addr, got,
		    n * sizeof(uint64_t));
		return got;
	}
	for (i = 0; i < n; i++) {
		uint64_t e = wk->pm[i];
		char *at = addr + (i << PMD_PAGE_SHIFT);

		if ((e & PM_PRESENT) && (e & PM_SWAP))
			bad(wk, "pagemap: %p both present and swapped (%#llx)", (void *)at,
			    (unsigned long long)e);
		else if ((e & PM_PRESENT) && (e & PM_FILE) && !a->shared &&
			 foreign_file_page(wk, e))
			bad(wk, "pagemap: %p of the private arena maps a file page that is not the "
				"zero page (%#llx)", (void *)at, (unsigned long long)e);
		else if ((e & PM_PRESENT) && (e & PM_PFN_MASK) && pp->pfn_hidden)
			bad(wk, "pagemap: %p shows PFN %#llx to a reader without CAP_SYS_ADMIN",
			    (void *)at, (unsigned long long)(e & PM_PFN_MASK));
		else
			continue;
		break;
	}
	return got;
}

/* ---- the loop ------------------------------------------------------------------- */

static void read_one(struct pmd_worker *w, struct walker *wk, unsigned kind)
{
	uint64_t t0 = pmd_now_ns();
	bool huge = false;
	int64_t n;

	wk->bad[0] = '\0';
	switch (kind) {
	case K_SMAPS:
	case K_ROLLUP:
		n = read_smaps(w, wk, kind == K_ROLLUP, &huge);
		break;
	case K_PAGEMAP:
		n = read_pagemap(w, wk);
		break;
	default:
		n = read_numa_maps(w, wk);
		break;
	}
	pmd_latency(w, kind_latency[kind], pmd_now_ns() - t0);
	pmd_count(w, M_OPS, 1);
	pmd_count(w, kind_count[kind], 1);
	if (n > 0)
		pmd_count(w, M_BYTES, (uint64_t)n);
	if (huge)
		pmd_count(w, M_HUGE_SEEN, 1);
	if (n < 0)
		bad(wk, "reading %s failed", kind_path[kind]);
	if (!wk->bad[0])
		return;
	pmd_count(w, M_MALFORMED, 1);
	if (wk->reported++ < REPORTS_PER_WORKER)
		pmd_worker_error(w, n < 0 ? (int)n : 0, "procwalk: %s", wk->bad);
}


static int procwalk_run(struct pmd_worker *w)
{
	const struct procwalk_priv *pp = w->si->priv;
	struct walker wk;
	uint64_t next = pmd_now_ns(), i;
	int rc = 0;

	memset(&wk, 0, sizeof(wk));
	wk.pagemap_fd = wk.kpageflags_fd = -1;
	wk.pm_len = (pp->o->pagemap_range + PMD_PAGE_SIZE - 1) >> PMD_PAGE_SHIFT;
	if (wk.pm_len < PMD_CHUNK_PAGES)
		wk.pm_len = PMD_CHUNK_PAGES;
	wk.buf = malloc(LINE_BUF);
	wk.pm = calloc(wk.pm_len, sizeof(uint64_t));
	if (!wk.buf || !wk.pm) {
		rc = -ENOMEM;
		goto out;
	}
	wk.pagemap_fd = open(kind_path[K_PAGEMAP], O_RDONLY | O_CLOEXEC);
	wk.kpageflags_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	/* workers start on different kinds, so the kinds race each other too */
	for (i = w->index; !pmd_should_stop(w); i++) {
		unsigned kind = pp->kinds[i % pp->nkinds];

		if (kind != K_PAGEMAP || wk.pagemap_fd >= 0)
			read_one(w, &wk, kind);
		pmd_beat(w);
		if (!pmd_pace(w, &next, pp->o->rate))
			break;
	}
out:
	if (wk.pagemap_fd >= 0)
		close(wk.pagemap_fd);
	if (wk.kpageflags_fd >= 0)
		close(wk.kpageflags_fd);
	free(wk.pm);
	free(wk.buf);
	return rc;
}

/* ---- setup ------------------------------------------------------------------------- */

static bool cap_sys_admin(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d))
		return true; /* cannot tell: do not check what only holds without it */
	return d[CAP_SYS_ADMIN / 32].effective & (1u << (CAP_SYS_ADMIN % 32));
}

/* The kinds asked for that this kernel has. */
static unsigned usable_kinds(const struct procwalk_opts *o, unsigned *kinds)
{
	unsigned k, n = 0;

	for (k = 0; k < K_COUNT; k++)
		if (o->kind[k] && !access(kind_path[k], R_OK))
			kinds[n++] = k;
	return n;
}

static const char *procwalk_supported(struct pmd_sinst *si)
{
	const struct procwalk_opts *o = si->opts;
	unsigned kinds[K_COUNT], k, asked = 0;

	for (k = 0; k < K_COUNT; k++)
		asked += o->kind[k];
	if (!asked)
		return NULL; /* the user's mistake: setup refuses it (exit 2) */
	if (!usable_kinds(o, kinds)) {
		snprintf(si->why, sizeof(si->why),
			 "none of the /proc files asked for can be read here (is /proc mounted?)");
		return si->why;
	}
	return NULL;
}

static int procwalk_setup(struct pmd_sinst *si)
{
	const struct procwalk_opts *o = si->opts;
	struct procwalk_priv *pp;
	unsigned k, asked = 0;

	for (k = 0; k < K_COUNT; k++)
		asked += o->kind[k];
	if (!asked) {
		snprintf(si->why, sizeof(si->why),
			 "nothing to read: smaps, smaps-rollup, pagemap and numa-maps are all off");
		return -EINVAL;
	}
	pp = calloc(1, sizeof(*pp));
	if (!pp)
		return -ENOMEM;
	pp->o = o;
	pp->nkinds = usable_kinds(o, pp->kinds);
	pp->pfn_hidden = !cap_sys_admin();
	si->priv = pp;
	return pp->nkinds ? 0 : -ENOENT;
}

static void procwalk_teardown(struct pmd_sinst *si)
{
	free(si->priv);
	si->priv = NULL;
}

const struct pmd_stressor pmd_stressor_procwalk = {
	.abi = PMD_STRESSOR_ABI,
	.name = "procwalk",
	.summary = "smaps, smaps_rollup, pagemap and numa_maps readers walking the changing arena",
	.options = procwalk_options,
	.opts_size = sizeof(struct procwalk_opts),
	.metrics = procwalk_metrics,
	.workers = "1",
	.supported = procwalk_supported,
	.setup = procwalk_setup,
	.run = procwalk_run,
	.teardown = procwalk_teardown,
};
