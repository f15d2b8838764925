#!/usr/bin/env python3
# labels: e2e
# timeout: 300
"""The benchmark harness works: bench/run.py builds the bare loops, runs the
scale and sensitivity sections against this build and prints its table.
It does not judge the targets (timings are for bench/run.py on a quiet
machine, not for a test); it checks that every figure was measured."""
import os
import re
import subprocess
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import SOURCE_DIR, check, done, storm_of  # noqa: E402

RUN = os.path.join(SOURCE_DIR, "bench", "run.py")


def table_rows(stdout):
    """The rows of the Markdown table run.py prints last, without its header."""
    return [l for l in stdout.splitlines() if l.startswith("| ") and "---" not in l][1:]


p = subprocess.run([sys.executable, RUN, "--quick", "--only", "scale,fault", "--triplets", "2"],
                   capture_output=True, text=True, timeout=280)
check(p.returncode in (0, 1, 3), f"bench/run.py ran (rc {p.returncode})\n{p.stderr[-2000:]}")
check(p.stdout.startswith("bench/run.py --quick --only scale,fault --triplets 2: "),
      f"the header quotes what was measured\n{p.stdout[:300]}")
lines = [l for l in p.stdout.splitlines() if l.startswith("  first touch")]
check(len(lines) == 4 and all(", 2 triplets) " in l for l in lines),
      "--triplets 2: each ratio figure measured in 2 triplets\n" + "\n".join(lines))
rows = table_rows(p.stdout)
check(len(rows) == 8, f"8 figures measured ({len(rows)})\n{p.stdout[-3000:]}")
check(all(re.search(r" \| (yes|no|unsettled) \|$", r) for r in rows), "each figure has a verdict")
ratio_rows = [r for r in rows if "first touch" in r]
check(len(ratio_rows) == 4 and all(r.endswith(" | unsettled |") for r in ratio_rows),
      "2 triplets settle no ratio (fewer than MIN_TRIPLETS)")
check(all(re.search(r"\| \d+\.\d{3} \[\d+\.\d{3}, \d+\.\d{3}\] \| \d+\.\d{3} \[", r)
          for r in ratio_rows), "ratio rows show the interval and the bare-against-itself control")
check(any("start-up" in r for r in rows) and any("verify on" in r for r in rows),
      "scale and fault sections present")
# --rows: only the figures it matches are measured (one pmdstress run here)
p = subprocess.run([sys.executable, RUN, "--only", "fault,scale", "--rows", "^--threads 4096: start"],
                   capture_output=True, text=True, timeout=120)
rows = table_rows(p.stdout)
check(p.returncode in (0, 1) and len(rows) == 1 and rows[0].startswith("| --threads 4096: start-up |")
      and "first touch" not in p.stdout and "1024" not in p.stdout,
      f"--rows: the one figure it matches measured, no other\n{p.stdout[-1500:]}{p.stderr[-500:]}")
check(p.stdout.startswith("bench/run.py --only fault,scale --rows '^--threads 4096: start': ")
      and "--rows '^--threads 4096: start': 7 other figures not measured" in p.stdout,
      f"--rows: quoted in the header, the others counted\n{p.stdout[:300]}")
# the race section: the storm alone, one triplet, its two figures against the bare race loop
p = subprocess.run([sys.executable, RUN, "--quick", "--only", "race", "--triplets", "1",
                    "--rows", "--stressors fault$"], capture_output=True, text=True, timeout=120)
rows = table_rows(p.stdout)
check(p.returncode in (0, 1, 3) and len(rows) == 2 and rows[0].startswith("| collided rounds/s,")
      and rows[1].startswith("| seed-race rounds/s,") and "bare: " in p.stdout
      and "evidence: " in p.stdout,
      f"race: collided and seed-race rounds/s against the bare race loop\n{p.stdout[-1500:]}"
      f"{p.stderr[-500:]}")
p = subprocess.run([sys.executable, RUN, "--only", "scale", "--rows", "nosuch"],
                   capture_output=True, text=True, timeout=60)
