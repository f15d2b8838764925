#!/usr/bin/env python3
# labels: ab
# timeout: 3600
"""A short A/B over tools/vm (label ab, outside the default suite): the
base guest kernel against the same kernel with the calibration patch
(tools/vm/ab-patches/fault-delay.patch) booted with pmd_fault_delay_ns=100000,
a 100 us spin added to every page fault. Three boots a side, mmap_anon_test on 64 MiB
(16384 faults), 3 rounds a boot.

It checks that the runner builds B incrementally and that the guard passes
and names mm/memory.o as what changed; that the boots alternate A B A B; that
compare takes one sample per boot (3 a side) and prints the 2023 table; that
the time per fault grows by at least half the spin (under TCG on a loaded
host a spin overshoots: a 20 us one added 52 us a fault, so no upper bound)
and is flagged worse, exit 1 (100 us, not 20, and three boots, not two: with
two a side Welch's test has one degree of freedom, and on a loaded host
neither +52 us from a 20 us spin (p 0.11) nor +172 us from a 100 us spin
(p 0.093) was significant); and
that the runner's bad input is one line and exit 2. Kernel builds run
under flock on $PMD_KBUILD_DIR/.cpu.lock; the first build of the base
kernel takes 10-20 minutes on 2 CPUs, B about one. Skips (77) where no
guest can run or no kernel source is to be had.
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import BUILD_DIR, PMDSTRESS, SOURCE_DIR, check, done, fail, skip  # noqa: E402

AB = os.path.join(SOURCE_DIR, "tools", "vm", "ab")
DELAY = 100000
out = os.path.join(BUILD_DIR, "vm", "ab-test")


def ab(*args, timeout=3000):
    return subprocess.run([AB, "--pmdstress", PMDSTRESS] + list(args), capture_output=True,
                          text=True, timeout=timeout)


# bad input first: cheap, and it needs no guest
for args, want in ((["--mutant", "no-such-patch"], "--mutant: no patch named 'no-such-patch'"),
                   (["--mutant", "fault-delay", "--boots", "1"], "--boots: 1: at least 2"),
                   (["--mutant", "fault-delay", "--scenarios", "lmbench"],
                    "--scenarios: 'lmbench' unknown"),
                   ([], "say what B is")):
    p = ab(*args, timeout=60)
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 2 and len(lines) == 1 and want in lines[0] and not p.stdout,
          f"tools/vm/ab {' '.join(args)}: exit 2, one line ({p.returncode}: {p.stderr.strip()})")

if not shutil.which("qemu-system-x86_64"):
    skip("qemu-system-x86_64 is not installed: no guest can run here")
kb = os.environ.get("PMD_KBUILD_DIR") or os.path.join(BUILD_DIR, "vm", "kbuild")
tarball = os.environ.get("PMD_LINUX_TARBALL", "/usr/src/linux-source-6.1.tar.xz")
if not os.path.isfile(os.path.join(kb, "base", "vmlinux")) and not os.path.isfile(tarball):
    skip(f"no guest kernel built in {kb} and no kernel source ({tarball}): "
         "install linux-source-6.1 or build one with tools/vm/kernel/build")

shutil.rmtree(out, ignore_errors=True)
p = ab("--mutant", "fault-delay", "--b-append", f"pmd_fault_delay_ns={DELAY}",
       "--scenarios", "mmap_anon_test", "--boots", "3", "--size", "64M", "--rounds", "3",
       "--timeout", "900", "--out", out)
if p.returncode == 125:
    skip(f"no guest can run here: {p.stderr.strip().splitlines()[-1]}")
if p.returncode not in (0, 1):
    fail(f"tools/vm/ab exit {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
print("# " + p.stdout.replace("\n", "\n# "))

with open(os.path.join(out, "guard.txt")) as f:
    g = f.read()
check("ok: .config identical" in g and "ok: vmlinux differs" in g and "FAIL" not in g and
      re.search(r"depending on the patch: 1: mm/memory\.o$", g, re.M),
      f"the guard: same config, only mm/memory.o changed, vmlinux differs\n{g}")
boots = sorted(os.listdir(os.path.join(out, "boots")))
check(boots == ["01-A", "01-B", "02-A", "02-B", "03-A", "03-B"],
      f"boots alternate A B A B A B ({boots})")
order = sorted(boots, key=lambda b: os.path.getmtime(os.path.join(out, "boots", b, "status")))
check(order == boots, f"... in that order in time ({order})")
rel = set()
for b in boots:
    with open(os.path.join(out, "boots", b, "status")) as f:
        st = dict(ln.rstrip("\n").partition("=")[::2] for ln in f)
    rel.add((b[-1], st.get("release")))
    with open(os.path.join(out, "boots", b, "dmesg"), errors="replace") as f:
        cmdline = f.read()
    want_arg = f"pmd_fault_delay_ns={DELAY}" in cmdline
    check(want_arg == (b[-1] == "B"), f"{b}: the delay is on B's command line only")
text = p.stdout
check("samples: one per report" in text and "3 reports (9 rounds)" in text,
      f"compare: one sample per boot, 3 a side, 3 rounds each\n{text}")
check("the 2023 table: one line per report" in text and re.search(r"^average ", text, re.M),
      "the 2023 table, a line per boot and the average")
row = [ln for ln in text.splitlines() if ln.split()[:1] == ["latency.window.per_fault"]]
check(len(row) == 1, f"the headline row, time per fault ({row})")
cells = row[0].split()
UNITS = {"ns": 1, "us": 1e3, "ms": 1e6}


def ns(cell):
    m = re.fullmatch(r"([0-9.]+)(ns|us|ms)", cell)
    return float(m.group(1)) * UNITS[m.group(2)]


a, b = ns(cells[2]), ns(cells[4])
check(0.5 * DELAY <= b - a,
      f"B's time per fault is at least {DELAY // 2} ns more: {a:.0f} -> {b:.0f} ns (+{b - a:.0f})")
check(cells[-1] == "worse" and p.returncode == 1,
      f"flagged worse, exit 1 ({cells[-1]}, exit {p.returncode})")
check("accel" in text and ("under TCG" in text) == ("tcg" in text.split("\n")[0]),
      "the header says which accelerator ran the guests, and what TCG means for time")
done()
