// SPDX-License-Identifier: GPL-2.0
/*
 * The start gate: spin, then futex. A pthread barrier wakes its waiters one
 * by one over tens of microseconds, which spreads the first touches of a
 * round apart and kills the race the fault storm exists to provoke. Here the
 * waiters spin on the generation word first, so those on a CPU leave within
 * nanoseconds of each other; only the ones that ran out of spin sleep in
 * the kernel and pay a futex wake.
 */
#include <pmdstress/stressor.h>

#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

static long futex(uint32_t *uaddr, int op, uint32_t val)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

void pmd_gate_init(struct pmd_gate *g, unsigned n, unsigned spin)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	g->arrived = 0;
	g->gen = 0;
	g->sleepers = 0;
	g->n = n ? n : 1;
	/*
	 * Spinning only helps waiters that own a CPU. With more waiters than
	 * CPUs the spinners steal time from the thread everyone waits for.
	 */
	if (!spin)
		spin = (cpus > 0 && n <= (unsigned long)cpus) ? 1u << 20 : 1u << 10;
	g->spin = spin;
}

bool pmd_gate_pass(struct pmd_gate *g, void (*serial)(void *), void *arg)
{
	uint32_t gen = __atomic_load_n(&g->gen, __ATOMIC_ACQUIRE);
	uint32_t i;

	/* acq_rel: the last arriver sees every waiter's writes before the gate */
	if (__atomic_add_fetch(&g->arrived, 1, __ATOMIC_ACQ_REL) == g->n) {
		if (serial)
			serial(arg);
		__atomic_store_n(&g->arrived, 0, __ATOMIC_RELAXED);
		/*
		 * seq_cst pairs with the waiters' seq_cst increment of sleepers:
		 * either we see a sleeper and wake it, or it sees the new
		 * generation and does not sleep. Release publishes serial()'s writes.
		 */
		__atomic_add_fetch(&g->gen, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&g->sleepers, __ATOMIC_SEQ_CST))
			futex(&g->gen, FUTEX_WAKE_PRIVATE, INT_MAX);
		return true;
	}
	for (i = 0; i < g->spin; i++) {
		if (__atomic_load_n(&g->gen, __ATOMIC_ACQUIRE) != gen)
			return false;
		cpu_relax();
	}
	__atomic_add_fetch(&g->sleepers, 1, __ATOMIC_SEQ_CST);
	pmd_peers_wait(); /* the watchdog's: the slowest worker's stall, not ours */
	while (__atomic_load_n(&g->gen, __ATOMIC_SEQ_CST) == gen)
		futex(&g->gen, FUTEX_WAIT_PRIVATE, gen); /* returns at once if gen moved */
	pmd_peers_came();
	__atomic_sub_fetch(&g->sleepers, 1, __ATOMIC_RELAXED);
	/* acquire: see everything the last arriver's serial() wrote */
	(void)__atomic_load_n(&g->gen, __ATOMIC_ACQUIRE);
	return false;
}
