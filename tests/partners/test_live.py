#!/usr/bin/env python3
# labels: e2e
# timeout: 300
"""split and fork on the chunk of a live round, not only on idle chunks: with
--split-race / --fork-race 100 each kind acts on the chunk a fault round is
writing, the run stays clean, and the JSON shows the live ops and the pages
judged while the round wrote them (split: what the round's log says is done
holds its stamp; fork: the child sees a prefix of each worker's stores). A
lost write beside a live munmap hole is caught, the op in that round's ring.
The default race runs both."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, run  # noqa: E402

BASE = ["--threads", "8", "--duration", "3s", "--size", "16M", "--progress", "off", "--quiet"]
KINDS = ["mprotect", "munmap", "mremap"]


def live(r, st):
    return (r.counter(st, "live") or 0), (r.counter(st, "live_pages") or 0)


def clean(r, what):
    ok = r.rc == 0 and r.doc and r.doc["events"]["total"] == 0
    check(ok, f"{what}: clean ({r.doc['events']['by_kind'] if r.doc else None})\n"
          f"{'' if ok else r.show()}")


for kind in KINDS:
    weights = [f"--split-{k}={int(k == kind)}" for k in KINDS]
    r = run(BASE + ["--stressors", "fault,split", "--split-race", "100", "--seed", "3"] + weights)
    clean(r, f"live {kind}")
    n, pages = live(r, "split")
    check(n > 0 and pages > 0 and r.counter("split", kind) > 0,
          f"live {kind}: {n} ops on a live round, {pages} pages judged while it wrote "
          f"({r.counter('split', kind)} {kind} ops in all)")
    if kind == "mremap":
        check(r.counter("split", "mremap") == r.counter("split", "moved_home"),
              "every chunk moved away, live or idle, came home by the end")

# the round's verifier knows a live munmap hole: a lost write beside it is caught (one group
# of writers, so that slot 2 is written: the default group is the CPUs' count)
hole = None
for seed in range(1, 31):  # until one round had a live hole (timing: split may miss the round)
    r = run(BASE + ["--stressors", "fault,split", "--fault-group", "64", "--split-race", "100",
                    "--split-rate", "2000",
                    "--split-mprotect", "0", "--split-mremap", "0", "--seed", str(seed),
                    "--inject", "lost_write:3:17:2:2"])
    d = r.doc or {"events": {"by_class": {}, "total": -1}}
    check(r.rc == 1 and d["events"]["total"] == 1 and d["events"]["by_class"].get("LOST_WRITE") == 1,
          f"seed {seed}: a lost write beside live munmap holes: exit 1, one LOST_WRITE "
          f"({d['events']['by_class']})\n{r.show() if r.rc != 1 else ''}")
    for e in r.events():
        ring = [o["op"] for o in e["op_ring"]]
        if "round" in ring and ring[-1] == "inject":
            since = ring[len(ring) - 1 - ring[::-1].index("round"):]
            if "munmap-sub" in since:
                hole = (seed, since)
    if hole:
        break
check(hole, f"a round with a live munmap hole had its injected lost write caught: {hole}")

r = run(BASE + ["--stressors", "fault,fork", "--fork-race", "100", "--seed", "5"])
clean(r, "live fork")
n, pages = live(r, "fork")
check(n > 0 and pages == n * 512,
      f"live fork: {n} forks copied a live round, the child checked {pages} pages")

# the default race: split and fork do both
r = run(["--threads", "16", "--duration", "4s", "--progress", "off", "--quiet"])
clean(r, "the default race")
check(live(r, "split")[0] > 0 and live(r, "split")[1] > 0,
      f"the default race: split acted on live rounds {live(r, 'split')}")
check(r.doc["options"]["stressors"]["fork"]["race"] == "50" and
      r.doc["options"]["stressors"]["split"]["race"] == "50",
      "the default race asks half of split's and fork's ops on live rounds")
done()
