#!/usr/bin/env python3
# labels: e2e results
# timeout: 240
"""pmdstress compare on real reports: the table, n<2 for single runs, Welch
significance over rounds, direction (higher/lower/none), the --threshold
gate (exit 1 only for a significant change for the worse beyond it; exit 2
when nothing could be tested, a note when part could not), warm-up
rounds left out, refusal of incomparable reports unless --force, and one
clear line with exit 2 for every kind of broken file."""
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, check, done, fail, run, skip_part  # noqa: E402

tmp = tempfile.mkdtemp(prefix="pmdcmp-")
base = ["--threads", "4", "--size", "16M", "--progress", "off", "--quiet", "--stressors", "fault"]


def report(name, extra=(), duration="400ms"):
    r = run(base + ["--duration", duration] + list(extra))
    if r.rc != 0:
        # the engine's own tests judge its runs; here a clean report is an input
        print(f"# {name}: the run was not clean (exit {r.rc}), once more:\n{r.show()}")
        r = run(base + ["--duration", duration] + list(extra))
    if not (r.rc == 0 and r.doc):
        fail(f"{name}: no clean real run to compare (exit {r.rc})\n{r.show()}")
    return r.doc


def save(name, doc):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def compare(*args):
    p = subprocess.run([PMDSTRESS, "compare"] + list(args), capture_output=True, text=True,
                       timeout=60)
    return p.returncode, p.stdout, p.stderr


def rows(out):
    """{(stressor, metric): [cells...]} from the table."""
    table, stressor = {}, None
    for ln in out.splitlines():
        if re.match(r"^[a-z]\w*\s+\[A\] mean", ln):
            stressor = ln.split()[0]
        elif stressor and re.match(r"^  (ops_per_s|faults_per_s|counters\.|latency\.)", ln):
            cells = ln.split()
            table[(stressor, cells[0])] = cells[1:]
    return table


def with_rounds(samples, warmup=None):
    """A report whose rounds are the stressor entries of real runs (the --rounds shape)."""
    doc = copy.deepcopy(samples[0])
    rounds = []
    if warmup is not None:
        rounds.append({"index": 0, "warmup": True, "duration_s": warmup["duration_s"],
                       "stressors": copy.deepcopy(warmup["stressors"])})
    for s in samples:
        rounds.append({"index": len(rounds), "warmup": False, "duration_s": s["duration_s"],
                       "stressors": copy.deepcopy(s["stressors"])})
    doc["rounds"] = rounds
    return doc


def scaled(doc, fn):
    """A copy with fn(stressor_entry) applied in every round: a 'kernel' that changed."""
    d = copy.deepcopy(doc)
    for r in d["rounds"]:
        for s in r["stressors"]:
            fn(s)
    return d


# ---- single runs: a table, but no test (n = 1) ------------------------------
a1 = report("A")
b1 = report("B", duration="500ms")  # duration and seed may differ
pa, pb = save("a1.json", a1), save("b1.json", b1)
rc, out, err = compare(pa, pb)
t = rows(out)
check(rc == 0, f"compare of two single runs exits 0\n{out}\n{err}")
check(("fault", "ops_per_s") in t and ("fault", "faults_per_s") in t,
      f"ops_per_s and faults_per_s rows\n{out}")
check(any(k[1].startswith("counters.") and k[1].endswith(".per_s") for k in t),
      "every counter's per_s has a row")
check(all(("fault", f"latency.first_touch.{q}") in t for q in ("mean", "p50", "p99")),
      "each latency's mean, p50 and p99 have rows")
check(("fault", "counters.ops.per_s") not in t, "counter 'ops' is not listed twice")
lat_empty = [k for k, v in a1["stressors"][0]["latency"].items() if v["count"] == 0]
check(all(("fault", f"latency.{k}.p50") not in t for k in lat_empty),
      f"latencies that recorded nothing are left out ({lat_empty})")
check(t[("fault", "ops_per_s")][-1] == "n<2",
      f"single runs: significance says n<2 {t[('fault', 'ops_per_s')]}")
