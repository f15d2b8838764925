#!/usr/bin/env python3
# labels: e2e
# timeout: 240
"""A stall of the whole storm is a hang, wherever in the run it falls.
The default --hang-timeout fits the run (a third of --duration, within
3..60 s: 3.3 s for the default 10 s; it was 60 s, longer than the run, so
a stall of seconds ended clean). The whole process is stopped from outside
(SIGSTOP, then SIGCONT 4 s later; the supervisor and its storm process
both), once in the middle of a 10 s run and once
across its end: the watchdog cannot look while the process is stopped, and
its workers move again right after, so only their own clocks of the gap
tell (monitors.longest_stall_s); both runs must end with exit 4 and a hang
event that says the whole run stalled. A run left alone stays clean, and so
does one whose racers wait for their turn on the baton, with the shortest
timeout."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, check, done, run, storm_of  # noqa: E402

BASE = ["--threads", "4", "--size", "16M", "--progress", "off", "--quiet"]

# the default follows the run's length; below 1 s is refused, 0 asks for the default
r = run(BASE + ["--stressors", "fault", "--duration", "2s"])
got = (r.doc or {}).get("monitors", {}).get("hang_timeout_s")
check(r.rc == 0 and got == 3.0, f"--duration 2s: --hang-timeout 3s by default (got {got})")
for dur, want in [("10s", 3.333), ("600s", 60.0)]:
    path = tempfile.mktemp(suffix=".json")
    p = subprocess.Popen([PMDSTRESS] + BASE + ["--stressors", "fault", "--duration", dur,
                                               "--json", path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    d = {}
    if os.path.exists(path):
        with open(path) as f:
            d = json.load(f)
        os.unlink(path)
    got = d.get("monitors", {}).get("hang_timeout_s")
    check(got is not None and abs(got - want) < 0.01,
          f"--duration {dur}: --hang-timeout {want:.2f}s by default (got {got})")
r = run(BASE + ["--stressors", "fault", "--duration", "1s", "--hang-timeout", "500ms"],
        json_report=False)
check(r.rc == 2 and "--hang-timeout: invalid value '500ms'" in r.err,
      f"--hang-timeout 500ms is refused with one line (rc {r.rc}): {r.err.strip()!r}")
r = run(BASE + ["--stressors", "fault", "--duration", "1s", "--hang-timeout", "7s"])
check(r.rc == 0 and (r.doc or {}).get("monitors", {}).get("hang_timeout_s") == 7.0,
      "an explicit value stands")


def stopped_run(at, length):
    path = tempfile.mktemp(suffix=".json")
    p = subprocess.Popen([PMDSTRESS] + BASE + ["--duration", "10s", "--json", path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t0 = time.monotonic()
    storm = storm_of(p.pid)
    time.sleep(at - (time.monotonic() - t0))
    # the whole run: the supervisor and its storm (src/run/supervise.c), which
    # is in a process group of its own; the storm goes on first, so that the
    # supervisor finds its beats, not a silence of seconds
    p.send_signal(signal.SIGSTOP)
    if storm:
        os.kill(storm, signal.SIGSTOP)
    time.sleep(length)
    if storm:
        os.kill(storm, signal.SIGCONT)
        time.sleep(0.3)
    p.send_signal(signal.SIGCONT)
    out, err = p.communicate(timeout=90)
    elapsed = time.monotonic() - t0
    d = None
    if os.path.exists(path):
        with open(path) as f:
            d = json.load(f)
        os.unlink(path)
    return p.returncode, err, d, elapsed


for at, where in [(3.0, "in the middle of the run"), (8.0, "across the run's end")]:
    rc, err, d, elapsed = stopped_run(at, 4.0)
    hang = [e["text"] for e in (d or {}).get("events", {}).get("kept", []) if e["kind"] == "hang"]
    m = (d or {}).get("monitors", {})
    check(rc == 4 and d and d["verdict"]["status"] == "hang",
          f"stopped 4 s {where}: exit 4, hang (rc {rc}, {d and d['verdict']}) "
          f"{err.strip()[-300:]!r}")
    check(hang and ("the whole run stalled" in hang[0] or "without progress" in hang[0]),
          f"the hang event says so: {hang}")
    check(m.get("longest_stall_s", 0) > 3.5,
          f"the workers' own clocks saw the gap: {m.get('longest_stall_s')}s "
          f"({m.get('longest_stall_worker')})")
    check(elapsed < 10 + 4 + 6, f"and the run ended within seconds ({elapsed:.1f}s)")

# left alone: clean, its longest stall well below the timeout
r = run(BASE + ["--duration", "10s"])
m = (r.doc or {}).get("monitors", {})
check(r.rc == 0, f"a run left alone is clean (rc {r.rc}; longest stall "
      f"{m.get('longest_stall_s')}s of {m.get('longest_stall_worker')}) {r.err.strip()[-200:]!r}")

# More racing groups than CPUs: groups wait for their batch's turn on the baton
# (src/run/gate.c), asleep up to 1 s at a time. That wait is the other batches', not
# a stall: with the shortest --hang-timeout it was taken for a hang (exit 4).
ncpu = len(os.sched_getaffinity(0))
r = run(["--threads", "64", "--duration", "5s", "--hang-timeout", "1s", "--progress", "off",
         "--quiet"])
m = (r.doc or {}).get("monitors", {})
check(r.rc == 0 and (m.get("longest_stall_s") or 0) < 1.0,
      f"64 threads on {ncpu} CPUs, --hang-timeout 1s: clean (rc {r.rc}; longest stall "
      f"{m.get('longest_stall_s')}s of {m.get('longest_stall_worker')}) {r.err.strip()[-200:]!r}")
done()
