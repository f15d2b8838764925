#!/usr/bin/env python3
# labels: e2e results
# timeout: 240
"""The soak-job snippets of README.md and docs/results.md, run as written
(only the 2 h soak made small and short): a run to its end passes the job;
a clean run stopped by SIGTERM ends by the signal (143) and the snippets
call that clean so far, also when the SIGTERM comes twice (as GNU timeout
sends it: the child, then its group); a hang, a corruption found before the
SIGTERM, or a second, different signal (exit 6, no report) fails the job.
Both files' snippets must agree."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, SOURCE_DIR, check, done, fail  # noqa: E402

SMALL = "--size 32M --threads 2 --interval 200ms --progress off --quiet"


def soak_snippets(rel):
    with open(os.path.join(SOURCE_DIR, rel)) as f:
        text = f.read()
    return [b for b in re.findall(r"```sh\n(.*?)```", text, re.S)
            if "pmdstress --config soak --duration 2h" in b]


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def run(snippet, duration, extra="", term_after=None, then=None):
    """Run one snippet in a fresh directory with pmdstress on PATH; with
    term_after, SIGTERM pmdstress (not the job's shell) once it has written
    that many samples, and right after it the signal @then if given.
    (job status, its output, pmdstress's JSON report)."""
    tmp = tempfile.mkdtemp(prefix="pmdci-")
    os.mkdir(os.path.join(tmp, "bin"))
    os.symlink(os.path.abspath(PMDSTRESS), os.path.join(tmp, "bin", "pmdstress"))
    script = snippet.replace("--duration 2h", f"--duration {duration} {SMALL} {extra}")
    env = dict(os.environ, PATH=os.path.join(tmp, "bin") + ":" + os.environ["PATH"])
    p = subprocess.Popen(["sh", "-c", script], cwd=tmp, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    if term_after is not None:
        series = os.path.join(tmp, "soak.jsonl")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if os.path.exists(series) and open(series).read().count("\n") >= term_after:
                break
            time.sleep(0.05)
        pids = children(p.pid)
        if len(pids) != 1:
            fail(f"the job's shell should have one child, pmdstress: {pids}")
        os.kill(pids[0], signal.SIGTERM)
        if then:
            time.sleep(0.01)
            os.kill(pids[0], then)
    out, _ = p.communicate(timeout=90)
    path = os.path.join(tmp, "soak.json")
    doc = json.load(open(path)) if os.path.exists(path) else {}
    shutil.rmtree(tmp, ignore_errors=True)
    return p.returncode, out, doc


found = {rel: soak_snippets(rel) for rel in ("README.md", "docs/results.md")}
for rel, blocks in found.items():
    check(len(blocks) == 1, f"{rel} has one soak-job snippet ({len(blocks)})")

for rel, blocks in found.items():
    if not blocks:
        continue
    snippet = blocks[0]
    check("--jsonl soak.jsonl" in snippet, f"{rel}: the soak keeps its time series")

    rc, out, doc = run(snippet, "2s")
    check(rc == 0 and doc.get("verdict", {}).get("status") == "clean",
          f"{rel}: a clean soak to its end passes the job (rc {rc})\n{out[-800:]}")

    rc, out, doc = run(snippet, "60s", term_after=3)
    check(doc.get("stop_reason") == "Terminated" and doc["verdict"]["status"] == "clean",
          f"{rel}: SIGTERM stopped a clean run, its report written ({doc.get('stop_reason')})")
    check(rc == 0 and "stopped by SIGTERM, clean so far" in out,
          f"{rel}: pmdstress's 143 is 'clean so far' and the job passes (rc {rc})\n{out[-800:]}")

    rc, out, doc = run(snippet, "60s", term_after=3, then=signal.SIGTERM)
    check(doc.get("stop_reason") == "Terminated" and rc == 0 and
          "stopped by SIGTERM, clean so far" in out,
          f"{rel}: SIGTERM twice, as timeout(1) sends it: one stop, the report, clean so far "
          f"(rc {rc})\n{out[-800:]}")

    # a second signal ends the run without a report (exit 6): the job must fail; if the
    # stop was over before it came, the report is there and the job passes
    rc, out, doc = run(snippet, "60s", "--threads 64", term_after=3, then=signal.SIGINT)
    print(f"# {rel}: SIGTERM then SIGINT: {'report written' if doc else 'no report'}, rc {rc}")
    check((not doc and rc == 1) or (doc.get("stop_reason") == "Terminated" and rc == 0),
          f"{rel}: SIGTERM then SIGINT: no report fails the job, a report passes it "
          f"(rc {rc}, report {bool(doc)})\n{out[-800:]}")

    rc, out, doc = run(snippet, "60s", "--inject lost_write:0:17:0:1", term_after=3)
    check(doc.get("stop_reason") == "Terminated" and doc["verdict"]["exit_code"] == 1,
          f"{rel}: a corruption found before the SIGTERM keeps exit 1 "
          f"({doc.get('verdict')})")
    check(rc == 1, f"{rel}: and the job fails (rc {rc})\n{out[-800:]}")

    rc, out, doc = run(snippet, "60s", "--hang-timeout 2s --inject hang:0:0:0:3")
    check(doc.get("verdict", {}).get("exit_code") == 4 and rc == 1,
          f"{rel}: a hang (4) fails the job (rc {rc})\n{out[-800:]}")
done()
