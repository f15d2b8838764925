#!/usr/bin/env python3
# labels: e2e
# timeout: 120
"""A fault the kernel raises on a live chunk is caught, reported as an event
with the address and the chunk's state and op ring, and the run ends with a
report, not a core dump: exit 1. Both signals come from the kernel itself:
--inject segv turns a page of a chunk nobody retired PROT_NONE under the
workers (SIGSEGV, SEGV_ACCERR), --inject sigbus maps a page of a memfd over
it and truncates the file to nothing (SIGBUS, BUS_ADRERR: the page is past
the file's end), as if the kernel lost the mapping. --inject segv_final
makes the storm's main thread fault in the run's last verify: reported the
same way, not a crash of the storm. The injections stay
hidden from --help, and a chunk or page outside the arena is refused with
exit 2."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, run  # noqa: E402

CHUNK, PAGE = 2, 5
# --inject, the signal, its si_code (SEGV_ACCERR, BUS_ADRERR: both 2)
for kind, signame, si_code in (("segv", "SIGSEGV", 2), ("sigbus", "SIGBUS", 2)):
    r = run(["--stressors", "fault", "--threads", "4", "--duration", "30s", "--size", "16M",
             "--inject", f"{kind}:{CHUNK}:{PAGE}:0:2", "--progress", "off"], timeout=60)
    d = r.doc
    check(r.rc == 1, f"{kind}: exit 1 (got {r.rc})\n{r.show()}")
    check(r.elapsed < 15, f"{kind}: the run ends promptly ({r.elapsed:.1f}s), not after its 30 s")
    check("core dumped" not in r.err and d is not None, f"{kind}: no core dump: a report was written")
    if d is None:
        continue
    check(d["verdict"]["status"] == "live_fault", f"{kind}: verdict {d['verdict']}")
    ev = [e for e in d["events"]["kept"] if e["kind"] == "signal"]
    check(len(ev) == 1 and d["events"]["total"] == 1,
          f"{kind}: one signal event and nothing else ({len(ev)} of {d['events']['total']})")
    if ev:
        e = ev[0]
        base = int(d["arena"]["base"], 16)
        addr = int(e["address"], 16)
        check(e["chunk"] == CHUNK and e["page"] == PAGE,
              f"{kind}: chunk {e['chunk']} page {e['page']}")
        check(base + CHUNK * 2**21 + PAGE * 4096 <= addr < base + CHUNK * 2**21 + (PAGE + 1) * 4096,
              f"{kind}: the faulting address {e['address']} is in that page")
        check(e["text"].startswith(f"{signame} (si_code {si_code}) at {e['address']}") and
              "chunk state round" in e["text"],
              f"{kind}: signal, address and chunk state in the text: {e['text']}")
        check("inject" in [o["op"] for o in e["op_ring"]],
              f"{kind}: the op ring shows what happened to the chunk: {e['op_ring']}")
    check(d["stop_reason"] == "fault on a live chunk", f"{kind}: stop reason {d['stop_reason']!r}")
    check(f"{signame} at " in r.err and "on live chunk 2" in r.err,
          f"{kind}: the handler said so on stderr")
    check("to rerun this with the same seed" in r.out, f"{kind}: the text report tells how to rerun it")

# the storm's main thread faults in the run's last verify (fault's verify hook runs on it):
# the same event and report, where it used to wake itself with SIGUSR1 and die of it
# ("the storm process died of signal 10", a crash). The page is the first the round wrote
# from PAGE on, in the first chunk verified from CHUNK on; a run where no chunk held a
# round's stamps at the end injects nothing, and another runs.
for attempt in range(4):
    r = run(["--stressors", "fault", "--threads", "4", "--duration", "2s", "--size", "16M",
             "--inject", f"segv_final:{CHUNK}:{PAGE}", "--progress", "off"], timeout=60)
    if r.doc and r.doc.get("injected") is False and r.rc == 0:
        continue
    break
d = r.doc
check(r.rc == 1 and d is not None and d.get("injected") is True and
      d["verdict"]["status"] == "live_fault",
      f"segv_final: exit 1, fault on a live chunk ({r.rc}, {d and d['verdict']})\n{r.show()}")
ev = [e for e in (d or {"events": {"kept": []}})["events"]["kept"] if e["kind"] == "signal"]
marked = [o["arg"] for e in ev for o in e["op_ring"] if o["op"] == "inject"]
check(len(ev) == 1 and marked == [ev[0]["page"]] and
      "in pmd/storm" in ev[0]["text"] and "chunk state held" in ev[0]["text"],
      f"segv_final: one signal event, at the page the op ring says was made PROT_NONE "
      f"({marked}), in the storm's main thread ({[e['text'] for e in ev]})")
check("died of signal" not in r.out + r.err and "core dumped" not in r.err,
      "segv_final: no crash of the storm")

# hidden from --help, checked when given: 16M is 8 chunks of 512 pages
r = run(["--help"], json_report=False)
check(r.rc == 0 and "sigbus" not in r.out and "--inject" not in r.out,
      "the injections stay hidden from --help")
for arg, want in (("sigbus:8:5", "--inject: chunk must be below 8"),
                  ("sigbus:2:512", "--inject: page must be below 512"),
                  ("sigbus:x", "--inject: invalid number 'x'"),
                  ("segv:99:0", "--inject: chunk must be below 8")):
    r = run(["--stressors", "fault", "--threads", "2", "--duration", "1s", "--size", "16M",
             "--inject", arg, "--progress", "off"], json_report=False, timeout=30)
    check(r.rc == 2 and want in r.err and r.err.count("\n") <= 2,
          f"--inject {arg}: exit 2 naming the value (rc {r.rc}) {r.err.strip()[-200:]!r}")
done()
