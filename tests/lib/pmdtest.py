# SPDX-License-Identifier: GPL-2.0
"""Helpers for pmdstress's script tests: run the real binary, read its JSON
report, check, skip (exit 77) or fail with a message that says what was seen."""
import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

PMDSTRESS = os.environ.get("PMDSTRESS") or os.path.join(
    os.environ.get("PMD_BUILD_DIR", "build"), "pmdstress")
SOURCE_DIR = os.environ.get("PMD_SOURCE_DIR", os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))))
BUILD_DIR = os.environ.get("PMD_BUILD_DIR", os.path.join(SOURCE_DIR, "build"))

_failed = 0
_count = 0
_skipped = []


def check(cond, what):
    """Record one check; print it TAP-style."""
    global _failed, _count
    _count += 1
    if cond:
        print(f"ok {_count} - {what}")
    else:
        _failed += 1
        print(f"not ok {_count} - {what}")
    sys.stdout.flush()
    return cond


def done():
    """The end: 1 if a check failed, else 77 (skipped) if a part could not run
    here, else 0. A test that checked less than it was written to check is not
    a pass: ctest shows it as skipped, with the reasons."""
    print(f"1..{_count}")
    if _failed:
        print(f"# {_failed} of {_count} checks failed")
        sys.exit(1)
    if _skipped:
        print(f"SKIP: {len(_skipped)} part(s) could not run here: " + "; ".join(_skipped),
              file=sys.stderr)
        sys.exit(77)
    sys.exit(0)


def skip(reason):
    print(f"# SKIP {reason}")
    print(f"SKIP: {reason}", file=sys.stderr)
    sys.exit(77)


def skip_part(reason):
    """A part of the test cannot run here: said now; the rest runs, and done()
    ends the test as skipped (77) unless a check failed."""
    _skipped.append(reason)
    print(f"# SKIP {reason}")
    sys.stdout.flush()


# Run a command as uid/gid 65534 (nobody); setpriv(1) is util-linux's.
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
_reach_dir = None


def reachable(path):
    """A copy of @path that every user can reach, for a test that runs it as
    nobody: a checkout under /root (mode 0700) is out of reach of uid 65534.
    Always a copy, also where the original is reachable, so that this path is
    the one every machine runs. The copies go away at exit."""
    global _reach_dir
    if _reach_dir is None:
        _reach_dir = tempfile.mkdtemp(prefix="pmdtest-reach-")
        os.chmod(_reach_dir, 0o755)
        atexit.register(shutil.rmtree, _reach_dir, True)
    dst = os.path.join(_reach_dir, os.path.basename(path))
    if not os.path.exists(dst):
        shutil.copy2(path, dst)
        os.chmod(dst, os.stat(path).st_mode | 0o555)
    return dst


def fail(reason):
    print(f"not ok - {reason}")
    sys.exit(1)


class Result:
    def __init__(self, rc, out, err, doc, elapsed):
        self.rc, self.out, self.err, self.doc, self.elapsed = rc, out, err, doc, elapsed

    def stressor(self, name):
        for s in (self.doc or {}).get("stressors", []):
            if s["name"] == name:
                return s
        return None

    def counter(self, stressor, name):
        s = self.stressor(stressor)
        return s["counters"][name]["total"] if s and name in s.get("counters", {}) else None

    def vmstat(self, name, default=None):
        return (self.doc or {}).get("vmstat", {}).get(name, default)

    def events(self):
        return (self.doc or {}).get("events", {}).get("kept", [])

    def show(self):
        """What a failing check should print: the tail of both streams."""
        return (f"rc={self.rc}\n--- stdout (tail)\n{self.out[-3000:]}\n"
                f"--- stderr (tail)\n{self.err[-3000:]}")


def run(args, timeout=120, json_report=True, env=None, binary=None, check_rc=None):
    """Run pmdstress with args; return a Result with the parsed JSON report."""
    binary = binary or PMDSTRESS
    fd, path = tempfile.mkstemp(prefix="pmdtest-", suffix=".json")
    os.close(fd)
    os.unlink(path)
    cmd = [binary] + list(args)
    if json_report:
        cmd += ["--json", path]
    e = dict(os.environ)
    if env:
        e.update(env)
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e,
                       errors="replace")
    elapsed = time.monotonic() - t0
    doc = None
    if json_report and os.path.exists(path):
        with open(path) as f:
            doc = json.load(f)
        os.unlink(path)
    r = Result(p.returncode, p.stdout, p.stderr, doc, elapsed)
    if check_rc is not None and p.returncode != check_rc:
        print(r.show())
    return r


def spawn(args, **kw):
    """Start pmdstress without waiting (for signal tests)."""
    return subprocess.Popen([PMDSTRESS] + list(args), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def thp_available():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            return "[never]" not in f.read()
    except OSError:
        return False


def is_root():
    return os.geteuid() == 0


def storm_of(pid, timeout=10.0):
    """The storm process of the pmdstress run pid: its child named pmd/storm
    (src/run/supervise.c), or None if none appeared within timeout seconds."""
    end = time.monotonic() + timeout
    while True:
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                kids = [int(c) for c in f.read().split()]
        except OSError:
            return None
        for c in kids:
            try:
                with open(f"/proc/{c}/comm") as f:
                    if f.read().strip() == "pmd/storm":
                        return c
            except OSError:
                pass
        if time.monotonic() > end:
            return None
        time.sleep(0.005)
