// SPDX-License-Identifier: GPL-2.0
/*
 * Which named limit was near when a syscall failed with ENOMEM or EAGAIN
 * (see reslimits.h). The limits are those the kernel checks on the calls the
 * stressors make: ENOMEM from the address space (RLIMIT_AS), the memory
 * cgroup (a VMA is charged to it: a split that needs one fails at
 * memory.max), the machine's memory, the VMA count (vm.max_map_count: every
 * split of a mapping needs one more) and strict overcommit; EAGAIN from the
 * task limits (pids.max, RLIMIT_NPROC, kernel.threads-max). "Near" is a
 * margin a burst of the run's own calls could use up between the failure
 * and this reading (64 MiB of address space: one malloc arena; 1/64 of the
 * VMAs), or evidence that the limit was hit during the run (the cgroup's
 * "max" events, an OOM kill).
 */
#include "reslimits.h"

#include "memlimit.h"
#include "sysinfo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NONE UINT64_MAX
#define MIB (1ull << 20)

static uint64_t read_u64(const char *path)
{
	char buf[64], *end;
	unsigned long long v;

	if (pmd_read_text(path, buf, sizeof(buf)))
		return NONE;
	errno = 0;
	v = strtoull(buf, &end, 10);
	return end == buf || errno ? NONE : v;
}

/*
 * The number after "@key" in a "key value" file (memory.events, vmstat,
 * meminfo, status). open() and read() into the stack, never stdio: at
 * vm.max_map_count a malloc that needs a mapping fails, and fopen() with
 * it (a guest at the limit read every file as "none").
 */
static uint64_t read_key(const char *path, const char *key)
{
	char buf[512], *line, *nl;
	size_t keep = 0, n = strlen(key);
	uint64_t v = NONE;
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NONE;
	while ((got = read(fd, buf + keep, sizeof(buf) - 1 - keep)) > 0) {
		keep += (size_t)got;
		buf[keep] = '\0';
		for (line = buf; (nl = strchr(line, '\n')); line = nl + 1) {
			*nl = '\0';
			if (!strncmp(line, key, n) &&
			    (line[n] == ' ' || line[n] == ':' || line[n] == '\t')) {
				v = strtoull(line + n + 1 + strspn(line + n + 1, " \t:"), NULL, 10);
				goto out;
			}
		}
		/* the part line left for the next read; a line longer than buf is dropped */
		keep = strlen(line);
		if (keep >= sizeof(buf) - 1)
			keep = 0;
		memmove(buf, line, keep);
	}
out:
	close(fd);
	return v;
}

/* @file's directory with @name instead: the usage beside a cgroup's limit. */
static void beside(const char *file, const char *name, char *out, size_t len)
{
	const char *slash = strrchr(file, '/');

	snprintf(out, len, "%.*s/%s", slash ? (int)(slash - file) : 0, file, name);
}

static uint64_t memcg_hits(const struct pmd_limits *l)
{
	char path[640];
	uint64_t v;

	if (!l->memcg_file[0])
		return 0;
	/*
	 * v2's memory.events counts the limits of the cgroups below too: the
	 * seed race's memcg way hits its own cgroup's limit on purpose every
	 * seed round. memory.events.local (5.2) counts only this limit's.
	 */
	beside(l->memcg_file, "memory.events.local", path, sizeof(path));
	v = read_key(path, "max");
	if (v == NONE) {
		beside(l->memcg_file, "memory.events", path, sizeof(path));
		v = read_key(path, "max");
	}
	if (v == NONE) {
		beside(l->memcg_file, "memory.failcnt", path, sizeof(path));
		v = read_u64(path);
	}
	return v == NONE ? 0 : v;
}

static uint64_t pids_hits(const struct pmd_limits *l)
{
	char path[640];
	uint64_t v;

	if (!l->pids_file[0])
		return 0;
	beside(l->pids_file, "pids.events", path, sizeof(path));
	v = read_key(path, "max");
	return v == NONE ? 0 : v;
}

static uint64_t oom_kills(void)
{
	uint64_t v = read_key("/proc/vmstat", "oom_kill");

	return v == NONE ? 0 : v;
}

void pmd_limits_start(struct pmd_limits *l)
{
	pthread_mutex_init(&l->lock, NULL);
	pmd_limits_rebase(l);
}

void pmd_limits_rebase(struct pmd_limits *l)
{
	struct pmd_memlimit lim;

	pmd_memlimit_cgroup(&lim);
	snprintf(l->memcg_file, sizeof(l->memcg_file), "%s", lim.bytes == NONE ? "" : lim.file);
	pmd_memlimit_pids(&lim);
	snprintf(l->pids_file, sizeof(l->pids_file), "%s", lim.bytes == NONE ? "" : lim.file);
	l->memcg_hits0 = memcg_hits(l);
	l->pids_hits0 = pids_hits(l);
	l->oom_kills0 = oom_kills();
	l->cached_at[0] = l->cached_at[1] = 0;
}

