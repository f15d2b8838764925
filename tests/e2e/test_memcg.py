#!/usr/bin/env python3
# labels: e2e
# timeout: 180
"""--memcg-headroom and --fault-pages, against the real kernel's memory cgroup.

The run moves into a cgroup of its own (v2: next to ours; v1: under ours),
whose limit the storm sets to usage + headroom at every round: with a
headroom under 2 MiB minus the per-CPU charge batches, no huge page can be
charged, so every write fault falls back to 4 KiB pages
(thp_fault_fallback_charge), while readers still map the huge zero page.
--fault-pages W keeps each round to W pages per chunk, and the verifier
expects the rest of the chunk to read zero. Checked: the counts add up, the
run is clean, every chunk ended PTE-mapped, the cgroup exists during the run
and is gone after it, an earlier run's leftover cgroup is removed, a round
too big for the headroom is a usage error, and without root the run says it
cannot run here (exit 125)."""
import ctypes
import mmap
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import (NOBODY, PMDSTRESS, check, done, is_root, reachable, run, skip,  # noqa: E402
                     skip_part, spawn, storm_of, thp_available)

if not thp_available():
    skip("transparent hugepages are disabled here")
if not is_root():
    skip("--memcg-headroom needs root")

# one group of 4 workers, plain rounds only: the counts below are a plain round's
base = ["--stressors", "fault", "--threads", "4", "--fault-group", "4", "--fault-seed", "0",
        "--size", "16M", "--progress", "off", "--quiet", "on", "--fault-chunks", "4"]


