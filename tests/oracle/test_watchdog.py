#!/usr/bin/env python3
# labels: e2e
# timeout: 120
"""The watchdog: a worker blocked in the kernel on purpose (--inject hang) is
reported within --hang-timeout with every task's state and wchan, the report
is written, and the run exits 4 without waiting for the stuck thread."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, is_root, run  # noqa: E402

r = run(["--threads", "4", "--duration", "60s", "--size", "16M", "--hang-timeout", "2s",
         "--inject", "hang:0:0:0:3", "--progress", "off", "--stressors", "fault"], timeout=60)
d = r.doc
check(r.rc == 4, f"exit 4 on a hang (got {r.rc})\n{r.show()}")
check(r.elapsed < 15, f"reported within seconds, not the 60s duration ({r.elapsed:.1f}s)")
check(d and d["verdict"]["status"] == "hang", "verdict: hang")
check(d["stop_reason"] == "hang", "stop reason: hang")
hang = [e for e in d["events"]["kept"] if e["kind"] == "hang"]
check(len(hang) == 1 and "without progress" in hang[0]["text"], f"one hang event {hang}")
tasks = d["monitors"]["hang_tasks"]
check(any("pmd/fault/0" in t and "pipe_read" in t for t in tasks),
      "the blocked worker is shown sleeping in pipe_read")
check(sum(1 for t in tasks if t.startswith("task ")) >= 5, "every task is listed")
if is_root():
    check(any(t.strip().startswith("[<") for t in tasks), "kernel stacks are shown (root)")
check("tasks at the hang" in r.out, "the text report shows the task dump")

# a rate-limited partner asleep on purpose is not a hang
r = run(["--threads", "3", "--duration", "4s", "--size", "16M", "--hang-timeout", "1s",
         "--progress", "off", "--quiet", "--stressors", "fault"])
check(r.rc == 0, f"a healthy run with a short hang timeout stays clean (rc {r.rc})")
done()
