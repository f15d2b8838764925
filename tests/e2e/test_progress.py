#!/usr/bin/env python3
# labels: e2e
# timeout: 60
"""The status line: rewritten in place on a terminal, plain lines in a log."""
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
