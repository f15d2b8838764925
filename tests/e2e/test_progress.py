#!/usr/bin/env python3
# labels: e2e
# timeout: 120
"""The status line: rewritten in place on a terminal, plain lines in a log. In
bench mode it names the round and shows --duration as the limit it is (a
round of mmap_anon_test ends when its sweep is done, in seconds)."""
import os
import pty
import re
import select
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, check, done, run  # noqa: E402

args = ["--threads", "4", "--duration", "3s", "--size", "8M", "--interval", "500ms"]
r = run(args, json_report=False)
lines = [l for l in r.out.splitlines() if re.match(r"^\[\S+/\S+\] ops ", l)]
check(len(lines) >= 4, f"not a TTY: {len(lines)} plain status lines")
check("\r" not in r.out and "\033[K" not in r.out, "no terminal control codes in a log")
check(all(re.search(r"ops \S+/s  faults \S+/s  thp \S+  events \d+", l) for l in lines),
      "each line has ops/s, faults/s, THP share and events")

# bench mode: the warm-up, then round i/N, each with its own clock
r = run(["--config", "mmap_anon_test", "--size", "64M", "--rounds", "2", "--interval", "50ms",
         "--progress", "plain"], json_report=False, timeout=60)
bench = [l for l in r.out.splitlines() if l.startswith("[") and "] ops " in l]
heads = [re.match(r"^\[(warm-up|round (\d+)/2) (\S+), at most (\S+)\] ops ", l) for l in bench]
check(r.rc == 0 and bench and all(heads), f"bench mode: every line is '[warm-up|round i/2 T, at "
      f"most 300s] ...' (rc {r.rc}; {[b for b, h in zip(bench, heads) if not h][:3] or bench[:2]})")
order = [0 if h.group(1) == "warm-up" else int(h.group(2)) for h in heads if h]
check(order == sorted(order) and all(h.group(4) == "300s" for h in heads if h),
      f"bench mode: the warm-up first, then the rounds in order, under the 5m limit ({order})")

master, slave = pty.openpty()
p = subprocess.Popen([PMDSTRESS] + args, stdout=slave, stderr=subprocess.DEVNULL, close_fds=True)
os.close(slave)
buf = b""
while True:
    rl, _, _ = select.select([master], [], [], 10)
    if not rl:
        break
    try:
        chunk = os.read(master, 4096)
    except OSError:
        break
    if not chunk:
        break
    buf += chunk
p.wait(timeout=20)
text = buf.decode(errors="replace")
check(text.count("\r[") >= 4 and "\033[K" in text, "on a terminal: one line rewritten with \\r")
check(p.returncode == 0, "terminal run exits 0")
done()
