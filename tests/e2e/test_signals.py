#!/usr/bin/env python3
# labels: e2e
# timeout: 300
"""Ctrl-C ends a run cleanly with a full report, then by the signal; a second
signal exits at once without a report (exit 6), also during start-up and
while the report is being written. The same signal again from a process
(GNU timeout signals the child, then its process group) is the same stop
and costs nothing: timeout(1) itself stops runs that all write their report.
A second Ctrl-C comes from the terminal (a pty here) and exits at once."""
import fcntl
import os
import shutil
import signal
import sys
import tempfile
import termios
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "forkexec"))
from pmdtest import PMDSTRESS, check, done, skip_part, spawn, storm_of  # noqa: E402
from children import become_subreaper, leftovers  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402

NO_REPORT = 6  # a second signal: exit at once, no report (sigwatch.h)


def spawn_on_tty(args):
    """pmdstress in a session of its own whose controlling terminal is a new
    pty, in the foreground: a ^C written to the master is the terminal's
    SIGINT (sent by the kernel), as a user's Ctrl-C is. Returns (Popen, master)."""
    master, slave = os.openpty()

    def foreground():
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)  # stdin is the pty's slave

    p = subprocess.Popen([PMDSTRESS] + list(args), stdin=slave, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, preexec_fn=foreground)
    os.close(slave)
    return p, master


def ctrl_c(master):
    os.write(master, b"\x03")

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

# the same SIGINT twice from a process, as a shell or a runner signals the process
# and then its group: one stop, with its report
path = tempfile.mktemp(suffix=".json")
p = spawn(["--threads", "8", "--duration", "60s", "--progress", "off", "--hang-timeout", "30s",
           "--json", path])
time.sleep(1.0)
p.send_signal(signal.SIGINT)
p.send_signal(signal.SIGINT)
out, err = p.communicate(timeout=30)
check(p.returncode == -signal.SIGINT and "stopped by Interrupt" in err and os.path.exists(path),
      f"SIGINT twice from a process: one stop, the report written, then ends by SIGINT "
      f"(rc {p.returncode}) {err[-300:]!r}")
if os.path.exists(path):
    os.unlink(path)

# GNU timeout: SIGTERM to the child, then to its process group (the child again). Runs
# stopped within the stop's first second, when the repeat lands in the stop: every one
# writes its report (before the repeat was the same stop, about 1 in 5 lost it)
timeout = shutil.which("timeout")
if not timeout:
    skip_part("no timeout(1) (coreutils) to stop runs with")
else:
    lost, again, runs = [], 0, 12
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "s.json")
        for i in range(runs):
            if os.path.exists(path):
                os.unlink(path)
            q = subprocess.run([timeout, "-s", "TERM", "1", PMDSTRESS, "--threads", "8",
                                "--duration", "30s", "--json", path, "--quiet"],
                               capture_output=True, text=True, timeout=60)
            again += "again from pid" in q.stderr
            if not os.path.exists(path) or q.returncode != 124:
                lost.append((q.returncode, q.stderr.strip()[-200:]))
        check(not lost, f"timeout -s TERM 1: {runs - len(lost)} of {runs} runs wrote their "
              f"report and timed out (124); the repeat of SIGTERM was seen in {again} ({lost})")
        # --foreground: the child alone is signalled, once
        q = subprocess.run([timeout, "--foreground", "--preserve-status", "-s", "INT", "1",
                            PMDSTRESS, "--threads", "4", "--duration", "30s", "--json", path,
                            "--quiet"], capture_output=True, text=True, timeout=60)
        check(q.returncode == 128 + signal.SIGINT and os.path.exists(path),
              f"timeout --foreground --preserve-status: the report, then 130 "
              f"(rc {q.returncode}) {q.stderr[-200:]!r}")

# a second Ctrl-C (the terminal's) while the report is being written exits at once: here
# the report cannot be written, its pipe is full and nobody reads it. The same SIGINT
# from a process in between is the same stop: it does not end the wait.
p, tty = spawn_on_tty(["--threads", "300", "--duration", "60s", "--progress", "off",
                       "--json", "-"])