check(p.returncode == 2 and "--rows 'nosuch' matches no figure of scale" in p.stderr
      and "  --threads 1024: start-up\n" in p.stderr and "|" not in p.stdout,
      f"--rows matching nothing: exit 2 listing the figures\n{p.stdout[-500:]}{p.stderr[-500:]}")
p = subprocess.run([sys.executable, RUN, "--rows", "(fork"], capture_output=True, text=True,
                   timeout=60)
check(p.returncode == 2 and "'(fork' is not a regular expression" in p.stderr and "[" not in p.stdout,
      f"--rows (fork: exit 2 naming it ({p.stderr.strip()[-200:]})")
# bad arguments are refused before anything is measured
p = subprocess.run([sys.executable, RUN, "--only", "fault,nosuch"], capture_output=True,
                   text=True, timeout=60)
check(p.returncode == 2 and "unknown section 'nosuch'" in p.stderr and "[fault]" not in p.stdout,
      f"an unknown section: exit 2 before the others run\n{p.stdout[-500:]}{p.stderr[-500:]}")
for bad in ("0", "-3", "many"):
    p = subprocess.run([sys.executable, RUN, "--triplets", bad], capture_output=True, text=True,
                       timeout=60)
    check(p.returncode == 2 and f"'{bad}' is not a whole number of triplets" in p.stderr
          and "[" not in p.stdout, f"--triplets {bad}: exit 2 naming it ({p.stderr.strip()[-200:]})")

# The verdict rule on triplets whose answer is known (bare, pmdstress, bare again)
sys.path.insert(0, os.path.join(SOURCE_DIR, "bench"))
sys.argv = sys.argv[:1]
import run as bench  # noqa: E402

# the bare loop is linked as pmdstress is (a dynamic one forks the loader's mappings too)
bare_bin = bench.build_bare()
check(bench.dynamic(bare_bin) == bench.dynamic(bench.PMD),
      f"{bare_bin} linked as {bench.PMD} (dynamic: {bench.dynamic(bench.PMD)})")
check(bench.dynamic("/bin/sh"), "/bin/sh has a PT_INTERP header")
try:
    bench.dynamic(__file__)
    check(False, "a file that is not ELF is refused")
except RuntimeError as e:
    check("not a 64-bit ELF file" in str(e), f"a file that is not ELF is refused ({e})")


def verdict(trips, target=1.03, lower=True):
    t = bench.Table()
    t.add("x", trips, target, "ns", lower_better=lower)
    return t.rows[-1]["verdict"], t.exit_code()

wobble = [0.99, 1.01, 1.0, 0.995, 1.005, 1.0, 0.99, 1.01]
check(verdict([(100 * w, 100, 100 / w) for w in wobble]) == ("yes", 0), "same cost: met")
check(verdict([(100 * w, 110, 100 / w) for w in wobble]) == ("no", 1), "10% dearer: missed")
check(verdict([(100, 100 * f, 100) for f in (0.8, 1.25, 0.9, 1.2, 1.0, 1.1, 0.85, 1.15)])[0]
      == "unsettled", "noise wider than the target: unsettled")
check(verdict([(100, 100, 100)] * 5) == ("unsettled", 3), "5 triplets: unsettled, exit 3")
check(verdict([(100 * w, 115, 130 / w) for w in wobble])[0] == "unsettled",
      "bare against itself off 1 (the machine changed): unsettled")
check(verdict([(100 * w, 99, 100 / w) for w in wobble], target=0.97, lower=False)[0] == "yes",
      "a rate at 0.99 of bare meets >= 0.97")
check(verdict([(100 * w, 50, 100 / w) for w in wobble], target=None, lower=False) == ("info", 0),
      "a row without a target is information: no verdict, not in the exit code")

# BARE_SHAPE=pmdstress: the fork loop runs with pmdstress's extra mappings; other values refused
shaped = subprocess.run([bare_bin, "fork", "8", "0.3", "4k"], capture_output=True, text=True,
                        env=dict(os.environ, BARE_SHAPE="pmdstress"), timeout=60)
