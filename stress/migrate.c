// SPDX-License-Identifier: GPL-2.0
/*
 * migrate: page migration between NUMA nodes under the first-touch storm.
 *
 * The race: a chunk's pages are moved to another node while the storm's
 * workers fault and write them, the verifier reads them and the storm zaps
 * them. Migrating a PMD-mapped huge page replaces the huge PMD with a PMD
 * migration entry (set_pmd_migration_entry()), copies the 2 MiB, and
 * installs the new huge PMD (remove_migration_pmd()); a fault that meets the
 * migration entry must wait for it (pmd_migration_entry_wait()), and
 * MADV_DONTNEED, a PMD split or a racing THP fault must each handle a PMD
 * that is neither none, nor present, nor a page table. That is where "THP
 * migration / PMD migration-entry" bugs lived (kernel BUG in
 * mm/huge_memory.c, zap_huge_pmd() on a migration entry, lost writes when
 * the copy raced a store). Small pages go through the same dance with PTE
 * migration entries.
 *
 * Six ways in: move_pages(2) of a random set of a chunk's pages, and of a
 * whole chunk (the huge page moves as one); mbind(2) with MPOL_MF_MOVE of a
 * chunk's range (migrate_pages() via queue_pages_pmd(), the VMA split by the
 * new policy, then the arena's policy put back); migrate_pages(2) of the
 * whole process; a chunk claimed while idle, moved whole and verified at
 * once; and (heads, off by default) one move_pages of the first page of
 * every chunk, which turns all the arena's huge PMDs into migration entries
 * together for the whole batch copy: the widest window for a fork or a zap
 * to meet one (a fork that copied a writable PMD migration entry restores a
 * writable, exclusive huge page in both processes: "kernel BUG at
 * mm/rmap.c" with DEBUG_VM, a COW leak without). Migration never changes
 * what a page holds, so only the held kind takes ownership; the rest aim at
 * chunks a fault round is writing (the interesting target) and at any other
 * chunk.
 *
 * How to tell it fired: thp_migration_success (huge pages moved whole),
 * thp_migration_split / thp_migration_fail, pgmigrate_success in the vmstat
 * deltas; "raced" counts calls on a chunk in a round; right after each call
 * the pages are asked where they are (move_pages with nodes NULL): "on_node"
 * on the node asked for, "elsewhere" or "absent" when a racing zap or fault
 * got there first (counted, not an error). Lost data shows as LOST_WRITE,
 * STALE or FOREIGN from the storm's verifier, or from the held chunks'.
 *
 * A held chunk is where "elsewhere" is not a race: no fault, zap or remap
 * touches it, so when the kernel said it put a page on the target node and
 * the query right after finds it on another, the kernel said something that
 * is not so: a "misplaced" event (exit 1), one per op, naming the chunk,
 * page and both nodes. The kernel says it two ways. move_pages answers per
 * page: status == target is "moved" (a page it did not get to keeps a value
 * it never writes, see STATUS_UNSET); a shared page (the fork stressor's
 * child) is -EACCES, busy is -EBUSY, and those are refusals, not misplaced.
 * mbind(MPOL_MF_MOVE | MPOL_MF_STRICT) answers for the whole range: 0 says
 * every page it chose to move is on the node (one it could not isolate or
 * move is EIO), but it skips a page mapped by another process without a
 * word, so its check needs every page present and mapped by this process
 * alone before the call (pagemap) and after it, and no fork or clone in
 * between (the last PID did not move); and since it takes a large folio's
 * sharers from one of its pages, the chunk must be one PMD-mapped huge page
 * or small pages only (kpageflags, root: see chunk_small_pages()). For both, other movers must have
 * stayed out: no other migration call of this stressor on the chunk (any
 * worker, see call_begin()), no collapse (khugepaged and MADV_COLLAPSE
 * choose the huge page's node from a scan that may predate the move, so a
 * chunk that became PMD-mapped is not judged), NUMA balancing and demotion
 * off. Compaction stays within a node; reclaim makes a page absent.
 *
 * Not checked: where the pages of a chunk a round is writing end up (a
 * racing fault allocates by the policy, a zap frees: counted only), and
 * migrate_pages(2) of the process. That one has no MPOL_MF_STRICT: a page it
 * cannot isolate (compaction or reclaim has it off the LRU for a moment) is
 * skipped without a word, and its return counts only pages that failed
 * after isolation, so a page it left behind cannot be told from one it
 * lost; its refusals are counted, its data is checked by the verifiers.
 */
#include <pmdstress/stressor.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pmdstress/numasys.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SCAN_MAX 4096u	    /* chunks looked at for a round to race */
#define NODEMASK_BITS 1024u /* get_mempolicy wants room for every possible node */
#define LONG_BITS (8 * sizeof(unsigned long))
/* move_pages writes no status for pages it did not get to (a batch failed): this stays */
#define STATUS_UNSET INT_MIN
/* /proc/self/pagemap (Documentation/admin-guide/mm/pagemap.rst) */
#define PM_PRESENT (1ull << 63)
#define PM_EXCLUSIVE (1ull << 56) /* mapped by this process only (Linux 4.2) */
#define PM_PFN_MASK ((1ull << 55) - 1)
#define KPF_COMPOUND ((1ull << 15) | (1ull << 16)) /* head or tail of a large folio */

enum { KIND_PAGES, KIND_CHUNK, KIND_MBIND, KIND_PROCESS, KIND_HELD, KIND_HEADS, KIND_COUNT };

