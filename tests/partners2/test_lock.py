#!/usr/bin/env python3
# labels: e2e
# timeout: 300
"""The lock partner: mlock/munlock of live rounds' chunks and of held settled
chunks under the fault storm, with zap racing the same rounds.

It runs clean; both kinds of lock are used, on live rounds and on held
chunks, and every held chunk is checked after its pair; each call is timed.
zap's MADV_DONTNEED/FREE of a live round that the kernel refuses with EINVAL
because the chunk was mlocked at that moment is counted (locked), not
reported; with three lock workers, a live round one of them has locked is
passed over by the others (busy), so the count's parity stays true. As nobody with RLIMIT_MEMLOCK below a chunk (prlimit), the partner
is skipped saying which limit, never passed; named by --stressors, exit 125.
Skips (77) where THP is missing."""
import os
import shutil
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import (NOBODY, PMDSTRESS, check, done, is_root, reachable, run, skip,  # noqa: E402
                     thp_available)

if not thp_available():
    skip("no transparent huge pages here")

BASE = ["--stressors", "fault,lock,zap", "--threads", "5", "--duration", "3s", "--size", "16M",
        "--progress", "off", "--quiet", "--lock-rate", "0", "--lock-hold-us", "1000",
        "--zap-rate", "0", "--zap-race", "100", "--zap-dontneed", "1", "--zap-free", "1",
        "--zap-cold", "0", "--zap-pageout", "0", "--zap-remap", "0"]


def ordered(lat):
    return 0 < lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"]


r = run(BASE)
check(r.rc == 0, "fault + lock + zap: exit 0" + ("" if r.rc == 0 else f"\n{r.show()}"))
s = r.stressor("lock")
check(s is not None and s["status"] == "ran", f"lock ran: {s and s.get('reason')}")
n = {k: r.counter("lock", k) for k in ("ops", "live", "held", "onfault", "held_pages",
                                         "eagain", "enomem", "other_errors")}
check(n["ops"] > 50 and n["ops"] == n["live"] + n["held"],
      f"every pair is on a live round or a held chunk {n}")
check(n["live"] > 0 and n["held"] > 0 and 0 < n["onfault"] < n["ops"],
      f"both kinds of lock, on live rounds and held chunks {n}")
check(n["held_pages"] == 512 * n["held"], f"every held chunk checked whole after its pair {n}")
check(n["other_errors"] == 0, f"no error {n}")
lats = s["latency"]
check(ordered(lats["lock_call"]) and ordered(lats["unlock_call"]) and
      lats["lock_call"]["count"] == n["ops"] == lats["unlock_call"]["count"],
      "each lock and unlock timed, percentiles ordered")
z = {k: r.counter("zap", k) for k in ("raced", "locked")}
check(z["raced"] > 0 and z["locked"] is not None,
      f"zap raced the rounds; its EINVALs on locked chunks are counted, not reported {z}")

# ---- three lockers: one at a time on a live round (munlock does not nest; zap reads the
# lock count's parity, which two interleaved pairs would break) ----
r = run(BASE + ["--threads", "8", "--lock-workers", "3"])
check(r.rc == 0, "fault + 3 lock workers + zap: exit 0" + ("" if r.rc == 0 else f"\n{r.show()}"))
n = {k: r.counter("lock", k) for k in ("ops", "live", "busy", "other_errors")}
check(n["busy"] > 0 and n["live"] > 0 and n["other_errors"] == 0,
      f"a live round another lock worker had locked is passed over, counted as busy {n}")

# ---- the limit: RLIMIT_MEMLOCK below a chunk, without CAP_IPC_LOCK ----
prlimit = shutil.which("prlimit")
if not is_root() or not prlimit or not shutil.which("setpriv"):
    skip("not root, or no prlimit/setpriv: the RLIMIT_MEMLOCK case not run")
else:
    p = subprocess.run(NOBODY + [prlimit, "--memlock=1048576", reachable(PMDSTRESS)] + BASE,
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 125 and "RLIMIT_MEMLOCK is 1024 KiB, less than a chunk" in p.stderr,
          f"as nobody with RLIMIT_MEMLOCK 1 MiB: lock skipped naming the limit, exit 125 "
          f"({p.returncode}: {p.stderr.strip()[-300:]})")
done()