ops_a = a1["stressors"][0]["ops_per_s"]
ops_b = b1["stressors"][0]["ops_per_s"]
cells = t[("fault", "ops_per_s")]
check(cells[0] == "higher" and abs(float(cells[1]) - ops_a) <= 0.06 + ops_a * 1e-6,
      f"A's mean is its ops_per_s ({cells[1]} vs {ops_a})")
want = (ops_b - ops_a) / ops_a * 100
check(abs(float(cells[5].rstrip("%")) - want) < 0.011, f"change {cells[5]} == {want:+.2f}%")
rate = [k for k, v in a1["stressors"][0]["counters"].items() if v["better"] == "none"]
check(rate and all(t[("fault", f"counters.{k}.per_s")][-1] == "-" for k in rate if k != "ops"),
      "'none' counters are listed, never marked")
check("one run, no rounds (n=1)" in out, "the header says each file is one sample")
# a gate over single runs could never fail: refused, and told how to fix it
rc, out, err = compare(pa, pb, "--threshold", "0")
lines = err.strip().splitlines()
check(rc == 2 and len(lines) == 1 and "--threshold 0%: no metric could be tested" in lines[0]
      and "--rounds N (N >= 2)" in lines[0] and f"[A] {pa}" in lines[0]
      and f"[B] {pb}" in lines[0] and "no significant regression" not in err,
      f"--threshold over single runs: exit 2, one line naming both files and --rounds\n{err}")
check("ops_per_s" in out, "the table is still printed")

# ---- rounds: Welch's test, direction, the gate ------------------------------
runs = [report(f"sample {i}") for i in range(4)]
warm = copy.deepcopy(runs[0])
for s in warm["stressors"]:
    s["ops_per_s"] *= 1000  # a cold first round that must not count
A = with_rounds(runs, warmup=warm)
pA = save("A.json", A)
rc, out, err = compare(pA, pA)
t = rows(out)
check(rc == 0 and "4 rounds (warm-up left out)" in out, f"rounds are the samples\n{out}\n{err}")
check(t[("fault", "ops_per_s")][-1] == "~", "a report against itself: not significant")
mean4 = sum(r["stressors"][0]["ops_per_s"] for r in runs) / 4
check(abs(float(t[("fault", "ops_per_s")][1]) - mean4) <= 0.06 + mean4 * 1e-6,
      f"the mean is over the 4 measured rounds, warm-up out ({t[('fault', 'ops_per_s')][1]} vs {mean4:.1f})")
rc, out, err = compare("--include-warmup", pA, pA)
t = rows(out)
check("5 rounds (warm-up included)" in out and float(t[("fault", "ops_per_s")][1]) > mean4 * 100,
      "--include-warmup counts the warm-up round")


def tame(doc):
    """Real rounds, each metric set to its mean across them +-1.5%: on this shared machine
    short runs spread so widely (cold memory) that no 4-round change is significant, and
    these checks are about the gate and the directions, the statistics have unit tests."""
    d = copy.deepcopy(doc)
    measured = [r for r in d["rounds"] if not r.get("warmup")]
    paths = [("ops_per_s",), ("faults_per_s",)]
    s0 = measured[0]["stressors"][0]
    paths += [("counters", k, "per_s") for k in s0["counters"]]
    paths += [("latency", k, f) for k in s0["latency"] for f in ("mean", "p50", "p99")]

    def ref(s, p):
        for k in p[:-1]:
            s = s[k]
        return s, p[-1]
    for p in paths:
        vals = [ref(r["stressors"][0], p) for r in measured]
        mean = sum(o[k] for o, k in vals) / len(vals)
        for i, (o, k) in enumerate(vals):
            o[k] = mean * (1 + 0.01 * (i - 1.5))
    return d


def slower(s):
    s["ops_per_s"] *= 0.01