struct migrate_opts {
	uint64_t rate;
	uint64_t weight[KIND_COUNT];
	uint64_t set;
	uint64_t race;
	uint64_t held_mbind;
};

#define O(f) offsetof(struct migrate_opts, f)
static const struct pmd_option migrate_options[] = {
	{ "rate", PMD_OPT_UINT, O(rate), "100", 0, 1000000, NULL,
	  "migration calls per second, all workers together (0: as fast as possible)" },
	{ "pages", PMD_OPT_UINT, O(weight[KIND_PAGES]), "4", 0, 1000, NULL,
	  "weight of move_pages of a random set of a chunk's pages" },
	{ "chunk", PMD_OPT_UINT, O(weight[KIND_CHUNK]), "8", 0, 1000, NULL,
	  "weight of move_pages of all 512 pages of a chunk (a huge page moves whole)" },
	{ "mbind", PMD_OPT_UINT, O(weight[KIND_MBIND]), "8", 0, 1000, NULL,
	  "weight of mbind MPOL_BIND + MPOL_MF_MOVE of a chunk's range (then the arena's "
	  "policy is set back)" },
	{ "process", PMD_OPT_UINT, O(weight[KIND_PROCESS]), "1", 0, 1000, NULL,
	  "weight of migrate_pages of the whole process to one node" },
	{ "held", PMD_OPT_UINT, O(weight[KIND_HELD]), "8", 0, 1000, NULL,
	  "weight of claiming an idle chunk, moving it whole and verifying it at once" },
	{ "held-mbind", PMD_OPT_UINT, O(held_mbind), "50", 0, 100, NULL,
	  "percent of held moves made with mbind MPOL_BIND + MPOL_MF_MOVE | MPOL_MF_STRICT "
	  "instead of move_pages (then the arena's policy is set back)" },
	{ "heads", PMD_OPT_UINT, O(weight[KIND_HEADS]), "0", 0, 1000, NULL,
	  "weight of one move_pages of the first page of every chunk: the huge pages move "
	  "whole, and are all PMD migration entries at once while the batch is copied "
	  "(counted as chunks)" },
	{ "set", PMD_OPT_UINT, O(set), "32", 1, 512, NULL,
	  "pages in one random set (pages = N)" },
	{ "race", PMD_OPT_UINT, O(race), "75", 0, 100, NULL,
	  "percent of calls aimed at a chunk whose fault round is under way, when there is one" },
	PMD_OPT_END,
};

enum {
	M_OPS,
	M_PAGES,
	M_CHUNKS,
	M_MBINDS,
	M_PROCESSES,
	M_HELD,
	M_ON_NODE,
	M_ELSEWHERE,
	M_ABSENT,
	M_REFUSED,
	M_RACED,
	M_ERRORS,
	L_PAGES,
	L_CHUNK,
	L_MBIND,
	L_PROCESS,
};

static const struct pmd_metric migrate_metrics[] = {
	[M_OPS] = { "ops", PMD_METRIC_COUNT, "migration calls of every kind" },
	[M_PAGES] = { "pages", PMD_METRIC_COUNT, "move_pages calls on a random page set",
		      PMD_BETTER_NONE },
	/* heads calls count here too: the metric table is full (PMD_MAX_METRICS) */
	[M_CHUNKS] = { "chunks", PMD_METRIC_COUNT,
		       "move_pages calls on whole chunks (all 512 pages of one, or the first "
		       "page of every one: heads)",
		       PMD_BETTER_NONE },
	[M_MBINDS] = { "mbinds", PMD_METRIC_COUNT, "mbind MPOL_MF_MOVE calls on a chunk",
		       PMD_BETTER_NONE },
	[M_PROCESSES] = { "processes", PMD_METRIC_COUNT, "migrate_pages calls on the process",
			  PMD_BETTER_NONE },
	[M_HELD] = { "held", PMD_METRIC_COUNT, "idle chunks claimed, moved whole and verified",
		     PMD_BETTER_NONE },
	[M_ON_NODE] = { "on_node", PMD_METRIC_COUNT,
			"pages on the node asked for, right after the call", PMD_BETTER_NONE },
	[M_ELSEWHERE] = { "elsewhere", PMD_METRIC_COUNT,
			  "pages on another node right after (a racing fault or zap, or a refusal)",
			  PMD_BETTER_NONE },
	[M_ABSENT] = { "absent", PMD_METRIC_COUNT,
		       "pages not present right after (never faulted, or zapped meanwhile)",
		       PMD_BETTER_NONE },
	[M_REFUSED] = { "refused", PMD_METRIC_COUNT,
			"pages the kernel said it could not move (busy, no memory, shared)",
			PMD_BETTER_NONE },
	[M_RACED] = { "raced", PMD_METRIC_COUNT, "calls on a chunk whose fault round was under way",
		      PMD_BETTER_NONE },
	[M_ERRORS] = { "errors", PMD_METRIC_COUNT, "calls that failed as a whole (ENOMEM, ...)",
		       PMD_BETTER_NONE },
	[L_PAGES] = { "move_pages", PMD_METRIC_LATENCY, "move_pages of a random page set" },
	[L_CHUNK] = { "move_chunk", PMD_METRIC_LATENCY,
		      "move_pages of a whole chunk, or of every chunk's first page (heads)" },
	[L_MBIND] = { "mbind_move", PMD_METRIC_LATENCY, "mbind MPOL_MF_MOVE of a chunk's range" },
	[L_PROCESS] = { "migrate_pages", PMD_METRIC_LATENCY, "migrate_pages of the process" },
	{ NULL },
};

