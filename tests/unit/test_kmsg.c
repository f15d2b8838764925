// SPDX-License-Identifier: GPL-2.0
/* The kernel log oracle: record parsing, splat matching (real splat text), taint letters. */
#include "check.h"
#include "kmsg.h"

static void match(const char *line, const char *want)
{
	const char *got = pmd_kmsg_match(line);

	if (want)
		CHECK(got && !strcmp(got, want), "'%.60s' -> %s (got %s)", line, want,
		      got ? got : "nothing");
	else
		CHECK(!got, "'%.60s' is not a splat (got %s)", line, got ? got : "nothing");
}

/*
 * The lines live in tests/data/kmsg_lines.txt, which the live test
 * (tests/oracle/test_kmsg_table.py) writes into /dev/kmsg too: one table.
 */
#define MAX_LINES 128

struct line {
	char *text;
	const char *what; /* NULL: not a splat */
};

static size_t read_lines(struct line *l, size_t max)
{
	static char buf[32768];
	FILE *f = fopen(PMD_TESTS_DIR "/data/kmsg_lines.txt", "r");
	char *p;
	size_t n = 0, len;

	CHECK(f != NULL, "open %s", PMD_TESTS_DIR "/data/kmsg_lines.txt");
	if (!f)
		return 0;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	CHECK(feof(f) && !ferror(f), "the whole table fits in %zu bytes", sizeof(buf));
	fclose(f);
	buf[len] = '\0';
	for (p = strtok(buf, "\n"); p && n < max; p = strtok(NULL, "\n")) {
		char *tab = strchr(p, '\t');

		if (*p == '#')
			continue;
		CHECK(tab != NULL, "'%.40s': kind, tab, line", p);
		if (!tab)
			continue;
		*tab = '\0';
		l[n].what = strcmp(p, "-") ? p : NULL;
		l[n++].text = tab + 1;
	}
	return n;
}

int main(void)
{
	struct pmd_kmsg_record r;
	char rec[] = "4,1234,5678901,-;BUG: Bad page map in process pmd/fault/3  pte:8000000123 "
		     "pmd:1234067\n SUBSYSTEM=mm\n";
	char bad[] = "garbage without fields";
	struct line lines[MAX_LINES];
	size_t i, n = read_lines(lines, MAX_LINES), nsplat = 0;
	char buf[64];

	CHECK(pmd_kmsg_parse(rec, sizeof(rec) - 1, &r), "parse a record");
	CHECK_EQ_U64(r.level, 4, "level");
	CHECK_EQ_U64(r.seq, 1234, "sequence");
	CHECK_EQ_U64(r.ts_us, 5678901, "timestamp");
	CHECK(!strncmp(r.text, "BUG: Bad page map in process", 28), "text starts after ';'");
	CHECK(!strstr(r.text, "SUBSYSTEM"), "dictionary lines are not text");
	CHECK(!pmd_kmsg_parse(bad, sizeof(bad) - 1, &r), "reject a line without fields");

	/* the kernel's own wording, from real splats, and what is not one, some of it close */
	for (i = 0; i < n; i++) {
		match(lines[i].text, lines[i].what);
		nsplat += lines[i].what != NULL;
	}
	CHECK(nsplat >= 40 && n - nsplat >= 14, "the table holds %zu splats, %zu other lines",
	      nsplat, n - nsplat);
	/* every needle has a real line that carries it */
	for (i = 0; pmd_kmsg_pattern(i); i++) {
		const char *needle = pmd_kmsg_pattern(i);
		size_t j;

		for (j = 0; j < n; j++)
			if (lines[j].what && strstr(lines[j].text, needle))
				break;
		CHECK(j < n, "'%s' has a test line", needle);
	}

	pmd_taint_letters(0, buf, sizeof(buf));
	CHECK_STR(buf, "", "no taint");
	pmd_taint_letters((1u << 5) | (1u << 9), buf, sizeof(buf));
	CHECK_STR(buf, "BW", "bad page + warning");
	pmd_taint_letters((1u << 7) | (1u << 6), buf, sizeof(buf));
	CHECK_STR(buf, "UD", "user + died");
	return check_done();
}
