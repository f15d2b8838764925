#!/usr/bin/env python3
# labels: e2e
# timeout: 120
"""A SIGSEGV on a live chunk (a page of a chunk nobody retired turned
PROT_NONE under the workers, as if the kernel lost the mapping: --inject
segv) is caught, reported as an event with the address and the chunk's
state and op ring, and the run ends with a report, not a core dump: exit 1."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, run  # noqa: E402

CHUNK, PAGE = 2, 5
r = run(["--stressors", "fault", "--threads", "4", "--duration", "30s", "--size", "16M",
         "--inject", f"segv:{CHUNK}:{PAGE}:0:2", "--progress", "off"], timeout=60)
d = r.doc
check(r.rc == 1, f"exit 1 (got {r.rc})\n{r.show()}")
check(r.elapsed < 15, f"the run ends promptly ({r.elapsed:.1f}s), not after its 30 s")
check("core dumped" not in r.err and d is not None, "no core dump: a report was written")
check(d["verdict"]["status"] == "live_fault", f"verdict {d['verdict']}")
ev = [e for e in d["events"]["kept"] if e["kind"] == "signal"]
check(len(ev) == 1, f"one signal event ({len(ev)})")
if ev:
    e = ev[0]
    base = int(d["arena"]["base"], 16)
    addr = int(e["address"], 16)
    check(e["chunk"] == CHUNK and e["page"] == PAGE, f"chunk {e['chunk']} page {e['page']}")
    check(base + CHUNK * 2**21 + PAGE * 4096 <= addr < base + CHUNK * 2**21 + (PAGE + 1) * 4096,
          f"the faulting address {e['address']} is in that page")
    check(e["text"].startswith("SIGSEGV") and "chunk state round" in e["text"],
          f"signal and chunk state in the text: {e['text']}")
    check([o["op"] for o in e["op_ring"]][-2:] == ["inject", "round"] or
          "inject" in [o["op"] for o in e["op_ring"]], "the op ring shows what happened to the chunk")
check(d["stop_reason"] == "fault on a live chunk", f"stop reason {d['stop_reason']!r}")
check("to rerun this with the same seed" in r.out, "the text report tells how to rerun it")
done()
