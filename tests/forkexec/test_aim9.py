#!/usr/bin/env python3
# labels: e2e
# timeout: 300
"""The AIM9-like scenarios, shortened: each test alone (--stressors), in bench
mode (--rounds), with the parent populated with huge PMDs (aim9) or 4 KiB
PTEs (aim9_4k) before the clock; and the scenario as a whole (a mixed load)."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
sys.path.insert(0, os.path.dirname(__file__))
from pmdtest import check, done, run, thp_available  # noqa: E402
from children import become_subreaper, leftovers  # noqa: E402

become_subreaper()
SIZE_MB = 32
chunks = SIZE_MB // 2
short = ["--size", f"{SIZE_MB}M", "--duration", "1s", "--rounds", "2", "--no-warmup",
         "--progress", "off", "--quiet"]

for scenario in ["aim9", "aim9_4k"]:
    for test in ["page", "brk", "fork", "exec"]:
        what = f"{scenario}/{test}"
        r = run(["--config", scenario, "--stressors", test] + short, timeout=120)
        d = r.doc
        check(r.rc == 0, f"{what}: clean\n{r.show()}")
        if not d:
            continue
        check(d["threads"] == 1 and [s["name"] for s in d["stressors"]] == [test],
              f"{what}: one worker of {test} alone")
        check(len(d["rounds"]) == 2, f"{what}: two measured rounds")
        for x in d["rounds"]:
            s = [s for s in x["stressors"] if s["name"] == test][0]
            check(s["ops"] > 0 and x["stop_reason"] == "duration",
                  f"{what}: round {x['index']} ran its time with {s['ops']} ops")
        cols = [c["name"] for c in d["bench"]["columns"]]
        check(f"{test} ops/s" in cols, f"{what}: the per-round rate is a bench column {cols}")
        if test in ("fork", "exec"):
            pop, thp = r.counter(test, "populated"), r.counter(test, "populated_thp")
            # bench totals add up the measured rounds: each populated every chunk
            check(pop == 2 * chunks, f"{what}: every chunk populated before each round ({pop})")
            if scenario == "aim9_4k":
                check(thp == 0 and d["arena"]["thp_share_end"] == 0,
                      f"{what}: 4 KiB pages only ({thp} THP chunks)")
            elif thp_available():
                check(thp > 0 and d["arena"]["thp_share_end"] > 0,
                      f"{what}: populated with huge pages ({thp} of {pop})")
        if test == "fork":
            check(r.counter("fork", "cow_checks") == 0, f"{what}: AIM9 fork_test, no COW check")
        if test == "exec":
            lat = r.stressor("exec")["latency"]
            check(lat["exec"]["count"] == 0 and lat["total"]["count"] == r.stressor("exec")["ops"],
                  f"{what}: AIM9 exec_test, one wait per op (--exec-split off)")
        if test == "page":
            check(r.counter("page", "pages") == 256 * r.stressor("page")["ops"],
                  f"{what}: 256 pages per cycle")
        check(not leftovers(), f"{what}: no child left behind")

# the whole scenario at once: a mixed load, every stressor runs
r = run(["--config", "aim9", "--size", f"{SIZE_MB}M", "--duration", "1s", "--rounds", "0",
         "--progress", "off", "--quiet"])
check(r.rc == 0 and all(r.stressor(s)["ops"] > 0 for s in ("page", "brk", "fork", "exec")),
      f"aim9 as a whole: all four ran clean\n{r.show()}")
done()
