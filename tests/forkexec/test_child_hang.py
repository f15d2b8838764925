#!/usr/bin/env python3
# labels: e2e
# timeout: 240
"""A fork or exec child stuck at the run's end is a hang, never a clean run.
Near the end of a run, the test stops the run's whole process group
(SIGSTOP; a user's program has left it, and is stopped alone) and
continues pmdstress (SIGCONT to its pid): a child that was in flight stays
stopped, a child stuck but killable. The run must end
with exit 4 within seconds of its end (its --hang-timeout, then the kill),
the report naming the child, its state (T) and wchan (do_signal_stop), and
as root its kernel stack; the child is not left behind. Before, the child
was SIGKILLed at the stop and the run ended clean (exit 0).

The exec child is tried in both modes: a program of the user's (a script;
the worker judges the child in its wait), and this binary's --exec-child
(the worker then waits in a plain waitpid(), and the join judges it)."""
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, check, done, is_root, storm_of  # noqa: E402

DURATION = 4.0


def children(pid):
    out = []
    for f in glob.glob(f"/proc/{pid}/task/*/children"):
        try:
            with open(f) as fh:
                out += [int(k) for k in fh.read().split()]
        except OSError:
            pass
    return out


def state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def stop_a_child(pid):
    """Stop the group, keep a child that was in flight stopped, continue the rest;
    a child that left the group (a user's program: stress/exec.c) is stopped alone.
    pid: the storm process (src/run/supervise.c), whose group is its own."""
    # stopped a few ms in every 30: the run itself must not look stalled
    for _ in range(200):
        os.killpg(pid, signal.SIGSTOP)
        time.sleep(0.002)
        for k in children(pid):
            if state(k) not in ("T", "Z", None):
                try:
                    os.kill(k, signal.SIGSTOP)
                except OSError:
                    pass
        time.sleep(0.002)
        got = [k for k in children(pid) if state(k) == "T"]
        if got:
            os.kill(pid, signal.SIGCONT)
            return got[0]
        os.killpg(pid, signal.SIGCONT)
        time.sleep(0.03)
    return None


def stuck_run(what, args):
    path = tempfile.mktemp(suffix=".json")
    p = subprocess.Popen([PMDSTRESS] + args + ["--duration", f"{DURATION}s", "--progress", "off",
                                               "--quiet", "--json", path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    t0 = time.monotonic()
    time.sleep(DURATION - 0.8)  # near the end: the run's watchdog alone would not see it
    child = stop_a_child(storm_of(p.pid) or p.pid)
    print(f"# {what}: child {child} stopped at {time.monotonic() - t0:.2f}s")
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
    elapsed = time.monotonic() - t0
    d = None
    if os.path.exists(path):
        with open(path) as f:
            d = json.load(f)
        os.unlink(path)
    check(child is not None, f"{what}: a child in flight was stopped ({child})")
    if child is None:
        return
    limit = (d or {}).get("monitors", {}).get("hang_timeout_s", 3.0)
    check(p.returncode == 4 and d and d["verdict"]["status"] == "hang",
          f"{what}: the stopped child is a hang, exit 4 (rc {p.returncode}, "
          f"{d and d['verdict']}) {err.strip()[-300:]!r}")
    check(elapsed < DURATION + limit + 4,
          f"{what}: reported within the hang timeout of the end ({elapsed:.1f}s, "
          f"--hang-timeout {limit}s)")
    hang = [e["text"] for e in (d or {}).get("events", {}).get("kept", []) if e["kind"] == "hang"]
    check(any(str(child) in t for t in hang), f"{what}: the hang names child {child}: {hang}")
    tasks = (d or {}).get("monitors", {}).get("hang_tasks", [])
    line = [t for t in tasks if t.startswith(f"child {child} ")]
    check(line and "state T" in line[0] and "do_signal_stop" in line[0],
          f"{what}: the dump shows the child stopped: {line}")
    if is_root() and line:
        i = tasks.index(line[0])
        check(i + 1 < len(tasks) and "do_signal_stop" in tasks[i + 1],
              f"{what}: and its kernel stack (root): {tasks[i + 1:i + 3]}")
    check(state(child) is None, f"{what}: the child is not left behind ({state(child)})")


stuck_run("fork", ["--stressors", "fault,fork", "--threads", "4", "--size", "16M"])
with tempfile.TemporaryDirectory() as tmp:
    prog = os.path.join(tmp, "slow-child")
    with open(prog, "w") as f:
        f.write("#!/bin/sh\nsleep 0.05\n")
    os.chmod(prog, 0o755)
    stuck_run("exec of a user's program",
              ["--stressors", "exec", "--threads", "1", "--size", "8M", "--exec-program", prog])
stuck_run("exec of --exec-child", ["--stressors", "fault,exec", "--threads", "4", "--size", "16M"])
done()
