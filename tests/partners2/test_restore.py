#!/usr/bin/env python3
# labels: e2e
# timeout: 400
"""The settings-restore service: every THP sysfs file the sysfs stressor
touched reads exactly as before (byte for byte) after a normal end, SIGINT
and SIGTERM (restored, reported, then re-raised), a double SIGINT (the
immediate exit), SIGQUIT and a worker's crash
(invalid store, stack overflow, abort: the storm process dies of it, and
pmdstress says so with exit 1). Each path first sees the files
change while pmdstress runs, so a run that never wrote cannot pass.

The guardian process (src/kernel/restore_guard.c) puts the files back whenever
pmdstress ends without having done so, so "the files read as before" alone
would pass with the in-process restore broken. On every path above
pmdstress must say it restored them itself and the guardian must say
nothing; after a SIGKILL, the one way out pmdstress cannot see, the
guardian must say it put them all back, naming the pid."""
import os
import re
import resource
import signal
import subprocess
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
sys.path.insert(0, os.path.dirname(__file__))
from pmdtest import PMDSTRESS, check, done, is_root, run, skip  # noqa: E402
import thpsnap  # noqa: E402

if not is_root():
    skip("the sysfs stressor and its restore need root")
if not os.path.exists(thpsnap.THP) or not os.access(f"{thpsnap.THP}/enabled", os.W_OK):
    skip(f"{thpsnap.THP} is missing or not writable here")

BASE = ["--stressors", "fault,sysfs", "--threads", "4", "--size", "16M", "--progress", "off",
        "--quiet", "--sysfs-rate", "200", "--sysfs-values", "keep-thp"]


def no_core():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def spawn(extra):
    return subprocess.Popen([PMDSTRESS] + BASE + extra, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=no_core)


def watch(p, baseline, timeout=5.0, until_exit=False):
    """Poll the files while @p runs; True once they differ from @baseline."""
    changed = False
    end = time.monotonic() + timeout
    while time.monotonic() < end and p.poll() is None:
        if thpsnap.read() != baseline:
            changed = True
            if not until_exit:
                break
        time.sleep(0.01)
    return changed


def same_as(baseline, what):
    now = thpsnap.read()
    return check(now == baseline,
                 f"{what}: every touched file reads as before ({thpsnap.diff(baseline, now) or 'same'})")


def by_itself(err, what):
    """pmdstress's own restore ran (restore.c's line), and the guardian had nothing to do."""
    own = re.search(r"^pmdstress: restored \d+ kernel settings? to the values before the run$",
                    err, re.M)
    return check(own and "pmdstress guardian:" not in err,
                 f"{what}: pmdstress restored the settings itself, not its guardian "
                 f"({err.strip()[-400:]!r})")


def signal_path(baseline, sigs, name, expect_rc, extra=(), gap=0.3):
    p = spawn(["--duration", "60s"] + list(extra))
    changed = watch(p, baseline)
    check(changed, f"{name}: the files changed while it ran")
    for i, s in enumerate(sigs):
        if i:
            time.sleep(gap)
            check(p.poll() is None, f"{name}: still stopping when the second signal comes")
        p.send_signal(s)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    check(p.returncode == expect_rc, f"{name}: exit {p.returncode}, expected {expect_rc}\n{err[-800:]}")
    same_as(baseline, name)
    if expect_rc != -signal.SIGKILL:
        by_itself(err, name)
    return err, p.pid


with thpsnap.Guard() as baseline:
    check(len(baseline) >= 4, f"THP files to watch: {sorted(baseline)}")

    # 1. the normal end (test_sysfs.py runs the "never"-including value set)
    r = run(BASE + ["--duration", "2s"])
    s = r.stressor("sysfs")
    check(r.rc == 0 and s and s["status"] == "ran", "normal end: exit 0, sysfs ran" + ("" if r.rc == 0 else f"\n{r.show()}"))
    check(r.counter("sysfs", "ops") and r.counter("sysfs", "ops") > 50,
          f"normal end: sysfs wrote ({r.counter('sysfs', 'ops')} writes)")
    check(r.counter("sysfs", "failed") == 0, "normal end: the kernel took every value it offered")
    by_itself(r.err, "normal end")
    same_as(baseline, "normal end")

    # 2, 3. a clean stop on SIGINT and on SIGTERM: restore, report, then re-raise
    err, _ = signal_path(baseline, [signal.SIGINT], "SIGINT", -signal.SIGINT)
    check("restored" in err and "ending by the signal" in err,
          f"SIGINT: restored, then ended by the signal ({err.strip()[-300:]!r})")
    signal_path(baseline, [signal.SIGTERM], "SIGTERM", -signal.SIGTERM)

    # 4. a second signal exits at once (exit 6, no report): the sysfs worker keeps
    # writing after the stop (--sysfs-linger), so the first stop is still under way
    err, _ = signal_path(baseline, [signal.SIGINT, signal.SIGTERM], "SIGTERM after SIGINT", 6,
                         extra=["--sysfs-linger", "20s"])
    check("SIGTERM after SIGINT stopped the run: exiting at once" in err,
          f"SIGTERM after SIGINT: took the immediate exit ({err.strip()[-200:]!r})")

    # 5. a terminating signal nobody waits for
    signal_path(baseline, [signal.SIGQUIT], "SIGQUIT", -signal.SIGQUIT)

    # 6. a worker crashes: restored by the fatal-signal handler, and the crash stays visible:
    # the storm process dies of it, and pmdstress ends with the verdict "crash", exit 1
    for kind, sig in [("segv", signal.SIGSEGV), ("stack", signal.SIGSEGV), ("abort", signal.SIGABRT)]:
        p = spawn(["--duration", "30s", "--sysfs-crash-after", "1s", "--sysfs-crash", kind])
        changed = watch(p, baseline, timeout=10, until_exit=True)
        try:
            out, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        check(changed, f"crash {kind}: the files changed before the crash")
        check(p.returncode == 1 and f"storm process died of signal {int(sig)}" in err,
              f"crash {kind}: the storm died of {sig.name}, exit 1 (rc {p.returncode})\n{err[-800:]}")
        check(f"fatal {sig.name}" in err and "kernel settings restored" in err,
              f"crash {kind}: the handler said so ({err.strip()[-300:]!r})")
        same_as(baseline, f"crash {kind}")
        by_itself(err, f"crash {kind}")

    # 7. SIGKILL: no handler runs, the guardian sees the socket close and puts them back
    # (it holds the stderr pipe too, so its line is in err once communicate() returns)
    err, pid = signal_path(baseline, [signal.SIGKILL], "SIGKILL", -signal.SIGKILL)
    m = re.search(r"^pmdstress guardian: pmdstress \(pid (\d+)\) ended without restoring; "
                  r"put back (\d+) of (\d+) kernel settings$", err, re.M)
    check(m and int(m.group(1)) == pid and m.group(2) == m.group(3) and int(m.group(2)) > 0,
          f"SIGKILL: the guardian put every setting back, naming the run's pid "
          f"({err.strip()[-400:]!r})")
    check("pmdstress: restored" not in err, "SIGKILL: pmdstress itself had no chance to restore")
done()
