// SPDX-License-Identifier: GPL-2.0
/*
 * fork: fork() while the storm faults, with copy-on-write checks across it.
 *
 * The race: fork's dup_mmap() copies the parent's page tables and
 * write-protects every private page while the parent's other threads keep
 * faulting. Until 6.4 fixed it ("fork: lock VMAs of the parent process when
 * forking"), a fault under the new per-VMA lock could run on a VMA fork was
 * copying, since fork took only the mmap write lock: a page installed or
 * written behind fork's back ended up shared with the child (the child sees
 * the parent's later write) or lost to one side. Huge PMDs add their own
 * COW path: copy_huge_pmd() shares the huge page at fork, and the first
 * write on either side goes through do_huge_pmd_wp_page(), which splits the
 * PMD and copies one 4 KiB page. And fork is where a populated page table
 * is most expensive: AIM9's fork_test moved +11.3% with "mm: Check if PTE is
 * already allocated during page fault" (2011).
 *
 * Each fork freezes a few idle chunks (claims them HELD: their recorded
 * expectations say what they hold), verifies them, and forks. Chunks that
 * hold data come first: one nobody has written is still pmd_none, which the
 * storm's first round on it relies on, so fresh chunks are taken only after
 * ten forks in a row found nothing else (nobody else writes the arena). The
 * child, a plain loop with no lock, no malloc and nothing of liburcu, reads
 * every slot of every frozen page in one pass and must see exactly the
 * pre-fork contents, writes its own stamp (child domain) into the last slot
 * of each page, waits for the parent's writes below to be done, reads
 * everything again, and exits with a status naming the worst it saw; the
 * details go to a small MAP_SHARED result page mapped at setup, outside the
 * arena. Meanwhile the parent writes a new generation into the frozen chunks
 * (COW faults while the child reads), reaps the child, and verifies the
 * chunks against what it wrote. A child stamp in the parent is COW_LEAK
 * (parent<-child); a post-fork parent stamp seen by the child is COW_LEAK
 * too (child<-parent), "torn" when the same page showed pre-fork slots
 * beside it. The storm keeps faulting other chunks during the fork; that is
 * the point.
 *
 * The frozen chunks are not idle while fork() copies them: each fork
 * worker's writer thread (stress/fork_writer.h) writes numbered 8-byte
 * stores into slot 510 of every 32nd page of them, round robin across the
 * chunks, from just before the fork() call until n + 2 writes after it
 * returned. The child must see a prefix of those writes (seeing write #j,
 * it sees every earlier one). If not, fork copied some page tables before
 * the writes and others after them while they went on, or a post-fork
 * write reached the child: COW_LEAK, "torn snapshot", naming both writes.
 * "fork_writes" counts the writes made while fork() ran. The parent zeroes
 * slot 510 again before it verifies, so the chunks' expectations never
 * include it.
 *
 * With --fork-race, a share of the forks also copy the chunk a fault round
 * is writing at that moment, held open across fork() (stress/fork_live.h):
 * the child must see, of each worker, a prefix of its stores in the
 * round's order, never a value the round does not write, and its own
 * writes must not reach the round ("live", "live_pages").
 *
 * On a MAP_SHARED arena (--shared) parent and child share the pages by
 * design, so there is nothing to check: the forks run and are measured,
 * the COW checks are off (said once on stderr). The self-test (hidden
 * --fork-leak) makes a real leak on a private arena: one page of a frozen
 * chunk is replaced by a MAP_SHARED page with the same contents before a
 * fork, so the child's writes do reach the parent and the parent's reach
 * the child; both must be reported as COW_LEAK at that page. A page the
 * writer thread writes (--fork-leak-page 32) must also show the torn
 * snapshot there.
 *
 * How to tell it fired: forks/s and the fork() latency (the page-table copy
 * of a populated arena: PMDs for THP chunks, PTEs for 4 KiB ones), the
 * parent's COW faults counted as this stressor's faults, thp_split_pmd in
 * the vmstat deltas (huge PMDs split by COW); a broken kernel shows COW_LEAK
 * in either direction, LOST_WRITE, or a child killed by SIGSEGV/SIGBUS.
 */
#include <pmdstress/pool.h>
#include <pmdstress/stressor.h>

#include "fork.h"
#include "fork_live.h"
#include "fork_writer.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <urcu.h>

#define MAX_FROZEN 16
#define CHILD_SLOT (PMD_PAGE_SLOTS - 1) /* the child writes here; the parent never does */
#define WRITER_SLOT PMD_FORK_WRITER_SLOT /* the writer thread's, on every 32nd page */
#define RECORDS 16			/* bad pages the child describes in full */
#define PATIENCE 10 /* forks without a written chunk before fresh ones are taken */
#define LIVE MAX_FROZEN /* a child record's "frozen" index for the live round's chunk */

struct fork_opts {
	uint64_t chunks;
	uint64_t race;
	uint64_t slots;
	uint64_t rate;
	bool populate;
	bool writer;
	bool leak;
	bool child_fault;
	uint64_t leak_chunk;
	uint64_t leak_page;
};

#define O(f) offsetof(struct fork_opts, f)
static const struct pmd_option fork_options[] = {
	{ "chunks", PMD_OPT_UINT, O(chunks), "2", 0, MAX_FROZEN, NULL,
	  "idle chunks frozen and copy-on-write checked across each fork (0: the child exits "
	  "at once, as in AIM9 fork_test)" },
	{ "race", PMD_OPT_UINT, O(race), "50", 0, 100, NULL,
	  "percent of COW-checked forks that also copy the chunk a fault round is writing at that "
	  "moment; the child checks it holds, of each worker, a prefix of its stores "
	  "(stress/fork_live.h)" },
	{ "slots", PMD_OPT_UINT, O(slots), "8", 1, WRITER_SLOT, NULL,
	  "slots per page the parent writes into the frozen chunks after each fork (at least "
	  "as many as they held)" },
	{ "rate", PMD_OPT_UINT, O(rate), "0", 0, 1000000, NULL,
	  "forks per second, all fork workers together (0: back to back)" },
	{ "populate", PMD_OPT_BOOL, O(populate), "off", 0, 0, NULL,
	  "fill every chunk before the clock starts, so each fork copies a populated page "
	  "table (huge PMDs or 4 KiB PTEs, as --thp makes them)" },
	{ "writer", PMD_OPT_BOOL, O(writer), "on", 0, 0, NULL,
	  "a helper thread writes every 32nd page of the frozen chunks before, during and after "
	  "each fork() call; the child must see a prefix of those writes (off: frozen chunks "
	  "are idle while fork copies them)" },
	{ "leak", PMD_OPT_BOOL, O(leak), "off", 0, 0, NULL,
	  "test only: before one fork, share one page of a frozen chunk (MAP_SHARED) so that "
	  "writes cross the fork; must be reported as COW_LEAK",
	  PMD_OPTF_HIDDEN },
	{ "child-fault", PMD_OPT_BOOL, O(child_fault), "off", 0, 0, NULL,
	  "test only: the child of one fork makes page --fork-leak-page of its first frozen "
	  "chunk inaccessible (in the child only) and reads it; the kernel's SIGSEGV must kill "
	  "it and be reported at that chunk and page",
	  PMD_OPTF_HIDDEN },
	{ "leak-chunk", PMD_OPT_UINT, O(leak_chunk), "0", 0, PMD_STAMP_MAX_PAGES / PMD_CHUNK_PAGES,
	  NULL, "test only: the chunk --fork-leak shares a page of", PMD_OPTF_HIDDEN },
	{ "leak-page", PMD_OPT_UINT, O(leak_page), "0", 0, PMD_CHUNK_PAGES - 1, NULL,
	  "test only: the page of that chunk --fork-leak shares (and --fork-child-fault reads)",
	  PMD_OPTF_HIDDEN },
	PMD_OPT_END,
};

enum {
	M_OPS,
	M_CHECKED,
	M_FROZEN,
	M_UNFROZEN,
	M_BAD_SLOTS,
	M_POPULATED,
	M_POPULATED_THP,
	M_EAGAIN,
	M_WR_DURING,
	M_LIVE,
	M_LIVE_PAGES,
	L_FORK,
	L_REAP,
	L_COW_WRITE,
	L_VERIFY,
};