struct migrate_priv {
	const struct migrate_opts *o;
	uint64_t weight_sum;
	int nodes[64]; /* nodes this process may allocate on */
	unsigned nnodes;
	/* per worker (atomics): what its migration call is on now, see call_begin() */
	unsigned nworkers;
	uint32_t *on;	   /* chunk index + 1, ON_ALL, or 0 between calls */
	uint32_t *held;	   /* chunk index + 1 of the held chunk it is checking, or 0 */
	uint32_t *spoiled; /* another call touched that chunk meanwhile */
};

#define ON_ALL UINT32_MAX /* a call that may move any chunk's pages (process, heads) */

/* One worker's buffers: a chunk's worth of addresses, targets and answers. */
struct migrate_worker {
	void *pages[PMD_CHUNK_PAGES];
	int nodes[PMD_CHUNK_PAGES];
	int status[PMD_CHUNK_PAGES];
	struct pmd_chunk *heads[PMD_CHUNK_PAGES]; /* whose first page pages[i] is (heads) */
	uint64_t moved[PMD_CHUNK_PAGES / 64];	  /* held: the kernel said pages[i] is on target */
	uint64_t pm[PMD_CHUNK_PAGES];		  /* held: the chunk's pagemap entries */
	int pagemap_fd;
	int kpageflags_fd; /* root only; -1: no PTE-mapped held mbind is judged */
	unsigned process_turn;
};

/*
 * What else could move a held chunk's pages than the call: read before it,
 * and after the query, by watch_begin() and check_held_placement().
 */
struct held_watch {
	bool alone;		/* no other migration call was on the chunk at the start */
	bool exclusive;		/* mbind: every page present and mapped here alone */
	long last_pid;		/* mbind: a fork meanwhile would share the pages */
	enum pmd_thp_state thp; /* a collapse makes a chunk PMD-mapped */
};

/* ---- nodes ------------------------------------------------------------------ */

/* The nodes this process may allocate on (its cpuset's mems); -errno on failure. */
static int mems_allowed(int *nodes, unsigned max, unsigned *n)
{
	unsigned long mask[NODEMASK_BITS / LONG_BITS];
	unsigned i;

	memset(mask, 0, sizeof(mask));
	*n = 0;
	if (pmd_get_mempolicy(NULL, mask, NODEMASK_BITS, NULL, MPOL_F_MEMS_ALLOWED))
		return -errno;
	for (i = 0; i < NODEMASK_BITS && *n < max; i++)
		if (mask[i / LONG_BITS] & (1ul << (i % LONG_BITS)))
			nodes[(*n)++] = (int)i;
	return 0;
}

/* The node after @node in the allowed list (a random one if @node is unknown). */
static int next_node(struct pmd_worker *w, const struct migrate_priv *mp, int node)
{
	unsigned i;

	for (i = 0; node >= 0 && i < mp->nnodes; i++)
		if (mp->nodes[i] == node)
			return mp->nodes[(i + 1) % mp->nnodes];
	return mp->nodes[pmd_rand_below(w, mp->nnodes)];
}

/* Where the first present page of @pages is now, or -1. */
static int node_of(struct migrate_worker *mw, unsigned n)
{
	unsigned i;

	if (pmd_move_pages(0, n, mw->pages, NULL, mw->status, 0))
		return -1;
	for (i = 0; i < n; i++)
		if (mw->status[i] >= 0)
			return mw->status[i];
	return -1;
}

/* Ask where @n pages are, right after moving them to @target, and count. */
static void count_placement(struct pmd_worker *w, struct migrate_worker *mw, unsigned n,
			    int target)
{
	uint64_t on = 0, other = 0, absent = 0;
	unsigned i;

	if (pmd_move_pages(0, n, mw->pages, NULL, mw->status, 0))
		return;
	for (i = 0; i < n; i++) {
		if (mw->status[i] == target)
			on++;
		else if (mw->status[i] >= 0)
			other++;
		else
			absent++; /* -ENOENT: not present; -EFAULT: zero page or no mapping */
	}
	pmd_count(w, M_ON_NODE, on);
	pmd_count(w, M_ELSEWHERE, other);
	pmd_count(w, M_ABSENT, absent);
}

/*
 * move_pages' per-page answers: the ones it could not move (absent is not a
 * refusal; a page it did not get to, STATUS_UNSET, is).
 */
static void count_refused(struct pmd_worker *w, struct migrate_worker *mw, unsigned n)
{
	uint64_t refused = 0;
	unsigned i;

	for (i = 0; i < n; i++)
		if (mw->status[i] < 0 && mw->status[i] != -ENOENT && mw->status[i] != -EFAULT)
			refused++;
	pmd_count(w, M_REFUSED, refused);
}

/* A failed call: counted; one the kernel does not document for this use is reported once. */
static void call_failed(struct pmd_worker *w, int err, const char *what, int target)
{
	pmd_count(w, M_ERRORS, 1);
	/* no memory on the target node; a range moving under us (mremap) */
	if (err == ENOMEM || err == EFAULT || err == EBUSY || err == EAGAIN)
		return;
	if (pmd_counter_read(&w->stats->counter[M_ERRORS]) == 1)
		pmd_worker_error(w, -err, "migrate: %s to node %d", what, target);
}

