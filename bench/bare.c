// SPDX-License-Identifier: GPL-2.0
/*
 * The bare loops pmdstress is measured against: the same kernel work with
 * nothing around it. One program, one mode per run, one JSON line per round
 * on stdout, so bench/run.py can interleave it with pmdstress in one run.
 *
 *   bare fault SIZE_MB ROUNDS thp|4k [shared]   one store per 4 KiB page of a fresh mapping
 *   bare mt THREADS SIZE_MB ROUNDS thp|4k       each thread its own slice, at once
 *   bare fork POP_MB SECONDS thp|4k             fork + _exit + wait, parent populated
 *   bare exec POP_MB SECONDS thp|4k [PROG ARG]  fork + execve(PROG ARG, default: self child) + wait
 *   bare race RACERS SECONDS thp|4k             RACERS meet at a barrier and first-touch
 *                                               one fresh 2 MiB chunk, each its own slot
 *                                               of every page; the last verifies every
 *                                               slot and zaps it to pmd_none; repeat
 *   bare child                                  what exec runs: exit 0 at once
 *
 * BARE_IDLE_THREADS=N makes fork and exec start N threads that only sleep
 * before the loop: the kernel's fork of a multi-threaded process costs more
 * than of a single-threaded one, and pmdstress has its main thread beside
 * the worker unless --single-thread; bench/run.py measures both shapes.
 *
 * BARE_EXEC_WAIT=pmdstress makes exec wait as the exec stressor does for
 * a program of the user's with --exec-split on, to measure what that costs
 * (bench/run.py does not set it): a close-on-exec pipe whose end-of-file
 * times the exec, then a pidfd for the exit, and in the child the stop
 * handling's syscalls (stress/exec.c exec_child). The exec-child mode the
 * bench runs has only the pipe, and a plain waitpid().
 *
 * BARE_SHAPE=pmdstress gives fork and exec, before the loop, what else a
 * `--single-thread` pmdstress has in its address space during the aim9 fork
 * row (read off /proc/PID/smaps on 2026-12-05, see pmdstress_shape()), to
 * split its gap to the bare loop into what the shape of the process costs
 * fork and what the rest does (bench/run.py does not set it).
 *
 * BARE_DONTFORK_MAPS=N gives fork and exec, before the loop, N more
 * mappings of two pages each, one page touched, MADV_DONTFORK, apart from
 * each other: what each mapping the child does not get still costs a fork
 * (src/run/pool.c says why pmdstress keeps its own memory in few mappings;
 * bench/run.py does not set it).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
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

#define PAGE 4096ul
#define HUGE (2ul << 20)

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static char *map(size_t len, int thp, int shared)
{
	size_t reserve = len + HUGE;
	char *raw = mmap(NULL, reserve, PROT_READ | PROT_WRITE,
			 (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *p;

	if (raw == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	/* 2 MiB-aligned, like pmdstress's arena */
	p = (char *)(((unsigned long)raw + HUGE - 1) & ~(HUGE - 1));
	if (p > raw)
		munmap(raw, (size_t)(p - raw));
	munmap(p + len, (size_t)(raw + reserve - (p + len)));
	madvise(p, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	return p;
}

static void *no_thread(void *arg)
{
	return arg;
}

