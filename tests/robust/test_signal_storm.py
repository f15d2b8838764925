#!/usr/bin/env python3
# labels: robust
# timeout: 600
"""SIGINT, SIGTERM and SIGHUP at random moments: during start-up (thousands
of threads being made), in the middle of fork and exec storms, during bench
rounds, around the end of the run while the report is written, with the
sysfs stressor changing THP settings (root). Each run must end by itself
within seconds: with a full JSON report, ending by the signal (or exit 0
when the run had ended before it; 6 after a second, different signal, no
report; the same signal again is the same stop, with its report),
leave no process behind (the test is a child subreaper, so every
orphan comes to it), and leave every THP sysfs file as it was. A signal
that arrives before main() has blocked it (the process is still loading;
nothing has been changed yet) may kill it: that is told from the rest by
its silence (a run that began always prints its verdict line; SigBlk cannot
tell, the kernel clears it while sigtimedwait waits). PMD_STORM_RUNS sets the number of runs
(40), PMD_STORM_SEED the seed (printed)."""
import ctypes
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "partners2"))
from pmdtest import PMDSTRESS, check, done, is_root  # noqa: E402
import thpsnap  # noqa: E402

PR_SET_CHILD_SUBREAPER = 36
libc = ctypes.CDLL(None, use_errno=True)
subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
check(subreaper, "the test is a child subreaper: orphans of a run come to it")

runs = int(os.environ.get("PMD_STORM_RUNS", "40"))
seed = int(os.environ.get("PMD_STORM_SEED", "0")) or random.SystemRandom().randrange(1, 1 << 30)
print(f"# seed {seed} (PMD_STORM_SEED={seed} repeats this storm)")
rnd = random.Random(seed)
sysfs_ok = is_root() and os.access(f"{thpsnap.THP}/enabled", os.W_OK)

COMMON = ["--progress", "off", "--quiet", "--size", "16M"]
SCENARIOS = [
    ("race", ["--threads", "8", "--duration", "1500ms"]),
    ("fork+exec", ["--stressors", "fault,fork,exec", "--threads", "6", "--duration", "1500ms",
                   "--fork-chunks", "2"]),
    ("aim9", ["--config", "aim9", "--threads", "6", "--duration", "1500ms"]),
    ("bench", ["--stressors", "fault,zap", "--threads", "4", "--duration", "300ms",
               "--rounds", "3"]),
    # start-up takes a while: 1500 threads to make, then a setup
    ("startup", ["--stressors", "fault,fork", "--threads", "1500", "--size", "64M",
                 "--fault-group", "64", "--duration", "1s"]),
]
if sysfs_ok:
    SCENARIOS.append(("sysfs", ["--stressors", "fault,sysfs", "--threads", "4",
                                "--duration", "1500ms", "--sysfs-rate", "300",
                                "--sysfs-values", "keep-thp"]))
SIGS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]
NAMES = {signal.SIGINT: "Interrupt", signal.SIGTERM: "Terminated", signal.SIGHUP: "Hangup"}


def orphans():
    """Processes whose parent is now this test: what a run left behind."""
    me, out = os.getpid(), []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                st = f.read()
        except OSError:
            continue
        rest = st[st.rindex(")") + 2:].split()
        if int(rest[1]) == me:
            out.append((int(d), rest[0], st[st.index("(") + 1:st.rindex(")")]))
    return out


def reap_all():
    """Reap our zombie orphans; returns how many."""
    n = 0
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return n
        if pid == 0:
            return n
        n += 1


def one(i):
    name, args = rnd.choice(SCENARIOS)
    sig = rnd.choice(SIGS)
    delay = rnd.uniform(0.0, 1.5)
    # a quarter: the same signal again (a repeat: the same stop) or another one (a
    # second signal: exit 6 at once, no report)
    second = rnd.choice([sig, signal.SIGTERM if sig != signal.SIGTERM else signal.SIGINT]) \
        if rnd.random() < 0.25 else None
    other = second is not None and second != sig
    to_group = rnd.random() < 0.3
    path = os.path.join(tmp, f"r{i}.json")
    what = (f"run {i}: {name}, {signal.Signals(sig).name}"
            f"{' then ' + signal.Signals(second).name if second else ''} "
            f"{'to the group ' if to_group else ''}after {delay:.2f}s")
    guard = thpsnap.Guard() if name == "sysfs" else thpsnap.Lock()
    with guard:
        before = thpsnap.read()
        p = subprocess.Popen([PMDSTRESS] + COMMON + args + ["--json", path],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
        time.sleep(delay)
        t0 = time.monotonic()
        try:
            (os.killpg if to_group else os.kill)(p.pid, sig)
            if second:
                time.sleep(rnd.uniform(0.0, 0.3))
                (os.killpg if to_group else os.kill)(p.pid, second)
        except ProcessLookupError:
            pass  # it had ended already
        try:
            out, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
            check(False, f"{what}: still running 60s after the signal\n{err[-2000:]}")
            return
        dt = time.monotonic() - t0
        rc = p.returncode
        # whatever it forked must be gone: at once after a clean end, within 3 s after
        # the immediate exit of a second signal
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline and [o for o in orphans() if o[1] != "Z"]:
            time.sleep(0.05)
        left = [o for o in orphans() if o[1] != "Z"]
        zombies = reap_all()
        for pid, _, _ in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        reap_all()
        after = thpsnap.read()
    # -sig: ended by the signal after its report (its last stderr line says so), or
    # killed before main() blocked it: then it said nothing at all
    reported = rc == 0 or (rc == -sig and "ending by the signal" in err)
    ok_rc = rc == 0 or (other and rc == 6) or \
        (rc == -sig and (reported or not err.strip()))
    check(ok_rc, f"{what}: exit {rc} (the signal after the report, 0 if the run had ended, "
          f"6 after another signal){'' if ok_rc else chr(10) + err[-3000:]}")
    check(dt < 30, f"{what}: ended {dt:.1f}s after the signal")
    if reported:
        doc = None
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            check(False, f"{what}: exit {rc} but no readable report ({e})\n{err[-2000:]}")
        if doc:
            check(doc["verdict"]["status"] == "clean",
                  f"{what}: the report's verdict is clean ({doc['verdict']})")
            check(doc["stop_reason"] in (NAMES[sig], "duration", "done"),
                  f"{what}: stop_reason {doc['stop_reason']!r}")
        check(not left and not zombies,
              f"{what}: nothing left behind ({len(left)} running, {zombies} zombies)")
    else:
        check(not left, f"{what}: no process still running 3s after the exit ({left})")
    if rc == 6 or (rc < 0 and not reported):
        check(not os.path.exists(path), f"{what}: an exit at once writes no report")
    check(after == before, f"{what}: THP settings as before "
          f"({thpsnap.diff(before, after) or 'same'})")
    if os.path.exists(path):
        os.unlink(path)


tmp = tempfile.mkdtemp(prefix="pmd-storm-")
for i in range(runs):
    one(i)
shutil.rmtree(tmp, ignore_errors=True)
done()
