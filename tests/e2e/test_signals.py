#!/usr/bin/env python3
# labels: e2e
# timeout: 120
"""Ctrl-C ends a run cleanly with a full report; a second one exits at once."""
import os
import signal
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, spawn  # noqa: E402
import json  # noqa: E402

for sig, name in [(signal.SIGINT, "Interrupt"), (signal.SIGTERM, "Terminated"),
                  (signal.SIGHUP, "Hangup")]:
    path = tempfile.mktemp(suffix=".json")
    p = spawn(["--threads", "16", "--duration", "60s", "--progress", "plain", "--json", path])
    time.sleep(1.5)
    t0 = time.monotonic()
    p.send_signal(sig)
    out, err = p.communicate(timeout=30)
    dt = time.monotonic() - t0
    check(p.returncode == 0, f"{name}: exit 0 after a clean stop (rc {p.returncode}) {err[-500:]}")
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
check(p.returncode in (0, 130), f"double SIGINT: exits 0 (stopped first) or 130 (at once): {p.returncode}")
done()
