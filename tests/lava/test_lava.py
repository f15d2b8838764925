#!/usr/bin/env python3
# labels: lava
# timeout: 2400
"""The LAVA job, run here by Debian's own lava-dispatcher: tools/lava/run-local
runs tools/lava/pmdstress-qemu.yaml with lava-run on the QEMU device
tools/lava/qemu-device.yaml (the project's guest kernel when built, else
Debian's 6.1, and tools/lava/make-ramdisk's ramdisk), LAVA clones the
repository for the test definition tools/lava/pmdstress.yaml and runs it in
its test shell in the guest. Checked from lava-run's own log: the job
completed; every result line of the KTAP pmdstress printed in the guest is a
LAVA test case of the same name and result (ok: pass, ok # SKIP: skip, not
ok: fail), with ktap_complete and pmdstress_exit (measurement 0) passed; and
the dispatcher's own actions passed. Opt-in (label lava: 5-10 minutes under
TCG, and lava-dispatcher is not in tools/debian-packages); without lava-run
a skip with the reason."""
import json
import os
import re
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import SOURCE_DIR, check, done, skip  # noqa: E402

out = tempfile.mkdtemp(prefix="pmd-lava-")
p = subprocess.run([os.path.join(SOURCE_DIR, "tools", "lava", "run-local"), "--out", out,
                    "--duration", "20s", "--threads", "8"], capture_output=True, text=True,
                   timeout=2300)
if p.returncode == 125:
    skip(p.stderr.strip().splitlines()[-1])
print(p.stderr.strip())
results = [ln.split() for ln in p.stdout.splitlines() if ln.strip()]
check(["lava", "job", "pass"] in [r[:3] for r in results],
      f"the LAVA job completed (rc {p.returncode})\n{p.stdout[-2000:]}{p.stderr[-2000:]}")

# the KTAP the guest printed, read back from the console lines of lava-run's log
console = []
with open(os.path.join(out, "lava.log"), errors="replace") as f:
    for line in f:
        try:
            e = json.loads(re.sub(r': ! "', ': "', line))
        except ValueError:
            continue
        if e.get("lvl") == "target" and isinstance(e.get("msg"), str):
            console.append(e["msg"].rstrip("\r"))
tap = []
for ln in console:
    if ln == "TAP version 13":
        tap = [ln]
    elif tap and not tap[-1].startswith("# Totals"):
        tap.append(ln)
want = {}
for ln in tap:
    m = re.match(r"^(ok|not ok) \d+ (\S+)(?: # (SKIP))?", ln)
    if m:
        want[m.group(2)] = "fail" if m.group(1) == "not ok" else "skip" if m.group(3) else "pass"
check(len(want) >= 10 and tap[-1].startswith("# Totals"),
      f"the guest printed pmdstress's KTAP ({len(want)} results)\n" + "\n".join(tap[-30:]))
got = {r[1]: r[2] for r in results if r[0] == "0_pmdstress"}
bad = {k: (v, got.get(k)) for k, v in want.items() if got.get(k) != v}
check(want and not bad, f"every KTAP result is a LAVA test case of the same result "
      f"({len(want)}; differing: {bad})")
check(got.get("ktap_complete") == "pass", f"ktap_complete: {got.get('ktap_complete')}")
exitcase = [r for r in results if r[:2] == ["0_pmdstress", "pmdstress_exit"]]
check(exitcase and exitcase[0][2] == "pass" and float(exitcase[0][3]) == 0,
      f"pmdstress_exit: pass, measurement 0 ({exitcase})")
failed = [r for r in results if r[0] == "lava" and r[2] == "fail"]
check(not failed, f"no action of the dispatcher failed ({failed})")
print(f"# LAVA test cases: {sum(1 for r in results if r[0] == '0_pmdstress')}, "
      f"{sum(1 for r in results if r[0] == '0_pmdstress' and r[2] == 'skip')} skipped")
done()
