# SPDX-License-Identifier: GPL-2.0
"""Who is left behind: this test process becomes a child subreaper, so any
process pmdstress forked and did not reap (a zombie) or left running (an
orphan) is reparented to us when pmdstress exits, and shows up in /proc
with our pid as its parent."""
import ctypes
import os

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def children_of(pid):
    """[(pid, state, comm)] of the processes whose parent is pid."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # comm may hold spaces and parentheses: the fields after it start at the last ')'
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == pid:
            out.append((int(d), fields[0], comm))
    return out


def leftovers():
    """Processes reparented to us (left behind by a finished run); reaps the zombies."""
    left = children_of(os.getpid())
    for pid, state, _ in left:
        if state == "Z":
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
    return left
