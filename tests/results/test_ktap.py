#!/usr/bin/env python3
# labels: e2e results
# timeout: 180
# serial: its fake splat reaches every reader of the kernel log
"""--ktap: the results as the kselftest runner and KernelCI read them, checked
by a real TAP consumer (Perl's prove): a clean run passes; an injected
corruption, a hang, a SIGSEGV on a live chunk and (as root) a kernel splat
each fail exactly their check, and prove fails that test; a skipped stressor,
one that ran but did no operation, and a check that could not run (nothing
moved between nodes, nothing verified, no race possible with one racer, the
kernel log not watched) is "ok ... # SKIP reason"; and '--ktap -' keeps
stdout pure TAP."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, check, done, reachable, run, skip, skip_part  # noqa: E402

PROVE = shutil.which("prove")
if not PROVE:
    skip("prove (Perl's TAP harness, part of Debian's perl) is not installed")

tmp = tempfile.mkdtemp(prefix="pmdktap-")
base = ["--threads", "4", "--duration", "1s", "--size", "16M", "--progress", "off",
        "--stressors", "fault"]


def lasting(duration, stressors="fault"):
    """base with another duration and stressor list."""
    return base[:3] + [duration] + base[4:-1] + [stressors]


def prove(path):
    """Run prove on a KTAP file; (exit status, its output)."""
    p = subprocess.run([PROVE, "-v", "-e", "cat", path], capture_output=True, text=True,
                       timeout=60)
    return p.returncode, p.stdout + p.stderr


def parse(text):
    """Plan, result lines (ok, number, name, directive) and the Totals line of a KTAP text."""
    lines = text.splitlines()
    plan = next((int(m.group(1)) for m in (re.match(r"^1\.\.(\d+)$", ln) for ln in lines) if m),
                None)
    results = []
    for ln in lines:
        m = re.match(r"^(ok|not ok) (\d+) (\S+)(?: # (\S+) ?(.*))?$", ln)
        if m:
            results.append((m.group(1) == "ok", int(m.group(2)), m.group(3), m.group(4),
                            m.group(5)))
    totals = next((ln for ln in lines if ln.startswith("# Totals:")), None)
    return lines, plan, results, totals


def well_formed(text, what):
    lines, plan, results, totals = parse(text)
    check(lines and lines[0] == "TAP version 13", f"{what}: first line is the kselftest header")
    check(plan == len(results), f"{what}: plan 1..{plan} matches {len(results)} results")
    check([r[1] for r in results] == list(range(1, len(results) + 1)),
          f"{what}: results numbered 1..N in order")
    npass = sum(1 for r in results if r[0] and r[3] != "SKIP")
    nfail = sum(1 for r in results if not r[0])
    nskip = sum(1 for r in results if r[3] == "SKIP")
    want = f"# Totals: pass:{npass} fail:{nfail} xfail:0 xpass:0 skip:{nskip} error:0"
    check(totals == want, f"{what}: totals line '{totals}' == '{want}'")
    bad = [ln for ln in lines if ln and not re.match(r"^(TAP version 13|1\.\.\d+|ok |not ok |# )",
                                                        ln)]
    check(not bad, f"{what}: only KTAP lines (stray: {bad[:3]})")
    return {r[2]: r for r in results}


# a clean run: every check passes and prove agrees
tap = os.path.join(tmp, "clean.tap")
r = run(base + ["--quiet", "--ktap", tap])
check(r.rc == 0, f"clean run exits 0\n{r.show()}")
text = open(tap).read() if os.path.exists(tap) else ""
res = well_formed(text, "clean")
for name in ["stressor_fault", "no_corruption", "no_fault_on_live_chunk", "no_hang",
             "no_internal_error"] + (["no_kernel_splat"] if os.geteuid() == 0 else []):
    check(name in res and res[name][0] and res[name][3] is None, f"clean: '{name}' is ok")
m = res.get("no_misplaced_page")
check(m and m[0] and m[3] == "SKIP" and "no held chunk was moved" in m[4],
      f"clean, no migrate stressor: 'no_misplaced_page # SKIP <why>' ({m})")
rc, out = prove(tap)
check(rc == 0 and "Result: PASS" in out, f"prove passes the clean run's KTAP\n{out}")
check(f"seed {r.doc['seed']}" in text, "the KTAP diagnostics name the seed to replay")

# an injected corruption fails exactly "no_corruption", and says where
tap = os.path.join(tmp, "corrupt.tap")
r = run(base + ["--quiet", "--seed", "7", "--fault-group", "4", "--inject", "lost_write:3:17:2:1",
                "--ktap", tap])
check(r.rc == 1, f"injected corruption exits 1\n{r.show()}")
text = open(tap).read() if os.path.exists(tap) else ""
res = well_formed(text, "corrupt")
check("no_corruption" in res and not res["no_corruption"][0], "corrupt: 'no_corruption' is not ok")
check(all(v[0] for k, v in res.items() if k != "no_corruption"),
      "corrupt: every other check still passes")
check(re.search(r"^# LOST_WRITE at chunk 3 page 17 slot 2 ", text, re.M),
      f"corrupt: a diagnostic names class, chunk, page and slot\n{text}")
rc, out = prove(tap)
num = res.get("no_corruption", (None, None))[1]
check(rc != 0 and f"Failed test:  {num}\n" in out and "Result: FAIL" in out,
      f"prove fails the corrupted run on test {num} (no_corruption)\n{out}")



def fails_only(tap_path, rc_want, check_name, rc, what):
    """A failure path: pmdstress's exit status, KTAP well formed, exactly
    @check_name 'not ok', and prove failing on that test's number."""
    text = open(tap_path).read() if os.path.exists(tap_path) else ""
    check(rc == rc_want, f"{what}: exit {rc_want} (got {rc})")
    res = well_formed(text, what)
    r = res.get(check_name)
    check(r is not None and not r[0], f"{what}: '{check_name}' is not ok ({r})")
    check(all(v[0] for k, v in res.items() if k != check_name),
          f"{what}: every other check still passes or skips\n{text}")
    out = prove(tap_path)[1]
    check(r is not None and re.search(rf"Failed test:  {r[1]}\n", out) and "Result: FAIL" in out,
          f"{what}: prove fails the run on test {r and r[1]} ({check_name})\n{out}")
    return text


