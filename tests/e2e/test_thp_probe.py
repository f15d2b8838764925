#!/usr/bin/env python3
# labels: e2e
# timeout: 120
"""The THP probe: every method (PAGEMAP_SCAN, pagemap + kpageflags, smaps per
VMA) must agree with the mode: PMD-mapped chunks in madvise mode, PTE-mapped
in nohuge mode. A method this kernel or user cannot use is refused (125)."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, is_root, run, thp_available  # noqa: E402

# plain rounds only: a seed round ends PTE-mapped on purpose (stress/fault_seed.h)
base = ["--stressors", "fault", "--threads", "4", "--fault-seed", "0", "--duration", "2s",
        "--size", "16M", "--progress", "off", "--quiet"]
methods = ["auto", "scan", "smaps"] + (["kpageflags"] if is_root() else [])
for m in methods:
    r = run(base + ["--thp-probe", m, "--thp", "nohuge"])
    if r.rc == 125 and m == "scan":
        check("PAGEMAP_SCAN is not supported" in r.err, "scan refused with a reason on an old kernel")
        continue
    cov = r.stressor("fault")["thp_coverage"]
    check(r.rc == 0 and cov["pte"] > 0 and cov["thp"] == 0 and cov["mixed"] == 0,
          f"{m}/nohuge: PTE-mapped chunks only {cov} ({r.doc['arena']['thp_probe']})")
    if thp_available():
        r = run(base + ["--thp-probe", m, "--thp", "madvise"])
        cov = r.stressor("fault")["thp_coverage"]
        total = sum(cov.values())
        check(r.rc == 0 and cov["thp"] >= 0.9 * total,
              f"{m}/madvise: PMD-mapped chunks {cov} ({r.doc['arena']['thp_probe']})")
if not is_root():
    r = run(base + ["--thp-probe", "kpageflags"], json_report=False)
    check(r.rc == 125 and "/proc/kpageflags is not readable" in r.err,
          "kpageflags without root: refused, exit 125")
r = run(base + ["--thp-probe", "sideways"], json_report=False)
check(r.rc == 2 and "thp-probe: invalid value 'sideways'" in r.err, "a bad method: exit 2")
done()