static char *must_map(size_t len, int prot, int flags)
{
	char *p = mmap(NULL, len, prot, flags | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	return p;
}

static void touch_kib(volatile char *p, size_t kib)
{
	size_t o;

	for (o = 0; o < kib << 10; o += PAGE)
		p[o] = 1;
}

static __attribute__((noinline)) void deep_frame(void)
{
	volatile char frame[20 << 10];

	touch_kib(frame, sizeof(frame) >> 10);
}

static char more_bss[8 << 10];

/*
 * pmdstress's mappings beside the arena and the bare loop's, during the aim9
 * fork row: a thread was made and joined on a stack it then unmapped (the
 * start-up signal watcher: glibc counts the process multi-threaded from then
 * on), the pool of its own memory (src/run/pool.c: 64 MiB, MADV_DONTFORK and
 * MADV_NOHUGEPAGE, the worker stats and the fork lock resident, 72 KiB; the
 * alternate signal stack lies in it too, behind a guard region, where the
 * kernel has them: 6.13); and more resident pages in the mappings fork
 * copies than the bare loop: 33 against 17 on 2026-12-07 (the run's state, the
 * configuration and the chunks' records lie in the pool too; its RELRO and
 * .data are the bare loop's size, compiled -fno-pie and with the settings'
 * record in .bss), here 44 KiB of heap, 8 KiB of .bss and 12 KiB of stack
 * (a 20 KiB frame reaches three pages deeper).
 */
static void pmdstress_shape(void)
{
	size_t stack_len = 132 << 10;
	char *stack = must_map(stack_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_STACK), *p;
	pthread_attr_t attr;
	pthread_t tid;

	pthread_attr_init(&attr);
	if (pthread_attr_setstack(&attr, stack + PAGE, stack_len - PAGE) ||
	    pthread_create(&tid, &attr, no_thread, NULL) || pthread_join(tid, NULL)) {
		fprintf(stderr, "BARE_SHAPE: cannot run a thread\n");
		exit(2);
	}
	pthread_attr_destroy(&attr);
	munmap(stack, stack_len);
	p = must_map(64 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_NORESERVE);
	madvise(p, 64 << 20, MADV_NOHUGEPAGE);
	madvise(p, 64 << 20, MADV_DONTFORK);
	touch_kib(p, 72);
	p = malloc(44 << 10);
	if (!p) {
		perror("malloc");
		exit(2);
	}
	touch_kib(p, 44); /* kept: a heap that grew */
	touch_kib(more_bss, sizeof(more_bss) >> 10);
	deep_frame();
}

/* BARE_DONTFORK_MAPS: @n mappings fork does not copy, none beside another */
static void dontfork_maps(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		char *p = must_map(3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE);

		munmap(p + 2 * PAGE, PAGE); /* a hole: the next one is not its neighbour */
		madvise(p, 2 * PAGE, MADV_DONTFORK);
		touch_kib(p, 4);
	}
}

static long minflt(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return ru.ru_minflt;
}

static double touch(char *p, size_t len)
{
	double t0 = now_ns();
	size_t off;

	for (off = 0; off < len; off += PAGE)
		*(volatile unsigned long *)(p + off) = off | 1;
	return now_ns() - t0;
}

static int fault_mode(size_t mb, int rounds, int thp, int shared)
{
	size_t len = mb << 20;
	int r;

	for (r = 0; r < rounds; r++) {
		char *p = map(len, thp, shared);
		long f0 = minflt(RUSAGE_SELF);
		double ns = touch(p, len);
		long f = minflt(RUSAGE_SELF) - f0;

		printf("{\"round\":%d,\"ns\":%.0f,\"pages\":%zu,\"faults\":%ld,\"ns_per_page\":%.2f}\n", r,
		       ns, len / PAGE, f, ns / (double)(len / PAGE));
		fflush(stdout);
		munmap(p, len);
	}
	return 0;
}

struct slice {
	char *p;
	size_t len;
	double ns;
	pthread_barrier_t *gate;
};

static void *slice_main(void *arg)
{
	struct slice *s = arg;

	pthread_barrier_wait(s->gate);
	s->ns = touch(s->p, s->len);
	return NULL;
}

