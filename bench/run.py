#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Measure the measurer: the same kernel work done by a bare C loop
(bench/bare.c) and by pmdstress, in one run, interleaved so that the
machine's noise falls on both alike; the figures are ratios
(pmdstress / bare), never absolute timings.

    bench/run.py [--quick] [--only SECTION,...] [--markdown FILE]

Sections:
  fault     single-thread first-touch cost per 4 KiB page, 4 KiB pages and
            THP, --verify off and on (the touch window: with verify on it
            includes computing each page's stamp)
  mt        multi-threaded first touches, one slice per thread
  forkexec  fork/s and exec/s with a populated parent (if the fork and
            exec stressors exist): with --single-thread against the bare
            loop (one thread each, as AIM9), and threaded (the default:
            main and oracle threads asleep) against the bare loop with two
            sleeping threads; both loops fork with _Fork()
  scale     start-up time and memory per worker for 1024 and 4096 threads
  sensitivity  a known per-page delay is flagged by `pmdstress compare` at
            the right size; two identical runs are not flagged

Exit 0 when every figure meets its target, 1 otherwise, 2 on a usage error.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
BUILD = os.environ.get("PMD_BUILD_DIR", os.path.join(TOP, "build"))
PMD = os.environ.get("PMDSTRESS", os.path.join(BUILD, "pmdstress"))
TMP = tempfile.mkdtemp(prefix="pmdbench-")


def build_bare():
    out = os.path.join(BUILD, "bench-bare")
    src = os.path.join(HERE, "bare.c")
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(src):
        subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", out, src, "-lpthread"],
                       check=True)
    return out


def bare(binary, *args, idle_threads=0):
    env = dict(os.environ, BARE_IDLE_THREADS=str(idle_threads))
    p = subprocess.run([binary] + [str(a) for a in args], capture_output=True, text=True,
                       check=True, env=env)
    return [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]


def pmd(*args, report=True):
    path = os.path.join(TMP, "r.json")
    cmd = [PMD] + [str(a) for a in args] + ["--quiet", "--progress", "off"]
    if report:
        cmd += ["--json", path]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    if not report:
        return None
    with open(path) as f:
        return json.load(f)


def window_ns_per_page(stressor):
    """Touch time per page of one round: the fault stressor's window sum / pages."""
    w = stressor["latency"]["window"]
    return w["mean"] * w["count"] / stressor["ops"]


def fault_rounds(doc):
    out = []
    for r in doc["rounds"]:
        if r["warmup"]:
            continue
        f = [s for s in r["stressors"] if s["name"] == "fault"][0]
        out.append(window_ns_per_page(f))
    return out


class Table:
    def __init__(self):
        self.rows = []

    def add(self, figure, bare_v, pmd_v, target, unit, lower_better=True, note=""):
        ratio = pmd_v / bare_v if bare_v else float("nan")
        ok = ratio <= target if lower_better else ratio >= target
        self.rows.append((figure, bare_v, pmd_v, ratio, target, unit, lower_better, ok, note))
        print(f"  {figure}: bare {bare_v:.1f} {unit}, pmdstress {pmd_v:.1f} {unit}, "
              f"ratio {ratio:.3f} (target {'<=' if lower_better else '>='} {target}) "
              f"{'ok' if ok else 'MISSED'} {note}", flush=True)

    def add_check(self, figure, value, target, unit, ok, note=""):
        self.rows.append((figure, None, value, None, target, unit, None, ok, note))
        print(f"  {figure}: {value} {unit} (target {target}) {'ok' if ok else 'MISSED'} {note}",
              flush=True)

    def markdown(self):
        lines = ["| figure | bare | pmdstress | ratio | target | met |",
                 "| --- | --- | --- | --- | --- | --- |"]
        for fig, b, p, r, t, unit, lower, ok, note in self.rows:
            if b is None:
                lines.append(f"| {fig} | | {p} {unit} | | {t} | {'yes' if ok else 'no'} |")
            else:
                lines.append(f"| {fig} | {b:.1f} {unit} | {p:.1f} {unit} | {r:.3f} | "
                             f"{'≤' if lower else '≥'} {t} | {'yes' if ok else 'no'} |")
        return "\n".join(lines)


