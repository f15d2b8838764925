#!/usr/bin/env python3
# labels: vm e2e
# timeout: 60
"""The guest tests' skip path, on any host: a guest that cannot be run (here a
--kernel path that does not exist) is pmd-vm exit 125 with a one-line reason,
and test_numa_guest.py turns that into a skip (77) that gives the reason,
never a pass and never a failure."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done  # noqa: E402
from pmdvm import guest  # noqa: E402

BOGUS = "/nonexistent/pmdstress-no-such-vmlinux"

g = guest(["true"], kernel=BOGUS, name="numa-skip", timeout=30)
check(g.rc == 125 and g.cannot_run, f"pmd-vm --kernel {BOGUS}: exit 125 (rc={g.rc})")
check(BOGUS in g.reason and "\n" not in g.reason,
      f"one-line reason naming the kernel: {g.reason!r}")

env = dict(os.environ, PMD_NUMA_GUEST_KERNELS=BOGUS)
p = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                 "test_numa_guest.py")],
                   capture_output=True, text=True, env=env, timeout=60)
check(p.returncode == 77, f"test_numa_guest.py with no runnable guest: exit 77 (rc={p.returncode})"
      ) or print(p.stdout[-2000:], p.stderr[-2000:])
check("SKIP" in p.stderr and BOGUS in p.stderr and "no such kernel file" in p.stderr,
      f"the skip gives pmd-vm's reason: {p.stderr.strip()[-300:]!r}")
check("ok " not in p.stdout, "and it checked nothing (a skip is not a pass)")
done()
