#!/usr/bin/env python3
# labels: e2e numa
# timeout: 120
"""The migrate stressor on this host. With one node with memory it must say
"skipped: 1 node" with the reason (never pass), leave the rest of the run alone,
and a run of nothing but migrate is exit 125. With two or more nodes it runs:
pages move, THPs move whole, the data survives. The emulated 2-node run is
tests/vm/test_numa_guest.py."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, run, thp_available  # noqa: E402


def mem_nodes():
    try:
        with open("/sys/devices/system/node/has_memory") as f:
            text = f.read().strip()
    except OSError:
        return 1
    n = 0
    for part in text.split(","):
        a, _, b = part.partition("-")
        n += int(b or a) - int(a) + 1
    return n


base = ["--threads", "4", "--duration", "2s", "--size", "32M", "--progress", "off"]

if mem_nodes() < 2:
    r = run(base + ["--stressors", "fault,migrate", "--quiet"])
    m = r.stressor("migrate")
    # migrate was named and could not run: not a pass (exit 125, skipped), the storm's
    # verification clean all the same
    check(r.rc == 125 and r.doc["verdict"]["status"] == "skipped" and
          "migrate, named by --stressors, could not run" in r.doc["verdict"]["summary"],
          f"fault + migrate on one node: exit 125, migrate named and not run (rc={r.rc})") \
        or print(r.show())
    check(m is not None and m["status"] == "skipped" and m["reason"].startswith("1 node"),
          f"migrate is skipped, the reason starts with '1 node': {m and m.get('reason')!r}")
    check(r.stressor("fault")["status"] == "ran" and r.counter("fault", "rounds") > 0,
          "the storm ran anyway")
    r = run(base + ["--stressors", "migrate", "--quiet"])
    check(r.rc == 125 and r.doc["verdict"]["status"] == "skipped",
          f"migrate alone on one node: exit 125, verdict skipped (rc={r.rc})")
    r = run(base + ["--stressors", "fault,migrate"], json_report=False)
    check("migrate(skipped: 1 node" in r.out and "skipped: 1 node: migration needs two" in r.out,
          "the text report says migrate was skipped: 1 node, and why")
    # the scenario runs here too, with migrate skipped
    r = run(["--config", "numa", "--duration", "2s", "--threads", "6", "--progress", "off",
             "--quiet"])
    check(r.rc == 0 and r.stressor("migrate")["status"] == "skipped" and
          r.doc["numa"]["mem_policy"].startswith("interleave") and
          r.doc["numa"]["cpu_nodes"] == "spread",
          f"--config numa runs on one node, migrate skipped (rc={r.rc})")
else:
    r = run(base + ["--stressors", "fault,migrate", "--migrate-rate", "0", "--quiet"])
    check(r.rc == 0 and r.doc["verdict"]["status"] == "clean" and not r.events(),
          "fault + migrate runs clean, no events") or print(r.show())
    check(r.counter("migrate", "ops") > 0 and r.counter("migrate", "on_node") > 0,
          f"pages were moved and found on the node asked for ({r.counter('migrate', 'on_node')})")
    check(r.vmstat("pgmigrate_success", 0) > 0, "pgmigrate_success went up")
    if thp_available():
        check(r.vmstat("thp_migration_success", 0) > 0, "huge pages moved whole")
# bad option values of the stressor itself
r = run(base + ["--stressors", "fault,migrate", "--migrate-set", "513"], json_report=False)
check(r.rc == 2 and "--migrate-set" in r.err and "513" in r.err, f"--migrate-set 513: exit 2 naming it ({r.err.strip()!r})")
r = run(base + ["--stressors", "fault,migrate", "--migrate-race", "101"], json_report=False)
check(r.rc == 2 and "--migrate-race" in r.err and "101" in r.err, f"--migrate-race 101: exit 2 naming it ({r.err.strip()!r})")
done()
