#!/usr/bin/env python3
# labels: e2e
# timeout: 120
"""Ctrl-C ends a run cleanly with a full report, then by the signal; a second
one exits at once, also during start-up and while the report is being
written."""
import os
import signal
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "forkexec"))
from pmdtest import check, done, spawn, storm_of  # noqa: E402
from children import become_subreaper, leftovers  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402

for sig, name in [(signal.SIGINT, "Interrupt"), (signal.SIGTERM, "Terminated"),
                  (signal.SIGHUP, "Hangup")]:
    path = tempfile.mktemp(suffix=".json")
    p = spawn(["--threads", "16", "--duration", "60s", "--progress", "plain", "--json", path])
    time.sleep(1.5)
    t0 = time.monotonic()
    p.send_signal(sig)
    out, err = p.communicate(timeout=30)
    dt = time.monotonic() - t0
    # the report and the restore done, a clean run ends by the signal, so that a shell
    # loop or script around it stops too (0 would tell it the run finished)
    check(p.returncode == -sig, f"{name}: ends by {name} after a clean stop (rc {p.returncode}) "
          f"{err[-500:]}")
    check(f"stopped by {name}" in err, f"{name}: stderr says the signal stopped the run")
    check(dt < 5, f"{name}: stopped within {dt:.2f}s")
    check("verdict: clean" in out, f"{name}: full text report printed")
    if check(os.path.exists(path), f"{name}: JSON report written"):
        d = json.load(open(path))
        check(d["stop_reason"] == name, f"{name}: stop_reason {d['stop_reason']!r}")
        check(d["duration_s"] < 10, "ran for the time until the signal, not the duration")
        check(d["stressors"][0]["ops"] > 0, "work was counted up to the signal")
        os.unlink(path)

# a second SIGINT while the first stop is under way exits at once
p = spawn(["--threads", "8", "--duration", "60s", "--progress", "off", "--hang-timeout", "30s"])
time.sleep(1.0)
p.send_signal(signal.SIGINT)
p.send_signal(signal.SIGINT)
out, err = p.communicate(timeout=30)
check(p.returncode in (-signal.SIGINT, 130),
      f"double SIGINT: ends by SIGINT (stopped first) or 130 (at once): {p.returncode}")

# a second SIGINT while the report is being written exits at once: here the
# report cannot be written, its pipe is full and nobody reads it
p = spawn(["--threads", "300", "--duration", "60s", "--progress", "off", "--json", "-"])
time.sleep(2.0)
p.send_signal(signal.SIGINT)
time.sleep(1.5)  # stopped, joined, writing the report into the full pipe
t0 = time.monotonic()
p.send_signal(signal.SIGINT)
try:
    p.wait(timeout=5)
    dt = time.monotonic() - t0
    check(p.returncode == 130 and dt < 1.0,
          f"second SIGINT during the report: exit 130 at once (rc {p.returncode}, {dt:.2f}s)")
except subprocess.TimeoutExpired:
    p.kill()
    p.wait()
    check(False, "second SIGINT during the report: still running 5 s later")


# During start-up: 3000 threads being made, the setups after them. Signals are
# blocked from the start; unless a thread waits for them, the first stays
# pending and a second merges into it, and the run goes on until its main loop.
STARTUP = ["--stressors", "fault,fork", "--threads", "3000", "--size", "128M",
           "--fault-group", "64", "--duration", "60s", "--progress", "off"]
become_subreaper()  # what a run forks and leaves behind comes to us


def tasks(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return -1


def sigint_pending(pid):
    """SIGINT sent to the process and not yet taken by any of its threads."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("ShdPnd:"):
                    return bool(int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)))
    except OSError:
        pass
    return False


def first_sigint_in_startup(p, what):
    """Send SIGINT once threads are being made; True if it was taken before they all were.
    The threads are the storm's, the child process pmdstress passes the signal on to."""
    storm = storm_of(p.pid) or p.pid
    end = time.monotonic() + 20
    while tasks(storm) < 50 and p.poll() is None and time.monotonic() < end:
        time.sleep(0.001)
    p.send_signal(signal.SIGINT)
    t0 = time.monotonic()
    while (sigint_pending(p.pid) or sigint_pending(storm)) and time.monotonic() - t0 < 5:
        time.sleep(0.0005)
    # counted after it was taken: at most what there was when it was
    n = tasks(storm)
    return check(0 < n < 3000, f"{what}: the first SIGINT was taken while the threads were "
                 f"still being made ({n} of 3000 there after {time.monotonic() - t0:.3f}s)")


for twice in (False, True):
    what = "second SIGINT during start-up" if twice else "SIGINT during start-up"
    path = tempfile.mktemp(suffix=".json")
    p = spawn(STARTUP + ["--json", path])
    first_sigint_in_startup(p, what)
    t0 = time.monotonic()
    if twice:
        made = tasks(storm_of(p.pid) or p.pid)  # at least what there is when it arrives
        p.send_signal(signal.SIGINT)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    dt = time.monotonic() - t0
    if twice:
        check(0 < made < 3000 and p.returncode == 128 + signal.SIGINT and dt < 1.0,
              f"{what}: sent with {made} of 3000 threads made, exit 130 at once "
              f"(rc {p.returncode}, {dt:.2f}s) {err[-300:]!r}")
        check("exiting at once, no report" in err and "stopped by" not in err,
              f"{what}: says it exits without a report {err[-300:]!r}")
        check("verdict" not in out and not os.path.exists(path), f"{what}: no report written")
    else:
        # the start-up completes, then the round ends by it at once: a full report
        check(p.returncode == -signal.SIGINT and "stopped by Interrupt" in err,
              f"{what}: a clean stop, then ends by SIGINT (rc {p.returncode}) {err[-300:]!r}")
        doc = json.load(open(path)) if os.path.exists(path) else {}
        check(doc.get("stop_reason") == "Interrupt" and doc.get("duration_s", 99) < 5,
              f"{what}: the report says so and the round did not run on "
              f"({doc.get('stop_reason')!r}, {doc.get('duration_s')} s)")
    # the workers are threads; the fork stressor's children die with the process
    end = time.monotonic() + 3
    while [x for x in leftovers() if x[1] != "Z"] and time.monotonic() < end:
        time.sleep(0.05)
    left = leftovers()
    check(not left, f"{what}: nothing left behind ({left})")
    if os.path.exists(path):
        os.unlink(path)
done()
