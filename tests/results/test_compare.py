#!/usr/bin/env python3
# labels: e2e results
# timeout: 240
"""pmdstress compare on real reports: the table (headline figures by default,
every figure with --all, units on every value), n<2 for single runs, Welch
significance over rounds with Holm's correction, direction (higher/lower/
none), the --threshold gate on the headline figures only (exit 1 only for a
significant change for the worse beyond it; exit 2 when nothing could be
tested, a note when part could not), --gate, sides of several reports (one
sample per report), the 2023 table of mmap_anon_test, warm-up rounds left
out, refusal of incomparable reports unless --force, and one clear line
with exit 2 for every kind of broken file."""
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
    """{(stressor, metric): [better, A mean, A stddev, B mean, B stddev, p, change, sig, ...]}
    from the table (a '*' marking a gated figure under --all is dropped)."""
    table, stressor = {}, None
    for ln in out.splitlines():
        if re.match(r"^[a-z]\w*\s+\[A\] mean", ln):
            stressor = ln.split()[0]
        elif stressor and re.match(r"^  [ *] (ops_per_s|faults_per_s|faults|counters\.|latency\.|"
                                   r"race\.|collided|seed_race|rounds)", ln):
            cells = ln[4:].split()
            table[(stressor, cells[0])] = cells[1:]
    return table


def gated(out):
    """The figures marked '*' (gated) in an --all table."""
    return {ln[4:].split()[0] for ln in out.splitlines() if ln.startswith("  * ")}


UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9, "K/s": 1e3, "M/s": 1e6, "G/s": 1e9, "/s": 1,
         "K": 1e3, "M": 1e6, "G": 1e9, "": 1}


def num(cell):
    """A value as printed, 664.5K/s or 2.274us (in ns), back to a number."""
    m = re.fullmatch(r"(-?[0-9.]+)(ns|us|ms|s|K/s|M/s|G/s|/s|K|M|G|)", cell)
    if not m:
        raise ValueError(f"not a value with a unit: {cell!r}")
    return float(m.group(1)) * UNITS[m.group(2)]


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
RACE = {("race", "collided_per_s"), ("race", "seed_race_per_s")}
check(all(isinstance(a1.get("race", {}).get(k), (int, float)) for k in
          ("seed_race", "collided", "collided_per_s", "seed_race_per_s")),
      f"the report's top-level race object has the figures compare reads ({a1.get('race')})")
check(set(t) == RACE,
      f"by default only the headlines: the race object's collided and seed-race rounds/s\n{out}")
hidden = re.search(r"the (\d+) others: a second family, not gated \(--all shows them\)", out)
rc, out, err = compare(pa, pb, "--all")
t = rows(out)
check(hidden and int(hidden.group(1)) == len(t) - 2,
      f"the short table says how many figures --all adds ({hidden and hidden.group(0)}, {len(t)})")
check(gated(out) == {"collided_per_s", "seed_race_per_s"},
      f"--all marks the gated figures * ({gated(out)})")
check(("fault", "ops_per_s") in t and ("fault", "faults_per_s") in t,
      f"ops_per_s and faults_per_s rows\n{out}")
check(any(k[1].startswith("counters.") and k[1].endswith(".per_s") for k in t),
      "every counter's per_s has a row")
check(all(("fault", f"latency.first_touch.{q}") in t for q in ("mean", "p50", "p99")),
      "each latency's mean, p50 and p99 have rows")
check(all(("fault", f"latency.window.{q}") in t for q in ("total", "per_fault")) and
      ("fault", "faults") in t, "the bench latency's cost time and time per fault, and faults")
check(("fault", "counters.ops.per_s") not in t, "counter 'ops' is not listed twice")
lat_empty = [k for k, v in a1["stressors"][0]["latency"].items() if v["count"] == 0]
check(all(("fault", f"latency.{k}.p50") not in t for k in lat_empty),
      f"latencies that recorded nothing are left out ({lat_empty})")
check(t[("fault", "ops_per_s")][-1] == "n<2",
      f"single runs: significance says n<2 {t[('fault', 'ops_per_s')]}")
ops_a = a1["stressors"][0]["ops_per_s"]
ops_b = b1["stressors"][0]["ops_per_s"]
cells = t[("fault", "ops_per_s")]
check(cells[0] == "higher" and cells[1].endswith("/s") and
      abs(num(cells[1]) - ops_a) <= ops_a * 6e-4,
      f"A's mean is its ops_per_s, with its unit ({cells[1]} vs {ops_a})")
