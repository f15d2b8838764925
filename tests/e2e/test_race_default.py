#!/usr/bin/env python3
# labels: e2e
# timeout: 120
"""The default race, as a user runs it: `pmdstress --threads 64` for the
default time, and a shorter run; assert on the JSON report."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, run, thp_available  # noqa: E402

r = run(["--threads", "64", "--progress", "plain"], timeout=90)
d = r.doc
check(r.rc == 0, f"pmdstress --threads 64 exits 0\n{r.show()}")
check(d is not None, "a JSON report was written")
if d is None:
    done()
check(d["schema"] == "pmdstress-report" and d["schema_version"] == 1, "schema and version")
check(9.5 <= d["duration_s"] <= 12, f"the default run is bounded at about 10 s ({d['duration_s']:.2f}s)")
check(d["stop_reason"] == "duration", "stopped by its duration")
check(d["verdict"]["status"] == "clean" and d["verdict"]["exit_code"] == 0, "verdict clean")
check(d["threads"] == 64, "64 threads ran")
check(d["seed"].startswith("0x") and int(d["seed"], 16) != 0, "the seed is recorded")
check(d["options"]["global"]["threads"] == "64", "options echo --threads")
check("fault" in d["options"]["stressors"], "options echo the fault stressor's block")
check(d["system"]["kernel"]["release"] == os.uname().release, "kernel release recorded")
check("enabled" in d["system"]["thp"], "THP sysfs settings recorded")
f = r.stressor("fault")
check(f and f["status"] == "ran", "fault ran")
check(f["ops"] > 0 and f["ops_per_s"] > 0, f"pages written: {f['ops']}")
check(f["faults"] > 0, f"faults counted by the workers: {f['faults']}")
check(r.counter("fault", "rounds") > 10, f"rounds: {r.counter('fault', 'rounds')}")
check(r.counter("fault", "collisions") > 0,
      f"touch windows overlapped in {r.counter('fault', 'collisions')} rounds")
check(r.counter("fault", "bad_slots") == 0, "no bad slots")
lat = f["latency"]["first_touch"]
check(lat["count"] > 0 and lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p99_9"] <= lat["max"],
      f"first_touch percentiles ordered: {lat}")
check(r.vmstat("pgfault", 0) > 0, "vmstat pgfault delta > 0")
if thp_available():
    check(f["thp_coverage"]["thp"] > 0, f"THP-mapped chunks seen: {f['thp_coverage']}")
    check(r.vmstat("thp_fault_alloc", 0) > 0, f"thp_fault_alloc delta {r.vmstat('thp_fault_alloc')}")
    check(d["arena"]["thp_share_end"] is not None and d["arena"]["thp_share_end"] > 0,
          f"THP share at the end {d['arena']['thp_share_end']}")
else:
    print("# THP is disabled system-wide: THP assertions not applicable")
check(d["events"]["total"] == 0 and d["events"]["kept"] == [], "no events")
check("verdict: clean (exit 0)" in r.out, "text report ends with the verdict")
check("[" in r.out and "ops" in r.out and "faults" in r.out, "periodic status lines printed")
done()
