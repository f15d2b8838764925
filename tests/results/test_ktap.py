#!/usr/bin/env python3
# labels: e2e results
# timeout: 120
"""--ktap: the results as the kselftest runner and KernelCI read them, checked
by a real TAP consumer (Perl's prove): a clean run passes, an injected
corruption fails exactly the "no corruption" check, a skipped stressor is
"ok ... # SKIP reason", and '--ktap -' keeps stdout pure TAP."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, check, done, run, skip  # noqa: E402

PROVE = shutil.which("prove")
if not PROVE:
    skip("prove (Perl's TAP harness, part of Debian's perl) is not installed")

tmp = tempfile.mkdtemp(prefix="pmdktap-")
base = ["--threads", "4", "--duration", "1s", "--size", "16M", "--progress", "off",
        "--stressors", "fault"]


def prove(path):
    """Run prove on a KTAP file; (exit status, its output)."""
    p = subprocess.run([PROVE, "-v", "-e", "cat", path], capture_output=True, text=True,
                       timeout=60)
    return p.returncode, p.stdout + p.stderr


def parse(text):
    """Plan, result lines (ok, number, name, directive) and the Totals line of a KTAP text."""
    lines = text.splitlines()
    plan = next((int(m.group(1)) for m in (re.match(r"^1\.\.(\d+)$", ln) for ln in lines) if m),
                None)
    results = []
    for ln in lines:
        m = re.match(r"^(ok|not ok) (\d+) (\S+)(?: # (\S+) ?(.*))?$", ln)
        if m:
            results.append((m.group(1) == "ok", int(m.group(2)), m.group(3), m.group(4),
                            m.group(5)))
    totals = next((ln for ln in lines if ln.startswith("# Totals:")), None)
    return lines, plan, results, totals


def well_formed(text, what):
    lines, plan, results, totals = parse(text)
    check(lines and lines[0] == "TAP version 13", f"{what}: first line is the kselftest header")
    check(plan == len(results), f"{what}: plan 1..{plan} matches {len(results)} results")
    check([r[1] for r in results] == list(range(1, len(results) + 1)),
          f"{what}: results numbered 1..N in order")
    npass = sum(1 for r in results if r[0] and r[3] != "SKIP")
    nfail = sum(1 for r in results if not r[0])
    nskip = sum(1 for r in results if r[3] == "SKIP")
    want = f"# Totals: pass:{npass} fail:{nfail} xfail:0 xpass:0 skip:{nskip} error:0"
    check(totals == want, f"{what}: totals line '{totals}' == '{want}'")
    bad = [ln for ln in lines if ln and not re.match(r"^(TAP version 13|1\.\.\d+|ok |not ok |# )",
                                                        ln)]
    check(not bad, f"{what}: only KTAP lines (stray: {bad[:3]})")
    return {r[2]: r for r in results}


# a clean run: every check passes and prove agrees
tap = os.path.join(tmp, "clean.tap")
r = run(base + ["--quiet", "--ktap", tap])
check(r.rc == 0, f"clean run exits 0\n{r.show()}")
text = open(tap).read() if os.path.exists(tap) else ""
res = well_formed(text, "clean")
for name in ["stressor_fault", "no_corruption", "no_fault_on_live_chunk", "no_misplaced_page",
             "no_kernel_splat", "no_hang", "no_internal_error"]:
    check(name in res and res[name][0] and res[name][3] is None, f"clean: '{name}' is ok")
rc, out = prove(tap)
check(rc == 0 and "Result: PASS" in out, f"prove passes the clean run's KTAP\n{out}")
check(f"seed {r.doc['seed']}" in text, "the KTAP diagnostics name the seed to replay")

# an injected corruption fails exactly "no_corruption", and says where
tap = os.path.join(tmp, "corrupt.tap")
r = run(base + ["--quiet", "--seed", "7", "--inject", "lost_write:3:17:2:1", "--ktap", tap])
check(r.rc == 1, f"injected corruption exits 1\n{r.show()}")
text = open(tap).read() if os.path.exists(tap) else ""
res = well_formed(text, "corrupt")
check("no_corruption" in res and not res["no_corruption"][0], "corrupt: 'no_corruption' is not ok")
check(all(v[0] for k, v in res.items() if k != "no_corruption"),
      "corrupt: every other check still passes")
check(re.search(r"^# LOST_WRITE at chunk 3 page 17 slot 2 ", text, re.M),
      f"corrupt: a diagnostic names class, chunk, page and slot\n{text}")
rc, out = prove(tap)
check(rc != 0 and "Failed test:  2" in out and "Result: FAIL" in out,
      f"prove fails the corrupted run on test 2 (no_corruption)\n{out}")

# '--ktap -': stdout is pure TAP, the text report and the verdict go to stderr
p = subprocess.run([PMDSTRESS] + base + ["--ktap", "-"], capture_output=True, text=True,
                   timeout=60)
check(p.returncode == 0, f"--ktap - exits 0\n{p.stderr[-2000:]}")
well_formed(p.stdout, "stdout")
check("ran " in p.stderr and "stressor" in p.stderr,
      "--ktap -: the text report went to stderr")
path = os.path.join(tmp, "stdout.tap")
with open(path, "w") as f:
    f.write(p.stdout)
rc, out = prove(path)
check(rc == 0, f"prove passes what --ktap - printed\n{out}")

p = subprocess.run([PMDSTRESS] + base + ["--ktap", "-", "--json", "-"], capture_output=True,
                   text=True, timeout=60)
check(p.returncode == 2 and "both want stdout" in p.stderr and not p.stdout,
      f"--ktap - with --json - is a usage error (exit 2, one line): {p.stderr.strip()}")

# a stressor that cannot run here is 'ok N name # SKIP reason', never a pass
lst = subprocess.run([PMDSTRESS, "list"], capture_output=True, text=True).stdout
root_only = [m.group(1) for m in re.finditer(r"^\s+(\w+)\s.*\[root\]", lst, re.M)]
setpriv = shutil.which("setpriv")
if root_only and setpriv and os.geteuid() == 0:
    os.chmod(tmp, 0o777)
    tap = os.path.join(tmp, "skip.tap")
    p = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", PMDSTRESS]
                       + base[:-1] + [f"fault,{root_only[0]}", "--quiet", "--ktap", tap],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, f"as nobody, fault runs and {root_only[0]} is skipped\n{p.stderr}")
    text = open(tap).read() if os.path.exists(tap) else ""
    res = well_formed(text, "skip")
    s = res.get(f"stressor_{root_only[0]}")
    check(s and s[0] and s[3] == "SKIP" and "root" in s[4],
          f"skipped stressor: 'ok N stressor_{root_only[0]} # SKIP <reason>' ({s})")
    check(re.search(r"^# kernel log not watched: /dev/kmsg .*; only the taint mask was$", text,
                    re.M) and res["no_kernel_splat"][0],
          "as nobody: no_kernel_splat says the kernel log was not watched, only the taint mask")
    rc, out = prove(tap)
    check(rc == 0 and "Result: PASS" in out and "# SKIP" in out,
          f"prove counts the skip, not a failure\n{out}")
else:
    print(f"# SKIP skip-path check: needs a [root] stressor ({root_only}), setpriv and root")

shutil.rmtree(tmp, ignore_errors=True)
done()
