#!/usr/bin/env python3
# labels: e2e
# timeout: 400
"""The collapse partner: MADV_COLLAPSE under the fault storm, in each --thp mode.

Where collapses must succeed: --thp inherit leaves the arena without advice,
so with THP "madvise" or "never" system-wide the storm faults small pages and
MADV_COLLAPSE (which ignores the sysfs settings) collapses them. Where they
must fail: --thp nohuge puts VM_NOHUGEPAGE on the arena, which MADV_COLLAPSE
respects (EINVAL). And the skip path: THP disabled for the process (a kernel
without MADV_COLLAPSE: test_collapse_nomadv.py)."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
sys.path.insert(0, os.path.dirname(__file__))
from pmdtest import PMDSTRESS, check, done, run  # noqa: E402
import thpsnap  # noqa: E402

# what "must succeed" means depends on the system THP mode: no sysfs churn meanwhile
_thp_lock = thpsnap.Lock().__enter__()  # held until the test exits

BASE = ["--stressors", "fault,collapse", "--threads", "6", "--duration", "2s", "--size", "16M",
        "--progress", "off", "--quiet", "--collapse-rate", "0"]
OUTCOMES = ["collapsed", "already", "eagain", "enomem", "einval", "ebusy", "other_errors"]


def thp_enabled():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            t = f.read()
        return t[t.index("[") + 1:t.index("]")]
    except (OSError, ValueError):
        return None


def clean(r, what):
    check(r.rc == 0, f"{what}: exit 0" + ("" if r.rc == 0 else f"\n{r.show()}"))
    check(r.doc is not None and r.doc["events"]["total"] == 0,
          f"{what}: no events {r.events()[:2] if r.doc else ''}")
    c = r.stressor("collapse")
    check(c is not None and c["status"] == "ran", f"{what}: collapse ran")
    return c


def counters(r):
    return {k: r.counter("collapse", k) for k in ["ops", "no_target"] + OUTCOMES}


# ---- inherit: the storm faults small pages, MADV_COLLAPSE makes huge ones ----
mode = thp_enabled()
r = run(BASE + ["--thp", "inherit"])
c = clean(r, "inherit")
n = counters(r)
check(n["ops"] > 0 and n["ops"] == sum(n[k] for k in OUTCOMES),
      f"inherit: every call has one outcome {n}")
lat = c["latency"]["call"]
check(lat["count"] == n["ops"] and 0 < lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"],
      f"inherit: call latency percentiles {lat}")
if mode in ("madvise", "never"):
    f = r.stressor("fault")
    check(n["collapsed"] > 0, f"inherit: collapses succeeded {n}")
    check(r.counter("collapse", "thp_after") > 0, "inherit: collapsed chunks probed PMD-mapped after")
    check(r.counter("collapse", "raced") > 0,
          f"inherit: some collapses hit a round under way ({r.counter('collapse', 'raced')})")
    ok = c["latency"]["collapse"]
    check(ok["count"] == n["collapsed"] and ok["p50"] > 0, f"inherit: collapse latency {ok}")
    check(f["thp_coverage"]["thp"] > 0,
          f"inherit: the storm verified THP-mapped chunks it never faulted huge {f['thp_coverage']}")
    check(r.vmstat("thp_collapse_alloc", 0) >= n["collapsed"],
          f"inherit: vmstat thp_collapse_alloc {r.vmstat('thp_collapse_alloc')} >= "
          f"{n['collapsed']} collapses")
else:
    print(f"# THP enabled={mode} system-wide: the storm faults huge pages itself in inherit "
          "mode; the must-succeed checks do not apply")

# ---- --collapse-rate paces the calls (only calls count as ops) ----
r = run(BASE + ["--thp", "inherit", "--collapse-rate", "20"])
clean(r, "inherit, rate 20")
paced = r.stressor("collapse")["ops_per_s"]
check(0 < paced <= 22, f"rate 20: paced to {paced:.1f} calls/s")

# ---- nohuge: VM_NOHUGEPAGE everywhere, MADV_COLLAPSE must refuse ----
r = run(BASE + ["--thp", "nohuge"])
clean(r, "nohuge")
n = counters(r)
check(n["einval"] > 0 and n["collapsed"] == 0 and n["already"] == 0,
      f"nohuge: MADV_COLLAPSE respects VM_NOHUGEPAGE (EINVAL only) {n}")
check(r.stressor("fault")["thp_coverage"]["thp"] == 0,
      f"nohuge: no THP-mapped chunk {r.stressor('fault')['thp_coverage']}")
check(n["no_target"] > 0, "nohuge: EINVAL chunks are left alone for a while (no_target)")

# ---- madvise and toggle: the storm's own huge pages; clean whatever collapse finds ----
for m in ["madvise", "toggle"]:
    r = run(BASE + ["--thp", m])
    clean(r, m)
    n = counters(r)
    check(n["ops"] + n["no_target"] > 0, f"{m}: collapse looked for work {n}")

# ---- shared (shmem) arena and multi-chunk calls ----
r = run(BASE + ["--thp", "madvise", "--shared"])
clean(r, "shared")
r = run(BASE + ["--thp", "inherit", "--collapse-chunks", "4", "--collapse-target", "any"])
n = counters(r)
clean(r, "chunks=4 target=any")
check(n["ops"] > 0, f"chunks=4 target=any: calls made {n}")

# ---- the builtin scenario ----
r = run(["--config", "collapse", "--threads", "6", "--duration", "2s", "--size", "16M",
         "--progress", "off", "--quiet"])
clean(r, "--config collapse")
check(r.doc["arena"]["thp_mode"] == "inherit", "the collapse scenario runs thp=inherit")

# ---- skip path: THP disabled for the process (inherited through exec) ----
wrapper = ("import ctypes, os, sys\n"
           "assert ctypes.CDLL(None).prctl(41, 1, 0, 0, 0) == 0  # PR_SET_THP_DISABLE\n"
           "os.execv(sys.argv[1], sys.argv[1:])\n")
r = run(["-c", wrapper, PMDSTRESS] + BASE, binary=sys.executable)
c = r.stressor("collapse")
check(c is not None and c["status"] == "skipped" and "PR_SET_THP_DISABLE" in c.get("reason", ""),
      f"THP disabled: collapse skipped with the reason ({c and c.get('reason')!r})")
# collapse named by --stressors and unable to run: exit 125 (README, Exit status)
check(r.rc == 125 and r.stressor("fault")["status"] == "ran",
      f"THP disabled: the storm still runs, the run exits 125 for the named collapse (rc {r.rc})")
r = run(["-c", wrapper, PMDSTRESS] + BASE + ["--stressors", "collapse"], binary=sys.executable)
check(r.rc == 125, f"THP disabled, collapse alone: nothing could run, exit 125 (got {r.rc})")

# ---- bad input ----
# (the engine names the option without its stressor prefix: match the value)
for args, needle in [(["--collapse-target", "huge"], "invalid value 'huge' (expected one of pte|any)"),
                     (["--collapse-chunks", "0"], "invalid value '0' (out of range"),
                     (["--collapse-rate", "fast"], "invalid value 'fast'")]:
    r = run(BASE + args, json_report=False)
    check(r.rc == 2 and needle in r.err, f"{' '.join(args)}: exit 2 naming it ({r.err.strip()!r})")
done()
