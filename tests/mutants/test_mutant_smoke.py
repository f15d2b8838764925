#!/usr/bin/env python3
# labels: vm
# timeout: 600
"""Baseline + one kernel mutant in the default suite, when the guest kernels
are built already: mutant 01 (do_anonymous_page() without its pte_none
recheck) must be caught by the PTE-mode storm as LOST_WRITE, and the same
pmdstress command must be clean on the baseline kernel, both in the 2-node
TCG guest (tools/vm/mutants/run --no-build). This test never builds a
kernel: a clean build takes 8-13 minutes on a 2-CPU machine, more than the
default suite can spend. Without the kernels it skips (77) and says how to
get them; the whole mutant suite is ctest -L mutants (a CI job of its own,
see .ci/run)."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import BUILD_DIR, PMDSTRESS, SOURCE_DIR, check, done, skip  # noqa: E402

RUN = os.path.join(SOURCE_DIR, "tools", "vm", "mutants", "run")
KBUILD = os.environ.get("PMD_KBUILD_DIR") or os.path.join(SOURCE_DIR, "build", "vm", "kbuild")
BINARY = os.path.abspath(PMDSTRESS)
MUTANT = "01"

if not os.access(BINARY, os.X_OK):
    skip(f"no pmdstress binary at {BINARY}")
need = [os.path.join(KBUILD, "base", "vmlinux"),
        os.path.join(KBUILD, "mutant-anon-pte-no-recheck", "vmlinux")]
missing = [k for k in need if not os.path.isfile(k)]
if missing:
    skip(f"guest kernels not built ({', '.join(missing)}): tools/vm/kernel/build && "
         "tools/vm/mutants/build-one tools/vm/mutants/01-*.patch (~10 min once), or run "
         "the whole suite with ctest -L mutants")
report = os.path.join(BUILD_DIR, "vm", "mutant-smoke.json")
if os.path.exists(report):
    os.unlink(report)
p = subprocess.run([RUN, "--no-build", "--tools", "pmdstress", "--pmdstress", BINARY, "--out",
                    os.path.join(BUILD_DIR, "vm", "mutant-smoke"), "--json", report, MUTANT],
                   capture_output=True, text=True, errors="replace", stdin=subprocess.DEVNULL,
                   timeout=540)
print(p.stdout)
if p.returncode == 125:
    skip("no guest can run here: " + (p.stderr.strip().splitlines() or ["exit 125"])[-1])
if not check(os.path.exists(report), f"the runner wrote its report (exit {p.returncode})"):
    print(p.stderr[-4000:])
    done()
with open(report) as f:
    doc = json.load(f)
b = doc["baseline"]["pmdstress"]["results"][0]
check(b["clean"] and b["rc"] == 0 and not doc["baseline"]["pmdstress"]["boot_splats"],
      f"baseline kernel: scenario {b['scenario']} clean (exit {b['rc']}, {b['how']})")
m = doc["mutants"][0]["pmdstress"]
classes = ((m.get("report") or {}).get("events") or {}).get("by_class") or {}
check(m["caught"] and m["rc"] == 1 and classes.get("LOST_WRITE", 0) > 0,
      f"mutant 01: caught as LOST_WRITE by the verifier, exit 1 ({m['how']}, exit {m['rc']})")
check(m["first_s"] is not None and m["first_s"] < 6,
      f"mutant 01: the first event came within the run ({m['first_s']} s)")
done()
