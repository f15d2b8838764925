#!/usr/bin/env python3
# labels: vmkernel
# timeout: 3600
"""The supervisor on a kernel that breaks, in a disposable guest: pmdstress's
test kernel (tools/vm/kernel/pmdtest.patch, built here by
tools/vm/kernel/build-pmdtest when it is not built yet) booted with

- pmdtest=teardown: every huge PMD the storm's faults install is counted one
  page too many, and check_mm() says "BUG: Bad rss-counter state" when the
  storm's mm goes, after the storm has ended. pmdstress must end in exit 3
  with that line in its report, read by the supervisor after the storm's
  last read of the log (one process reading the log while it lived never saw
  it: it exited 0).
- pmdtest=bug: the 64th huge PMD install hits BUG() with the mmap_lock held;
  the storm's tasks sleep in the kernel for good and SIGKILL does not end
  them. pmdstress must end in exit 3 within seconds of the BUG, not hang,
  with the kernel's lines and the storm's tasks in its report, and say it
  left the storm behind.

Label vmkernel, not in the default suite: the first build of the test kernel
recompiles mm/huge_memory.c where the baseline kernel is built and a mount
namespace can be had, else it is a whole kernel, 8-13 minutes on 2 CPUs
(ctest -L vmkernel; CI: .ci/run mutants). Skips (77) with the reason where the kernel cannot be built (no
linux-source-6.1 or its build tools) or no guest can run."""
import json
import os
import re
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, SOURCE_DIR, check, done, skip  # noqa: E402
from pmdvm import guest  # noqa: E402

BINARY = os.path.abspath(PMDSTRESS)
BUILD = os.path.join(SOURCE_DIR, "tools", "vm", "kernel", "build-pmdtest")
TARBALL = os.environ.get("PMD_LINUX_TARBALL", "/usr/src/linux-source-6.1.tar.xz")

if not os.access(BINARY, os.X_OK):
    skip(f"no pmdstress binary at {BINARY}")
if not os.path.isfile(TARBALL):
    skip(f"the test kernel cannot be built here: no linux-source-6.1 ({TARBALL}; "
         "apt-get install linux-source-6.1)")
b = subprocess.run([BUILD, "-q", "--no-deps"], capture_output=True, text=True,
                   errors="replace", stdin=subprocess.DEVNULL, timeout=3300)
if b.returncode:
    why = (b.stderr.strip().splitlines() or [f"exit {b.returncode}"])[-1]
    if "missing build dependencies" in why:
        skip(f"the test kernel cannot be built here: {why}")
    print(b.stderr[-3000:])
    check(False, f"tools/vm/kernel/build-pmdtest built the test kernel: {why}")
    done()
KERNEL = b.stdout.strip().splitlines()[-1]
pmd = shlex.quote(BINARY)


def uptime_script(name, args):
    """Run pmdstress in the guest; its exit status and the uptime at its end in /out."""
    return (f"{pmd} {args} --json /out/{name}.json > /out/{name}.txt 2>&1\n"
            f"echo $? > /out/{name}.rc\n"
            f"cut -d' ' -f1 /proc/uptime > /out/{name}.end\n")


def report(g, name):
    try:
        return json.loads(g.file(f"{name}.json") or "{}")
    except json.JSONDecodeError:
        return {}


# -- a splat at the storm's teardown -------------------------------------------------
g = guest(["sh", "-c", uptime_script("teardown", "--stressors fault --threads 4 --size 32M "
                                     "--duration 5s --progress off")],
          kernel=KERNEL, name="pmdtest-teardown", nodes=1, cpus_per_node=2, timeout=240,
          carry=[BINARY], append="pmdtest=teardown")
if g.cannot_run:
    skip(f"no guest can run here: {g.reason}")
dmesg = g.file("dmesg") or ""
check("pmdtest: armed (teardown)" in dmesg, f"the test kernel is armed\n{g.show()}")
rc = (g.file("teardown.rc") or "").strip()
doc = report(g, "teardown")
text = g.file("teardown.txt") or ""
check(rc == "3", f"teardown splat: exit 3 (got {rc!r})\n{text[-2500:]}")
check(doc.get("verdict", {}).get("status") == "kernel", f"verdict {doc.get('verdict')}")
ev = [e for e in doc.get("events", {}).get("kept", []) if e.get("kind") == "kernel_log"]
rss = [e for e in ev if "Bad rss-counter state" in e.get("text", "")]
check(rss and "read by its supervisor" in rss[0]["text"],
      f"the kernel's line is an event, read after the storm's last read ({[e['text'] for e in ev]})")
check(any("Bad rss-counter state" in x for x in doc.get("monitors", {}).get("kernel_log", [])),
      "the report keeps the kernel's line")
check(doc.get("stressors") and doc["stressors"][0].get("ops", 0) > 0 and
      doc.get("stop_reason") == "duration",
      f"the storm's results are all there (stop_reason {doc.get('stop_reason')!r})")

# -- a BUG in the fault path: the storm asleep in the kernel for good -----------------
g = guest(["sh", "-c", uptime_script("bug", "--stressors fault,toggle --threads 8 --size 64M "
                                     "--duration 60s --progress off")],
          kernel=KERNEL, name="pmdtest-bug", nodes=1, cpus_per_node=2, timeout=240,
          carry=[BINARY], append="pmdtest=bug")
if g.cannot_run:
    skip(f"no guest can run here: {g.reason}")
dmesg = g.file("dmesg") or g.file("console.log") or ""
rc = (g.file("bug.rc") or "").strip()
doc = report(g, "bug")
text = g.file("bug.txt") or ""
m = re.search(r"\[\s*([0-9.]+)\] kernel BUG at mm/huge_memory\.c", dmesg)
end = float((g.file("bug.end") or "0").strip() or 0)
after = end - float(m.group(1)) if m else None
print(f"# BUG at {m.group(1) if m else '?'} s of uptime, pmdstress ended at {end} s: "
      f"{after if after is None else round(after, 1)} s later")
check(m is not None, f"the kernel hit the BUG\n{g.show()}")
check(rc == "3", f"BUG in the fault path: exit 3, not a hang (got {rc!r}; pmd-vm {g.rc})\n"
      f"{text[-2500:]}")
check(after is not None and after < 30, f"... within seconds of the BUG ({after} s)")
kinds = doc.get("events", {}).get("by_kind", {})
check(kinds.get("kernel_log", 0) > 0 and kinds.get("hang", 0) > 0,
      f"the report has the kernel's BUG and the hang it caused ({kinds})")
tasks = doc.get("monitors", {}).get("hang_tasks", [])
check(any("state D" in t for t in tasks), f"the storm's tasks asleep in the kernel are in the "
      f"report ({[t for t in tasks if 'state' in t][:6]})")
check("left behind" in text, f"pmdstress says it left the storm behind ({text[-600:]!r})")
done()
