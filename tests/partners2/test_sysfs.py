#!/usr/bin/env python3
# labels: e2e
# timeout: 400
"""The sysfs partner (root only, opt-in): THP sysfs churn under the storm,
per-knob writes and latency, a clean verdict, settings as before; skipped
with "needs root" for other users; never part of the default race."""
import glob
import os
import subprocess
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
sys.path.insert(0, os.path.dirname(__file__))
from pmdtest import PMDSTRESS, check, done, is_root, reachable, run, skip  # noqa: E402
import thpsnap  # noqa: E402

BASE = ["--stressors", "fault,sysfs", "--threads", "6", "--duration", "2s", "--size", "16M",
        "--progress", "off", "--quiet", "--sysfs-rate", "200"]
GROUPS = ["enabled", "defrag", "mthp", "khugepaged"]
# uid 65534 runs a copy it can reach (a checkout under /root is mode 0700)
NOBODY = ["--reuid=65534", "--regid=65534", "--clear-groups", reachable(PMDSTRESS)]

# not in the default race, listed as root-only and opt-in, crash knobs hidden
r = run(["list"], json_report=False)
line = [ln for ln in r.out.splitlines() if ln.strip().startswith("sysfs ")]
check(line and "[root]" in line[0] and "[opt-in]" in line[0], f"list: sysfs is [root] [opt-in] {line}")
r = run(["--help"], json_report=False)
check("--sysfs-rate" in r.out and "--sysfs-crash-after" not in r.out and "--sysfs-linger" not in r.out,
      "--help shows --sysfs-rate, hides the test-only crash and linger options")
with open(os.path.join(os.path.dirname(__file__), "..", "..", "configs", "race.ini")) as f:
    check("[sysfs]" not in f.read(), "configs/race.ini has no [sysfs] section")

# bad input: exit 2 naming the value (before anything is written)
for args, needle in [(["--sysfs-values", "most"], "invalid value 'most' (expected one of all|keep-thp)"),
                     (["--sysfs-rate", "often"], "invalid value 'often'"),
                     (["--sysfs-crash", "gently"], "invalid value 'gently'")]:
    r = run(BASE + args, json_report=False)
    check(r.rc == 2 and needle in r.err, f"{' '.join(args)}: exit 2 naming it ({r.err.strip()!r})")

# the skip path: not root
if is_root():
    r = run(NOBODY + BASE, binary="setpriv")
    s = r.stressor("sysfs")
    check(s is not None and s["status"] == "skipped" and s["reason"] == "needs root",
          f"as nobody: sysfs skipped, 'needs root' ({s and s.get('reason')!r})")
    # sysfs was named and did not run: the run did not test what was asked (exit 125)
    check(r.rc == 125 and r.stressor("fault")["status"] == "ran" and
          "sysfs, named by --stressors, could not run" in r.err,
          f"as nobody: the storm still runs, and the run says sysfs did not: exit 125 "
          f"(got {r.rc})")
    r = run(NOBODY + BASE + ["--stressors", "sysfs"], binary="setpriv")
    check(r.rc == 125, f"as nobody, sysfs alone: nothing could run here, exit 125 (got {r.rc})")

if not is_root():
    skip("the churn itself needs root")
if not os.access(f"{thpsnap.THP}/enabled", os.W_OK):
    skip(f"{thpsnap.THP} is not writable here")

with thpsnap.Guard() as before:
    r = run(BASE)
    s = r.stressor("sysfs")
    check(r.rc == 0, "fault+sysfs: exit 0" + ("" if r.rc == 0 else f"\n{r.show()}"))
    check(s is not None and s["status"] == "ran", "sysfs ran")
    check(r.doc["events"]["total"] == 0, f"no events {r.events()[:2]}")
    have = {"enabled": True, "defrag": True, "khugepaged": True,
            "mthp": bool(glob.glob(f"{thpsnap.THP}/hugepages-*kB/enabled"))}
    for g in GROUPS:
        if have[g]:
            n = r.counter("sysfs", g)
            check(n and n > 0, f"{g} written ({n} times)")
            lat = s["latency"][f"{g}_write"]
            check(lat["count"] == n and 0 < lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"],
                  f"{g}: write latency percentiles {lat}")
    check(r.counter("sysfs", "ops") == sum(r.counter("sysfs", g) for g in GROUPS),
          "ops is the sum of the knob groups")
    check(r.counter("sysfs", "failed") == 0, "the kernel took every value it offered")
    check(r.counter("fault", "rounds") > 0 and r.counter("fault", "bad_slots") == 0,
          "the storm kept running through the churn, clean")
    check(thpsnap.read() == before, f"settings as before ({thpsnap.diff(before, thpsnap.read())})")

    # --sysfs-rate paces the writes
    r = run(BASE + ["--sysfs-rate", "20"])
    paced = (r.stressor("sysfs") or {}).get("ops_per_s", 0)
    check(r.rc == 0 and 0 < paced <= 22, f"rate 20: paced to {paced:.1f} writes/s (rc {r.rc})")
    check(thpsnap.read() == before, f"settings as before ({thpsnap.diff(before, thpsnap.read())})")

    # one knob group at a time
    r = run(BASE + ["--sysfs-enabled", "off", "--sysfs-defrag", "off", "--sysfs-mthp", "off"])
    check(r.rc == 0 and r.counter("sysfs", "khugepaged") > 0 and r.counter("sysfs", "enabled") == 0
          and r.counter("sysfs", "mthp") == 0, "only khugepaged knobs when the others are off")
    r = run(BASE + ["--sysfs-enabled", "off", "--sysfs-defrag", "off", "--sysfs-mthp", "off",
                    "--sysfs-khugepaged", "off"])
    s = r.stressor("sysfs")
    check(s and s["status"] == "skipped" and "nothing to churn" in s["reason"],
          f"every group off: skipped with the reason ({s and s.get('reason')!r})")

    # one settings-changing run at a time: a second run skips sysfs (it would save
    # the first one's churn as "the settings before"), and the first still restores
    first = subprocess.Popen([PMDSTRESS] + BASE + ["--duration", "4s", "--sysfs-values", "keep-thp"],
                             stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    end = time.monotonic() + 4
    while thpsnap.read() == before and time.monotonic() < end:
        time.sleep(0.01)
    check(thpsnap.read() != before, "the first run is churning when the second starts")
    r = run(BASE + ["--duration", "1s", "--sysfs-values", "keep-thp"])
    s = r.stressor("sysfs")
    check(s and s["status"] == "skipped" and "another pmdstress run" in s["reason"],
          f"a second run at once: sysfs skipped with the reason ({s and s.get('reason')!r})")
    check(r.rc == 125 and r.stressor("fault")["status"] == "ran",
          f"a second run at once: its storm runs, and sysfs named but not run is exit 125 "
          f"(got {r.rc})")
    out, err = first.communicate(timeout=60)
    check(first.returncode == 0, f"the first run ends clean (rc {first.returncode}) {err[-300:]!r}")
    check(thpsnap.read() == before,
          f"after both: settings as before ({thpsnap.diff(before, thpsnap.read())})")

    # the builtin scenario
    r = run(["--config", "sysfs", "--threads", "6", "--duration", "2s", "--size", "16M",
             "--progress", "off", "--quiet"])
    check(r.rc == 0 and r.stressor("sysfs")["status"] == "ran", "--config sysfs runs clean" + ("" if r.rc == 0 else f"\n{r.show()}"))
    check(thpsnap.read() == before, f"settings as before ({thpsnap.diff(before, thpsnap.read())})")
done()
