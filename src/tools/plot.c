// SPDX-License-Identifier: GPL-2.0
/*
 * pmdstress plot A.json [B.json ...] -o DIR [--jsonl FILE]...: charts for
 * people, drawn by gnuplot. For every stressor that recorded a latency
 * (fault storms, fork and exec storms, any partner alike) a distribution
 * chart: the CDF on a log latency axis and, beside it, the tail (1 - CDF,
 * log) where p99 and p99.9 live, one line per latency and report. The
 * points come from each latency's "cdf" (64 log-spaced points of the
 * merged histogram); a report without one falls back to its percentiles.
 * With --jsonl (interval samples of a run), throughput (ops/s, faults/s)
 * and THP share and RSS over time.
 *
 * Each chart is a self-contained gnuplot script in DIR (data inline), run
 * once and rendered to PNG and SVG; rerun or edit it by hand. Without
 * gnuplot the scripts are still written and the command exits 125.
 */
#include "plot.h"

#include "report_read.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PLOT_MAX_FILES 8
#define PLOT_MAX_CHARTS 64
#define PLOT_ERRLEN 640

struct plot {
	const char *dir;
	const char *reports[PLOT_MAX_FILES];
	json_t *docs[PLOT_MAX_FILES];
	unsigned nrep;
	const char *jsonl[PLOT_MAX_FILES];
	unsigned njsonl;
	char charts[PLOT_MAX_CHARTS][80]; /* chart base names, DIR/<name>.gp */
	unsigned ncharts;
	char err[PLOT_ERRLEN];
};

/* ---- a growing text buffer ---------------------------------------------------- */

struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = b->cap - b->len;

		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if (b->p && (size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		{
			size_t cap = (b->cap ? b->cap * 2 : 4096) + (size_t)n;
			char *np = realloc(b->p, cap);

			if (!np) {
				b->oom = true;
				return;
			}
			b->p = np;
			b->cap = cap;
		}
	}
}