def faster_but_noisy_counters(s):
    s["ops_per_s"] *= 100
    for c in s["counters"].values():
        if c["better"] == "none":
            c["per_s"] *= 0.01


def slower_tail(s):
    for v in s["latency"].values():
        v["p99"] *= 100


At = tame(A)
pA = save("A-tame.json", At)
pS = save("slower.json", scaled(At, slower))
rc, out, err = compare(pA, pS)
t = rows(out)
check(rc == 0, f"without --threshold a regression still exits 0\n{err}")
check(t[("fault", "ops_per_s")][-2:] == ["-99.00%", "worse"],
      f"ops_per_s down 99%: significant and worse {t[('fault', 'ops_per_s')]}")
check(t[("fault", "faults_per_s")][-1] == "~", "unchanged metrics: not significant")
rc, out, err = compare(pA, pS, "--threshold", "5")
check(rc == 1 and re.search(r"regression beyond 5%: fault ops_per_s -99\.00%", err),
      f"--threshold 5: a significant 99% slowdown exits 1 and is named\n{err}")
check(len(re.findall(r"regression beyond [0-9]", err)) == 1, "only the changed metric is a regression")
rc, out, err = compare(pA, pS, "--threshold", "99.5")
check(rc == 0, f"--threshold 99.5: the 99% change is within it\n{err}")

pF = save("faster.json", scaled(At, faster_but_noisy_counters))
rc, out, err = compare(pA, pF, "--threshold", "1")
t = rows(out)
check(rc == 0 and t[("fault", "ops_per_s")][-1] == "better",
      f"higher ops_per_s is better, never a regression\n{out}\n{err}")
none_rows = [v for k, v in t.items() if k[1].startswith("counters.") and v[0] == "none"]
check(none_rows and all(v[-1] == "-" for v in none_rows),
      "'none' counters down 99% are never flagged, even under --threshold")

pT = save("tail.json", scaled(At, slower_tail))
rc, out, err = compare(pA, pT, "--threshold", "5")
t = rows(out)
check(rc == 1 and t[("fault", "latency.first_touch.p99")][-1] == "worse" and
      t[("fault", "latency.first_touch.p50")][-1] == "~",
      f"latency p99 up 100x: lower is better, so worse; p50 untouched\n{err}")

rc, out, err = compare(pA, pS, pF)
t = rows(out)
check(rc == 0 and "[C]" in out and t[("fault", "ops_per_s")][-1] == "better" and
      t[("fault", "ops_per_s")][-5] == "worse", f"three reports: a column block each\n{out}")

# part testable: the gate judges what it can and says, in one line, what it could not
rc, out, err = compare(pA, pS, pb, "--threshold", "5")
notes = [ln for ln in err.splitlines() if "could not be tested" in ln]
t = rows(out)
n_untested = sum(1 for v in t.values() if v[-1] == "n<2")
check(rc == 1 and re.search(r"regression beyond 5%: fault ops_per_s -99\.00% in \[B\]", err),
      f"rounds against rounds are still gated: exit 1 on the slowdown\n{err}")
check(len(notes) == 1 and notes[0].startswith("pmdstress compare: note: --threshold 5%: ")
      and f"{n_untested} of " in notes[0] and f"[C] {pb}" in notes[0] and f"[A] {pA}"
      not in notes[0], f"one note: how many could not be tested, and which report ({notes})")
rc, out, err = compare(pA, pA, "--threshold", "5")
check(rc == 0 and "could not be tested" not in err, f"all testable: no note\n{err}")

# ---- a real bench run, if bench mode works here -----------------------------
r = run(base + ["--duration", "250ms", "--rounds", "2", "--hang-timeout", "5s"], timeout=90)
if r.rc == 0 and r.doc and r.doc.get("rounds"):
    pR = save("bench.json", r.doc)
    rc, out, err = compare(pR, pR)
    check(rc == 0 and "2 rounds" in out and rows(out)[("fault", "ops_per_s")][-1] == "~",
          f"a real --rounds report compares over its rounds\n{out}\n{err}")
