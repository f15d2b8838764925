// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: a JSON report, read the three ways pmdstress reads one.
 * The bytes are written to a file (the readers take paths), then:
 *   - the loader, pmd_report_load(), which compare, replay and plot share;
 *   - pmdstress compare: the document against itself, and a real report
 *     against it with --force (so the table is built however it differs);
 *   - pmdstress run --replay: the options block turned back into a
 *     configuration and finished as a run would be.
 * A broken document is a refusal with one line naming the file; nothing
 * may crash, leak or hang. The real report is $PMD_FUZZ_BASELINE (the test
 * points it at a report in corpus-fuzz_report/).
 */
#include "compare.h"
#include "config.h"
#include "replay.h"
#include "report_read.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64] = "/tmp/pmd-fuzz-report-XXXXXX";
static char doc_path[96], base_path[96];
static int have_base;

/* dprintf, not stdio: stdout and stderr go to /dev/null below */
static void bad(const char *what, const char *detail)
{
	dprintf(STDERR_FILENO, "fuzz_report: %s: '%s'\n", what, detail);
	abort();
}

static int write_all(const char *path, const void *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	const char *p = data;

	if (fd < 0)
		return -1;
	while (size) {
		ssize_t n = write(fd, p, size);

		if (n <= 0) {
			close(fd);
			return -1;
		}
		p += n;
		size -= (size_t)n;
	}
	return close(fd);
}

static void cleanup(void)
{
	unlink(doc_path);
	unlink(base_path);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *base = getenv("PMD_FUZZ_BASELINE");
	FILE *null_out = fopen("/dev/null", "w");

	(void)argc;
	(void)argv;
	if (!mkdtemp(dir))
		bad("cannot make a folder for the documents", dir);
	atexit(cleanup);
	snprintf(doc_path, sizeof(doc_path), "%s/a.json", dir);
	snprintf(base_path, sizeof(base_path), "%s/base.json", dir);
	if (base && *base) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = fopen(base, "rb");

		if (!f)
			bad("PMD_FUZZ_BASELINE cannot be opened", base);
		text = malloc(1 << 22);
		if (!text)
			bad("out of memory", base);
		len = fread(text, 1, (1 << 22) - 1, f);
		fclose(f);
		if (write_all(base_path, text, len))
			bad("cannot copy the baseline", base_path);
		free(text);
		have_base = 1;
	}
	/* the tables and the one-line refusals go nowhere; crashes still reach fd 2 */
	if (null_out) {
		stdout = null_out;
		stderr = null_out;
	}
	return 0;
}

static void one_line(const char *err, const char *what)
{
	if (!err[0] || strchr(err, '\n'))
		bad(what, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pmd_config cfg;
	char err[PMD_ERRLEN] = "";
	json_t *doc;
	int rc;

	if (size > (1u << 20) || write_all(doc_path, data, size))
		return 0;
	doc = pmd_report_load(doc_path, err, sizeof(err));
	if (!doc) {
		one_line(err, "a refused report must get one line");
		if (!strstr(err, doc_path))
			bad("a refused report must be named", err);
		return 0;
	}
	json_decref(doc);

	{
		char *self[] = { doc_path, doc_path, NULL };
		char *vs_base[] = { base_path, doc_path, "--force", NULL };

		rc = pmd_compare_main(2, self);
		if (rc < 0 || rc > 2)
			bad("compare A A: exit status not 0, 1 or 2", doc_path);
		if (have_base) {
			rc = pmd_compare_main(3, vs_base);
			if (rc < 0 || rc > 2)
				bad("compare base A --force: exit status not 0, 1 or 2", doc_path);
		}
	}

	{
		char *argv[] = { "--replay", doc_path, NULL };

		if (pmd_config_init(&cfg, err, sizeof(err)))
			bad("the defaults do not load", err);
		if (pmd_replay_config(&cfg, 2, argv, err, sizeof(err)))
			one_line(err, "a refused replay must get one line");
		pmd_config_free(&cfg);
	}
	return 0;
}
