#!/usr/bin/env python3
# labels: selftest
# timeout: 120
"""The checker's self-test: corrupt the arena behind the workers' backs, once
per class, and see it caught with the right class, chunk, page, slot and
address, and exit 1. A clean run with the same options stays clean. The
first corruption's dump reaches stderr while the run goes on, and the rerun
command it prints finds the same corruption. Of many bad pages the first 64
are kept whole and the rest counted."""
import os
import shlex
import signal
import subprocess
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, check, done, run  # noqa: E402

# one group (--fault-group 4): slot 2 is a worker's; rounds with a reader write
# every page, so the corrupted page is one a round wrote (the race scenario: 32)
base = ["--stressors", "fault", "--threads", "4", "--fault-group", "4", "--duration", "1s",
        "--size", "16M", "--progress", "off", "--quiet", "--fault-reader-pages", "512",
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

# old data anywhere in a page's unwritten slots: the verifier ORs them eight at a
# time (src/mem/verify.c, tail_or), so one slot before its first step of eight, one
# inside it and the page's last; in a page the round wrote (reader pages 512) and
# in one it left zero (reader pages 32, a seed round's window or smaller)
for slot in [5, 300, 511]:
    for pages in ["512", "32"]:
        argv = base + ["--inject", f"nonzero_after_zap:{CHUNK}:{PAGE}:{slot}:1"]
        argv[argv.index("--fault-reader-pages") + 1] = pages
        r = run(argv)
        ev = [e for e in r.events() if e.get("class") == "NONZERO_AFTER_ZAP"] if r.doc else []
        check(r.rc == 1 and len(ev) == 1 and (ev[0]["page"], ev[0]["slot"]) == (PAGE, slot),
              f"NONZERO_AFTER_ZAP at slot {slot}, reader pages {pages}: caught there\n{r.show()}")

# many bad pages: the first 64 events are kept whole, the rest counted
r = run(base + ["--inject", f"stale:{CHUNK}:10:{SLOT}:1:100"])
ev = r.doc["events"] if r.doc else {}
check(r.rc == 1 and ev.get("total") == 100 and ev["by_class"]["STALE"] == 100 and
      len(ev.get("kept", [])) == 64 and ev.get("not_kept") == 36 and
      sorted(e["page"] for e in ev["kept"]) == list(range(10, 74)),
      f"100 bad pages: 100 counted, the first 64 kept (pages 10..73), 36 not kept "
      f"({ {k: v for k, v in ev.items() if k != 'kept'} }, {len(ev.get('kept', []))} kept)")

# the forensic dump is on stderr as soon as the main thread sees the corruption: a run
# killed afterwards (a CI timeout's kill -9) still leaves it, with the rerun command
p = subprocess.Popen([PMDSTRESS] + base[:-2] + ["--duration", "60s", "--inject",
                                                f"stale:{CHUNK}:{PAGE}:{SLOT}:1"],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
time.sleep(3.0)
p.kill()
_, err = p.communicate(timeout=30)
dump = [x for x in err.splitlines() if x.startswith("pmdstress: first corruption at")]
check(p.returncode == -signal.SIGKILL and dump and "STALE" in dump[0] and
      f"chunk {CHUNK} page {PAGE} slot {SLOT}" in dump[0] and "seed 0x" in dump[0],
      f"killed after a corruption: the dump was out before the kill ({err[-600:]!r})")
check(f"chunk {CHUNK}'s last operations" in err and "inject" in err,
      "the dump shows the chunk's last operations, the injection among them")
rerun = [x.strip()[len("rerun: "):] for x in err.splitlines() if x.strip().startswith("rerun: ")]
if check(len(rerun) == 1 and rerun[0].startswith("pmdstress "), f"the dump has the rerun command"):
    # run it as printed (shorter): the same corruption again, exit 1
    argv = shlex.split(rerun[0])[1:]
    i = argv.index("--duration")
    argv[i + 1] = "1s"
    r = run(argv + ["--progress", "off", "--quiet"])
    check(r.rc == 1 and r.doc["events"]["by_class"].get("STALE") == 1,
          f"the printed rerun command finds the same STALE again (exit 1)\n{r.show()}")
done()
