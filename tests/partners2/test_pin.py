#!/usr/bin/env python3
# labels: e2e
# timeout: 300
"""The pin partner: vmsplice and process_vm_readv/writev under the fault storm.

It runs clean, takes pages of live rounds by both paths and checks them
(zero or this round's stamps), holds settled chunks and writes their pages
back through a pin after dropping them (process_vm_writev, or O_DIRECT to
and from a file in /var/tmp where its filesystem takes O_DIRECT; where it
does not, a ramfs mounted over it in a mount namespace as root, that way is
counted as left out), times each call, and its operations are in the
chunks' op rings. A --pin-dir that cannot hold an O_DIRECT file is refused. Then the kernel is made to answer as a broken
one would, for real (tests/partners2/pinliar.c, built here with cc): with
process_vm_writev refused (EPERM, a container's seccomp profile) the partner
is skipped with the reason, never passed; with process_vm_writev of whole
pages answered "all written" by a seccomp supervisor that ran nothing (a
write through a pin that did not land), the run must end in corruption
naming pin's pages (exit 1, LOST_WRITE). Skips (77) where THP, seccomp
filters or their user notifications are missing."""
import os
import shutil
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, check, done, run, skip, thp_available  # noqa: E402

BASE = ["--stressors", "fault,pin", "--threads", "4", "--duration", "2s", "--size", "16M",
        "--progress", "off", "--quiet", "--pin-rate", "0"]
SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pinliar.c")

if not thp_available():
    skip("no transparent huge pages here")


def direct_here(d):
    """Whether an O_DIRECT file can be written in directory d."""
    try:
        fd = os.open(d, os.O_TMPFILE | os.O_RDWR | os.O_DIRECT, 0o600)
    except OSError:
        return False
    try:
        import mmap
        buf = mmap.mmap(-1, 4096)
        return os.pwritev(fd, [buf], 0) == 4096
    except OSError:
        return False
    finally:
        os.close(fd)


def ordered(lat):
    return 0 < lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"]


# ---- as it runs: live rounds by both paths, held chunks written back through a pin ----
r = run(BASE + ["--pin-live", "80"])
check(r.rc == 0, "fault + pin: exit 0" + ("" if r.rc == 0 else f"\n{r.show()}"))
p = r.stressor("pin")
check(p is not None and p["status"] == "ran", f"pin ran: {p and p.get('reason')}")
n = {k: r.counter("pin", k) for k in ("ops", "live", "held", "spliced_pages", "readv_pages",
                                        "writev_pages", "direct_pages", "direct_off",
                                        "live_pages", "held_pages", "short", "efault",
                                        "enomem", "other_errors")}
check(n["ops"] > 100 and n["ops"] == n["live"] + n["held"],
      f"every operation is on a live round or a held chunk {n}")
check(n["live"] > 0 and n["readv_pages"] > 0 and n["live_pages"] > 0,
      f"live rounds' pages taken and checked {n}")
check(n["held"] > 0 and n["writev_pages"] > 0 and
      n["held_pages"] >= n["writev_pages"] + n["direct_pages"],
      f"held chunks' pages written back through a pin and checked {n}")
if direct_here("/var/tmp"):
    check(n["direct_pages"] > 0 and n["direct_off"] == 0,
          f"/var/tmp takes O_DIRECT: pages went out and back through it {n}")
else:
    check(n["direct_pages"] == 0 and n["direct_off"] > 0,
          f"/var/tmp takes no O_DIRECT here: that way counted as left out {n}")
check(n["spliced_pages"] >= n["writev_pages"], f"the held pages went through the pipe {n}")
check(n["other_errors"] == 0 and n["short"] == 0, f"no error, no short write {n}")
lats = p["latency"]
check(all(ordered(lats[k]) for k in ("splice_call", "readv_call", "writev_call")),
      "each call timed, percentiles ordered " +
      str({k: {q: lats[k][q] for q in ("count", "min", "p50", "max")}
           for k in ("splice_call", "readv_call", "writev_call")}))

