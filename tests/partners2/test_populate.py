#!/usr/bin/env python3
# labels: e2e
# timeout: 300
"""The populate partner: MADV_POPULATE_READ/WRITE under the fault storm.

It runs clean, every call has one outcome, it hits live rounds, each kind of
call is timed, and its calls are in the chunks' op rings. The kernel is then
made to answer for real as it would not on a healthy 5.14+ kernel
(tests/partners2/nocollapse.c, a seccomp filter built here with cc): with
MADV_POPULATE_READ refused with EINVAL, as a kernel before 5.14 does, the
partner is skipped with that reason, never passed, and the run goes on; with
MADV_POPULATE_WRITE answered EHWPOISON on a live chunk, an error no
partner's move explains, the run must report it (exit 5, naming the call),
not count it away. Skips (77) where THP or seccomp filters are missing."""
import os
import shutil
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, check, done, run, skip, thp_available  # noqa: E402

BASE = ["--stressors", "fault,populate", "--threads", "4", "--duration", "2s", "--size", "16M",
        "--progress", "off", "--quiet", "--populate-rate", "0"]
OUTCOMES = ["read", "write", "moved", "enomem", "efault", "eintr", "other_errors"]
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nocollapse.c")

if not thp_available():
    skip("no transparent huge pages here")


def ordered(lat):
    return 0 < lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"]


# ---- the partner as it runs by default: live rounds first, half writes ----
r = run(BASE)
check(r.rc == 0, "fault + populate: exit 0" + ("" if r.rc == 0 else f"\n{r.show()}"))
p = r.stressor("populate")
check(p is not None and p["status"] == "ran", f"populate ran: {p and p.get('reason')}")
n = {k: r.counter("populate", k) for k in ["ops", "raced", "zero_thp"] + OUTCOMES}
check(n["ops"] > 100 and n["ops"] == sum(n[k] for k in OUTCOMES),
      f"every call has one outcome {n}")
check(n["read"] > 0 and n["write"] > 0, f"both kinds of call succeeded {n}")
check(n["raced"] > 0, f"some calls hit a chunk whose round was under way {n}")
lats = p["latency"]
check(ordered(lats["read_call"]) and ordered(lats["write_call"]) and
      lats["read_call"]["count"] + lats["write_call"]["count"] == n["ops"],
      "each call timed, percentiles ordered " +
      str({k: {q: lats[k][q] for q in ("count", "min", "p50", "p99", "max")}
           for k in ("read_call", "write_call")}))

# ---- read populates of any chunk: the settled, empty ones get the huge zero page ----
r = run(BASE + ["--populate-target", "any", "--populate-write", "0"])
check(r.rc == 0, "read populates only: exit 0" + ("" if r.rc == 0 else f"\n{r.show()}"))
check(r.counter("populate", "write") == 0 and r.counter("populate", "read") > 0,
      "--populate-write 0: reads only")
zp = "/sys/kernel/mm/transparent_hugepage/use_zero_page"
if open(zp).read().strip() == "1":
    check(r.counter("populate", "zero_thp") > 0,
          f"an empty chunk read-populated probes PMD-mapped (the huge zero page): "
          f"{r.counter('populate', 'zero_thp')} of {r.counter('populate', 'read')}")

# ---- the kernel made to answer as it must not, for real ----
cc = shutil.which("cc") or shutil.which("gcc")
if not cc:
    skip("no C compiler (cc) to build tests/partners2/nocollapse.c")
tmp = tempfile.mkdtemp(prefix="pmd-nopopulate-")
try:
    helpers = {}
    for name, advice, errno_name in (("noread", 22, "EINVAL"), ("poison", 23, "EHWPOISON")):
        helpers[name] = os.path.join(tmp, name)
        b = subprocess.run([cc, "-O2", "-Wall", f"-DMADV_COLLAPSE_ADVICE={advice}",
                            f"-DREFUSE_ERRNO={errno_name}", "-o", helpers[name], SOURCE],
                           capture_output=True, text=True)
        if b.returncode:
            skip(f"cannot build nocollapse.c: {b.stderr.strip()[-300:]}")
    b = subprocess.run([helpers["noread"], "/bin/true"], capture_output=True, text=True)
    if b.returncode == 77:
        skip(b.stderr.strip())

    r = run([PMDSTRESS] + BASE, binary=helpers["noread"])
    p = r.stressor("populate")
    check(p is not None and p["status"] == "skipped" and
          "kernel lacks MADV_POPULATE_READ" in (p.get("reason") or ""),
          f"MADV_POPULATE_READ refused (EINVAL): populate skipped with the reason "
          f"({p and p['status']}: {p and p.get('reason')})")
    check(r.rc == 125 and r.doc["verdict"]["status"] == "skipped",
          f"named by --stressors and unable to run: exit 125 ({r.rc}, {r.doc and r.doc['verdict']})")
    r = run([PMDSTRESS, "--stressors", "fault,toggle,populate"] + BASE[2:], binary=helpers["noread"])
    p = r.stressor("populate")
    check(r.rc == 125 and p["status"] == "skipped" and r.stressor("fault")["status"] == "ran",
          f"the storm still ran without it (exit {r.rc})")

    r = run([PMDSTRESS] + BASE + ["--populate-write", "100"], binary=helpers["poison"])
    errors = [e["text"] for e in (r.doc or {}).get("events", {}).get("kept", [])
              if e["kind"] == "error"]
    check(r.rc == 5 and r.doc["verdict"]["status"] == "internal",
          f"MADV_POPULATE_WRITE answered EHWPOISON: exit 5, internal ({r.rc}, "
          f"{r.doc and r.doc['verdict']})")
    check(errors and all("populate: MADV_POPULATE_WRITE of live chunk" in t for t in errors),
          f"the error names the call: {errors[:2]}")
    check(r.counter("populate", "other_errors") > len(errors) - 1,
          f"once per worker said, every one counted ({r.counter('populate', 'other_errors')})")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

done()
