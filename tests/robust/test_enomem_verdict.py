#!/usr/bin/env python3
# labels: robust
# timeout: 120
"""An ENOMEM that no limit explains is an error of the kernel's or ours (exit
5), never "resources" (exit 125, which git bisect run skips). While the
toggle stressor flips THP advice on the arena, the test unmaps one 4 KiB page
of chunk 1 from outside (ptrace: munmap(2) run by pmdstress's main thread,
its registers put back after): the kernel then answers toggle's madvise()
over that chunk with ENOMEM, as a kernel that loses a VMA would, while every
limit (RLIMIT_AS, the memory cgroup, memory, vm.max_map_count) is far away.
The run must end with exit 5, status internal, its line naming the call,
the errno and the chunk, and saying what it read of the limits. Before,
toggle took every ENOMEM for a partner's munmap hole and the run ended
clean (exit 0), and an ENOMEM elsewhere ended as "resources".

The same under the seed race's memcg way (its own limit, set around seed
rounds, is not a limit that explains the hole's ENOMEM).

Where a limit is near, the same errno is "resources": see
tests/unit/test_reslimits.c (this machine's numbers, one limit moved) and
tests/vm/test_enomem_guest.py (vm.max_map_count lowered in a guest)."""
import ctypes
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, check, done, is_root, skip, storm_of  # noqa: E402

if platform.machine() != "x86_64":
    skip(f"the ptrace injection is written for x86_64 registers, not {platform.machine()}")
if not is_root():
    skip("ptrace of the run (kernel.yama.ptrace_scope) needs root here")

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
PTRACE_GETREGS, PTRACE_SETREGS, PTRACE_SINGLESTEP, PTRACE_DETACH = 12, 13, 9, 17
PTRACE_SEIZE, PTRACE_INTERRUPT = 0x4206, 0x4207
SYS_munmap = 11
ERESTART = {512, 513, 514, 516}  # ERESTARTSYS, ERESTARTNOINTR, ERESTARTNOHAND, ..._BLOCK
WALL = 0x40000000


class Regs(ctypes.Structure):
    _fields_ = [(n, ctypes.c_ulonglong) for n in (
        "r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax rip cs "
        "eflags rsp ss fs_base gs_base ds es fs gs").split()]


def pt(req, tid, addr=None, data=None):
    r = libc.ptrace(req, tid, addr, data)
    if r == -1:
        e = ctypes.get_errno()
        raise OSError(e, f"ptrace({req}): {os.strerror(e)}")
    return r


def inject_munmap(tid, addr, length):
    """Run munmap(addr, length) in thread tid; its own state is put back after.
    Returns the syscall's result, or None when the thread was not stopped at a
    syscall instruction (try again)."""
    pt(PTRACE_SEIZE, tid)
    try:
        pt(PTRACE_INTERRUPT, tid)
        os.waitpid(tid, WALL)
        saved = Regs()
        pt(PTRACE_GETREGS, tid, None, ctypes.addressof(saved))
        with open(f"/proc/{tid}/mem", "rb") as mem:
            mem.seek(saved.rip - 2)
            if mem.read(2) != b"\x0f\x05":  # not just past a syscall instruction
                return None
        r = Regs.from_buffer_copy(saved)
        r.rip, r.rax, r.rdi, r.rsi, r.orig_rax = saved.rip - 2, SYS_munmap, addr, length, 2**64 - 1
        pt(PTRACE_SETREGS, tid, None, ctypes.addressof(r))
        pt(PTRACE_SINGLESTEP, tid)
        os.waitpid(tid, WALL)
        pt(PTRACE_GETREGS, tid, None, ctypes.addressof(r))
        result = ctypes.c_longlong(r.rax).value
        # the interrupted call restarts, as the kernel would have restarted it
        if (-ctypes.c_longlong(saved.rax).value) in ERESTART:
            saved.rax, saved.rip = saved.orig_rax, saved.rip - 2
        pt(PTRACE_SETREGS, tid, None, ctypes.addressof(saved))
        return result
    finally:
        pt(PTRACE_DETACH, tid)


def arena_base(pid, size):
    """The arena: anonymous read-write mappings, one after the other, that span
    exactly @size from a 2 MiB boundary where a mapping begins (toggle's flips
    cut it into several; its THP advice keeps it apart from its neighbours)."""
    vmas = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split()
            if parts[1].startswith("rw") and len(parts) == 5:
                vmas.append(tuple(int(x, 16) for x in parts[0].split("-")))
    found = []
    for i, (lo, _) in enumerate(vmas):
        if lo % (2 << 20):
            continue
        end = lo
        for a, b in vmas[i:]:
            if a != end or b > lo + size:
                break
            end = b
        if end == lo + size:
            found.append(lo)
    return found[0] if len(found) == 1 else None


