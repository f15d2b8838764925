/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fork stressor's writer (implemented in stress/fork_writer.c): a
 * helper thread that writes the frozen chunks while fork() copies them, and
 * the check its child makes of what it got.
 *
 * Around each fork the helper stores an increasing sequence number, one
 * aligned 8-byte store per write, into one slot of each of a set of pages
 * ("units"), round robin: write #s goes to unit (s - 1) % n. It runs from
 * before the fork() call (one full round first, so every unit holds a
 * write), through it, to n + 2 writes after it returns
 * (pmd_fork_writer_close() says why two).
 *
 * What a correct fork gives the child: copy-on-write copies at page
 * granularity and one 8-byte store is never split, so the question is not
 * within a store but across them. fork() holds the mmap lock and write-locks
 * each VMA before copying it, so a write that faults on a page fork has
 * already write-protected waits until fork is done, and every write that
 * does land before that lands in the page the child gets (stores through a
 * TLB entry fork has not flushed yet go to the page parent and child now
 * share). The helper's writes are ordered (release stores), so the child
 * must see a prefix of them: if it sees write #j it sees every #i < j. It
 * does not if fork copied some page tables before the helper's writes and
 * others after them while those writes went on — the per-VMA-lock fault vs
 * fork race fixed in 6.4, whose faults ran on a VMA fork was copying — or if
 * a write after the fork reached it (a page shared by mistake). Pinned
 * pages (FOLL_PIN, which fork copies at once instead of sharing) would
 * break the argument; pmdstress pins nothing.
 */
#ifndef PMDSTRESS_STRESS_FORK_WRITER_H
#define PMDSTRESS_STRESS_FORK_WRITER_H

#include <pmdstress/stressor.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define PMD_FORK_WRITER_SLOT (PMD_PAGE_SLOTS - 2) /* the fork child's is the last */
#define PMD_FORK_WRITER_STRIDE 32		  /* every 32nd page of a frozen chunk */
#define PMD_FORK_WRITER_PAGES (PMD_CHUNK_PAGES / PMD_FORK_WRITER_STRIDE)
#define PMD_FORK_WRITER_MAX_UNITS (16 * PMD_FORK_WRITER_PAGES) /* 16 frozen chunks at most */

struct pmd_fork_writer {
	uint32_t state;	  /* atomic futex word: idle, go, quit */
	uint32_t done;	  /* atomic futex word: the helper ended the window */
	uint64_t seq;	  /* atomic: writes made in this window, the last one's number */
	uint64_t stop_at; /* atomic: the helper stops once seq reaches it */
	uint64_t key;	  /* the run's tag key: a write of another run never verifies */
	unsigned nunits;
	uint64_t *unit[PMD_FORK_WRITER_MAX_UNITS];
	pthread_t thread;
	bool running;
};

/* What the child found; seq numbers are the helper's write numbers. */
struct pmd_fork_writer_finding {
	unsigned wrong;	       /* units holding neither zero nor a write of theirs */
	unsigned wrong_unit;   /* the first of them */
	uint64_t wrong_value;  /* and what it held */
	unsigned behind;       /* units missing a write older than the newest seen */
	unsigned seen_unit;    /* where the newest write seen is */
	uint64_t seen;	       /* its number */
	unsigned missing_unit; /* the unit missing the oldest such write */
	uint64_t missing;      /* that write's number */
};

/* Start the helper thread (idle until a window opens); 0 or -errno. */
int pmd_fork_writer_start(struct pmd_fork_writer *fw, uint64_t key);
/* End it; harmless if it never started. No window may be open. */
void pmd_fork_writer_quit(struct pmd_fork_writer *fw);

/*
 * Open a window over units fw->unit[0..nunits-1] (nunits > 0; every unit
 * reads zero now): the helper starts writing. Returns at once; see
 * pmd_fork_writer_seq() for its progress.
 */
void pmd_fork_writer_open(struct pmd_fork_writer *fw);
/* The number of the last write the helper made (0: none yet). */
uint64_t pmd_fork_writer_seq(struct pmd_fork_writer *fw);
/*
 * End the window and wait until the helper stopped: at once, or if @forked
 * (called after fork() returned) once every unit holds a write newer than
 * any the child can have seen, and one more.
 */
void pmd_fork_writer_close(struct pmd_fork_writer *fw, bool forked);

/* The value write #@seq stores into unit @unit. */
uint64_t pmd_fork_writer_value(const struct pmd_fork_writer *fw, unsigned unit, uint64_t seq);

/*
 * In the fork child (async-signal-safe: loads and arithmetic only): read
 * every unit once and check what they hold is a prefix of the helper's
 * writes. Returns true if clean; *@f says what was wrong otherwise.
 */
bool pmd_fork_writer_check(const struct pmd_fork_writer *fw, struct pmd_fork_writer_finding *f);

#endif