/*
 * Every migration call says what it is on (@on: chunk index + 1, or ON_ALL)
 * for as long as it runs, so that a held chunk's check can tell whether
 * another worker's call may have moved its pages. Dekker's handshake, all
 * sequentially consistent: a call stores on[] then loads held[]; a check
 * stores held[] then loads on[]. Of two that meet, at least one sees the
 * other: the call marks the check spoiled before it moves anything, or the
 * check sees the call in flight. Without SEQ_CST the store could pass the
 * load and both miss.
 */
static void call_begin(struct pmd_worker *w, struct migrate_priv *mp, uint32_t on)
{
	unsigned i;

	__atomic_store_n(&mp->on[w->index], on, __ATOMIC_SEQ_CST);
	for (i = 0; i < mp->nworkers; i++) {
		uint32_t h = __atomic_load_n(&mp->held[i], __ATOMIC_SEQ_CST);

		if (h && i != w->index && (on == ON_ALL || on == h))
			__atomic_store_n(&mp->spoiled[i], 1, __ATOMIC_SEQ_CST);
	}
}

static void call_end(struct pmd_worker *w, struct migrate_priv *mp)
{
	__atomic_store_n(&mp->on[w->index], 0, __ATOMIC_RELEASE);
}

/* Start checking held chunk @c: false if another worker's call is on it right now. */
static bool check_begin(struct pmd_worker *w, struct migrate_priv *mp, const struct pmd_chunk *c)
{
	uint32_t me = c->index + 1;
	bool alone = true;
	unsigned i;

	__atomic_store_n(&mp->spoiled[w->index], 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&mp->held[w->index], me, __ATOMIC_SEQ_CST);
	for (i = 0; i < mp->nworkers; i++) {
		uint32_t on = __atomic_load_n(&mp->on[i], __ATOMIC_SEQ_CST);

		if (i != w->index && (on == ON_ALL || on == me))
			alone = false;
	}
	return alone;
}

/* Stop checking: true if no other call touched the chunk since check_begin(). */
static bool check_end(struct pmd_worker *w, struct migrate_priv *mp)
{
	bool spoiled = __atomic_load_n(&mp->spoiled[w->index], __ATOMIC_SEQ_CST);

	__atomic_store_n(&mp->held[w->index], 0, __ATOMIC_RELEASE);
	return !spoiled;
}

/* A sysctl-style file reads as "0"/"false" (or is absent: the feature is not there). */
static bool knob_off(const char *path)
{
	char buf[16] = "";
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return errno == ENOENT;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 && (buf[0] == '0' || !strncmp(buf, "false", 5));
}

/*
 * No present page of the chunk (mw->pm, just read) is a piece of a large
 * folio (/proc/kpageflags). mbind decides "shared, leave it" for a whole
 * folio from one page's mapcount (folio_estimated_sharers() in 6.1,
 * folio_likely_mapped_shared() later): a PTE-mapped piece of a THP that
 * fork and copy-on-write split, whose first page this process no longer
 * maps, is skipped without a word although pagemap calls every page of the
 * chunk exclusive (seen in the 6.1 guest: page 511 of a chunk left on node 0
 * after mbind STRICT to node 1 returned 0). Unknown (not root): false.
 */
static bool chunk_small_pages(const struct migrate_worker *mw)
{
	unsigned i;

	if (mw->kpageflags_fd < 0)
		return false;
	for (i = 0; i < PMD_CHUNK_PAGES; i++) {
		uint64_t pfn = mw->pm[i] & PM_PFN_MASK, f = 0;

		if (!(mw->pm[i] & PM_PRESENT))
			continue;
		if (!pfn || pread(mw->kpageflags_fd, &f, sizeof(f), (off_t)(pfn * sizeof(f))) !=
				    (ssize_t)sizeof(f) ||
		    (f & KPF_COMPOUND))
			return false;
	}
	return true;
}

/*
 * Every page of the chunk at @addr present and mapped by this process alone
 * (pagemap), and either one PMD-mapped huge page (@thp: one folio, whose
 * mapcount is this mapping's) or small pages only: what mbind vouches for.
 */
static bool chunk_exclusive(struct migrate_worker *mw, const char *addr, enum pmd_thp_state thp)
{
	off_t at = (off_t)(((uintptr_t)addr >> PMD_PAGE_SHIFT) * sizeof(mw->pm[0]));
	unsigned i;

	if (mw->pagemap_fd < 0 ||
	    pread(mw->pagemap_fd, mw->pm, sizeof(mw->pm), at) != (ssize_t)sizeof(mw->pm))
		return false;
	for (i = 0; i < PMD_CHUNK_PAGES; i++)
		if ((mw->pm[i] & (PM_PRESENT | PM_EXCLUSIVE)) != (PM_PRESENT | PM_EXCLUSIVE))
			return false;
	return thp == PMD_THPS_THP || chunk_small_pages(mw);
}

/*
 * The PID the kernel handed out last (/proc/loadavg's last field), or -1:
 * every fork and every thread moves it, so an unchanged value means no new
 * process shared this one's pages in between.
 */
static long last_pid(void)
{
	char buf[128], *p;
	int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ' ');
	return p ? strtol(p + 1, NULL, 10) : -1;
}

/*
 * Before a held chunk's move. The order matters for mbind: the last PID is
 * read before the pagemap, so a fork that shared the pages after the
 * pagemap said "alone" has a PID the second reading sees, or (if its PID
 * comes later) has not run yet and still shares them when the pagemap is
 * read again. A fork that fails between copying the page tables and
 * getting its PID (ENOMEM) could slip through; nothing else can.
 */
