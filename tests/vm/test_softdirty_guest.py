#!/usr/bin/env python3
# labels: vm e2e
# timeout: 400
"""The softdirty stressor's check, in a guest whose kernel tracks soft-dirty
(Debian's 6.12 has CONFIG_MEM_SOFT_DIRTY; this host's kernel does not).

Clean: fault + softdirty for 8 s, chunks written after a clear are judged
page by page and every page reads soft-dirty: exit 0, KTAP
no_lost_soft_dirty ok. Broken on purpose, for real: the same run while the
guest's shell writes 4 to the storm's /proc/PID/clear_refs every 50 ms, a
clear the stressor does not know of, exactly as a kernel that drops the bit
would look: exit 1, status soft_dirty, events naming chunk, page, stamp and
pagemap entry. Skips (77) where no guest can run here."""
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
run = (f"{pmd} --stressors fault,softdirty --threads 3 --size 16M --duration 8s --progress off "
       f"--hang-timeout 60s --softdirty-mode soft-dirty")
SCRIPT = f"""
{run} --json /out/clean.json --ktap /out/clean.ktap > /out/clean.txt 2>&1
echo $? > /out/clean.rc
{run} --softdirty-rate 2 --json /out/outside.json > /out/outside.txt 2>&1 &
pid=$!
sleep 1
set -- $(cat /proc/$pid/task/$pid/children); storm=$1
n=0
while kill -0 $pid 2>/dev/null; do
  echo 4 > /proc/$storm/clear_refs 2>/dev/null && n=$((n + 1))
  sleep 0.05
done
wait $pid
echo $? > /out/outside.rc
echo $n > /out/outside.clears
"""
g = guest(["sh", "-c", SCRIPT], kernel="6.12", name="softdirty", nodes=1, cpus_per_node=2,
          mem_per_node=512, timeout=300, carry=[BINARY])
if g.cannot_run:
    skip(f"no guest can run here: {g.reason}")
check(g.rc == 0, f"the guest script ran\n{g.show()}")


def counters(doc):
    s = [x for x in doc.get("stressors", []) if x["name"] == "softdirty"]
    return {k: v["total"] for k, v in s[0].get("counters", {}).items()} if s else {}


rc = (g.file("clean.rc") or "").strip()
doc = json.loads(g.file("clean.json") or "{}")
n = counters(doc)
check(rc == "0" and doc.get("verdict", {}).get("status") == "clean",
      f"clean: exit 0 ({rc!r}, {doc.get('verdict')})\n{(g.file('clean.txt') or '')[-1500:]}")
check(n.get("clears", 0) > 0 and n.get("referenced") == 0,
      f"the kernel tracks soft-dirty: soft-dirty clears, none of the referenced bits {n}")
check(n.get("checked", 0) > 0 and n.get("pages", 0) > 0 and n.get("lost") == 0,
      f"chunks written after a clear were judged, every page soft-dirty {n}")
ktap = g.file("clean.ktap") or ""
check("\nok " in ktap and any(line.startswith("ok ") and line.endswith("no_lost_soft_dirty")
                             for line in ktap.splitlines()),
      f"KTAP: no_lost_soft_dirty ok\n{ktap}")

rc = (g.file("outside.rc") or "").strip()
doc = json.loads(g.file("outside.json") or "{}")
n = counters(doc)
ev = [e for e in doc.get("events", {}).get("kept", []) if e["kind"] == "soft_dirty"]
check(int((g.file("outside.clears") or "0").strip() or 0) > 10,
      f"the shell cleared the storm's soft-dirty bits behind its back "
      f"({(g.file('outside.clears') or '').strip()} times)")
check(rc == "1" and doc.get("verdict", {}).get("status") == "soft_dirty",
      f"a clear the stressor did not make: exit 1, soft_dirty ({rc!r}, {doc.get('verdict')})"
      f"\n{(g.file('outside.txt') or '')[-1500:]}")
check(ev and n.get("lost", 0) > 0 and all(
      "stored after the last clear_refs, yet pagemap says present and not soft-dirty" in e["text"]
      and e["chunk"] >= 0 and e["page"] >= 0 for e in ev),
      f"each event names chunk, page and the pagemap entry: {[e['text'] for e in ev[:2]]}")
check(len({(e["chunk"], e.get("generation")) for e in ev}) == len(ev),
      f"one event per chunk and generation ({len(ev)} events)")
done()
