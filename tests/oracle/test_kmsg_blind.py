#!/usr/bin/env python3
# labels: e2e
# timeout: 120
"""A run that cannot read the kernel log as root is blind, not clean. In a
mount namespace of its own, /dev/null is bound over /dev/kmsg (what a
container may give a process: a device node that reads as a log that never
says anything): the run must say that it was blind to every splat and end
with exit 125, status "blind", the monitors block saying kmsg_state "blind".
Not root, an unreadable log (kernel.dmesg_restrict) stays a limitation the
report states: exit 0, kmsg_state "unprivileged". Before, both ended clean."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, check, done, is_root, reachable, skip  # noqa: E402

if not is_root():
    skip("binding over /dev/kmsg in a mount namespace needs root")
if not shutil.which("unshare"):
    skip("unshare (util-linux) is not installed")
ARGS = ["--stressors", "fault", "--threads", "2", "--duration", "1s", "--size", "8M",
        "--progress", "off", "--quiet"]


def report(cmd, path):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    doc = None
    if os.path.exists(path):
        with open(path) as f:
            doc = json.load(f)
    return p, doc


with tempfile.TemporaryDirectory() as tmp:
    os.chmod(tmp, 0o777)
    path = os.path.join(tmp, "blind.json")
    inner = " ".join([PMDSTRESS] + ARGS + ["--json", path])
    p = subprocess.run(["unshare", "-m", "sh", "-c", "mount --bind /dev/null /dev/kmsg"],
                       capture_output=True, text=True)
    if p.returncode:
        skip(f"cannot bind-mount in a mount namespace here: {p.stderr.strip()}")
    p, d = report(["unshare", "-m", "sh", "-c",
                   f"mount --make-rprivate / && mount --bind /dev/null /dev/kmsg && exec {inner}"],
                  path)
    check(p.returncode == 125, f"root, /dev/kmsg not the log device: exit 125 (got "
          f"{p.returncode}) {p.stderr.strip()[-400:]!r}")
    check(d and d["verdict"]["status"] == "blind", f"status blind: {d and d['verdict']}")
    check(d and d["monitors"]["kmsg_state"] == "blind" and
          "not the kernel log device" in d["monitors"]["kmsg"],
          f"the monitors block says why: {d and d['monitors']['kmsg']!r}")
    check("cannot judge the kernel" in p.stderr and "(exit 125)" in p.stderr,
          f"stderr says so, and the exit: {p.stderr.strip()!r}")
    # the log device itself, as root: reading, clean
    p, d = report([PMDSTRESS] + ARGS + ["--json", path], path)
    check(p.returncode == 0 and d["monitors"]["kmsg_state"] == "reading",
          f"with the real /dev/kmsg: exit 0, reading (rc {p.returncode}, "
          f"{d and d['monitors']['kmsg_state']})")

    # not root, with dmesg_restrict: a stated limitation, the run's verdict stands
    with open("/proc/sys/kernel/dmesg_restrict") as f:
        restricted = f.read().strip() == "1"
    if restricted and shutil.which("setpriv"):
        os.unlink(path)
        p, d = report(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                       reachable(PMDSTRESS)] + ARGS + ["--json", path], path)
        check(p.returncode == 0 and d and d["verdict"]["status"] == "clean",
              f"not root: clean, exit 0 (rc {p.returncode}) {p.stderr.strip()[-300:]!r}")
        check(d and d["monitors"]["kmsg_state"] == "unprivileged" and
              "dmesg_restrict is 1" in d["monitors"]["kmsg"],
              f"and the report says the log was closed to it: {d and d['monitors']}")
    else:
        print("# kernel.dmesg_restrict is 0 or no setpriv: the unprivileged case is not tried")
done()
