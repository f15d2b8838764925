// SPDX-License-Identifier: GPL-2.0
/*
 * The fork stressor's writer: a helper thread that writes while fork()
 * copies, and the child's prefix check (stress/fork_writer.h says why a
 * correct fork gives the child a prefix of the helper's writes).
 */
#include "fork_writer.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { WR_IDLE, WR_GO, WR_QUIT };

#define SEQ_MASK ((1ull << 48) - 1)
#define WR_STACK (64u << 10)

static long futex(uint32_t *uaddr, int op, uint32_t val)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

uint64_t pmd_fork_writer_value(const struct pmd_fork_writer *fw, unsigned unit, uint64_t seq)
{
	/* keyed check bits over number and unit: a write in the wrong page does not verify */
	uint64_t check = pmd_stamp_mix((seq & SEQ_MASK) ^ fw->key ^ ((uint64_t)(unit + 1) << 48));

	return (check << 48) | (seq & SEQ_MASK);
}

/* One window: write until seq reaches stop_at, then say so. */
static void window(struct pmd_fork_writer *fw)
{
	unsigned u = 0, n = fw->nunits;
	uint64_t s = 0;

	while (s < __atomic_load_n(&fw->stop_at, __ATOMIC_RELAXED)) {
		s++;
		/*
		 * Release: every earlier write is visible before this one, on any
		 * CPU (on x86 a plain store). The child's prefix check rests on it.
		 */
		__atomic_store_n(fw->unit[u], pmd_fork_writer_value(fw, u, s), __ATOMIC_RELEASE);
		__atomic_store_n(&fw->seq, s, __ATOMIC_RELEASE);
		if (++u == n)
			u = 0;
	}
	/* idle before done: the parent's next go comes after it saw done */
	__atomic_store_n(&fw->state, WR_IDLE, __ATOMIC_RELAXED);
	__atomic_store_n(&fw->done, 1, __ATOMIC_RELEASE);
	futex(&fw->done, FUTEX_WAKE_PRIVATE, 1);
}

static void *writer_main(void *arg)
{
	struct pmd_fork_writer *fw = arg;

	prctl(PR_SET_NAME, "pmd/fork/writer", 0, 0, 0);
	for (;;) {
		uint32_t st = __atomic_load_n(&fw->state, __ATOMIC_ACQUIRE);

		if (st == WR_QUIT)
			return NULL;
		if (st == WR_GO)
			window(fw); /* acquire above: sees the units and stop_at open() set */
		else
			futex(&fw->state, FUTEX_WAIT_PRIVATE, st);
	}
}

int pmd_fork_writer_start(struct pmd_fork_writer *fw, uint64_t key)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int rc;

	fw->key = key;
	fw->state = WR_IDLE;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, WR_STACK);
	/* the run's signals go to the threads that handle them, never to this one */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&fw->thread, &attr, writer_main, fw);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	fw->running = !rc;
	return -rc;
}

void pmd_fork_writer_quit(struct pmd_fork_writer *fw)
{
	if (!fw->running)
		return;
	__atomic_store_n(&fw->stop_at, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&fw->state, WR_QUIT, __ATOMIC_RELEASE);
	futex(&fw->state, FUTEX_WAKE_PRIVATE, 1);
	pthread_join(fw->thread, NULL);
	fw->running = false;
}

void pmd_fork_writer_open(struct pmd_fork_writer *fw)
{
	__atomic_store_n(&fw->seq, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&fw->stop_at, UINT64_MAX, __ATOMIC_RELAXED);
	__atomic_store_n(&fw->done, 0, __ATOMIC_RELAXED);
	/* release: the units and the fields above before the helper starts on them */
	__atomic_store_n(&fw->state, WR_GO, __ATOMIC_RELEASE);
	futex(&fw->state, FUTEX_WAKE_PRIVATE, 1);
}

uint64_t pmd_fork_writer_seq(struct pmd_fork_writer *fw)
{
	return __atomic_load_n(&fw->seq, __ATOMIC_ACQUIRE);
}

/*
 * After fork() returned, the child may have seen one write past the number
 * read now: window() stores a unit, then its number, and can be preempted in
 * between while fork() runs, so write #s + 1 reached a private page the
 * child got (stores made before fork's TLB flush are visible when it
 * returns; later ones to a private page fault into the parent's copy). From
 * #s + 2 on, every unit written once more, and one more: a page shared with
 * the child by mistake then shows a write newer than one a private page
 * misses. (With n + 1, a loaded machine hid the self-test's torn snapshot
 * about once in 20 runs: the shared unit's only later write was #s + 2, no
 * newer than the first write the child missed.)
 */
void pmd_fork_writer_close(struct pmd_fork_writer *fw, bool forked)
{
	uint64_t more = forked ? fw->nunits + 2 : 0;

	__atomic_store_n(&fw->stop_at, pmd_fork_writer_seq(fw) + more, __ATOMIC_RELAXED);
	/* acquire: its writes are done before ours (the thaw's zeroing) begin */
	while (!__atomic_load_n(&fw->done, __ATOMIC_ACQUIRE))
		futex(&fw->done, FUTEX_WAIT_PRIVATE, 0);
}

/* Write number in unit @u's value @v: 0 for zero, UINT64_MAX if not a write of @u. */
static uint64_t decode(const struct pmd_fork_writer *fw, unsigned u, uint64_t v)
{
	uint64_t s = v & SEQ_MASK;

	if (!v)
		return 0;
	if (!s || v != pmd_fork_writer_value(fw, u, s) || (s - 1) % fw->nunits != u)
		return UINT64_MAX;
	return s;
}

bool pmd_fork_writer_check(const struct pmd_fork_writer *fw, struct pmd_fork_writer_finding *f)
{
	uint64_t seq[PMD_FORK_WRITER_MAX_UNITS];
	unsigned n = fw->nunits, u;

	f->wrong = f->behind = 0;
	f->seen = f->missing = 0;
	f->seen_unit = f->missing_unit = f->wrong_unit = 0;
	f->wrong_value = 0;
	for (u = 0; u < n; u++) {
		uint64_t v = __atomic_load_n(fw->unit[u], __ATOMIC_RELAXED);

		seq[u] = decode(fw, u, v);
		if (seq[u] == UINT64_MAX) {
			if (!f->wrong++) {
				f->wrong_unit = u;
				f->wrong_value = v;
			}
		} else if (seq[u] > f->seen) {
			f->seen = seq[u];
			f->seen_unit = u;
		}
	}
	/*
	 * Unit u holding write #s was written next by #s + n (by #u + 1 if it
	 * holds none): seeing a newer write than that anywhere is not a prefix.
	 */
	for (u = 0; u < n; u++) {
		uint64_t next;

		if (seq[u] == UINT64_MAX)
			continue;
		next = seq[u] ? seq[u] + n : u + 1;
		if (next >= f->seen)
			continue;
		if (!f->behind++ || next < f->missing) {
			f->missing = next;
			f->missing_unit = u;
		}
	}
	return !f->wrong && !f->behind;
}
