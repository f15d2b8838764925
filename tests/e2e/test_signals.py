#!/usr/bin/env python3
# labels: e2e
# timeout: 120
"""Ctrl-C ends a run cleanly with a full report, then by the signal; a second
one exits at once, also while the report is being written."""
import os
import signal
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, spawn  # noqa: E402
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
done()
