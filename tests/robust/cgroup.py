# SPDX-License-Identifier: GPL-2.0
"""A disposable cgroup for one test: memory or pids limits, on cgroup v2
(a child of the root, which may delegate controllers) or on the v1
hierarchy of that controller (a child of this process's own cgroup there).
Processes are started inside it through preexec_fn; it is removed at the
end, after its processes are gone."""
import atexit
import os
import time

V2 = "/sys/fs/cgroup"
V1 = {"memory": "/sys/fs/cgroup/memory", "pids": "/sys/fs/cgroup/pids"}


def _own_v1_path(controller):
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, ctrls, path = line.rstrip("\n").split(":", 2)
            if controller in ctrls.split(","):
                return path
    return "/"


class Cgroup:
    """Cgroup(controller) -> .path (None: .why says why), .set(name, value), .preexec,
    .procs(), .remove()."""

    def __init__(self, controller):
        self.controller = controller
        self.path = None
        self.v2 = False
        self.why = f"no cgroup v2 root delegating {controller} at {V2}, and no v1 " \
            f"{controller} hierarchy at {V1.get(controller, '(none)')}"
        name = f"pmdtest-{os.getpid()}-{controller}"
        try:
            with open(f"{V2}/cgroup.controllers") as f:
                v2_ctrls = f.read().split()
        except OSError:
            v2_ctrls = []
        try:
            with open(f"{V2}/cgroup.subtree_control") as f:
                v2_ctrls = [c for c in v2_ctrls if c in f.read().split()]
        except OSError:
            v2_ctrls = []
        # only where the root already delegates it: enabling it would change the system
        if controller in v2_ctrls:
            try:
                path = f"{V2}/{name}"
                os.mkdir(path)
                self.path, self.v2 = path, True
            except OSError as e:
                self.why = f"cannot make {path}: {e.strerror}"
        if not self.path and os.path.isdir(V1.get(controller, "/nonexistent")):
            base = V1[controller] + _own_v1_path(controller)
            try:
                path = os.path.join(base, name)
                os.mkdir(path)
                self.path = path
            except OSError as e:
                self.why = f"cannot make {path}: {e.strerror}"
        if self.path:
            atexit.register(self.remove)

    def set_limit(self, value):
        """memory: bytes; pids: a count."""
        if self.controller == "memory":
            self.set("memory.max" if self.v2 else "memory.limit_in_bytes", str(value))
            if not self.v2 and os.path.exists(f"{self.path}/memory.memsw.limit_in_bytes"):
                try:
                    self.set("memory.memsw.limit_in_bytes", str(value))
                except OSError:
                    pass  # no swap accounting: the plain limit is what counts
            if self.v2 and os.path.exists(f"{self.path}/memory.swap.max"):
                self.set("memory.swap.max", "0")
        else:
            self.set("pids.max", str(value))

    def limit_file(self):
        if self.controller == "memory":
            return f"{self.path}/{'memory.max' if self.v2 else 'memory.limit_in_bytes'}"
        return f"{self.path}/pids.max"

    def set(self, name, value):
        with open(f"{self.path}/{name}", "w") as f:
            f.write(value)

    def get(self, name):
        with open(f"{self.path}/{name}") as f:
            return f.read()

    def preexec(self):
        """For subprocess: the child moves itself in before it execs."""
        with open(f"{self.path}/cgroup.procs", "w") as f:
            f.write(str(os.getpid()))

    def procs(self):
        try:
            return [int(x) for x in self.get("cgroup.procs").split()]
        except OSError:
            return []

    def oom_kills(self):
        try:
            text = self.get("memory.events" if self.v2 else "memory.oom_control")
        except OSError:
            return 0
        for line in text.splitlines():
            k, _, v = line.partition(" ")
            if k == "oom_kill":
                return int(v)
        return 0

    def wait_empty(self, timeout=10.0):
        end = time.monotonic() + timeout
        while self.procs() and time.monotonic() < end:
            time.sleep(0.05)
        return not self.procs()

    def remove(self):
        if not self.path or not os.path.isdir(self.path):
            return
        self.wait_empty(5.0)
        for pid in self.procs():
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        self.wait_empty(5.0)
        try:
            os.rmdir(self.path)
        except OSError as e:
            print(f"# cannot remove {self.path}: {e}")
