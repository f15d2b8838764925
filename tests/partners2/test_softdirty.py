#!/usr/bin/env python3
# labels: e2e
# timeout: 200
"""The softdirty partner on this host. Where the kernel tracks soft-dirty
(CONFIG_MEM_SOFT_DIRTY) it clears it and judges the chunks written since:
clean, pages judged, none lost. Where it does not (this machine's 6.18),
--softdirty-mode auto clears the referenced bits instead, says so, and KTAP
skips no_lost_soft_dirty with that reason; --softdirty-mode soft-dirty is
skipped naming the missing config, exit 125 when named by --stressors. The
check against a clear it did not make is tests/vm/test_softdirty_guest.py."""
import mmap
import os
import struct
import sys
import ctypes
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, run  # noqa: E402

BASE = ["--stressors", "fault,softdirty", "--threads", "4", "--duration", "3s", "--size", "16M",
        "--progress", "off", "--quiet", "--softdirty-rate", "50"]


def kernel_tracks_soft_dirty():
    """A page of our own: clean after a clear, dirty after a store?"""
    m = mmap.mmap(-1, 4096)
    m[0:8] = b"x" * 8
    addr = ctypes.addressof(ctypes.c_char.from_buffer(m))

    def entry():
        with open("/proc/self/pagemap", "rb") as f:
            f.seek((addr >> 12) * 8)
            return struct.unpack("Q", f.read(8))[0]
    with open("/proc/self/clear_refs", "w") as f:
        f.write("4")
    clean = not entry() >> 55 & 1
    m[0:8] = b"y" * 8
    return clean and entry() >> 55 & 1 == 1


def counters(r):
    s = r.stressor("softdirty")
    return {k: v["total"] for k, v in s.get("counters", {}).items()} if s else {}


tracks = kernel_tracks_soft_dirty()
print(f"# this kernel tracks soft-dirty: {tracks}")
fd, ktap = __import__("tempfile").mkstemp(suffix=".ktap")
os.close(fd)
r = run(BASE + ["--ktap", ktap])
n = counters(r)
tap = open(ktap).read()
os.unlink(ktap)
line = next((x for x in tap.splitlines() if x.endswith("no_lost_soft_dirty") or
             "no_lost_soft_dirty #" in x), "")
check(r.rc == 0 and r.stressor("softdirty")["status"] == "ran",
      "fault + softdirty (auto): ran, exit 0" + ("" if r.rc == 0 else f"\n{r.show()}"))
if tracks:
    check(n["clears"] > 0 and n["referenced"] == 0 and n["checked"] > 0 and n["pages"] > 0 and
          n["lost"] == 0, f"soft-dirty cleared, chunks judged, nothing lost {n}")
    check(line.startswith("ok ") and "SKIP" not in line, f"KTAP: {line}")
else:
    check(n["clears"] == 0 and n["referenced"] > 0 and n["checked"] == 0,
          f"no soft-dirty here: referenced bits cleared instead, nothing judged {n}")
    check(line.startswith("ok ") and "# SKIP the kernel has no soft-dirty tracking" in line,
          f"KTAP skips no_lost_soft_dirty naming why: {line}")
    r = run(BASE + ["--softdirty-mode", "soft-dirty"])
    s = r.stressor("softdirty")
    check(s["status"] == "skipped" and "CONFIG_MEM_SOFT_DIRTY" in (s.get("reason") or ""),
          f"--softdirty-mode soft-dirty: skipped naming the config ({s.get('reason')})")
    check(r.rc == 125 and r.stressor("fault")["status"] == "ran",
          f"named by --stressors and unable to run: exit 125, the storm still ran ({r.rc})")
lat = r.stressor("fault")["latency"]["first_touch"]
check(lat["count"] > 0, "the storm faulted meanwhile")
r = run(BASE + ["--softdirty-mode", "referenced"])
n = counters(r)
check(r.rc == 0 and n["referenced"] > 0 and n["clears"] == 0,
      f"--softdirty-mode referenced: referenced-bit clears only, clean ({r.rc}, {n})")
done()
