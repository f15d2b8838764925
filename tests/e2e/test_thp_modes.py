#!/usr/bin/env python3
# labels: e2e
# timeout: 120
"""Each --thp mode, private and shared: what the chunks end up as must match the mode."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, is_root, run, skip_part, thp_available  # noqa: E402

# one group of all six workers, so that one group goes round all 8 chunks; rounds
# with a reader write every page too (the race scenario writes 32 there)
base = ["--stressors", "fault", "--threads", "6", "--fault-group", "6", "--duration", "2s",
        "--size", "16M", "--progress", "off", "--quiet", "--fault-reader-pages", "512"]

r = run(base + ["--thp", "nohuge"])
f = r.stressor("fault")
check(r.rc == 0, f"nohuge runs clean\n{r.show()}")
check(f["thp_coverage"]["thp"] == 0 and f["thp_coverage"]["pte"] > 0,
      f"nohuge: only PTE-mapped chunks {f['thp_coverage']}")
# a 16M arena has 8 chunks; each is fresh (pmd_none, no reset needed) the first time
fresh = min(8, r.counter("fault", "rounds"))
check(r.counter("fault", "zap_dontneed") == 0 and
      r.counter("fault", "zap_remap") == r.counter("fault", "rounds") - fresh,
      "nohuge: every used PTE-mapped chunk is reset by munmap+MAP_FIXED (to free its page table)")
check(f["faults"] >= 500 * r.counter("fault", "rounds"),
      f"nohuge: about 512 faults per round ({f['faults']} for {r.counter('fault', 'rounds')} rounds)")

if thp_available():
    r = run(base + ["--thp", "madvise"])
    f = r.stressor("fault")
    check(r.rc == 0, "madvise runs clean")
    check(f["thp_coverage"]["thp"] > 0, f"madvise: THP-mapped chunks {f['thp_coverage']}")
    check(r.counter("fault", "zap_dontneed") > 0, "madvise: PMD-mapped chunks reset by MADV_DONTNEED")

    r = run(base + ["--thp", "toggle"])
    f = r.stressor("fault")
    check(r.rc == 0, "toggle runs clean")
    check(f["thp_coverage"]["thp"] > 0 and f["thp_coverage"]["pte"] > 0,
          f"toggle: both THP and PTE rounds {f['thp_coverage']}")

r = run(base + ["--thp", "inherit"])
check(r.rc == 0 and r.stressor("fault")["ops"] > 0, "inherit runs clean")

r = run(base + ["--shared"])
f = r.stressor("fault")
check(r.rc == 0, f"shared runs clean\n{r.show()}")
check(r.doc["arena"]["shared"] is True, "the report says the arena was shared")
shmem_now = open("/sys/kernel/mm/transparent_hugepage/shmem_enabled").read() \
    if os.path.exists("/sys/kernel/mm/transparent_hugepage/shmem_enabled") else "[never]"
if "[never]" in shmem_now or "[deny]" in shmem_now:
    check(f["thp_coverage"]["pte"] > 0 and f["thp_coverage"]["thp"] == 0,
          f"shared (shmem) chunks under shmem_enabled=never are PTE-mapped: {f['thp_coverage']}")
check(r.counter("fault", "zap_dontneed") == 0 and
      r.counter("fault", "zap_remap") == r.counter("fault", "rounds") - min(8, r.counter("fault", "rounds")),
      "shared chunks are reset by replacing the mapping")

# a shared arena is shmem: it gets huge PMDs only as shmem_enabled allows (advise:
# MADV_HUGEPAGE), and they show in smaps as ShmemPmdMapped, not AnonHugePages
SHMEM = "/sys/kernel/mm/transparent_hugepage/shmem_enabled"
if thp_available() and is_root() and os.access(SHMEM, os.W_OK):
    with open(SHMEM) as fh:
        was = fh.read().split("[")[1].split("]")[0]
    try:
        with open(SHMEM, "w") as fh:
            fh.write("advise")
        r = run([a for a in base if a != "--quiet"] + ["--shared", "--thp", "madvise"])
    finally:
        with open(SHMEM, "w") as fh:
            fh.write(was)
    f = r.stressor("fault")
    check(r.rc == 0 and f["thp_coverage"]["thp"] > 0,
          f"shared, shmem_enabled=advise: PMD-mapped shmem chunks {f['thp_coverage']}")
    check(r.doc["arena"]["thp_share_end"] > 0 and r.doc["arena"]["anon_huge_end"] > 0,
          f"shared: the THP share counts ShmemPmdMapped ({r.doc['arena']})")
    check("THP shmem_enabled=advise" in r.out.splitlines()[1],
          f"the header names shmem_enabled for a shared arena: {r.out.splitlines()[1][:120]}")
else:
    skip_part("shared arena with shmem THP: needs THP, root and a writable shmem_enabled")

r = run(base + ["--verify", "off"])
check(r.rc == 0 and r.stressor("fault")["latency"]["verify"]["count"] == 0,
      "--verify off: no verification")

r = run(base + ["--fault-latency", "page", "--fault-order", "random"])
lat = r.stressor("fault")["latency"]["page"]
check(r.rc == 0 and lat["count"] >= 511 * r.counter("fault", "rounds"),
      f"--fault-latency page times every store ({lat['count']})")

r = run(["--threads", "130", "--duration", "2s", "--size", "16M", "--fault-group", "64",
         "--progress", "off", "--quiet"])
check(r.rc == 0 and r.counter("fault", "rounds") > 0, f"130 workers form 3 groups and run\n{r.show()}")
done()
