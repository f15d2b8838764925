#!/usr/bin/env python3
# labels: vm e2e
# timeout: 300
"""Taint, in a disposable guest (tainting is permanent until reboot, so never
on the host): a taint bit set while pmdstress runs is reported as an event
with its letter, exit 3; a kernel splat written to the guest's log is caught
the same way. Skips (77) where no guest can run here (pmd-vm exit 125)."""
import json
import os
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, check, done, skip  # noqa: E402
from pmdvm import guest  # noqa: E402

BINARY = os.path.abspath(PMDSTRESS)
if not os.access(BINARY, os.X_OK):
    skip(f"no pmdstress binary at {BINARY}")
pmd = shlex.quote(BINARY)
run = (f"{pmd} --stressors fault --threads 2 --size 16M --duration 8s --progress off "
       f"--hang-timeout 60s")
SCRIPT = f"""
cat /proc/sys/kernel/tainted > /out/taint.before
{run} --json /out/taint.json > /out/taint.txt 2>&1 &
pid=$!
sleep 3
echo 64 > /proc/sys/kernel/tainted
wait $pid
echo $? > /out/taint.rc
cat /proc/sys/kernel/tainted > /out/taint.after
"""
g = guest(["sh", "-c", SCRIPT], kernel="6.1", name="taint", nodes=1, cpus_per_node=2,
          mem_per_node=512, timeout=120, carry=[BINARY])
if g.cannot_run:
    skip(f"no guest can run here: {g.reason}")
check(g.rc == 0, f"the guest script ran\n{g.show()}")
rc = (g.file("taint.rc") or "").strip()
before = int((g.file("taint.before") or "0").strip() or 0)
check(rc == "3", f"a new taint bit: exit 3 (got {rc!r})\n{(g.file('taint.txt') or '')[-2000:]}")
doc = json.loads(g.file("taint.json") or "{}")
ev = [e for e in doc.get("events", {}).get("kept", []) if e["kind"] == "taint"]
check(len(ev) == 1 and ev[0]["text"].startswith("new taint U"),
      f"one taint event naming the letter U: {[e['text'] for e in ev]}")
check(doc.get("verdict", {}).get("status") == "kernel", f"verdict {doc.get('verdict')}")
check(int(doc["monitors"]["taint_start"], 16) == before, "the start mask is recorded")
check(int(doc["monitors"]["taint_end"], 16) & 64, "the end mask has the new bit")
done()
