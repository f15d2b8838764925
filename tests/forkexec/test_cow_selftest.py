#!/usr/bin/env python3
# labels: e2e selftest
# timeout: 120
"""The COW checker's self-test: a real leak across fork. Before one fork the
hidden --fork-leak replaces one page of a frozen chunk (private arena) by a
MAP_SHARED page with the same contents, so the child's write really lands in
the parent and the parent's post-fork writes really reach the child. It must
be reported as COW_LEAK at exactly that chunk and page, with the right
address, and exit 1; the same run without it is clean. Sharing a page the
writer thread writes across the fork also breaks the prefix of the writer's
writes the child must see: a torn snapshot, at that page."""
import os
import re
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
sys.path.insert(0, os.path.dirname(__file__))
from pmdtest import check, done, run  # noqa: E402
from children import become_subreaper, leftovers  # noqa: E402

become_subreaper()
CHUNK, PAGE = 2, 17
base = ["--size", "16M", "--progress", "off", "--quiet", "--seed", "7", "--duration", "1s"]

r = run(base + ["--stressors", "fork"])
check(r.rc == 0 and r.doc["events"]["total"] == 0 and r.counter("fork", "cow_checks") > 0,
      f"without the leak: COW-checked forks, clean\n{r.show()}")

for mode in ["madvise", "nohuge"]:
    for scenario in [["--stressors", "fork"], ["--config", "fork", "--threads", "4"]]:
        what = f"{mode}/{scenario[1]}"
        r = run(base + scenario + ["--thp", mode, "--fork-leak", "--fork-leak-chunk", str(CHUNK),
                                   "--fork-leak-page", str(PAGE)])
        d = r.doc
        check(r.rc == 1, f"{what}: exit 1\n{r.show()}")
        check(d["verdict"]["status"] == "corruption", f"{what}: verdict corruption")
        by = d["events"]["by_class"]
        check(by["COW_LEAK"] >= 1 and sum(by.values()) == by["COW_LEAK"],
              f"{what}: COW_LEAK and nothing else {by}")
        ev = [e for e in r.events() if e.get("class") == "COW_LEAK"]
        check(ev and all((e["chunk"], e["page"]) == (CHUNK, PAGE) for e in ev),
              f"{what}: every COW_LEAK at chunk {CHUNK} page {PAGE}: "
              f"{[(e['chunk'], e['page'], e['slot']) for e in ev]}")
        arena = int(d["arena"]["base"], 16)
        for e in ev:
            offset = CHUNK * 2 * 1024 * 1024 + PAGE * 4096 + e["slot"] * 8
            check(int(e["address"], 16) == arena + offset and int(e["offset"], 16) == offset,
                  f"{what}: address {e['address']} = arena base + {offset:#x}")
            check(any(o["op"] == "inject" for o in e["op_ring"]) and
                  any(o["op"] == "fork" for o in e["op_ring"]),
                  f"{what}: the op ring shows the shared page and the fork")
        # the child wrote its stamp in the last slot; the parent reads it after reaping
        parent = [e for e in ev if e["slot"] == 511 and "seen by the fork child" not in e["text"]]
        check(len(parent) == 1, f"{what}: the parent saw the child's write (slot 511) once")
        # all() of nothing is true: the child must have reported, or its check is not tested
        child = [e for e in ev if "seen by the fork child" in e["text"]]
        check(child, f"{what}: the child reported the parent's post-fork write")
        check(all(e["slot"] < 511 and int(e["actual"], 16) != 0 for e in child),
              f"{what}: what the child saw of the parent is a post-fork stamp in a parent slot")
        check(not leftovers(), f"{what}: no child left behind")

# the writer thread's prefix check: share a page the writer writes (every 32nd page,
# slot 510). The child sees its writes after the fork there and misses them in every
# private page: not a prefix of the writer's writes, a torn snapshot, at the shared page.
WPAGE, WSLOT = 32, 510
for mode in ["madvise", "nohuge"]:
    what = f"writer/{mode}"
    r = run(base + ["--stressors", "fork", "--thp", mode, "--fork-leak", "--fork-leak-chunk",
                    str(CHUNK), "--fork-leak-page", str(WPAGE)])
    d = r.doc
    check(r.rc == 1, f"{what}: exit 1\n{r.show()}")
    by = d["events"]["by_class"]
    check(by["COW_LEAK"] >= 1 and sum(by.values()) == by["COW_LEAK"],
          f"{what}: COW_LEAK and nothing else {by}")
    ev = [e for e in r.events() if e.get("class") == "COW_LEAK"]
    check(ev and all((e["chunk"], e["page"]) == (CHUNK, WPAGE) for e in ev),
          f"{what}: every COW_LEAK at chunk {CHUNK} page {WPAGE}: "
          f"{[(e['chunk'], e['page'], e['slot']) for e in ev]}")
    torn = [e for e in ev if "torn snapshot" in e["text"] and "writer thread" in e["text"]]
    check(len(torn) == 1 and torn[0]["slot"] == WSLOT,
          f"{what}: one torn-snapshot finding of the writer's, in its slot: {[e['text'] for e in ev]}")
    if torn:
        e = torn[0]
        m = re.search(rf"write #(\d+) at chunk {CHUNK} page {WPAGE} slot {WSLOT} but not its "
                      rf"earlier write #(\d+) at chunk (\d+) page (\d+)", e["text"])
        check(m and int(m.group(1)) > int(m.group(2)) and int(m.group(4)) % 32 == 0 and
              (int(m.group(3)), int(m.group(4))) != (CHUNK, WPAGE),
              f"{what}: names the newer write seen here and an older one missing in another "
              f"writer page: {e['text']!r}")
        offset = CHUNK * 2 * 1024 * 1024 + WPAGE * 4096 + WSLOT * 8
        check(int(e["address"], 16) == int(d["arena"]["base"], 16) + offset and
              int(e["offset"], 16) == offset,
              f"{what}: address {e['address']} = arena base + {offset:#x}")
        check(int(e["expected"], 16) != 0 and int(e["actual"], 16) != 0 and
              e["expected"] != e["actual"], f"{what}: the two writes' values in the event")
    check(not leftovers(), f"{what}: no child left behind")

# the same leak with the writer off: the arena-slot checks still see it, the writer's do not
r = run(base + ["--stressors", "fork", "--fork-writer", "off", "--fork-leak", "--fork-leak-chunk",
                str(CHUNK), "--fork-leak-page", str(WPAGE)])
ev = [e for e in r.events() if e.get("class") == "COW_LEAK"]
check(r.rc == 1 and ev and not any("writer thread" in e["text"] for e in ev) and
      r.counter("fork", "fork_writes") == 0,
      f"--fork-writer off: COW_LEAK from the slot checks only, no writes during fork\n{r.show()}")

# a leak chunk outside the arena: the stressor says why it cannot run
r = run(["--size", "16M", "--stressors", "fork", "--fork-leak", "--fork-leak-chunk", "8",
         "--duration", "1s", "--progress", "off", "--quiet"])
f = r.stressor("fork")
check(r.rc == 125 and f["status"] == "skipped" and "outside the arena" in f["reason"],
      f"--fork-leak-chunk 8 of 8 chunks: skipped with the reason\n{r.show()}")
done()
