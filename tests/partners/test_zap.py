#!/usr/bin/env python3
# labels: e2e
# timeout: 180
"""zap, the MADV_DONTNEED/FREE/COLD/PAGEOUT and remap partner, racing the
storm: every op kind runs, on whole chunks and subranges, both racing rounds
and on held chunks it verifies at once; kinds the kernel refuses on the
arena (MADV_FREE on MAP_SHARED) are skipped and counted by name; the
verifier stays clean; bad options are rejected; the checker still
catches corruption while zaps race the rounds; and the verifier enforces
what each op must leave on a held chunk (zeros after MADV_DONTNEED and a
remap, the data after MADV_COLD/PAGEOUT and after MADV_DONTNEED of shmem,
zero or the data after MADV_FREE): --inject zap makes, right after one op,
the mistake a kernel could make there, and it must be caught."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, run  # noqa: E402

base = ["--stressors", "fault,zap", "--threads", "6", "--duration", "2s", "--size", "16M",
        "--progress", "off", "--quiet"]
KINDS = ["dontneed", "free", "cold", "pageout", "remap"]


def clean(r, what):
    check(r.rc == 0, f"{what}: exit 0\n{r.show()}")
    check(r.doc is not None and r.doc["events"]["total"] == 0,
          f"{what}: no events {r.doc['events']['by_kind'] if r.doc else None}")


def lat_ok(r, name):
    lat = r.stressor("zap")["latency"][name]
    return lat["count"] > 0 and lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p99_9"] <= lat["max"]


for mode in ["madvise", "nohuge"]:
    r = run(base + ["--thp", mode])
    clean(r, mode)
    z = r.stressor("zap")
    c = lambda n: r.counter("zap", n)  # noqa: E731
    check(z["status"] == "ran" and z["ops"] > 20 and z["ops_per_s"] > 10,
          f"{mode}: zap ran, {z['ops']} ops, {z['ops_per_s']:.0f}/s")
    for k in KINDS:
        check(c(k) > 0 and lat_ok(r, k + "_call"),
              f"{mode}: {k}: {c(k)} ops, latency {z['latency'][k + '_call']}")
        if k in ("free", "cold", "pageout"):
            check(c(k + "_unsupported") == 0, f"{mode}: {k} is supported on a private arena")
    check(sum(c(k) for k in KINDS) == z["ops"], f"{mode}: every op counted by its kind")
    check(c("raced") > 0, f"{mode}: {c('raced')} ops landed inside a fault round")
    check(0 < c("sub") < z["ops"], f"{mode}: both subrange ({c('sub')}) and whole-chunk ops")
    check(r.counter("fault", "rounds") > 10, f"{mode}: the storm ran")

# MAP_SHARED: MADV_FREE is refused (EINVAL) there: skipped, counted, named
r = run(base + ["--shared"])
clean(r, "shared")
c = lambda n: r.counter("zap", n)  # noqa: E731
check(c("free") == 0 and c("free_unsupported") > 0,
      f"shared: MADV_FREE skipped and counted as free_unsupported ({c('free_unsupported')})")
check("MADV_FREE is not supported on this MAP_SHARED arena" in r.err,
      f"shared: stderr names the skipped kind\n{r.err[-500:]}")
check(all(c(k) > 0 for k in ["dontneed", "cold", "pageout", "remap"]),
      f"shared: the other kinds ran {[(k, c(k)) for k in KINDS]}")

r = run(base + ["--zap-whole", "100", "--zap-race", "0", "--zap-rate", "50"])
clean(r, "whole 100, race 0, rate 50")
check(0 < r.stressor("zap")["ops_per_s"] <= 51, f"rate 50: paced to {r.stressor('zap')['ops_per_s']:.1f}/s")
check(r.counter("zap", "sub") == 0 and r.counter("zap", "raced") == 0 and r.stressor("zap")["ops"] > 0,
      "whole 100 / race 0: only whole chunks, only held ones")

r = run(base + ["--zap-whole", "0", "--zap-race", "100", "--zap-pages", "8", "--zap-align", "range",
                "--zap-rate", "0", "--duration", "1s"])
clean(r, "subranges of 8 pages, racing, rate 0")
z = r.stressor("zap")
check(r.counter("zap", "sub") == z["ops"] > 0 and r.counter("zap", "raced") > 0,
      f"whole 0: only subranges ({r.counter('zap', 'sub')} of {z['ops']}), raced {r.counter('zap', 'raced')}")

# nothing asked for at all is the user's mistake: exit 2 naming it
r = run(base + ["--zap-" + k + "=0" for k in KINDS], json_report=False)
check(r.rc == 2 and "zap: every op weight is 0" in r.err,
      f"all weights 0: a usage error naming it (rc {r.rc}, {r.err.strip()!r})")
r = run(base + ["--shared"] + ["--zap-" + k + "=0" for k in KINDS if k != "free"])
z = r.stressor("zap")
# named by --stressors and unable to run: 125, not a clean run (main's verdict rules)
check(r.rc == 125 and z["status"] == "skipped" and "MADV_FREE" in z["reason"],
      f"shared, only MADV_FREE asked for: zap skipped naming it, exit 125 (rc {r.rc}): {z}")

for bad, what in [(["--zap-race", "101"], "101"), (["--zap-pages", "512"], "512"),
                  (["--zap-align", "middle"], "middle"), (["--zap-free", "x"], "x")]:
    r = run(base + bad, json_report=False)
    lines = [ln for ln in r.err.strip().splitlines() if ln]
    check(r.rc == 2 and len(lines) == 1 and what in lines[0],
          f"bad {' '.join(bad)}: exit 2 and one line naming '{what}': {r.err.strip()!r}")

r = run(["--config", "zap", "--threads", "8", "--duration", "2s", "--progress", "off", "--quiet"])
clean(r, "--config zap")
check(r.doc["scenario"] == "zap" and r.stressor("zap")["ops"] > 0, "configs/zap.ini runs the zapper")

# the checker is live while zap runs. A zap that races a round lets only the
# slots of its pages that were not stored after it read zero, so an injected
# lost write waits for a slot that must hold (tests/selftest/test_race_precise.py
# shows it caught beside a race); garbage is never excused, even with every
# madvise racing.
inj = ["--seed", "7", "--threads", "4", "--fault-group", "64"]
r = run(base + inj + ["--inject", "lost_write:3:17:2:1"])
check(r.rc == 1 and r.doc["events"]["by_class"]["LOST_WRITE"] == 1,
      f"with zap: an injected LOST_WRITE gives exit 1 and one event\n{r.show()}")
r = run(base + inj + ["--zap-race", "100", "--inject", "foreign:3:17:2:1"])
check(r.rc == 1 and r.doc["events"]["by_class"]["FOREIGN"] == 1,
      f"with zaps racing every round: an injected FOREIGN stamp is still caught\n{r.show()}")
ev = [e for e in r.events() if e.get("class") == "FOREIGN"]
check(len(ev) == 1 and (ev[0]["chunk"], ev[0]["page"], ev[0]["slot"]) == (3, 17, 2),
      "the event names chunk 3 page 17 slot 2")

# What each op must leave, enforced: held chunks only (race 0), one op kind at a time.
# After the op on chunk 3, slot 1 of page 17 gets what that op must not leave there.
CHUNK, PAGE, SLOT = 3, 17, 1
CASES = [  # (kind, extra options, the class that must be caught, what was injected)
    ("dontneed", [], "NONZERO_AFTER_ZAP", "the old data survived the zap"),
    ("dontneed", ["--zap-whole", "0", "--zap-pages", "256", "--zap-align", "range"],
     "NONZERO_AFTER_ZAP", "the old data survived a subrange zap"),
    ("remap", [], "NONZERO_AFTER_ZAP", "the old page is still mapped after the remap"),
    ("remap", ["--zap-whole", "0", "--zap-pages", "256", "--zap-align", "range"],
     "NONZERO_AFTER_ZAP", "the old page is still mapped after a subrange remap"),
    ("free", [], "STALE", "an older generation, neither zero nor the data"),
    ("cold", [], "LOST_WRITE", "the data must stay: a zero"),
    ("pageout", [], "LOST_WRITE", "the data must stay: a zero"),
    ("dontneed", ["--shared"], "LOST_WRITE", "shmem keeps its pages: a zero"),
]
OPS = {"dontneed": ("zap-dontneed", "dontneed-sub"), "remap": ("zap-remap", "munmap-sub"),
       "free": ("madv-free",), "cold": ("madv-cold",), "pageout": ("madv-pageout",)}
# plain rounds: every page of a held chunk holds stamps (a seed round writes 32,
# and so does a round with a reader in the race scenario)
held = base + ["--seed", "7", "--threads", "4", "--zap-race", "0", "--fault-seed", "0",
               "--fault-reader-pages", "512"]
for kind, extra, cls, what in CASES:
    name = f"{kind}{' ' + ' '.join(extra) if extra else ''}"
    weights = [f"--zap-{k}={int(k == kind)}" for k in KINDS]
    if "--zap-whole" not in extra:
        extra = extra + ["--zap-whole", "100"]
    r = run(held + weights + extra + ["--inject", f"zap:{CHUNK}:{PAGE}:{SLOT}"])
    d = r.doc or {"events": {"by_class": {}, "total": -1}}
    check(r.rc == 1 and d["events"]["total"] == 1 and d["events"]["by_class"].get(cls) == 1,
          f"after {name}: {what}: exit 1, one {cls} ({d['events']['by_class']})\n{r.show()}")
    ev = [e for e in r.events() if e.get("class") == cls]
    if not check(len(ev) == 1, f"after {name}: the event is kept"):
        continue
    e = ev[0]
    offset = CHUNK * 2 * 1024 * 1024 + PAGE * 4096 + SLOT * 8
    check(e["stressor"] == "zap" and (e["chunk"], e["page"], e["slot"]) == (CHUNK, PAGE, SLOT) and
          int(e["address"], 16) == int(d["arena"]["base"], 16) + offset,
          f"after {name}: zap's verify names chunk/page/slot {CHUNK}/{PAGE}/{SLOT} and the address "
          f"(arena base + {offset:#x}): {e['stressor']} {e['chunk']}/{e['page']}/{e['slot']} "
          f"{e['address']}")
    ring = [o["op"] for o in e["op_ring"]]
    check(len(ring) >= 2 and ring[-1] == "inject" and ring[-2] in OPS[kind],
          f"after {name}: the chunk's ring shows the op, then the injection ({ring[-4:]})")
done()