static const struct pmd_metric fork_metrics[] = {
	[M_OPS] = { "ops", PMD_METRIC_COUNT, "children forked and reaped" },
	[M_CHECKED] = { "cow_checks", PMD_METRIC_COUNT,
			"forks whose child checked frozen chunks", PMD_BETTER_NONE },
	[M_FROZEN] = { "frozen", PMD_METRIC_COUNT, "chunks frozen across a fork", PMD_BETTER_NONE },
	[M_UNFROZEN] = { "unfrozen", PMD_METRIC_COUNT,
			 "forks that found no idle chunk to freeze", PMD_BETTER_NONE },
	[M_BAD_SLOTS] = { "bad_slots", PMD_METRIC_COUNT,
			  "slots found wrong, by the child or by the parent after it",
			  PMD_BETTER_NONE },
	[M_POPULATED] = { "populated", PMD_METRIC_COUNT,
			  "chunks filled before the clock started (populate)", PMD_BETTER_NONE },
	[M_POPULATED_THP] = { "populated_thp", PMD_METRIC_COUNT,
			      "of those, chunks that came out PMD-mapped", PMD_BETTER_NONE },
	[M_EAGAIN] = { "eagain", PMD_METRIC_COUNT,
		       "fork() refused for lack of resources: backed off and retried",
		       PMD_BETTER_NONE },
	[M_WR_DURING] = { "fork_writes", PMD_METRIC_COUNT,
			  "the writer thread's writes made while fork() ran (the child must see "
			  "a prefix of them)",
			  PMD_BETTER_NONE },
	[M_LIVE] = { "live", PMD_METRIC_COUNT,
		     "forks that copied the chunk a fault round was writing, checked by the child",
		     PMD_BETTER_NONE },
	[M_LIVE_PAGES] = { "live_pages", PMD_METRIC_COUNT,
			   "pages of those chunks the child checked: zero or the round's stamps, "
			   "each worker's a prefix of its stores", PMD_BETTER_NONE },
	/* not a bench column: divided by the COW faults this stressor counts, it would mislead */
	[L_FORK] = { "fork", PMD_METRIC_LATENCY, "the fork() call: copying the page tables" },
	[L_REAP] = { "reap", PMD_METRIC_LATENCY, "fork() called to child reaped" },
	[L_COW_WRITE] = { "cow_write", PMD_METRIC_LATENCY,
			  "the parent's post-fork writes into the frozen chunks (COW faults)" },
	[L_VERIFY] = { "verify", PMD_METRIC_LATENCY, "verifying one frozen chunk in the parent" },
	{ NULL },
};

/* What the child reports, worst last: its exit status is the worst it saw. */
enum child_code {
	CHILD_CLEAN = 0,
	CHILD_WRONG = 10,	 /* a slot matched neither side (lost, foreign, stale) */
	CHILD_WRITER_WRONG = 11, /* a writer slot holding neither zero nor a write of its own */
	CHILD_OWN_LOST = 12,	 /* the child's own write did not read back */
	CHILD_PARENT_WRITE = 13, /* a post-fork parent stamp: COW leak child<-parent */
	CHILD_TORN = 14,	 /* the same, beside pre-fork slots of the same page */
	CHILD_NOT_PREFIX = 15,	 /* the writer's write #j seen, an earlier #i not: torn */
};

struct child_rec {
	uint32_t frozen, page, slot, code, bad;
	uint64_t expected, actual;
	/* CHILD_NOT_PREFIX: where the earlier write is missing, and the two write numbers */
	uint32_t other_frozen, other_page;
	uint64_t seq_seen, seq_missing;
};

/* The MAP_SHARED page the child writes and the parent reads after reaping it. */
struct child_result {
	uint32_t written; /* futex word, set by the parent: its post-fork writes are done */
	uint32_t code;
	uint32_t nrec;
	uint32_t bad_pages;
	uint32_t at_frozen, at_page, pass; /* where it is: for a child that dies */
	struct child_rec rec[RECORDS];
	uint64_t live_raced[PMD_MASK_WORDS]; /* set by the parent: pages raced before its fork */
	uint64_t noted[MAX_FROZEN + 1][PMD_MASK_WORDS];	   /* pages found bad: once each */
	uint64_t noted_writer[MAX_FROZEN][PMD_MASK_WORDS]; /* the same, by the writer's check */
};

/* A chunk held across one fork: what it held before, what the parent writes after. */
struct frozen {
	struct pmd_chunk *c;
	char *addr;
	uint32_t lbase; /* logical page of the chunk's page 0 */
	uint32_t gen, nslots, domain;
	uint32_t newgen, newslots;
	uint64_t skipped[PMD_MASK_WORDS], zero[PMD_MASK_WORDS], maybe[PMD_MASK_WORDS];
};

struct fork_worker {
	/*
	 * What a checking child found: a MAP_SHARED page, or no_res when no
	 * child checks (children_check()): every fork would copy the mapping
	 * for children that only exit, and reading a zeroed result costs none.
	 */
	struct child_result *res;
	struct child_result no_res;
	struct frozen frozen[MAX_FROZEN];
	unsigned nfrozen;
	struct pmd_fork_live live; /* the chunk a round was writing, or live.c NULL */
	unsigned cursor;
	unsigned dry; /* forks in a row that found no written chunk to freeze */
	int leaked;   /* index into frozen[] of the chunk given a shared page, or -1 */
	int fault_page; /* test only: the page of frozen[0] this fork's child faults on, or -1 */
	bool written; /* the parent wrote the new generation (cow_write) */
	bool writing; /* the writer wrote the frozen chunks across this fork */
	struct pmd_fork_writer wr;
};

struct fork_priv {
	const struct fork_opts *o;
	pid_t self; /* getpid(), once: each call is a syscall, each fork's child needs it */
	bool check; /* COW checks: off on a MAP_SHARED arena */
	uint32_t leak_done; /* atomic: the test leak was made */
	uint32_t fault_done; /* atomic: a child was given the test fault */
	struct fork_worker *fw;
	unsigned nfw;
};

/* Whether children check chunks, and so need a result page; else they only exit. */
static bool children_check(const struct fork_priv *fp)
{
	return fp->o->chunks && fp->check;
}

/* ---- shared with exec (fork.h) ------------------------------------------- */

/*
 * The lock word lives in the pool (pmdstress/pool.h), which no child gets:
 * fork() write-protects every private page the parent has, and the first
 * write to one after it is a copy-on-write fault, so a lock in the
 * program's data (liburcu's call_rcu mutex was one) costs the parent a page
 * fault per fork that the bare loop does not pay. It was a page of its own
 * marked MADV_DONTFORK, a mapping more for every fork to pay for.
 */
static pthread_mutex_t fallback_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t *fork_mutex = &fallback_lock;
static pthread_once_t fork_mutex_once = PTHREAD_ONCE_INIT;

static void fork_mutex_init(void)
{
	pthread_mutex_t *p = pmd_pool_alloc(sizeof(pthread_mutex_t));

	/* without the pool, the lock in data still serialises: only slower */
	if (!p)
		return;
	pthread_mutex_init(p, NULL);
	fork_mutex = p;
}

void pmd_fork_lock(void)
{
	pthread_once(&fork_mutex_once, fork_mutex_init);
	pthread_mutex_lock(fork_mutex);
}

void pmd_fork_unlock(void)
{
	pthread_mutex_unlock(fork_mutex);
}

int pmd_fork_wait_fd(struct pmd_worker *w, int fd, pid_t pid)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct pmd_child_watch cw;

	pmd_child_watch(&cw, pid);
	/* a short timeout only to look at the child; readiness wakes us at once */
	for (;;) {
		int n = poll(&pfd, 1, 50), look;

		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR)
			return -errno;
		look = pmd_child_look(w, &cw);
		if (look == PMD_CHILD_STUCK)
			return -ETIMEDOUT;
		/* at the stop, a child that moves was only not done: killed unjudged */
		if (pmd_aborting(w) || (look == PMD_CHILD_MOVING && pmd_should_stop(w)))
			return 0;
	}
}

