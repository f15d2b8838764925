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
#include <time.h>
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

/*
 * The baton. With more racing groups than CPUs, a group's racers are rarely
 * on a CPU together: on 2 CPUs, 29 groups of 2 spread over 58 threads meant
 * most racers of a round were asleep while the others faulted (30-95
 * collided rounds/s against 3,200-5,900 for a bare loop of two racers).
 * Groups are cut into batches of @slots; one batch races at a time, each
 * of its groups for a turn, and the last group of a batch to finish its
 * turn starts the next batch that still has groups. A batch's futex word
 * is its own, so a change of turn wakes only the groups it concerns.
 */
void pmd_baton_init(struct pmd_baton *b, unsigned ngroups, unsigned slots,
		    struct pmd_baton_batch *batches)
{
	unsigned i;

	b->slots = slots ? slots : 1;
	b->nbatch = (ngroups + b->slots - 1) / b->slots;
	b->batches = batches; /* nbatch of them */
	for (i = 0; i < b->nbatch; i++) {
		unsigned n = ngroups - i * b->slots;

		batches[i].go = 0;
		batches[i].members = n < b->slots ? n : b->slots;
	}
	b->left = b->nbatch ? batches[0].members : 0;
}

uint32_t pmd_baton_pass(struct pmd_baton *b, unsigned batch, bool leaving)
{
	struct pmd_baton_batch *bb = &b->batches[batch];
	uint32_t seen = __atomic_load_n(&bb->go, __ATOMIC_ACQUIRE);
	unsigned next = batch, i;

	if (leaving)
		__atomic_sub_fetch(&bb->members, 1, __ATOMIC_RELAXED);
	/* acq_rel: the next batch's first round sees this batch's last */
	if (b->nbatch < 2 || __atomic_sub_fetch(&b->left, 1, __ATOMIC_ACQ_REL))
		return seen;
	for (i = 0; i < b->nbatch; i++) {
		uint32_t n;

		next = (next + 1) % b->nbatch;
		n = __atomic_load_n(&b->batches[next].members, __ATOMIC_RELAXED);
		if (!n)
			continue;
		__atomic_store_n(&b->left, n, __ATOMIC_RELAXED);
		/* seq_cst, then wake: a waiter either sees the new word or is woken */
		__atomic_add_fetch(&b->batches[next].go, 1, __ATOMIC_SEQ_CST);
		futex(&b->batches[next].go, FUTEX_WAKE_PRIVATE, INT_MAX);
		break;
	}
	return seen;
}

void pmd_baton_release_all(struct pmd_baton *b)
{
	unsigned i;

	for (i = 0; i < b->nbatch; i++) {
		__atomic_add_fetch(&b->batches[i].go, 1, __ATOMIC_SEQ_CST);
		futex(&b->batches[i].go, FUTEX_WAKE_PRIVATE, INT_MAX);
	}
}

bool pmd_baton_wait(struct pmd_baton *b, unsigned batch, uint32_t seen, bool (*stop)(void *),
		    void *arg)
{
	uint32_t *go = &b->batches[batch].go;
	/*
	 * Timed only as a safety net: the run's stop releases every batch
	 * (pmd_baton_release_all). Polled every 20 ms, 3000 waiting workers
	 * woke 150,000 times a second and a start-up stopped by SIGINT took
	 * 20 s to wind down.
	 */
	struct timespec ts = { 1, 0 };
	bool turn = true;

	/*
	 * The other batches' turns, not this worker's stall: each sleep ends
	 * as the peers' (before @stop, which may beat): --hang-timeout 1s
	 * took the 1 s sleeps here for a hang (exit 4).
	 */
	pmd_peers_wait();
	while (__atomic_load_n(go, __ATOMIC_ACQUIRE) == seen) {
		if (stop(arg)) {
			turn = false;
			break;
		}
		syscall(SYS_futex, go, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
		pmd_peers_came();
		pmd_peers_wait();
	}
	pmd_peers_came();
	return turn;
}
