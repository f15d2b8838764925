#!/usr/bin/env python3
# labels: asan
# timeout: 1200
"""AddressSanitizer + UndefinedBehaviorSanitizer + LeakSanitizer: build
pmdstress with -DPMD_SANITIZE=address in the build tree, prove the
sanitizers report deliberate bugs here, then run the race, fork, exec,
AIM9 and partner scenarios, bench rounds, injected faults, the error exits,
a signal stop, replay and compare, and fail on any report. Leak detection is
on: every allocation of a run must be freed by its end, on the error paths
too. Suppressions (lsan.supp) are for library internals only."""
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "partners2"))
from pmdtest import BUILD_DIR, SOURCE_DIR, check, done, is_root, skip  # noqa: E402
import thpsnap  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(BUILD_DIR, "asan")
REPORTS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
           "SUMMARY: UndefinedBehaviorSanitizer", "WARNING: AddressSanitizer")
ENV = dict(os.environ,
           ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:exitcode=66:"
                        "detect_stack_use_after_return=0:allow_user_segv_handler=1",
           LSAN_OPTIONS=f"suppressions={HERE}/lsan.supp:print_suppressions=0",
           UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, errors="replace", env=ENV, **kw)


def reports(err):
    return [line for line in err.splitlines() if any(r in line for r in REPORTS)]


# 1. the sanitizers report here at all
cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
if not cc:
    skip("no C compiler")
os.makedirs(OUT, exist_ok=True)
canary = os.path.join(OUT, "sanitizer_canary")
r = sh([cc, "-g", "-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
        "-o", canary, os.path.join(HERE, "canary.c")])
if r.returncode:
    skip(f"{cc} cannot build with -fsanitize=address,undefined here: {r.stderr.strip()[:300]}")
# (UBSan's object-size check may see the overflow before ASan does)
for what, needles in [("leak", ["detected memory leaks"]),
                      ("overflow", ["heap-buffer-overflow", "insufficient space for an object"]),
                      ("ub", ["signed integer overflow"])]:
    r = sh([canary, what])
    if "AddressSanitizer:DEADLYSIGNAL" in r.stderr or "Shadow memory range" in r.stderr:
        skip(f"ASan cannot run on this kernel: {r.stderr.strip()[:300]}")
    check(r.returncode != 0 and any(n in r.stderr for n in needles),
          f"the canary's {what} is reported ({needles[0]!r}), so a clean run means something")

# 2. pmdstress with ASan + UBSan
r = sh(["cmake", "-S", SOURCE_DIR, "-B", OUT, "-DPMD_SANITIZE=address",
        "-DCMAKE_BUILD_TYPE=RelWithDebInfo"])
