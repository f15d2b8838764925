#!/usr/bin/env python3
# labels: fresh
# timeout: 7200
"""Both README quick-start commands on a fresh Debian 12, as the issue that
found them failing tried it: tools/fresh-debian suite makes a debootstrap
minbase chroot of bookworm, clones this checkout's HEAD under /root (mode
0700) and, as root there, runs `tools/setup && ./pmdstress --threads 64`,
then `tools/check`: every package installed from nothing, the build, the
default race, the whole default suite. Checked: both commands pass; the race
ran clean; ctest ran the suite with no failure; what it skipped is listed
with ctest's count. Opt-in (label fresh, outside the default suite: 30-50
minutes on 2 CPUs); .ci/run runs the first command alone (tools/fresh-debian
quick). Needs root, debootstrap and the Debian archive: else a skip with
tools/fresh-debian's reason."""
import os
import re
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import SOURCE_DIR, check, done, skip  # noqa: E402

FRESH = os.path.join(SOURCE_DIR, "tools", "fresh-debian")
logdir = tempfile.mkdtemp(prefix="pmd-fresh-log-")
p = subprocess.run([FRESH, "--log", logdir, "suite"], stdout=subprocess.PIPE,
                   stderr=subprocess.STDOUT, text=True, errors="replace", timeout=7000)
out = p.stdout
if p.returncode == 125:
    skip(re.findall(r"cannot run here: (.*)", out)[-1:] or out.strip()[-300:])
print("\n".join(ln for ln in out.splitlines() if ln.startswith("fresh-debian:")))
check(p.returncode == 0, f"tools/fresh-debian suite: exit 0 (got {p.returncode})\n{out[-4000:]}")
check("tools/setup: built /root/pmdstress/build/pmdstress" in out,
      "first command: tools/setup installed the packages and built pmdstress")
check(re.search(r"^pmdstress: clean, seed 0x[0-9a-f]+ \(exit 0\)$", out, re.M),
      "first command: ./pmdstress --threads 64 ran clean")
m = re.search(r"^(\d+)% tests passed, (\d+) tests failed out of (\d+)$", out, re.M)
check(m and m.group(2) == "0", f"second command: ctest passed the suite ({m and m.group(0)})")
skipped = re.findall(r"^\s*\d+ - (\S+) \(Skipped\)$", out, re.M)
print(f"# skipped in the chroot ({len(skipped)}): {', '.join(skipped) or 'none'}")
try:
    with open(os.path.join(logdir, "ctest-suite.log"), errors="replace") as f:
        log = f.read()
except OSError:
    log = ""
for part in re.split(r"^\d+/\d+ Testing: ", log, flags=re.M)[1:]:
    name = part.split("\n", 1)[0].strip()
    if name in skipped:
        why = re.findall(r"^SKIP: (.*)$", part, re.M)
        print(f"#   {name}: {why[-1] if why else '?'}")
done()