static uint64_t count_maps(void)
{
	char buf[1024];
	uint64_t n = 0;
	ssize_t got;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NONE;
	while ((got = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < got; i++)
			n += buf[i] == '\n';
	close(fd);
	return got < 0 ? NONE : n;
}

/* Tasks (threads) whose /proc entry this user owns: what RLIMIT_NPROC counts. */
static uint64_t user_tasks(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	uint64_t n = 0;
	uid_t me = getuid();

	if (!d)
		return NONE;
	while ((de = readdir(d))) {
		char path[300];
		struct stat st;
		uint64_t t;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s", de->d_name);
		if (stat(path, &st) || st.st_uid != me)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/status", de->d_name);
		t = read_key(path, "Threads");
		n += t == NONE ? 1 : t;
	}
	closedir(d);
	return n;
}

void pmd_limits_read(const struct pmd_limits *l, int err, struct pmd_limit_reading *r)
{
	struct rlimit rl;
	char path[640], buf[128], *slash;
	uint64_t v;

	memset(r, 0, sizeof(*r));
	r->err = err;
	r->root = geteuid() == 0;
	r->as_limit = NONE;
	if (!getrlimit(RLIMIT_AS, &rl) && rl.rlim_cur != RLIM_INFINITY)
		r->as_limit = (uint64_t)rl.rlim_cur;
	v = read_key("/proc/self/status", "VmSize");
	r->as_used = v == NONE ? NONE : v << 10;

	/* the limits as they are now (--memcg-headroom moves memory.max all the time) */
	r->memcg_limit = l->memcg_file[0] ? read_u64(l->memcg_file) : NONE;
	r->memcg_usage = NONE;
	if (r->memcg_limit != NONE) {
		beside(l->memcg_file, "memory.current", path, sizeof(path));
		r->memcg_usage = read_u64(path);
		if (r->memcg_usage == NONE) {
			beside(l->memcg_file, "memory.usage_in_bytes", path, sizeof(path));
			r->memcg_usage = read_u64(path);
		}
	}
	v = memcg_hits(l);
	r->memcg_hits = v > l->memcg_hits0 ? v - l->memcg_hits0 : 0;

	r->pids_limit = l->pids_file[0] ? read_u64(l->pids_file) : NONE;
	r->pids_current = NONE;
	if (r->pids_limit != NONE) {
		beside(l->pids_file, "pids.current", path, sizeof(path));
		r->pids_current = read_u64(path);
	}
	v = pids_hits(l);
	r->pids_hits = v > l->pids_hits0 ? v - l->pids_hits0 : 0;

	r->nproc_limit = NONE;
	r->nproc_used = NONE;
	if (!getrlimit(RLIMIT_NPROC, &rl) && rl.rlim_cur != RLIM_INFINITY && !r->root) {
		r->nproc_limit = (uint64_t)rl.rlim_cur;
		r->nproc_used = user_tasks();
	}
	r->threads_max = read_u64("/proc/sys/kernel/threads-max");
	r->threads = NONE;
	if (!pmd_read_text("/proc/loadavg", buf, sizeof(buf)) && (slash = strchr(buf, '/')))
		r->threads = strtoull(slash + 1, NULL, 10); /* "0.1 0.2 0.3 2/345 678" */

	v = read_key("/proc/meminfo", "MemTotal");
	r->mem_total = v == NONE ? NONE : v << 10;
	v = read_key("/proc/meminfo", "MemAvailable");
	r->mem_available = v == NONE ? NONE : v << 10;
	v = oom_kills();
	r->oom_kills = v > l->oom_kills0 ? v - l->oom_kills0 : 0;
	r->map_count = count_maps();
	r->max_map_count = read_u64("/proc/sys/vm/max_map_count");
	v = read_u64("/proc/sys/vm/overcommit_memory");
	r->overcommit = v == NONE ? 0 : (int)v;
	v = read_key("/proc/meminfo", "CommitLimit");
	r->commit_limit = v == NONE ? NONE : v << 10;
	v = read_key("/proc/meminfo", "Committed_AS");
	r->committed = v == NONE ? NONE : v << 10;
}

/* @used within @margin of @limit (both known). */
static bool near(uint64_t used, uint64_t limit, uint64_t margin)
{
	return limit != NONE && used != NONE && used + margin >= limit;
}

static uint64_t at_least(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

struct said {
	char *buf;
	size_t len, n;
};

static void say(struct said *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct said *s, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (s->n >= s->len)
		return;
	va_start(ap, fmt);
	k = vsnprintf(s->buf + s->n, s->len - s->n, fmt, ap);
	va_end(ap);
	if (k > 0)
		s->n += (size_t)k < s->len - s->n ? (size_t)k : s->len - s->n - 1;
}

static void size_of(uint64_t v, char *buf, size_t len)
{
	if (v == NONE)
		snprintf(buf, len, "none");
	else if (v >= 1ull << 30)
		snprintf(buf, len, "%.1fG", (double)v / (1ull << 30));
	else
		snprintf(buf, len, "%.1fM", (double)v / MIB);
}

static void count_of(uint64_t v, char *buf, size_t len)
{
	if (v == NONE)
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "%" PRIu64, v);
}

bool pmd_limits_judge(const struct pmd_limit_reading *r, char *why, size_t len)
{
	struct said s = { why, len, 0 };
	char a[32], b[32];
	unsigned hit = 0;

	why[0] = '\0';
	if (r->err == ENOMEM) {
		if (near(r->as_used, r->as_limit, at_least(r->as_limit / 16, 64 * MIB))) {
			size_of(r->as_used, a, sizeof(a));
			size_of(r->as_limit, b, sizeof(b));
			say(&s, "%sRLIMIT_AS: %s of %s mapped", hit++ ? "; " : "", a, b);
		}
		if (r->memcg_hits ||
		    near(r->memcg_usage, r->memcg_limit, at_least(r->memcg_limit / 16, 16 * MIB))) {
			size_of(r->memcg_usage, a, sizeof(a));
			size_of(r->memcg_limit, b, sizeof(b));
			say(&s, "%smemory cgroup: %s of %s, at its limit %" PRIu64 " times", hit++ ? "; " : "",
			    a, b, r->memcg_hits);
		}
		if (r->oom_kills || (r->mem_available != NONE && r->mem_total != NONE &&
				     r->mem_available < at_least(r->mem_total / 32, 64 * MIB))) {
			size_of(r->mem_available, a, sizeof(a));
			size_of(r->mem_total, b, sizeof(b));
			say(&s, "%smemory: %s of %s available, %" PRIu64 " OOM kills", hit++ ? "; " : "", a,
			    b, r->oom_kills);
		}
		if (near(r->map_count, r->max_map_count, at_least(r->max_map_count / 64, 256)))
			say(&s, "%svm.max_map_count: %" PRIu64 " mappings of %" PRIu64, hit++ ? "; " : "",
			    r->map_count, r->max_map_count);
		if (r->overcommit == 2 &&
		    near(r->committed, r->commit_limit, at_least(r->commit_limit / 32, 64 * MIB))) {
			size_of(r->committed, a, sizeof(a));
			size_of(r->commit_limit, b, sizeof(b));
			say(&s, "%sstrict overcommit: %s committed of %s", hit++ ? "; " : "", a, b);
		}
	} else if (r->err == EAGAIN) {
		if (r->pids_hits ||
		    near(r->pids_current, r->pids_limit, at_least(r->pids_limit / 32, 8)))
			say(&s, "%spids.max: %" PRIu64 " of %" PRIu64 ", at it %" PRIu64 " times",
			    hit++ ? "; " : "", r->pids_current, r->pids_limit, r->pids_hits);
		if (near(r->nproc_used, r->nproc_limit, at_least(r->nproc_limit / 32, 8)))
			say(&s, "%sRLIMIT_NPROC: %" PRIu64 " tasks of %" PRIu64, hit++ ? "; " : "",
			    r->nproc_used, r->nproc_limit);
		if (near(r->threads, r->threads_max, at_least(r->threads_max / 32, 64)))
			say(&s, "%skernel.threads-max: %" PRIu64 " tasks of %" PRIu64, hit++ ? "; " : "",
			    r->threads, r->threads_max);
	}
	if (hit)
		return true;
	/* none: say what was read, so whoever reads the error sees how far each was */
	if (r->err == ENOMEM) {
		size_of(r->as_used, a, sizeof(a));
		size_of(r->as_limit, b, sizeof(b));
		say(&s, "RLIMIT_AS %s of %s", a, b);
		size_of(r->memcg_usage, a, sizeof(a));
		size_of(r->memcg_limit, b, sizeof(b));
		say(&s, ", memory cgroup %s of %s", a, b);
		size_of(r->mem_available, a, sizeof(a));
		size_of(r->mem_total, b, sizeof(b));
		say(&s, ", %s of %s available", a, b);
		say(&s, ", %" PRIu64 " of %" PRIu64 " mappings", r->map_count, r->max_map_count);
		if (r->overcommit == 2)
			say(&s, ", overcommit strict");
	} else {
		count_of(r->pids_current, a, sizeof(a));
		count_of(r->pids_limit, b, sizeof(b));
		say(&s, "pids %s of %s, %" PRIu64 " of %" PRIu64 " tasks", a, b, r->threads,
		    r->threads_max);
		if (r->nproc_limit != NONE)
			say(&s, ", RLIMIT_NPROC %" PRIu64 " of %" PRIu64, r->nproc_used, r->nproc_limit);
	}
	return false;
}

bool pmd_limits_explain(struct pmd_limits *l, int err, char *why, size_t len)
{
	struct pmd_limit_reading r;
	struct timespec ts;
	uint64_t now;
	unsigned k = err == EAGAIN;
	bool near_;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	pthread_mutex_lock(&l->lock);
	if (!l->cached_at[k] || now - l->cached_at[k] > 50000000ull) {
		pmd_limits_read(l, err, &r);
		l->cached_near[k] = pmd_limits_judge(&r, l->cached_why[k], sizeof(l->cached_why[k]));
		l->cached_at[k] = now;
	}
	near_ = l->cached_near[k];
	snprintf(why, len, "%s", l->cached_why[k]);
	pthread_mutex_unlock(&l->lock);
	return near_;
}
