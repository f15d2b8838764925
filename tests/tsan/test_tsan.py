#!/usr/bin/env python3
# labels: tsan
# timeout: 900
"""ThreadSanitizer: build pmdstress with clang -fsanitize=thread, prove TSan
reports a deliberate race here, then run the race scenario in every THP mode
and with --inject, each partner's scenario and the fork, exec and AIM9
storms, and fail on any report from pmdstress's own code."""
import os
import re
import shutil
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import BUILD_DIR, SOURCE_DIR, check, done, skip  # noqa: E402

clang = shutil.which("clang")
if not clang:
    skip("clang is not installed (tools/deps installs it)")
out = os.path.join(BUILD_DIR, "tsan")
here = os.path.dirname(os.path.abspath(__file__))
supp = os.path.join(here, "tsan.supp")
env = dict(os.environ, CC=clang,
           TSAN_OPTIONS=f"suppressions={supp} halt_on_error=0 second_deadlock_stack=1 "
                        f"exitcode=66 report_signal_unsafe=0")


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, env=env, errors="replace", **kw)


# 1. the sanitizer works on this machine at all
canary = os.path.join(out, "race_canary")
os.makedirs(out, exist_ok=True)
r = sh([clang, "-fsanitize=thread", "-g", "-O1", "-o", canary, os.path.join(here, "race_canary.c")])
if r.returncode:
    skip(f"clang cannot build with -fsanitize=thread here: {r.stderr.strip()[:300]}")
r = sh([canary])
if "FATAL: ThreadSanitizer" in r.stderr:
    # e.g. "unexpected memory mapping" when the kernel's mmap randomisation is too wide
    skip(f"ThreadSanitizer cannot run on this kernel: {r.stderr.strip()[:300]}")
check("WARNING: ThreadSanitizer: data race" in r.stderr,
      "TSan reports the deliberate race in race_canary.c (so a clean run means something)")

# 2. pmdstress built with TSan
r = sh(["cmake", "-S", SOURCE_DIR, "-B", out, "-DPMD_SANITIZE=thread",
        "-DCMAKE_BUILD_TYPE=RelWithDebInfo"])
check(r.returncode == 0, f"configure the TSan build\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
r = sh(["cmake", "--build", out, "-j", str(os.cpu_count() or 2), "--target", "pmdstress"])
if not check(r.returncode == 0, f"build the TSan binary\n{r.stdout[-3000:]}{r.stderr[-3000:]}"):
    done()
binary = os.path.join(out, "pmdstress")

runs = [
    ["--threads", "16", "--duration", "4s", "--thp", "madvise"],
    ["--threads", "16", "--duration", "4s", "--thp", "nohuge"],
    ["--threads", "16", "--duration", "4s", "--thp", "toggle"],
    ["--threads", "8", "--duration", "3s", "--shared"],
    ["--threads", "70", "--duration", "3s", "--fault-group", "32"],
    ["--threads", "8", "--duration", "2s", "--inject", "stale:2:5:1"],
    # the partners at their own scenarios' rates, and the fork/exec storms (COW checks)
    ["--config", "zap", "--threads", "8", "--duration", "2s"],
    ["--config", "split", "--threads", "8", "--duration", "2s"],
    ["--config", "toggle", "--threads", "8", "--duration", "2s"],
    ["--config", "collapse", "--threads", "8", "--duration", "2s"],
    ["--config", "procwalk", "--threads", "8", "--duration", "2s"],
    ["--config", "fork", "--threads", "8", "--duration", "2s"],
    ["--config", "exec", "--threads", "8", "--duration", "2s"],
    ["--config", "aim9", "--threads", "8", "--duration", "2s"],
]
for args in runs:
    r = sh([binary] + args + ["--progress", "off"], timeout=300)
    reports = re.findall(r"WARNING: ThreadSanitizer: [^\n]*", r.stderr)
    # only the run with an injected corruption may (and must) end with exit 1
    want = 1 if "--inject" in args else 0
    check(not reports and r.returncode == want and "FATAL" not in r.stderr,
          f"TSan clean: {' '.join(args)} (rc {r.returncode}, expected {want}, "
          f"{len(reports)} reports)"
          + ("\n" + r.stderr[:6000] + "\n--- report (tail)\n" + r.stdout[-3000:]
             if reports or r.returncode != want else ""))
done()