static void watch_begin(struct pmd_worker *w, struct migrate_priv *mp, struct migrate_worker *mw,
			struct pmd_chunk *c, const char *addr, bool mbind, struct held_watch *hw)
{
	hw->last_pid = mbind ? last_pid() : 0;
	hw->thp = pmd_thp_probe(w->si->run, c, NULL);
	hw->exclusive = !mbind || chunk_exclusive(mw, addr, hw->thp);
	hw->alone = check_begin(w, mp, c);
}

/* After the query: nothing but the call itself can have moved the chunk's pages. */
static bool watch_quiet(struct pmd_worker *w, struct migrate_worker *mw, struct pmd_chunk *c,
			const char *addr, bool mbind, const struct held_watch *hw)
{
	enum pmd_thp_state thp = pmd_thp_probe(w->si->run, c, NULL);

	/* a PTE-mapped chunk that is PMD-mapped now was collapsed meanwhile */
	if (hw->thp == PMD_THPS_UNKNOWN || thp == PMD_THPS_UNKNOWN ||
	    (thp == PMD_THPS_THP && hw->thp != PMD_THPS_THP))
		return false;
	if (mbind &&
	    (!chunk_exclusive(mw, addr, thp) || hw->last_pid < 0 || last_pid() != hw->last_pid))
		return false;
	return knob_off("/proc/sys/kernel/numa_balancing") &&
	       knob_off("/sys/kernel/mm/numa/demotion_enabled");
}

/* ---- choosing a chunk ---------------------------------------------------------- */

/* A chunk a round is writing (if asked and there is one), else any chunk. */
static struct pmd_chunk *pick_chunk(struct pmd_worker *w, const struct migrate_priv *mp)
{
	struct pmd_arena *a = w->si->arena;
	unsigned start = (unsigned)pmd_rand_below(w, a->nchunks), i;
	unsigned scan = a->nchunks < SCAN_MAX ? a->nchunks : SCAN_MAX;

	if (pmd_rand_below(w, 100) < mp->o->race) {
		for (i = 0; i < scan; i++) {
			struct pmd_chunk *c = &a->chunks[(start + i) % a->nchunks];

			if (pmd_chunk_state(c) == PMD_CHUNK_ROUND && !pmd_chunk_retired(c))
				return c;
		}
	}
	return &a->chunks[start];
}

/* Its address now, or NULL if retired; the calls run outside the read section. */
static char *chunk_addr(struct pmd_chunk *c)
{
	char *addr = pmd_chunk_enter(c);

	if (addr)
		pmd_chunk_exit(c);
	return addr;
}

/*
 * Claim an idle chunk with recorded contents (zap's habit): one the storm
 * is about to claim (CLOSING) is left to it, one no round has written yet
 * is given back untouched.
 */
static struct pmd_chunk *hold_chunk(struct pmd_worker *w)
{
	struct pmd_arena *a = w->si->arena;

	return pmd_arena_hold_settled(a, (unsigned)pmd_rand_below(w, a->nchunks), SCAN_MAX);
}

/* ---- the calls ------------------------------------------------------------------- */

/* Fill mw->pages with @n distinct pages of the chunk at @addr (an odd stride visits each once). */
static void page_set(struct pmd_worker *w, struct migrate_worker *mw, char *addr, unsigned n)
{
	unsigned p = 0, stride = 1, k;

	if (n < PMD_CHUNK_PAGES) {
		p = (unsigned)pmd_rand_below(w, PMD_CHUNK_PAGES);
		stride = (unsigned)pmd_rand_below(w, PMD_CHUNK_PAGES / 2) * 2 + 1;
	}
	for (k = 0; k < n; k++, p = (p + stride) % PMD_CHUNK_PAGES)
		mw->pages[k] = addr + ((size_t)p << PMD_PAGE_SHIFT);
}

/* Held chunk just moved by move_pages: remember the pages it said are on @target. */
static void held_moved(struct migrate_worker *mw, unsigned n, int target)
{
	unsigned i;

	memset(mw->moved, 0, sizeof(mw->moved));
	for (i = 0; i < n; i++)
		if (mw->status[i] == target)
			mw->moved[i / 64] |= 1ull << (i % 64);
}

/*
 * The query right after (mw->status now) against what the kernel said
 * (mw->moved): a page it put on @target that is on another node, with
 * nothing else that could have moved it (see the opening comment), is one
 * event per op (exit 1). Ends the check_begin() of watch_begin().
 */
static void check_held_placement(struct pmd_worker *w, struct migrate_priv *mp,
				 struct migrate_worker *mw, struct pmd_chunk *c, const char *addr,
				 unsigned n, int target, bool mbind, const struct held_watch *hw)
{
	bool untouched = check_end(w, mp);
	unsigned i, wrong = 0, first = 0;
	struct pmd_event ev;
	uint64_t pfn = 0;

	for (i = 0; i < n; i++)
		if ((mw->moved[i / 64] >> (i % 64) & 1) && mw->status[i] >= 0 &&
		    mw->status[i] != target && !wrong++)
			first = i;
	if (!wrong || !untouched || !hw->alone || !hw->exclusive ||
	    !watch_quiet(w, mw, c, addr, mbind, hw))
		return;
	memset(&ev, 0, sizeof(ev));
	ev.kind = PMD_EV_MISPLACED;
	ev.t_ns = pmd_now_ns();
	ev.worker = (int)w->id;
	ev.stressor = w->si->st->name;
	pmd_event_at_chunk(&ev, c, first, 0);
	ev.thp = pmd_thp_probe(w->si->run, c, &pfn);
	ev.pfn = pfn;
	ev.expected = (uint64_t)target;
	ev.actual = (uint64_t)mw->status[first];
	snprintf(ev.text, sizeof(ev.text),
		 "migrate: %s put held chunk %u on node %d, yet right after %u of its pages are on "
		 "another node (page %u on node %d) with no other migration, fork, collapse, NUMA "
		 "balancing or demotion that could have moved them",
		 mbind ? "mbind MPOL_MF_MOVE|MPOL_MF_STRICT" : "move_pages", c->index, target,
		 wrong, first, mw->status[first]);
	pmd_event_post(w->si->run, &ev);
}

