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
from pmdtest import PMDSTRESS, check, done, is_root, skip  # noqa: E402

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
    """The arena: anonymous read-write mappings that, merged, span exactly @size from
    a 2 MiB boundary (toggle's flips cut it into several VMAs)."""
    spans = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split()
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            if parts[1].startswith("rw") and len(parts) == 5:
                if spans and spans[-1][1] == lo:
                    spans[-1][1] = hi
                else:
                    spans.append([lo, hi])
    found = [lo for lo, hi in spans if hi - lo == size and lo % (2 << 20) == 0]
    return found[0] if len(found) == 1 else None


SIZE = 6 << 20  # an arena size no other mapping of the run has
path = tempfile.mktemp(suffix=".json")
p = subprocess.Popen([PMDSTRESS, "--stressors", "toggle", "--threads", "1", "--size", "6M",
                      "--duration", "5s", "--progress", "off", "--quiet", "--json", path],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
time.sleep(1.0)
base = arena_base(p.pid, SIZE)
result = None
if base:
    for _ in range(50):
        result = inject_munmap(p.pid, base + (2 << 20) + 7 * 4096, 4096)
        if result is not None:
            break
        time.sleep(0.02)
out, err = p.communicate(timeout=60)
d = None
if os.path.exists(path):
    with open(path) as f:
        d = json.load(f)
    os.unlink(path)
check(base is not None, f"the 6 MiB arena found in /proc/{p.pid}/maps ({base and hex(base)})")
check(result == 0, f"munmap of chunk 1's page 7 ran in the run's main thread ({result})")
errors = [e["text"] for e in (d or {}).get("events", {}).get("kept", []) if e["kind"] == "error"]
check(p.returncode == 5 and d and d["verdict"]["status"] == "internal",
      f"an ENOMEM no limit explains: exit 5, internal (rc {p.returncode}, "
      f"{d and d['verdict']}) {err.strip()[-400:]!r}")
m = re.search(r"of chunk (\d+)|\(chunks (\d+)\.\.(\d+)\)", errors[0]) if errors else None
lo, hi = ((int(m.group(1)), int(m.group(1))) if m and m.group(1) else
          (int(m.group(2)), int(m.group(3))) if m else (None, None))
check(errors and errors[0].startswith("toggle: madvise(MADV_") and lo is not None and lo <= 1 <= hi,
      f"the error names the call and the chunk (1): {errors[:1]}")
check(errors and "Cannot allocate memory (no limit near: RLIMIT_AS" in errors[0] and
      "mappings" in errors[0], f"the errno, and what the limits were: {errors[:1]}")
check(d and "internal error: toggle: madvise(" in d["verdict"]["summary"],
      f"the verdict's line is that error: {d and d['verdict']['summary']!r}")
check("internal error: toggle: madvise(" in err and "(exit 5)" in err,
      f"and stderr's: {err.strip()[-300:]!r}")
done()