lat = a1["stressors"][0]["latency"]["first_touch"]["mean"]
cell = t[("fault", "latency.first_touch.mean")][1]
check(re.fullmatch(r"[0-9.]+(ns|us|ms|s)", cell) and abs(num(cell) - lat) <= lat * 6e-4,
      f"a latency is printed in ns/us/ms ({cell} vs {lat} ns)")
win = a1["stressors"][0]["latency"]["window"]
cell = t[("fault", "latency.window.per_fault")][1]
want = win["mean"] * win["count"] / a1["stressors"][0]["faults"]
check(abs(num(cell) - want) <= want * 6e-4, f"time per fault = window sum / faults ({cell}, {want})")
want = (ops_b - ops_a) / ops_a * 100
check(abs(float(cells[6].rstrip("%")) - want) < 0.011, f"change {cells[6]} == {want:+.2f}%")
rate = [k for k, v in a1["stressors"][0]["counters"].items() if v["better"] == "none"]
check(rate and all(t[("fault", f"counters.{k}.per_s")][-1] == "-" for k in rate if k != "ops"),
      "'none' counters are listed, never marked")
check("one run, no rounds (n=1)" in out, "the header says each file is one sample")
# a gate over single runs could never fail: refused, and told how to fix it
rc, out, err = compare(pa, pb, "--threshold", "0")
lines = err.strip().splitlines()
check(rc == 2 and len(lines) == 1 and "--threshold 0%: no gated figure could be tested" in lines[0]
      and "--rounds N (N >= 2)" in lines[0] and f"[A] {pa}" in lines[0]
      and f"[B] {pb}" in lines[0] and "no significant regression" not in err,
      f"--threshold over single runs: exit 2, one line naming both files and --rounds\n{err}")
check("seed_race_per_s" in out, "the table is still printed")

# ---- rounds: Welch's test, direction, the gate ------------------------------
runs = [report(f"sample {i}") for i in range(4)]
warm = copy.deepcopy(runs[0])
for s in warm["stressors"]:
    s["ops_per_s"] *= 1000  # a cold first round that must not count
A = with_rounds(runs, warmup=warm)
pA = save("A.json", A)
rc, out, err = compare(pA, pA, "--all")
t = rows(out)
check(rc == 0 and "4 rounds (warm-up left out)" in out, f"rounds are the samples\n{out}\n{err}")
check(t[("fault", "ops_per_s")][-1] == "~", "a report against itself: not significant")
check("rounds of one run a side" in out and "several runs a side" in out,
      "one report a side: a note that rounds do not see run-to-run drift")
mean4 = sum(r["stressors"][0]["ops_per_s"] for r in runs) / 4
check(abs(num(t[("fault", "ops_per_s")][1]) - mean4) <= mean4 * 6e-4,
      f"the mean is over the 4 measured rounds, warm-up out ({t[('fault', 'ops_per_s')][1]} vs {mean4:.1f})")
rc, out, err = compare("--include-warmup", "--all", pA, pA)
t = rows(out)
mean5 = (mean4 * 4 + warm["stressors"][0]["ops_per_s"]) / 5
check("5 rounds (warm-up included)" in out and
      abs(num(t[("fault", "ops_per_s")][1]) - mean5) <= mean5 * 6e-4,
      f"--include-warmup counts the warm-up round ({t.get(('fault', 'ops_per_s'))})")


def tame(doc):
    """Real rounds, each metric set to its mean across them +-1.5%: on this shared machine
    short runs spread so widely (cold memory) that no 4-round change is significant, and
    these checks are about the gate and the directions, the statistics have unit tests."""
    d = copy.deepcopy(doc)
    measured = [r for r in d["rounds"] if not r.get("warmup")]
    paths = [("ops_per_s",), ("faults_per_s",), ("race", "collided_per_s")]
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


def fewer_races(s):
    s["race"]["collided_per_s"] *= 0.5


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
rc, out, err = compare(pA, pS, "--all")
t = rows(out)
check(rc == 0, f"without --threshold a regression still exits 0\n{err}")
check(t[("fault", "ops_per_s")][-2:] == ["-99.00%", "worse"],
      f"ops_per_s down 99%: significant and worse {t[('fault', 'ops_per_s')]}")
