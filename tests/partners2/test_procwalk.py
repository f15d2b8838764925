#!/usr/bin/env python3
# labels: e2e
# timeout: 180
"""The procwalk partner: smaps, smaps_rollup, pagemap and numa_maps readers
under the fault storm; every read sanity-checked, none malformed."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, check, done, is_root, reachable, run, thp_available  # noqa: E402

BASE = ["--stressors", "fault,procwalk", "--threads", "6", "--duration", "2s", "--size", "16M",
        "--progress", "off", "--quiet", "--procwalk-rate", "400"]
KINDS = ["smaps", "smaps_rollup", "pagemap", "numa_maps"]
HAVE = {"smaps": True, "smaps_rollup": True, "pagemap": True,
        "numa_maps": os.path.exists("/proc/self/numa_maps")}


def clean(r, what):
    check(r.rc == 0, f"{what}: exit 0" + ("" if r.rc == 0 else f"\n{r.show()}"))
    check(r.doc is not None and r.doc["events"]["total"] == 0,
          f"{what}: no events {r.events()[:2] if r.doc else ''}")
    p = r.stressor("procwalk")
    check(p is not None and p["status"] == "ran", f"{what}: procwalk ran")
    check(r.counter("procwalk", "malformed") == 0, f"{what}: nothing malformed")
    return p


def per_kind(r):
    return {k: r.counter("procwalk", k) for k in KINDS}


r = run(BASE)
p = clean(r, "madvise")
n = per_kind(r)
for k in KINDS:
    if HAVE[k]:
        check(n[k] > 0, f"{k} read ({n[k]} times)")
        lat = p["latency"][f"{k}_read"]
        check(lat["count"] == n[k] and 0 < lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"],
              f"{k}: latency percentiles {lat}")
check(r.counter("procwalk", "ops") == sum(n.values()), f"ops is the sum of the kinds {n}")
check(r.counter("procwalk", "bytes") > 0, f"bytes read: {r.counter('procwalk', 'bytes')}")
check(p["ops_per_s"] > 100, f"about the asked rate of 400 reads/s: {p['ops_per_s']:.0f}")
if thp_available():
    check(r.counter("procwalk", "huge_seen") > 0,
          f"smaps caught the storm's huge PMDs ({r.counter('procwalk', 'huge_seen')} reads)")

r = run(BASE + ["--procwalk-rate", "20"])
clean(r, "rate 20")
paced = r.stressor("procwalk")["ops_per_s"]
check(0 < paced <= 22, f"rate 20: paced to {paced:.1f} reads/s")

for extra, what in [(["--thp", "nohuge"], "nohuge"), (["--thp", "toggle"], "toggle"),
                    (["--shared"], "shared"), (["--procwalk-pagemap-range", "1G"], "whole arena"),
                    (["--procwalk-rate", "0", "--procwalk-workers", "2"], "unpaced, 2 workers")]:
    r = run(BASE + extra)
    clean(r, what)
    check(all(r.counter("procwalk", k) > 0 for k in KINDS if HAVE[k]), f"{what}: every kind read")

# the kinds can be switched off one by one
r = run(BASE + ["--procwalk-smaps", "off", "--procwalk-numa-maps", "off"])
clean(r, "smaps and numa_maps off")
n = per_kind(r)
check(n["smaps"] == 0 and n["numa_maps"] == 0 and n["smaps_rollup"] > 0 and n["pagemap"] > 0,
      f"only smaps_rollup and pagemap read {n}")
r = run(BASE + ["--procwalk-smaps", "off", "--procwalk-smaps-rollup", "off",
                "--procwalk-pagemap", "off", "--procwalk-numa-maps", "off"], json_report=False)
check(r.rc == 2 and "procwalk: nothing to read" in r.err,
      f"all kinds off: a usage error naming it (rc {r.rc}, {r.err.strip()!r})")

# without CAP_SYS_ADMIN pagemap must hide PFNs: the check is live for nobody
if is_root():
    r = run(["--reuid=65534", "--regid=65534", "--clear-groups", reachable(PMDSTRESS)] + BASE,
            binary="setpriv")
    clean(r, "as nobody")
    check(r.counter("procwalk", "pagemap") > 0, "as nobody: pagemap read (PFNs must be hidden)")
    check(not r.doc["system"]["root"], "as nobody: the report says not root")

# the builtin scenario
r = run(["--config", "procwalk", "--threads", "6", "--duration", "2s", "--size", "16M",
         "--progress", "off", "--quiet"])
clean(r, "--config procwalk")

# (the engine names the option without its stressor prefix: match the value)
for args, needle in [(["--procwalk-pagemap-range", "1K"], "invalid value '1K' (out of range"),
                     (["--procwalk-smaps", "maybe"], "invalid value 'maybe' (expected on|off"),
                     (["--procwalk-rate", "-5"], "invalid value '-5'")]:
    r = run(BASE + args, json_report=False)
    check(r.rc == 2 and needle in r.err, f"{' '.join(args)}: exit 2 naming it ({r.err.strip()!r})")
done()
