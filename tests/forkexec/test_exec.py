#!/usr/bin/env python3
# labels: e2e
# timeout: 180
"""The exec stressor: fork + execve of this binary in its exec-child mode,
or of /bin/true, alone and under the storm; the three latencies; a program
that cannot be executed is skipped with the reason; one that fails is an
error; no child is ever left behind."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
sys.path.insert(0, os.path.dirname(__file__))
from pmdtest import PMDSTRESS, check, done, run, spawn  # noqa: E402
from children import become_subreaper, leftovers  # noqa: E402

become_subreaper()
base = ["--size", "16M", "--progress", "off", "--quiet", "--duration", "1500ms"]

# the exec-child mode: the first argument, before anything else is looked at
p = subprocess.run([PMDSTRESS, "--exec-child", "--no-such-option"], capture_output=True,
                   text=True, timeout=10)
check(p.returncode == 0 and not p.stdout and not p.stderr,
      f"pmdstress --exec-child exits 0 at once, silent ({p.returncode} {p.stderr!r})")


def exec_checks(r, what, split=True):
    e = r.stressor("exec")
    check(r.rc == 0 and e and e["status"] == "ran", f"{what}: runs clean\n{r.show()}")
    if not e or e["status"] != "ran":
        return
    lat = e["latency"]
    check(e["ops"] > 0, f"{what}: programs executed: {e['ops']}")
    check(all(lat[k]["count"] == e["ops"] for k in ("fork", "total")),
          f"{what}: one fork and total latency per op")
    # --exec-split off: one wait per op, so no exec phase of its own
    check(lat["exec"]["count"] == (e["ops"] if split else 0),
          f"{what}: exec latencies {lat['exec']['count']} for {e['ops']} ops (split {split})")
    if not split:
        check(not leftovers(), f"{what}: no child left behind")
        return
    # total_i = fork_i + exec_i + exit and reap, for every op: quantile by quantile too
    check(all(lat["total"][q] >= lat["exec"][q] and lat["total"][q] >= lat["fork"][q]
              for q in ("p50", "p90", "p99", "max")),
          f"{what}: total never below exec or fork {lat['total']['p50']} {lat['exec']['p50']}")
    check(lat["exec"]["min"] > 0, f"{what}: exec takes time ({lat['exec']['min']} ns)")
    check(r.doc["events"]["total"] == 0, f"{what}: no events")
    check(not leftovers(), f"{what}: no child left behind")


exec_checks(run(base + ["--stressors", "exec"]), "exec self")
true = shutil.which("true") or "/bin/true"
exec_checks(run(base + ["--stressors", "exec", "--exec-program", true]), f"exec {true}")
r = run(["--config", "exec", "--threads", "4", "--size", "16M", "--duration", "2s",
         "--progress", "off", "--quiet"])
exec_checks(r, "the exec scenario (under the storm)")
check(r.counter("fault", "rounds") > 0, "the storm faulted during the execs")
exec_checks(run(base + ["--stressors", "exec", "--exec-split", "off"]), "exec, split off",
            split=False)
r = run(base + ["--stressors", "exec", "--exec-populate"])
exec_checks(r, "exec with a populated parent")
check(r.counter("exec", "populated") == 8, f"all 8 chunks populated: {r.counter('exec', 'populated')}")

# a program the user named that cannot run is the user's mistake: exit 2 naming it
r = run(base + ["--stressors", "exec", "--exec-program", "/nonexistent/prog"], json_report=False)
check(r.rc == 2 and "--exec-program: cannot execute '/nonexistent/prog': No such file" in r.err,
      f"a missing program: a usage error naming it\n{r.show()}")
# a program that fails is an error of the run, said with its status
false = shutil.which("false") or "/bin/false"
r = run(base + ["--stressors", "exec", "--exec-program", false])
errs = [e for e in r.events() if e["kind"] == "error"]
check(r.rc == 5 and errs and "exited with status 1" in errs[0]["text"],
      f"{false}: exit 5, the child's status said\n{r.show()}")
check(not leftovers(), "a failing program: no child left behind")
# an execve that fails, told through the pipe whether it is read at the exec or after the reap
noexec = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"pmd-noexec-{os.getpid()}")
for split in ("on", "off"):
    with open(noexec, "w") as f:
        f.write("#!/nonexistent/interpreter\n")
    os.chmod(noexec, 0o755)
    r = run(base + ["--stressors", "exec", "--exec-program", noexec, "--exec-split", split])
    errs = [e for e in r.events() if e["kind"] == "error"]
    check(r.rc != 0 and errs and f"execve({noexec}) failed" in errs[0]["text"]
          and "No such file" in errs[0]["text"],
          f"split {split}: a failing execve is an error naming the call and errno\n{r.show()}")
    check(not leftovers(), f"split {split}: a failing execve leaves no child behind")
os.unlink(noexec)

# the exec-child mode's child calls execve alone and says a failure through the shared
# slot: a copy of this binary deleted mid-run makes it fail (ENOENT), in both wait shapes
copy = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"pmd-copy-{os.getpid()}")
for split in ("on", "off"):
    shutil.copy(PMDSTRESS, copy)
    json_path = copy + ".json"
    p = subprocess.Popen([copy] + base + ["--stressors", "exec", "--exec-split", split,
                                          "--duration", "20s", "--json", json_path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.8)
    os.unlink(copy)
    out, err = p.communicate(timeout=30)
    with open(json_path) as f:
        doc = json.load(f)
    os.unlink(json_path)
    errs = [e["text"] for e in doc["events"]["kept"] if e["kind"] == "error"]
    check(p.returncode == 5 and errs == [f"exec: execve({copy}) failed: No such file or directory"],
          f"self, split {split}: its program deleted, execve's errno is the error "
          f"(rc {p.returncode}) {errs} {err[-300:]}")
    check(not leftovers(), f"self, split {split}: a failing execve leaves no child behind")

# a Ctrl-C goes to the whole group, the exec-child mode's children included: they keep
# the run's signals blocked into the program, so none dies of it, the run stops clean
for split in ("on", "off"):
    p = spawn(["--stressors", "exec", "--exec-split", split, "--duration", "30s",
               "--size", "16M", "--progress", "off"], start_new_session=True)
    time.sleep(1.0)
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=30)
    check(p.returncode == -signal.SIGINT and "clean, stopped by Interrupt" in err
          and "killed by" not in err,
          f"self, split {split}: SIGINT to the group: a clean stop ({p.returncode}) {err[-300:]}")
    check(not leftovers(), f"self, split {split}: SIGINT to the group: no child left behind")

# stopped mid-run: nothing left
p = spawn(["--stressors", "exec", "--duration", "30s", "--size", "16M", "--progress", "off"])
time.sleep(1.0)
p.send_signal(signal.SIGINT)
out, err = p.communicate(timeout=30)
# a clean stop, then the run ends by the signal it got (tests/e2e/test_signals.py)
check(p.returncode == -signal.SIGINT and "clean, stopped by Interrupt" in err,
      f"SIGINT mid-exec: a clean stop, ended by SIGINT ({p.returncode}) {err[-300:]}")
check(not leftovers(), "SIGINT mid-exec: no child left behind")
done()
