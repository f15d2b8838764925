#!/usr/bin/env python3
# labels: e2e results
# timeout: 180
"""tools/kselftest/pmdstress.sh, the wrapper the docs give the kselftest
runner, run for real: the runner reads 0 as pass, 4 (KSFT_SKIP) as skip and
anything else as "not ok", so a clean run must exit 0, "cannot run here"
(pmdstress 125) 4, and a hang (pmdstress 4) must NOT come out as 4: it is
KSFT_FAIL (1), with pmdstress's own status on stderr. Its stdout is the
KTAP, read by prove. A SIGTERM to the wrapper (the runner's timeout) reaches
pmdstress, which writes its report and leaves no process behind."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import (NOBODY, PMDSTRESS, SOURCE_DIR, check, done, is_root, reachable,  # noqa: E402
                     skip_part)

# tools/testing/selftests/kselftest.h; runner.sh: skip_rc=4
KSFT_PASS, KSFT_FAIL, KSFT_SKIP = 0, 1, 4

WRAPPER = os.path.join(SOURCE_DIR, "tools", "kselftest", "pmdstress.sh")
PROVE = shutil.which("prove")
tmp = tempfile.mkdtemp(prefix="pmdksft-")
os.chmod(tmp, 0o777)  # the skip case may run as nobody
out_json = os.path.join(tmp, "pmdstress.json")
base = ["--threads", "4", "--size", "16M", "--progress", "off"]


def wrapper(args, prefix=(), timeout=90):
    """Run the wrapper as the runner does (executed, not sourced); as another
    user (@prefix), copies of it and of pmdstress that user can reach."""
    if os.path.exists(out_json):
        os.unlink(out_json)
    script, pmd = WRAPPER, os.path.abspath(PMDSTRESS)
    if prefix:
        script, pmd = reachable(WRAPPER), reachable(pmd)
    env = dict(os.environ, PMDSTRESS=pmd, PMDSTRESS_OUT=tmp)
    return subprocess.run(list(prefix) + [script] + base + list(args), capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=tmp if prefix else None)


def report():
    return json.load(open(out_json)) if os.path.exists(out_json) else {}


def prove(text, name):
    """(prove's exit status, its output) for a KTAP text; None without prove."""
    if not PROVE:
        return None, "prove not installed"
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    p = subprocess.run([PROVE, "-v", "-e", "cat", path], capture_output=True, text=True,
                       timeout=60)
    return p.returncode, p.stdout + p.stderr


check(os.access(WRAPPER, os.X_OK), f"{WRAPPER} is executable (the runner executes it)")

# clean: KSFT_PASS, stdout is the KTAP and prove passes it
p = wrapper(["--duration", "1s", "--stressors", "fault"])
check(p.returncode == KSFT_PASS, f"clean run: exit {KSFT_PASS} (got {p.returncode})\n{p.stderr}")
check(p.stdout.startswith("TAP version 13\n") and "# Totals: pass:" in p.stdout,
      f"clean run: stdout is the KTAP\n{p.stdout[:300]}")
check(report().get("verdict", {}).get("status") == "clean",
      "clean run: the JSON report is kept in PMDSTRESS_OUT")
rc, out = prove(p.stdout, "clean.tap")
if rc is not None:
    check(rc == 0 and "Result: PASS" in out, f"prove passes the clean run\n{out}")

# cannot run here (pmdstress 125): KSFT_SKIP. sysfs needs root: run it alone,
# as nobody when we are root.
if not is_root() or shutil.which("setpriv"):
    p = wrapper(["--duration", "1s", "--stressors", "sysfs"],
                prefix=NOBODY if is_root() else ())
    check(p.returncode == KSFT_SKIP,
          f"every stressor skipped: exit {KSFT_SKIP}, KSFT_SKIP (got {p.returncode})\n{p.stderr}")
    check("ok 1 stressor_sysfs # SKIP needs root" in p.stdout,
          f"skip: the KTAP says why\n{p.stdout[:400]}")
    check(report().get("verdict", {}).get("exit_code") == 125,
          f"skip: pmdstress itself said 125, cannot run here\n{p.stderr}")
else:
    skip_part("skip case: root without setpriv cannot make sysfs unrunnable")

# a hang (pmdstress 4, which the runner would read as KSFT_SKIP): KSFT_FAIL
t0 = time.monotonic()
p = wrapper(["--duration", "60s", "--stressors", "fault", "--hang-timeout", "2s",
             "--inject", "hang:0:0:0:3"])
check(p.returncode == KSFT_FAIL,
      f"hang: exit {KSFT_FAIL}, KSFT_FAIL, not pmdstress's 4 = KSFT_SKIP (got {p.returncode})"
      f"\n{p.stderr[-1500:]}")
check(time.monotonic() - t0 < 30, "hang: reported within seconds")
check("pmdstress.sh: pmdstress exit 4 (hang): FAIL" in p.stderr,
      f"hang: stderr names pmdstress's status\n{p.stderr[-500:]}")
check(report().get("verdict", {}).get("status") == "hang", "hang: the JSON report says hang")
check("\nnot ok " in p.stdout and "no_hang" in p.stdout.split("\nnot ok ")[1].split("\n")[0],
      f"hang: the KTAP fails no_hang\n{p.stdout}")
rc, out = prove(p.stdout, "hang.tap")
if rc is not None:
    check(rc != 0 and "Result: FAIL" in out, f"prove fails the hung run\n{out}")

# no binary: a missing dependency is a skip in kselftest, said on stderr
env = dict(os.environ, PMDSTRESS=os.path.join(tmp, "no-such-pmdstress"))
p = subprocess.run([WRAPPER], capture_output=True, text=True, timeout=30, env=env)
check(p.returncode == KSFT_SKIP and "no pmdstress binary" in p.stderr,
      f"no binary: exit {KSFT_SKIP} with a reason (got {p.returncode}: {p.stderr.strip()})")

# SIGTERM to the wrapper, as the runner's timeout sends it: pmdstress stops,
# writes its report, and no process of the session is left
series = os.path.join(tmp, "term.jsonl")
env = dict(os.environ, PMDSTRESS=os.path.abspath(PMDSTRESS), PMDSTRESS_OUT=tmp)
if os.path.exists(out_json):
    os.unlink(out_json)
w = subprocess.Popen([WRAPPER] + base + ["--duration", "60s", "--stressors", "fault",
                                         "--interval", "100ms", "--jsonl", series],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                     start_new_session=True)
deadline = time.monotonic() + 20
while time.monotonic() < deadline and not (os.path.exists(series) and os.path.getsize(series)):
    time.sleep(0.1)
t0 = time.monotonic()
w.send_signal(signal.SIGTERM)
out, err = w.communicate(timeout=60)
check(time.monotonic() - t0 < 20, "SIGTERM: the wrapper ends within seconds")
check(w.returncode == KSFT_FAIL and "pmdstress exit 143 (stopped by a signal" in err,
      f"SIGTERM: pmdstress got it and ended by it (143), the wrapper says so, exit "
      f"{KSFT_FAIL} (got {w.returncode}: {err[-400:]})")
check(report().get("stop_reason") == "Terminated",
      f"SIGTERM: pmdstress wrote its report, stopped by the signal "
      f"({report().get('stop_reason')})")
check(out.startswith("TAP version 13\n"), "SIGTERM: the KTAP still came out")
left = []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open(f"/proc/{pid}/stat") as f:
            if int(f.read().rsplit(")", 1)[1].split()[3]) == w.pid:
                left.append(pid)
    except (OSError, ValueError, IndexError):
        pass
check(not left, f"SIGTERM: no process of the wrapper's session is left ({left})")

shutil.rmtree(tmp, ignore_errors=True)
done()
