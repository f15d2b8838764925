// SPDX-License-Identifier: GPL-2.0
/*
 * A thread's alternate signal stack (src/run/fatal.c): usable, with a guard
 * below it that faults, in the pool (no mapping of its own) where the kernel
 * has guard regions (6.13), and given back so that the pool's next block
 * has no guard left in it.
 */
#include "check.h"
#include "fatal.h"

#include <pmdstress/pool.h>

#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_GUARD_INSTALL
#define MADV_GUARD_INSTALL 102
#endif

static sigjmp_buf env;
static void *volatile fault_addr;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	fault_addr = si->si_addr;
	siglongjmp(env, 1);
}

/* Whether touching @p (a write if @write) raised SIGSEGV at @p. */
static bool faults(volatile char *p, bool write)
{
	fault_addr = NULL;
	if (sigsetjmp(env, 1))
		return fault_addr == (void *)p;
	if (write)
		*p = 1;
	else
		(void)*p;
	return false;
}

static unsigned maps_lines(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned n = 0;
	int c;

	if (!f)
		return 0;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* Whether this kernel puts guard regions in a private anonymous mapping (6.13). */
static bool kernel_has_guards(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	void *m = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bool ok;

	if (m == MAP_FAILED)
		return false;
	ok = !madvise(m, pg, MADV_GUARD_INSTALL);
	munmap(m, pg);
	return ok;
}

int main(void)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	bool guards = kernel_has_guards();
	struct sigaction sa;
	unsigned before, after;
	char *sp, *first;
	stack_t cur;
	void *warm;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	printf("# guard regions (MADV_GUARD_INSTALL): %s\n", guards ? "yes" : "no, before 6.13");

	/* the pool's first chunk exists before: it is not the stack's mapping */
	warm = pmd_pool_alloc(pg);
	CHECK(warm != NULL, "a pool block");
	before = maps_lines();
	CHECK(pmd_fatal_thread_init() == 0, "the thread gets an alternate stack");
	after = maps_lines();
	CHECK(!sigaltstack(NULL, &cur) && !(cur.ss_flags & SS_DISABLE) &&
		  cur.ss_size >= (64u << 10),
	      "it is in use, at least 64 KiB (%zu)", (size_t)cur.ss_size);
	sp = cur.ss_sp;
	CHECK(!((uintptr_t)sp % pg), "it starts on a page");
	CHECK(!faults(sp, true) && !faults(sp + cur.ss_size - 1, true),
	      "its lowest and highest bytes take a write");
	CHECK(faults(sp - 1, false), "the page below it faults (SIGSEGV at %p)", (void *)(sp - 1));
	if (guards)
		CHECK_EQ_U64(after, before, "in the pool with a guard region: no mapping more");
	else
		CHECK_EQ_U64(after, before + 2,
			     "without guard regions: the stack and its guard page");
	CHECK_EQ_U64(pmd_fatal_thread_init(), 0, "a second init keeps the stack");
	CHECK(!sigaltstack(NULL, &cur) && cur.ss_sp == sp, "the same one");

	pmd_fatal_thread_fini();
	CHECK(!sigaltstack(NULL, &cur) && (cur.ss_flags & SS_DISABLE), "fini turns it off");
	CHECK_EQ_U64(maps_lines(), before, "and gives its memory back");
	/* the pool's first fit hands the freed range out again: no guard may have stayed */
	first = pmd_pool_alloc(pg);
	CHECK(first != NULL, "a pool block after fini");
	if (guards)
		CHECK(first == sp - pg, "the pool reuses the stack's range, its guard page first");
	if (first)
		CHECK(!faults(first, true) && !faults(first + pg - 1, true),
		      "that page takes writes");
	CHECK(pmd_fatal_thread_init() == 0 && !sigaltstack(NULL, &cur) &&
		  !(cur.ss_flags & SS_DISABLE) && faults((char *)cur.ss_sp - 1, false),
	      "init after fini: a new stack, guarded again");
	pmd_fatal_thread_fini();
	return check_done();
}
