#!/usr/bin/env python3
# labels: vm e2e
# timeout: 60
"""The guest tests' skip path, on any host: a guest that cannot be run here (a
kernel it cannot boot: an ELF without the PVH note) is pmd-vm exit 125 with
a one-line reason, and test_numa_guest.py turns that into a skip (77) that
gives the reason, never a pass and never a failure. A usage error (a kernel
path that does not exist, an option without its value, a --carry file that
is not there) is exit 2 with one line, at once: not 125, which bisect and
ctest would read as "skip"."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done  # noqa: E402
from pmdvm import PMD_VM, guest  # noqa: E402

tmp = tempfile.mkdtemp(prefix="pmdvm-skip-")
UNBOOTABLE = os.path.join(tmp, "vmlinux")  # an ELF, but no kernel: no PVH note
shutil.copy("/bin/true", UNBOOTABLE)

g = guest(["true"], kernel=UNBOOTABLE, name="numa-skip", timeout=30)
check(g.rc == 125 and g.cannot_run, f"pmd-vm --kernel <ELF without PVH>: exit 125 (rc={g.rc})")
check(UNBOOTABLE in g.reason and "PVH" in g.reason and "\n" not in g.reason,
      f"one-line reason naming the kernel: {g.reason!r}")

env = dict(os.environ, PMD_NUMA_GUEST_KERNELS=UNBOOTABLE)
p = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                 "test_numa_guest.py")],
                   capture_output=True, text=True, env=env, timeout=60)
check(p.returncode == 77, f"test_numa_guest.py with no runnable guest: exit 77 (rc={p.returncode})"
      ) or print(p.stdout[-2000:], p.stderr[-2000:])
check("SKIP" in p.stderr and UNBOOTABLE in p.stderr and "PVH note" in p.stderr,
      f"the skip gives pmd-vm's reason: {p.stderr.strip()[-300:]!r}")
check("ok " not in p.stdout, "and it checked nothing (a skip is not a pass)")

# usage errors: 2, one line naming the value, before anything is fetched or booted
BOGUS = "/nonexistent/pmdstress-no-such-vmlinux"
empty = os.path.join(tmp, "empty")
os.mkdir(empty)
for args, needle in [(["--kernel", BOGUS, "--", "true"], f"--kernel {BOGUS}: no such kernel"),
                     (["--kernel", empty, "--", "true"], "directory has no vmlinux"),
                     (["--kernel"], "--kernel needs a value"),
                     (["--nodes", "0", "--", "true"], "--nodes: 1..16"),
                     (["--carry", BOGUS, "--", "true"], f"--carry {BOGUS}: not found"),
                     (["--kernel", "6.1"], "no command given")]:
    t0 = time.monotonic()
    q = subprocess.run([PMD_VM] + args, capture_output=True, text=True, timeout=30,
                       stdin=subprocess.DEVNULL)
    first = (q.stderr.splitlines() or [""])[0]
    check(q.returncode == 2 and needle in first and time.monotonic() - t0 < 5,
          f"pmd-vm {' '.join(args)}: exit 2 at once, {first!r} (rc {q.returncode})")
shutil.rmtree(tmp, ignore_errors=True)
done()