SIZE = 6 << 20  # an arena size no other mapping of the run has
PR_SET_THP_DISABLE = 41


def thp_off():
    """The run's parent has THP off: no prctl way, so the seed race takes the memcg way."""
    libc.prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0)


def threads(pid):
    names = []
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/comm") as f:
                names.append(f.read().strip())
        except OSError:
            pass
    return names


def scenario(label, args, preexec=None, after=None):
    path = tempfile.mktemp(suffix=".json")
    p = subprocess.Popen([PMDSTRESS] + args + ["--size", "6M", "--duration", "5s",
                                               "--progress", "off", "--quiet", "--json", path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=preexec)
    time.sleep(1.0)
    storm = storm_of(p.pid) or p.pid  # the arena is the storm process's (src/run/supervise.c)
    # a storm that reset or touched chunk 1 would fill the hole or fault on it
    for _ in range(40):
        if not after or not any(n.startswith(after) for n in threads(storm)):
            break
        time.sleep(0.1)
    base = arena_base(storm, SIZE)
    result = None
    if base:
        for _ in range(50):
            result = inject_munmap(storm, base + (2 << 20) + 7 * 4096, 4096)
            if result is not None:
                break
            time.sleep(0.02)
    out, err = p.communicate(timeout=60)
    d = None
    if os.path.exists(path):
        with open(path) as f:
            d = json.load(f)
        os.unlink(path)
    check(base is not None, f"{label}: the 6 MiB arena found in /proc/{storm}/maps "
          f"({base and hex(base)})")
    check(result == 0, f"{label}: munmap of chunk 1's page 7 ran in the run's main thread "
          f"({result})")
    errors = [e["text"] for e in (d or {}).get("events", {}).get("kept", [])
              if e["kind"] == "error"]
    check(p.returncode == 5 and d and d["verdict"]["status"] == "internal",
          f"{label}: an ENOMEM no limit explains: exit 5, internal (rc {p.returncode}, "
          f"{d and d['verdict']}) {err.strip()[-400:]!r}")
    m = re.search(r"of chunk (\d+)|\(chunks (\d+)\.\.(\d+)\)", errors[0]) if errors else None
    lo, hi = ((int(m.group(1)), int(m.group(1))) if m and m.group(1) else
              (int(m.group(2)), int(m.group(3))) if m else (None, None))
    check(errors and errors[0].startswith("toggle: madvise(MADV_") and lo is not None and
          lo <= 1 <= hi, f"{label}: the error names the call and the chunk (1): {errors[:1]}")
    check(errors and "Cannot allocate memory (no limit near: RLIMIT_AS" in errors[0] and
          "mappings" in errors[0], f"{label}: the errno, and what the limits were: {errors[:1]}")
    check(d and "internal error: toggle: madvise(" in d["verdict"]["summary"],
          f"{label}: the verdict's line is that error: {d and d['verdict']['summary']!r}")
    check("internal error: toggle: madvise(" in err and "(exit 5)" in err,
          f"{label}: and stderr's: {err.strip()[-300:]!r}")
    return d


scenario("toggle alone", ["--stressors", "toggle", "--threads", "1"])
# The seed race's memcg way lowers the run's own limit around seed rounds and
# moves the run into a cgroup of its own: an ENOMEM met in a window is the
# run's own (not "resources", not exit 5). One met once the storm is done (its
# 10 sweeps; the hole made after them, so that no reset fills it, and no
# verification, whose reads would fault on it) is judged as above, against the
# limits where the run is then: the way blinds nothing.
d = scenario("under the memcg seed way", ["--stressors", "fault,toggle", "--threads", "3",
                                          "--fault-workers", "2", "--fault-sweeps", "10",
                                          "--verify", "off"],
             preexec=thp_off, after="pmd/fault/")
race = (d or {}).get("race") or {}
memcg = (d or {}).get("memcg") or {}
check(race.get("mechanisms") == ["memcg"] and memcg.get("seed_windows", 0) > 0,
      f"the run took the memcg way: mechanisms {race.get('mechanisms')}, "
      f"{memcg.get('seed_windows')} windows ({race.get('mechanisms_why')})")
done()