static void move_set(struct pmd_worker *w, struct migrate_priv *mp, struct migrate_worker *mw,
		     struct pmd_chunk *c, char *addr, unsigned n, bool held)
{
	struct held_watch hw;
	int target, rc;
	uint64_t t0;
	unsigned i;

	page_set(w, mw, addr, n);
	target = next_node(w, mp, node_of(mw, n));
	for (i = 0; i < n; i++) {
		mw->nodes[i] = target;
		mw->status[i] = STATUS_UNSET;
	}
	if (!held && pmd_chunk_state(c) == PMD_CHUNK_ROUND)
		pmd_count(w, M_RACED, 1);
	if (held)
		watch_begin(w, mp, mw, c, addr, false, &hw);
	call_begin(w, mp, c->index + 1);
	t0 = pmd_now_ns();
	rc = (int)pmd_move_pages(0, n, mw->pages, mw->nodes, mw->status, MPOL_MF_MOVE);
	pmd_latency(w, n == PMD_CHUNK_PAGES ? L_CHUNK : L_PAGES, pmd_now_ns() - t0);
	pmd_chunk_log(c, t0, n == PMD_CHUNK_PAGES ? PMD_OP_MIGRATE : PMD_OP_MIGRATE_PAGES, w->id,
		      (uint32_t)target);
	pmd_count(w, M_OPS, 1);
	pmd_count(w, held ? M_HELD : n == PMD_CHUNK_PAGES ? M_CHUNKS : M_PAGES, 1);
	call_end(w, mp);
	if (rc < 0) {
		if (held)
			check_end(w, mp);
		call_failed(w, errno, "move_pages", target);
		return;
	}
	count_refused(w, mw, n);
	if (held)
		held_moved(mw, n, target);
	count_placement(w, mw, n, target);
	if (held)
		check_held_placement(w, mp, mw, c, addr, n, target, false, &hw);
}

/*
 * @held: the chunk is held and its placement checked, which needs the
 * kernel's word: MPOL_MF_STRICT makes a page it could not isolate or move
 * an EIO. Otherwise pages that cannot move are not an error here.
 */
static void mbind_move(struct pmd_worker *w, struct migrate_priv *mp, struct migrate_worker *mw,
		       struct pmd_chunk *c, char *addr, bool held)
{
	unsigned long mask[PMD_MAX_NODES / LONG_BITS];
	int target, rc, err = 0;
	struct held_watch hw;
	uint64_t t0;

	page_set(w, mw, addr, PMD_CHUNK_PAGES);
	target = next_node(w, mp, node_of(mw, PMD_CHUNK_PAGES));
	memset(mask, 0, sizeof(mask));
	mask[(unsigned)target / LONG_BITS] |= 1ul << ((unsigned)target % LONG_BITS);
	if (!held && pmd_chunk_state(c) == PMD_CHUNK_ROUND)
		pmd_count(w, M_RACED, 1);
	if (held)
		watch_begin(w, mp, mw, c, addr, true, &hw);
	call_begin(w, mp, c->index + 1);
	t0 = pmd_now_ns();
	rc = pmd_mbind(addr, PMD_CHUNK_SIZE, MPOL_BIND, mask, PMD_MAX_NODES + 1,
		       MPOL_MF_MOVE | (held ? MPOL_MF_STRICT : 0));
	if (rc)
		err = errno;
	pmd_latency(w, L_MBIND, pmd_now_ns() - t0);
	pmd_chunk_log(c, t0, PMD_OP_MBIND_MOVE, w->id, (uint32_t)target);
	pmd_count(w, M_OPS, 1);
	pmd_count(w, held ? M_HELD : M_MBINDS, 1);
	/* the range goes back to the arena's policy (the VMA merges again) */
	rc = pmd_arena_policy(w->si->arena, addr, PMD_CHUNK_SIZE);
	if (rc && rc != -EFAULT && rc != -ENOMEM)
		pmd_worker_error(w, rc, "migrate: the arena's memory policy back on chunk %u",
				 c->index);
	/*
	 * EIO: some pages could not be isolated or moved (another migration
	 * or a zap had them). Without MPOL_MF_STRICT newer kernels say 0, but
	 * 6.1 says EIO; either way the pages left behind show as elsewhere.
	 */
	call_end(w, mp);
	if (err && err != EIO) {
		if (held)
			check_end(w, mp);
		call_failed(w, err, "mbind MPOL_MF_MOVE", target);
		return;
	}
	count_placement(w, mw, PMD_CHUNK_PAGES, target);
	if (held) {
		/* 0: every page is on @target (bar shared ones, see hw.exclusive); EIO: no word */
		memset(mw->moved, err ? 0 : 0xff, sizeof(mw->moved));
		check_held_placement(w, mp, mw, c, addr, PMD_CHUNK_PAGES, target, true, &hw);
	}
}

