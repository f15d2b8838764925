#!/usr/bin/env python3
# labels: e2e
# timeout: 120
"""--jsonl: one JSON object per interval, flushed as it goes, with the live
line's numbers; a run killed with SIGKILL still leaves its series."""
import json
import os
import re
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


def shown(text, value):
    """Does the live line's '2.38M' (or '2.2K', '955') show @value, rounded?"""
    mult = {"K": 1e3, "M": 1e6, "G": 1e9}.get(text[-1], 1)
    digits = text.rstrip("KMG")
    unit = 10 ** -(len(digits.split(".")[1]) if "." in digits else 0) * mult
    return abs(float(digits) * mult - value) <= unit / 2 + 1e-6 * value + 0.05


# the live line shows the sample's numbers, not numbers of its own
bad = []
for line, sample in zip(plain, lines):
    m = re.search(r"ops (\S+)/s\s+faults (\S+)/s\s+thp (\d+)%\s+events (\d+)", line)
    if not m:
        bad.append(line)
        continue
    if not shown(m[1], sample["ops_per_s"]) or not shown(m[2], sample["faults_per_s"]) or \
            abs(int(m[3]) - 100 * sample["thp_share"]) > 0.5 + 1e-9 or \
            int(m[4]) != sample["events"]:
        bad.append(f"{line!r} vs {sample}")
check(not bad, f"each status line has its sample's ops/s, faults/s, THP share and events "
      f"({bad[:2]})")
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
