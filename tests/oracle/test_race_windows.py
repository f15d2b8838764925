#!/usr/bin/env python3
# labels: e2e
# timeout: 120
"""The fault stressor's race-window oracle: a round "collided" when two
workers' first stores into the round's contested chunk overlapped in time,
not when their whole touches of the round did (those nearly always do, and
say nothing). A worker alone in its group never collides; two workers that
meet on the first chunk one full chunk apart (forward and backward order,
a busy wait after every page) rarely do, though their whole touches always
overlap; many workers released on one chunk do."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, run  # noqa: E402

BASE = ["--stressors", "fault", "--size", "16M", "--progress", "off", "--quiet", "on"]


def race(r):
    s = r.stressor("fault")
    return (s or {}).get("race") or {"rounds": 0, "collided": 0}


# one worker per group: nobody to collide with
r = run(BASE + ["--threads", "4", "--fault-group", "1", "--duration", "500ms"], timeout=60)
x = race(r)
if not check(r.rc == 0 and x["rounds"] > 0, f"alone in its group: rounds run ({x['rounds']})"):
    print(r.show())
check(x["collided"] == 0, f"alone in its group: no collisions ({x['collided']})")

# two workers, two chunks a round: the forward one stores into the first
# chunk at the gate, the backward one only after its 32 pages of the other
# chunk, 100 us apart (3.2 ms later); a 4 KiB first store lasts microseconds
r = run(BASE + ["--threads", "2", "--fault-group", "2", "--fault-chunks", "2",
                "--fault-order", "mixed", "--fault-pages", "32", "--fault-delay", "100us",
                "--thp", "nohuge", "--duration", "1s"], timeout=60)
x = race(r)
lat = (r.stressor("fault") or {}).get("latency", {})
if not check(r.rc == 0 and x["rounds"] >= 10, f"one chunk apart: rounds run ({x['rounds']})"):
    print(r.show())
# a preemption inside a first store may stretch it over the other's: a few, not most
check(x["collided"] <= x["rounds"] // 4,
      f"one chunk apart: first stores do not overlap ({x['collided']} of {x['rounds']} rounds "
      f"collided), though whole touches last {lat.get('window', {}).get('p50')} ns")

# eight workers released at once on one chunk: some first stores overlap
r = run(BASE + ["--threads", "8", "--fault-group", "8", "--duration", "1s"], timeout=60)
x = race(r)
if not check(r.rc == 0 and x["rounds"] > 0, f"eight at once: rounds run ({x['rounds']})"):
    print(r.show())
check(x["collided"] > 0, f"eight at once: first stores overlap ({x['collided']} of {x['rounds']})")
check(x["collided"] == r.counter("fault", "collisions"), "race.collided is the collisions counter")
done()
