// SPDX-License-Identifier: GPL-2.0
/*
 * The seed-race round of the fault storm: see stress/fault_seed.h for the
 * race and the mechanisms that make racers of one round take different
 * paths on one pmd_none PMD.
 */
#include "fault_seed.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

/* how long a racer waits for the others of its role before going on alone */
#define ROLE_WAIT_NS (2ull * 1000 * 1000)
/* the delay window before anything was learned, and its bounds */
#define WINDOW_START_NS (50ull * 1000)
#define WINDOW_MIN_NS (2ull * 1000)
#define WINDOW_MAX_NS (2ull * 1000 * 1000)

/* Faults hold per-VMA locks, not mmap_lock, from 6.4 on (x86-64, arm64, ...). */
static bool per_vma_lock_kernel(void)
{
	struct utsname u;
	unsigned major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 4);
}

unsigned pmd_seed_mechanisms(struct pmd_sinst *si, char *why, size_t len)
{
	unsigned mech = 0;
	size_t n;
	int off = prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0);

	why[0] = '\0';
	if (si->arena->thp == PMD_THP_NOHUGE) {
		snprintf(why, len, "--thp nohuge: no racer can take the THP path");
		return 0;
	}
	if (off < 0)
		snprintf(why, len, "prctl: PR_GET_THP_DISABLE failed (%s)", strerror(errno));
	else if (off)
		snprintf(why, len, "prctl: THP is disabled for this process already (inherited)");
	else if (!per_vma_lock_kernel())
		snprintf(why, len, "prctl: kernel before 6.4, faults hold mmap_lock, which "
				   "PR_SET_THP_DISABLE waits for");
	else
		mech |= PMD_SEED_MECH_PRCTL;
	/* room for one huge page, not two: the second racer's charge fails */
	if (si->cfg->memcg_headroom >= PMD_CHUNK_SIZE &&
	    si->cfg->memcg_headroom < 2 * PMD_CHUNK_SIZE)
		mech |= PMD_SEED_MECH_MEMCG;
	/* no prctl way here: a cgroup of the run's own whose limit seed rounds tighten */
	if (!mech && !si->cfg->memcg_headroom) {
		n = strlen(why);
		if (!pmd_memcg_seed_enter(si->run, why + n + (n ? 2 : 0), len - n - (n ? 2 : 0)))
			mech |= PMD_SEED_MECH_MEMCG | PMD_SEED_MEMCG_WINDOW;
		else if (n)
			memcpy(why + n, "; ", 2);
	}
	return mech;
}

const char *pmd_seed_mech_names(unsigned mech, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", mech & PMD_SEED_MECH_PRCTL ? "prctl" : "",
		 (mech & PMD_SEED_MECH_PRCTL) && (mech & PMD_SEED_MECH_MEMCG) ? "," : "",
		 mech & PMD_SEED_MECH_MEMCG ? "memcg" : "");
	return buf;
}

void fault_seed_plan(struct fault_seed *s, bool pick, unsigned mech, unsigned n,
		     uint64_t (*rnd)(void *, uint64_t), void *arg)
{
	s->on = pick && mech && n >= 2;
	s->mech = s->on ? mech & ~PMD_SEED_MEMCG_WINDOW : 0;
	s->memcg_window = s->on && (mech & PMD_SEED_MEMCG_WINDOW);
	__atomic_store_n(&s->loosened, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->flip, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->pte_done, 0, __ATOMIC_RELAXED);
	if (!s->on)
		return;
	if (!s->window_ns)
		s->window_ns = WINDOW_START_NS;
	/* half the racers, at least one, take the PTE role; which half rotates */
	s->npte = n / 2;
	s->pte_first = (unsigned)rnd(arg, n);
	/*
	 * prctl: anywhere in the first half of the THP racer's clearing. memcg:
	 * just after the THP racer's charge, early, since the PTE-role racer's
	 * own charge fails only after memcg reclaim gave up, and its fallback
	 * must still find the PMD empty.
	 */
	if (s->mech & PMD_SEED_MECH_PRCTL)
		s->delay_ns = rnd(arg, s->window_ns / 2);
	else
		s->delay_ns = WINDOW_MIN_NS + rnd(arg, s->window_ns / 16);
}