# a hang (exit 4) fails exactly "no_hang", and the diagnostic says so
tap = os.path.join(tmp, "hang.tap")
r = run(lasting("60s") + ["--quiet", "--hang-timeout", "2s", "--inject", "hang:0:0:0:3",
                          "--ktap", tap], timeout=60)
text = fails_only(tap, 4, "no_hang", r.rc, "hang")
check(re.search(r"^# 1 worker\(s\) stopped making progress$", text, re.M),
      f"hang: a diagnostic before it says what\n{text}")

# a SIGSEGV on a live chunk (exit 1) fails exactly "no_fault_on_live_chunk"
tap = os.path.join(tmp, "segv.tap")
r = run(lasting("30s") + ["--quiet", "--inject", "segv:2:5:0:2", "--ktap", tap],
        timeout=60)
text = fails_only(tap, 1, "no_fault_on_live_chunk", r.rc, "live fault")
check(re.search(r"^# chunk 2 page 5 \(0x[0-9a-f]+\): SIGSEGV", text, re.M),
      f"live fault: a diagnostic names the chunk, page and signal\n{text}")

# a kernel splat (exit 3) fails exactly "no_kernel_splat": a real line in the
# kernel log, written once the run has started (the monitor reads from there)
if os.geteuid() == 0:
    tap = os.path.join(tmp, "splat.tap")
    series = os.path.join(tmp, "splat.jsonl")
    p = subprocess.Popen([PMDSTRESS] + lasting("3s") +
                         ["--quiet", "--interval", "100ms", "--jsonl", series, "--ktap", tap],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and p.poll() is None:
        if os.path.exists(series) and open(series).read().count("\n") >= 2:
            break
        time.sleep(0.02)
    splat = "BUG: Bad page map in process pmdktap  pte:8000000123456867 pmd:12345067"
    with open("/dev/kmsg", "w") as k:
        k.write("<1>pmdstress test_ktap: " + splat + "\n")
    out, err = p.communicate(timeout=60)
    text = fails_only(tap, 3, "no_kernel_splat", p.returncode, "splat")
    check(re.search(r"^# bad page map: .*" + re.escape(splat), text, re.M),
          f"splat: a diagnostic quotes the kernel's line\n{text}")
else:
    skip_part("splat check: writing into /dev/kmsg needs root")

# a stressor that ran but did no operation tested nothing: a skip, never a
# pass, and no failure either (the run is clean). fork paced at 1/s takes its
# first turn 1 s after the start, so a 0.5 s run gives it none.
tap = os.path.join(tmp, "idle.tap")
r = run(lasting("500ms", "fault,fork") + ["--fork-rate", "1", "--quiet", "--ktap", tap])
check(r.rc == 0, f"idle partner: the run is clean, exit 0\n{r.show()}")
check(r.stressor("fork") and r.stressor("fork")["ops"] == 0, "idle partner: fork did 0 ops")
text = open(tap).read() if os.path.exists(tap) else ""
res = well_formed(text, "idle")
s = res.get("stressor_fork")
check(s and s[0] and s[3] == "SKIP" and "did no operation" in s[4],
      f"idle partner: 'ok N stressor_fork # SKIP ... did no operation ...' ({s})")
check(res.get("stressor_fault", (False,))[0] and res["stressor_fault"][3] is None,
      "idle partner: the busy fault stressor is still a plain ok")
rc, out = prove(tap)
check(rc == 0 and "Result: PASS" in out and "# SKIP ran " in out,
      f"idle partner: prove passes and counts the skip\n{out}")

# one racer: no race was possible, and the report says so; nothing verified: no
# corruption check
tap = os.path.join(tmp, "alone.tap")
r = run(base[:1] + ["1"] + base[2:] + ["--ktap", tap], json_report=False)
text = open(tap).read() if os.path.exists(tap) else ""
res = well_formed(text, "one racer")
rw = res.get("seed_race_exercised")
check(r.rc == 0 and rw and rw[0] and rw[3] == "SKIP" and "one racer per group" in rw[4],
      f"--threads 1: 'seed_race_exercised # SKIP one racer per group ...' ({rw})")
check(re.search(r"^no race was possible: one racer per group", r.out, re.M),
      f"--threads 1: the text report says no race was possible\n{r.out[-600:]}")
tap = os.path.join(tmp, "noverify.tap")
r = run(base + ["--quiet", "--verify", "off", "--ktap", tap], json_report=False)
res = well_formed(open(tap).read() if os.path.exists(tap) else "", "verify off")
c = res.get("no_corruption")
check(r.rc == 0 and c and c[0] and c[3] == "SKIP" and "--verify off" in c[4],
      f"--verify off: 'no_corruption # SKIP verification off ...' ({c})")

# '--ktap -': stdout is pure TAP, the text report and the verdict go to stderr
p = subprocess.run([PMDSTRESS] + base + ["--ktap", "-"], capture_output=True, text=True,
                   timeout=60)
check(p.returncode == 0, f"--ktap - exits 0\n{p.stderr[-2000:]}")
well_formed(p.stdout, "stdout")
check("ran " in p.stderr and "stressor" in p.stderr,
      "--ktap -: the text report went to stderr")
path = os.path.join(tmp, "stdout.tap")
with open(path, "w") as f:
    f.write(p.stdout)
rc, out = prove(path)
check(rc == 0, f"prove passes what --ktap - printed\n{out}")

p = subprocess.run([PMDSTRESS] + base + ["--ktap", "-", "--json", "-"], capture_output=True,
                   text=True, timeout=60)
check(p.returncode == 2 and "both want stdout" in p.stderr and not p.stdout,
      f"--ktap - with --json - is a usage error (exit 2, one line): {p.stderr.strip()}")

# a stressor that cannot run here is 'ok N name # SKIP reason', never a pass
lst = subprocess.run([PMDSTRESS, "list"], capture_output=True, text=True).stdout
root_only = [m.group(1) for m in re.finditer(r"^\s+(\w+)\s.*\[root\]", lst, re.M)]
setpriv = shutil.which("setpriv")
if root_only and setpriv and os.geteuid() == 0:
    os.chmod(tmp, 0o777)
    tap = os.path.join(tmp, "skip.tap")
    p = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", reachable(PMDSTRESS)]
                       + base[:-1] + [f"fault,{root_only[0]}", "--quiet", "--ktap", tap],
                       capture_output=True, text=True, timeout=60)
    # named with --stressors and not run: the run did not test what was asked (exit 125)
    check(p.returncode == 125 and f"{root_only[0]}, named by --stressors, could not run" in
          p.stderr, f"as nobody, fault runs and {root_only[0]} is skipped: exit 125\n{p.stderr}")
    text = open(tap).read() if os.path.exists(tap) else ""
    res = well_formed(text, "skip")
    s = res.get(f"stressor_{root_only[0]}")
    check(s and s[0] and s[3] == "SKIP" and "root" in s[4],
          f"skipped stressor: 'ok N stressor_{root_only[0]} # SKIP <reason>' ({s})")
    ks = res.get("no_kernel_splat")
    restricted = open("/proc/sys/kernel/dmesg_restrict").read().strip() == "1"
    if restricted:
        check(ks and ks[0] and ks[3] == "SKIP" and
              re.match(r"kernel log not watched: /dev/kmsg .*; only the taint mask was$", ks[4]),
              f"as nobody, dmesg_restrict=1: 'no_kernel_splat # SKIP kernel log not watched: "
              f"...' ({ks})")
    else:
        check(ks and ks[0] and ks[3] is None, f"as nobody, dmesg_restrict=0: the log was "
              f"read, no_kernel_splat is ok ({ks})")
    rc, out = prove(tap)
    check(rc == 0 and "Result: PASS" in out and "# SKIP" in out,
          f"prove counts the skip, not a failure\n{out}")
else:
    skip_part(f"skip-path check: needs a [root] stressor ({root_only}), setpriv and root")

shutil.rmtree(tmp, ignore_errors=True)
done()