check(t[("fault", "faults_per_s")][-1] == "~", "unchanged metrics: not significant")
rc, out, err = compare(pA, pS, "--threshold", "5")
check(rc == 0 and "no significant regression" in err,
      f"ops_per_s is not a headline of the race: shown with --all, never gated\n{err}")
pR = save("fewer.json", scaled(At, fewer_races))
rc, out, err = compare(pA, pR, "--threshold", "5")
check(rc == 1 and re.search(r"regression beyond 5%: fault race\.collided_per_s -50\.00% in \[B\] "
                            r"\(p=[0-9.e-]+, Holm-adjusted\)", err),
      f"--threshold 5: the headline down 50% exits 1 and is named\n{err}")
rc, out, err = compare(pA, pS, "--threshold", "5", "--gate", "fault.ops_per_s")
check(rc == 1 and re.search(r"regression beyond 5%: fault ops_per_s -99\.00%", err),
      f"--gate fault.ops_per_s: the 99% slowdown exits 1 and is named\n{err}")
check(len(re.findall(r"regression beyond [0-9]", err)) == 1, "only the changed metric is a regression")
rc, out, err = compare(pA, pS, "--threshold", "99.5", "--gate", "fault.ops_per_s")
check(rc == 0, f"--threshold 99.5: the 99% change is within it\n{err}")
rc, out, err = compare(pA, pS, "--gate", "fault.ops_per_s,fault.latency.first_touch.p99")
check(rc == 0 and set(rows(out)) == {("fault", "ops_per_s"), ("fault", "latency.first_touch.p99")}
      and "gated: 2 figures (named by --gate)" in out,
      f"--gate names the figures shown and gated\n{out}")
rc, out, err = compare(pA, pS, "--gate", "fault.ops_per_sec")
check(rc == 2 and len(err.strip().splitlines()) == 1 and "--gate: no figure 'fault.ops_per_sec'"
      in err and not out, f"--gate with a name no report has: one line, exit 2\n{err}")

pF = save("faster.json", scaled(At, faster_but_noisy_counters))
rc, out, err = compare(pA, pF, "--threshold", "1", "--all", "--gate", "fault.ops_per_s")
t = rows(out)
check(rc == 0 and t[("fault", "ops_per_s")][-1] == "better",
      f"higher ops_per_s is better, never a regression\n{out}\n{err}")
none_rows = [v for k, v in t.items() if k[1].startswith("counters.") and v[0] == "none"]
check(none_rows and all(v[-1] == "-" for v in none_rows),
      "'none' counters down 99% are never flagged, even under --threshold")

pT = save("tail.json", scaled(At, slower_tail))
rc, out, err = compare(pA, pT, "--threshold", "5", "--all")
t = rows(out)
check(rc == 0 and t[("fault", "latency.first_touch.p99")][-1] == "worse" and
      t[("fault", "latency.first_touch.p50")][-1] == "~",
      f"latency p99 up 100x: worse (lower is better), but not gated; p50 untouched\n{err}")
rc, out, err = compare(pA, pT, "--threshold", "5", "--gate", "fault.latency.first_touch.p99")
check(rc == 1, f"... and exit 1 when --gate names it\n{err}")

rc, out, err = compare(pA, pS, pF, "--all")
t = rows(out)
check(rc == 0 and "[C]" in out and t[("fault", "ops_per_s")][-1] == "better" and
      t[("fault", "ops_per_s")][-6] == "worse", f"three reports: a column block each\n{out}")

# part testable: the gate judges what it can and says, in one line, what it could not
rc, out, err = compare(pA, pR, pb, "--threshold", "5")
notes = [ln for ln in err.splitlines() if "could not be tested" in ln]
t = rows(out)
n_untested = sum(1 for v in t.values() if v[-1] == "n<2")
check(rc == 1 and re.search(r"regression beyond 5%: fault race\.collided_per_s -50\.00% in \[B\]", err),
      f"rounds against rounds are still gated: exit 1 on the slowdown\n{err}")
check(len(notes) == 1 and notes[0].startswith("pmdstress compare: note: --threshold 5%: ")
      and f"{n_untested} of " in notes[0] and f"[C] {pb}" in notes[0] and f"[A] {pA}"
      not in notes[0], f"one note: how many could not be tested, and which report ({notes})")
rc, out, err = compare(pA, pA, "--threshold", "5")
check(rc == 0 and "could not be tested" not in err, f"all testable: no note\n{err}")

