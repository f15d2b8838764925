// SPDX-License-Identifier: GPL-2.0
/*
 * Memory limits on this process (see memlimit.h). The cgroup is found the
 * way the kernel shows it: /proc/self/cgroup names the process's cgroup on
 * each hierarchy (v2: "0::/path"; v1: "N:memory:/path"), /proc/self/mountinfo
 * where that hierarchy is mounted and which part of it the mount shows.
 * Every ancestor's limit applies too, so the walk goes up to the mount.
 */
#include "memlimit.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* at or above this a limit is "none" (v1 shows 0x7ffffffffffff000, v2 "max") */
#define NO_LIMIT (1ull << 62)
#define PATH_LEN 256

static uint64_t read_limit(const char *path)
{
	char buf[64], *end;
	unsigned long long v;
	FILE *f = fopen(path, "re");

	if (!f)
		return UINT64_MAX;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return UINT64_MAX;
	}
	fclose(f);
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (end == buf || errno || v >= NO_LIMIT)
		return UINT64_MAX;
	return v;
}

static bool has_token(const char *list, const char *token)
{
	size_t n = strlen(token);
	const char *p = list;

	while ((p = strstr(p, token))) {
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0' || p[n] == '\n'))
			return true;
		p += n;
	}
	return false;
}

/*
 * Where the hierarchy is mounted: fstype "cgroup2", or "cgroup" with the
 * memory controller in its super options. @root gets the part of the
 * hierarchy the mount shows ("/" unless a container bind-mounted a subtree).
 */
static bool find_mount(bool v2, char *mnt, char *root)
{
	char line[1024];
	bool found = false;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char r[PATH_LEN], m[PATH_LEN], fstype[32], super[256];
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(line, "%*s %*s %*s %255s %255s", r, m) != 2 ||
		    sscanf(sep + 3, "%31s %*s %255s", fstype, super) != 2)
			continue;
		if (v2 ? !strcmp(fstype, "cgroup2")
		       : !strcmp(fstype, "cgroup") && has_token(super, "memory")) {
			memcpy(mnt, m, sizeof(m));
			memcpy(root, r, sizeof(r));
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* This process's cgroup on the v2 hierarchy, or on v1's memory hierarchy. */
static bool find_cgroup(bool v2, char *path)
{
	char line[1024];
	bool found = false;
	FILE *f = fopen("/proc/self/cgroup", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;

		if (!b)
			continue;
		*b = '\0';
		b[strcspn(b + 1, "\n") + 1] = '\0';
		/* v2: "0::/path", hierarchy 0 with no controller list */
		if (v2 ? a == line + 1 && line[0] == '0' && a[1] == '\0'
		       : has_token(a + 1, "memory")) {
			snprintf(path, PATH_LEN, "%s", b + 1);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/*
 * The directory of this process's cgroup on the v2 hierarchy or v1's
 * memory hierarchy, as mounted here; @top: the length of the mount's path
 * in it (the directory is the mount itself when the two are equal).
 */
static bool cgroup_dir(bool v2, char *dir, size_t len, size_t *top)
{
	char mnt[PATH_LEN], root[PATH_LEN], cg[PATH_LEN];
	const char *rel;
	size_t rlen;

	if (!find_mount(v2, mnt, root) || !find_cgroup(v2, cg))
		return false;
	/* a mount that shows a subtree: the path is relative to its root */
	rlen = strlen(root);
	rel = cg;
	if (strcmp(root, "/") && !strncmp(cg, root, rlen) && (cg[rlen] == '/' || !cg[rlen]))
		rel = cg + rlen;
	*top = strlen(mnt);
	return (size_t)snprintf(dir, len, "%s%s", mnt, strcmp(rel, "/") ? rel : "") < len;
}

/* From the process's cgroup up to the mount's top, keep the smallest @file. */
static void walk_up(bool v2, const char *file, struct pmd_memlimit *out)
{
	char dir[2 * PATH_LEN], path[2 * PATH_LEN + 32];
	size_t top;

	if (!cgroup_dir(v2, dir, sizeof(dir), &top))
		return;
	for (;;) {
		char *slash;
		uint64_t v;

		snprintf(path, sizeof(path), "%s/%s", dir, file);
		v = read_limit(path);
		if (v < out->bytes) {
			out->bytes = v;
			snprintf(out->file, sizeof(out->file), "%s", path);
		}
		slash = strrchr(dir, '/');
		if (strlen(dir) <= top || !slash || (size_t)(slash - dir) < top)
			break;
		*slash = '\0';
	}
}

int pmd_memcg_self(char *dir, size_t len, size_t *top)
{
	char path[2 * PATH_LEN + 32], buf[512];
	size_t n;
	FILE *f;

	/* v2 where the memory controller is on the unified hierarchy */
	if (cgroup_dir(true, dir, len, top)) {
		snprintf(path, sizeof(path), "%.*s/cgroup.controllers", (int)*top, dir);
		f = fopen(path, "re");
		n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		if (f)
			fclose(f);
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		for (char *sv, *t = strtok_r(buf, " ", &sv); t; t = strtok_r(NULL, " ", &sv))
			if (!strcmp(t, "memory"))
				return 2;
	}
	return cgroup_dir(false, dir, len, top) ? 1 : 0;
}

void pmd_memlimit_cgroup(struct pmd_memlimit *out)
{
	out->bytes = UINT64_MAX;
	out->file[0] = '\0';
	walk_up(true, "memory.max", out);
	walk_up(false, "memory.limit_in_bytes", out);
}

void pmd_memlimit_pids(struct pmd_memlimit *out)
{
	out->bytes = UINT64_MAX;
	out->file[0] = '\0';
	walk_up(true, "pids.max", out);
}

void pmd_memlimit_as(struct pmd_memlimit *out)
{
	struct rlimit rl;

	out->bytes = UINT64_MAX;
	snprintf(out->file, sizeof(out->file), "RLIMIT_AS");
	if (!getrlimit(RLIMIT_AS, &rl) && rl.rlim_cur != RLIM_INFINITY)
		out->bytes = (uint64_t)rl.rlim_cur;
}
