#!/usr/bin/env python3
# labels: e2e
# timeout: 180
# serial: its fake splat reaches every reader of the kernel log
"""--single-thread: the one worker runs on the main thread and no other
thread exists while it runs (so fork and exec copy a single-threaded
process, as AIM9's did). fork, exec, brk and page each run clean with it in
bench rounds; the process has one task all along; a kernel splat written
during the round is still caught (the log is read after the round); SIGINT
stops it with a report and then ends it by the signal; more than one worker
is refused with exit 2."""
import os
import signal
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, is_root, run, skip_part, spawn, storm_of  # noqa: E402

COMMON = ["--config", "aim9", "--size", "32M", "--rounds", "1", "--no-warmup"]
BASE = COMMON + ["--duration", "500ms", "--rounds", "2", "--progress", "off",
                 "--quiet", "--single-thread"]

for st in ["fork", "exec", "brk", "page"]:
    r = run(BASE + ["--stressors", st])
    s = r.stressor(st) if r.doc else None
    check(r.rc == 0 and s and s["status"] == "ran" and s["ops"] > 0,
          f"{st} --single-thread: runs clean in bench rounds\n{r.show()}")
    if r.doc:
        check(r.doc["bench"]["measured_rounds"] == 2,
              f"{st}: two measured rounds ({r.doc['bench']['measured_rounds']})")

# one task while it runs: sample /proc/PID/task during a 3 s fork round
p = spawn(COMMON + ["--duration", "3s", "--stressors", "fork", "--progress", "off",
                       "--quiet", "--single-thread"])
time.sleep(0.5)
storm = storm_of(p.pid)  # the process that forks: pmdstress's child pmd/storm
counts = set()
for _ in range(20):
    try:
        counts.add(len(os.listdir(f"/proc/{storm}/task")))
    except FileNotFoundError:
        break
    time.sleep(0.1)
out, err = p.communicate(timeout=60)
check(p.returncode == 0 and counts == {1},
      f"one task all through the round (seen {sorted(counts)}; rc {p.returncode} {err[-300:]!r})")

# the same run without it has the worker beside the main thread: the test can tell
p = spawn(COMMON + ["--duration", "2s", "--stressors", "fork", "--progress", "off", "--quiet"])
time.sleep(0.8)
n = len(os.listdir(f"/proc/{storm_of(p.pid)}/task"))
p.communicate(timeout=60)
check(n >= 2, f"without --single-thread the same run has its threads ({n} tasks)")

# a signal stops the round: report, then the signal
p = spawn(COMMON + ["--duration", "30s", "--stressors", "fork", "--progress", "off",
                       "--single-thread"])
time.sleep(1.5)
t0 = time.monotonic()
p.send_signal(signal.SIGINT)
out, err = p.communicate(timeout=60)
check(p.returncode == -signal.SIGINT and "stopped: Interrupt" in out and
      time.monotonic() - t0 < 10,
      f"SIGINT: a report, then the signal (rc {p.returncode}, {err[-300:]!r})")

# a kernel splat during the round is read after it
if is_root():
    p = spawn(COMMON + ["--duration", "3s", "--stressors", "fork", "--progress", "off",
                           "--quiet", "--single-thread"])
    time.sleep(1.0)
    with open("/dev/kmsg", "w") as k:
        k.write("<1>pmdstress test: BUG: Bad page state in process pmdtest  pfn:123456\n")
    out, err = p.communicate(timeout=60)
    check(p.returncode == 3, f"a splat during a single-thread round: exit 3 (rc {p.returncode})")
else:
    skip_part("kernel-log check: writing into /dev/kmsg needs root")

r = run(["--single-thread", "--threads", "8", "--duration", "1s"], json_report=False)
check(r.rc == 2 and "--single-thread: needs exactly one worker" in r.err and "has 8" in r.err,
      f"--single-thread with 8 workers: exit 2 naming it ({r.err.strip()!r})")
done()
