#!/usr/bin/env python3
# labels: e2e results
# timeout: 300
"""A/A: compare's gate must not flag one binary against itself.

Pairs of real runs of one binary, seed and scenario, each pair judged by
`compare --threshold 5`. The gate looks at the scenario's headline figures
with Holm's correction, so a pair is flagged (exit 1) only when a headline
is significantly worse by more than 5%. The race pairs are what a new user
does: one report a side, its rounds the samples. The mmap_anon_test pairs
are what the README says to do for a gate: two runs a side, interleaved
(a1 b1 a2 b2), one sample per run, so that run-to-run drift is in the test
(one report a side of this loop is judged by rounds that share one arena,
which scatter far less than runs on a loaded machine do). The long version
(tests/results/test_compare_aa_long.py, label ab) runs the issue's 20 pairs
of the default race. Here a few short pairs of each, at most one flagged
(the gate's false-alarm rate is at most 5% a pair; two in a handful would be
the uncorrected gate again).

PMD_AA_PAIRS sets the number of pairs per scenario (default 4).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, check, done, fail, run  # noqa: E402

PAIRS = int(os.environ.get("PMD_AA_PAIRS", "4"))
tmp = tempfile.mkdtemp(prefix="pmdaa-")
# name: (runs a side, arguments)
SCENARIOS = {
    "race": (1, ["--threads", "8", "--duration", "500ms", "--rounds", "3", "--seed", "5"]),
    "mmap_anon_test": (2, ["--config", "mmap_anon_test", "--size", "32M", "--rounds", "5",
                           "--seed", "5"]),
}


def one(name, i, side, args):
    r = run(args + ["--progress", "off", "--quiet"], timeout=120)
    if r.rc != 0:
        print(f"# {name} {i}{side}: the run was not clean (exit {r.rc}), once more")
        r = run(args + ["--progress", "off", "--quiet"], timeout=120)
    if not (r.rc == 0 and r.doc):
        fail(f"{name} {i}{side}: no clean run to compare (exit {r.rc})\n{r.show()}")
    path = os.path.join(tmp, f"{name}-{i}{side}.json")
    with open(path, "w") as f:
        json.dump(r.doc, f)
    return path


for name, (per_side, args) in SCENARIOS.items():
    flagged, lines = 0, []
    for i in range(PAIRS):
        a, b = [], []
        for k in range(per_side):
            a.append(one(name, i, f"a{k}", args))
            b.append(one(name, i, f"b{k}", args))
        p = subprocess.run([PMDSTRESS, "compare", ",".join(a), ",".join(b), "--threshold", "5"],
                           capture_output=True, text=True, timeout=60)
        if p.returncode not in (0, 1):
            fail(f"{name} pair {i}: compare exit {p.returncode}\n{p.stdout}\n{p.stderr}")
        flagged += p.returncode == 1
        lines.append(f"pair {i}: exit {p.returncode}: " +
                     " | ".join(ln.strip() for ln in p.stdout.splitlines()
                                if ln.startswith("    ") or ln.startswith("  * ")))
    print("\n".join(f"# {name} {ln}" for ln in lines))
    check(flagged <= 1, f"{name}: A/A flagged in {flagged} of {PAIRS} pairs (at most 1)")
shutil.rmtree(tmp, ignore_errors=True)
done()
