#!/usr/bin/env python3
# labels: e2e
# timeout: 180
"""split, the PMD splitter and mover, racing the storm: mprotect holes and
munmap holes split PMD-mapped THPs (thp_split_pmd rises in vmstat, at least
by what split counted), mremap moves whole chunks to spare slots where the
storm goes on using them, holes start at any page or (--split-align range)
at a multiple of their length, and every moved chunk comes home by the end; the
verifier stays clean, bad options are rejected, and the checker still
catches corruption, also in a chunk that lives at a spare slot."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, run, skip_part, thp_available  # noqa: E402

base = ["--stressors", "fault,split", "--threads", "6", "--duration", "2s", "--size", "16M",
        "--progress", "off", "--quiet"]


def clean(r, what):
    check(r.rc == 0, f"{what}: exit 0\n{r.show()}")
    check(r.doc is not None and r.doc["events"]["total"] == 0,
          f"{what}: no events {r.doc['events']['by_kind'] if r.doc else None}")


def lat_ok(r, name):
    lat = r.stressor("split")["latency"][name]
    return lat["count"] > 0 and lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p99_9"] <= lat["max"]


def common(r, what):
    s = r.stressor("split")
    c = lambda n: r.counter("split", n)  # noqa: E731
    check(s["status"] == "ran" and s["ops"] > 10 and s["ops_per_s"] > 5,
          f"{what}: split ran, {s['ops']} ops, {s['ops_per_s']:.0f}/s")
    for k in ["mprotect", "munmap", "mremap", "moved_home"]:
        check(c(k) > 0, f"{what}: {k} {c(k)}")
    check(c("mprotect") + c("munmap") + c("mremap") + c("moved_home") == s["ops"],
          f"{what}: every op counted by its kind")
    check(c("mremap") == c("moved_home"), f"{what}: every chunk moved away came home by the end "
          f"({c('mremap')} moved, {c('moved_home')} home)")
    for name in ["protect_call", "unprotect_call", "munmap_call", "mmap_call", "mremap_call",
                 "home_call"]:
        check(lat_ok(r, name), f"{what}: latency {name} {s['latency'][name]}")


r = run(base + ["--thp", "madvise"])
clean(r, "madvise")
common(r, "madvise")
if thp_available():
    ours, vm = r.counter("split", "thp_split"), r.vmstat("thp_split_pmd")
    check(ours > 0, f"madvise: ops split PMD-mapped THPs ({ours})")
    check(vm is not None and vm >= ours > 0,
          f"madvise: vmstat thp_split_pmd rose by {vm}, at least split's own {ours}")
    check(r.counter("split", "thp_moved") > 0,
          f"madvise: huge PMDs moved intact ({r.counter('split', 'thp_moved')})")
else:
    skip_part("THP is disabled system-wide: the THP split checks cannot run")

r = run(base + ["--thp", "nohuge", "--split-rate", "40"])
clean(r, "nohuge, rate 40")
common(r, "nohuge")
# ops paced to 40/s, plus up to 4 chunks (one per spare slot) the end of the run moves home
s = r.stressor("split")
check(s["ops"] <= 40 * r.doc["duration_s"] + 1 + 4,
      f"rate 40: {s['ops']} ops in {r.doc['duration_s']:.2f}s")
check(r.counter("split", "thp_split") == 0 and r.counter("split", "thp_moved") == 0,
      "nohuge: no THP to split or move")

r = run(base + ["--shared", "--split-pages", "16"])
clean(r, "shared, 16-page holes")
common(r, "shared")

# --split-align: a hole starts at any page (the default) or at a multiple of
# its length; "aligned" counts the holes that did (mremap ops make none)
holes = ["--split-mremap", "0", "--split-pages", "16", "--split-rate", "0", "--duration", "1s"]
for align in [None, "page", "range"]:
    what = f"align {align or 'default'}, 16-page holes"
    r = run(base + holes + (["--split-align", align] if align else []))
    clean(r, what)
    c = lambda n: r.counter("split", n)  # noqa: E731
    made = c("mprotect") + c("munmap")
    check(r.doc["options"]["stressors"]["split"]["align"] == (align or "page"),
          f"{what}: the report echoes align={r.doc['options']['stressors']['split']['align']}")
    check(made > 20 and c("mprotect") > 0 and c("munmap") > 0,
          f"{what}: holes made ({c('mprotect')} mprotect, {c('munmap')} munmap)")
    if align == "range":
        check(c("aligned") == made, f"{what}: every hole aligned ({c('aligned')} of {made})")
    else:
        # a start at any of 497 pages is a multiple of 16 for 32 of them
        check(c("aligned") < made / 4, f"{what}: holes start at any page, {c('aligned')} "
              f"of {made} aligned")

# a chunk lives at a spare slot: the storm writes and verifies it there, and
# a corruption injected there is caught at the spare slot's address
r = run(["--stressors", "fault,split", "--threads", "4", "--duration", "2s", "--size", "4M",
         "--progress", "off", "--quiet", "--seed", "7", "--split-mprotect", "0",
         "--split-munmap", "0", "--split-away", "1h", "--split-rate", "1000",
         "--fault-group", "64", "--inject", "lost_write:1:17:2:20"])
ev = [e for e in r.events() if e.get("class") == "LOST_WRITE"]
check(r.rc == 1 and len(ev) == 1, f"with split: an injected LOST_WRITE gives exit 1\n{r.show()}")
if ev:
    base_addr, size = int(r.doc["arena"]["base"], 16), r.doc["arena"]["size"]
    at = int(ev[0]["address"], 16)
    check(at >= base_addr + size and (ev[0]["chunk"], ev[0]["page"], ev[0]["slot"]) == (1, 17, 2),
          f"the event is at chunk 1's spare slot ({at:#x}, arena ends at {base_addr + size:#x})")
check(r.counter("split", "mremap") == r.counter("split", "moved_home") >= 2,
      "both chunks moved away and came home at the end")

r = run(base + ["--split-mprotect", "0", "--split-munmap", "0", "--split-mremap", "0"],
        json_report=False)
check(r.rc == 2 and "split: every op weight is 0" in r.err,
      f"all weights 0: a usage error naming it (rc {r.rc}, {r.err.strip()!r})")

for bad, what in [(["--split-pages", "512"], "512"), (["--split-away", "5x"], "5x"),
                  (["--split-mremap", "1000"], "1000"),
                  (["--split-align", "middle"],
                   "--split-align: invalid value 'middle' (expected one of page|range)")]:
    r = run(base + bad, json_report=False)
    lines = [ln for ln in r.err.strip().splitlines() if ln]
    check(r.rc == 2 and len(lines) == 1 and what in lines[0],
          f"bad {' '.join(bad)}: exit 2 and one line naming '{what}': {r.err.strip()!r}")

r = run(["--config", "split", "--threads", "8", "--duration", "2s", "--progress", "off", "--quiet"])
clean(r, "--config split")
check(r.doc["scenario"] == "split" and r.stressor("split")["ops"] > 0, "configs/split.ini runs")
done()
