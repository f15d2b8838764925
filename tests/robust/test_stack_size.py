#!/usr/bin/env python3
# labels: robust
# timeout: 240
"""--stack-size: below the minimum (16K, glibc's PTHREAD_STACK_MIN) it is
refused, exit 2, naming the minimum; at the minimum every stressor that can
run here runs its deepest paths without overflowing: the THP probe by every
method after every round (PAGEMAP_SCAN once kept 12 KiB of regions on the
stack and a 16K worker died of SIGSEGV), the fork checker with --fork-leak
(a page-sized buffer and an error report), exec, brk and page."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, is_root, run, skip_part  # noqa: E402

MIN = "16K"
r = run(["--stack-size", "15K", "--duration", "1s"], json_report=False)
lines = r.err.strip().splitlines()
check(r.rc == 2 and len(lines) == 1 and "--stack-size" in lines[0] and "'15K'" in lines[0] and
      f"{MIN}.." in lines[0], f"15K: exit 2, one line naming the option, value and minimum\n{r.show()}")

base = ["--stack-size", MIN, "--duration", "2s", "--size", "32M", "--progress", "off", "--quiet"]


def ran_clean(what, args, stressors, may_not_run=False):
    r = run(base + args)
    if may_not_run and r.rc == 125:
        skip_part(f"{what}: cannot run here: {r.err.strip()[-200:]}")
        return r
    check(r.rc == 0 and r.doc and r.doc["verdict"]["status"] == "clean",
          f"{what}: clean at --stack-size {MIN}\n{r.show()}")
    for name in stressors:
        s = r.stressor(name) if r.doc else None
        check(s is not None and s.get("ops", 0) > 0, f"{what}: {name} ran ({s and s.get('ops')})")
    return r


probes = ["scan", "smaps"] + (["kpageflags"] if is_root() else [])
for probe in probes:
    # scan: not before 6.7 (exit 125; test_thp_probe checks the refusal)
    ran_clean(f"probe {probe}", ["--config", "race", "--threads", "24", "--thp-probe", probe],
              ["fault", "toggle", "zap", "split", "collapse", "populate", "pin", "lock", "softdirty",
               "procwalk", "fork"],
              may_not_run=probe == "scan")
ran_clean("exec", ["--config", "exec", "--threads", "4"], ["fault", "exec"])
for st in ["brk", "page"]:
    ran_clean(st, ["--config", "aim9", "--stressors", st, "--rounds", "1"], [st])

# the fork checker's deepest path: a shared page across fork, a COW_LEAK
r = run(base + ["--stressors", "fork", "--fork-leak", "--fork-leak-chunk", "2",
                "--fork-leak-page", "17"])
by = (r.doc or {}).get("events", {}).get("by_class", {})
check(r.rc == 1 and by.get("COW_LEAK", 0) >= 1 and sum(by.values()) == by["COW_LEAK"],
      f"--fork-leak at {MIN}: COW_LEAK found, exit 1, no crash {by}\n{r.show()}")
done()