int pmd_fork_reap(pid_t pid, int *status)
{
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

void pmd_fork_child_init(pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (getppid() != parent)
		_exit(0);
	pmd_pool_forget();
}

bool pmd_fork_backoff(struct pmd_worker *w, int err, unsigned eagain_metric)
{
	if (err != EAGAIN)
		return false;
	pmd_count(w, eagain_metric, 1);
	pmd_sleep(w, 10000000ull); /* 10 ms: a process may exit and free its slot */
	return true;
}

void pmd_fork_eagain_say(const struct pmd_sinst *si, unsigned eagain_metric)
{
	uint64_t n = 0;
	unsigned i;

	for (i = 0; i < si->nworkers; i++)
		if (si->workers[i].stats)
			n += pmd_counter_read(&si->workers[i].stats->counter[eagain_metric]);
	/* counted in the table, but a run that exits 0 must not hide that it was held back */
	if (n)
		fprintf(stderr, "pmdstress: %s: fork() failed with EAGAIN %llu times (pids.max or "
				"RLIMIT_NPROC?), each time backing off 10 ms: fewer forks ran than "
				"asked\n",
			si->st->name, (unsigned long long)n);
}

int pmd_fork_wait(struct pmd_worker *w, pid_t pid, int *status, const char *what)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0), ready = 0, rc;

	if (fd >= 0) {
		ready = pmd_fork_wait_fd(w, fd, pid);
		close(fd);
	} else {
		/* no pidfd (before 5.3): look every 100 us (not asleep on purpose) */
		const struct timespec nap = { 0, 100000 };
		struct pmd_child_watch cw;
		unsigned k = 0;

		pmd_child_watch(&cw, pid);
		for (;; k++) {
			pid_t r = waitpid(pid, status, WNOHANG);
			int look = PMD_CHILD_STILL;

			if (r == pid)
				return 0;
			if (r < 0 && errno != EINTR) {
				ready = -errno;
				break;
			}
			if (k % 500 == 499) /* the child every 50 ms */
				look = pmd_child_look(w, &cw);
			ready = look == PMD_CHILD_STUCK ? -ETIMEDOUT : 0;
			if (ready || pmd_aborting(w) ||
			    (look == PMD_CHILD_MOVING && pmd_should_stop(w)))
				break;
			nanosleep(&nap, NULL);
		}
	}
	if (ready == 1)
		return pmd_fork_reap(pid, status);
	if (ready == -ETIMEDOUT)
		pmd_child_stuck(w, pid, what); /* before the kill: its stack as it is */
	/* aborted, stuck, or waiting failed: never leave the child behind */
	kill(pid, SIGKILL);
	rc = pmd_fork_reap(pid, status);
	return ready < 0 && ready != -ETIMEDOUT ? ready : rc ? rc : -EINTR;
}

unsigned pmd_fork_populate(struct pmd_sinst *si, unsigned *thp)
{
	struct pmd_arena *a = si->arena;
	unsigned worker = si->nworkers ? si->workers[0].id : 0, i, p, n = 0;

	*thp = 0;
	rcu_register_thread();
	for (i = 0; i < a->nchunks; i++) {
		struct pmd_chunk *c = &a->chunks[i];
		uint32_t lbase = c->index * (uint32_t)PMD_CHUNK_PAGES;
		char *addr;

		if (!pmd_chunk_claim(c, PMD_CHUNK_IDLE, PMD_CHUNK_HELD))
			continue;
		/* written already (by another stressor's populate): it is full */
		if (c->nslots || !(addr = pmd_chunk_enter(c))) {
			pmd_chunk_release(c, PMD_CHUNK_IDLE);
			continue;
		}
		for (p = 0; p < PMD_CHUNK_PAGES; p++)
			pmd_store(pmd_page_slot(addr, p, 0),
				  pmd_stamp(a->tag_key, PMD_STAMP_DOMAIN_RUN, lbase + p, c->gen, 0));
		pmd_chunk_exit(c);
		c->nslots = 1;
		c->domain = PMD_STAMP_DOMAIN_RUN;
		pmd_chunk_log(c, pmd_now_ns(), PMD_OP_POPULATE, worker, 1);
		n++;
		if (pmd_thp_probe(si->run, c, NULL) == PMD_THPS_THP)
			(*thp)++;
		pmd_chunk_release(c, PMD_CHUNK_IDLE);
	}
	rcu_unregister_thread();
	return n;
}

/* ---- pacing and small helpers --------------------------------------------- */

static uint64_t minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return (uint64_t)ru.ru_minflt;
}