def section_fault(t, bare_bin, quick):
    pairs, rounds = (3, 4) if quick else (6, 6)
    size = 64 if quick else 256
    for thp in ("4k", "thp"):
        for verify in ("off", "on"):
            b, p = [], []
            for _ in range(pairs):
                # one round of each is a warm-up (cold memory handed back to the host)
                rows = bare(bare_bin, "fault", size, rounds + 1, thp)[1:]
                b.append(statistics.median(r["ns_per_page"] for r in rows))
                doc = pmd("--stressors", "fault", "--threads", 1, "--fault-chunks", 0,
                          "--fault-sweeps", 1, "--fault-order", "forward", "--rounds", rounds,
                          "--size", f"{size}M", "--thp", "nohuge" if thp == "4k" else "madvise",
                          "--verify", verify)
                p.append(statistics.median(fault_rounds(doc)))
            t.add(f"first touch, {thp} pages, verify {verify}", statistics.median(b),
                  statistics.median(p), 1.03 if verify == "off" else 1.25, "ns/page")


def section_mt(t, bare_bin, quick):
    threads = max(2, os.cpu_count() or 2)
    pairs, rounds, size = (3, 3, 64) if quick else (5, 5, 256)
    for thp in ("4k", "thp"):
        b, p = [], []
        for _ in range(pairs):
            rows = bare(bare_bin, "mt", threads, size, rounds + 1, thp)[1:]
            b.append(statistics.median(r["ns_per_page"] for r in rows))
            doc = pmd("--stressors", "fault", "--threads", threads, "--fault-group", 1,
                      "--fault-chunks", 0, "--fault-sweeps", 1, "--fault-order", "forward",
                      "--rounds", rounds, "--size", f"{size}M",
                      "--thp", "nohuge" if thp == "4k" else "madvise", "--verify", "off")
            p.append(statistics.median(fault_rounds(doc)))
        bb, pp = statistics.median(b), statistics.median(p)
        # per-thread ns per page -> faults per second of all threads
        t.add(f"{threads} threads first touch, {thp}, faults/s", threads * 1e9 / bb,
              threads * 1e9 / pp, 0.97, "pages/s", lower_better=False)


def stressors_available():
    p = subprocess.run([PMD, "list"], capture_output=True, text=True)
    return set(re.findall(r"^  (\w+) ", p.stdout, re.M))


def section_forkexec(t, bare_bin, quick):
    have = stressors_available()
    secs = 2 if quick else 4
    pairs = 3 if quick else 5
    pop_mb = 64
    for kind in ("fork", "exec"):
        if kind not in have:
            print(f"  {kind}: skipped: no {kind} stressor in this build")
            continue
        for thp in ("4k", "thp"):
            b, b3, p1, p = [], [], [], []
            for _ in range(pairs):
                # the same populated size, and for exec the same program: pmdstress's
                # --exec-child
                extra = [PMD, "--exec-child"] if kind == "exec" else []
                args = ("--config", "aim9" if thp == "thp" else "aim9_4k", "--stressors", kind,
                        "--size", f"{pop_mb}M", "--duration", f"{secs}s", "--rounds", 1)
                b.append(bare(bare_bin, kind, pop_mb, secs, thp, *extra)[0]["ops_per_s"])
                # --single-thread: the worker on the main thread, no other thread, like
                # the bare loop and AIM9's fork_test
                doc = pmd(*args, "--single-thread")
                p1.append([x for x in doc["stressors"] if x["name"] == kind][0]["ops_per_s"])
                # by default pmdstress forks from its worker while its main thread and
                # its oracle thread sleep: the bare loop with two sleeping threads
                b3.append(bare(bare_bin, kind, pop_mb, secs, thp, *extra,
                               idle_threads=2)[0]["ops_per_s"])
                doc = pmd(*args)
                p.append([x for x in doc["stressors"] if x["name"] == kind][0]["ops_per_s"])
            t.add(f"{kind}/s, parent populated with {thp} pages, --single-thread",
                  statistics.median(b), statistics.median(p1), 0.97, f"{kind}s/s",
                  lower_better=False, note=f"({pop_mb} MiB populated; bare single-threaded)")
            t.add(f"{kind}/s, {thp} pages, threaded (default)", statistics.median(b3),
                  statistics.median(p), 0.97, f"{kind}s/s", lower_better=False,
                  note="(bare with 2 sleeping threads: the same process shape)")


