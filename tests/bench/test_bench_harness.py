#!/usr/bin/env python3
# labels: e2e
# timeout: 300
"""The benchmark harness works: bench/run.py builds the bare loops, runs the
scale and sensitivity sections against this build and prints its table.
It does not judge the targets (timings are for bench/run.py on a quiet
machine, not for a test); it checks that every figure was measured."""
import os
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import SOURCE_DIR, check, done  # noqa: E402

p = subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "bench", "run.py"), "--quick",
                    "--only", "scale,fault"], capture_output=True, text=True, timeout=280)
check(p.returncode in (0, 1), f"bench/run.py ran (rc {p.returncode})\n{p.stderr[-2000:]}")
rows = [l for l in p.stdout.splitlines() if l.startswith("| ") and "---" not in l][1:]
check(len(rows) == 8, f"8 figures measured ({len(rows)})\n{p.stdout[-3000:]}")
check(all(" | yes |" in r or " | no |" in r for r in rows), "each figure has a verdict")
check(any("start-up" in r for r in rows) and any("verify on" in r for r in rows),
      "scale and fault sections present")
p = subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "bench", "run.py"), "--only", "nosuch"],
                   capture_output=True, text=True, timeout=60)
check(p.returncode == 2 and "unknown section" in p.stderr, "an unknown section: exit 2")
done()