else:
    skip_part(f"real --rounds check: bench mode did not run clean here (exit {r.rc})")

# ---- incomparable reports ----------------------------------------------------
c6 = report("threads 6", ["--threads", "6"])
p6 = save("t6.json", c6)
rc, out, err = compare(pa, p6)
check(rc == 2 and "option threads is '6'" in err and "--force" in err and not out,
      f"different --threads: refused, exit 2\n{err}")
rc, out, err = compare(pa, p6, "--force")
check(rc == 0 and "warning:" in err and "ops_per_s" in out, f"--force compares anyway\n{err}")
# options that do not change what is measured: a 3-round report against a 2-round one
d = copy.deepcopy(a1)
d["options"]["global"].update({"rounds": "3", "warmup": "off", "interval": "250ms",
                               "hang-timeout": "5s", "quiet": "off", "progress": "line",
                               "json": "/elsewhere.json", "jsonl": "x.jsonl", "ktap": "-"})
rc, out, err = compare(pa, save("free.json", d))
check(rc == 0 and "not comparable" not in err and "ops_per_s" in out,
      f"rounds, warmup, interval, hang-timeout and the outputs may differ\n{err}")
for opt, val in (("size", "32M"), ("verify", "off"), ("thp", "nohuge")):
    d = copy.deepcopy(a1)
    d["options"]["global"][opt] = val
    rc, out, err = compare(pa, save(f"opt-{opt}.json", d))
    check(rc == 2 and f"option {opt} is '{val}'" in err,
          f"--{opt} shapes the workload: still refused\n{err}")
d = copy.deepcopy(a1)
d["scenario"] = "soak"
rc, out, err = compare(pa, save("soak.json", d))
check(rc == 2 and "scenario 'soak'" in err, f"different scenario: refused\n{err}")
d = copy.deepcopy(a1)
d["options"]["stressors"]["fault"]["order"] = "forward-test"
rc, out, err = compare(pa, save("order.json", d))
check(rc == 2 and "option fault.order" in err, f"different stressor option: refused\n{err}")
d = copy.deepcopy(a1)
d["stressors"][0]["name"] = "other"
rc, out, err = compare(pa, save("set.json", d))
check(rc == 2 and "stressors other differ" in err, f"different stressor set: refused\n{err}")

# ---- broken files: one line, the file and the field, exit 2 -----------------
good = json.dumps(a1, indent=2)
cases = []


def mutate(name, fn, indent=None):
    d = copy.deepcopy(a1)
    fn(d)
    cases.append((name, json.dumps(d, indent=indent)))