/* A gnuplot single-quoted string: '' stands for '. */
static void sb_quoted(struct sbuf *b, const char *s)
{
	sb_printf(b, "'");
	for (; *s; s++)
		sb_printf(b, *s == '\'' ? "''" : "%c", *s);
	sb_printf(b, "'");
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* ---- the script frame: data, then the same drawing to PNG and to SVG ------------ */

static void frame(struct sbuf *out, const char *name, const struct sbuf *data,
		  const struct sbuf *draw, unsigned w, unsigned h)
{
	sb_printf(out, "# pmdstress plot: %s (rerun: gnuplot %s.gp)\n", name, name);
	sb_printf(out, "%s", data->p ? data->p : "");
	sb_printf(out, "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
		       "  set terminal pngcairo size %u,%u noenhanced font 'sans,10'\n"
		       "} else {\n  set terminal png size %u,%u noenhanced\n}\n",
		  w, h, w, h);
	sb_printf(out, "set output '%s.png'\n%sset output\n", name, draw->p ? draw->p : "");
	sb_printf(out, "set terminal svg size %u,%u dynamic noenhanced font 'sans,10'\n", w, h);
	sb_printf(out, "set output '%s.svg'\n%sset output\n", name, draw->p ? draw->p : "");
}

static int write_chart(struct plot *p, const char *name, const struct sbuf *text)
{
	char path[4096];
	FILE *f;
	int rc = 0;

	if (p->ncharts == PLOT_MAX_CHARTS)
		return snprintf(p->err, sizeof(p->err), "more than %d charts", PLOT_MAX_CHARTS),
		       -E2BIG;
	snprintf(path, sizeof(path), "%s/%s.gp", p->dir, name);
	f = fopen(path, "w");
	if (!f)
		return snprintf(p->err, sizeof(p->err), "%.400s: cannot write: %s", path,
				strerror(errno)), -errno;
	fputs(text->p, f);
	if (ferror(f))
		rc = -EIO;
	if (fclose(f) && !rc)
		rc = -errno;
	if (rc)
		return snprintf(p->err, sizeof(p->err), "%.400s: cannot write: %s", path,
				strerror(-rc)), rc;
	snprintf(p->charts[p->ncharts++], sizeof(p->charts[0]), "%s", name);
	return 0;
}

/* ---- latency distributions ------------------------------------------------------ */

/* The stressor entry called @name in report @r that ran, or NULL. */
static json_t *ran_entry(json_t *doc, const char *name, size_t *index)
{
	json_t *arr = json_object_get(doc, "stressors"), *e;
	size_t i;

	json_array_foreach(arr, i, e) {
		const char *n = json_string_value(json_object_get(e, "name"));
		const char *st = json_string_value(json_object_get(e, "status"));

		if (n && st && !strcmp(n, name) && !strcmp(st, "ran")) {
			*index = i;
			return e;
		}
	}
	return NULL;
}

/*
 * One latency of one report as a datablock of "ns fraction" rows. Returns
 * the number of rows (0: nothing recorded), -EINVAL on a malformed field;
 * *tail says whether any row is below fraction 1 (the tail panel has a point).
 */
static int latency_block(struct plot *p, unsigned r, const json_t *lat, const char *where,
			 const char *block, struct sbuf *data, bool *tail)
{
	static const char *const pct[] = { "min", "p50", "p90", "p99", "p99_9", "max" };
	static const double frac[] = { 0.0, 0.5, 0.9, 0.99, 0.999, 1.0 };
	struct pmd_jctx x = { .file = p->reports[r], .err = p->err, .errlen = sizeof(p->err) };
	json_t *count = pmd_jget(&x, lat, where, "count", PMD_J_INTEGER), *cdf, *pt;
	char w[512];
	size_t i;
	int rows = 0;

	if (!count)
		return -EINVAL;
	if (json_integer_value(count) <= 0)
		return 0;
	cdf = json_object_get(lat, "cdf");
	sb_printf(data, "%s << EOD\n", block);
	if (cdf) {
		snprintf(w, sizeof(w), "%s.cdf", where);
		if (!pmd_jis(&x, cdf, w, PMD_J_ARRAY))
			return -EINVAL;
		json_array_foreach(cdf, i, pt) {
			json_t *ns, *fr;

			snprintf(w, sizeof(w), "%s.cdf[%zu]", where, i);
			if (!json_is_array(pt) || json_array_size(pt) != 2 ||
			    !json_is_number(ns = json_array_get(pt, 0)) ||
			    !json_is_number(fr = json_array_get(pt, 1)))
				return pmd_jerr(&x, w, "expected [ns, fraction]");
			sb_printf(data, "%.17g %.9g\n", fmax(pmd_jnum(ns), 1), pmd_jnum(fr));
			*tail |= pmd_jnum(fr) < 1;
			rows++;
		}
	}
	if (!rows) {
		/* an older report: its percentiles are a coarse CDF */
		for (i = 0; i < sizeof(pct) / sizeof(pct[0]); i++) {
			json_t *v = pmd_jget(&x, lat, where, pct[i], PMD_J_NUMBER);

			if (!v)
				return -EINVAL;
			sb_printf(data, "%.17g %g\n", fmax(pmd_jnum(v), 1), frac[i]);
			*tail |= frac[i] < 1;
			rows++;
		}
	}
	sb_printf(data, "EOD\n");
	return rows;
}

struct series {
	char block[32];
	char title[256];
	unsigned color, dash;
};

static void plot_cmd(struct sbuf *draw, const struct series *s, unsigned n, const char *using)
{
	unsigned i;

	sb_printf(draw, "plot ");
	for (i = 0; i < n; i++) {
		sb_printf(draw, "%s%s using %s with lines lw 2 lc %u dt %u title ", i ? ", \\\n  " : "",
			  s[i].block, using, s[i].color, s[i].dash);
		sb_quoted(draw, s[i].title);
	}
	sb_printf(draw, "\n");
}

static int latency_chart(struct plot *p, const char *stressor)
{
	struct sbuf data = { 0 }, draw = { 0 }, out = { 0 };
	struct series s[64];
	char names[32][96], name[96], legend[512] = "";
	unsigned nnames = 0, ns = 0, r, i;
	bool tail = false;
	size_t n = 0;
	int rc = 0;

	for (r = 0; r < p->nrep; r++) {
		size_t si;
		json_t *e = ran_entry(p->docs[r], stressor, &si), *lats, *lat;
		const char *key;
		char where[256];

		if (!e)
			continue;
		snprintf(where, sizeof(where), "stressors[%zu].latency", si);
		lats = json_object_get(e, "latency");
		if (!lats)
			continue;
		{
			struct pmd_jctx x = { .file = p->reports[r], .err = p->err,
					      .errlen = sizeof(p->err) };

			if (!pmd_jis(&x, lats, where, PMD_J_OBJECT)) {
				rc = -EINVAL;
				goto out;
			}
		}
		json_object_foreach(lats, key, lat) {
			char w[384];
			unsigned m;
			int rows;

			for (m = 0; m < nnames && strcmp(names[m], key); m++)
				;
			if (m == nnames) {
				if (nnames == 32)
					continue;
				snprintf(names[nnames++], sizeof(names[0]), "%s", key);
			}
			if (ns == sizeof(s) / sizeof(s[0]))
				break;
			snprintf(w, sizeof(w), "%s.%s", where, key);
			snprintf(s[ns].block, sizeof(s[ns].block), "$d%u_%u", r, m);
			rows = latency_block(p, r, lat, w, s[ns].block, &data, &tail);
			if (rows < 0) {
				rc = rows;
				goto out;
			}
			if (!rows)
				continue;
			snprintf(s[ns].title, sizeof(s[ns].title), "%s [%c]", key, 'A' + r);
			s[ns].color = m + 1;
			s[ns].dash = r + 1;
			ns++;
		}
	}
	if (!ns) {
		fprintf(stderr, "pmdstress plot: %s recorded no latency: no chart\n", stressor);
		goto out;
	}
	for (r = 0; r < p->nrep && n < sizeof(legend); r++)
		n += (size_t)snprintf(legend + n, sizeof(legend) - n, "%s[%c] %s", r ? ", " : "",
				      'A' + r, base_name(p->reports[r]));
	sb_printf(&draw, "reset\nset multiplot layout 1,%d title ", tail ? 2 : 1);
	{
		char t[700];

		snprintf(t, sizeof(t), "%s: latency distribution (%s)", stressor, legend);
		sb_quoted(&draw, t);
	}
	sb_printf(&draw, "\nset logscale x\nset format x '%%.0s%%c'\nset xlabel 'latency (ns)'\n"
			 "set grid\nset key bottom right\nset ylabel 'fraction of samples <= latency'\n"
			 "set yrange [0:1]\n");
	plot_cmd(&draw, s, ns, "1:2");
	if (tail) {
		sb_printf(&draw, "set logscale y\nset yrange [*:1]\nset format y '%%g'\n"
				 "set ylabel 'fraction above (tail, log)'\nset key top right\n");
		plot_cmd(&draw, s, ns, "1:($2 < 1 ? 1 - $2 : NaN)");
	}
	sb_printf(&draw, "unset multiplot\n");
	snprintf(name, sizeof(name), "%s-latency", stressor);
	for (i = 0; name[i]; i++)
		if (name[i] == '/' || name[i] == ' ')
			name[i] = '_';
	frame(&out, name, &data, &draw, tail ? 1400 : 800, 560);
	if (data.oom || draw.oom || out.oom) {
		snprintf(p->err, sizeof(p->err), "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	rc = write_chart(p, name, &out);
out:
	free(data.p);
	free(draw.p);
	free(out.p);
	return rc;
}

/* Every stressor of every report, in order, once. */
static int latency_charts(struct plot *p)
{
	char seen[64][64];
	unsigned nseen = 0, r, k;
	int rc;

	for (r = 0; r < p->nrep; r++) {
		struct pmd_jctx x = { .file = p->reports[r], .err = p->err,
				      .errlen = sizeof(p->err) };
		json_t *arr = pmd_jget(&x, p->docs[r], "", "stressors", PMD_J_ARRAY), *e;
		size_t i;

		if (!arr)
			return -EINVAL;
		json_array_foreach(arr, i, e) {
			char w[64];
			json_t *name;

			snprintf(w, sizeof(w), "stressors[%zu]", i);
			if (!pmd_jis(&x, e, w, PMD_J_OBJECT) ||
			    !(name = pmd_jget(&x, e, w, "name", PMD_J_STRING)) ||
			    !pmd_jget(&x, e, w, "status", PMD_J_STRING))
				return -EINVAL;
			for (k = 0; k < nseen && strcmp(seen[k], json_string_value(name)); k++)
				;
			if (k < nseen || nseen == 64)
				continue;
			snprintf(seen[nseen++], sizeof(seen[0]), "%s", json_string_value(name));
			rc = latency_chart(p, json_string_value(name));
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* ---- the timeline from --jsonl ---------------------------------------------------- */

enum { TL_OPS, TL_FAULTS, TL_THP, TL_RSS, TL_COLS };

static const char *const tl_fields[TL_COLS] = { "ops_per_s", "faults_per_s", "thp_share",
						"rss_bytes" };

/* One JSON-lines file as a datablock "t ops faults thp rss_mib" ('?' = missing). */
static int timeline_block(struct plot *p, unsigned j, struct sbuf *data, bool have[TL_COLS])
{
	const char *path = p->jsonl[j];
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0, rows = 0, c;
	int rc = 0;

	if (!f)
		return snprintf(p->err, sizeof(p->err), "%s: cannot open: %s", path,
				strerror(errno)), -EINVAL;
	sb_printf(data, "$t%u << EOD\n", j);
	while (getline(&line, &cap, f) > 0) {
		json_error_t je;
		json_t *o, *t;

		lineno++;
		if (line[strspn(line, " \t\r\n")] == '\0')
			continue;
		o = json_loads(line, 0, &je);
		if (!o) {
			snprintf(p->err, sizeof(p->err), "%s:%u: not valid JSON (column %d: %s)",
				 path, lineno, je.column, je.text);
			rc = -EINVAL;
			break;
		}
		t = json_object_get(o, "t_s");
		/* other kinds of lines (a header, a summary) carry no time: not samples */
		if (!json_is_object(o) || !json_is_number(t)) {
			json_decref(o);
			continue;
		}
		sb_printf(data, "%.9g", json_number_value(t));
		for (c = 0; c < TL_COLS; c++) {
			json_t *v = json_object_get(o, tl_fields[c]);
			double d = json_is_number(v) ? json_number_value(v) : NAN;

			/* a negative THP share means "nothing verified yet" */
			if (!isfinite(d) || (c == TL_THP && d < 0)) {
				sb_printf(data, " ?");
				continue;
			}
			have[c] = true;
			sb_printf(data, " %.9g", c == TL_RSS ? d / 1048576.0 : d);
		}
		sb_printf(data, "\n");
		rows++;
		json_decref(o);
	}
	free(line);
	fclose(f);
	sb_printf(data, "EOD\n");
	if (!rc && !rows) {
		snprintf(p->err, sizeof(p->err), "%s: no line has a \"t_s\" number: not a pmdstress "
						 "--jsonl file", path);
		rc = -EINVAL;
	}
	return rc;
}

static void timeline_plot(struct sbuf *draw, const struct plot *p, bool have[][TL_COLS],
			  unsigned c1, unsigned c2, const char *l1, const char *l2)
{
	const char *sep = "plot ";
	unsigned j;

	for (j = 0; j < p->njsonl; j++) {
		const char *b = base_name(p->jsonl[j]);
		char t[300];

		if (have[j][c1]) {
			snprintf(t, sizeof(t), "%s [%s]", l1, b);
			sb_printf(draw, "%s$t%u using 1:%u with lines lw 2 lc %u dt %u title ", sep, j,
				  c1 + 2, 2 * j + 1, 1);
			sb_quoted(draw, t);
			sep = ", \\\n  ";
		}
		if (have[j][c2]) {
			snprintf(t, sizeof(t), "%s [%s]", l2, b);
			sb_printf(draw, "%s$t%u using 1:%u axes x1y2 with lines lw 2 lc %u dt 2 title ",
				  sep, j, c2 + 2, 2 * j + 2);
			sb_quoted(draw, t);
			sep = ", \\\n  ";
		}
	}
	sb_printf(draw, "\n");
}

static int timeline_chart(struct plot *p)
{
	struct sbuf data = { 0 }, draw = { 0 }, out = { 0 };
	bool have[PLOT_MAX_FILES][TL_COLS];
	bool rate = false, share = false;
	unsigned j;
	int rc = 0;

	memset(have, 0, sizeof(have));
	for (j = 0; j < p->njsonl; j++) {
		rc = timeline_block(p, j, &data, have[j]);
		if (rc)
			goto out;
		rate |= have[j][TL_OPS] || have[j][TL_FAULTS];
		share |= have[j][TL_THP] || have[j][TL_RSS];
	}
	if (!rate && !share) {
		snprintf(p->err, sizeof(p->err), "%s: no sample has ops_per_s, faults_per_s, "
						 "thp_share or rss_bytes", p->jsonl[0]);
		rc = -EINVAL;
		goto out;
	}
	sb_printf(&draw, "reset\nset datafile missing '?'\nset multiplot layout %d,1 title "
			 "'throughput and THP share over time'\nset xlabel 'time (s)'\nset grid\n"
			 "set ytics nomirror\nset y2tics\nset key bottom right opaque\n",
		  rate && share ? 2 : 1);
	if (rate) {
		sb_printf(&draw, "set ylabel 'ops/s'\nset y2label 'faults/s'\nset format y '%%.1s%%c'\n"
				 "set format y2 '%%.1s%%c'\nset yrange [0:*]\nset y2range [0:*]\n");
		timeline_plot(&draw, p, have, TL_OPS, TL_FAULTS, "ops/s", "faults/s");
	}
	if (share) {
		sb_printf(&draw, "set ylabel 'THP share of verified chunks'\nset y2label 'RSS (MiB)'\n"
				 "set format y '%%g'\nset format y2 '%%g'\nset yrange [0:1]\n"
				 "set y2range [0:*]\n");
		timeline_plot(&draw, p, have, TL_THP, TL_RSS, "THP share", "RSS MiB");
	}
	sb_printf(&draw, "unset multiplot\n");
	frame(&out, "timeline", &data, &draw, 1000, rate && share ? 700 : 400);
	if (data.oom || draw.oom || out.oom) {
		snprintf(p->err, sizeof(p->err), "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	rc = write_chart(p, "timeline", &out);
out:
	free(data.p);
	free(draw.p);
	free(out.p);
	return rc;
}

/* ---- running gnuplot --------------------------------------------------------------- */

/* Run gnuplot on DIR/@name.gp in DIR. 0, -ENOENT if there is no gnuplot, or -EIO. */
static int run_gnuplot(const char *dir, const char *name)
{
	char script[128];
	int pfd[2], status, e = 0;
	ssize_t n;
	pid_t pid;

	snprintf(script, sizeof(script), "%s.gp", name);
	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		e = errno;
		close(pfd[0]);
		close(pfd[1]);
		return -e;
	}
	if (!pid) {
		int null = open("/dev/null", O_RDONLY);

		if (null >= 0)
			dup2(null, STDIN_FILENO);
		if (chdir(dir) == 0)
			execlp("gnuplot", "gnuplot", script, (char *)NULL);
		/* the exec failed: say why through the pipe, which exec would have closed */
		e = errno;
		if (write(pfd[1], &e, sizeof(e)) < 0)
			_exit(126);
		_exit(127);
	}
	close(pfd[1]);
	n = read(pfd[0], &e, sizeof(e));
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof(e))
		return -e;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return -EIO;
	return 0;
}

static bool file_nonempty(const char *dir, const char *name, const char *ext)
{
	char path[4096];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s.%s", dir, name, ext);
	return !stat(path, &sb) && S_ISREG(sb.st_mode) && sb.st_size > 0;
}

static int render(struct plot *p)
{
	unsigned i;

	for (i = 0; i < p->ncharts; i++) {
		int rc = run_gnuplot(p->dir, p->charts[i]);

		if (rc == -ENOENT) {
			fprintf(stderr, "pmdstress plot: gnuplot not found (install gnuplot-nox); the "
					"scripts are in %s: run 'gnuplot NAME.gp' there\n", p->dir);
			return 125;
		}
		if (rc) {
			fprintf(stderr, "pmdstress plot: gnuplot failed on %s/%s.gp (%s)\n", p->dir,
				p->charts[i], rc == -EIO ? "see its message above" : strerror(-rc));
			return 5;
		}
		if (!file_nonempty(p->dir, p->charts[i], "png") ||
		    !file_nonempty(p->dir, p->charts[i], "svg")) {
			fprintf(stderr, "pmdstress plot: gnuplot wrote no %s/%s.png or .svg\n", p->dir,
				p->charts[i]);
			return 5;
		}
		printf("%s/%s.png %s/%s.svg\n", p->dir, p->charts[i], p->dir, p->charts[i]);
	}
	return 0;
}

/* ---- the command ----------------------------------------------------------------- */

static int usage(const char *msg)
{
	if (msg) {
		fprintf(stderr, "pmdstress plot: %s (see 'pmdstress plot --help')\n", msg);
		return 2;
	}
	fprintf(stdout,
		"usage: pmdstress plot A.json [B.json ...] -o DIR [--jsonl FILE]...\n"
		"  Latency distributions of every stressor (CDF and tail), and with --jsonl\n"
		"  throughput and THP share over time, as DIR/NAME.png and .svg, drawn by the\n"
		"  gnuplot scripts DIR/NAME.gp (rerun or edit them by hand).\n"
		"Exit: 0 drawn, 2 usage or unreadable input, 5 gnuplot failed,\n"
		"      125 gnuplot not installed (the scripts are still written).\n");
	return 0;
}

static int make_dir(const char *dir, char *err, size_t errlen)
{
	char path[4096], *s;
	struct stat sb;

	snprintf(path, sizeof(path), "%s", dir);
	for (s = path + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(path, 0777) && errno != EEXIST)
			return snprintf(err, errlen, "-o %.200s: cannot create %.200s: %s", dir, path,
					strerror(errno)), -errno;
		*s = '/';
	}
	if (mkdir(path, 0777) && errno != EEXIST)
		return snprintf(err, errlen, "-o %.400s: cannot create it: %s", dir, strerror(errno)),
		       -errno;
	if (stat(path, &sb) || !S_ISDIR(sb.st_mode))
		return snprintf(err, errlen, "-o %.400s: not a directory", dir), -ENOTDIR;
	return 0;
}

static int parse_args(struct plot *p, int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i];
		const char *v;

		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return usage(NULL), 1;
		if (!strcmp(a, "-o") || !strcmp(a, "--output") || !strncmp(a, "--output=", 9) ||
		    !strcmp(a, "--jsonl") || !strncmp(a, "--jsonl=", 8)) {
			bool jsonl = !strncmp(a, "--jsonl", 7);
			const char *eq = strchr(a, '=');

			v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
			if (!v || !*v)
				return usage(jsonl ? "--jsonl needs a file" : "-o needs a directory");
			if (!jsonl) {
				p->dir = v;
				continue;
			}
			if (p->njsonl == PLOT_MAX_FILES)
				return usage("too many --jsonl files");
			p->jsonl[p->njsonl++] = v;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "pmdstress plot: unknown option %s (plot takes -o DIR and "
					"--jsonl FILE)\n", a);
			return 2;
		} else {
			if (p->nrep == PLOT_MAX_FILES)
				return usage("too many reports (at most 8)");
			p->reports[p->nrep++] = a;
		}
	}
	if (!p->nrep)
		return usage("needs at least one JSON report");
	if (!p->dir)
		return usage("-o DIR is required (where the charts go)");
	return 0;
}

int pmd_plot_main(int argc, char **argv)
{
	struct plot *p = calloc(1, sizeof(*p));
	unsigned i;
	int rc;

	if (!p)
		return 5;
	rc = parse_args(p, argc, argv);
	if (rc) {
		free(p);
		return rc == 1 ? 0 : rc;
	}
	for (i = 0; i < p->nrep; i++) {
		p->docs[i] = pmd_report_load(p->reports[i], p->err, sizeof(p->err));
		if (!p->docs[i]) {
			rc = 2;
			goto fail;
		}
	}
	if (make_dir(p->dir, p->err, sizeof(p->err)) || latency_charts(p) ||
	    (p->njsonl && timeline_chart(p))) {
		rc = 2;
		goto fail;
	}
	if (!p->njsonl)
		fprintf(stderr, "pmdstress plot: no --jsonl given: no timeline chart\n");
	if (!p->ncharts)
		fprintf(stderr, "pmdstress plot: nothing to draw: no stressor recorded a latency\n");
	rc = render(p);
	goto out;
fail:
	fprintf(stderr, "pmdstress plot: %s\n", p->err);
out:
	for (i = 0; i < p->nrep; i++)
		json_decref(p->docs[i]);
	free(p);
	return rc;
}
