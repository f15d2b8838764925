#!/usr/bin/env python3
# labels: e2e
# timeout: 180
"""toggle, the MADV_HUGEPAGE/NOHUGEPAGE flipper, racing the storm: it runs,
flips exact chunks and unaligned ranges, splits and merges VMAs, reports
per-kind counts and latencies, leaves the verifier clean, is skipped (not
passed) under --thp inherit, rejects bad options, and the checker still
catches a corruption while it runs."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, run  # noqa: E402

base = ["--stressors", "fault,toggle", "--threads", "6", "--duration", "2s", "--size", "16M",
        "--progress", "off", "--quiet"]


def clean(r, what):
    check(r.rc == 0, f"{what}: exit 0\n{r.show()}")
    check(r.doc is not None and r.doc["events"]["total"] == 0,
          f"{what}: no events {r.doc['events']['by_kind'] if r.doc else None}")


def lat_ok(r, name):
    lat = r.stressor("toggle")["latency"][name]
    return lat["count"] > 0 and lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p99_9"] <= lat["max"]


r = run(base + ["--thp", "madvise", "--toggle-maps-interval", "10ms"])
clean(r, "madvise")
t = r.stressor("toggle")
c = lambda n: r.counter("toggle", n)  # noqa: E731
check(t["status"] == "ran" and t["workers"] == 1, f"toggle ran with its default 1 worker: {t}")
check(t["ops"] > 50 and t["ops_per_s"] > 25, f"ops {t['ops']}, {t['ops_per_s']:.0f}/s")
check(c("hugepage") > 0 and c("nohugepage") > 0 and abs(c("hugepage") - c("nohugepage")) <= 1,
      f"flips come in pairs, away and back: hugepage {c('hugepage')} nohugepage {c('nohugepage')}")
check(0 < c("unaligned") < t["ops"], f"mixed: unaligned {c('unaligned')} of {t['ops']}")
check(c("hugepage") + c("nohugepage") + c("prctl") == t["ops"], "every op is counted by kind")
check(c("vma_samples") >= 20, f"maps sampled {c('vma_samples')} times")
check(c("vma_splits") > 0 and c("vma_merges") > 0,
      f"sampled flips split ({c('vma_splits')}) and merged ({c('vma_merges')}) arena VMAs")
check(c("prctl") == 0, "prctl flips are off by default")
for name in ["chunk_call", "unaligned_call", "maps_read"]:
    check(lat_ok(r, name), f"latency {name}: {t['latency'][name]}")
check(r.stressor("fault")["ops"] > 0 and r.counter("fault", "rounds") > 10, "the storm ran")

r = run(base + ["--toggle-align", "chunk"])
clean(r, "align chunk")
check(r.counter("toggle", "unaligned") == 0 and r.stressor("toggle")["ops"] > 0,
      f"align chunk: no unaligned call ({r.counter('toggle', 'unaligned')})")

r = run(base + ["--toggle-align", "unaligned", "--toggle-range", "16K"])
clean(r, "align unaligned")
check(r.counter("toggle", "unaligned") == r.stressor("toggle")["ops"] > 0,
      "align unaligned: every call is unaligned")

r = run(base + ["--toggle-prctl", "on"])
clean(r, "prctl on")
check(r.counter("toggle", "prctl") > 0 and lat_ok(r, "prctl_call"),
      f"PR_SET_THP_DISABLE flipped {r.counter('toggle', 'prctl')} times")

r = run(base + ["--thp", "nohuge"])
clean(r, "nohuge")
check(r.counter("toggle", "hugepage") > 0, "nohuge: flips go to MADV_HUGEPAGE and back")

r = run(base + ["--thp", "toggle", "--toggle-rate", "100", "--duration", "1s"])
clean(r, "thp toggle, rate 100")
paced = r.stressor("toggle")["ops_per_s"]
check(0 < paced <= 102, f"rate 100: paced to {paced:.0f}/s")
r = run(base + ["--thp", "toggle", "--toggle-rate", "0", "--duration", "1s"])
clean(r, "thp toggle, rate 0 (as fast as possible)")
check(r.stressor("toggle")["ops_per_s"] > 3 * paced,
      f"rate 0 is not paced: {r.stressor('toggle')['ops_per_s']:.0f}/s")

r = run(base + ["--thp", "inherit"])
t = r.stressor("toggle")
# toggle named by --stressors and unable to run: exit 125 (README, Exit status)
check(r.rc == 125 and t["status"] == "skipped" and "inherit" in t["reason"],
      f"--thp inherit: toggle is skipped with the reason, never passed: {t}")
check(r.stressor("fault")["status"] == "ran", "inherit: the storm still ran")

for bad, what in [(["--toggle-align", "diagonal"], "diagonal"), (["--toggle-range", "1K"], "1K"),
                  (["--toggle-rate", "-5"], "-5"), (["--toggle-maps-interval", "soon"], "soon")]:
    r = run(base + bad, json_report=False)
    lines = [ln for ln in r.err.strip().splitlines() if ln]
    check(r.rc == 2 and len(lines) == 1 and what in lines[0],
          f"bad {' '.join(bad)}: exit 2 and one line naming '{what}': {r.err.strip()!r}")

r = run(["--config", "toggle", "--threads", "8", "--duration", "2s", "--progress", "off", "--quiet"])
clean(r, "--config toggle")
check(r.doc["scenario"] == "toggle" and r.doc["options"]["stressors"]["toggle"]["rate"] == "2000",
      "the toggle scenario's options are used")
check(r.stressor("toggle")["ops"] > 0, "configs/toggle.ini runs the flipper")

# the checker is live while toggle runs: an injected lost write is caught
r = run(base + ["--seed", "7", "--fault-group", "64", "--inject", "lost_write:3:17:2:1"])
check(r.rc == 1 and r.doc["events"]["by_class"]["LOST_WRITE"] == 1,
      f"with toggle: an injected LOST_WRITE gives exit 1 and one event\n{r.show()}")
ev = [e for e in r.events() if e.get("class") == "LOST_WRITE"]
check(len(ev) == 1 and (ev[0]["chunk"], ev[0]["page"], ev[0]["slot"]) == (3, 17, 2),
      "the event names chunk 3 page 17 slot 2")
done()
