#!/usr/bin/env python3
# labels: e2e
# timeout: 180
"""The default race with the collapse and procwalk sections, 16 threads, in
every --thp mode and on a shared arena: both partners run and it stays clean."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, run  # noqa: E402

for extra in [["--thp", "madvise"], ["--thp", "nohuge"], ["--thp", "toggle"], ["--thp", "inherit"],
              ["--shared"]]:
    what = " ".join(extra)
    r = run(["--threads", "16", "--duration", "3s", "--progress", "off", "--quiet"] + extra)
    check(r.rc == 0, f"{what}: exit 0" + ("" if r.rc == 0 else f"\n{r.show()}"))
    if r.doc is None:
        continue
    check(r.doc["events"]["total"] == 0, f"{what}: no events {r.events()[:2]}")
    for name in ["fault", "collapse", "procwalk"]:
        s = r.stressor(name)
        check(s is not None and s["status"] == "ran", f"{what}: {name} ran")
    check(r.counter("collapse", "ops") + r.counter("collapse", "no_target") > 0,
          f"{what}: collapse looked for work")
    check(r.counter("procwalk", "ops") > 0 and r.counter("procwalk", "malformed") == 0,
          f"{what}: procwalk read {r.counter('procwalk', 'ops')} times, nothing malformed")
    check(r.counter("fault", "rounds") > 0 and r.counter("fault", "bad_slots") == 0,
          f"{what}: the storm ran clean ({r.counter('fault', 'rounds')} rounds)")
    check(r.stressor("sysfs") is None, f"{what}: sysfs is not part of the default race")
done()
