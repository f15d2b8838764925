#!/usr/bin/env python3
# labels: e2e selftest
# timeout: 120
"""A fork child that the kernel faults on a frozen chunk must die of the
signal and be reported at that chunk and page. The hidden --fork-child-fault
makes the child of one fork mprotect() one page of its first frozen chunk
PROT_NONE (in the child only) and read it: a real SIGSEGV at that address.
The child inherits the fatal-signal handler of the run; it used to take the
fault for the run's own, park waiting for a main thread the child does not
have, and the run ended clean with the fork worker stuck on that child."""
import os
import re
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
sys.path.insert(0, os.path.dirname(__file__))
from pmdtest import check, done, run  # noqa: E402
from children import become_subreaper, leftovers  # noqa: E402

become_subreaper()
PAGE = 7
base = ["--size", "16M", "--progress", "off", "--seed", "7", "--duration", "2s",
        "--stressors", "fork"]

for mode in ["madvise", "nohuge"]:
    r = run(base + ["--thp", mode, "--fork-child-fault", "--fork-leak-page", str(PAGE)])
    d = r.doc
    check(r.rc == 1 and d["verdict"]["status"] == "live_fault",
          f"{mode}: exit 1, verdict live_fault\n{r.show()}")
    check(d["events"]["by_kind"]["signal"] == 1 and d["events"]["total"] == 1,
          f"{mode}: one event, the child's signal: {d['events']['by_kind']}")
    ev = [e for e in r.events() if e.get("kind") == "signal"]
    if ev:
        e = ev[0]
        m = re.fullmatch(rf"fork child died of Segmentation fault in pass 1 at chunk (\d+) "
                         rf"page {PAGE}", e["text"])
        check(m and int(m.group(1)) == e["chunk"] and e["page"] == PAGE,
              f"{mode}: names the chunk and page: {e['text']!r}")
        offset = e["chunk"] * 2 * 1024 * 1024 + PAGE * 4096
        # (from the chunk and the page the child said it was at, not the kernel's si_addr)
        check(int(e["address"], 16) == int(d["arena"]["base"], 16) + offset,
              f"{mode}: address {e['address']} = arena base + {offset:#x}")
        check(any(o["op"] == "fork" for o in e["op_ring"]), f"{mode}: the op ring shows the fork")
    check("a child of the run" in r.err and "the run ends with its report" not in r.err,
          f"{mode}: the child said it dies of the signal, and did not park\n{r.err[-600:]}")
    # the worker went on: the faulting fork counts as one check (its child was reaped),
    # so a second one was made after it
    check((r.counter("fork", "cow_checks") or 0) >= 2,
          f"{mode}: the fork worker was not held by the faulting child\n{r.show()}")
    check(not leftovers(), f"{mode}: no child left behind")
done()