check(r.returncode == 0, f"configure the ASan build\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
r = sh(["cmake", "--build", OUT, "-j", str(os.cpu_count() or 2), "--target", "pmdstress"])
if not check(r.returncode == 0, f"build the ASan binary\n{r.stdout[-3000:]}{r.stderr[-3000:]}"):
    done()
binary = os.path.join(OUT, "pmdstress")
tmp = tempfile.mkdtemp(prefix="pmd-asan-")
BASE = ["--progress", "off", "--quiet", "--size", "16M"]


def one(args, expect_rc, what, **kw):
    r = sh([binary] + BASE + args, timeout=300, **kw)
    rep = reports(r.stderr)
    ok = not rep and r.returncode in expect_rc
    check(ok, f"ASan clean: {what} (rc {r.returncode}, {len(rep)} reports)" +
          ("" if ok else "\n" + r.stderr[-8000:]))
    return r


race_json = os.path.join(tmp, "race.json")
bench_json = os.path.join(tmp, "bench.json")
one(["--threads", "8", "--duration", "2s", "--json", race_json,
     "--jsonl", os.path.join(tmp, "race.jsonl"), "--ktap", os.path.join(tmp, "race.ktap")],
    {0}, "the default race: fault + toggle, zap, split, collapse, procwalk, fork")
for cfg in ("fork", "exec", "aim9", "zap", "split", "toggle", "collapse", "procwalk"):
    one(["--config", cfg, "--threads", "6", "--duration", "1500ms"], {0}, f"--config {cfg}")
one(["--threads", "6", "--duration", "1s", "--shared"], {0}, "a MAP_SHARED arena")
one(["--threads", "6", "--duration", "1s", "--thp", "toggle"], {0}, "--thp toggle")
one(["--stressors", "fault", "--threads", "4", "--duration", "400ms", "--rounds", "2",
     "--json", bench_json], {0}, "bench mode: a warm-up and two rounds")
one(["--stressors", "fault", "--threads", "4", "--duration", "1s", "--inject", "stale:2:5:1"],
    {1}, "an injected corruption is found (exit 1)")
one(["--stressors", "fault", "--threads", "4", "--duration", "3s", "--inject", "segv:1:3:0:2"],
    {1}, "an injected fault on a live chunk (exit 1)")
one(["--stressors", "fault", "--threads", "4", "--duration", "20s", "--inject", "hang:0:0:0:3",
     "--hang-timeout", "1s"], {4}, "an injected hang (exit 4)")
# the error exits free what they built
one(["--threads", "4", "--duration", "1s", "--fault-chunks", "33"], {2},
    "a setup that refuses the configuration (exit 2)")
one(["--stressors", "fault,zap,split", "--threads", "4", "--duration", "1s",
     "--fault-chunks", "33"], {2}, "a refusal after other setups ran (exit 2)")
one(["--threads", "4", "--inject", "bogus"], {2}, "a bad --inject (exit 2)")
one(["--threads", "4", "--jsonl", "/nonexistent/dir/x.jsonl"], {2}, "an unwritable --jsonl")
one(["--threads", "4", "--size", "3M"], {2}, "a bad --size (exit 2)")
# a signal stop writes the report, then frees everything
p = subprocess.Popen([binary] + BASE + ["--threads", "6", "--duration", "60s"],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)
time.sleep(2.0)
p.send_signal(signal.SIGINT)
out, err = p.communicate(timeout=120)
ok = p.returncode == -signal.SIGINT and "stopped by Interrupt" in err and not reports(err)
check(ok, f"ASan clean: stopped by SIGINT, ends by it after the report (rc {p.returncode})" +
      ("" if ok else "\n" + err[-6000:]))
# the report readers
if os.path.exists(race_json):
    one(["--replay", race_json, "--duration", "1s"], {0}, "--replay of the race report")
for args, what in [([race_json, race_json], "compare A A"),
                   ([bench_json, bench_json, "--threshold", "5"], "compare with --threshold"),
                   ([race_json, bench_json], "compare of different runs (refused, exit 2)"),
                   ([f"{bench_json},{bench_json}", f"{bench_json},{race_json},{bench_json}",
                     "--all", "--threshold", "0"], "compare of sides of several reports")]:
    r = sh([binary, "compare"] + args, timeout=120)
    check(not reports(r.stderr) and r.returncode in (0, 1, 2),
          f"ASan clean: {what} (rc {r.returncode})" + (
              "" if not reports(r.stderr) else "\n" + r.stderr[-6000:]))
for bad in sorted(glob.glob(os.path.join(SOURCE_DIR, "tests", "results", "bad", "*.json"))):
    r = sh([binary, "compare", bad, bad], timeout=60)
    check(r.returncode == 2 and not reports(r.stderr),
          f"ASan clean: compare of {os.path.basename(bad)} (rc {r.returncode})")
# the settings service and its guardian (root, THP sysfs writable; under the tests' THP lock)
if is_root() and os.access(f"{thpsnap.THP}/enabled", os.W_OK):
    with thpsnap.Guard() as snap:
        one(["--stressors", "fault,sysfs", "--threads", "4", "--duration", "1s",
             "--sysfs-values", "keep-thp", "--sysfs-rate", "200"], {0},
            "the sysfs stressor, its restore and guardian")
        now = thpsnap.read()
        check(now == snap, f"THP settings put back ({thpsnap.diff(snap, now) or 'same'})")
shutil.rmtree(tmp, ignore_errors=True)
done()
