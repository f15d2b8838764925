#!/usr/bin/env python3
# labels: e2e
# timeout: 120
# serial: its fake splats reach every reader of the kernel log
"""The kernel log oracle: real splat text written into the kernel log
(/dev/kmsg, as root) during a run becomes an event with the kernel's line, a
timestamp on the run's clock and what was active; exit 3. Every line of
tests/data/kmsg_lines.txt, the table the matcher's unit test reads, goes
through the log: each splat line is one event of its kind, the other lines
none. Where the log cannot be read (not root) the run says so once and goes
on.

The risk: the kernel log is the machine's, not the run's. Every pmdstress
running while this test writes (another test under ctest -j, a soak on the
same host) reads these BUG lines too and ends with exit 3, a false kernel
verdict. ctest runs this test alone ("# serial" above: RUN_SERIAL); run by
hand, run it on a quiet machine. Each line says "pmdstress test: " and is
written with the user facility (dmesg -x: "user"), so a person reading the
log can tell it from the kernel's own."""
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import (NOBODY, PMDSTRESS, SOURCE_DIR, check, done, is_root, reachable,  # noqa: E402
                     skip, skip_part, spawn)

if not is_root():
    skip("writing splat text into /dev/kmsg needs root")


def run_start(fifo):
    """CLOCK_MONOTONIC (time.monotonic) at the run's t=0, from its time
    series as it comes: each line is written just after the time it names,
    so the earliest arrival minus its t_s is t=0 plus at most that delay."""
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    buf, best, deadline = b"", None, time.monotonic() + 20
    while time.monotonic() < deadline:
        if not select.select([fd], [], [], 1.0)[0]:
            continue
        chunk = os.read(fd, 65536)
        now = time.monotonic()
        buf += chunk
        *lines, buf = buf.split(b"\n")
        for line in lines:
            t_s = json.loads(line)["t_s"]
            best = now - t_s if best is None else min(best, now - t_s)
            if t_s >= 0.8:
                return fd, best
    return fd, best


def run_with_lines(lines, extra=()):
    path = tempfile.mktemp(suffix=".json")
    tmp = tempfile.mkdtemp()
    fifo = os.path.join(tmp, "series")
    os.mkfifo(fifo)
    p = spawn(["--threads", "4", "--duration", "3s", "--size", "16M", "--progress", "off",
               "--interval", "100ms", "--jsonl", fifo, "--json", path] + list(extra))
    fd, t0 = run_start(fifo)
    written = []
    for line in lines:
        written.append(time.monotonic() - t0 if t0 is not None else None)
        # one open per line: the kernel ratelimits each opener of
        # /dev/kmsg to 10 lines per 5 s (printk_devkmsg=ratelimit)
        with open("/dev/kmsg", "w") as k:
            k.write(line + "\n")
    out, err = p.communicate(timeout=60)
    os.close(fd)
    os.unlink(fifo)
    os.rmdir(tmp)
    d = json.load(open(path)) if os.path.exists(path) else None
    if d:
        os.unlink(path)
    return p.returncode, out, err, d, written


def table():
    """(kind or None, line) from the table the unit test reads too."""
    rows = []
    with open(os.path.join(SOURCE_DIR, "tests", "data", "kmsg_lines.txt")) as f:
        for row in f.read().split("\n"):
            if row and not row.startswith("#"):
                what, line = row.split("\t", 1)
                rows.append((None if what == "-" else what, line))
    return rows


PREFIX = "pmdstress test: "
rows = table()
splats = [(what, line) for what, line in rows if what]
# a run keeps its first 64 events in full (PMD_EVENTS_KEPT), counts the rest:
# one line of each kind first, so that every kind is among those kept
KEPT = 64
seen = set()
firsts = [(w, l) for w, l in splats if not (w in seen or seen.add(w))]
splats = firsts + [s for s in splats if s not in firsts]
others = [line for what, line in rows if not what]
check(len(splats) >= 40 and len(others) >= 14, f"the table: {len(splats)} splats, {len(others)} "
      "other lines")
# the splats and the other lines interleaved, so a line that is no event
# sits between two that are
lines = []
for i, (what, line) in enumerate(splats):
    lines += [line] + others[i:i + 1]
kinds = dict((line, what) for what, line in splats)
# every priority but emergency (which syslog daemons wall to every
# terminal): the oracle must not filter by level
rc, out, err, d, written = run_with_lines([f"<{1 + i % 7}>{PREFIX}{line}"
                                           for i, line in enumerate(lines)])
check(rc == 3, f"splats in the kernel log: exit 3 (got {rc}) {err[-300:]}")
check(d and d["verdict"]["status"] == "kernel", "verdict: kernel")
ev = [e for e in (d or {}).get("events", {}).get("kept", []) if e["kind"] == "kernel_log"]
check(len(firsts) <= KEPT, f"{len(firsts)} kinds: each can be kept")
check(d and d["events"]["by_kind"]["kernel_log"] == len(splats) and
      len(ev) == min(len(splats), KEPT),
      f"one kernel_log event per splat line: {d and d['events']['by_kind']['kernel_log']} of "
      f"{len(splats)}, {len(ev)} kept")