# ---- the run's "race" object (the lead's collided and seed-race rates) ----------
def with_race(doc, per_round, seed_scale=1.0):
    d = copy.deepcopy(doc)
    d["race"] = {"rounds": 400, "collided": 200, "seed_race": 8, "rounds_per_s": 100.0,
                 "collided_per_s": 50.0, "seed_race_per_s": 2.0 * seed_scale}
    if per_round:
        for k, r in enumerate(x for x in d["rounds"] if not x.get("warmup")):
            r["race"] = {"rounds": 100, "collided": 50, "seed_race": 2,
                         "collided_per_s": 50.0 + k, "seed_race_per_s": (2.0 + 0.1 * k) * seed_scale}
    return d


rc, out, err = compare(save("race-run.json", with_race(At, False)),
                       save("race-run2.json", with_race(At, False)), "--all")
check(gated(out) == {"race.collided_per_s"} and "collided_per_s" in out and
      "seed_race_per_s" in out,
      f"a run-level race object only: one sample a side, so the fault stressor's per-round "
      f"collided rate is gated; the race rates are shown\n{out}")
ra, rb = with_race(At, True), with_race(At, True, seed_scale=0.5)
rc, out, err = compare(save("race-a.json", ra), save("race-b.json", rb), "--threshold", "5")
t = rows(out)
check(rc == 1 and set(t) == {("race", "collided_per_s"), ("race", "seed_race_per_s")} and
      t[("race", "seed_race_per_s")][-2:] == ["-50.00%", "worse"] and
      t[("race", "collided_per_s")][-1] == "~",
      f"a race object in every round: collided and seed-race rounds/s are the headlines; "
      f"seed races halved: worse, exit 1\n{out}\n{err}")

# ---- main's reports: the top-level race object, one sample per report -------------
def tame_races(docs, scale=1.0):
    """Copies of real round-less reports, their race rates set to the rates' mean +-1%
    (scaled): the real object, its figures steadied as tame() steadies rounds."""
    out = [copy.deepcopy(d) for d in docs]
    for k in ("rounds_per_s", "collided_per_s", "seed_race_per_s"):
        mean = sum(d["race"][k] for d in docs) / len(docs) or 1.0
        for i, d in enumerate(out):
            d["race"][k] = mean * (1 + 0.01 * (i - 1)) * (scale if k == "seed_race_per_s" else 1)
    return out


ra3 = [save(f"race3-a{i}.json", d) for i, d in enumerate(tame_races(runs[:3]))]
rb3 = [save(f"race3-b{i}.json", d) for i, d in enumerate(tame_races(runs[:3], 0.5))]
rn3 = list(reversed(ra3))
rc, out, err = compare(",".join(ra3), ",".join(rb3), "--threshold", "5")
t = rows(out)
check(rc == 1 and set(t) == RACE and t[("race", "seed_race_per_s")][-2:] == ["-50.00%", "worse"]
      and t[("race", "collided_per_s")][-1] == "~" and
      re.search(r"regression beyond 5%: race seed_race_per_s -50\.00% in \[B\]", err),
      f"three reports a side: the race object's rates are the headlines; seed races halved: "
      f"worse, exit 1\n{out}\n{err}")
rc, out, err = compare(",".join(ra3), ",".join(rn3), "--threshold", "5")
check(rc == 0 and set(rows(out)) == RACE and "no significant regression" in err,
      f"... and the same figures in another order pass, exit 0\n{out}\n{err}")

# ---- Holm: many figures tested at once do not make a false alarm likely -------
# 40 copies of one noisy figure, each B shifted by a p of about 0.01 alone: without a
# correction every one is "worse"; with Holm over 40, none is.
d = copy.deepcopy(At)
for r in d["rounds"]:
    for s in r["stressors"]:
        for i in range(40):
            s["counters"][f"noise{i}"] = {"better": "higher", "total": 1, "per_s": 100.0}
vals = [100, 104, 96, 100]
k = 0
for r in d["rounds"]:
    if r.get("warmup"):
        continue
    for s in r["stressors"]:
        for i in range(40):
            s["counters"][f"noise{i}"]["per_s"] = vals[k]
    k += 1
e = copy.deepcopy(d)
for r in e["rounds"]:
    for s in r["stressors"]:
        for i in range(40):
            s["counters"][f"noise{i}"]["per_s"] -= 8.2
