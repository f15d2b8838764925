#!/usr/bin/env python3
# labels: e2e
# timeout: 240
"""The default race's storm with toggle, zap and split together, with the
options configs/race.ini gives them, in every THP mode and on a MAP_SHARED
arena: 16 threads for a few seconds, and the verifier must stay clean."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, run  # noqa: E402

PARTNERS = ["toggle", "zap", "split"]
base = ["--config", "race", "--stressors", "fault," + ",".join(PARTNERS), "--threads", "16",
        "--duration", "3s", "--progress", "off", "--quiet"]

for mode in [["--thp", "madvise"], ["--thp", "nohuge"], ["--thp", "toggle"], ["--shared"]]:
    what = " ".join(mode)
    r = run(base + mode)
    check(r.rc == 0 and r.doc["events"]["total"] == 0,
          f"{what}: clean, no events\n{r.show()}")
    check(r.doc["threads"] == 16 and r.stressor("fault")["workers"] == 13,
          f"{what}: the storm gets the rest of 16 threads ({r.stressor('fault')['workers']})")
    check(r.counter("fault", "rounds") > 10, f"{what}: the storm ran {r.counter('fault', 'rounds')} rounds")
    for p in PARTNERS:
        s = r.stressor(p)
        check(s["status"] == "ran" and s["ops"] > 0, f"{what}: {p} ran, {s['ops']} ops")
    check(r.doc["options"]["stressors"]["zap"]["rate"] == "300", f"{what}: race.ini's zap rate is used")
done()