def reads_map_zero_page():
    """This kernel's answer, found apart from pmdstress: read 64 fresh pages and
    ask smaps for the mapping's Rss (the zero page is never counted in it). A
    private mapping, as pmdstress's probe and arena: Python's default for an
    anonymous mmap is MAP_SHARED, whose read faults allocate on any kernel."""
    m = mmap.mmap(-1, 64 * 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    m.madvise(mmap.MADV_NOHUGEPAGE)
    for i in range(64):
        m[i * 4096]
    start = ctypes.addressof(ctypes.c_char.from_buffer(m))
    rss, inside = None, False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and ":" not in head:
                if inside:
                    break
                inside = int(head.split("-")[0], 16) == start
            elif inside and line.startswith("Rss:"):
                rss = int(line.split()[1]) * 1024
                break
    return rss is not None and rss < 32 * 4096


# --fault-pages alone: W stores per worker and chunk, the rest of the chunk reads zero;
# where read faults allocate (no zero page), the verifier leaves absent pages unread
zero_page = reads_map_zero_page()
print(f"# read faults here {'map the zero page' if zero_page else 'allocate pages (no zero page)'}")
r = run(base + ["--fault-pages", "5", "--duration", "1s", "--thp", "nohuge"])
check(r.doc and r.doc["system"].get("zero_page_reads") is zero_page,
      f"the report says whether read faults map the zero page: "
      f"{r.doc and r.doc['system'].get('zero_page_reads')}, measured {zero_page}")
rounds, ops = r.counter("fault", "rounds"), r.counter("fault", "ops")
check(r.rc == 0 and r.doc and r.doc["verdict"]["status"] == "clean",
      f"--fault-pages 5: clean ({r.doc and r.doc['verdict']})") or print(r.show())
check(rounds and ops == rounds * 4 * 4 * 5,
      f"--fault-pages 5: {ops} stores = {rounds} rounds x 4 workers x 4 chunks x 5 pages")
rss = ((r.doc or {}).get("arena") or {}).get("rss_end", -1)
check(0 < rss <= 8 * 5 * 4096,
      f"--fault-pages 5, 4 KiB pages: the 8 chunks' Rss at the end is {rss} B, at most 5 "
      f"pages each: the window is all the workers touch")

# a stamp where the window does not reach is caught: planted in slot 3 of page 300
# of chunk 0 after its zap; the window (5 pages) rarely covers page 300, and where
# it does the slot's worker stamp is expected instead: either way it is reported
r = run(base + ["--fault-pages", "5", "--duration", "1s", "--inject",
                "nonzero_after_zap:0:300:3"])
ev = [e for e in r.events() if e.get("kind") == "corruption"]
check(r.rc == 1 and ev and ev[0].get("chunk") == 0 and ev[0].get("page") == 300,
      f"--fault-pages 5: old data outside the window is reported at chunk 0 page 300 "
      f"(exit {r.rc}, {[(e.get('class'), e.get('chunk'), e.get('page')) for e in ev[:2]]})") \
    or print(r.show())

# the memory cgroup mode, where this machine has a memory cgroup hierarchy
mc = base + ["--fault-pages", "8", "--fault-readers", "1", "--memcg-headroom", "768K"]
probe = run(mc + ["--duration", "100ms"], json_report=False)
no_memcg = None
if probe.rc == 125 and "no memory cgroup hierarchy" in probe.err:
    no_memcg = probe.err.strip().splitlines()[-1]
    skip_part(f"memory cgroup mode: {no_memcg}")


def memcg_mode():
    p = spawn(mc + ["--duration", "3s", "--json", "/tmp/pmdtest-memcg-%d.json" % os.getpid()])
    storm = storm_of(p.pid)  # the process with the arena, pmdstress's child pmd/storm
    seen = ""
    for _ in range(40):
        time.sleep(0.1)
        try:
            with open(f"/proc/{storm}/cgroup") as f:
                seen = f.read()
        except OSError:
            break
        if f"pmdstress-{storm}" in seen:
            break
    out, err = p.communicate(timeout=60)
    check(f"pmdstress-{storm}" in seen,
          f"during the run the storm process is in its own cgroup pmdstress-{storm} "
          f"({[l for l in seen.splitlines() if 'pmdstress-' in l] or seen.strip() or 'nothing read'})")
    if os.path.exists("/tmp/pmdtest-memcg-%d.json" % os.getpid()):
        os.unlink("/tmp/pmdtest-memcg-%d.json" % os.getpid())
    else:
        check(False, f"the run wrote its report (exit {p.returncode}: {err.strip()[-300:]})")

    # a leftover of a killed run (its pid is gone) is removed by the next run
    r = run(mc + ["--duration", "1s"])
    m = (r.doc or {}).get("memcg") or {}
    home = m.get("home", "")
    parent = home if m.get("version") == 1 or home in ("/sys/fs/cgroup", "") else os.path.dirname(home)
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = os.path.join(parent, f"pmdstress-{dead.pid}")
    try:
        os.mkdir(stale)
    except OSError as e:
        stale = None
        skip_part(f"stale cgroup check: cannot make one in {parent}: {e}")
    r = run(mc + ["--duration", "3s"])
    m = (r.doc or {}).get("memcg") or {}
    rounds = r.counter("fault", "rounds")
    if not check(r.rc == 0 and r.doc and r.doc["verdict"]["status"] == "clean",
                 f"--memcg-headroom 768K: clean ({r.doc and r.doc['verdict']})"):
        print(r.show())
        return
    check(rounds and m.get("rearms") == rounds and m.get("rearm_errors") == 0,
          f"the limit was set once per round: {m.get('rearms')} for {rounds} rounds, "
          f"{m.get('rearm_errors')} failed")
    fb = m.get("thp_fault_fallback_charge")
    if fb is None:
        skip_part("this kernel has no thp_fault_fallback_charge counter")
    else:
        check(fb > 0, f"THP charges failed: thp_fault_fallback_charge {fb}")
    cov = (r.stressor("fault") or {}).get("thp_coverage") or {}
    check(cov.get("thp") == 0 and cov.get("pte", 0) > 0,
          f"no write fault got a huge page: chunks verified {cov}")
    check(r.counter("fault", "reads") == rounds * 4,
          f"the reader loaded every chunk first: {r.counter('fault', 'reads')} reads")
    check(m.get("usage_max", 0) > 0 and r.counter("fault", "ops") == rounds * 4 * 4 * 8,
          f"usage seen {m.get('usage_max')} B, {r.counter('fault', 'ops')} stores of 8 pages")
    left = [d for d in os.listdir(parent) if d.startswith("pmdstress-")] if parent else ["?"]
    check(not left, f"no pmdstress cgroup is left in {parent}: {left}")
    if stale:
        check(not os.path.exists(stale), f"the stale {stale} was removed")


if not no_memcg:
    memcg_mode()

# a round that cannot fit under the limit is refused: its 4 KiB charges would OOM-kill
# (the fault stressor's setup says so, after the run entered its cgroup)
if not no_memcg:
    r = run(base + ["--memcg-headroom", "768K", "--duration", "1s"], json_report=False)
    check(r.rc == 2 and "--memcg-headroom 786432" in r.err and "--fault-pages" in r.err,
          f"512 pages x 4 chunks under 768K: exit 2 naming the value "
          f"({r.rc}: {r.err.strip()[:200]})")

# nothing would ever set the limit without the storm's rounds
r = run(["--stressors", "zap", "--threads", "1", "--memcg-headroom", "1M", "--duration", "1s"],
        json_report=False)
check(r.rc == 2 and "--memcg-headroom" in r.err and "fault stressor" in r.err,
      f"without the fault stressor: exit 2 ({r.rc}: {r.err.strip()[:160]})")

# without root: cannot make the cgroup, cannot run here (nor without a hierarchy)
q = subprocess.run(NOBODY + [reachable(PMDSTRESS)] + mc + ["--duration", "1s"],
                   capture_output=True, text=True, timeout=60, cwd="/")
why = "no memory cgroup hierarchy" if no_memcg else "needs root"
check(q.returncode == 125 and "--memcg-headroom" in q.stderr and why in q.stderr,
      f"as nobody: exit 125, {why} ({q.returncode}: {q.stderr.strip()[:200]})")
done()
