#!/usr/bin/env python3
# labels: e2e
# timeout: 120
"""A stressor the user named with --stressors that could not run here makes
the run exit 125 (status skipped, the line naming it and why), even when the
others ran clean: the run did not test what it was asked to, and git bisect
run must skip it, not call the kernel good. Before, only a run in which
every stressor was skipped said so; `--stressors fault,migrate` on one node
ended clean. A stressor a scenario brings (not named) that cannot run stays
a skip in the report, and the run's verdict is the rest's."""
import os
import shutil
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, check, done, is_root, reachable, run, skip  # noqa: E402

BASE = ["--threads", "4", "--size", "16M", "--duration", "1s", "--progress", "off", "--quiet"]
tried = 0

nodes = [d for d in os.listdir("/sys/devices/system/node") if d.startswith("node")]
if len(nodes) == 1:
    tried += 1
    for names in ["fault,migrate", "migrate"]:
        r = run(BASE + ["--stressors", names])
        check(r.rc == 125 and r.doc and r.doc["verdict"]["status"] == "skipped",
              f"--stressors {names} on one node: exit 125, skipped (rc {r.rc}) "
              f"{r.err.strip()[-300:]!r}")
        check("migrate, named by --stressors, could not run: 1 node" in r.err,
              f"the line names it and why: {r.err.strip()[-300:]!r}")
    r = run(BASE + ["--stressors", "fault,migrate"])
    s = r.stressor("fault")
    check(s and s.get("ops", 0) > 0, "the others still ran and are reported")
    # brought by a scenario, not named: the rest's verdict
    r = run(["--config", "numa"] + BASE)
    m = r.stressor("migrate")
    check(r.rc == 0 and m and m.get("status") == "skipped",
          f"--config numa on one node: migrate skipped in the report, exit 0 (rc {r.rc})")
else:
    print(f"# {len(nodes)} NUMA nodes: migrate can run here; not tried")

if is_root() and shutil.which("setpriv"):
    tried += 1
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o777)
        path = os.path.join(tmp, "r.json")
        p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            reachable(PMDSTRESS)] + BASE + ["--stressors", "fault,sysfs", "--json", path],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 125 and "sysfs, named by --stressors, could not run: needs root"
              in p.stderr, f"--stressors fault,sysfs not root: exit 125, the reason "
              f"(rc {p.returncode}) {p.stderr.strip()[-300:]!r}")
if not tried:
    skip("no stressor that cannot run here to name (two nodes, and not root)")
done()