# ---- a directory named for O_DIRECT must take it: one line naming it, exit 2 ----
r = run(BASE + ["--pin-dir", "/nonexistent/pin"])
check(r.rc == 2 and "--pin-dir /nonexistent/pin" in r.err,
      f"--pin-dir that cannot hold an O_DIRECT file: exit 2 naming it ({r.rc}: "
      f"{r.err.strip()[-200:]})")
r = run(BASE + ["--pin-dir", "off"])
check(r.rc == 0 and r.counter("pin", "direct_pages") == 0 and
      r.counter("pin", "direct_off") == 0, "--pin-dir off: no O_DIRECT, nothing counted left out")

# ---- auto where /var/tmp refuses O_DIRECT (a ramfs over it, in a mount namespace) ----
if os.geteuid() == 0 and shutil.which("unshare"):
    r = run(["--mount", "--", "sh", "-c", 'mount -t ramfs none /var/tmp || exit 77; exec "$@"',
             "sh", PMDSTRESS] + BASE, binary=shutil.which("unshare"))
    if r.doc is None:
        # unshare or the mount refused (a chroot whose / is no mount point): no run at all
        skip(f"no ramfs over /var/tmp in a mount namespace here (rc {r.rc}): "
             f"{r.err.strip()[-200:]}")
    else:
        check(r.rc == 0 and r.counter("pin", "direct_pages") == 0 and
              r.counter("pin", "direct_off") > 0 and r.counter("pin", "held_pages") > 0,
              f"/var/tmp on ramfs: held chunks go through the pipe, direct_off counts the "
              f"rest ({r.rc}, {r.counter('pin', 'direct_off')} left out)")
else:
    print("# not root or no unshare: the ramfs /var/tmp case not run")

# ---- a run of the default mix names it among the racing partners ----
r = run(["--threads", "24", "--duration", "2s", "--size", "32M", "--progress", "off",
         "--quiet"])
p = r.stressor("pin")
check(r.rc == 0 and p is not None and p["status"] == "ran" and p.get("ops", 0) > 0,
      f"the default race runs pin: exit {r.rc}, {p and p['status']}, {p and p.get('ops')} ops")

# ---- the kernel made to answer as it must not, for real ----
cc = shutil.which("cc") or shutil.which("gcc")
if not cc:
    skip("no C compiler (cc) to build tests/partners2/pinliar.c")
tmp = tempfile.mkdtemp(prefix="pmd-pinliar-")
try:
    liar = os.path.join(tmp, "pinliar")
    b = subprocess.run([cc, "-O2", "-Wall", "-o", liar, SOURCE], capture_output=True, text=True)
    if b.returncode:
        skip(f"cannot build pinliar.c: {b.stderr.strip()[-300:]}")
    b = subprocess.run([liar, "lie", "/bin/true"], capture_output=True, text=True)
    if b.returncode == 77:
        skip(b.stderr.strip())

    r = run(["refuse", PMDSTRESS] + BASE, binary=liar)
    p = r.stressor("pin")
    check(p is not None and p["status"] == "skipped" and
          "process_vm_writev refused" in (p.get("reason") or ""),
          f"process_vm_writev refused (EPERM): pin skipped with the reason "
          f"({p and p['status']}: {p and p.get('reason')})")
    check(r.rc == 125 and r.doc["verdict"]["status"] == "skipped",
          f"named by --stressors and unable to run: exit 125 ({r.rc})")

    r = run(["lie", PMDSTRESS] + BASE + ["--pin-live", "0"], binary=liar)
    ev = [e for e in (r.doc or {}).get("events", {}).get("kept", [])
          if e["kind"] == "corruption"]
    check(r.rc == 1 and r.doc["verdict"]["status"] == "corruption",
          f"writes through a pin that did not land: exit 1, corruption ({r.rc}, "
          f"{r.doc and r.doc['verdict']})")
    check(ev and all(e["stressor"] == "pin" and e["class"] == "LOST_WRITE" for e in ev),
          f"reported by pin as LOST_WRITE: {[(e['stressor'], e['class']) for e in ev[:3]]}")
    check(ev and any(o["op"] == "pin-write" for o in ev[0].get("op_ring", [])),
          f"the chunk's ring shows the write back: {ev and [o['op'] for o in ev[0].get('op_ring', [])[-2:]]}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

done()
