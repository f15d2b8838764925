#!/usr/bin/env python3
# labels: e2e
# timeout: 180
"""The stressor options the kernel mutant suite added, on the host:
--fault-passes (each worker sweeps a fresh chunk P times, pass k into slot
slot + k * workers: the stores that go through cached translations) writes
and verifies every pass's slots, and an impossible value is a usage error;
--migrate-heads (one move_pages of every chunk's first page) is a weight like
the others: on a 1-node host the stressor is skipped with the reason, and a
run with every weight 0 is a usage error (exit 2) that names heads among them."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, run, skip, thp_available  # noqa: E402

if not thp_available():
    skip("transparent hugepages are disabled here")

# one group of all workers, so that the slots below are written; plain rounds,
# whose counts the checks below compute (a seed round writes a smaller window, and
# the race scenario's rounds with a reader 32 pages)
base = ["--stressors", "fault", "--threads", "4", "--fault-group", "4", "--fault-seed", "0",
        "--fault-reader-pages", "512", "--size", "8M", "--progress", "off", "--quiet", "on"]

# P passes: every completed round is 4 workers x 512 pages x P stores
r = run(base + ["--fault-passes", "3", "--duration", "1s"])
rounds, ops = r.counter("fault", "rounds"), r.counter("fault", "ops")
check(r.rc == 0 and r.doc and r.doc["verdict"]["status"] == "clean",
      f"--fault-passes 3: clean ({r.doc and r.doc['verdict']})") or print(r.show())
check(rounds and ops == rounds * 4 * 512 * 3,
      f"--fault-passes 3: {ops} stores = {rounds} rounds x 4 workers x 512 pages x 3 passes")

# the verifier knows the later passes' slots: a write lost in pass 3 of worker 1
# (slot 1 + 2 * 4 = 9) is reported there
for mode in ("madvise", "nohuge"):
    r = run(base + ["--fault-passes", "3", "--duration", "1s", "--thp", mode,
                    "--inject", "lost_write:0:7:9:1"])
    ev = [e for e in r.events() if e.get("class") == "LOST_WRITE"]
    check(r.rc == 1 and ev and ev[0].get("chunk") == 0 and ev[0].get("page") == 7 and
          ev[0].get("slot") == 9,
          f"{mode}: a lost pass-3 store is LOST_WRITE at chunk 0 page 7 slot 9 "
          f"(exit {r.rc}, {[(e.get('class'), e.get('chunk'), e.get('page'), e.get('slot')) for e in ev[:2]]})") \
        or print(r.show())

# readers: their first touch of a chunk is a load, then a check of the chunk's
# first page (zeros and this round's stamps only), then the usual stores
r = run(base + ["--fault-readers", "2", "--duration", "1s"])
rounds, reads = r.counter("fault", "rounds"), r.counter("fault", "reads")
check(r.rc == 0 and r.doc and r.doc["verdict"]["status"] == "clean",
      f"--fault-readers 2: clean ({r.doc and r.doc['verdict']})") or print(r.show())
check(rounds and reads == rounds * 2,
      f"--fault-readers 2: {reads} reads = {rounds} rounds x 2 readers")
# what a reader's check finds: old data planted after a zap in page 0, slot 9
# (no worker's), is reported by the readers' check, before the round's stores
r = run(base + ["--fault-readers", "4", "--duration", "1s", "--inject",
                "nonzero_after_zap:0:0:9"])
ev = [e for e in r.events() if e.get("kind") == "corruption"]
check(r.rc == 1 and ev and ev[0].get("class") == "NONZERO_AFTER_ZAP" and
      ev[0].get("chunk") == 0 and ev[0].get("page") == 0 and ev[0].get("slot") == 9 and
      "read while the round wrote" in ev[0].get("text", ""),
      f"--fault-readers: old data in page 0 slot 9 is NONZERO_AFTER_ZAP there, found by a "
      f"reader (exit {r.rc}, {[(e.get('class'), e.get('chunk'), e.get('page'), e.get('slot'), e.get('text', '')[:80]) for e in ev[:2]]})") \
    or print(r.show())

# more slots than a page has: a usage error naming the value
r = run(base + ["--fault-passes", "200", "--duration", "1s"], json_report=False)
check(r.rc == 2 and "--fault-passes 200" in r.err and "512" in r.err,
      f"--fault-passes 200 with 4 workers: exit 2 naming the value ({r.rc}: {r.err.strip()[:160]})")
r = run(base + ["--fault-passes", "0", "--duration", "1s"], json_report=False)
check(r.rc == 2 and "passes" in r.err, f"--fault-passes 0: exit 2 ({r.rc}: {r.err.strip()[:160]})")

# migrate heads: a weight of its own
heads_only = ["--stressors", "fault,migrate", "--threads", "3", "--size", "8M",
              "--duration", "1s", "--progress", "off", "--quiet", "on",
              "--migrate-pages", "0", "--migrate-chunk", "0", "--migrate-mbind", "0",
              "--migrate-process", "0", "--migrate-held", "0"]
r = run(heads_only + ["--migrate-heads", "0"], json_report=False)
check(r.rc == 2 and "migrate: every weight is 0" in r.err and "--migrate-heads" in r.err,
      f"every weight 0: exit 2, the message lists --migrate-heads ({r.rc}: {r.err.strip()[:200]})")
r = run(heads_only + ["--migrate-heads", "1"])
m = r.stressor("migrate") or {}
nodes = len([d for d in os.listdir("/sys/devices/system/node") if d.startswith("node")]) \
    if os.path.isdir("/sys/devices/system/node") else 1
if nodes < 2:
    check(m.get("status") == "skipped" and "node" in (m.get("reason") or ""),
          f"heads on a 1-node host: skipped with the reason ({m.get('reason')})")
else:
    check(m.get("status") == "ran" and (r.counter("migrate", "chunks") or 0) > 0,
          f"heads on {nodes} nodes: ran, {r.counter('migrate', 'chunks')} calls")
# a stressor named with --stressors that cannot run makes the run 125 (README, Exit status)
want = 125 if nodes < 2 else 0
check(r.rc == want, f"heads run: exit {r.rc} (want {want})") or print(r.show())
done()
