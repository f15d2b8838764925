#!/usr/bin/env python3
# labels: e2e
# timeout: 120
"""--fault-first: the page of each chunk a round's first store hits. With a
one-page window (--fault-pages 1) a round writes that page of every chunk and
nothing else, so a lost write injected there is caught, with that page's
address, and one injected in the page before it lands in a slot nobody
wrote and must read zero, and does: the run stays clean. The default
(random) still runs clean; a value that is not a page number or 'random'
exits 2 naming it."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, run  # noqa: E402

CHUNK, PAGE, SLOT = 2, 300, 0
base = ["--stressors", "fault", "--threads", "1", "--fault-group", "1", "--fault-pages", "1",
        "--fault-order", "forward", "--size", "8M", "--duration", "1s", "--seed", "5",
        "--progress", "off", "--quiet"]

for thp in ("nohuge", "madvise"):
    # the one written page is PAGE: a lost write there is corruption at its address
    r = run(base + ["--thp", thp, "--fault-first", str(PAGE),
                    "--inject", f"lost_write:{CHUNK}:{PAGE}:{SLOT}:1"])
    ev = [e for e in r.events() if e.get("class") == "LOST_WRITE"]
    check(r.rc == 1 and len(ev) == 1, f"{thp}: --fault-first {PAGE}: the lost write in page "
          f"{PAGE} is caught (rc {r.rc}, {len(ev)} events)\n{r.show()}")
    if ev:
        offset = CHUNK * 2 * 1024 * 1024 + PAGE * 4096 + SLOT * 8
        check((ev[0]["chunk"], ev[0]["page"]) == (CHUNK, PAGE)
              and int(ev[0]["address"], 16) == int(r.doc["arena"]["base"], 16) + offset,
              f"{thp}: at chunk {CHUNK} page {PAGE}, address base + {offset:#x}")
    # the written page is PAGE + 1: page PAGE is never written, its zero is no loss
    r = run(base + ["--thp", thp, "--fault-first", str(PAGE + 1),
                    "--inject", f"lost_write:{CHUNK}:{PAGE}:{SLOT}:1"])
    check(r.rc == 0 and r.doc["events"]["total"] == 0,
          f"{thp}: --fault-first {PAGE + 1}: a zero in page {PAGE} is no corruption\n{r.show()}")
    f = r.stressor("fault")
    check(f and f["ops"] > 0 and f["ops"] == f["counters"]["rounds"]["total"],
          f"{thp}: one page written a round (one chunk a round; ops {f and f['ops']})")

# the first and the last page, and the default, run clean
for first in ("0", "511", "random"):
    r = run(base + ["--fault-pages", "512", "--fault-first", first])
    check(r.rc == 0 and r.doc["events"]["total"] == 0, f"--fault-first {first}: clean\n{r.show()}")

for bad in ("512", "-1", "x", "3x", "", " 5", "+5", "random1", "99999999999999999999"):
    r = run(base + ["--fault-first", bad], json_report=False)
    check(r.rc == 2 and f"--fault-first '{bad}'" in r.err and "0-511 or 'random'" in r.err,
          f"--fault-first {bad!r}: exit 2 naming the value (rc {r.rc}, {r.err.strip()[:200]!r})")
done()