klog = (d or {}).get("monitors", {}).get("kernel_log", [])
for i, (what, line) in enumerate(splats):
    if i >= KEPT:  # counted above; its line is in the report's kernel log
        check(any((PREFIX + line)[:150] in k for k in klog),
              f"{what}: {line[:50]!r} in the report's kernel log (past the kept events)")
        continue
    # the event's text is "<kind>: <the kernel's line, 150 bytes> [active...]"
    mine = [e for e in ev if e["text"].startswith(f"{what}: {(PREFIX + line)[:150]}")]
    check(len(mine) == 1, f"{what}: one event for {line[:50]!r} ({len(mine)})")
for line in others:
    mine = [e for e in ev if line[:40] in e["text"]]
    check(not mine, f"no event for {line[:50]!r} ({[e['text'][:40] for e in mine]})")
first = PREFIX + lines[0]
if ev:
    e = ev[0]
    check(e["text"].startswith(kinds[lines[0]] + ": ") and first in e["text"],
          f"the first event carries the kernel's line: {e['text'][:120]!r}")
    check("[active: fault" in e["text"], "and the stressors active then")
    check(0.5 < e["t_s"] < 3.5, f"kernel timestamp mapped to the run's clock: {e['t_s']:.3f}s")
    # printk's clock is not CLOCK_MONOTONIC (53 ms apart on one machine): the
    # marker line read back at the start must have put the stamp on ours
    w = written[0]
    check(w is not None and abs(e["t_s"] - w) < 0.025,
          f"the event's time is when the line was written: {e['t_s']:.4f}s vs "
          f"{w if w is None else round(w, 4)}s")
    check("; chunks " in e["text"], f"and the chunks active then: {e['text'][-80:]!r}")
check(d and any(first in l for l in d["monitors"]["kernel_log"]),
      "the report keeps the kernel lines")
check("kernel log during the run" in out, "the text report shows them")

rc, out, err, d, _ = run_with_lines([f"<6>{PREFIX}{l}" for l in others])
check(rc == 0 and d["events"]["total"] == 0,
      f"ordinary lines, some close to a splat, are no event (rc {rc}) {err[-300:]}")
check(d["monitors"]["kmsg"] == "reading", "the monitor was reading the log")

# Out of descriptors for the main loop's signalfd (RLIMIT_NOFILE), the log is read every
# 100 ms instead of when it has a line: a splat is still an event. The highest limit
# without a signalfd leaves the log open (tests/robust/test_exhaustion.py sweeps them).
if shutil.which("prlimit"):
    BASE = ["--stressors", "fault", "--threads", "2", "--size", "16M", "--progress", "off"]
    limit = None
    for n in range(9, 3, -1):
        p = subprocess.run(["prlimit", f"--nofile={n}", PMDSTRESS] + BASE +
                           ["--duration", "300ms", "--quiet"], capture_output=True, text=True,
                           timeout=60)
        if "no signalfd" in p.stderr:
            limit = n
            break
    check(limit is not None and "/dev/kmsg unreadable" not in p.stderr,
          f"a limit takes the signalfd and leaves the log ({limit}: {p.stderr.strip()!r})")
    if limit:
        # the text report (the JSON needs one more descriptor than there is)
        p = subprocess.Popen(["prlimit", f"--nofile={limit}", PMDSTRESS] + BASE +
                             ["--duration", "2s"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        time.sleep(1)
        line = splats[0][1]
        with open("/dev/kmsg", "w") as k:
            k.write(f"<5>{PREFIX}{line}\n")
        out, err = p.communicate(timeout=60)
        check(p.returncode == 3 and "no signalfd" in err and f"{PREFIX}{line}"[:60] in out,
              f"without a signalfd the splat is an event: exit 3 (rc {p.returncode}; "
              f"{err.strip()[-300:]!r})")
else:
    skip_part("no prlimit(1): the run without a signalfd is not tried")

# not root: the log may be unreadable; the run says so once and goes on
with open("/proc/sys/kernel/dmesg_restrict") as f:
    restricted = f.read().strip() == "1"
if restricted:
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o777)
        path = os.path.join(tmp, "r.json")
        p = subprocess.run(NOBODY + [reachable(PMDSTRESS), "--stressors", "fault", "--threads", "2",
                                     "--duration", "1s", "--size",
                                     "8M", "--progress", "off", "--quiet", "--json", path],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, f"unprivileged run still runs clean (rc {p.returncode}) {p.stderr}")
        check(p.stderr.count("/dev/kmsg unreadable") == 1, "says once that the log is unreadable")
        d = json.load(open(path))
        check(d["monitors"]["kmsg"].startswith("unreadable"), "the report says so too")
else:
    print("# dmesg_restrict is 0: an unprivileged reader can read /dev/kmsg here")
done()
