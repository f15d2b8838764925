#!/usr/bin/env python3
# labels: vm e2e
# timeout: 900
"""The pin, lock and ksm partners in guests of Debian's 6.1 and 6.12 kernels.

Clean: fault + pin + lock + zap for 6 s: pin's live rounds' pages taken by
vmsplice and process_vm_readv and checked, held chunks' pages dropped under
the pipe and written back through a pin and checked; lock's mlock and
MLOCK_ONFAULT pairs on live rounds and held chunks, the held ones checked,
zap's refusals on locked chunks counted, not reported; ksm with ksmd started
in the guest (root there), held chunks verified and shared zero pages
copied on a store: exit 0. softdirty's uffd-wp mode: skipped on 6.1 naming
the missing UFFD_FEATURE_WP_ASYNC, clean with chunks judged on 6.12. The guests' initramfs has no
/var/tmp and no filesystem that pins for O_DIRECT, so --pin-dir auto leaves
that way out and says how often (direct_off). Broken on purpose, for real:
the same run under tests/partners2/pinliar.c (built static here), whose
seccomp supervisor answers process_vm_writev of a page or more as done
without running it: exit 1, LOST_WRITE from pin. Skips (77) where no guest
can run here or pinliar cannot be built."""
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, SOURCE_DIR, check, done, skip  # noqa: E402
from pmdvm import guest  # noqa: E402

BINARY = os.path.abspath(PMDSTRESS)
if not os.access(BINARY, os.X_OK):
    skip(f"no pmdstress binary at {BINARY}")
cc = shutil.which("cc") or shutil.which("gcc")
if not cc:
    skip("no C compiler (cc) to build tests/partners2/pinliar.c")
tmp = tempfile.mkdtemp(prefix="pmd-pin-guest-")
LIAR = os.path.join(tmp, "pinliar")
b = subprocess.run([cc, "-O2", "-Wall", "-static", "-o", LIAR,
                    os.path.join(SOURCE_DIR, "tests", "partners2", "pinliar.c")],
                   capture_output=True, text=True)
if b.returncode:
    shutil.rmtree(tmp, ignore_errors=True)
    skip(f"cannot build pinliar.c static: {b.stderr.strip()[-300:]}")

pmd = shlex.quote(BINARY)
run = (f"{pmd} --stressors fault,pin,lock,zap,ksm --threads 6 --size 16M --duration 6s "
       f"--progress off --hang-timeout 60s --pin-rate 0 --lock-rate 200 --zap-race 100 "
       f"--ksm-start on --ksm-rate 100")
SCRIPT = f"""
{run} --json /out/clean.json > /out/clean.txt 2>&1
echo $? > /out/clean.rc
{shlex.quote(LIAR)} lie {run} --pin-live 0 --json /out/lie.json > /out/lie.txt 2>&1
echo $? > /out/lie.rc
{pmd} --stressors fault,softdirty --softdirty-mode uffd-wp --softdirty-rate 50 --threads 3 \
  --size 16M --duration 4s --progress off --hang-timeout 60s --json /out/uffd.json \
  > /out/uffd.txt 2>&1
echo $? > /out/uffd.rc
"""


def counters(doc, name="pin"):
    s = [x for x in doc.get("stressors", []) if x["name"] == name]
    return {k: v["total"] for k, v in s[0].get("counters", {}).items()} if s else {}


try:
    for kernel in ("6.1", "6.12"):
        g = guest(["sh", "-c", SCRIPT], kernel=kernel, name="paths", nodes=1, cpus_per_node=2,
                  mem_per_node=512, timeout=300, carry=[BINARY, LIAR])
        if g.cannot_run:
            print(f"# {kernel}: no guest can run here: {g.reason}")
            continue
        check(g.rc == 0, f"{kernel}: the guest script ran" + ("" if g.rc == 0 else g.show()))
        rc = (g.file("clean.rc") or "").strip()
        doc = json.loads(g.file("clean.json") or "{}")
        n = counters(doc)
        ok = rc == "0" and doc.get("verdict", {}).get("status") == "clean"
        check(ok, f"{kernel}: fault + pin + lock + zap clean, exit 0 ({rc!r}, {doc.get('verdict')})" +
              ("" if ok else "\n" + (g.file("clean.txt") or "")[-1500:]))
        check(n.get("live_pages", 0) > 0 and n.get("held_pages", 0) > 0 and
              n.get("writev_pages", 0) > 0 and n.get("other_errors") == 0,
              f"{kernel}: live rounds' and held chunks' pages taken and checked {n}")
        check(n.get("direct_pages") == 0 and n.get("direct_off", 0) > 0,
              f"{kernel}: no O_DIRECT in the initramfs: that way counted as left out {n}")
        n = counters(doc, "lock")
        check(n.get("live", 0) > 0 and n.get("held", 0) > 0 and n.get("onfault", 0) > 0 and
              n.get("held_pages", 0) > 0 and n.get("other_errors") == 0,
              f"{kernel}: lock pairs on live rounds and held chunks, held ones checked {n}")
        z = counters(doc, "zap")
        check(z.get("raced", 0) > 0, f"{kernel}: zap raced the same rounds {z}")
        n = counters(doc, "ksm")
        check(n.get("ops", 0) > 0 and n.get("pages", 0) > 0 and n.get("cow_checks", 0) > 0 and
              n.get("other_errors") == 0,
              f"{kernel}: ksmd started in the guest, held chunks verified, stores to shared "
              f"zero pages copied {n}")
        rc = (g.file("lie.rc") or "").strip()
        doc = json.loads(g.file("lie.json") or "{}")
        ev = [e for e in doc.get("events", {}).get("kept", []) if e["kind"] == "corruption"]
        ok = rc == "1" and ev and all(e["stressor"] == "pin" and e["class"] == "LOST_WRITE"
                                      for e in ev)
        check(ok, f"{kernel}: writes through a pin that did not land: exit 1, LOST_WRITE from "
              f"pin ({rc!r}, {[(e['stressor'], e['class']) for e in ev[:3]]})" +
              ("" if ok else "\n" + (g.file("lie.txt") or "")[-1500:]))
        rc = (g.file("uffd.rc") or "").strip()
        doc = json.loads(g.file("uffd.json") or "{}")
        s = [x for x in doc.get("stressors", []) if x["name"] == "softdirty"]
        n = counters(doc, "softdirty")
        if kernel == "6.1":
            ok = rc == "125" and s and "UFFD_FEATURE_WP_ASYNC" in (s[0].get("reason") or "")
            check(ok, f"{kernel}: no async uffd-wp before 6.7: --softdirty-mode uffd-wp "
                  f"skipped naming it, exit 125 ({rc!r}, {s and s[0].get('reason')})")
        else:
            ok = rc == "0" and n.get("clears", 0) > 0 and n.get("checked", 0) > 0 and \
                n.get("lost") == 0
            check(ok, f"{kernel}: --softdirty-mode uffd-wp: arena write-protected, chunks "
                  f"judged, nothing lost ({rc!r}, {n})" +
                  ("" if ok else "\n" + (g.file("uffd.txt") or "")[-1500:]))
finally:
    shutil.rmtree(tmp, ignore_errors=True)

done()
