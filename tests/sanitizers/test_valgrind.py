#!/usr/bin/env python3
# labels: asan valgrind
# timeout: 600
"""valgrind memcheck on short runs of the plain build: no invalid access, no
use of uninitialised memory, no definite or indirect leak, in the race with
its partners, the fork and exec storms and an error exit. A canary shows
memcheck reports here at all. Two paths valgrind cannot model are avoided,
each for its reason (valgrind.supp says which); suppressions are for library
internals only."""
import os
import re
import shutil
import struct
import subprocess
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "forkexec"))
from pmdtest import BUILD_DIR, PMDSTRESS, check, done, skip  # noqa: E402
from children import become_subreaper, leftovers  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
valgrind = shutil.which("valgrind")
if not valgrind:
    skip("valgrind is not installed (apt-get install valgrind)")
# The storm is pmdstress exec'ing itself (src/run/supervise.c): memcheck follows it,
# but not the exec stressor's children, which only exit
VG = [valgrind, "--tool=memcheck", "--error-exitcode=99", "--leak-check=full",
      "--show-leak-kinds=definite,indirect", "--errors-for-leak-kinds=definite,indirect",
      "--num-callers=30", f"--suppressions={HERE}/valgrind.supp", "--trace-children=yes",
      "--trace-children-skip-by-arg=--exec-child"]


def vg(args, timeout=300, opts=VG):
    p = subprocess.run(opts + args, capture_output=True, text=True, errors="replace",
                       timeout=timeout)
    m = re.findall(r"ERROR SUMMARY: (\d+) errors", p.stderr)
    return p, sum(int(x) for x in m) if m else None


# 1. memcheck reports here at all
cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
canary = os.path.join(BUILD_DIR, "valgrind_canary")
r = subprocess.run([cc, "-g", "-O0", "-o", canary, os.path.join(HERE, "canary.c")],
                   capture_output=True, text=True)
if r.returncode:
    skip(f"cannot build the canary: {r.stderr.strip()[:300]}")
for what, needle in [("leak", "definitely lost"), ("uninit", "uninitialised value")]:
    p, n = vg([canary, what], timeout=120)
    if n is None:
        skip(f"valgrind does not run here: {p.stderr.strip()[:300]}")
    check(p.returncode == 99 and needle in p.stderr,
          f"memcheck reports the canary's {what} ({needle!r}), so a clean run means something")

# 2. pmdstress. PAGEMAP_SCAN is an ioctl valgrind does not know: the regions the
# kernel fills would look uninitialised, so the THP probe reads kpageflags
# (root) or smaps instead. The brk and page stressors are left out: memcheck
# takes memory a brk() raise hands out as undefined, though the kernel zeroes it.
probe = "kpageflags" if os.geteuid() == 0 else "smaps"
# memcheck replaces malloc only in a dynamically linked program: with the static
# build (PMD_STATIC) the build has a dynamic twin of the same objects
PMD = os.path.join(os.path.dirname(PMDSTRESS), "pmdstress-dyn")
if not os.path.exists(PMD):
    PMD = PMDSTRESS


def has_interp(path):
    """A PT_INTERP program header (ELF64 little-endian): a dynamic program."""
    with open(path, "rb") as f:
        elf = f.read()
    phoff, = struct.unpack_from("<Q", elf, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
    return any(struct.unpack_from("<I", elf, phoff + i * phentsize)[0] == 3
               for i in range(phnum))


dynamic = has_interp(PMD)
check(dynamic, f"{os.path.basename(PMD)} is dynamically linked, so memcheck sees its heap")
# memcheck runs the storm 20-50 times slower: a storm silent for the default 3 s is
# memcheck's pace, not a hang (a CI-style run judged the fork storm so, twice)
BASE = [PMD, "--progress", "off", "--quiet", "--size", "8M", "--thp-probe", probe,
        "--hang-timeout", "30s"]
# (arguments, exit code, what it is, whose children fork and exit: see below)
runs = [
    (["--threads", "6", "--duration", "2s"], 0,
     "the race: fault + toggle, zap, split, collapse, procwalk, fork", True),
    (["--config", "fork", "--threads", "4", "--duration", "2s"], 0, "the fork storm", True),
    (["--config", "exec", "--threads", "4", "--duration", "2s"], 0, "the exec storm", False),
    (["--stressors", "fault", "--threads", "4", "--duration", "1s", "--rounds", "1"], 0,
     "bench mode", False),
    (["--threads", "4", "--duration", "1s", "--fault-chunks", "9"], 2,
     "a setup that refuses the configuration (exit 2)", False),
]
# A fork child has none of the pool (src/run/pool.c: MADV_DONTFORK), where the
# run's state lies, but memcheck takes the pool for mapped in the child too:
# at the child's exit every heap block only the run's state points to reads
# as lost, and the child exits with --error-exitcode, which its parent
# reports as a failed check. So where children fork and exit (the race's and
# the storm's fork stressor), memcheck runs twice: every process without the
# leak check, then the parent's leaks (children silent, their exit status
# their own; the parent's errors are still counted from its summary).
PARENT_ONLY = [o for o in VG if not o.startswith("--error-exitcode")] + [
    "--child-silent-after-fork=yes"]
become_subreaper()  # what pmdstress leaves when it exits comes to us
for args, rc, what, forks in runs:
    passes = [(VG, what)]
    if forks:
        passes = [(VG + ["--leak-check=no"], f"{what}, errors of every process"),
                  (PARENT_ONLY, f"{what}, leaks of the parent")]
    for opts, name in passes:
        p, n = vg(BASE + args, opts=opts)
        ok = p.returncode == rc and n == 0
        check(ok, f"memcheck clean: {name} (rc {p.returncode}, {n} errors)" +
              ("" if ok else "\n" + p.stderr[-8000:]))
        # a fork child memcheck keeps alive past its storm: the supervisor ends it
        end = time.monotonic() + 5
        while [x for x in leftovers() if x[1] != "Z"] and time.monotonic() < end:
            time.sleep(0.1)
        left = leftovers()
        check(not left, f"nothing left behind: {name} ({left})")
done()
