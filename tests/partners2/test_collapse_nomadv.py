#!/usr/bin/env python3
# labels: e2e
# timeout: 120
"""The collapse partner on a kernel without MADV_COLLAPSE (before 6.1): it is
skipped with that reason, never passed, and the run goes on without it. The
kernel is made to refuse MADV_COLLAPSE for real: tests/partners2/nocollapse.c,
built here with cc, installs a seccomp filter answering madvise(..., 25) with
EINVAL, as an older kernel does, and execs pmdstress under it. Skips (77)
without a C compiler or seccomp filters."""
import os
import shutil
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, check, done, run, skip  # noqa: E402

BASE = ["--stressors", "fault,collapse", "--threads", "4", "--duration", "1s", "--size", "16M",
        "--progress", "off", "--quiet", "--thp", "inherit"]
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nocollapse.c")

cc = shutil.which("cc") or shutil.which("gcc")
if not cc:
    skip("no C compiler (cc) to build tests/partners2/nocollapse.c")
tmp = tempfile.mkdtemp(prefix="pmd-nocollapse-")
try:
    helper = os.path.join(tmp, "nocollapse")
    p = subprocess.run([cc, "-O2", "-Wall", "-o", helper, SOURCE], capture_output=True, text=True)
    if p.returncode:
        skip(f"cannot build nocollapse.c: {p.stderr.strip()[-300:]}")
    p = subprocess.run([helper, "/bin/true"], capture_output=True, text=True)
    if p.returncode == 77:
        skip(p.stderr.strip())
    check(p.returncode == 0, f"nocollapse runs a program (rc {p.returncode}, {p.stderr.strip()!r})")

    # without the filter this kernel has it, so the skip below is the filter's doing
    r = run(BASE)
    c = r.stressor("collapse")
    if c and c["status"] == "skipped":
        skip(f"collapse is skipped here even without the filter: {c.get('reason')}")

    r = run([PMDSTRESS] + BASE, binary=helper)
    c = r.stressor("collapse")
    check(c is not None and c["status"] == "skipped" and
          "kernel lacks MADV_COLLAPSE" in c.get("reason", ""),
          f"MADV_COLLAPSE refused: collapse skipped naming it ({c and c.get('reason')!r})")
    check(c is not None and "ops" not in c, "a skipped stressor reports no ops, never a pass")
    # collapse named by --stressors and unable to run: exit 125 (README, Exit status)
    check(r.rc == 125 and r.stressor("fault")["status"] == "ran" and r.doc["events"]["total"] == 0,
          f"MADV_COLLAPSE refused: the storm still runs, clean, exit 125 (rc {r.rc})" +
          ("" if r.rc == 0 else f"\n{r.show()}"))
    r = run([PMDSTRESS] + BASE + ["--stressors", "collapse"], binary=helper)
    check(r.rc == 125, f"MADV_COLLAPSE refused, collapse alone: nothing could run, exit 125 "
          f"(got {r.rc})")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
done()
