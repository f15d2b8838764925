#!/usr/bin/env python3
# labels: e2e soak-short
# timeout: 300
"""A compressed soak: configs/soak.ini for 90 s instead of 8 h, sampled each
second. pmdstress's own memory must not grow from the first interval after
the warm-up to the last (no per-round growth), the race must keep running,
and SIGTERM at the end still gives a full JSON report and a complete KTAP file.

The memory bounds, and why they catch a per-round leak: the tool's RSS outside
the arena (16 workers, static build) grows from about 3.7 MiB to 5.4 MiB in
the first minute and then stays within a few KiB (stacks and malloc arenas
being touched for the first time, while the bytes malloc hands out,
heap_bytes, stay flat at ~264 KiB from the first second). So the first 30 s
are the warm-up; the 10 samples after them are compared with the last 10.
RSS may grow by max(512 KiB, 10% of the first), heap_bytes by 256 KiB. The
race runs about 180 rounds a second here, so ~10000 rounds pass between the
windows: a malloc leak of 64 bytes a round is over the heap bound once there
are 4096 of them, and a page-sized leak (a mapping, a stack) in one round of
ten is ~4 MiB, eight times the RSS bound. The run fails if fewer rounds ran
than make the heap bound hold for 64 bytes a round (a loaded machine could
make the soak too slow to mean anything)."""
import json
import os
import re
import signal
import statistics
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, spawn  # noqa: E402

WARMUP = 30            # samples (seconds) left out at the start: RSS levels off by then
WINDOW = 10            # samples per compared window
HEAP_BOUND = 256 * 1024
LEAK_PER_ROUND = 128   # bytes: a malloc leak per race round the heap bound must catch (CI at load: ~4000 rounds)

tmp = tempfile.mkdtemp(prefix="pmdsoak-")
series, report, tap = (os.path.join(tmp, f) for f in ("s.jsonl", "r.json", "r.tap"))
p = spawn(["--config", "soak", "--threads", "16", "--size", "64M", "--interval", "1s",
           "--progress", "off", "--quiet", "--jsonl", series, "--json", report, "--ktap", tap])
# tests/soak/test_soak_long.py runs this same test for PMD_SOAK_SECONDS
SECONDS = int(os.environ.get("PMD_SOAK_SECONDS", "90"))
time.sleep(SECONDS)
p.send_signal(signal.SIGTERM)  # what a CI job's timeout does first
out, err = p.communicate(timeout=60)
# a clean run a signal stopped reports, then ends by that signal (README, Exit status)
check(p.returncode == -signal.SIGTERM,
      f"clean after {SECONDS} s, stopped by SIGTERM and ended by it (rc {p.returncode}) {err[-800:]}")
d = json.load(open(report))
check(d["stop_reason"] == "Terminated", "the report says SIGTERM stopped it")
lines = [json.loads(l) for l in open(series)]
check(len(lines) >= SECONDS - 10, f"{len(lines)} samples")


def median(win, key):
    return statistics.median(l[key] for l in win)


first, last = lines[WARMUP:WARMUP + WINDOW], lines[-WINDOW:]
heap0, heap1 = median(first, "heap_bytes"), median(last, "heap_bytes")
rss0, rss1 = median(first, "tool_rss_bytes"), median(last, "tool_rss_bytes")
bound = max(512 * 1024, rss0 * 0.10)
rounds = median(last, "race_rounds") - median(first, "race_rounds")
secs = median(last, "t_s") - median(first, "t_s")
print(f"# tool RSS {rss0 / 1024:.0f} -> {rss1 / 1024:.0f} KiB (bound +{bound / 1024:.0f} KiB); "
      f"heap {heap0 / 1024:.0f} -> {heap1 / 1024:.0f} KiB; {rounds:.0f} race rounds in "
      f"{secs:.0f} s between the windows ({rounds / max(secs, 1):.0f}/s)")
check(heap1 - heap0 < HEAP_BOUND, f"malloc'd memory flat: {heap0/1024:.0f} KiB -> {heap1/1024:.0f} KiB")
check(rss1 - rss0 < bound,
      f"RSS outside the arena flat (median of {WINDOW} samples after {WARMUP} s, and of the last "
      f"{WINDOW}): {rss0 / 1024:.0f} KiB -> {rss1 / 1024:.0f} KiB, bound +{bound / 1024:.0f} KiB")
check(rounds * LEAK_PER_ROUND > HEAP_BOUND,
      f"enough rounds that a {LEAK_PER_ROUND}-byte leak per round would break the heap bound "
      f"({rounds:.0f} rounds x {LEAK_PER_ROUND} B = {rounds * LEAK_PER_ROUND / 1024:.0f} KiB)")
check(last[-1]["race_hits"] > first[0]["race_hits"], "the race kept running to the end")
check(all(l["events"] == 0 for l in lines), "no events during the soak")
for s in d["stressors"]:
    check(s["status"] == "ran" and s["ops"] > 0, f"{s['name']} ran the whole soak ({s['ops']} ops)")

# the KTAP file a SIGTERM'd run leaves is whole: the plan, every result it promises, the totals
text = open(tap).read()
plan = re.findall(r"^1\.\.(\d+)$", text, re.M)
results = re.findall(r"^(?:not )?ok (\d+) ", text, re.M)
check(text.startswith("TAP version 13\n") and len(plan) == 1,
      f"KTAP: header and one plan line\n{text}")
check(plan and [int(n) for n in results] == list(range(1, int(plan[0]) + 1)),
      f"KTAP: results 1..{plan[0] if plan else '?'} all there, in order ({results})")
totals = re.search(r"^# Totals: pass:(\d+) fail:(\d+) xfail:(\d+) xpass:(\d+) skip:(\d+) "
                   r"error:(\d+)$", text, re.M)
check(totals and plan and sum(map(int, totals.groups())) == int(plan[0]) and
      text.endswith("\n"), f"KTAP: a '# Totals' line that counts every result, the file ends "
      f"whole\n{text[-400:]}")
check(re.search(r"^ok \d+ no_corruption$", text, re.M) is not None, "KTAP: no_corruption passed")

for f in (series, report, tap):
    os.unlink(f)
os.rmdir(tmp)
done()
