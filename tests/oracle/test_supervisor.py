#!/usr/bin/env python3
# labels: e2e
# timeout: 240
# serial: one case writes a fake splat into the kernel log, which every reader sees
"""The supervisor survives the storm (src/run/supervise.c). The storm is the child
process pmd/storm of the pmdstress process: whatever happens to it, pmdstress
ends within seconds with a verdict and a report.

- SIGSEGV sent to the storm from outside (what a kernel that corrupts its heap
  does to it): exit 1, status crash, the report with what the storm had said.
- SIGKILL from outside, no OOM killer involved: the same. Either way the
  storm's tracefs instance (src/kernel/race.c), left tracing on, is removed.
- The storm stopped for good (SIGSTOP): no beat for --hang-timeout is a hang,
  exit 4, its tasks (state T) in the report; it is killed, nothing is left.
- As root: a kernel line logged after the storm's end (written here while the
  supervisor settles, as a teardown splat is) is read and counts: exit 3.
- As root, with a loop device, ext4 and fsfreeze: the storm asleep in the
  kernel for good (its --jsonl file on a frozen file system: state D, which
  SIGKILL does not end) is a hang, exit 4 within seconds; it is left behind
  with a message and its stack; it ends when the file system thaws.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "forkexec"))
from pmdtest import check, done, is_root, spawn, storm_of  # noqa: E402
from children import become_subreaper, leftovers  # noqa: E402

BASE = ["--stressors", "fault,zap", "--threads", "4", "--size", "32M", "--progress", "plain"]
become_subreaper()  # the storm, if pmdstress leaves it, comes to us


def finish(p, path, timeout=60):
    """Wait for pmdstress; (rc, out, err, report or {}, seconds)."""
    t0 = time.monotonic()
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    dt = time.monotonic() - t0
    doc = {}
    if os.path.exists(path):
        with open(path) as f:
            doc = json.load(f)
        os.unlink(path)
    return p.returncode, out, err, doc, dt


def started(args, path):
    """pmdstress with args, and its storm once the storm's main loop runs."""
    p = spawn(BASE + args + ["--json", path])
    storm = storm_of(p.pid)
    end = time.monotonic() + 20
    # the first status line: the workers were released, the main loop beats
    while storm and time.monotonic() < end:
        try:
            with open(f"/proc/{storm}/status") as f:
                if int(next(x for x in f if x.startswith("Threads:")).split()[1]) > 4:
                    break
        except (OSError, StopIteration):
            break
        time.sleep(0.01)
    time.sleep(1.0)
    return p, storm


def nothing_left(what):
    end = time.monotonic() + 5
    while [x for x in leftovers() if x[1] != "Z"] and time.monotonic() < end:
        time.sleep(0.05)
    left = leftovers()
    check(not left, f"{what}: nothing left behind ({left})")


# -- a signal from outside kills the storm ------------------------------------------
for sig, name in [(signal.SIGSEGV, "SIGSEGV"), (signal.SIGKILL, "SIGKILL")]:
    path = tempfile.mktemp(suffix=".json")
    p, storm = started(["--duration", "60s"], path)
    if not check(storm is not None, f"{name}: the storm process is pmdstress's child pmd/storm"):
        p.kill()
        p.communicate()
        continue
    # named by the storm's pid namespace and pid (src/kernel/race.c)
    inst = (f"/sys/kernel/tracing/instances/pmdstress-{os.stat(f'/proc/{storm}/ns/pid').st_ino}"
            f"-{storm}")
    traced = os.path.isdir(inst)
    os.kill(storm, sig)
    rc, out, err, doc, dt = finish(p, path)
    v = doc.get("verdict", {})
    check(rc == 1 and dt < 5, f"{name} to the storm: exit 1 within seconds (rc {rc}, {dt:.1f} s) "
          f"{err[-400:]!r}")
    check(v.get("status") == "crash" and v.get("exit_code") == 1 and
          f"signal {int(sig)}" in v.get("summary", ""),
          f"{name}: the report says the storm crashed, with the signal ({v})")
    ev = [e for e in doc.get("events", {}).get("kept", []) if e.get("kind") == "signal"]
    check(ev and f"pid {storm}" in ev[0].get("text", "") and "did not send" in ev[0]["text"],
          f"{name}: an event names the storm and the signal ({ev[:1]})")
    check([s["name"] for s in doc.get("stressors", [])] == ["fault", "zap"],
          f"{name}: the report lists what ran, from the storm's first message")
    check("verdict: the storm process died of signal" in out,
          f"{name}: the text report was written")
    if sig == signal.SIGSEGV:
        check("pmdstress: fatal SIGSEGV" in err,
              f"{name}: the storm's own last words came through its supervisor")
    nothing_left(name)
    if traced:
        check(not os.path.exists(inst), f"{name}: the storm's trace instance is removed ({inst})")
    else:
        print(f"# {name}: the storm had no trace instance (not root, or no tracefs)")

# -- the storm stopped for good -----------------------------------------------------
path = tempfile.mktemp(suffix=".json")
p, storm = started(["--duration", "60s", "--hang-timeout", "2s"], path)
os.kill(storm, signal.SIGSTOP)
t_stop = time.monotonic()
rc, out, err, doc, dt = finish(p, path)
dt = time.monotonic() - t_stop
v = doc.get("verdict", {})
hang = [e for e in doc.get("events", {}).get("kept", []) if e.get("kind") == "hang"]
tasks = doc.get("monitors", {}).get("hang_tasks", [])
check(rc == 4 and dt < 8, f"SIGSTOP: exit 4 within seconds of --hang-timeout 2s (rc {rc}, "
      f"{dt:.1f} s) {err[-300:]!r}")
