# SPDX-License-Identifier: GPL-2.0
"""The THP sysfs files the sysfs stressor may touch: read them byte for byte,
and put them back (the tests' own safety net, whatever pmdstress did).

Tests that change or depend on THP sysfs take a lock first: other build
folders run these tests too, and two of them at once would each take the
other's churn for the machine's settings."""
import atexit
import fcntl
import glob
import os
import sys
import time

THP = "/sys/kernel/mm/transparent_hugepage"
LOCK = os.path.join("/run/lock" if os.access("/run/lock", os.W_OK) else "/tmp",
                    "pmdstress-tests-thp.lock")
LOCK_WAIT_S = 150


def files():
    """Every file the sysfs stressor may write, that this kernel has."""
    paths = [f"{THP}/enabled", f"{THP}/defrag"]
    paths += sorted(glob.glob(f"{THP}/hugepages-*kB/enabled"))
    paths += [f"{THP}/khugepaged/scan_sleep_millisecs", f"{THP}/khugepaged/pages_to_scan"]
    return [p for p in paths if os.path.exists(p)]


def read():
    """{path: bytes} of every file, exactly as the kernel shows it."""
    out = {}
    for p in files():
        with open(p, "rb") as f:
            out[p] = f.read()
    return out


def selected(raw):
    """b"always [madvise] never\\n" -> "madvise"; b"10000\\n" -> "10000"."""
    text = raw.decode().strip()
    if "[" in text:
        return text[text.index("[") + 1:text.index("]")]
    return text


def put_back(snap):
    """Write every value of @snap back; returns the paths that still differ."""
    for p, raw in snap.items():
        try:
            with open(p, "w") as f:
                f.write(selected(raw))
        except OSError as e:
            print(f"# cannot restore {p}: {e}")
    now = read()
    return [p for p in snap if now.get(p) != snap[p]]


def diff(a, b):
    """Human-readable differences between two snapshots."""
    return "; ".join(f"{os.path.relpath(p, THP)}: {a.get(p)!r} -> {b.get(p)!r}"
                     for p in sorted(set(a) | set(b)) if a.get(p) != b.get(p))


class Lock:
    """Hold the tests' THP lock for the with block (waits for other test runs)."""

    def __enter__(self):
        self.f = open(LOCK, "w")
        deadline = time.monotonic() + LOCK_WAIT_S
        said = False
        while True:
            try:
                fcntl.flock(self.f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except BlockingIOError:
                if time.monotonic() > deadline:
                    print(f"not ok - another test run held {LOCK} for {LOCK_WAIT_S}s")
                    sys.exit(1)
                if not said:
                    print(f"# waiting for another test run that uses THP sysfs ({LOCK})")
                    sys.stdout.flush()
                    said = True
                time.sleep(0.5)

    def __exit__(self, *exc):
        self.f.close()
        return False


class Guard(Lock):
    """Lock, snapshot; put the snapshot back on exit of the with block and at
    interpreter exit."""

    def __enter__(self):
        super().__enter__()
        self.snap = read()
        atexit.register(put_back, self.snap)
        return self.snap

    def __exit__(self, *exc):
        # restored here, under the lock: not again at exit, when another run may hold it
        atexit.unregister(put_back)
        left = put_back(self.snap)
        if left:
            print(f"# WARNING: could not restore {left}")
        return super().__exit__(*exc)