time.sleep(2.0)
ctrl_c(tty)
time.sleep(1.5)  # stopped, joined, writing the report into the full pipe
p.send_signal(signal.SIGINT)
time.sleep(0.5)
check(p.poll() is None, f"the same SIGINT from a process during the report: still writing it "
      f"(rc {p.returncode})")
t0 = time.monotonic()
ctrl_c(tty)
try:
    p.wait(timeout=5)
    dt = time.monotonic() - t0
    err = p.stderr.read()
    # "at once": the report blocks for good on its full pipe, so any exit is the
    # second signal's; seconds allow for a loaded machine
    check(p.returncode == NO_REPORT and dt < 4.0,
          f"second Ctrl-C during the report: exit {NO_REPORT} at once (rc {p.returncode}, "
          f"{dt:.2f}s) {err[-300:]!r}")
    check("SIGINT again from pid" in err and "exiting at once, no report (exit 6)" in err,
          f"stderr says the repeat was the same stop, then the exit at once {err[-400:]!r}")
except subprocess.TimeoutExpired:
    p.kill()
    p.wait()
    check(False, "second Ctrl-C during the report: still running 5 s later")
os.close(tty)

# a different signal during the stop is a second one too
p = spawn(["--threads", "300", "--duration", "60s", "--progress", "off", "--json", "-"])
time.sleep(2.0)
p.send_signal(signal.SIGINT)
time.sleep(1.5)
t0 = time.monotonic()
p.send_signal(signal.SIGTERM)
try:
    p.wait(timeout=5)
    dt = time.monotonic() - t0
    err = p.stderr.read()
    check(p.returncode == NO_REPORT and dt < 4.0 and "SIGTERM after SIGINT" in err,
          f"SIGTERM after SIGINT during the report: exit {NO_REPORT} at once (rc "
          f"{p.returncode}, {dt:.2f}s) {err[-300:]!r}")
except subprocess.TimeoutExpired:
    p.kill()
    p.wait()
    check(False, "SIGTERM after SIGINT during the report: still running 5 s later")


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


for second in (None, signal.SIGINT, signal.SIGTERM):
    what = ("SIGINT during start-up" if not second else
            f"{signal.Signals(second).name} after SIGINT during start-up")
    path = tempfile.mktemp(suffix=".json")
    p = spawn(STARTUP + ["--json", path])
    first_sigint_in_startup(p, what)
    t0 = time.monotonic()
    if second:
        made = tasks(storm_of(p.pid) or p.pid)  # at least what there is when it arrives
        p.send_signal(second)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    dt = time.monotonic() - t0
    if second == signal.SIGTERM:
        check(0 < made < 3000 and p.returncode == NO_REPORT and dt < 1.0,
              f"{what}: sent with {made} of 3000 threads made, exit {NO_REPORT} at once "
              f"(rc {p.returncode}, {dt:.2f}s) {err[-300:]!r}")
        check("exiting at once, no report" in err and "stopped by" not in err,
              f"{what}: says it exits without a report {err[-300:]!r}")
        check("verdict" not in out and not os.path.exists(path), f"{what}: no report written")
    else:
        # the start-up completes, then the round ends by it at once: a full report; the
        # same SIGINT again from a process is the same stop
        check(p.returncode == -signal.SIGINT and "stopped by Interrupt" in err,
              f"{what}: a clean stop, then ends by SIGINT (rc {p.returncode}) {err[-300:]!r}")
        doc = json.load(open(path)) if os.path.exists(path) else {}
        check(doc.get("stop_reason") == "Interrupt" and doc.get("duration_s", 99) < 5,
              f"{what}: the report says so and the round did not run on "
              f"({doc.get('stop_reason')!r}, {doc.get('duration_s')} s)")
        if second:
            check("SIGINT again from pid" in err, f"{what}: said once it is the same stop "
                  f"{err[-300:]!r}")
    # the workers are threads; the fork stressor's children die with the process
    end = time.monotonic() + 3
    while [x for x in leftovers() if x[1] != "Z"] and time.monotonic() < end:
        time.sleep(0.05)
    left = leftovers()
    check(not left, f"{what}: nothing left behind ({left})")
    if os.path.exists(path):
        os.unlink(path)
done()
