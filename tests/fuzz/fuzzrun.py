# SPDX-License-Identifier: GPL-2.0
"""Build the libFuzzer targets of tests/fuzz/ (a -DPMD_SANITIZE=fuzzer
configure of its own, in the build tree) and run each for a bounded time
from a copy of its seed corpus, failing on any crash, leak, timeout,
sanitizer report or an input the target refuses to take quietly."""
import os
import shutil
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import BUILD_DIR, PMDSTRESS, SOURCE_DIR, check, done, skip  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(BUILD_DIR, "fuzz")
TARGETS = ["fuzz_ini", "fuzz_cli", "fuzz_report"]
BAD = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:", "ERROR: libFuzzer",
       "SUMMARY: ", "fuzz_ini:", "fuzz_cli:", "fuzz_report:")


def env():
    e = dict(os.environ)
    e["ASAN_OPTIONS"] = "detect_leaks=1:abort_on_error=0:symbolize=1"
    e["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1"
    return e


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, errors="replace", env=env(), **kw)


def build():
    clang = shutil.which("clang")
    if not clang:
        skip("clang is not installed (tools/deps installs it)")
    os.makedirs(OUT, exist_ok=True)
    # the machinery works here at all: libFuzzer finds the canary's bug, ASan reports it
    canary = os.path.join(OUT, "fuzz_canary")
    r = sh([clang, "-g", "-O1", "-fsanitize=fuzzer,address", "-o", canary,
            os.path.join(HERE, "canary.c")])
    if r.returncode:
        skip(f"clang cannot build with -fsanitize=fuzzer here (libclang-rt-dev?): "
             f"{r.stderr.strip()[:300]}")
    seeds = tempfile.mkdtemp(prefix="pmd-fuzz-canary-")
    with open(os.path.join(seeds, "seed"), "wb") as f:
        f.write(b"pmd")
    r = sh([canary, "-runs=2000000", "-max_total_time=60", f"-artifact_prefix={seeds}/", seeds],
           timeout=180)
    check(r.returncode != 0 and "heap-buffer-overflow" in r.stderr,
          f"libFuzzer finds the canary's overflow and ASan reports it (rc {r.returncode})")
    shutil.rmtree(seeds, ignore_errors=True)
    e = dict(env(), CC=clang)
    r = subprocess.run(["cmake", "-S", SOURCE_DIR, "-B", OUT, "-DPMD_SANITIZE=fuzzer",
                        "-DCMAKE_BUILD_TYPE=RelWithDebInfo"], capture_output=True, text=True,
                       env=e)
    if not check(r.returncode == 0, f"configure the fuzz build\n{r.stdout[-2000:]}{r.stderr[-2000:]}"):
        done()
    r = subprocess.run(["cmake", "--build", OUT, "-j", str(os.cpu_count() or 2), "--target"] +
                       TARGETS, capture_output=True, text=True, env=e)
    if not check(r.returncode == 0, f"build the fuzz targets\n{r.stdout[-3000:]}{r.stderr[-3000:]}"):
        done()


def fresh_report(dest):
    """A report from this tree's pmdstress: the baseline, and a seed in today's schema."""
    r = subprocess.run([PMDSTRESS, "--stressors", "fault,zap", "--threads", "3", "--size", "8M",
                        "--duration", "300ms", "--progress", "off", "--quiet", "--json", dest],
                       capture_output=True, text=True, timeout=120)
    return r.returncode == 0 and os.path.exists(dest)


def fuzz(target, seconds, extra_env=None, runs=-1):
    """libFuzzer on @target from its seed corpus for at most @seconds and, when
    @runs >= 0, at most @runs inputs: whichever comes first."""
    binary = os.path.join(OUT, "tests", "fuzz", target)
    work = tempfile.mkdtemp(prefix=f"pmd-{target}-")
    corpus = os.path.join(work, "corpus")
    shutil.copytree(os.path.join(HERE, f"corpus-{target}"), corpus)
    e = env()
    if target == "fuzz_report":
        base = os.path.join(work, "baseline.json")
        if check(fresh_report(base), "a fresh report from this build for the baseline"):
            shutil.copy(base, os.path.join(corpus, "fresh.json"))
            e["PMD_FUZZ_BASELINE"] = base
    e.update(extra_env or {})
    artifacts = os.path.join(OUT, "artifacts") + "/"
    os.makedirs(artifacts, exist_ok=True)
    cmd = [binary, f"-max_total_time={seconds}", f"-runs={runs}", "-timeout=20",
           "-rss_limit_mb=2048", "-print_final_stats=1", f"-artifact_prefix={artifacts}", corpus]
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", env=e,
                       timeout=seconds * 3 + 120)
    execs = 0
    for line in p.stderr.splitlines():
        if line.startswith("stat::number_of_executed_units:"):
            execs = int(line.split()[-1])
    bad = [line for line in p.stderr.splitlines() if line.startswith(BAD)]
    ok = p.returncode == 0 and not bad
    check(ok, f"{target}: {seconds}s{f' or {runs} inputs' if runs >= 0 else ''}, {execs} inputs, "
          f"no crash, leak, timeout or sanitizer "
          f"report (rc {p.returncode})" + ("" if ok else "\n" + p.stderr[-6000:]))
    check(execs >= 100, f"{target}: the fuzzer really ran ({execs} inputs)")
    shutil.rmtree(work, ignore_errors=True)
