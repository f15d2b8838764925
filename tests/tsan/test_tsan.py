#!/usr/bin/env python3
# labels: tsan
# timeout: 900
"""ThreadSanitizer: build pmdstress with clang -fsanitize=thread, prove TSan
reports a deliberate race here, then run the race scenario in every THP mode
and with --inject, each partner's scenario and the fork, exec and AIM9
storms, and the paths signals take: a fault on a live chunk (the fatal
handler, SIGSEGV and SIGBUS), a hang, --single-thread (its SIGALRM and
SIGINT handler), SIGINT to a threaded run. Fail on any report from
pmdstress's own code; no report class is turned off."""
import os
import re
import shutil
import signal
import subprocess
import sys
import time
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
                        f"exitcode=66")


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

# (arguments, exit status): an injected corruption or live fault exits 1, a hang 4
runs = [
    ["--threads", "16", "--duration", "4s", "--thp", "madvise"],
    ["--threads", "16", "--duration", "4s", "--thp", "nohuge"],
    ["--threads", "16", "--duration", "4s", "--thp", "toggle"],
    ["--threads", "8", "--duration", "3s", "--shared"],
    ["--threads", "70", "--duration", "3s", "--fault-group", "32"],
    # full windows: a seed round writes 32 pages (a reader round too), and the stale
    # page must be written
    ["--threads", "8", "--duration", "2s", "--fault-seed", "0", "--fault-reader-pages", "512",
     "--inject", "stale:2:5:1"],
    # the partners at their own scenarios' rates, and the fork/exec storms (COW checks)
    ["--config", "zap", "--threads", "8", "--duration", "2s"],
    ["--config", "split", "--threads", "8", "--duration", "2s"],
    ["--config", "toggle", "--threads", "8", "--duration", "2s"],
    ["--config", "collapse", "--threads", "8", "--duration", "2s"],
    ["--config", "procwalk", "--threads", "8", "--duration", "2s"],
    ["--config", "fork", "--threads", "8", "--duration", "2s"],
    ["--config", "exec", "--threads", "8", "--duration", "2s"],
    ["--config", "aim9", "--threads", "8", "--duration", "2s"],
    # the fatal handler on a live chunk, the worker parked in it, the run ended around it
    ["--threads", "8", "--duration", "3s", "--inject", "segv:2:5"],
    # (the storm alone: a partner on the live round, split's mremap or zap's remap, may move
    # or replace the truncated page, and the store then faults nowhere, or off the chunk)
    ["--threads", "8", "--stressors", "fault", "--duration", "3s", "--inject", "sigbus:2:5"],
    ["--threads", "4", "--stressors", "fault", "--duration", "20s", "--hang-timeout", "2s",
     "--inject", "hang:1"],
    # the worker on the main thread, ended by its SIGALRM handler
    ["--single-thread", "--threads", "1", "--stressors", "fault", "--duration", "2s"],
]


def verdict(args, rc, want, err, out):
    reports = re.findall(r"WARNING: ThreadSanitizer: [^\n]*", err)
    check(not reports and rc in want and "FATAL" not in err,
          f"TSan clean: {' '.join(args)} (rc {rc}, expected {want}, {len(reports)} reports)"
          + ("\n" + err[:6000] + "\n--- report (tail)\n" + out[-3000:]
             if reports or rc not in want else ""))


for args in runs:
    r = sh([binary] + args + ["--progress", "off"], timeout=300)
    want = 4 if "hang:1" in args else 1 if "--inject" in args else 0
    verdict(args, r.returncode, (want,), r.stderr, r.stdout)

# SIGINT: the threaded run's signal watcher, and --single-thread's handler
for args in [["--threads", "8", "--duration", "30s"],
             ["--single-thread", "--threads", "1", "--stressors", "fault", "--duration", "30s"]]:
    p = subprocess.Popen([binary] + args + ["--progress", "off"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env, errors="replace")
    time.sleep(3)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    # a clean run stopped by SIGINT dies of it after its report
    verdict(args + ["(SIGINT)"], p.returncode, (-signal.SIGINT, 130), err, out)
done()