check(v.get("status") == "hang", f"SIGSTOP: the verdict is a hang ({v})")
check(hang and "stopped answering" in hang[0].get("text", ""),
      f"SIGSTOP: the event says the storm stopped answering ({hang[:1]})")
check(any("state T" in t for t in tasks), f"SIGSTOP: the storm's tasks, stopped, are in the "
      f"report ({tasks[:3]})")
check(doc.get("stop_reason") == "hang", f"SIGSTOP: stop_reason {doc.get('stop_reason')!r}")
nothing_left("SIGSTOP")

# -- a kernel line after the storm's end ----------------------------------------------
if is_root():
    path = tempfile.mktemp(suffix=".json")
    p, storm = started(["--duration", "1s"], path)
    # the storm reaped, pmdstress settles before its last look at the log: stop it there
    end = time.monotonic() + 30
    while storm and os.path.exists(f"/proc/{storm}") and time.monotonic() < end:
        time.sleep(0.0005)
    os.kill(p.pid, signal.SIGSTOP)
    line = ("pmdstress test: BUG: Bad rss-counter state mm:00000000deadbeef "
            "type:MM_ANONPAGES val:1")
    with open("/dev/kmsg", "w") as k:
        k.write(f"<12>{line}\n")
    os.kill(p.pid, signal.SIGCONT)
    rc, out, err, doc, dt = finish(p, path)
    ev = [e for e in doc.get("events", {}).get("kept", []) if e.get("kind") == "kernel_log"]
    check(rc == 3 and doc.get("verdict", {}).get("status") == "kernel",
          f"a splat after the storm's end: exit 3 (rc {rc}) {err[-300:]!r}")
    check(ev and line in ev[0].get("text", "") and "supervisor" in ev[0]["text"],
          f"the event has the line and says the supervisor read it ({ev[:1]})")
    check(any(line in x for x in doc.get("monitors", {}).get("kernel_log", [])),
          "the report keeps the line")
else:
    print("# not root: the kernel log cannot be written; the after-the-end case is not tried")


# -- the storm asleep in the kernel for good ------------------------------------------
def frozen_case():
    for tool in ("losetup", "mkfs.ext4", "fsfreeze", "mount", "umount"):
        if not shutil.which(tool):
            return f"no {tool}"
    if not is_root():
        return "not root (a loop device, a mount and fsfreeze)"
    tmp = tempfile.mkdtemp(prefix="pmdfreeze-")
    img, mnt = os.path.join(tmp, "fs.img"), os.path.join(tmp, "mnt")
    os.mkdir(mnt)
    try:
        with open(img, "wb") as f:
            f.truncate(16 << 20)
        r = subprocess.run(["mkfs.ext4", "-q", "-F", img], capture_output=True, text=True)
        if r.returncode:
            return f"mkfs.ext4 failed: {r.stderr.strip()}"
        r = subprocess.run(["mount", "-o", "loop", img, mnt], capture_output=True, text=True)
        if r.returncode:
            return f"cannot mount a loop device here: {r.stderr.strip()}"
        try:
            return frozen_run(mnt)
        finally:
            subprocess.run(["fsfreeze", "-u", mnt], capture_output=True)
            end = time.monotonic() + 10
            while subprocess.run(["umount", mnt], capture_output=True).returncode and \
                    time.monotonic() < end:
                time.sleep(0.1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def frozen_run(mnt):
    path = tempfile.mktemp(suffix=".json")
    p, storm = started(["--duration", "60s", "--hang-timeout", "2s", "--interval", "200ms",
                        "--jsonl", os.path.join(mnt, "series.jsonl")], path)
    r = subprocess.run(["fsfreeze", "-f", mnt], capture_output=True, text=True)
    if r.returncode:
        p.kill()
        p.communicate()
        return f"fsfreeze refused: {r.stderr.strip()}"
    t0 = time.monotonic()
    rc, out, err, doc, _ = finish(p, path)
    dt = time.monotonic() - t0
    tasks = doc.get("monitors", {}).get("hang_tasks", [])
    alive = os.path.exists(f"/proc/{storm}")
    check(rc == 4 and dt < 12, f"storm asleep in the kernel: exit 4 within seconds (rc {rc}, "
          f"{dt:.1f} s) {err[-400:]!r}")
    check("left behind" in err and f"pid {storm}" in err,
          f"stderr says the storm is left behind ({err[-300:]!r})")
    check(any("state D" in t for t in tasks), f"its tasks asleep in the kernel are in the "
          f"report ({[t for t in tasks if 'state' in t][:4]})")
    check(alive, "pmdstress did not wait for it: the storm is still there")
    subprocess.run(["fsfreeze", "-u", mnt], capture_output=True)
    end = time.monotonic() + 10
    while os.path.exists(f"/proc/{storm}") and time.monotonic() < end:
        leftovers()  # reaps it once it is a zombie of ours
        time.sleep(0.05)
    nothing_left("storm asleep in the kernel, after the thaw")
    return None


why = frozen_case()
if why:
    print(f"# SKIP the storm asleep in the kernel for good: {why}")
done()
