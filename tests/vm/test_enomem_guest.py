#!/usr/bin/env python3
# labels: vm e2e
# timeout: 400
"""An ENOMEM a limit the run can name explains is "resources" (exit 125),
in a disposable guest (vm.max_map_count is the machine's, never lowered on
the host): while the storm faults and split cuts 4 KiB holes into huge
PMDs and moves them (each mprotect or munmap of a hole splits a VMA, each
move needs one more mapping),
vm.max_map_count is lowered to what the run maps plus 2. The splits then
fail with ENOMEM (and so may fault's reset of a chunk by a fresh mapping
over it, which splits the arena's VMA too); the run must end with exit 125,
status resources, each error saying "near a limit: vm.max_map_count". The
storm must still send its results: their memory is taken before the limit
falls (an ENOMEM there was "ended without its results", exit 5). The same run with the limit
left alone is clean. (An ENOMEM with every limit far is exit 5:
tests/robust/test_enomem_verdict.py.) Skips (77) where no guest can run."""
import json
import os
import re
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
run = (f"{pmd} --stressors fault,split --threads 2 --size 16M --duration 6s --progress off "
       f"--hang-timeout 60s")
SCRIPT = f"""
{run} --json /out/free.json > /out/free.txt 2>&1
echo $? > /out/free.rc
cat /proc/sys/vm/max_map_count > /out/mmc.before
{run} --json /out/low.json > /out/low.txt 2>&1 &
pid=$!
sleep 2
n=$(wc -l < /proc/$pid/maps)
echo $n > /out/maps
echo $((n + 2)) > /proc/sys/vm/max_map_count
wait $pid
echo $? > /out/low.rc
cat /out/mmc.before > /proc/sys/vm/max_map_count
"""
g = guest(["sh", "-c", SCRIPT], kernel="6.1", name="enomem", nodes=1, cpus_per_node=2,
          mem_per_node=512, timeout=240, carry=[BINARY])
if g.cannot_run:
    skip(f"no guest can run here: {g.reason}")
check(g.rc == 0, f"the guest script ran\n{g.show()}")
rc = (g.file("free.rc") or "").strip()
check(rc == "0", f"the limit left alone: clean (exit {rc!r})\n{(g.file('free.txt') or '')[-1500:]}")
rc = (g.file("low.rc") or "").strip()
maps = (g.file("maps") or "").strip()
doc = json.loads(g.file("low.json") or "{}")
errors = [e["text"] for e in doc.get("events", {}).get("kept", []) if e["kind"] == "error"]
check(rc == "125" and doc.get("verdict", {}).get("status") == "resources",
      f"vm.max_map_count lowered to {maps} + 2: exit 125, resources (exit {rc!r}, "
      f"{doc.get('verdict')})\n{(g.file('low.txt') or '')[-1500:]}")
check(errors and all("Cannot allocate memory (near a limit: vm.max_map_count" in t
                     for t in errors),
      f"each error is ENOMEM near vm.max_map_count: {errors[:3]}")
others = [t for t in errors if not re.match(r"split: (mprotect|unmapping|mremap|placeholder)|"
                                           r"fault: resetting chunk \d+ by a fresh mapping", t)]
check(errors and not others, f"and names split's or fault's call: {len(others)} of {len(errors)} do not: "
      f"{others[:3]}")
done()
