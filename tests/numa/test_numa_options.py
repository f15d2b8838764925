#!/usr/bin/env python3
# labels: e2e numa
# timeout: 120
"""--cpu-nodes, --mem-policy and --numa-balancing on this host: bad values are exit 2
naming the value, good ones are applied (affinity, mbind seen in numa_maps, the
sysctl set for the run and put back), and the report's "numa" block says so."""
import json
import os
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import (PMDSTRESS, check, done, is_root, run, skip_part, spawn,  # noqa: E402
                     storm_of)

NODE_DIR = "/sys/devices/system/node"


def node_list(name):
    try:
        with open(os.path.join(NODE_DIR, name)) as f:
            text = f.read().strip()
    except OSError:
        return [0]
    nodes = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        nodes += range(int(a), int(b or a) + 1)
    return nodes


mem_nodes = node_list("has_memory")
cpu_nodes = node_list("has_cpu")
missing = max(node_list("possible") + mem_nodes + cpu_nodes) + 1  # a node this host lacks
base = ["--threads", "4", "--duration", "1s", "--size", "16M", "--progress", "off", "--quiet",
        "--stressors", "fault"]

# ---- bad values: exit 2, one line naming the option and the value -------------------
bad = [
    (["--cpu-nodes", str(missing)], "--cpu-nodes", f"'{missing}'", f"node {missing}"),
    (["--cpu-nodes", "0,"], "--cpu-nodes", "'0,'", "node list"),
    (["--cpu-nodes", "banana"], "--cpu-nodes", "'banana'", "spread"),
    (["--cpu-nodes", "3-1"], "--cpu-nodes", "'3-1'", "node list"),
    (["--cpu-nodes", "64"], "--cpu-nodes", "'64'", "below 64"),
    (["--mem-policy", f"bind:{missing}"], "--mem-policy", f"'bind:{missing}'", f"node {missing}"),
    (["--mem-policy", f"preferred:{missing}"], "--mem-policy", f"'preferred:{missing}'",
     f"node {missing}"),
    (["--mem-policy", f"interleave:0-{missing}"], "--mem-policy", f"'interleave:0-{missing}'",
     f"node {missing}"),
    (["--mem-policy", "bind"], "--mem-policy", "'bind'", "bind:NODES"),
    (["--mem-policy", "preferred:0,1"], "--mem-policy", "'preferred:0,1'", "one node"),
    (["--mem-policy", "local:0"], "--mem-policy", "'local:0'", "expected default"),
    (["--mem-policy", "interleave:x"], "--mem-policy", "'interleave:x'", "bad node list"),
    (["--mem-policy="], "--mem-policy", "''", "expected default"),
    (["--numa-balancing", "maybe"], "--numa-balancing", "'maybe'", "keep"),
]
for args, opt, value, hint in bad:
    r = run(base + args, json_report=False)
    line = r.err.strip().splitlines()[-1] if r.err.strip() else ""
    check(r.rc == 2 and opt in line and value in line and hint in line,
          f"{' '.join(args)}: exit 2 naming {opt} {value} ({hint}): rc={r.rc} {line!r}")

# the same in a scenario file: the [global] key is checked as strictly
ini = os.path.join(os.environ.get("PMD_BUILD_DIR", "/tmp"), "numa-bad-policy.ini")
with open(ini, "w") as f:
    f.write(f"[global]\nmem-policy = bind:{missing}\n[fault]\n")
r = run(["--config", ini, "--duration", "1s", "--threads", "2", "--quiet"], json_report=False)
check(r.rc == 2 and f"bind:{missing}" in r.err, f"INI mem-policy = bind:{missing}: exit 2 "
      f"({r.err.strip()[-200:]!r})")
os.unlink(ini)

# ---- the topology block ---------------------------------------------------------------
r = run(base)
numa = (r.doc or {}).get("numa", {})
check(r.rc == 0 and numa.get("nodes") == len(node_list("online")),
      f"numa.nodes is this host's online node count ({numa.get('nodes')})")
n0 = (numa.get("node") or [{}])[0]
check(n0.get("mem_total", 0) > 0 and n0.get("ncpus", 0) > 0 and n0.get("distances", [0])[0] == 10,
      f"node {n0.get('id')}: memory, CPUs and its distance to itself (10): {n0}")
ws = numa.get("workers", [])
check(len(ws) == 4 and all(w["bound"] is None and w["node"] is not None and w["cpu"] is not None
                           for w in ws),
      f"every worker's CPU and node sampled, none bound without --cpu-nodes: {ws}")
check(numa.get("mem_policy") == "default" and numa.get("numa_balancing", {}).get("setting") ==
      "keep", f"defaults: mem_policy default, numa_balancing keep ({numa.get('mem_policy')})")

# ---- --cpu-nodes binds: each worker ran on a CPU of its node ----------------------------
node = cpu_nodes[-1]
with open(os.path.join(NODE_DIR, f"node{node}", "cpulist")) as f:
    cpus = set()
    for part in f.read().strip().split(","):
        a, _, b = part.partition("-")
        cpus |= set(range(int(a), int(b or a) + 1))