def section_scale(t, quick):
    for threads, size in ((1024, "128M"), (4096, "256M")):
        doc = pmd("--stressors", "fault", "--threads", threads, "--size", size, "--duration", "2s")
        up = doc["startup"]
        t.add_check(f"--threads {threads}: start-up", round(up["spawn_s"], 3), "< 0.5 s", "s",
                    up["spawn_s"] < 0.5)
        per = up["tool_rss_end_per_worker"] / 1024
        t.add_check(f"--threads {threads}: memory beyond the arena per worker", round(per, 1),
                    "< 64 KiB", "KiB", per < 64)


def compare_row(a, b, metric):
    p = subprocess.run([PMD, "compare", a, b, "--force"], capture_output=True, text=True)
    for line in p.stdout.splitlines():
        f = line.split()
        if f and f[0] == metric:
            return float(f[-2].rstrip("%")), f[-1]
    raise RuntimeError(f"compare printed no {metric} row:\n{p.stdout}")


def merged(docs, path):
    """One report whose rounds are the measured rounds of several runs."""
    doc = json.loads(json.dumps(docs[0]))
    doc["rounds"] = [r for d in docs for r in d["rounds"] if not r["warmup"]]
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def section_sensitivity(t, quick):
    """A known per-page delay must be flagged, at about its size, and identical
    runs must not be. The runs of A, B and A' are interleaved (A B A' A B A' ...)
    and their rounds pooled, so the machine's drift falls on all three alike."""
    reps, rounds = (3, 3) if quick else (5, 4)
    delay_ns = 1000
    base = ["--stressors", "fault", "--threads", 1, "--fault-chunks", 0, "--fault-sweeps", 1,
            "--fault-order", "forward", "--rounds", rounds, "--size", "64M", "--thp", "nohuge",
            "--verify", "off", "--seed", 1]
    runs = {"a": [], "b": [], "a2": []}
    for _ in range(reps):
        for name, extra in (("a", []), ("b", ["--fault-delay", f"{delay_ns}ns"]), ("a2", [])):
            runs[name].append(pmd(*(base + extra)))
    paths = {n: merged(d, os.path.join(TMP, n + ".json")) for n, d in runs.items()}
    base_ns = statistics.median(x for d in runs["a"] for x in fault_rounds(d))
    expected = 100.0 * delay_ns / base_ns
    change, mark = compare_row(paths["a"], paths["b"], "latency.window.mean")
    t.add_check(f"a {delay_ns} ns/page delay (expected +{expected:.0f}%)",
                f"{change:+.1f}% {mark}", "flagged worse, within 0.5x-2x of expected", "",
                mark == "worse" and 0.5 * expected <= change <= 2 * expected)
    change, mark = compare_row(paths["a"], paths["a2"], "latency.window.mean")
    t.add_check("two identical runs", f"{change:+.1f}% {mark}", "not flagged", "", mark == "~")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer pairs and rounds")
    ap.add_argument("--only", default="fault,mt,forkexec,scale,sensitivity")
    ap.add_argument("--markdown", help="also write the table as Markdown to this file")
    a = ap.parse_args()
    if not os.access(PMD, os.X_OK):
        print(f"bench: no pmdstress at {PMD} (build first, or set PMDSTRESS)", file=sys.stderr)
        return 2
    bare_bin = build_bare()
    t = Table()
    uname = os.uname()
    load = os.getloadavg()[0]
    print(f"bench/run.py{' --quick' if a.quick else ''}: {time.strftime('%Y-%m-%d')}, "
          f"kernel {uname.release}, {os.cpu_count()} CPUs, load {load:.1f}")
    for sec in a.only.split(","):
        print(f"[{sec}]", flush=True)
        try:
            {"fault": lambda: section_fault(t, bare_bin, a.quick),
             "mt": lambda: section_mt(t, bare_bin, a.quick),
             "forkexec": lambda: section_forkexec(t, bare_bin, a.quick),
             "scale": lambda: section_scale(t, a.quick),
             "sensitivity": lambda: section_sensitivity(t, a.quick)}[sec]()
        except KeyError:
            print(f"bench: unknown section {sec!r}", file=sys.stderr)
            return 2
    md = t.markdown()
    print("\n" + md)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(f"`bench/run.py{' --quick' if a.quick else ''}` on {time.strftime('%Y-%m-%d')}, "
                    f"kernel {uname.release}, {os.cpu_count()} CPUs, load average {load:.1f} "
                    f"at the start\n\n{md}\n")
    shutil.rmtree(TMP, ignore_errors=True)
    return 0 if all(r[7] for r in t.rows) else 1


if __name__ == "__main__":
    sys.exit(main())