static int mt_mode(int threads, size_t mb, int rounds, int thp)
{
	size_t len = mb << 20, per = (len / (size_t)threads) & ~(HUGE - 1);
	pthread_t tid[1024];
	struct slice sl[1024];
	pthread_barrier_t gate;
	int r, i;

	if (threads < 1 || threads > 1024 || !per)
		return 2;
	for (r = 0; r < rounds; r++) {
		char *p = map(per * (size_t)threads, thp, 0);
		double t0, wall, sum = 0;

		pthread_barrier_init(&gate, NULL, (unsigned)threads + 1);
		for (i = 0; i < threads; i++) {
			sl[i] = (struct slice){ p + per * (size_t)i, per, 0, &gate };
			pthread_create(&tid[i], NULL, slice_main, &sl[i]);
		}
		t0 = now_ns();
		pthread_barrier_wait(&gate);
		for (i = 0; i < threads; i++) {
			pthread_join(tid[i], NULL);
			sum += sl[i].ns;
		}
		wall = now_ns() - t0;
		pthread_barrier_destroy(&gate);
		printf("{\"round\":%d,\"wall_ns\":%.0f,\"pages\":%zu,\"pages_per_s\":%.0f,"
		       "\"ns_per_page\":%.2f}\n",
		       r, wall, per * (size_t)threads / PAGE,
		       (double)(per * (size_t)threads / PAGE) / (wall / 1e9),
		       sum / (double)(per * (size_t)threads / PAGE));
		fflush(stdout);
		munmap(p, per * (size_t)threads);
	}
	return 0;
}

/*
 * The kernel's fork and nothing of libc's: pmdstress forks with _Fork()
 * (stress/fork.h), and glibc's fork() adds its atfork work, more of it in a
 * threaded process (13% here with one sleeping thread), which would make
 * the bare loop the slower one.
 */
static pid_t bare_fork(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
	return _Fork();
#else
	return fork();
#endif
}

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* The exec stressor's child before execve: parent-death signal, own group, default mask. */
static void pmd_child(void)
{
	sigset_t set;

	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	(void)getppid();
	setpgid(0, 0);
	sigpending(&set);
	sigemptyset(&set);
	sigprocmask(SIG_SETMASK, &set, NULL);
}

/* The exec stressor's wait: the pipe's end-of-file (the exec), then the pidfd (the exit). */
static void pmd_wait(pid_t pid, int rfd)
{
	struct pollfd q = { .fd = rfd, .events = POLLIN };
	int e, fd;

	poll(&q, 1, -1);
	if (read(rfd, &e, sizeof(e)) < 0)
		perror("read");
	close(rfd);
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd >= 0) {
		q.fd = fd;
		poll(&q, 1, -1);
		close(fd);
	}
}

static int fork_mode(size_t mb, double secs, int thp, int do_exec, const char *prog,
		     const char *arg)
{
	size_t len = mb << 20;
	const char *idle_env = getenv("BARE_IDLE_THREADS"), *wait_env = getenv("BARE_EXEC_WAIT");
	const char *shape_env = getenv("BARE_SHAPE"), *dc_env = getenv("BARE_DONTFORK_MAPS");
	char *p;
	int as_pmd = do_exec && wait_env && !strcmp(wait_env, "pmdstress"), pfd[2] = { -1, -1 };
	int i, idle = idle_env ? atoi(idle_env) : 0;
	double t0, t, end;
	long n = 0;

	if (shape_env && strcmp(shape_env, "pmdstress")) {
		fprintf(stderr, "BARE_SHAPE=%s: the only shape is pmdstress\n", shape_env);
		return 2;
	}
	p = map(len, thp, 0);
	touch(p, len); /* populated parent: fork copies its page tables */
	if (shape_env)
		pmdstress_shape();
	if (dc_env)
		dontfork_maps(atoi(dc_env));
	for (i = 0; i < idle; i++) {
		pthread_attr_t attr;
		pthread_t tid;

		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 64 << 10);
		if (pthread_create(&tid, &attr, idle_thread, NULL)) {
			fprintf(stderr, "pthread_create failed\n");
			return 2;
		}
		pthread_attr_destroy(&attr);
	}
	t0 = now_ns();
	end = t0 + secs * 1e9;
	while ((t = now_ns()) < end) {
		pid_t pid;
		int st;

		if (as_pmd && pipe2(pfd, O_CLOEXEC)) {
			perror("pipe2");
			return 2;
		}
		pid = bare_fork();
		if (pid == 0) {
			if (as_pmd)
				pmd_child();
			if (do_exec)
				execl(prog, prog, arg, (char *)NULL);
			_exit(0);
		}
		if (pid < 0) {
			perror("fork");
			return 2;
		}
		if (as_pmd) {
			close(pfd[1]);
			pmd_wait(pid, pfd[0]);
		}
		waitpid(pid, &st, 0);
		n++;
	}
	t = now_ns() - t0;
	printf("{\"ops\":%ld,\"secs\":%.3f,\"ops_per_s\":%.1f}\n", n, t / 1e9, (double)n / (t / 1e9));
	return 0;
}


