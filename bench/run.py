#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Measure the measurer: the same kernel work done by a bare C loop
(bench/bare.c) and by pmdstress, in one run, interleaved so that the
machine's noise falls on both alike; the figures are ratios
(pmdstress / bare), never absolute timings.

    bench/run.py [--quick] [--only SECTION,...] [--rows REGEX] [--triplets N]
                 [--markdown FILE]

Sections:
  race      the race rate: collided rounds/s and seed-race rounds/s of the
            default command (--threads 64) and of the storm alone, against
            the bare race loop's rounds/s (as many racers as CPUs, one fresh
            2 MiB chunk a round, every slot verified); target for the
            default command's collided rounds: >= 0.5
  fault     single-thread first-touch cost per 4 KiB page, 4 KiB pages and
            THP, --verify off and on (the touch window: with verify on it
            includes computing each page's stamp)
  mt        multi-threaded first touches, one slice per thread
  forkexec  fork/s and exec/s with a populated parent (if the fork and
            exec stressors exist): with --single-thread against the bare
            loop (one thread each, as AIM9), and threaded (the default:
            the main thread asleep beside the worker) against the bare loop
            with one sleeping thread; both loops fork with _Fork(). And, as
            information without a target, the bare fork loop given the
            shape of pmdstress's process (BARE_SHAPE=pmdstress, bench/bare.c)
            against itself: the part of the fork gap that the shape is
  scale     start-up time and memory per worker for 1024 and 4096 threads
  sensitivity  a known per-page delay is flagged by `pmdstress compare` at
            the right size; two identical runs are not flagged

A ratio figure is measured in interleaved triplets (bare, pmdstress, bare
again) and reported as the median ratio with its 95% bootstrap interval,
beside the bare loop measured against itself (the machine's resolution);
see class Table. --triplets N measures every ratio figure in N triplets
instead of the section's own number (race, fault and mt 8, forkexec 6, --quick 3):
on a noisy machine more triplets narrow the intervals, at N times the cost.
--rows REGEX measures only the figures (rows) of those sections whose name
matches REGEX (Python's re.search), to settle one row with many triplets
without an hour of the others, e.g. --only forkexec --rows 'fork/s.*thp'.

Exit 0 when every figure meets its target, 1 when one is missed (its whole
interval beyond the target), 3 when none is missed but one is unsettled
(its interval straddles the target: this machine's noise is larger than the
target), 2 on a usage error.
"""
import argparse
import json
import os
import random
import re
import shlex
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
TMP = None  # the run's scratch folder, made once the arguments are good (main)
# The threads asleep beside the worker of a default (threaded) fork or exec
# run: the main thread, which also reads the kernel log (src/kernel/monitor.c).
# The threaded rows' bare loop has as many (tests/bench checks both counts).
THREADED_IDLE = 1


def dynamic(path):
    """True if the ELF file at path has a PT_INTERP header (a dynamic program)."""
    with open(path, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2:
            raise RuntimeError(f"{path}: not a 64-bit ELF file")
        phoff = int.from_bytes(head[0x20:0x28], "little")
        phentsize = int.from_bytes(head[0x36:0x38], "little")
        phnum = int.from_bytes(head[0x38:0x3a], "little")
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    return any(int.from_bytes(table[i * phentsize:i * phentsize + 4], "little") == 3
               for i in range(phnum))


def build_bare():
    """The bare loop, linked as pmdstress is: a dynamic program's fork copies the
    loader's and the libraries' mappings too, and its fork child resolves _exit
    through the PLT (15 page faults per child, 4 static): costs the static
    pmdstress does not have, which would flatter its fork and exec ratios."""
    out = os.path.join(BUILD, "bench-bare")
    src = os.path.join(HERE, "bare.c")
    static = not dynamic(PMD)
    if (not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(src)
            or dynamic(out) == static):
        subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-Werror"] + (["-static"] if static else [])
                       + ["-o", out, src, "-lpthread"], check=True)
    return out


def bare(binary, *args, idle_threads=0, shape=None):
    env = dict(os.environ, BARE_IDLE_THREADS=str(idle_threads))
    env.pop("BARE_SHAPE", None)
    env.pop("BARE_DONTFORK_MAPS", None)
    if shape:
        env["BARE_SHAPE"] = shape
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


MIN_TRIPLETS = 6


def boot_ci(values, stat=statistics.median, n=2000, seed=1):
    """95% percentile-bootstrap interval of @stat over @values (resampled with
    replacement, a fixed seed so a rerun on the same samples agrees)."""
    rng = random.Random(seed)
    est = sorted(stat([rng.choice(values) for _ in values]) for _ in range(n))
    return est[int(0.025 * n)], est[int(0.975 * n) - 1]


class Table:
    """Rows of figures. A ratio row is measured in interleaved triplets:
    bare, pmdstress, bare again. Each triplet gives one ratio, pmdstress over
    the mean of the two bare runs around it (so a drift of the machine during
    the triplet cancels), and one control, the second bare run over the first:
    what the same loop measures against itself at that distance, the
    resolution of this machine. A row reports the median ratio and its 95%
    bootstrap interval; the target is met when the whole interval is within
    it, missed when the whole interval is beyond it, and unsettled when the
    interval straddles it: the noise is larger than what the target asks to
    see, and more triplets or a quieter machine are needed. A row is
    unsettled too with fewer than MIN_TRIPLETS triplets (a bootstrap of
    fewer says nothing), and when the bare loop against itself is off 1 by
    more than its own interval: the machine changed under the measurement.
    A row without a target (None) is information, not a verdict ("info"):
    it does not count in the exit code."""

    def __init__(self, rows=None):
        """@rows: a compiled pattern; only the figures it matches are measured."""
        self.rows = []
        self.pattern = rows
        self.left_out = []  # the figures --rows left out

    def skips(self, figure):
        return self.pattern is not None and not self.pattern.search(figure)

    def wants(self, *figures):
        """True if any of @figures is to be measured (the others are noted as
        left out). A section calls it before measuring what gives several rows."""
        out = [f for f in figures if self.skips(f)]
        self.left_out += [f for f in out if f not in self.left_out]
        return len(out) < len(figures)

    def measure(self, figure, n, bare_sample, pmd_sample, *args, **kw):
        """add() of @n interleaved triplets, if --rows wants @figure."""
        if self.wants(figure):
            self.add(figure, triplets(n, bare_sample, pmd_sample), *args, **kw)

    def add(self, figure, triplets, target, unit, lower_better=True, note=""):
        """@triplets: (bare, pmdstress, bare again) per interleaved triplet."""
        ratios = [p / ((b + b2) / 2) for b, p, b2 in triplets]
        controls = [b2 / b for b, p, b2 in triplets]
        ratio, (lo, hi) = statistics.median(ratios), boot_ci(ratios)
        ctl, (clo, chi) = statistics.median(controls), boot_ci(controls)
        if target is None:
            verdict = "info"
        elif len(triplets) < MIN_TRIPLETS or not clo <= 1 <= chi:
            verdict = "unsettled"
        elif lower_better:
            verdict = "yes" if hi <= target else "no" if lo > target else "unsettled"
        else:
            verdict = "yes" if lo >= target else "no" if hi < target else "unsettled"
        bare_v = statistics.median(x for b, p, b2 in triplets for x in (b, b2))
        pmd_v = statistics.median(p for b, p, b2 in triplets)
        self.rows.append(dict(figure=figure, bare=bare_v, pmd=pmd_v, ratio=ratio, ci=(lo, hi),
                              control=ctl, control_ci=(clo, chi), target=target, unit=unit,
                              lower=lower_better, verdict=verdict, n=len(triplets)))
        goal = "no target" if target is None else f"target {'<=' if lower_better else '>='} {target}"
        print(f"  {figure}: bare {bare_v:.1f} {unit}, pmdstress {pmd_v:.1f} {unit}, "
              f"ratio {ratio:.3f} [{lo:.3f}, {hi:.3f}] ({goal}; "
              f"bare against itself {ctl:.3f} [{clo:.3f}, {chi:.3f}], "
              f"{len(triplets)} triplets) {verdict} {note}", flush=True)

    def add_check(self, figure, value, target, unit, ok, note=""):
        if self.skips(figure):
            return
        self.rows.append(dict(figure=figure, bare=None, pmd=value, target=target, unit=unit,
                              verdict="yes" if ok else "no"))
        print(f"  {figure}: {value} {unit} (target {target}) {'ok' if ok else 'MISSED'} {note}",
              flush=True)

    def markdown(self):
        lines = ["| figure | bare | pmdstress | ratio [95% CI] | bare against itself | target | met |",
                 "| --- | --- | --- | --- | --- | --- | --- |"]
        for r in self.rows:
            if r["bare"] is None:
                lines.append(f"| {r['figure']} | | {r['pmd']} {r['unit']} | | | {r['target']} | "
                             f"{r['verdict']} |")
                continue
            lo, hi = r["ci"]
            clo, chi = r["control_ci"]
            lines.append(f"| {r['figure']} | {r['bare']:.1f} {r['unit']} | {r['pmd']:.1f} "
                         f"{r['unit']} | {r['ratio']:.3f} [{lo:.3f}, {hi:.3f}] | "
                         f"{r['control']:.3f} [{clo:.3f}, {chi:.3f}] | "
                         f"{self.goal(r)} | {r['verdict']} |")
        return "\n".join(lines)

    @staticmethod
    def goal(r):
        return "" if r["target"] is None else f"{'≤' if r['lower'] else '≥'} {r['target']}"

    def exit_code(self):
        verdicts = {r["verdict"] for r in self.rows}
        return 1 if "no" in verdicts else 3 if "unsettled" in verdicts else 0


def triplets(n, bare_sample, pmd_sample):
    """@n interleaved (bare, pmdstress, bare again) samples."""
    out = []
    for _ in range(n):
        out.append((bare_sample(), pmd_sample(), bare_sample()))
    return out


# The fault stressor's pages in the bare loop's order: forward from each chunk's
# first page. Its default first page is a random one each round (where the
# contested fault lands), and the stores after a huge page's fault then cost
# more: the bare loop starting each chunk at a random page, as pmdstress does
# by default, was 4-7% slower per page than in address order (2 threads, THP,
# 10 alternations; a scratch copy of bench/bare.c), and pmdstress with
# --fault-first 0 as fast as the bare loop.
FAULT_IN_ORDER = ("--fault-order", "forward", "--fault-first", 0)


def section_fault(t, bare_bin, quick, n=None):
    rounds = 4 if quick else 6
    n = n or (3 if quick else 8)
    size = 64 if quick else 256
    for thp in ("4k", "thp"):
        for verify in ("off", "on"):
            # one round of each is a warm-up (cold memory handed back to the host)
            def bare_ns():
                rows = bare(bare_bin, "fault", size, rounds + 1, thp)[1:]
                return statistics.median(r["ns_per_page"] for r in rows)

            # --single-thread: the touches run on the thread that frees the arena
            # between rounds, as in the bare loop. With a worker thread, one of the
            # first THP rounds after the warm-up was up to ten times slower in each
            # of four runs (2300 to 6700 ns/page, the other rounds 260-400; the bare
            # loop's rounds 240), as if the worker got huge pages the freeing CPU
            # had not just freed; with --single-thread no round was.
            # --fault-first 0: each chunk in address order from its first page, as
            # the bare loop touches (FAULT_IN_ORDER)
            def pmd_ns():
                doc = pmd("--stressors", "fault", "--threads", 1, "--single-thread",
                          "--fault-chunks", 0, *FAULT_IN_ORDER,
                          "--fault-sweeps", 1, "--rounds", rounds,
                          "--size", f"{size}M", "--thp", "nohuge" if thp == "4k" else "madvise",
                          "--verify", verify)
                return statistics.median(fault_rounds(doc))
            t.measure(f"first touch, {thp} pages, verify {verify}", n, bare_ns, pmd_ns,
                      1.03 if verify == "off" else 1.25, "ns/page")


def section_mt(t, bare_bin, quick, n=None):
    threads = max(2, os.cpu_count() or 2)
    rounds, size = (3, 64) if quick else (5, 256)
    n = n or (3 if quick else 8)
    for thp in ("4k", "thp"):
        # per-thread ns per page -> faults per second of all threads
        def bare_rate():
            rows = bare(bare_bin, "mt", threads, size, rounds + 1, thp)[1:]
            return threads * 1e9 / statistics.median(r["ns_per_page"] for r in rows)

        def pmd_rate():
            doc = pmd("--stressors", "fault", "--threads", threads, "--fault-group", 1,
                      "--fault-chunks", 0, "--fault-sweeps", 1, *FAULT_IN_ORDER,
                      "--rounds", rounds, "--size", f"{size}M",
                      "--thp", "nohuge" if thp == "4k" else "madvise", "--verify", "off")
            return threads * 1e9 / statistics.median(fault_rounds(doc))
        t.measure(f"{threads} threads first touch, {thp}, faults/s", n, bare_rate, pmd_rate,
                  0.97, "pages/s", lower_better=False)


def stressors_available():
    p = subprocess.run([PMD, "list"], capture_output=True, text=True)
    return set(re.findall(r"^  (\w+) ", p.stdout, re.M))


def section_forkexec(t, bare_bin, quick, n=None):
    have = stressors_available()
    secs = 1 if quick else 2
    n = n or (3 if quick else 6)
    pop_mb = 64
    for kind in ("fork", "exec"):
        if kind not in have:
            print(f"  {kind}: skipped: no {kind} stressor in this build")
            continue
        # the same populated size, and for exec the same program: pmdstress's --exec-child
        extra = [PMD, "--exec-child"] if kind == "exec" else []
        for thp in ("4k", "thp"):
            args = ("--config", "aim9" if thp == "thp" else "aim9_4k", "--stressors", kind,
                    "--size", f"{pop_mb}M", "--duration", f"{secs}s", "--rounds", 1)

            def bare_rate(idle=0, shape=None):
                return bare(bare_bin, kind, pop_mb, secs, thp, *extra,
                            idle_threads=idle, shape=shape)[0]["ops_per_s"]

            def pmd_rate(*more):
                doc = pmd(*args, *more)
                return [x for x in doc["stressors"] if x["name"] == kind][0]["ops_per_s"]
            # --single-thread: the worker on the main thread, no other thread, like the
            # bare loop and AIM9's fork_test
            t.measure(f"{kind}/s, parent populated with {thp} pages, --single-thread",
                      n, bare_rate, lambda: pmd_rate("--single-thread"), 0.97,
                      f"{kind}s/s", lower_better=False,
                      note=f"({pop_mb} MiB populated; bare single-threaded)")
            if kind == "fork":
                # how much of that row is the shape of pmdstress's process: its
                # other mappings and resident pages, which fork copies too
                t.measure(f"{kind}/s, {thp} pages, bare loop with pmdstress's shape "
                          "(BARE_SHAPE=pmdstress)",
                          n, bare_rate, lambda: bare_rate(shape="pmdstress"), None,
                          f"{kind}s/s", lower_better=False,
                          note="(information: the 'pmdstress' column is the shaped bare loop)")
            # by default pmdstress forks from its worker while its main thread sleeps:
            # the bare loop with as many sleeping threads
            t.measure(f"{kind}/s, {thp} pages, threaded (default)",
                      n, lambda: bare_rate(THREADED_IDLE), pmd_rate, 0.97, f"{kind}s/s",
                      lower_better=False, note=f"(bare with {THREADED_IDLE} sleeping thread"
                      f"{'' if THREADED_IDLE == 1 else 's'}: the same process shape)")


def section_scale(t, bare_bin, quick, n=None):
    for threads, size in ((1024, "128M"), (4096, "256M")):
        if not t.wants(f"--threads {threads}: start-up",
                       f"--threads {threads}: memory beyond the arena per worker"):
            continue
        doc = pmd("--stressors", "fault", "--threads", threads, "--size", size, "--duration", "2s")
        up = doc["startup"]
        t.add_check(f"--threads {threads}: start-up", round(up["spawn_s"], 3), "< 0.5 s", "s",
                    up["spawn_s"] < 0.5)
        per = up["tool_rss_end_per_worker"] / 1024
        t.add_check(f"--threads {threads}: memory beyond the arena per worker", round(per, 1),
                    "< 64 KiB", "KiB", per < 64)


def compare_row(a, b, metric):
    p = subprocess.run([PMD, "compare", a, b, "--force", "--all"], capture_output=True, text=True)
    for line in p.stdout.splitlines():
        f = [c for c in line.split() if c != "*"]  # '*' marks a gated figure
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


def section_sensitivity(t, bare_bin, quick, n=None):
    """A known per-page delay must be flagged, at about its size, and identical
    runs must not be. The runs of A, B and A' are interleaved (A B A' A B A' ...)
    and their rounds pooled, so the machine's drift falls on all three alike.
    One measured round per run: rounds of one process share its physical
    pages and their backing by the host, so they vary less among themselves
    than runs do, and pooling several rounds per run made Welch's test see
    run-to-run noise as a difference (two identical runs flagged -12.8%,
    5 runs of 4 rounds each, 2026-12-03)."""
    reps, rounds = (4, 1) if quick else (12, 1)
    delay_ns = 1000
    flagged, identical = f"a {delay_ns} ns/page delay", "two identical runs"
    if not t.wants(flagged, identical):
        return
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
    t.add_check(flagged, f"{change:+.1f}% {mark}",
                f"flagged worse, within 0.5x-2x of the expected +{expected:.0f}%", "",
                mark == "worse" and 0.5 * expected <= change <= 2 * expected)
    change, mark = compare_row(paths["a"], paths["a2"], "latency.window.mean")
    t.add_check(identical, f"{change:+.1f}% {mark}", "not flagged", "", mark == "~")


def section_race(t, bare_bin, quick, n=None):
    """The race rate: pmdstress's collided rounds per second, and its seed-race
    rounds, against the bare race loop's rounds per second (bare.c race: as
    many racers as CPUs, one fresh 2 MiB chunk a round, every slot verified),
    all in interleaved triplets. The default command as a user types it
    (`--threads 64`, every partner of the race scenario) and the storm alone."""
    secs = 2 if quick else 4
    n = n or (3 if quick else 8)
    racers = max(2, min(64, os.cpu_count() or 2))
    shapes = {"--threads 64 (the default race)": ("--threads", 64),
              "--threads 64 --stressors fault": ("--threads", 64, "--stressors", "fault")}
    for shape, args in shapes.items():
        figures = (f"collided rounds/s, {shape}", f"seed-race rounds/s, {shape}")
        if not t.wants(*figures):
            continue

        def bare_rate():
            return bare(bare_bin, "race", racers, secs, "thp")[0]["rounds_per_s"]

        samples = []
        for _ in range(n):
            b = bare_rate()
            doc = pmd(*args, "--duration", f"{secs}s")
            samples.append((b, doc["race"], bare_rate()))
        t.add(figures[0], [(b, r["collided_per_s"], b2) for b, r, b2 in samples],
              0.5 if "default" in shape else None, "rounds/s", lower_better=False,
              note=f"bare: {racers} racers, rounds/s")
        t.add(figures[1], [(b, r["seed_race_per_s"], b2) for b, r, b2 in samples], None,
              "rounds/s", lower_better=False,
              note=f"evidence: {samples[-1][1]['evidence']['seed_race']}")


# name -> section(table, bare loop, quick, triplets or None), in the default order
SECTIONS = {"race": section_race, "fault": section_fault, "mt": section_mt,
            "forkexec": section_forkexec, "scale": section_scale,
            "sensitivity": section_sensitivity}


def positive_int(text):
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of triplets of 1 or more")
    return n


def pattern(text):
    try:
        return re.compile(text)
    except re.error as e:
        raise argparse.ArgumentTypeError(f"{text!r} is not a regular expression: {e}")


def main():
    global TMP
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer pairs and rounds")
    ap.add_argument("--only", default=",".join(SECTIONS))
    ap.add_argument("--rows", type=pattern, metavar="REGEX",
                    help="measure only the figures whose name matches REGEX")
    ap.add_argument("--triplets", type=positive_int, metavar="N",
                    help="triplets per ratio figure (default: the section's own)")
    ap.add_argument("--markdown", help="also write the table as Markdown to this file")
    a = ap.parse_args()
    sections = a.only.split(",")
    for sec in sections:  # before anything runs: not after an hour of the others
        if sec not in SECTIONS:
            print(f"bench: unknown section {sec!r} in --only (sections: {', '.join(SECTIONS)})",
                  file=sys.stderr)
            return 2
    if not os.access(PMD, os.X_OK):
        print(f"bench: no pmdstress at {PMD} (build first, or set PMDSTRESS)", file=sys.stderr)
        return 2
    bare_bin = build_bare()
    TMP = tempfile.mkdtemp(prefix="pmdbench-")
    t = Table(a.rows)
    uname = os.uname()
    load = os.getloadavg()[0]
    # what was measured, to quote with the figures (--markdown's file is not part of it)
    cmd = " ".join(["bench/run.py"] + (["--quick"] if a.quick else [])
                   + (["--only", a.only] if sections != list(SECTIONS) else [])
                   + (["--rows", shlex.quote(a.rows.pattern)] if a.rows else [])
                   + (["--triplets", str(a.triplets)] if a.triplets else []))
    print(f"{cmd}: {time.strftime('%Y-%m-%d')}, "
          f"kernel {uname.release}, {os.cpu_count()} CPUs, load {load:.1f}")
    try:
        for sec in sections:
            print(f"[{sec}]", flush=True)
            SECTIONS[sec](t, bare_bin, a.quick, a.triplets)
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    if a.rows and not t.rows:
        print(f"bench: --rows {a.rows.pattern!r} matches no figure of {', '.join(sections)}; "
              "they are:\n  " + ("\n  ".join(t.left_out) or "(none)"), file=sys.stderr)
        return 2
    if t.left_out:
        print(f"--rows {a.rows.pattern!r}: {len(t.left_out)} other figures not measured")
    md = t.markdown()
    print("\n" + md)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(f"`{cmd}` on {time.strftime('%Y-%m-%d')}, "
                    f"kernel {uname.release}, {os.cpu_count()} CPUs, load average {load:.1f} "
                    f"at the start\n\n{md}\n")
    return t.exit_code()


if __name__ == "__main__":
    sys.exit(main())