static void migrate_process(struct pmd_worker *w, struct migrate_priv *mp,
			    struct migrate_worker *mw)
{
	unsigned long from[PMD_MAX_NODES / LONG_BITS], to[PMD_MAX_NODES / LONG_BITS];
	int target = mp->nodes[mw->process_turn++ % mp->nnodes];
	unsigned i;
	uint64_t t0;
	long rc;

	memset(from, 0, sizeof(from));
	memset(to, 0, sizeof(to));
	for (i = 0; i < mp->nnodes; i++)
		if (mp->nodes[i] != target && mp->nodes[i] < PMD_MAX_NODES)
			from[(unsigned)mp->nodes[i] / LONG_BITS] |=
				1ul << ((unsigned)mp->nodes[i] % LONG_BITS);
	to[(unsigned)target / LONG_BITS] |= 1ul << ((unsigned)target % LONG_BITS);
	call_begin(w, mp, ON_ALL);
	t0 = pmd_now_ns();
	rc = pmd_migrate_pages(0, PMD_MAX_NODES + 1, from, to);
	pmd_latency(w, L_PROCESS, pmd_now_ns() - t0);
	call_end(w, mp);
	pmd_count(w, M_OPS, 1);
	pmd_count(w, M_PROCESSES, 1);
	if (rc < 0)
		call_failed(w, errno, "migrate_pages of the process", target);
	else
		pmd_count(w, M_REFUSED, (uint64_t)rc); /* pages it could not move */
}

/*
 * One move_pages of the first page of up to 512 chunks, from a random one
 * on: each huge page moves whole, and migrate_pages_batch() unmaps every
 * folio of a batch before it copies the first, so the arena's huge PMDs
 * are PMD migration entries all at once, for as long as the whole batch
 * takes to copy. That is the state fork's copy_huge_pmd(), a zap or a
 * fault meets only in a short window when one huge page moves alone.
 */
static void move_heads(struct pmd_worker *w, struct migrate_priv *mp, struct migrate_worker *mw)
{
	struct pmd_arena *a = w->si->arena;
	unsigned start = (unsigned)pmd_rand_below(w, a->nchunks), n = 0, i;
	int target, rc;
	uint64_t t0;

	for (i = 0; i < a->nchunks && n < PMD_CHUNK_PAGES; i++) {
		struct pmd_chunk *c = &a->chunks[(start + i) % a->nchunks];
		char *addr = chunk_addr(c);

		if (!addr)
			continue;
		mw->heads[n] = c;
		mw->pages[n++] = addr;
	}
	if (!n)
		return;
	target = next_node(w, mp, node_of(mw, n));
	for (i = 0; i < n; i++) {
		mw->nodes[i] = target;
		if (pmd_chunk_state(mw->heads[i]) == PMD_CHUNK_ROUND)
			pmd_count(w, M_RACED, 1);
	}
	call_begin(w, mp, ON_ALL);
	t0 = pmd_now_ns();
	rc = (int)pmd_move_pages(0, n, mw->pages, mw->nodes, mw->status, MPOL_MF_MOVE);
	pmd_latency(w, L_CHUNK, pmd_now_ns() - t0);
	call_end(w, mp);
	for (i = 0; i < n; i++)
		pmd_chunk_log(mw->heads[i], t0, PMD_OP_MIGRATE, w->id, (uint32_t)target);
	pmd_count(w, M_OPS, 1);
	pmd_count(w, M_CHUNKS, 1);
	if (rc < 0) {
		call_failed(w, errno, "move_pages of every chunk's first page", target);
		return;
	}
	count_refused(w, mw, n);
	count_placement(w, mw, n, target);
}

/*
 * Claim an idle chunk, move it whole (move_pages, or mbind for held-mbind
 * percent of them), and check right away where it went and that it holds
 * what it held.
 */
static bool move_held(struct pmd_worker *w, struct migrate_priv *mp, struct migrate_worker *mw)
{
	struct pmd_chunk *c = hold_chunk(w);
	char *addr;

	if (!c)
		return false;
	addr = chunk_addr(c);
	if (addr) {
		if (pmd_rand_below(w, 100) < mp->o->held_mbind)
			mbind_move(w, mp, mw, c, addr, true);
		else
			move_set(w, mp, mw, c, addr, PMD_CHUNK_PAGES, true);
		if (w->si->cfg->verify && (addr = pmd_chunk_enter(c))) {
			unsigned bad = pmd_verify_pages(w, c, addr, 0, PMD_CHUNK_PAGES);

			pmd_chunk_exit(c);
			pmd_chunk_log(c, pmd_now_ns(), PMD_OP_VERIFY, w->id, bad);
		}
	}
	pmd_chunk_release(c, PMD_CHUNK_IDLE);
	return addr != NULL;
}

static unsigned pick_kind(struct pmd_worker *w, const struct migrate_priv *mp)
{
	return pmd_pick_weighted(w, mp->o->weight, KIND_COUNT, mp->weight_sum);
}