static void mask_copy(uint64_t *dst, const uint64_t *src)
{
	unsigned i;

	for (i = 0; i < PMD_MASK_WORDS; i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

static bool bit(const uint64_t *mask, unsigned b)
{
	return mask[b / 64] & (1ull << (b % 64));
}

/* What slot @s of page @p held before the fork (the verifier's rule). */
static uint64_t pre_fork(const struct frozen *f, uint64_t key, unsigned p, unsigned s)
{
	if (s >= f->nslots || bit(f->zero, p) || bit(f->skipped, s))
		return 0;
	return pmd_stamp(key, f->domain, f->lbase + p, f->gen, s);
}

/* What the parent writes there after the fork. */
static uint64_t post_fork(const struct frozen *f, uint64_t key, unsigned p, unsigned s)
{
	return s < f->newslots ? pmd_stamp(key, PMD_STAMP_DOMAIN_RUN, f->lbase + p, f->newgen, s)
			       : 0;
}

static uint64_t child_stamp(const struct frozen *f, uint64_t key, unsigned p)
{
	return pmd_stamp(key, PMD_STAMP_DOMAIN_CHILD, f->lbase + p, f->gen, CHILD_SLOT);
}

/*
 * The writer's units: every 32nd page of every frozen chunk, taken in turn
 * from each chunk, so that consecutive writes go to different chunks (and
 * page tables) that fork copies at different times.
 */
static unsigned unit_frozen(const struct fork_worker *fw, unsigned u)
{
	return fw->nfrozen ? u % fw->nfrozen : 0; /* the writer runs only with frozen chunks */
}

static unsigned unit_page(const struct fork_worker *fw, unsigned u)
{
	return fw->nfrozen ? u / fw->nfrozen * PMD_FORK_WRITER_STRIDE : 0;
}

/* Page @p's writer slot belongs to the writer in this fork: not the child's to judge. */
static bool writer_owns(const struct fork_worker *fw, unsigned p, unsigned s)
{
	return fw->writing && s == WRITER_SLOT && p % PMD_FORK_WRITER_STRIDE == 0;
}

/* ---- the child: a plain loop, then _exit ---------------------------------- */

/* A record of the writer thread's prefix check (child_check_writer()), not of a page's slots. */
static bool writer_rec(unsigned fi, unsigned slot, unsigned code)
{
	return fi != LIVE && slot == WRITER_SLOT &&
	       (code == CHILD_WRITER_WRONG || code == CHILD_NOT_PREFIX);
}

/*
 * Count a bad page; describe it in full while there is room (the record, or
 * NULL). A page is noted once: the second pass finds again what the first did.
 * The writer's check is a finding of its own (its writes across pages not a
 * prefix), noted once apart from what the slots' check found in the page.
 */
static struct child_rec *child_note(struct child_result *r, unsigned fi, unsigned p,
				    unsigned slot, unsigned code, unsigned bad, uint64_t expected,
				    uint64_t actual)
{
	struct child_rec *rec = NULL;

	if (fi < MAX_FROZEN && p < PMD_CHUNK_PAGES) {
		uint64_t *noted = writer_rec(fi, slot, code) ? r->noted_writer[fi] : r->noted[fi];

		if (noted[p / 64] & 1ull << (p % 64))
			return NULL;
		noted[p / 64] |= 1ull << (p % 64);
	}
	if (r->nrec < RECORDS) {
		rec = &r->rec[r->nrec++];
		rec->frozen = fi;
		rec->page = p;
		rec->slot = slot;
		rec->code = code;
		rec->bad = bad;
		rec->expected = expected;
		rec->actual = actual;
	}
	r->bad_pages++;
	if (code > r->code)
		r->code = code;
	return rec;
}

/*
 * Read every slot of page @p of frozen chunk @fi in one pass. Before the
 * child's own write (@mine == 0) its slot must read zero, after it the
 * child's stamp; every other slot must hold what it held before the fork,
 * or, in a page MADV_FREE left clean (the verifier's rule), all of them
 * zero: the kernel drops such a page whole. A slot holding the parent's
 * post-fork stamp is a leak.
 */
static void child_check_page(const struct fork_worker *fw, unsigned fi, unsigned p, uint64_t key,
			     uint64_t mine, struct child_result *r)
{
	const struct frozen *f = &fw->frozen[fi];
	bool maybe = bit(f->maybe, p);
	unsigned s, pre = 0, post = 0, wrong = 0, own = 0, slot = 0, code = CHILD_CLEAN;
	unsigned kept = 0, zeroed = 0, zslot = 0;
	uint64_t first_exp = 0, first_act = 0, zexp = 0;

	for (s = 0; s < PMD_PAGE_SLOTS; s++) {
		uint64_t v = pmd_load(pmd_page_slot(f->addr, p, s)), exp;

		if (s == CHILD_SLOT) {
			if (v != mine && !own++ && !post && !wrong) {
				slot = s;
				first_exp = mine;
				first_act = v;
			}
			continue;
		}
		if (writer_owns(fw, p, s))
			continue; /* child_check_writer() */
		exp = pre_fork(f, key, p, s);
		if (v == exp || (!v && maybe)) {
			pre += s < f->newslots; /* a slot the parent rewrote: tells the sides apart */
			kept += v && v == exp;
			if (v != exp && !zeroed++) {
				zslot = s;
				zexp = exp;
			}
			continue;
		}
		if (v && v == post_fork(f, key, p, s)) {
			if (!post++) {
				slot = s;
				first_exp = exp;
				first_act = v;
			}
		} else if (!wrong++ && !post) {
			slot = s;
			first_exp = exp;
			first_act = v;
		}
	}
	/* part of a clean page dropped, part kept: that is no drop */
	if (zeroed && kept && !wrong++ && !post) {
		slot = zslot;
		first_exp = zexp;
		first_act = 0;
	}
	if (post)
		code = pre ? CHILD_TORN : CHILD_PARENT_WRITE;
	else if (own && mine)
		code = CHILD_OWN_LOST;
	else if (own || wrong)
		code = CHILD_WRONG;
	if (code != CHILD_CLEAN)
		child_note(r, fi, p, slot, code, post + wrong + own, first_exp, first_act);
}

/*
 * Read the writer's units in one pass: they must hold a prefix of its
 * writes (stress/fork_writer.h). At most one record; true if clean.
 */
static bool child_check_writer(const struct fork_worker *fw, struct child_result *r)
{
	struct pmd_fork_writer_finding fd;
	struct child_rec *rec;
	unsigned u;

	if (pmd_fork_writer_check(&fw->wr, &fd))
		return true;
	if (!fd.behind) {
		u = fd.wrong_unit;
		child_note(r, unit_frozen(fw, u), unit_page(fw, u), WRITER_SLOT, CHILD_WRITER_WRONG,
			   fd.wrong, 0, fd.wrong_value);
		return false;
	}
	/* where the newer write is seen: the page a leak shares, or one copied late */
	u = fd.seen_unit;
	rec = child_note(r, unit_frozen(fw, u), unit_page(fw, u), WRITER_SLOT, CHILD_NOT_PREFIX,
			 fd.behind, pmd_fork_writer_value(&fw->wr, fd.missing_unit, fd.missing),
			 pmd_fork_writer_value(&fw->wr, u, fd.seen));
	if (rec) {
		rec->other_frozen = unit_frozen(fw, fd.missing_unit);
		rec->other_page = unit_page(fw, fd.missing_unit);
		rec->seq_seen = fd.seen;
		rec->seq_missing = fd.missing;
	}
	return false;
}

/* A finding of the live round's check (stress/fork_live.c), as a record. */
static void child_note_live(void *ctx, const struct pmd_fork_live_finding *f)
{
	static const unsigned code[] = { [PMD_FORK_LIVE_WRONG] = CHILD_WRONG,
					 [PMD_FORK_LIVE_OWN] = CHILD_OWN_LOST,
					 [PMD_FORK_LIVE_TORN] = CHILD_NOT_PREFIX };
	struct child_rec *rec = child_note(ctx, LIVE, f->page, f->slot, code[f->kind], f->bad,
					   f->expected, f->actual);

	if (rec && f->kind == PMD_FORK_LIVE_TORN) {
		rec->other_frozen = LIVE;
		rec->other_page = f->other_page;
		rec->seq_seen = f->seq_seen;
		rec->seq_missing = f->seq_missing;
	}
}

/*
 * Test only (--fork-child-fault): a fault the kernel raises on a frozen
 * chunk in the child, as a broken fork would. Only the child's mapping of the
 * page changes; the SIGSEGV kills it (src/run/fatal.c lets a child of the run
 * die) and the parent reports where, from at_frozen and at_page.
 */
static void child_fault(const struct fork_worker *fw, struct child_result *r)
{
	uint64_t *slot = pmd_page_slot(fw->frozen[0].addr, (unsigned)fw->fault_page, 0);

	r->at_frozen = 0;
	r->at_page = (unsigned)fw->fault_page;
	mprotect(slot, PMD_PAGE_SIZE, PROT_NONE);
	(void)pmd_load(slot);
}

/*
 * Until the parent has written the new generation into every frozen chunk.
 * A shared (not _PRIVATE) futex: the word is in a MAP_SHARED page of two
 * processes. The parent sets it or kills us, and we die with the parent.
 */
static void child_wait_parent(struct child_result *r)
{
	while (!__atomic_load_n(&r->written, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &r->written, FUTEX_WAIT, 0, NULL, NULL, 0);
}

/*
 * The run's alternate signal stacks are not copied into a child
 * (MADV_DONTFORK, src/run/fatal.c): a fatal signal here would find no stack to
 * run its handler on, and the kernel would kill the child with SIGSEGV,
 * whatever the signal was. Off, the handler runs on this thread's stack.
 */
static void child_altstack_off(void)
{
	stack_t ss;

	memset(&ss, 0, sizeof(ss));
	ss.ss_flags = SS_DISABLE;
	sigaltstack(&ss, NULL);
}

/*
 * Pass 1 reads while the parent writes (COW faults on both sides at once);
 * pass 2 waits for the parent's writes to be done, so that a page whose
 * writes cross the fork is seen leaking whoever ran first, not only when the
 * parent happened to win the race to it.
 */
static void __attribute__((noreturn)) child_main(const struct fork_worker *fw, uint64_t key,
						 bool check)
{
	struct child_result *r = fw->res;
	bool writer_clean = true;
	unsigned i, p;

	r->pass = 1;
	if (fw->fault_page >= 0)
		child_fault(fw, r);
	/* first, as close to the fork as it gets (a correct fork gives the same at any time) */
	if (check && fw->writing)
		writer_clean = child_check_writer(fw, r);
	for (i = 0; i < fw->nfrozen; i++) {
		const struct frozen *f = &fw->frozen[i];

		for (p = 0; p < PMD_CHUNK_PAGES; p++) {
			r->at_frozen = i;
			r->at_page = p;
			if (check)
				child_check_page(fw, i, p, key, 0, r);
			pmd_store(pmd_page_slot(f->addr, p, CHILD_SLOT), child_stamp(f, key, p));
		}
	}
	/* the live round's chunk: values now, its workers' order once the parent says what raced */
	if (fw->live.c) {
		r->at_frozen = LIVE;
		r->at_page = 0;
		if (check)
			pmd_fork_live_check(&fw->live, key, CHILD_SLOT, false, NULL,
					    child_note_live, r);
		pmd_fork_live_write(&fw->live, key, CHILD_SLOT);
	}
	r->pass = 2;
	if (check && (fw->nfrozen || fw->live.c))
		child_wait_parent(r);
	/* the writer has stopped too: a page shared by mistake now shows its last write */
	if (check && fw->writing && writer_clean)
		child_check_writer(fw, r);
	for (i = 0; check && i < fw->nfrozen; i++) {
		const struct frozen *f = &fw->frozen[i];

		for (p = 0; p < PMD_CHUNK_PAGES; p++) {
			r->at_frozen = i;
			r->at_page = p;
			child_check_page(fw, i, p, key, child_stamp(f, key, p), r);
		}
	}
	if (check && fw->live.c) {
		r->at_frozen = LIVE;
		pmd_fork_live_check(&fw->live, key, CHILD_SLOT, true, r->live_raced,
				    child_note_live, r);
	}
	_exit((int)r->code);
}

/* ---- the parent ------------------------------------------------------------ */

static bool usable(const struct pmd_chunk *c)
{
	return pmd_chunk_state(c) == PMD_CHUNK_IDLE &&
	       !(__atomic_load_n(&c->flags, __ATOMIC_RELAXED) & (PMD_CF_CLOSING | PMD_CF_REPORTED));
}

/*
 * Claim @c, check it holds what it should, and record that; false if not
 * usable. A chunk nobody has written yet is taken only if @fresh: it is
 * still pmd_none, which the storm's first round on it relies on.
 */
static bool freeze_one(struct pmd_worker *w, struct fork_worker *fw, struct pmd_chunk *c,
		       bool fresh)
{
	const struct fork_opts *o = ((struct fork_priv *)w->si->priv)->o;
	struct frozen *f = &fw->frozen[fw->nfrozen];
	unsigned bad = 0;
	uint64_t t;
	char *addr;

	if (!usable(c) || !pmd_chunk_claim(c, PMD_CHUNK_IDLE, PMD_CHUNK_HELD))
		return false;
	/* the writer's and the child's slots must be free; a chunk reported bad is left alone */
	if (c->nslots > WRITER_SLOT || (!c->nslots && !fresh) ||
	    (__atomic_load_n(&c->flags, __ATOMIC_RELAXED) & PMD_CF_REPORTED) ||
	    !(addr = pmd_chunk_enter(c))) {
		pmd_chunk_release(c, PMD_CHUNK_IDLE);
		return false;
	}
	/* what the child compares with must be right before the fork, or we blame fork */
	if (w->si->cfg->verify) {
		t = pmd_now_ns();
		bad = pmd_verify_pages(w, c, addr, 0, PMD_CHUNK_PAGES);
		pmd_latency(w, L_VERIFY, pmd_now_ns() - t);
	}
	pmd_chunk_exit(c);
	if (bad) {
		pmd_count(w, M_BAD_SLOTS, bad);
		pmd_chunk_release(c, PMD_CHUNK_IDLE);
		return false;
	}
	f->c = c;
	f->addr = addr;
	f->lbase = c->index * (uint32_t)PMD_CHUNK_PAGES;
	f->gen = __atomic_load_n(&c->gen, __ATOMIC_RELAXED);
	f->nslots = c->nslots;
	f->domain = c->domain;
	f->newgen = pmd_gen_next(f->gen);
	f->newslots = f->nslots > o->slots ? f->nslots : (uint32_t)o->slots;
	mask_copy(f->skipped, c->skipped);
	mask_copy(f->zero, c->zero_pages);
	mask_copy(f->maybe, c->maybe_pages);
	fw->nfrozen++;
	return true;
}

static void freeze(struct pmd_worker *w, struct fork_priv *fp, struct fork_worker *fw)
{
	struct pmd_arena *a = w->si->arena;
	unsigned want = (unsigned)fp->o->chunks, i;

	fw->nfrozen = 0;
	fw->leaked = -1;
	fw->written = false;
	fw->writing = false;
	if (want > a->nchunks)
		want = a->nchunks;
	/* the self-test's chunk first, until it has had its leak */
	if (fp->o->leak && !__atomic_load_n(&fp->leak_done, __ATOMIC_RELAXED) &&
	    freeze_one(w, fw, &a->chunks[fp->o->leak_chunk], true))
		fw->leaked = 0;
	for (i = 0; i < a->nchunks && fw->nfrozen < want; i++) {
		struct pmd_chunk *c = &a->chunks[fw->cursor];

		fw->cursor = (fw->cursor + 1) % a->nchunks;
		/* fresh chunks only once nobody else seems to write the arena */
		freeze_one(w, fw, c, fw->dry >= PATIENCE);
	}
	fw->dry = fw->nfrozen ? 0 : fw->dry + 1;
	fw->fault_page = -1;
	if (fp->o->child_fault && fw->nfrozen &&
	    !__atomic_exchange_n(&fp->fault_done, 1, __ATOMIC_ACQ_REL))
		fw->fault_page = (int)fp->o->leak_page;
}

/*
 * Remap page @page of @f with @flags (MAP_FIXED) and write @buf into it, after
 * filling @buf with what the page holds if @keep; 0 or -errno. The caller owns
 * the page-sized buffer: one per path, not two nested (small worker stacks).
 */
static int swap_page(struct pmd_worker *w, const struct frozen *f, unsigned page, int flags,
		     uint64_t buf[PMD_PAGE_SLOTS], bool keep)
{
	struct pmd_arena *a = w->si->arena;
	char *addr = pmd_chunk_enter(f->c), *pa;
	unsigned s;
	int err = 0;

	if (!addr)
		return -ESTALE;
	for (s = 0; keep && s < PMD_PAGE_SLOTS; s++)
		buf[s] = pmd_load(pmd_page_slot(addr, page, s));
	pmd_chunk_exit(f->c);
	pa = addr + ((size_t)page << PMD_PAGE_SHIFT);
	/* the RCU rule: nobody may be inside while the page is replaced */
	pmd_chunk_retire(f->c);
	if (mmap(pa, PMD_PAGE_SIZE, PROT_READ | PROT_WRITE, flags | MAP_ANONYMOUS | MAP_FIXED, -1,
		 0) == MAP_FAILED)
		err = -errno;
	else if (!(flags & MAP_SHARED))
		pmd_arena_fresh_range(a, pa, PMD_PAGE_SIZE); /* THP advice + memory policy */
	pmd_chunk_revive(f->c, addr);
	addr = pmd_chunk_enter(f->c);
	if (addr) {
		for (s = 0; s < PMD_PAGE_SLOTS; s++)
			pmd_store(pmd_page_slot(addr, page, s), buf[s]);
		pmd_chunk_exit(f->c);
	}
	return err;
}

/* Test only (--fork-leak): share one frozen page with the child to come. */
static void leak_make(struct pmd_worker *w, struct fork_priv *fp, struct fork_worker *fw)
{
	const struct frozen *f = &fw->frozen[fw->leaked];
	unsigned page = (unsigned)fp->o->leak_page;
	uint64_t buf[PMD_PAGE_SLOTS];
	int err;

	if (__atomic_exchange_n(&fp->leak_done, 1, __ATOMIC_ACQ_REL)) {
		fw->leaked = -1;
		return;
	}
	err = swap_page(w, f, page, MAP_SHARED, buf, true);
	if (err) {
		pmd_worker_error(w, err, "fork: cannot share page %u of chunk %u for --fork-leak",
				 page, f->c->index);
		fw->leaked = -1;
		return;
	}
	pmd_chunk_log(f->c, pmd_now_ns(), PMD_OP_INJECT, w->id, page);
}

/* ...and make it private again, holding what the parent wrote (or had, if it did not). */
static void leak_undo(struct pmd_worker *w, struct fork_priv *fp, struct fork_worker *fw)
{
	const struct frozen *f = &fw->frozen[fw->leaked];
	unsigned page = (unsigned)fp->o->leak_page, s;
	uint64_t want[PMD_PAGE_SLOTS];
	int err;

	for (s = 0; fw->written && s < PMD_PAGE_SLOTS; s++)
		want[s] = post_fork(f, w->si->arena->tag_key, page, s);
	err = swap_page(w, f, page, MAP_PRIVATE | MAP_NORESERVE, want, !fw->written);
	if (err)
		pmd_worker_error(w, err, "fork: cannot make page %u of chunk %u private again",
				 page, f->c->index);
}

/*
 * Inside the fork bracket, just before fork(): the writer starts on the
 * frozen chunks' units, and we wait until it has written each once (so the
 * child has a snapshot to check, whenever fork takes it).
 */
static void writer_open(struct pmd_worker *w, struct fork_worker *fw)
{
	unsigned u, n = fw->nfrozen * PMD_FORK_WRITER_PAGES;

	if (!fw->wr.running || !fw->nfrozen)
		return;
	for (u = 0; u < n; u++)
		fw->wr.unit[u] = pmd_page_slot(fw->frozen[unit_frozen(fw, u)].addr,
					       unit_page(fw, u), WRITER_SLOT);
	fw->wr.nunits = n;
	fw->writing = true;
	pmd_fork_writer_open(&fw->wr);
	while (pmd_fork_writer_seq(&fw->wr) < n && !pmd_should_stop(w))
		sched_yield();
}

/* The writer's units back to zero, as the chunks' expectations say (slots past nslots). */
static void writer_clear(struct fork_worker *fw)
{
	unsigned u;

	for (u = 0; fw->writing && u < fw->wr.nunits; u++)
		pmd_store(fw->wr.unit[u], 0);
	fw->writing = false;
}

/* After the fork, while the child reads: a new generation into every frozen chunk. */
/*
 * After the fork, before the parent's writes: the parent's side must still
 * hold what it froze (fork write-protected it; nothing of ours wrote it
 * since). A page that differs is judged by the verifier, whose rules
 * (a MADV_FREE'd page dropped whole) still hold: the generation is the old one.
 */
static void cow_check(struct pmd_worker *w, struct fork_worker *fw)
{
	const uint64_t key = w->si->arena->tag_key;
	unsigned i, p, s;

	for (i = 0; i < fw->nfrozen; i++) {
		struct frozen *f = &fw->frozen[i];
		char *addr = pmd_chunk_enter(f->c);

		if (!addr)
			continue; /* cow_write() says so */
		for (p = 0; p < PMD_CHUNK_PAGES; p++) {
			for (s = 0; s < f->newslots; s++)
				if (pmd_load(pmd_page_slot(addr, p, s)) != pre_fork(f, key, p, s))
					break;
			if (s < f->newslots)
				pmd_count(w, M_BAD_SLOTS, pmd_verify_pages(w, f->c, addr, p, p + 1));
		}
		pmd_chunk_exit(f->c);
	}
}

static void cow_write(struct pmd_worker *w, struct fork_worker *fw)
{
	const uint64_t key = w->si->arena->tag_key;
	uint64_t t, f0;
	unsigned i, p, s;

	if (w->si->cfg->verify)
		cow_check(w, fw);
	t = pmd_now_ns();
	f0 = minflt();
	for (i = 0; i < fw->nfrozen; i++) {
		struct frozen *f = &fw->frozen[i];
		struct pmd_chunk *c = f->c;
		char *addr;

		addr = pmd_chunk_enter(c);
		if (!addr) { /* we hold it: nobody may retire it */
			pmd_worker_error(w, -ESTALE, "fork: frozen chunk %u is retired", c->index);
			continue;
		}
		/* before the stores, so that the ring and any event name the new generation */
		__atomic_store_n(&c->gen, f->newgen, __ATOMIC_RELAXED);
		for (p = 0; p < PMD_CHUNK_PAGES; p++)
			for (s = 0; s < f->newslots; s++)
				pmd_store(pmd_page_slot(addr, p, s), post_fork(f, key, p, s));
		pmd_chunk_exit(c);
		/* every page now holds exactly slots 0..newslots-1 of the new generation */
		c->nslots = f->newslots;
		c->domain = PMD_STAMP_DOMAIN_RUN;
		pmd_mask_clear_all(c->skipped);
		pmd_mask_clear_all(c->zero_pages);
		pmd_mask_clear_all(c->maybe_pages);
		pmd_chunk_log(c, pmd_now_ns(), PMD_OP_COW_WRITE, w->id, f->newslots);
	}
	fw->written = true;
	pmd_count_faults(w, minflt() - f0);
	pmd_latency(w, L_COW_WRITE, pmd_now_ns() - t);
}

/* The chunk a child record names, as a frozen chunk (the live one: its fields that matter). */
static const struct frozen *rec_chunk(const struct fork_worker *fw, unsigned i, struct frozen *tmp)
{
	if (i != LIVE)
		return i < fw->nfrozen ? &fw->frozen[i] : NULL;
	if (!fw->live.c)
		return NULL;
	memset(tmp, 0, sizeof(*tmp));
	tmp->c = fw->live.c;
	tmp->lbase = fw->live.lbase;
	tmp->gen = fw->live.gen;
	tmp->domain = fw->live.domain;
	return tmp;
}

static enum pmd_class child_class(const struct frozen *f, uint64_t key, const struct child_rec *rec)
{
	switch (rec->code) {
	case CHILD_NOT_PREFIX:
	case CHILD_TORN:
	case CHILD_PARENT_WRITE:
		return PMD_CLASS_COW_LEAK;
	case CHILD_WRITER_WRONG:
		return PMD_CLASS_FOREIGN;
	case CHILD_OWN_LOST:
		return PMD_CLASS_LOST_WRITE;
	default:
		return pmd_stamp_classify(key, rec->actual, rec->expected, f->lbase + rec->page,
					  f->gen, rec->slot, f->domain);
	}
}

static const char *child_says(unsigned code)
{
	switch (code) {
	case CHILD_TORN:
		return "torn snapshot: the parent's post-fork stamps beside pre-fork slots "
		       "(COW leak child<-parent)";
	case CHILD_PARENT_WRITE:
		return "the parent's post-fork stamp (COW leak child<-parent)";
	case CHILD_OWN_LOST:
		return "its own write did not read back";
	case CHILD_WRITER_WRONG:
		return "neither zero nor a write of the writer thread's to this page";
	default:
		return "neither the pre-fork contents nor the parent's";
	}
}

/* What the child saw, in words: the event's text. */
static void child_text(const struct fork_worker *fw, const struct child_rec *rec,
		       const struct frozen *f, enum pmd_class cls, char *buf, size_t len)
{
	if (rec->code == CHILD_NOT_PREFIX && rec->frozen == LIVE) {
		unsigned n = fw->live.nworkers ? fw->live.nworkers : 1;

		snprintf(buf, len,
			 "%s seen by the fork child: torn snapshot of a live round: it sees "
			 "worker %u's store #%llu at chunk %u page %u slot %u but not its earlier "
			 "store #%llu at page %u (%u earlier stores missing); expected %#llx, "
			 "read %#llx",
			 pmd_class_name(cls), rec->slot % n,
			 (unsigned long long)rec->seq_seen, f->c->index, rec->page, rec->slot,
			 (unsigned long long)rec->seq_missing, rec->other_page, rec->bad,
			 (unsigned long long)rec->expected, (unsigned long long)rec->actual);
		return;
	}
	if (rec->code == CHILD_NOT_PREFIX && rec->other_frozen < fw->nfrozen) {
		snprintf(buf, len,
			 "%s seen by the fork child: torn snapshot, not a point-in-time copy: it "
			 "sees the writer thread's write #%llu at chunk %u page %u slot %u but not "
			 "its earlier write #%llu at chunk %u page %u (%u of %u pages behind)",
			 pmd_class_name(cls), (unsigned long long)rec->seq_seen, f->c->index,
			 rec->page, rec->slot, (unsigned long long)rec->seq_missing,
			 fw->frozen[rec->other_frozen].c->index, rec->other_page, rec->bad,
			 fw->wr.nunits);
		return;
	}
	snprintf(buf, len,
		 "%s seen by the fork child at chunk %u page %u slot %u%s: %s; expected %#llx, "
		 "read %#llx (%u bad slots in the page)",
		 pmd_class_name(cls), f->c->index, rec->page, rec->slot,
		 rec->frozen == LIVE ? " (a live round's)" : "",
		 rec->frozen == LIVE && rec->code == CHILD_WRONG ?
			 "a value the round does not write" : child_says(rec->code),
		 (unsigned long long)rec->expected, (unsigned long long)rec->actual, rec->bad);
}

/* One event per page the child described. */
static void post_child(struct pmd_worker *w, struct fork_worker *fw)
{
	const struct child_result *r = fw->res;
	struct pmd_run *run = w->si->run;
	const uint64_t key = w->si->arena->tag_key;
	unsigned i, n = r->nrec < RECORDS ? r->nrec : RECORDS;

	for (i = 0; i < n; i++) {
		const struct child_rec *rec = &r->rec[i];
		const struct frozen *f;
		struct frozen tmp;
		struct pmd_event ev;
		enum pmd_class cls;

		f = rec_chunk(fw, rec->frozen, &tmp);
		if (!f || rec->page >= PMD_CHUNK_PAGES || rec->slot >= PMD_PAGE_SLOTS)
			continue;
		/*
		 * What both sides of the fork saw in a frozen page the parent has
		 * reported; the writer's prefix check is not that (it is about
		 * the snapshot, across pages).
		 */
		if (rec->frozen != LIVE && !writer_rec(rec->frozen, rec->slot, rec->code) &&
		    pmd_mask_test(f->c->reported_pages, rec->page))
			continue;
		cls = child_class(f, key, rec);
		memset(&ev, 0, sizeof(ev));
		ev.kind = PMD_EV_CORRUPTION;
		ev.class = cls;
		ev.t_ns = pmd_now_ns();
		ev.worker = (int)w->id;
		ev.stressor = w->si->st->name;
		pmd_event_at_chunk(&ev, f->c, rec->page, rec->slot);
		ev.gen = f->gen;
		ev.expected = rec->expected;
		ev.actual = rec->actual;
		ev.bad_slots = rec->bad;
		ev.thp = pmd_thp_probe(run, f->c, NULL);
		child_text(fw, rec, f, cls, ev.text, sizeof(ev.text));
		pmd_event_post(run, &ev);
		pmd_count(w, M_BAD_SLOTS, rec->bad);
	}
	if (r->bad_pages > n)
		pmd_worker_error(w, 0, "fork: the child found %u bad pages, %u described in full",
				 r->bad_pages, n);
}

/* A child that died of a signal: the kernel faulted it on a page it had mapped. */
static void post_child_signal(struct pmd_worker *w, struct fork_worker *fw, int sig)
{
	const struct child_result *r = fw->res;
	const struct frozen *f;
	struct frozen tmp;
	struct pmd_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.kind = PMD_EV_SIGNAL;
	ev.t_ns = pmd_now_ns();
	ev.worker = (int)w->id;
	ev.stressor = w->si->st->name;
	ev.chunk = -1;
	f = rec_chunk(fw, r->at_frozen, &tmp);
	if (f && r->at_page < PMD_CHUNK_PAGES) {
		pmd_event_at_chunk(&ev, f->c, r->at_page, 0);
		ev.thp = pmd_thp_probe(w->si->run, f->c, NULL);
	}
	snprintf(ev.text, sizeof(ev.text), "fork child died of %s in pass %u at chunk %d page %d",
		 strsignal(sig), r->pass, ev.chunk, ev.page);
	pmd_event_post(w->si->run, &ev);
}

static void decode(struct pmd_worker *w, struct fork_worker *fw, int status, bool killed)
{
	const struct child_result *r = fw->res;

	/* what it wrote down before it ended is true, even if we killed it */
	if (r->nrec || r->bad_pages)
		post_child(w, fw);
	if (killed)
		return;
	if (WIFSIGNALED(status)) {
		post_child_signal(w, fw, WTERMSIG(status));
		return;
	}
	/* the exit status is the worst finding: anything else is not our child's doing */
	if (WIFEXITED(status) && WEXITSTATUS(status) != (int)r->code)
		pmd_worker_error(w, 0, "fork: the child exited with status %d, its result page "
				       "says %u",
				 WEXITSTATUS(status), r->code);
}

/* The parent's side after reaping: its own writes only, then hand the chunks back. */
static void thaw(struct pmd_worker *w, struct fork_priv *fp, struct fork_worker *fw)
{
	unsigned i;

	/*
	 * Nothing held (and so no writer): write nothing to *fw either, a page
	 * fork() write-protected; the first write would be a fault of the tool's.
	 */
	if (!fw->nfrozen)
		return;
	writer_clear(fw);
	for (i = 0; i < fw->nfrozen; i++) {
		struct pmd_chunk *c = fw->frozen[i].c;

		if (w->si->cfg->verify) {
			uint64_t t = pmd_now_ns();
			char *addr = pmd_chunk_enter(c);

			if (addr) {
				pmd_count(w, M_BAD_SLOTS,
					  pmd_verify_pages(w, c, addr, 0, PMD_CHUNK_PAGES));
				pmd_chunk_exit(c);
			}
			pmd_latency(w, L_VERIFY, pmd_now_ns() - t);
		}
		if ((int)i == fw->leaked)
			leak_undo(w, fp, fw);
		pmd_count_thp(w, pmd_thp_probe(w->si->run, c, NULL));
		pmd_chunk_release(c, PMD_CHUNK_IDLE);
	}
	fw->nfrozen = 0;
}

/* One fork: freeze, fork, write, reap, decode, verify, thaw. 0, or -errno to stop. */
static int fork_once(struct pmd_worker *w, struct fork_priv *fp, struct fork_worker *fw)
{
	/* read here: the run's state, where the stressor instance lies, is no child's */
	const uint64_t key = w->si->arena->tag_key;
	const bool verify = w->si->cfg->verify;
	uint64_t t0, t1, t2, s0 = 0, s1 = 0;
	unsigned i;
	int status = 0, rc, err, home;
	bool quick, killed; /* quick: the child only exits */
	pid_t pid;

	if (children_check(fp)) {
		memset(fw->res, 0, sizeof(*fw->res));
		freeze(w, fp, fw);
		if (!fw->nfrozen)
			pmd_count(w, M_UNFROZEN, 1);
		if (fw->leaked >= 0)
			leak_make(w, fp, fw);
		/* and the chunk a round is writing, held open across fork() */
		fw->live.c = NULL;
		if (pmd_rand_below(w, 100) < fp->o->race)
			pmd_fork_live_take(w, &fw->live,
					   (unsigned)pmd_rand_below(w, w->si->arena->nchunks));
	}
	pmd_fork_lock();
	writer_open(w, fw);
	quick = !fw->nfrozen && !fw->writing && !fw->live.c;
	if (fw->writing)
		s0 = pmd_fork_writer_seq(&fw->wr);
	/* the seed race's memcg way: no window while a fork and its rewrite charge */
	pmd_memcg_charge_begin(w->si->run);
	home = pmd_memcg_fork_prepare(w->si->run);
	t0 = pmd_now_ns();
	pid = pmd_fork();
	if (pid == 0) {
		/*
		 * Nothing frozen, no writer (--fork-chunks 0, as AIM9's fork_test):
		 * nothing to check, so exit at once. Each page the child touches
		 * first is a fault of its own, the MAP_SHARED result page and each
		 * page of code included (fork copies no PTE of either): measured,
		 * those few faults made pmdstress's fork/s 10-15% lower than the
		 * bare loop's, whose child also only exits (bench/run.py forkexec).
		 */
		if (quick) {
			pmd_pool_forget(); /* a syscall on nothing; src/run/pool.c says why */
			_exit(0);
		}
		pmd_fork_child_init(fp->self);
		pmd_memcg_fork_child(home);
		child_altstack_off();
		child_main(fw, key, verify);
	}
	/* read after the child left: to it __errno_location was a page of text to fault in */
	err = errno;
	t1 = pmd_now_ns();
	pmd_memcg_fork_parent(home);
	if (fw->writing)
		s1 = pmd_fork_writer_seq(&fw->wr);
	pmd_fork_unlock();
	if (fw->writing) {
		/* past what the child can have seen, when there is a child */
		pmd_fork_writer_close(&fw->wr, pid >= 0);
		if (pid > 0)
			pmd_count(w, M_WR_DURING, s1 - s0);
	}
	if (fw->live.c && pid > 0)
		pmd_chunk_log(fw->live.c, t1, PMD_OP_FORK, w->id, (uint32_t)pid);
	/* the round may close now: the child has its copy */
	pmd_fork_live_release(&fw->live, fw->res->live_raced);
	if (pid < 0) {
		pmd_memcg_charge_end(w->si->run);
		thaw(w, fp, fw);
		if (pmd_fork_backoff(w, err, M_EAGAIN))
			return 0;
		pmd_worker_error(w, -err, "fork: fork() failed");
		return -err;
	}
	pmd_latency(w, L_FORK, t1 - t0);
	for (i = 0; i < fw->nfrozen; i++)
		pmd_chunk_log(fw->frozen[i].c, t1, PMD_OP_FORK, w->id, (uint32_t)pid);
	if (fw->nfrozen)
		cow_write(w, fw);
	pmd_memcg_charge_end(w->si->run);
	/* the child's second pass may start; release: a write that crossed the fork shows in it */
	if (!quick) {
		__atomic_store_n(&fw->res->written, 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, &fw->res->written, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	}
	/*
	 * A child that only exits cannot keep us waiting past the run's end:
	 * wait as the bare loop does, without the pidfd that lets a stop cut
	 * a checking child short (pidfd_open, poll and close: three syscalls,
	 * several microseconds a fork on this VM, where one costs about 1 us).
	 */
	pmd_child_set(w, pid);
	rc = quick ? pmd_fork_reap(pid, &status) : pmd_fork_wait(w, pid, &status, "fork child");
	killed = rc == -EINTR || pmd_child_killed(w); /* by the run, not its death */
	pmd_child_set(w, 0);
	t2 = pmd_now_ns();
	if (rc && rc != -EINTR)
		pmd_worker_error(w, rc, "fork: waiting for child %d", (int)pid);
	if (!rc || rc == -EINTR)
		decode(w, fw, status, killed);
	if (!rc) {
		pmd_latency(w, L_REAP, t2 - t0);
		pmd_count(w, M_OPS, 1);
		/* a check counts once the child finished it, not when the run killed it */
		if (fw->nfrozen) {
			pmd_count(w, M_CHECKED, 1);
			pmd_count(w, M_FROZEN, fw->nfrozen);
		}
		if (fw->live.c) {
			pmd_count(w, M_LIVE, 1);
			pmd_count(w, M_LIVE_PAGES, PMD_CHUNK_PAGES);
		}
	}
	thaw(w, fp, fw);
	return rc == -EINTR ? 0 : rc;
}

static int fork_run(struct pmd_worker *w)
{
	struct fork_priv *fp = w->si->priv;
	struct fork_worker *fw = w->priv;
	uint64_t next = 0;

	while (pmd_pace(w, &next, fp->o->rate)) {
		int rc = fork_once(w, fp, fw);

		pmd_beat(w);
		if (rc)
			break; /* said already */
	}
	return 0;
}

/* ---- setup and the end ------------------------------------------------------ */

static const char *fork_supported(struct pmd_sinst *si)
{
	const struct fork_opts *o = si->opts;

	if (o->leak && o->leak_chunk >= si->arena->nchunks) {
		snprintf(si->why, sizeof(si->why),
			 "--fork-leak-chunk %llu is outside the arena (%u chunks)",
			 (unsigned long long)o->leak_chunk, si->arena->nchunks);
		return si->why;
	}
	return NULL;
}

static int fork_setup(struct pmd_sinst *si)
{
	static uint32_t noted; /* once per process, not once per bench round */
	const struct fork_opts *o = si->opts;
	struct fork_priv *fp = calloc(1, sizeof(*fp));
	unsigned i;

	if (!fp)
		return -ENOMEM;
	si->priv = fp;
	fp->o = o;
	fp->self = getpid();
	fp->check = !si->arena->shared;
	if (!fp->check && o->chunks && !__atomic_exchange_n(&noted, 1, __ATOMIC_RELAXED))
		fprintf(stderr, "pmdstress: fork: the arena is MAP_SHARED, so parent and child share "
				"its pages by design: the COW checks are off (forks are still run "
				"and measured)\n");
	fp->fw = calloc(si->nworkers ? si->nworkers : 1, sizeof(*fp->fw));
	if (!fp->fw)
		return -ENOMEM;
	fp->nfw = si->nworkers;
	for (i = 0; i < si->nworkers; i++) {
		struct fork_worker *fw = &fp->fw[i];

		fw->res = &fw->no_res;
		if (children_check(fp)) {
			fw->res = mmap(NULL, sizeof(*fw->res), PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
			if (fw->res == MAP_FAILED) {
				fw->res = NULL;
				return -errno;
			}
		}
		fw->leaked = -1;
		fw->fault_page = -1;
		fw->cursor = (unsigned)((uint64_t)i * si->arena->nchunks / si->nworkers);
		si->workers[i].priv = fw;
		/*
		 * A limit of this machine (pids.max, RLIMIT_NPROC): fork on without
		 * it. --single-thread means no thread beside the worker: none then.
		 */
		if (o->writer && children_check(fp) && !si->cfg->single_thread) {
			int rc = pmd_fork_writer_start(&fw->wr, si->arena->tag_key);

			if (rc)
				fprintf(stderr, "pmdstress: fork: cannot start worker %u's writer "
						"thread (%s): its forks run without writes during "
						"fork()\n",
					i, strerror(-rc));
		}
	}
	if (o->populate && si->nworkers) {
		unsigned thp, n = pmd_fork_populate(si, &thp);

		pmd_count(&si->workers[0], M_POPULATED, n);
		pmd_count(&si->workers[0], M_POPULATED_THP, thp);
	}
	return 0;
}

/* Whatever stayed settled since it was last verified must still hold it. */
static int fork_verify(struct pmd_sinst *si)
{
	struct pmd_arena *a = si->arena;
	unsigned i;

	if (!si->cfg->verify || !si->nworkers)
		return 0;
	rcu_register_thread();
	for (i = 0; i < a->nchunks; i++) {
		struct pmd_chunk *c = &a->chunks[i];
		char *addr;

		if (!c->nslots || !pmd_chunk_claim(c, PMD_CHUNK_IDLE, PMD_CHUNK_HELD))
			continue;
		addr = pmd_chunk_enter(c);
		if (addr) {
			pmd_verify_pages(&si->workers[0], c, addr, 0, PMD_CHUNK_PAGES);
			pmd_chunk_exit(c);
		}
		pmd_chunk_release(c, PMD_CHUNK_IDLE);
	}
	rcu_unregister_thread();
	return 0;
}

static void fork_teardown(struct pmd_sinst *si)
{
	struct fork_priv *fp = si->priv;
	unsigned i;

	if (!fp)
		return;
	pmd_fork_eagain_say(si, M_EAGAIN);
	for (i = 0; fp->fw && i < fp->nfw; i++)
		pmd_fork_writer_quit(&fp->fw[i].wr);
	for (i = 0; children_check(fp) && fp->fw && i < fp->nfw; i++)
		if (fp->fw[i].res)
			munmap(fp->fw[i].res, sizeof(*fp->fw[i].res));
	free(fp->fw);
	free(fp);
	si->priv = NULL;
}

const struct pmd_stressor pmd_stressor_fork = {
	.abi = PMD_STRESSOR_ABI,
	.name = "fork",
	.summary = "fork while the storm faults; the child and the parent check copy-on-write "
		   "of frozen chunks",
	.options = fork_options,
	.opts_size = sizeof(struct fork_opts),
	.metrics = fork_metrics,
	.workers = "1",
	.supported = fork_supported,
	.setup = fork_setup,
	.run = fork_run,
	.verify = fork_verify,
	.teardown = fork_teardown,
};