rc, out, err = compare(save("noise-a.json", d), save("noise-b.json", e), "--all")
t = rows(out)
ps = [float(t[("fault", f"counters.noise{i}.per_s")][5]) for i in range(40)]
check(all(t[("fault", f"counters.noise{i}.per_s")][-1] == "~" for i in range(40)) and
      all(p >= 0.05 for p in ps),
      f"40 figures each at p~0.01: Holm-adjusted p >= 0.05, none marked ({ps[:3]}...)")
rc, out, err = compare(save("noise-a.json", d), save("noise-b.json", e), "--all",
                       "--gate", "fault.counters.noise0.per_s")
t = rows(out)
check(t[("fault", "counters.noise0.per_s")][-1] == "worse" and
      float(t[("fault", "counters.noise0.per_s")][5]) < 0.05,
      f"the same figure gated alone (a family of one) is worse "
      f"({t[('fault', 'counters.noise0.per_s')]})")

# ---- a real bench run, if bench mode works here -----------------------------
r = run(base + ["--duration", "250ms", "--rounds", "2", "--hang-timeout", "5s"], timeout=90)
if r.rc == 0 and r.doc and r.doc.get("rounds"):
    pR2 = save("bench.json", r.doc)
    rc, out, err = compare(pR2, pR2, "--all")
    check(rc == 0 and "2 rounds" in out and rows(out)[("fault", "ops_per_s")][-1] == "~",
          f"a real --rounds report compares over its rounds\n{out}\n{err}")
else:
    skip_part(f"real --rounds check: bench mode did not run clean here (exit {r.rc})")

# ---- sides of several reports: one sample per report --------------------------
mm = ["--config", "mmap_anon_test", "--size", "16M", "--rounds", "3", "--progress", "off",
      "--quiet"]
mdocs = []
for i in range(4):
    r = run(mm + ["--seed", str(i + 1)], timeout=120)
    if not (r.rc == 0 and r.doc):
        fail(f"mmap_anon_test run {i}: exit {r.rc}\n{r.show()}")
    mdocs.append(r.doc)
mp = [save(f"mm{i}.json", d) for i, d in enumerate(mdocs)]
rc, out, err = compare(f"{mp[0]},{mp[1]}", f"{mp[2]},{mp[3]}")
t = rows(out)
check(rc == 0 and "samples: one per report" in out and "2 reports (6 rounds)" in out,
      f"sides joined by commas: one sample per report\n{out}\n{err}")
check(set(t) == {("fault", "latency.window.per_fault")},
      f"mmap_anon_test's headline: time per fault\n{out}")


def per_fault(doc):
    """A report's mean over its measured rounds of window sum / faults."""
    v = [s["latency"]["window"]["mean"] * s["latency"]["window"]["count"] / s["faults"]
         for r in doc["rounds"] if not r["warmup"] for s in r["stressors"]]
    return sum(v) / len(v)


pf = [per_fault(d) for d in mdocs]
cells = t[("fault", "latency.window.per_fault")]
want_a = (pf[0] + pf[1]) / 2
check(abs(num(cells[1]) - want_a) <= want_a * 6e-4,
      f"[A]'s mean is the mean of its two reports' means ({cells[1]}, {want_a:.1f} ns)")
sd_a = abs(pf[0] - pf[1]) / 2 ** 0.5
check(abs(num(cells[2]) - sd_a) <= sd_a * 6e-4 + 0.01,
      f"[A]'s stddev is across the reports' means, n=2 ({cells[2]}, {sd_a:.2f} ns)")
seed = out[out.index("the 2023 table"):].splitlines()
check(re.search(r"cost time\s+faults\s+ns/fault", seed[1]) and seed[2].startswith("1 ") and
      seed[3].startswith("2 ") and seed[4].startswith("average"),
      f"the 2023 table: a line per report and the average\n" + "\n".join(seed[:6]))
cols = seed[2].split()
nf = [s["faults"] for r in mdocs[0]["rounds"] if not r["warmup"] for s in r["stressors"]]
check(abs(float(cols[2]) - sum(nf) / len(nf)) <= 0.5 and abs(float(cols[3]) - pf[0]) < 0.06,
      f"its first line: report 1's mean faults and ns/fault ({cols}, {nf}, {pf[0]:.1f})")
rc, out, err = compare(f"{mp[0]},{mp[1]}", f"{mp[2]},{mp[3]}", "--threshold", "0")
check(rc in (0, 1) and ("no significant regression" in err or "regression beyond" in err),
      f"sides of reports are gated\n{err}")