static void migrate_once(struct pmd_worker *w, struct migrate_priv *mp, struct migrate_worker *mw)
{
	unsigned kind = pick_kind(w, mp);
	struct pmd_chunk *c;
	char *addr;

	if (kind == KIND_PROCESS) {
		migrate_process(w, mp, mw);
		return;
	}
	if (kind == KIND_HEADS) {
		move_heads(w, mp, mw);
		return;
	}
	if (kind == KIND_HELD) {
		if (move_held(w, mp, mw))
			return;
		kind = KIND_CHUNK; /* nothing idle with contents: move one anyway */
	}
	c = pick_chunk(w, mp);
	addr = chunk_addr(c);
	if (!addr)
		return;
	if (kind == KIND_MBIND)
		mbind_move(w, mp, mw, c, addr, false);
	else
		move_set(w, mp, mw, c, addr,
			 kind == KIND_CHUNK ? PMD_CHUNK_PAGES : (unsigned)mp->o->set, false);
}

static int migrate_run(struct pmd_worker *w)
{
	struct migrate_priv *mp = w->si->priv;
	struct migrate_worker *mw = calloc(1, sizeof(*mw));
	uint64_t next = pmd_now_ns();

	if (!mw)
		return -ENOMEM;
	/* unreadable: no held mbind is judged (chunk_exclusive() says no) */
	mw->pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	mw->kpageflags_fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	while (!pmd_should_stop(w)) {
		migrate_once(w, mp, mw);
		pmd_beat(w);
		if (!pmd_pace(w, &next, mp->o->rate))
			break;
	}
	if (mw->pagemap_fd >= 0)
		close(mw->pagemap_fd);
	if (mw->kpageflags_fd >= 0)
		close(mw->kpageflags_fd);
	free(mw);
	return 0;
}

/* ---- can it run here -------------------------------------------------------------- */

static const char *migrate_supported(struct pmd_sinst *si)
{
	const struct migrate_opts *o = si->opts;
	int nodes[64], status = 0;
	uint64_t sum = 0;
	void *page = &status;
	unsigned n, k;
	int err;

	for (k = 0; k < KIND_COUNT; k++)
		sum += o->weight[k];
	if (!sum)
		return NULL; /* the user's mistake, wherever it runs: setup refuses it (exit 2) */
	err = mems_allowed(nodes, 64, &n);
	if (err == -ENOSYS) {
		snprintf(si->why, sizeof(si->why), "kernel without NUMA (get_mempolicy: ENOSYS)");
		return si->why;
	}
	if (err) {
		snprintf(si->why, sizeof(si->why), "cannot read the nodes this process may use: %s",
			 strerror(-err));
		return si->why;
	}
	if (n < 2) {
		snprintf(si->why, sizeof(si->why),
			 "1 node: migration needs two NUMA nodes with memory (this process may use "
			 "node %d only; try tools/vm/pmd-vm --nodes 2)", n ? nodes[0] : 0);
		return si->why;
	}
	if (pmd_move_pages(0, 1, &page, NULL, &status, 0) && errno == ENOSYS) {
		snprintf(si->why, sizeof(si->why),
			 "kernel without page migration (move_pages: ENOSYS, CONFIG_MIGRATION)");
		return si->why;
	}
	return NULL;
}

static int migrate_setup(struct pmd_sinst *si)
{
	const struct migrate_opts *o = si->opts;
	struct migrate_priv *mp;
	uint64_t sum = 0;
	unsigned k;
	int err;

	for (k = 0; k < KIND_COUNT; k++)
		sum += o->weight[k];
	if (!sum) {
		snprintf(si->why, sizeof(si->why), "every weight is 0 (set --migrate-pages, "
						   "--migrate-chunk, --migrate-mbind, --migrate-process, "
						   "--migrate-held or --migrate-heads above 0)");
		return -EINVAL;
	}
	mp = calloc(1, sizeof(*mp));
	if (!mp)
		return -ENOMEM;
	mp->o = o;
	mp->weight_sum = sum;
	si->priv = mp;
	err = mems_allowed(mp->nodes, 64, &mp->nnodes);
	if (err || mp->nnodes < 2)
		return err ? err : -ENODEV;
	/* mbind and migrate_pages masks here hold nodes below PMD_MAX_NODES */
	while (mp->nnodes && mp->nodes[mp->nnodes - 1] >= PMD_MAX_NODES)
		mp->nnodes--;
	if (mp->nnodes < 2)
		return -ERANGE;
	mp->nworkers = si->nworkers;
	mp->on = calloc(si->nworkers + 1, sizeof(*mp->on));
	mp->held = calloc(si->nworkers + 1, sizeof(*mp->held));
	mp->spoiled = calloc(si->nworkers + 1, sizeof(*mp->spoiled));
	if (!mp->on || !mp->held || !mp->spoiled)
		return -ENOMEM;
	return 0;
}

static void migrate_teardown(struct pmd_sinst *si)
{
	struct migrate_priv *mp = si->priv;

	if (!mp)
		return;
	free(mp->on);
	free(mp->held);
	free(mp->spoiled);
	free(mp);
	si->priv = NULL;
}

const struct pmd_stressor pmd_stressor_migrate = {
	.abi = PMD_STRESSOR_ABI,
	.name = "migrate",
	.summary = "move_pages, mbind MPOL_MF_MOVE and migrate_pages between NUMA nodes while "
		   "chunks fault",
	.options = migrate_options,
	.opts_size = sizeof(struct migrate_opts),
	.metrics = migrate_metrics,
	.workers = "1",
	.supported = migrate_supported,
	.setup = migrate_setup,
	.run = migrate_run,
	.teardown = migrate_teardown,
};
