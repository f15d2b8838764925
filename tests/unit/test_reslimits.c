// SPDX-License-Identifier: GPL-2.0
/*
 * Which limit explains an ENOMEM or EAGAIN (src/kernel/reslimits.c), judged on this
 * machine's own numbers: the reading taken now, then the same reading with
 * one limit moved to just above what is in use, as it would be when that
 * limit ran out. Nothing here is made up but the one limit moved.
 */
#include "check.h"
#include "reslimits.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MIB (1ull << 20)

static struct pmd_limit_reading now;

static bool judge(const struct pmd_limit_reading *r, char *why, size_t len)
{
	return pmd_limits_judge(r, why, len);
}

int main(void)
{
	struct pmd_limits l;
	struct pmd_limit_reading r;
	char why[224];
	bool far;

	pmd_limits_start(&l);
	pmd_limits_read(&l, ENOMEM, &now);
	printf("# read here: VmSize %" PRIu64 " of RLIMIT_AS %" PRIu64 ", memcg %" PRIu64
	       " of %" PRIu64 ", %" PRIu64 " of %" PRIu64 " available, %" PRIu64 " of %" PRIu64
	       " mappings\n",
	       now.as_used, now.as_limit, now.memcg_usage, now.memcg_limit, now.mem_available,
	       now.mem_total, now.map_count, now.max_map_count);
	CHECK(now.as_used != UINT64_MAX && now.mem_total != UINT64_MAX &&
	      now.map_count != UINT64_MAX && now.max_map_count != UINT64_MAX,
	      "this machine's numbers are readable");

	/* as it is: a test process far from every limit (else the machine is, and says so) */
	far = !judge(&now, why, sizeof(why));
	CHECK(far, "ENOMEM here, now: no limit near (%s)", why);
	if (far) {
		CHECK_CONTAINS(why, "mappings", "what was read is said");
		CHECK_CONTAINS(why, "available", "memory too");
	}

	/* RLIMIT_AS at what is mapped plus 2 MiB (tests/robust/test_zap_enomem.py's cap) */
	r = now;
	r.as_limit = r.as_used + 2 * MIB;
	CHECK(judge(&r, why, sizeof(why)) && strstr(why, "RLIMIT_AS"), "RLIMIT_AS near: %s", why);
	r.as_limit = r.as_used + 4096 * MIB;
	CHECK(!judge(&r, why, sizeof(why)), "RLIMIT_AS 4 GiB away is not near: %s", why);

	/* the memory cgroup: usage at its limit, or its "max" events since the start */
	r = now;
	r.memcg_limit = now.as_used;
	r.memcg_usage = now.as_used - MIB;
	CHECK(judge(&r, why, sizeof(why)) && strstr(why, "memory cgroup"),
	      "memory cgroup near: %s", why);
	r = now;
	r.memcg_hits = 3;
	CHECK(judge(&r, why, sizeof(why)) && strstr(why, "3 times"),
	      "memory cgroup hit during the run: %s", why);

	/* the machine's memory: 1/64 of it available, or an OOM kill since the start */
	r = now;
	r.mem_available = r.mem_total / 64;
	CHECK(judge(&r, why, sizeof(why)) && strstr(why, "memory:"), "memory low: %s", why);
	r = now;
	r.oom_kills = 1;
	CHECK(judge(&r, why, sizeof(why)) && strstr(why, "1 OOM kills"), "an OOM kill: %s", why);

	/* vm.max_map_count lowered to what is mapped (tests/robust/test_enomem_verdict.py) */
	r = now;
	r.max_map_count = r.map_count + 10;
	CHECK(judge(&r, why, sizeof(why)) && strstr(why, "vm.max_map_count"),
	      "max_map_count near: %s", why);
	r.max_map_count = r.map_count * 4 + 4096;
	CHECK(!judge(&r, why, sizeof(why)), "max_map_count far: %s", why);

	/* strict overcommit counts only in mode 2 */
	r = now;
	r.commit_limit = r.committed + MIB;
	r.overcommit = 0;
	CHECK(!judge(&r, why, sizeof(why)), "Committed_AS near CommitLimit, heuristic mode: not "
					    "a limit");
	r.overcommit = 2;
	CHECK(judge(&r, why, sizeof(why)) && strstr(why, "overcommit"), "strict: %s", why);

	/* EAGAIN: the task limits, not the memory ones */
	pmd_limits_read(&l, EAGAIN, &r);
	CHECK(!judge(&r, why, sizeof(why)), "EAGAIN here, now: no limit near (%s)", why);
	r.mem_available = r.mem_total / 64;
	CHECK(!judge(&r, why, sizeof(why)), "low memory does not explain an EAGAIN");
	r = now;
	r.err = EAGAIN;
	r.pids_limit = 64;
	r.pids_current = 60;
	CHECK(judge(&r, why, sizeof(why)) && strstr(why, "pids.max"), "pids.max near: %s", why);
	r.pids_current = 10;
	r.pids_hits = 1;
	CHECK(judge(&r, why, sizeof(why)) && strstr(why, "pids.max"), "pids.max hit: %s", why);
	r = now;
	r.err = EAGAIN;
	r.threads_max = r.threads + 1;
	CHECK(judge(&r, why, sizeof(why)) && strstr(why, "threads-max"), "threads-max: %s", why);
	r = now;
	r.err = EAGAIN;
	r.nproc_limit = 100;
	r.nproc_used = 99;
	CHECK(judge(&r, why, sizeof(why)) && strstr(why, "RLIMIT_NPROC"), "RLIMIT_NPROC: %s", why);

	/* no other errno is a limit's */
	r = now;
	r.err = EIO;
	r.as_limit = r.as_used;
	CHECK(!judge(&r, why, sizeof(why)), "EIO is never a limit's");

	/*
	 * v2: a cgroup above the run's with a limit. Its memory.events counts
	 * the "max" events of the cgroups below it too, the seed race's memcg
	 * way's own on purpose each seed round; memory.events.local only its
	 * limit's. The files as 6.1 writes them, in a directory of our own.
	 */
	{
		static const char *const files[][2] = {
			{ "memory.max", "1073741824\n" },
			{ "memory.current", "8388608\n" },
			{ "memory.events", "low 0\nhigh 0\nmax 40\noom 0\noom_kill 0\n" },
			{ "memory.events.local", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n" },
		};
		char dir[] = "/tmp/pmd-reslimits-XXXXXX", path[128];
		struct pmd_limits l2;
		unsigned i;

		CHECK(mkdtemp(dir) != NULL, "a directory for the files");
		for (i = 0; i < 4; i++) {
			FILE *f;

			snprintf(path, sizeof(path), "%s/%s", dir, files[i][0]);
			f = fopen(path, "w");
			if (f) {
				fputs(files[i][1], f);
				fclose(f);
			}
		}
		memset(&l2, 0, sizeof(l2));
		snprintf(l2.memcg_file, sizeof(l2.memcg_file), "%s/memory.max", dir);
		pmd_limits_read(&l2, ENOMEM, &r);
		CHECK_EQ_U64(r.memcg_limit, 1073741824ull, "the limit read");
		CHECK_EQ_U64(r.memcg_hits, 0, "the hits below it are not its own (events.local)");
		snprintf(path, sizeof(path), "%s/memory.events.local", dir);
		unlink(path);
		pmd_limits_read(&l2, ENOMEM, &r);
		CHECK_EQ_U64(r.memcg_hits, 40, "before 5.2, no events.local: memory.events");
		for (i = 0; i < 4; i++) {
			snprintf(path, sizeof(path), "%s/%s", dir, files[i][0]);
			unlink(path);
		}
		rmdir(dir);
	}

	/* the cached path from any thread: a reading, judged, reused */
	CHECK(pmd_limits_explain(&l, ENOMEM, why, sizeof(why)) == !far, "explain: %s", why);
	return check_done();
}