/*
 * The physical rate of PMD install races on this machine: what pmdstress's
 * collided rounds per second are measured against (bench/run.py race).
 * A round: RACERS threads meet at a spin-then-futex barrier (as pmdstress's
 * gate), each stores its slot of the chunk's first page, then of every
 * other page; the last to arrive at the next barrier checks every slot of
 * every page (each worker's value, zero elsewhere) and resets the chunk to
 * pmd_none: MADV_DONTNEED when it is PMD-mapped, munmap + mmap MAP_FIXED
 * when a page table is left (MADV_DONTNEED would keep it).
 */
struct race {
	char *chunk;
	int racers, thp, pagemap;
	uint32_t arrived, gen, sleepers; /* the barrier, as src/run/gate.c */
	volatile int stop;
	int quit; /* the stop as the last arriver saw it: every racer leaves at the same barrier */
	unsigned long rounds, collided, bad;
	uint64_t value;				/* this round's values: value + page * 512 + slot */
	double lo[64], hi[64];			/* each racer's first store */
};

static long sys_futex(uint32_t *uaddr, int op, uint32_t val)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

static int chunk_is_huge(const struct race *r)
{
	uint64_t e[2];
	off_t at = (off_t)((uintptr_t)r->chunk / PAGE) * 8;

	if (pread(r->pagemap, &e[0], 8, at) != 8 || pread(r->pagemap, &e[1], 8, at + 511 * 8) != 8)
		return 0;
	/* present, and the last page's frame 511 after the first's: one huge page */
	return (e[0] >> 63) && (e[1] >> 63) &&
	       (e[1] & ((1ull << 55) - 1)) - (e[0] & ((1ull << 55) - 1)) == 511;
}

static void race_serial(struct race *r)
{
	unsigned long p, s;
	int i, j, hit = 0;

	for (i = 0; i < r->racers; i++)
		for (j = i + 1; j < r->racers; j++)
			hit |= r->lo[i] < r->hi[j] && r->lo[j] < r->hi[i];
	r->collided += hit && r->value;
	r->rounds += r->value != 0;
	for (p = 0; r->value && p < HUGE / PAGE; p++) {
		uint64_t *w = (uint64_t *)(r->chunk + p * PAGE);

		for (s = 0; s < PAGE / 8; s++) {
			uint64_t want = s < (unsigned long)r->racers ? r->value + p * 512 + s : 0;

			r->bad += __atomic_load_n(&w[s], __ATOMIC_RELAXED) != want;
		}
	}
	if (r->thp && chunk_is_huge(r)) {
		madvise(r->chunk, HUGE, MADV_DONTNEED);
	} else if (mmap(r->chunk, HUGE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != r->chunk) {
		perror("mmap");
		exit(2);
	} else {
		madvise(r->chunk, HUGE, r->thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	}
	r->value = (r->rounds + 1) << 20;
	r->quit = r->stop;
}

/* Spin, then sleep: returns when all racers arrived; the last ran race_serial. */
static void race_barrier(struct race *r)
{
	uint32_t gen = __atomic_load_n(&r->gen, __ATOMIC_ACQUIRE), i;

	if (__atomic_add_fetch(&r->arrived, 1, __ATOMIC_ACQ_REL) == (uint32_t)r->racers) {
		race_serial(r);
		__atomic_store_n(&r->arrived, 0, __ATOMIC_RELAXED);
		__atomic_add_fetch(&r->gen, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&r->sleepers, __ATOMIC_SEQ_CST))
			sys_futex(&r->gen, FUTEX_WAKE_PRIVATE, INT_MAX);
		return;
	}
	for (i = 0; i < (1u << 20); i++) {
		if (__atomic_load_n(&r->gen, __ATOMIC_ACQUIRE) != gen)
			return;
		__builtin_ia32_pause();
	}
	__atomic_add_fetch(&r->sleepers, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&r->gen, __ATOMIC_SEQ_CST) == gen)
		sys_futex(&r->gen, FUTEX_WAIT_PRIVATE, gen);
	__atomic_sub_fetch(&r->sleepers, 1, __ATOMIC_RELAXED);
}

