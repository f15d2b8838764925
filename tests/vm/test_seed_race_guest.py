#!/usr/bin/env python3
# labels: vm e2e
# timeout: 600
"""The seed race in emulated guests (tools/vm/pmd-vm, qemu TCG, 2 nodes x 1
vCPU), as root there, on each kernel of PMD_SEED_GUEST_KERNELS (default
"6.1 6.12": Debian 12's; a path to a vmlinux works too).

- The default command, `pmdstress --threads 64` for 30 s, provokes the
  seed race with what the kernel allows: on 6.12 the prctl way (faults
  under per-VMA locks), on 6.1 the memcg way (faults hold mmap_lock, which
  the prctl waits for) with the run in a cgroup of its own, and says so.
  30 s, not the default 10: under TCG on 6.1 every partner's mmap_lock
  holds up the storm, and a 10 s run had 0-3 seed races.
- The storm alone, traced: the kernel's page events of the racers
  (kmem:mm_page_alloc/mm_page_free) against kprobe events on the paths'
  own functions (do_huge_pmd_anonymous_page, __pte_alloc), in the same
  rounds: the reading of the page events is checked against the functions
  entered; and the inference from fault counts, which runs where no trace
  can, against both: what it names, the trace saw (its precision), and
  how much of the trace it sees (its recall, printed).
Skips (77) with pmd-vm's reason where no guest can run here."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, check, done, skip  # noqa: E402
from pmdvm import guest  # noqa: E402

KERNELS = os.environ.get("PMD_SEED_GUEST_KERNELS", "6.1 6.12").split()
BINARY = os.path.abspath(PMDSTRESS)
if not os.access(BINARY, os.X_OK):
    skip(f"no pmdstress binary at {BINARY}")

# both runs in one boot; each leaves its report in /out
SCRIPT = f"""
{BINARY} --threads 64 --duration 30s --progress off --json /out/default.json > /out/default.txt
echo default=$? > /out/rc
{BINARY} --stressors fault --threads 4 --duration 10s --progress off --json /out/storm.json \\
    > /out/storm.txt
echo storm=$? >> /out/rc
"""

ran = 0
for k in KERNELS:
    g = guest(["sh", "-c", SCRIPT], kernel=k, name="seed-guest", nodes=2, cpus_per_node=1,
              timeout=300, carry=[BINARY])
    if g.cannot_run:
        print(f"# {k}: guest cannot run here: {g.reason}")
        continue
    ran += 1
    rc = dict(line.split("=") for line in (g.file("rc") or "").split())
    if not check(rc.get("default") == "0" and rc.get("storm") == "0",
                 f"{k}: both runs clean ({rc})\n{g.show()}"):
        continue
    d = json.loads(g.file("default.json"))
    race, release = d["race"], d["system"]["kernel"]["release"]
    major, minor = (int(x) for x in release.split(".")[:2])
    want = "prctl" if (major, minor) >= (6, 4) else "memcg"
    print(f"# {k} ({release}) default: {race['rounds']} rounds, {race['seed_race']} seed races "
          f"({race['evidence']['seed_race']}), mechanisms {race['mechanisms']}")
    check(race["mechanisms"] == [want],
          f"{k}: the default uses the {want} way here ({race['mechanisms']} "
          f"{race['mechanisms_why']})")
    check(race["seed_race"] > 0 and race["evidence"]["seed_race"] == "traced",
          f"{k}: the default command provokes the seed race, traced ({race['seed_race']} of "
          f"{race['rounds']} rounds)")
    if want == "memcg":
        check(d["memcg"] and d["memcg"]["seed_windows"] > 0,
              f"{k}: seed rounds opened memcg windows ({d['memcg']})")
    s = json.loads(g.file("storm.json"))["race"]
    t = s["evidence"]["traced"]
    kp = t.get("kprobes")
    print(f"# {k} storm: {t['rounds']} rounds traced, seed {t['seed_race']}; kprobes {kp}; "
          f"inference: agreed {t['agree']}, inferred only {t['inferred_only']}, traced only "
          f"{t['traced_only']}")
    check(t["seed_race"] > 0, f"{k}: the storm alone: {t['seed_race']} traced seed races")
    if check(kp is not None, f"{k}: kprobe events on the paths' functions were set"):
        # 3 in 4: a 6.1 TCG guest on a loaded host (load 20) traced 8 seed rounds, kprobes saw 6
        check(kp["agree"] >= 0.75 * max(kp["seed_race"], t["seed_race"]) > 0,
              f"{k}: page events and kprobes agree on the seed rounds ({kp})")
    # 0.7 here, 0.8 on the host (test_seed_race, ~99% there): under TCG the timing half of
    # the inference (a fault as slow as clearing a huge page) misreads a host's stalls; a
    # CI run on a loaded host saw 52 of 69 (0.75) in the 6.12 guest
    named = t["agree"] + t["inferred_only"]
    check(named > 0 and t["agree"] >= 0.7 * named,
          f"{k}: what the inference names, the trace saw ({t['agree']} of {named}); it saw "
          f"{t['agree']} of the {t['agree'] + t['traced_only']} traced seed rounds")
if not ran:
    skip("no guest could run here")
done()
