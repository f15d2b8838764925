#!/usr/bin/env python3
# labels: mutants
# timeout: 5400
"""The kernel mutant suite (opt-in: ctest -L mutants; CI runs it as its own
job, see .ci/run). tools/vm/mutants/run builds the baseline guest kernel and
the nine mutants (a clean kernel build is 8-13 minutes on a 2-CPU machine,
each mutant ~20 s after it), boots each in the 2-node TCG guest and runs
every mutant's pmdstress scenario on its mutant and on the baseline, and the
closest stress-ng stressors the same way. Fails if the baseline is not clean
under pmdstress in any scenario, or if pmdstress misses a mutant. Skips (77)
where no guest can run (exit 125: no qemu, kernels cannot be built)."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import BUILD_DIR, PMDSTRESS, SOURCE_DIR, check, done, skip  # noqa: E402

RUN = os.path.join(SOURCE_DIR, "tools", "vm", "mutants", "run")
BINARY = os.path.abspath(PMDSTRESS)

if not os.access(BINARY, os.X_OK):
    skip(f"no pmdstress binary at {BINARY}")
out = os.path.join(BUILD_DIR, "vm", "mutants")
report = os.path.join(BUILD_DIR, "vm", "mutants.json")
table = os.path.join(BUILD_DIR, "vm", "mutants.md")
if os.path.exists(report):
    os.unlink(report)
tools = os.environ.get("PMD_MUTANT_TOOLS", "pmdstress,stress-ng")
if "stress-ng" in tools and not any(os.access(os.path.join(d, "stress-ng"), os.X_OK)
                                    for d in os.environ.get("PATH", "").split(":")):
    tools = "pmdstress"
    print("# stress-ng not installed: pmdstress only")
p = subprocess.run([RUN, "--pmdstress", BINARY, "--tools", tools, "--out", out, "--json", report,
                    "--markdown", table], capture_output=True, text=True, errors="replace",
                   stdin=subprocess.DEVNULL, timeout=5300)
print(p.stdout)
if p.returncode == 125:
    skip("no guest can run here: " + (p.stderr.strip().splitlines() or ["exit 125"])[-1])
if not check(os.path.exists(report), f"the runner wrote its report (exit {p.returncode})"):
    print(p.stderr[-4000:])
    done()
with open(report) as f:
    doc = json.load(f)
base = doc["baseline"].get("pmdstress")
check(base is not None and not base["boot_splats"],
      f"the baseline booted without a splat ({(base or {}).get('boot_splats')})")
for r in (base or {}).get("results", []):
    check(r["clean"], f"baseline, scenario {r['scenario']}: clean under pmdstress "
          f"(exit {r['rc']}, {r['how']})")
for m in doc["mutants"]:
    r = m.get("pmdstress", {})
    check(r.get("caught"), f"{m['name']}: caught by pmdstress: {r.get('how')} "
          f"(first event {r.get('first_s')} s, exit {r.get('rc')})")
sb = doc["baseline"].get("stress-ng")
if sb:
    print("# stress-ng baseline: " + ("clean" if all(r["clean"] for r in sb["results"])
                                      else "NOT clean: " + "; ".join(
                                          f"{r['scenario']}: {r['how']}" for r in sb["results"]
                                          if not r["clean"])))
    print("# stress-ng caught: " + ", ".join(m["name"][:2] for m in doc["mutants"]
                                            if m.get("stress-ng", {}).get("caught")) or "none")
print(f"# whole run {doc['wall_s']} s (kernels ready after {doc['build_s']} s); table in {table}")
done()