static struct race the_race;

static void *racer_main(void *arg)
{
	struct race *r = &the_race;
	int me = (int)(intptr_t)arg;
	unsigned long p;

	for (;;) {
		race_barrier(r);
		if (r->quit)
			return NULL;
		r->lo[me] = now_ns();
		__atomic_store_n((uint64_t *)r->chunk + me, r->value + (uint64_t)me, __ATOMIC_RELAXED);
		r->hi[me] = now_ns();
		for (p = 1; p < HUGE / PAGE; p++)
			__atomic_store_n((uint64_t *)(r->chunk + p * PAGE) + me,
					 r->value + p * 512 + (uint64_t)me, __ATOMIC_RELAXED);
	}
}

static int race_mode(int racers, double secs, int thp)
{
	pthread_t t[64];
	double t0;
	int i;

	if (racers < 1 || racers > 64) {
		fprintf(stderr, "bare race: 1-64 racers\n");
		return 2;
	}
	the_race.racers = racers;
	the_race.thp = thp;
	the_race.chunk = map(HUGE, thp, 0);
	the_race.pagemap = open("/proc/self/pagemap", O_RDONLY);
	for (i = 0; i < racers; i++)
		pthread_create(&t[i], NULL, racer_main, (void *)(intptr_t)i);
	t0 = now_ns();
	usleep((useconds_t)(secs * 1e6));
	the_race.stop = 1;
	for (i = 0; i < racers; i++)
		pthread_join(t[i], NULL);
	secs = (now_ns() - t0) / 1e9;
	printf("{\"mode\": \"race\", \"racers\": %d, \"thp\": %d, \"secs\": %.3f, \"rounds\": %lu, "
	       "\"collided\": %lu, \"rounds_per_s\": %.1f, \"collided_per_s\": %.1f, "
	       "\"bad_slots\": %lu}\n",
	       racers, thp, secs, the_race.rounds, the_race.collided, the_race.rounds / secs,
	       the_race.collided / secs, the_race.bad);
	return the_race.bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "child"))
		return 0;
	if (argc >= 5 && !strcmp(argv[1], "race"))
		return race_mode(atoi(argv[2]), atof(argv[3]), !strcmp(argv[4], "thp"));
	if (argc >= 5 && !strcmp(argv[1], "fault"))
		return fault_mode(strtoul(argv[2], NULL, 10), atoi(argv[3]), !strcmp(argv[4], "thp"),
				  argc >= 6 && !strcmp(argv[5], "shared"));
	if (argc >= 6 && !strcmp(argv[1], "mt"))
		return mt_mode(atoi(argv[2]), strtoul(argv[3], NULL, 10), atoi(argv[4]),
			       !strcmp(argv[5], "thp"));
	if (argc >= 5 && (!strcmp(argv[1], "fork") || !strcmp(argv[1], "exec")))
		return fork_mode(strtoul(argv[2], NULL, 10), atof(argv[3]), !strcmp(argv[4], "thp"),
				 !strcmp(argv[1], "exec"), argc >= 7 ? argv[5] : argv[0],
				 argc >= 7 ? argv[6] : "child");
	fprintf(stderr, "usage: see the comment at the top of bench/bare.c\n");
	return 2;
}
