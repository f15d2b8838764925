#!/usr/bin/env python3
# labels: e2e
# timeout: 120
"""--jsonl: one JSON object per interval, flushed as it goes, with the live
line's numbers; a run killed with SIGKILL still leaves its series."""
import json
import os
import signal
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, run, spawn  # noqa: E402

series = tempfile.mktemp(suffix=".jsonl")
r = run(["--threads", "6", "--duration", "3s", "--size", "16M", "--interval", "250ms",
         "--progress", "plain", "--jsonl", series, "--stressors", "fault"])
check(r.rc == 0, f"run with --jsonl exits 0\n{r.show()}")
lines = [json.loads(l) for l in open(series)]
check(10 <= len(lines) <= 14, f"about one line per 250 ms over 3 s ({len(lines)})")
keys = {"t_s", "ops", "ops_per_s", "faults", "faults_per_s", "thp_share", "race_rounds",
        "race_hits", "events", "rss_bytes", "arena_rss_bytes", "tool_rss_bytes", "heap_bytes"}
check(all(keys <= set(l) for l in lines), f"every line has {sorted(keys)}")
check(all(b["t_s"] > a["t_s"] for a, b in zip(lines, lines[1:])), "time moves forward")
check(all(b["ops"] >= a["ops"] and b["race_hits"] >= a["race_hits"] for a, b in zip(lines, lines[1:])),
      "ops and race hits are running totals")
check(lines[-1]["ops"] <= r.stressor("fault")["ops"], "the last sample is at most the final total")
check(all(l["rss_bytes"] > 0 and l["heap_bytes"] > 0 for l in lines), "memory figures present")
plain = [l for l in r.out.splitlines() if l.startswith("[") and "ops" in l]
check(len(plain) == len(lines), f"one status line per sample ({len(plain)} vs {len(lines)})")
os.unlink(series)

p = spawn(["--threads", "4", "--duration", "60s", "--size", "16M", "--interval", "200ms",
           "--progress", "off", "--jsonl", series, "--stressors", "fault"])
time.sleep(2.0)
p.send_signal(signal.SIGKILL)
p.wait(timeout=30)
lines = [json.loads(l) for l in open(series)]
check(len(lines) >= 5, f"a killed run leaves its series: {len(lines)} complete lines")
os.unlink(series)

r = run(["--jsonl", "/nonexistent/dir/x.jsonl", "--duration", "1s"], json_report=False)
check(r.rc == 2 and "--jsonl: cannot write '/nonexistent/dir/x.jsonl'" in r.err,
      f"an unwritable --jsonl path: exit 2 naming it ({r.err.strip()!r})")
done()
