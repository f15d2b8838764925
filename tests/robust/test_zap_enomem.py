#!/usr/bin/env python3
# labels: robust
# timeout: 120
"""A chunk reset that really fails is an error, never a corruption verdict.
With a memory policy (--mem-policy local) the storm resets a chunk by
mapping fresh memory elsewhere and moving it over the chunk; once the run is
going, RLIMIT_AS is lowered (prlimit --pid) to leave less than that 2 MiB,
so every reset fails with ENOMEM. The chunk must leave the run with its
old contents unjudged: exit 125 (status resources), one error per lost
chunk, no corruption and no fault. (Before, the failed reset was taken as
done, and the next round's verifier read the old stamps outside the round's
window as NONZERO_AFTER_ZAP: 102818 bad pages in one run, exit 1.)"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, check, done, run, skip, storm_of  # noqa: E402

if not shutil.which("prlimit"):
    skip("prlimit (util-linux) is not installed")
args = ["--stressors", "fault", "--threads", "2", "--size", "16M", "--duration", "3s",
        "--fault-pages", "64", "--fault-zap", "remap", "--mem-policy", "local",
        "--progress", "off", "--quiet"]
r = run(args)
if r.rc in (2, 125) and "mem-policy" in r.err:
    skip(f"--mem-policy local is refused here: {r.err.strip()}")
check(r.rc == 0 and r.doc["events"]["total"] == 0 and r.counter("fault", "zap_remap") > 0,
      f"without a limit: clean, chunks reset by remapping\n{r.show()}")

fd, path = tempfile.mkstemp(prefix="pmdtest-", suffix=".json")
os.close(fd)
p = subprocess.Popen([PMDSTRESS] + args + ["--json", path], stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, text=True)
storm = storm_of(p.pid)  # the process with the arena, pmdstress's child pmd/storm
time.sleep(1.0)
# the smallest of many reads: one taken while a reset's fresh 2 MiB is mapped beside the
# chunk reads 2 MiB high (1% of 3000 reads here), and the cap would then let every reset
# through (the fresh-clone CI of 608e71d did)
sizes = []
for _ in range(200):
    with open(f"/proc/{storm}/status") as f:
        sizes.append(int(re.search(r"VmSize:\s+(\d+)", f.read()).group(1)) << 10)
vm = min(sizes)
# room for small growth, not for the 2 MiB a reset maps before it moves it over the chunk
limit = vm + (2 << 20) - (64 << 10)
subprocess.run(["prlimit", f"--pid={storm}", f"--as={limit}"], check=True)
out, err = p.communicate(timeout=60)
with open(path) as f:
    doc = json.load(f)
os.unlink(path)
ev = doc["events"]
texts = [e["text"] for e in ev["kept"] if e["kind"] == "error"]
check(p.returncode == 125 and doc["verdict"]["status"] == "resources",
      f"resets failing with ENOMEM: exit 125, status resources (rc {p.returncode}, "
      f"{doc['verdict']})\n{err[-1500:]}")
check(sum(ev["by_class"].values()) == 0 and ev["by_kind"].get("corruption", 0) == 0 and
      ev["by_kind"].get("signal", 0) == 0,
      f"no corruption and no fault on a chunk whose reset failed {ev['by_kind']}")
check(texts and all(re.match(r"fault: resetting chunk \d+ by a fresh mapping \(chunk left out "
                             r"of the run\): Cannot allocate memory", t) for t in texts),
      f"each error names the chunk, the reset and ENOMEM: {texts[:3]}")
chunks = [int(re.search(r"chunk (\d+)", t).group(1)) for t in texts]
check(len(chunks) == len(set(chunks)) and len(chunks) <= 8,
      f"each chunk fails once, then stays out of the run: {chunks}")
done()