rc, out, err = compare(f"{mp[0]},{mp[1]}", mp[2], "--threshold", "0")
check(rc == 2 and "no gated figure could be tested" in err,
      f"one report against several: per report, that side has n=1: exit 2\n{err}")
# a side of reports of two kinds: each kind is compared with its own, one family
mixed_a, mixed_b = f"{mp[0]},{mp[1]},{pa},{pA}", f"{mp[2]},{mp[3]},{pb},{pA}"
rc, out, err = compare(mixed_a, mixed_b, "--all")
check(rc == 0 and "== mmap_anon_test: fault ==" in out and "== race: fault ==" in out and
      gated(out) == {"latency.window.per_fault", "collided_per_s", "seed_race_per_s"},
      f"two kinds, sections of their own, each one's headlines gated (the race kind: two "
      f"reports a side, so the race object's rates are tested across them)\n{out}\n{err}")
rc, out, err = compare(f"{mp[0]},{mp[1]},{pa}", f"{mp[2]},{mp[3]}")
check(rc == 2 and "[B] has no report of scenario race" in err,
      f"a kind one side lacks: not comparable\n{err}")
# aim9: one report per test and boot; the 2011 table in mmtests' layout
adocs = {}
for side in "ab":
    for i in range(2):
        for test in ("page", "fork"):
            r = run(["--config", "aim9", "--stressors", test, "--single-thread", "--duration",
                     "200ms", "--rounds", "2", "--progress", "off", "--quiet"], timeout=120)
            if not (r.rc == 0 and r.doc):
                fail(f"aim9 {test} run: exit {r.rc}\n{r.show()}")
            adocs.setdefault(side, []).append(save(f"aim9-{side}{i}-{test}.json", r.doc))
rc, out, err = compare(",".join(adocs["a"]), ",".join(adocs["b"]))
table = out[out.index("aim9, the 2011 table"):].splitlines() if "the 2011 table" in out else []
check(rc == 0 and len(table) >= 6 and re.match(r"^Mean   page_test +[0-9.]+ \( \+0\.00%\) +"
                                               r"[0-9.]+ \( *[+-][0-9.]+%\) p [0-9.e+-]+ +(~|better|worse)",
                                               table[2])
      and table[3].startswith("Stddev page_test") and table[4].startswith("Mean   fork_test"),
      f"aim9: the 2011 table, Mean and Stddev per test, change and mark\n{out}")
check("== aim9" not in out and "gated: 2 figures" in out,
      "the table stands for the aim9 sections; page and fork ops/s are the gated figures")

rc, out, err = compare(f"{mp[0]},", mp[1])
check(rc == 2 and "an empty report name" in err and len(err.strip().splitlines()) == 1,
      f"a trailing comma: one line, exit 2\n{err}")

# ---- incomparable reports ----------------------------------------------------
c6 = report("threads 6", ["--threads", "6"])
p6 = save("t6.json", c6)
rc, out, err = compare(pa, p6)
check(rc == 2 and "option threads is '6'" in err and "--force" in err and not out,
      f"different --threads: refused, exit 2\n{err}")
rc, out, err = compare(pa, p6, "--force")
check(rc == 0 and "warning:" in err and "seed_race_per_s" in out,
      f"--force compares anyway\n{err}")
# options that do not change what is measured: a 3-round report against a 2-round one
d = copy.deepcopy(a1)
d["options"]["global"].update({"rounds": "3", "warmup": "off", "interval": "250ms",
                               "hang-timeout": "5s", "quiet": "off", "progress": "line",
                               "json": "/elsewhere.json", "jsonl": "x.jsonl", "ktap": "-"})
rc, out, err = compare(pa, save("free.json", d))
check(rc == 0 and "not comparable" not in err and "seed_race_per_s" in out,
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
mutate("race-number", lambda d: d.update(race=5))
mutate("race-rate-text", lambda d: d.update(race={"rounds": 3, "collided_per_s": "many"}))
mutate("stressor-race-text",
       lambda d: d["stressors"][0].update(race={"rounds": 1, "collided_per_s": "x"}))
mutate("faults-text", lambda d: d["stressors"][0].update(faults="lots"))
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
    "race-number": "race: expected an object",
    "race-rate-text": "race.collided_per_s: expected a number, found a string",
    "stressor-race-text": "stressors[0].race.collided_per_s: expected a number",
    "faults-text": "stressors[0].faults: expected a number",
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
