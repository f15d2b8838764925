#!/usr/bin/env python3
# labels: e2e
# timeout: 180
"""The brk and page stressors: the program break moved up and back (brk),
with every page gained written in between (page); both at once and beside
the storm, sharing the one break; the guard that stops them when something
else moves the break; the RLIMIT_DATA skip; bad sizes."""
import json
import os
import resource
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, check, done, run  # noqa: E402

base = ["--size", "16M", "--progress", "off", "--quiet", "--duration", "1500ms"]


def ordered(lat):
    return lat["count"] > 0 and lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"]


# brk: AIM9 brk_test, no page touched
r = run(base + ["--stressors", "brk"])
b = r.stressor("brk")
check(r.rc == 0 and b["status"] == "ran", f"brk runs clean\n{r.show()}")
check(b["ops"] > 100, f"cycles: {b['ops']}")
check(r.counter("brk", "pages") == 0 and b["latency"]["touch"]["count"] == 0, "brk touches nothing")
check(b["faults"] < 50, f"brk: next to no faults ({b['faults']})")
check(ordered(b["latency"]["expand"]) and ordered(b["latency"]["shrink"]) and
      b["latency"]["cycle"]["count"] == b["ops"], "expand, shrink, cycle latencies")

# page: AIM9 page_test, every page gained written once (a 1M move: 256 pages)
r = run(base + ["--stressors", "page"])
p = r.stressor("page")
check(r.rc == 0 and p["status"] == "ran", f"page runs clean\n{r.show()}")
pages = r.counter("page", "pages")
check(p["ops"] > 0 and pages == 256 * p["ops"], f"256 pages per cycle ({pages} for {p['ops']})")
# one fault per page, or fewer if a large-folio (mTHP) setting maps several at once
check(0 < p["faults"] <= pages + 64, f"faults {p['faults']} for {pages} pages written")
check(r.counter("page", "bad_pages") == 0 and r.doc["events"]["total"] == 0, "no bad page, no event")
check(all(ordered(p["latency"][k]) for k in ("expand", "touch", "shrink", "cycle")),
      "all four latencies recorded and ordered")
# cycle_i = expand_i + touch_i + shrink_i for every cycle: quantile by quantile too
check(all(p["latency"]["cycle"][q] >= p["latency"]["touch"][q] for q in ("p50", "p90", "max")),
      "a cycle is never shorter than its touching")

r = run(base + ["--stressors", "brk", "--brk-touch", "--brk-size", "64K"])
check(r.rc == 0 and r.counter("brk", "pages") == 16 * r.stressor("brk")["ops"],
      f"--brk-touch --brk-size 64K: 16 pages per cycle\n{r.show()}")

# both at once share the one break, beside the storm
r = run(base + ["--stressors", "fault,brk,page", "--threads", "4"])
check(r.rc == 0 and all(r.stressor(s)["ops"] > 0 for s in ("fault", "brk", "page")),
      f"fault + brk + page run clean together\n{r.show()}")
r = run(base + ["--stressors", "page", "--page-workers", "2"])
check(r.rc == 0 and r.stressor("page")["ops"] > 0, "two page workers take turns on the break")

# something else moves the break: stop with an error, never move it back over it
r = run(base + ["--stressors", "brk", "--brk-nudge"])
errs = [e for e in r.events() if e["kind"] == "error"]
check(r.rc == 5 and len(errs) == 1 and "something else moved it" in errs[0]["text"],
      f"--brk-nudge: exit 5 with the reason\n{r.show()}")
check(r.stressor("brk")["ops"] == 2, f"stopped in the third cycle ({r.stressor('brk')['ops']} done)")


# cannot run here: a move larger than RLIMIT_DATA is skipped with the reason
def small_data():
    resource.setrlimit(resource.RLIMIT_DATA, (256 << 20, resource.getrlimit(resource.RLIMIT_DATA)[1]))


path = tempfile.mktemp(suffix=".json")
q = subprocess.run([PMDSTRESS] + base + ["--stressors", "page", "--page-size", "512M", "--json", path],
                   capture_output=True, text=True, timeout=60, preexec_fn=small_data)
d = json.load(open(path)) if os.path.exists(path) else None
s = d and d["stressors"][0]
check(q.returncode == 125 and s and s["status"] == "skipped" and "RLIMIT_DATA" in s["reason"],
      f"--page-size 512M under a 256M RLIMIT_DATA: skipped with the reason ({q.returncode} {s})")
if os.path.exists(path):
    os.unlink(path)

for args in (["--brk-size", "0"], ["--page-size", "2G"], ["--brk-touch", "maybe"]):
    r = run(args, json_report=False)
    lines = r.err.strip().splitlines()
    check(r.rc == 2 and len(lines) == 1 and args[1] in lines[0],
          f"{' '.join(args)}: exit 2, one line naming the value: {r.err.strip()!r}")
done()
