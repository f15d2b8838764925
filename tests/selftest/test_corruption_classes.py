#!/usr/bin/env python3
# labels: selftest
# timeout: 120
"""The checker's self-test: corrupt the arena behind the workers' backs, once
per class, and see it caught with the right class, chunk, page, slot and
address, and exit 1. A clean run with the same options stays clean."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, run  # noqa: E402

base = ["--stressors", "fault", "--threads", "4", "--duration", "1s", "--size", "16M",
        "--progress", "off", "--quiet",
        "--seed", "7"]
CHUNK, PAGE, SLOT = 3, 17, 2

r = run(base)
check(r.rc == 0 and r.doc["events"]["total"] == 0, f"the same run without injection is clean\n{r.show()}")

for cls in ["LOST_WRITE", "STALE", "FOREIGN", "NONZERO_AFTER_ZAP", "COW_LEAK"]:
    for mode in ["madvise", "nohuge"]:
        r = run(base + ["--thp", mode, "--inject", f"{cls.lower()}:{CHUNK}:{PAGE}:{SLOT}:1"])
        d = r.doc
        check(r.rc == 1, f"{cls}/{mode}: exit 1\n{r.show()}")
        check(d["verdict"]["status"] == "corruption", f"{cls}/{mode}: verdict corruption")
        check(d["events"]["by_class"][cls] == 1,
              f"{cls}/{mode}: exactly one {cls} event {d['events']['by_class']}")
        ev = [e for e in r.events() if e.get("class") == cls]
        if not check(len(ev) == 1, f"{cls}/{mode}: the event is kept in full"):
            continue
        e = ev[0]
        # NONZERO_AFTER_ZAP lands in the first slot nobody writes (the group size)
        slot = 4 if cls == "NONZERO_AFTER_ZAP" else SLOT
        offset = CHUNK * 2 * 1024 * 1024 + PAGE * 4096 + slot * 8
        check((e["chunk"], e["page"], e["slot"]) == (CHUNK, PAGE, slot),
              f"{cls}/{mode}: chunk/page/slot {e['chunk']}/{e['page']}/{e['slot']}")
        check(int(e["address"], 16) == int(d["arena"]["base"], 16) + offset,
              f"{cls}/{mode}: address {e['address']} = arena base + {offset:#x}")
        check(int(e["offset"], 16) == offset, f"{cls}/{mode}: offset recorded")
        check(e["thp_state"] in ("thp", "pte", "mixed"), f"{cls}/{mode}: THP state {e['thp_state']}")
        check(any(o["op"] == "inject" for o in e["op_ring"]),
              f"{cls}/{mode}: the op ring shows the injection")
        check(e["expected"] != e["actual"], f"{cls}/{mode}: expected != actual")
        if cls == "LOST_WRITE":
            check(int(e["actual"], 16) == 0, "LOST_WRITE reads zero")
done()
