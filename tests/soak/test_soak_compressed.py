#!/usr/bin/env python3
# labels: e2e soak-short
# timeout: 300
"""A compressed soak: configs/soak.ini for 90 s instead of 8 h, sampled each
second. pmdstress's own memory must not grow from the first intervals to
the last (no per-round growth), the race must keep running, and SIGTERM at
the end still gives a full report."""
import json
import os
import signal
import statistics
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, spawn  # noqa: E402

series = tempfile.mktemp(suffix=".jsonl")
report = tempfile.mktemp(suffix=".json")
p = spawn(["--config", "soak", "--threads", "16", "--size", "64M", "--interval", "1s",
           "--progress", "off", "--quiet", "--jsonl", series, "--json", report])
time.sleep(90)
p.send_signal(signal.SIGTERM)  # what a CI job's timeout does first
out, err = p.communicate(timeout=60)
check(p.returncode == 0, f"clean after 90 s, stopped by SIGTERM (rc {p.returncode}) {err[-800:]}")
d = json.load(open(report))
check(d["stop_reason"] == "Terminated", "the report says SIGTERM stopped it")
lines = [json.loads(l) for l in open(series)]
check(len(lines) >= 80, f"{len(lines)} samples")
first, last = lines[5:15], lines[-10:]   # skip the start-up seconds
heap0, heap1 = statistics.median(l["heap_bytes"] for l in first), statistics.median(l["heap_bytes"] for l in last)
rss0, rss1 = statistics.median(l["tool_rss_bytes"] for l in first), statistics.median(l["tool_rss_bytes"] for l in last)
check(heap1 - heap0 < 256 * 1024, f"malloc'd memory flat: {heap0/1024:.0f} KiB -> {heap1/1024:.0f} KiB")
check(rss1 - rss0 < 4 * 1024 * 1024,
      f"RSS outside the arena flat (median of 10 samples): {rss0/1048576:.1f} MiB -> {rss1/1048576:.1f} MiB")
check(last[-1]["race_hits"] > first[0]["race_hits"], "the race kept running to the end")
check(all(l["events"] == 0 for l in lines), "no events during the soak")
for s in d["stressors"]:
    check(s["status"] == "ran" and s["ops"] > 0, f"{s['name']} ran the whole soak ({s['ops']} ops)")
os.unlink(series)
os.unlink(report)
done()