cases.append(("truncated", good[: len(good) // 2]))
cases.append(("empty", ""))
cases.append(("text", "this is not json\n"))
cases.append(("array", "[1, 2, 3]"))
cases.append(("duplicate-key", '{"schema": "pmdstress-report", "schema": "x"}'))
mutate("no-schema", lambda d: d.pop("schema"))
mutate("other-schema", lambda d: d.update(schema="fio-report"))
mutate("version-2", lambda d: d.update(schema_version=2))
mutate("version-text", lambda d: d.update(schema_version="1"))
mutate("no-stressors", lambda d: d.pop("stressors"))
mutate("no-options", lambda d: d.pop("options"))
mutate("option-number", lambda d: d["options"]["global"].update(threads=4), indent=2)
mutate("p99-text", lambda d: d["stressors"][0]["latency"]["first_touch"].update(p99="fast"))
mutate("no-ops", lambda d: d["stressors"][0].pop("ops_per_s"))
mutate("better-bad", lambda d: d["stressors"][0]["counters"]["rounds"].update(better="up"))
mutate("status-bad", lambda d: d["stressors"][0].update(status="maybe"))
mutate("stressor-list", lambda d: d["stressors"].append(7))
mutate("rounds-object", lambda d: d.update(rounds={"index": 0}))
mutate("round-warmup", lambda d: d.update(rounds=[{"index": 0, "warmup": "yes",
                                                   "stressors": d["stressors"]}]))
mutate("round-no-index", lambda d: d.update(rounds=[{"stressors": d["stressors"]}]))
expect = {
    "truncated": "truncated", "empty": "not valid JSON", "text": "not valid JSON",
    "array": "not a pmdstress report", "duplicate-key": "not valid JSON",
    "no-schema": "not a pmdstress report", "other-schema": "not a pmdstress report",
    "version-2": "schema_version: version 2", "version-text": "schema_version: expected an integer",
    "no-stressors": "stressors: missing", "no-options": "options: missing",
    "option-number": ":LINE: options.global.threads: expected a string",
    "p99-text": "stressors[0].latency.first_touch.p99: expected a number, found a string",
    "no-ops": "stressors[0].ops_per_s: missing",
    "better-bad": "stressors[0].counters.rounds: better: 'up'",
    "status-bad": "stressors[0]: status: 'maybe'",
    "stressor-list": "stressors[1]: expected an object",
    "rounds-object": "rounds: expected an array",
    "round-warmup": "warmup: expected true or false",
    "round-no-index": "rounds[0].index: missing",
}
for name, text in cases:
    path = os.path.join(tmp, f"bad-{name}.json")
    with open(path, "w") as f:
        f.write(text)
    want = expect[name]
    if ":LINE:" in want:
        # the line the value is on, as the INI reader names one
        tl = text.splitlines()
        g = [i for i, ln in enumerate(tl) if ln.strip() == '"global": {']
        at = [i + 1 for i, ln in enumerate(tl)
              if g and i > g[0] and ln.strip().rstrip(",") == '"threads": 4'][:1]
        check(len(g) == 1 and at, f"{name}: the mutated value's line found ({g}, {at})")
        at = at[0] if at else 0
        want = want.replace(":LINE:", f"{path}:{at}:")
    for order in ((pa, path), (path, pa)):
        rc, out, err = compare(*order)
        lines = err.strip().splitlines()
        check(rc == 2 and len(lines) == 1 and path in lines[0] and want in lines[0]
              and not out,
              f"{name} ({'B' if order[0] == pa else 'A'}): exit 2, one line '{err.strip()}'")

# an unknown schema version is refused even with --force, and the error says so
path = os.path.join(tmp, "bad-version-2.json")
rc, out, err = compare(pa, path, "--force")
check(rc == 2 and "schema_version: version 2" in err and
      "--force does not apply to schema versions" in err and not out,
      f"version 2 with --force: still exit 2, and why ({err.strip()})")

# the hand-made files kept with the tests
bad_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bad")
for f in sorted(x for x in os.listdir(bad_dir) if x.endswith(".json")):
    path = os.path.join(bad_dir, f)
    rc, out, err = compare(pa, path)
    lines = err.strip().splitlines()
    check(rc == 2 and len(lines) == 1 and path in lines[0],
          f"tests/results/bad/{f}: exit 2, one line '{err.strip()}'")

rc, out, err = compare(pa, os.path.join(tmp, "missing.json"))
check(rc == 2 and "cannot open" in err, f"a missing file: exit 2 ({err.strip()})")
rc, out, err = compare(pa, tmp)
check(rc == 2 and "not a regular file" in err, f"a directory: exit 2 ({err.strip()})")
rc, out, err = compare(pa)
check(rc == 2 and "at least two" in err, f"one report: usage error ({err.strip().splitlines()[0]})")
rc, out, err = compare(pa, pb, "--threshold", "lots")
check(rc == 2 and "--threshold: invalid value 'lots'" in err, f"bad threshold: exit 2 ({err.strip()})")
rc, out, err = compare(pa, pb, "--thresold", "5")
check(rc == 2 and "unknown option --thresold" in err, f"unknown option: exit 2 ({err.strip()})")
rc, out, err = compare("--help")
check(rc == 0 and "Welch" in out and "usage: pmdstress compare" in out, "compare --help")

shutil.rmtree(tmp, ignore_errors=True)
done()
