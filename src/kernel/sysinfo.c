// SPDX-License-Identifier: GPL-2.0
/* Kernel release, THP sysfs settings, CPUs, memory, NUMA nodes. */
#include "sysinfo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/stat.h>
#include <unistd.h>

#define THP_DIR "/sys/kernel/mm/transparent_hugepage"

int pmd_read_text(const char *path, char *buf, unsigned len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	buf[0] = '\0';
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	return 0;
}

void pmd_sysfs_selected(const char *text, char *out, unsigned len)
{
	const char *l = strchr(text, '['), *r = l ? strchr(l, ']') : NULL;
	const char *from = l && r ? l + 1 : text;
	size_t n = l && r ? (size_t)(r - l - 1) : strlen(text);

	/* cut to fit on purpose: a copy, not snprintf, which -O2 warns about */
	if (!len)
		return;
	if (n >= len)
		n = len - 1;
	memcpy(out, from, n);
	out[n] = '\0';
}

static void add_thp(struct pmd_sysinfo *s, const char *key, const char *rel)
{
	char path[256], raw[256];

	if (s->nthp >= sizeof(s->thp) / sizeof(s->thp[0]))
		return;
	snprintf(path, sizeof(path), THP_DIR "/%s", rel);
	if (pmd_read_text(path, raw, sizeof(raw)))
		return;
	snprintf(s->thp[s->nthp].key, sizeof(s->thp[0].key), "%s", key);
	pmd_sysfs_selected(raw, s->thp[s->nthp].value, sizeof(s->thp[0].value));
	s->nthp++;
}

static int cmp_mthp(const void *a, const void *b)
{
	return atoi(((const struct pmd_kv *)a)->key) - atoi(((const struct pmd_kv *)b)->key);
}

static void read_mthp(struct pmd_sysinfo *s)
{
	DIR *d = opendir(THP_DIR);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)) && s->nmthp < PMD_MAX_MTHP) {
		char path[512], raw[128];
		unsigned kb;

		if (sscanf(de->d_name, "hugepages-%ukB", &kb) != 1)
			continue;
		snprintf(path, sizeof(path), THP_DIR "/%s/enabled", de->d_name);
		if (pmd_read_text(path, raw, sizeof(raw)))
			continue;
		snprintf(s->mthp[s->nmthp].key, sizeof(s->mthp[0].key), "%ukB", kb);
		pmd_sysfs_selected(raw, s->mthp[s->nmthp].value, sizeof(s->mthp[0].value));
		s->nmthp++;
	}
	closedir(d);
	qsort(s->mthp, s->nmthp, sizeof(s->mthp[0]), cmp_mthp);
}

static unsigned count_list(const char *list)
{
	unsigned n = 0, a, b;
	const char *p = list;

	while (*p) {
		int used = 0;

		if (sscanf(p, "%u-%u%n", &a, &b, &used) == 2 && used)
			n += b >= a ? b - a + 1 : 0;
		else if (sscanf(p, "%u%n", &a, &used) == 1 && used)
			n++;
		else
			break;
		p += used;
		if (*p == ',')
			p++;
	}
	return n;
}

void pmd_sysinfo_read(struct pmd_sysinfo *s)
{
	struct utsname u;

	memset(s, 0, sizeof(*s));
	if (!uname(&u)) {
		snprintf(s->release, sizeof(s->release), "%s", u.release);
		snprintf(s->version, sizeof(s->version), "%s", u.version);
		snprintf(s->machine, sizeof(s->machine), "%s", u.machine);
		snprintf(s->hostname, sizeof(s->hostname), "%s", u.nodename);
	}
	s->cpus_online = sysconf(_SC_NPROCESSORS_ONLN);
	s->cpus_conf = sysconf(_SC_NPROCESSORS_CONF);
	s->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
	s->mem_total = (uint64_t)sysconf(_SC_PHYS_PAGES) * s->page_size;
	s->root = geteuid() == 0;
	if (pmd_read_text("/sys/devices/system/node/online", s->nodes_online,
			  sizeof(s->nodes_online)))
		snprintf(s->nodes_online, sizeof(s->nodes_online), "0");
	s->nodes = count_list(s->nodes_online);
	if (!s->nodes)
		s->nodes = 1;
	add_thp(s, "enabled", "enabled");
	add_thp(s, "defrag", "defrag");
	add_thp(s, "use_zero_page", "use_zero_page");
	add_thp(s, "hpage_pmd_size", "hpage_pmd_size");
	add_thp(s, "shmem_enabled", "shmem_enabled");
	add_thp(s, "khugepaged.defrag", "khugepaged/defrag");
	add_thp(s, "khugepaged.max_ptes_none", "khugepaged/max_ptes_none");
	add_thp(s, "khugepaged.pages_to_scan", "khugepaged/pages_to_scan");
	add_thp(s, "khugepaged.scan_sleep_millisecs", "khugepaged/scan_sleep_millisecs");
	add_thp(s, "khugepaged.alloc_sleep_millisecs", "khugepaged/alloc_sleep_millisecs");
	read_mthp(s);
	s->zero_page_reads = pmd_probe_zero_page_reads();
}

const char *pmd_sysinfo_thp(const struct pmd_sysinfo *s, const char *key)
{
	unsigned i;

	for (i = 0; i < s->nthp; i++)
		if (!strcmp(s->thp[i].key, key))
			return s->thp[i].value;
	return "";
}

unsigned long pmd_pid_ns(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) ? 0 : (unsigned long)st.st_ino;
}

bool pmd_in_child_pidns(void)
{
	unsigned long ns = pmd_pid_ns();

	/* the init pid namespace's inode is PROC_PID_INIT_INO */
	return ns && ns != 0xeffffffcul;
}
