#!/usr/bin/env python3
# labels: e2e
# timeout: 200
"""The softdirty partner on this host. Where the kernel tracks soft-dirty
(CONFIG_MEM_SOFT_DIRTY) it clears it and judges the chunks written since:
clean, pages judged, none lost. Where it does not but has async userfaultfd
write-protection (6.7+: this machine's 6.18), --softdirty-mode auto
registers the arena for it, write-protects it with PAGEMAP_SCAN and judges
the same way (uffd-wp mode, KTAP no_lost_soft_dirty run, not skipped); where
it has neither, auto clears the referenced bits, says so, and KTAP skips the
check with that reason. A mode the kernel lacks is skipped naming what is
missing, exit 125 when named by --stressors. Broken on purpose, for real, in
uffd-wp mode: this script write-protects the storm's pages itself with
PAGEMAP_SCAN on /proc/PID/pagemap every 50 ms, as a kernel that loses the
written state would leave them: exit 1, soft_dirty events. The soft-dirty
mode's own break is tests/vm/test_softdirty_guest.py."""
import mmap
import os
import struct
import sys
import ctypes
import fcntl
import subprocess
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, check, done, is_root, run, skip  # noqa: E402

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


def outside_wp(pid):
    """PAGEMAP_SCAN with PM_SCAN_WP_MATCHING over all of @pid's memory: its
    uffd-wp registered pages written since are write-protected again."""
    vec = (ctypes.c_uint64 * (3 * 64))()
    req = (3 << 30) | (96 << 16) | (ord("f") << 8) | 16
    at, end = 0, (1 << 47) - 4096
    with open(f"/proc/{pid}/pagemap", "rb", buffering=0) as f:
        while at < end:
            arg = bytearray(struct.pack("12Q", 96, 1, at, end, 0, ctypes.addressof(vec), 64, 0,
                                        0, 2, 0, 2))
            fcntl.ioctl(f.fileno(), req, arg, True)
            walk_end = struct.unpack_from("Q", arg, 32)[0]
            if walk_end <= at:
                break
            at = walk_end


tracks = kernel_tracks_soft_dirty()
print(f"# this kernel tracks soft-dirty: {tracks}")
r = run(BASE + ["--softdirty-mode", "uffd-wp"])
s = r.stressor("softdirty")
uffd = s is not None and s["status"] == "ran"
print(f"# async uffd-wp here: {uffd} ({s and s.get('reason')})")
if uffd:
    n = counters(r)
    check(r.rc == 0 and n["clears"] > 0 and n["referenced"] == 0 and n["checked"] > 0 and
          n["pages"] > 0 and n["lost"] == 0,
          f"--softdirty-mode uffd-wp: arena write-protected, chunks judged, nothing lost "
          f"({r.rc}, {n})" + ("" if r.rc == 0 else f"\n{r.show()}"))
else:
    check(r.rc == 125 and s and s["status"] == "skipped" and "uffd" in (s.get("reason") or ""),
          f"--softdirty-mode uffd-wp: skipped naming why, exit 125 ({r.rc}, "
          f"{s and s.get('reason')})")

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
if tracks or uffd:
    check(n["clears"] > 0 and n["referenced"] == 0 and n["checked"] > 0 and n["pages"] > 0 and
          n["lost"] == 0, f"auto: {'soft-dirty' if tracks else 'uffd-wp'}: cleared, chunks "
          f"judged, nothing lost {n}")
    check(line.startswith("ok ") and "SKIP" not in line, f"KTAP: {line}")
else:
    check(n["clears"] == 0 and n["referenced"] > 0 and n["checked"] == 0,
          f"neither soft-dirty nor uffd-wp here: referenced bits cleared, nothing judged {n}")
    check(line.startswith("ok ") and "# SKIP the kernel has no soft-dirty tracking" in line,
          f"KTAP skips no_lost_soft_dirty naming why: {line}")
if not tracks:
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

# ---- uffd-wp: write-protects the run did not make, from outside ----
if not uffd:
    skip("no async uffd-wp here: the outside write-protect case not run")
elif not is_root():
    skip("not root: cannot issue PAGEMAP_SCAN on the storm's pagemap")
else:
    fd, js = __import__("tempfile").mkstemp(suffix=".json")
    os.close(fd)
    p = subprocess.Popen([PMDSTRESS] + BASE[:-1] + ["2", "--softdirty-mode", "uffd-wp",
                                                     "--duration", "6s", "--json", js],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    storm, wps = None, 0
    deadline = time.monotonic() + 30
    while p.poll() is None and time.monotonic() < deadline:
        try:
            if storm is None:
                kids = open(f"/proc/{p.pid}/task/{p.pid}/children").read().split()
                storm = int(kids[0]) if kids else None
            if storm:
                outside_wp(storm)
                wps += 1
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    rc = p.wait(timeout=60)
    import json
    doc = json.load(open(js)) if os.path.getsize(js) else {}
    os.unlink(js)
    ev = [e for e in doc.get("events", {}).get("kept", []) if e["kind"] == "soft_dirty"]
    check(wps > 10, f"the storm's pages write-protected from outside {wps} times")
    check(rc == 1 and doc.get("verdict", {}).get("status") == "soft_dirty" and ev and
          "still write-protected (uffd-wp)" in ev[0]["text"],
          f"write-protects the run did not make: exit 1, soft_dirty events ({rc}, "
          f"{doc.get('verdict')}, {ev[:1] and ev[0]['text'][:200]})")
done()