check(shaped.returncode == 0 and '"ops":' in shaped.stdout,
      f"BARE_SHAPE=pmdstress runs ({shaped.returncode}: {shaped.stderr.strip()})")


def smaps_shape(smaps):
    """(mappings, resident pages of the mappings fork copies page by page: those
    with anonymous pages, not MADV_DONTFORK, but the 8 MiB arena)."""
    maps = pages = rss = anon = 0
    for line in smaps.splitlines():
        f = line.split()
        if "-" in f[0] and not f[0].endswith(":"):
            maps += 1
            rss = anon = 0
            lo, hi = (int(x, 16) for x in f[0].split("-"))
        elif f[0] == "Rss:":
            rss = int(f[1])
        elif f[0] == "Anonymous:":
            anon = int(f[1])
        elif f[0] == "VmFlags:" and anon and "dc" not in f[1:] and hi - lo != 8 << 20:
            pages += rss // 4
    return maps, pages


def while_running(cmd, env, read):
    """read(pid) of a fork loop 0.7 s into its run: of pmdstress's storm process, the
    child that forks (src/run/supervise.c)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, env=env)
    time.sleep(0.7)
    got = read(storm_of(proc.pid, 0) or proc.pid if cmd[0] == bench.PMD else proc.pid)
    proc.wait(timeout=30)
    return got


def shape(cmd, bare_shape=None):
    """(mappings, copied pages) of a fork loop while it runs."""
    env = dict(os.environ)
    env.pop("BARE_SHAPE", None)
    if bare_shape:
        env["BARE_SHAPE"] = bare_shape

    def read(pid):
        with open(f"/proc/{pid}/smaps") as f:
            return smaps_shape(f.read())
    return while_running(cmd, env, read)


# the shape is the aim9 fork row's, --single-thread, as bench/run.py runs it
loop = [bare_bin, "fork", "8", "1.5", "4k"]
(plain, plain_p), (shaped_n, shaped_p) = shape(loop), shape(loop, "pmdstress")
pmd_n, pmd_p = shape([bench.PMD, "--config", "aim9_4k", "--stressors", "fork", "--size", "8M",
                      "--duration", "1500ms", "--rounds", "1", "--warmup", "0",
                      "--single-thread", "--quiet", "--progress", "off"])
check(shaped_n > plain and abs(shaped_n - pmd_n) <= 1,
      f"the shaped loop has pmdstress's mappings (bare {plain}, shaped {shaped_n}, "
      f"pmdstress {pmd_n})")
check(shaped_p > plain_p and abs(shaped_p - pmd_p) <= 4,
      f"and as many pages that fork copies, within 4 (bare {plain_p}, shaped {shaped_p}, "
      f"pmdstress {pmd_p})")


def tasks(cmd, env=None):
    """How many threads a fork loop has while it runs."""
    return while_running(cmd, env, lambda pid: len(os.listdir(f"/proc/{pid}/task")))


# the threaded rows' reference has as many threads as a default fork run
pmd_t = tasks([bench.PMD, "--config", "aim9_4k", "--stressors", "fork", "--size", "8M",
               "--duration", "1500ms", "--rounds", "1", "--warmup", "0", "--quiet",
               "--progress", "off"])
bare_t = tasks(loop, dict(os.environ, BARE_IDLE_THREADS=str(bench.THREADED_IDLE)))
check(pmd_t == bare_t == bench.THREADED_IDLE + 1,
      f"the threaded rows' bare loop has pmdstress's threads (pmdstress {pmd_t}, bare {bare_t}, "
      f"THREADED_IDLE {bench.THREADED_IDLE})")
bad = subprocess.run([bare_bin, "fork", "8", "0.3", "4k"], capture_output=True, text=True,
                     env=dict(os.environ, BARE_SHAPE="pmd"), timeout=60)
check(bad.returncode == 2 and "BARE_SHAPE=pmd:" in bad.stderr,
      f"BARE_SHAPE=pmd refused, naming it ({bad.returncode}: {bad.stderr.strip()})")
done()
