#!/usr/bin/env python3
# labels: e2e
# timeout: 300
"""The ksm partner: ksmd merging the arena under the fault storm.

As root with ksmd started for the run (--ksm-start on): it runs clean, ksmd
merged pages of the process (ksm_stat's ksm_merging_pages), held chunks were
verified whole, shared zero pages were found and a store to one left its
twin zero (cow_checks); ksmd's run and pages_to_scan are back to what they
were; during the run pages_to_scan is --ksm-scan's where the run started
ksmd and left as it was where ksmd already ran. --ksm-start off where ksmd
does not run: skipped with the reason, exit 125 when named; the default
race then leaves it out and exits 0. As nobody, where ksmd does not run:
skipped, only root may start it. Skips (77) without THP or KSM."""
import os
import shutil
import subprocess
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import (NOBODY, PMDSTRESS, check, done, is_root, reachable, run, skip,  # noqa: E402
                     thp_available)

KSM = "/sys/kernel/mm/ksm/"
if not thp_available():
    skip("no transparent huge pages here")
if not os.path.exists(KSM + "run"):
    skip("kernel without KSM")


def knobs():
    return {k: open(KSM + k).read().strip() for k in ("run", "pages_to_scan")}


BASE = ["--stressors", "fault,ksm,split", "--threads", "5", "--duration", "4s", "--size", "32M",
        "--progress", "off", "--quiet", "--ksm-rate", "0"]
before = knobs()
if is_root():
    r = run(BASE + ["--ksm-start", "on"])
    check(r.rc == 0, "fault + ksm + split, ksmd started: exit 0" +
          ("" if r.rc == 0 else f"\n{r.show()}"))
    s = r.stressor("ksm")
    check(s is not None and s["status"] == "ran", f"ksm ran: {s and s.get('reason')}")
    n = {k: r.counter("ksm", k) for k in ("ops", "pages", "shared_pages", "cow_checks",
                                            "merging_pages", "other_errors")}
    check(n["ops"] > 100 and n["pages"] == 512 * n["ops"],
          f"held chunks made mergeable and verified whole {n}")
    check(n["merging_pages"] > 0, f"ksmd merged pages of the run (ksm_stat) {n}")
    check(n["shared_pages"] > 0 and n["cow_checks"] > 0,
          f"shared zero pages found, a store to one left its twin zero {n}")
    check(n["other_errors"] == 0, f"no error {n}")
    check(knobs() == before, f"ksmd's run and pages_to_scan restored: {knobs()} (before {before})")

    def knobs_during(extra):
        """ksmd's knobs 2 s into a run, and the run's exit status."""
        p = subprocess.Popen([PMDSTRESS] + BASE + extra, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        time.sleep(2)
        during = knobs()
        _, err = p.communicate(timeout=120)
        return during, p.returncode, err.strip()[-300:]

    # the pace: set where the run starts ksmd, someone else's where ksmd already runs
    if before["run"] != "1":
        during, rc, err = knobs_during(["--ksm-start", "on", "--ksm-scan", "777"])
        check(rc == 0 and during == {"run": "1", "pages_to_scan": "777"},
              f"ksmd started for the run at --ksm-scan's pace: {during}, exit {rc} {err}")
    try:
        with open(KSM + "pages_to_scan", "w") as f:
            f.write("37")
        with open(KSM + "run", "w") as f:
            f.write("1")
        during, rc, err = knobs_during(["--ksm-scan", "777"])
        check(rc == 0 and during["pages_to_scan"] == "37",
              f"ksmd already running: its pages_to_scan left as it was (37): {during}, "
              f"exit {rc} {err}")
    finally:
        with open(KSM + "run", "w") as f:
            f.write(before["run"])
        with open(KSM + "pages_to_scan", "w") as f:
            f.write(before["pages_to_scan"])
else:
    skip("not root: ksmd cannot be started for the run")

if before["run"] != "1":
    r = run(BASE + ["--ksm-start", "off"])
    s = r.stressor("ksm")
    check(r.rc == 125 and s and s["status"] == "skipped" and
          "ksmd is not running and --ksm-start is off" in (s.get("reason") or ""),
          f"--ksm-start off, ksmd not running: skipped with the reason, exit 125 "
          f"({r.rc}: {s and s.get('reason')})")
    r = run(["--threads", "24", "--duration", "1s", "--size", "32M", "--progress", "off",
             "--quiet"])
    s = r.stressor("ksm")
    check(r.rc == 0 and s and s["status"] == "skipped",
          f"the default race leaves ksm out where ksmd does not run, exit 0 ({r.rc})")
    if is_root() and shutil.which("setpriv"):
        p = subprocess.run(NOBODY + [reachable(PMDSTRESS)] + BASE + ["--ksm-start", "on"],
                           capture_output=True,
                           text=True, timeout=120)
        check(p.returncode == 125 and "only root may start it" in p.stderr,
              f"as nobody: skipped, only root may start ksmd, exit 125 "
              f"({p.returncode}: {p.stderr.strip()[-200:]})")
done()