r = run(base + ["--cpu-nodes", str(node)])
ws = (r.doc or {}).get("numa", {}).get("workers", [])
check(r.rc == 0 and ws and all(w["bound"] == node and w["node"] == node and w["cpu"] in cpus
                               for w in ws),
      f"--cpu-nodes {node}: every worker bound to node {node} and ran on its CPUs {sorted(cpus)}: {ws}")
r = run(base + ["--cpu-nodes", "spread"])
ws = (r.doc or {}).get("numa", {}).get("workers", [])
check(r.rc == 0 and [w["bound"] for w in ws] == [cpu_nodes[i % len(cpu_nodes)]
                                                 for i in range(len(ws))],
      f"--cpu-nodes spread: round-robin over {cpu_nodes}: {[w['bound'] for w in ws]}")
text = run(base[:-3] + ["--stressors", "fault", "--cpu-nodes", "spread"] +
           ["--progress", "off"], json_report=False)
check(text.rc == 0 and "placement: cpu-nodes spread" in text.out,
      "the text report has the placement line when a NUMA option is set")


# ---- --mem-policy: the arena's VMA has it (numa_maps), until the end -------------------
def policies_while_running(args):
    """Policies of the arena's VMAs in numa_maps, read many times mid-run (the
    arena's range comes from the JSON report at the end)."""
    path = os.path.join(os.environ.get("PMD_BUILD_DIR", "/tmp"), f"numa-maps-{os.getpid()}.json")
    p = spawn(["--threads", "2", "--duration", "2s", "--size", "16M", "--progress", "off",
               "--quiet", "--stressors", "fault", "--json", path] + args)
    lines = []
    storm = storm_of(p.pid)  # the process with the arena, pmdstress's child pmd/storm
    time.sleep(0.5)
    for _ in range(40):  # many samples: a transient policy gap must show too
        try:
            with open(f"/proc/{storm}/numa_maps") as f:
                lines += f.read().splitlines()
        except OSError:
            break
        time.sleep(0.02)
    p.communicate(timeout=30)
    seen = set()
    try:
        with open(path) as f:
            arena = json.load(f)["arena"]
        os.unlink(path)
        lo = int(arena["base"], 16)
        hi = lo + arena["size"]
        for line in lines:
            addr, pol = line.split()[:2]
            if lo <= int(addr, 16) < hi:
                seen.add(pol)
    except (OSError, ValueError, KeyError):
        pass
    return seen, p.returncode


if os.path.exists("/proc/self/numa_maps"):
    pols, rc = policies_while_running(["--mem-policy", f"bind:{mem_nodes[0]}"])
    check(rc == 0 and f"bind:{mem_nodes[0]}" in pols,
          f"--mem-policy bind:{mem_nodes[0]}: the arena's numa_maps line says so ({pols})")
    pols, rc = policies_while_running(["--mem-policy", "interleave"])
    check(rc == 0 and any(p.startswith("interleave:") for p in pols),
          f"--mem-policy interleave: numa_maps says interleave ({pols})")
    pols, rc = policies_while_running([])
    check(rc == 0 and pols == {"default"}, f"no --mem-policy: default ({pols})")
    # chunks the storm remaps (munmap + MAP_FIXED, --fault-zap remap) keep the policy:
    # otherwise the arena would be cut into default and bind VMAs
    pols, rc = policies_while_running(["--mem-policy", f"preferred:{mem_nodes[0]}",
                                       "--fault-zap", "remap"])
    check(rc == 0 and pols == {f"prefer:{mem_nodes[0]}"},
          f"--fault-zap remap: remapped chunks get the policy again ({pols})")
    r = run(base + ["--mem-policy", "local"])
    check(r.rc == 0 and r.doc["numa"]["mem_policy"] == "local", "--mem-policy local runs")

# ---- --numa-balancing: set for the run, put back ---------------------------------------
PATH = "/proc/sys/kernel/numa_balancing"
if is_root() and os.path.exists(PATH):
    with open(PATH) as f:
        before = f.read().strip()
    want = "0" if before != "0" else "1"
    p = spawn(base[:-2] + ["--stressors", "fault", "--duration", "2s", "--numa-balancing",
                           "on" if want == "1" else "off"])
    time.sleep(1.0)
    with open(PATH) as f:
        during = f.read().strip()
    out, err = p.communicate(timeout=30)
    with open(PATH) as f:
        after = f.read().strip()
    if "another pmdstress run is changing kernel settings" in err:
        skip_part("--numa-balancing check: another run holds the settings lock")
    else:
        check(p.returncode == 0 and during == want and after == before,
              f"--numa-balancing: {before} -> {during} during the run -> {after} after "
              f"(rc={p.returncode}, {err.strip()[-200:]!r})")
    # a signal: the value is still put back
    p = spawn(base[:-2] + ["--stressors", "fault", "--duration", "30s", "--numa-balancing",
                           "on" if want == "1" else "off"])
    time.sleep(1.0)
    p.terminate()
    p.communicate(timeout=30)
    with open(PATH) as f:
        after = f.read().strip()
    check(after == before, f"--numa-balancing after SIGTERM: back to {before} ({after})")
elif not is_root() and os.path.exists(PATH):
    r = run(base + ["--numa-balancing", "on"], json_report=False)
    check(r.rc == 125 and "numa_balancing" in r.err and "root" in r.err,
          f"--numa-balancing on without root: exit 125 saying why ({r.err.strip()[-200:]!r})")

done()