unsigned fault_seed_role(const struct fault_seed *s, unsigned slot, unsigned n)
{
	if (!s->on)
		return PMD_ROLE_ANY;
	return (slot + n - s->pte_first) % n < s->npte ? PMD_ROLE_PTE : PMD_ROLE_THP;
}

static uint64_t thread_minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return (uint64_t)ru.ru_minflt;
}

static void spin_until(const struct pmd_worker *w, uint64_t t)
{
	while (pmd_now_ns() < t && !pmd_should_stop(w))
		__asm__ __volatile__("" ::: "memory");
}

/* Spin until *word reaches @want or ROLE_WAIT_NS passed. */
static void wait_word(const struct pmd_worker *w, uint32_t *word, uint32_t want)
{
	uint64_t end = pmd_now_ns() + ROLE_WAIT_NS;

	while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < want && pmd_now_ns() < end &&
	       !pmd_should_stop(w))
		__asm__ __volatile__("" ::: "memory");
}

static void thp_off(struct fault_thp_off *off, bool on)
{
	pthread_mutex_lock(&off->lock);
	/* the first user disables, the last enables: groups racing at once share the flag */
	if (on ? !off->users++ : !--off->users) {
		if (prctl(PR_SET_THP_DISABLE, on ? 1 : 0, 0, 0, 0))
			off->errors++;
		else
			off->flips++;
	}
	pthread_mutex_unlock(&off->lock);
}

void fault_seed_store(struct fault_seed *s, const struct pmd_worker *w, unsigned slot,
		      unsigned n, uint64_t *p, uint64_t v, uint64_t span[2], unsigned *faults)
{
	unsigned role = fault_seed_role(s, slot, n);
	bool flipper = role == PMD_ROLE_PTE && slot == s->pte_first;
	uint64_t f0;

	if (flipper) {
		spin_until(w, pmd_now_ns() + s->delay_ns);
		if (s->mech & PMD_SEED_MECH_PRCTL)
			thp_off(s->off, true);
		__atomic_store_n(&s->flip, 1, __ATOMIC_RELEASE);
	} else if (role == PMD_ROLE_PTE) {
		wait_word(w, &s->flip, 1);
	}
	f0 = thread_minflt();
	span[0] = pmd_now_ns();
	pmd_store(p, v);
	span[1] = pmd_now_ns();
	*faults = (unsigned)(thread_minflt() - f0);
	if (role != PMD_ROLE_PTE)
		return;
	/*
	 * The memcg way: the THP-role racers charged their huge page before
	 * this store began (a huge page is charged before it is cleared), so
	 * this one's charge failed and it fell back: the limit has done its
	 * work. Lifted by the first PTE-role racer done, it was tight for a
	 * few microseconds here, not for a huge page's clearing (~20 ms under
	 * TCG), in which anything else the run charged could meet it.
	 */
	if (s->memcg_window)
		fault_seed_loosen(s, w->si->run);
	__atomic_add_fetch(&s->pte_done, 1, __ATOMIC_RELEASE);
	if (!flipper)
		return;
	wait_word(w, &s->pte_done, s->npte);
	if (s->mech & PMD_SEED_MECH_PRCTL)
		thp_off(s->off, false);
	__atomic_store_n(&s->flip, 2, __ATOMIC_RELEASE);
}

void fault_seed_loosen(struct fault_seed *s, struct pmd_run *run)
{
	if (s->memcg_window && !__atomic_exchange_n(&s->loosened, 1, __ATOMIC_ACQ_REL))
		pmd_memcg_seed_loose(run);
}

void fault_seed_learn(struct fault_seed *s, const struct pmd_race_round *rr)
{
	unsigned i;

	if (!s->on)
		return;
	for (i = 0; i < rr->nracers; i++) {
		const struct pmd_racer_span *r = &rr->r[i];
		uint64_t t;

		/* a THP-role store that faulted: how long allocating and clearing 2 MiB takes */
		if (r->role != PMD_ROLE_THP || !r->hi || !r->faults || r->faults == 0xff)
			continue;
		t = r->hi - r->lo;
		/* EWMA, 1/8 per sample; the delay is drawn below it */
		s->window_ns = s->window_ns - s->window_ns / 8 + t / 8;
		if (s->window_ns < WINDOW_MIN_NS)
			s->window_ns = WINDOW_MIN_NS;
		if (s->window_ns > WINDOW_MAX_NS)
			s->window_ns = WINDOW_MAX_NS;
	}
}
