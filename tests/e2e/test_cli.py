#!/usr/bin/env python3
# labels: e2e
# timeout: 60
"""The command line as a user meets it: --help, list, bad input (exit 2 with
the offending value), did-you-mean, scenario files, --json - (stdout is the
report alone, the text goes to stderr)."""
import json
import os
import re
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, run  # noqa: E402

r = run(["--help"], json_report=False)
check(r.rc == 0, "--help exits 0")
for opt in ["--threads", "--duration", "--size", "--shared", "--thp", "--seed", "--verify",
            "--json", "--config", "--stressors", "--hang-timeout", "--fault-order",
            "--fault-chunks", "--<stressor>-workers"]:
    check(opt in r.out, f"--help lists {opt}")
check(re.search(r"default 10s", r.out), "--help shows defaults")
check(re.search(r"--hang-timeout .*a third of --duration.*\n.*default 0\]", r.out),
      "--hang-timeout defaults to 0: a third of the run")
check("--single-thread" in r.out and "--stack-size" in r.out, "--help lists --single-thread and --stack-size")
check("--inject" not in r.out, "test-only options stay hidden")
check("Exit: 0 clean, 1 corruption" in r.out, "--help explains exit codes")

r = run(["list"], json_report=False)
check(r.rc == 0 and "fault" in r.out and "race" in r.out, "list shows stressors and scenarios")
r = run(["version"], json_report=False)
check(r.rc == 0 and r.out.startswith("pmdstress "), "version")

def bad(args, needle):
    r = run(args, json_report=False)
    check(r.rc == 2, f"{' '.join(args)}: exit 2 (got {r.rc})")
    check(needle in r.err, f"{' '.join(args)}: stderr names it: {r.err.strip()!r}")
    check("Traceback" not in r.err and "Segmentation" not in r.err, "no crash")

bad(["--threds", "4"], "did you mean --threads?")
bad(["--threads", "-1"], "threads: invalid value '-1'")
bad(["--size", "5M"], "multiple of 2M")
bad(["--thp", "always"], "one of madvise|nohuge|toggle|inherit")
bad(["--duration", "ten"], "duration: invalid value 'ten'")
bad(["--duration", "1.5ns"], "duration: invalid value '1.5ns'")
bad(["--duration", "1.s"], "duration: invalid value '1.s'")
bad(["frobnicate"], "unknown command 'frobnicate'")
bad(["--config"], "--config needs a value")
bad(["--inject", "bogus"], "--inject: invalid value 'bogus'")

with tempfile.NamedTemporaryFile("w", suffix=".ini", delete=False) as f:
    f.write("[global]\nthreads = 4\n[fault]\norderr = forward\n")
bad(["--config", f.name], f"{f.name}:4: [fault] unknown key 'orderr' (did you mean 'order'?)")
with open(f.name, "wb") as g:
    g.write(bytes(range(256)) * 4)
r = run(["--config", f.name], json_report=False)
check(r.rc == 2 and f.name in r.err, f"binary garbage as a scenario: exit 2 naming the file ({r.err.strip()!r})")
with open(f.name, "w") as g:
    g.write("; a scenario of my own\n[global]\nduration = 1s\nthreads = 3\nsize = 8M\n[fault]\n")
r = run(["--config", f.name, "--threads", "2", "--quiet"])
check(r.rc == 0 and r.doc["threads"] == 2, "a scenario file runs; the command line overrides it")
check(r.doc["scenario"] == f.name, "the report names the scenario file")
os.unlink(f.name)

r = run(["--duration", "0.5s", "--threads", "2", "--size", "8M", "--quiet"])
check(r.rc == 0 and 0.45 < r.doc["duration_s"] < 2, f"--duration 0.5s runs half a second ({r.doc and r.doc.get('duration_s')})")

# --json - without --quiet: stdout parses as one JSON document, the text report is on stderr
r = run(["--stressors", "fault", "--threads", "2", "--duration", "1s", "--size", "8M",
         "--progress", "plain", "--json", "-"], json_report=False)
try:
    doc = json.loads(r.out)
except ValueError as e:
    doc = None
    check(False, f"--json -: stdout is JSON ({e})\n{r.show()}")
check(doc and doc["verdict"]["exit_code"] == r.rc and doc["threads"] == 2,
      f"--json -: the report of this run on stdout (exit {r.rc})")
check("ran " in r.err and "verdict: " in r.err and
      re.search(r"^\[[0-9.]+s/1.00s\] ops", r.err, re.M),
      f"--json -: start line, status lines and text report on stderr\n{r.err[-1500:]}")
done()
