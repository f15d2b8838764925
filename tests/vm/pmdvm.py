# SPDX-License-Identifier: GPL-2.0
"""Run one command in an emulated NUMA guest (tools/vm/pmd-vm) for the vm tests:
its exit status, output, /out files and status lines, and whether the guest
could not be run here at all (pmd-vm exit 125: a test skips with that reason)."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import BUILD_DIR, SOURCE_DIR  # noqa: E402

PMD_VM = os.path.join(SOURCE_DIR, "tools", "vm", "pmd-vm")
CANNOT_RUN = 125  # pmd-vm: qemu missing, kernel not fetchable or not bootable, ...


class Guest:
    def __init__(self, rc, out, err, outdir):
        self.rc, self.out, self.err, self.dir = rc, out, err, outdir
        self.status = {}
        try:
            with open(os.path.join(outdir, "status")) as f:
                for line in f:
                    k, _, v = line.rstrip("\n").partition("=")
                    self.status[k] = v
        except OSError:
            pass

    @property
    def cannot_run(self):
        return self.rc == CANNOT_RUN

    @property
    def reason(self):
        """pmd-vm's one-line reason when the guest could not be run."""
        for line in self.err.splitlines():
            if "cannot run guest:" in line:
                return line.split("cannot run guest:", 1)[1].strip()
        lines = [ln for ln in self.err.splitlines() if ln.strip()]
        return self.status.get("reason") or (lines[-1] if lines else f"pmd-vm exit {self.rc}")

    def file(self, name):
        """A file the command left in /out (or a result file), or None."""
        try:
            with open(os.path.join(self.dir, name), errors="replace") as f:
                return f.read()
        except OSError:
            return None

    def show(self):
        console = self.file("console.log") or ""
        return (f"pmd-vm rc={self.rc} status={self.status}\n--- stderr (tail)\n"
                f"{self.err[-2000:]}\n--- console (tail)\n{console[-3000:]}")


def guest(cmd, kernel="6.1", name="guest", nodes=2, cpus_per_node=2, mem_per_node=512,
          timeout=120, carry=(), append=None):
    """Boot @kernel with @nodes nodes (and @append on its command line), run
    @cmd (a list) inside, return a Guest.
    Results land in <build>/vm/<name>-<kernel>, emptied first: a stale report
    from an earlier call can never pass for this one."""
    outdir = os.path.join(BUILD_DIR, "vm", f"{name}-{os.path.basename(str(kernel))}")
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    args = [PMD_VM, "--kernel", str(kernel), "--nodes", str(nodes),
            "--cpus-per-node", str(cpus_per_node), "--mem-per-node", str(mem_per_node),
            "--timeout", str(timeout), "--out", outdir]
    for c in carry:
        args += ["--carry", c]
    if append:
        args += ["--append", append]
    args += ["--"] + list(cmd)
    # pmd-vm enforces --timeout in the guest and kills a hung qemu itself; this
    # outer limit only catches pmd-vm hanging before it boots anything
    p = subprocess.run(args, capture_output=True, text=True, errors="replace",
                       timeout=timeout + 300, stdin=subprocess.DEVNULL)
    return Guest(p.returncode, p.stdout, p.stderr, outdir)
