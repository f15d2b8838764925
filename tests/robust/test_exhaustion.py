#!/usr/bin/env python3
# labels: robust
# timeout: 600
"""Running out of things, each made real by a limit the test sets: threads
(a pids cgroup, RLIMIT_NPROC, --threads 100000), address space (RLIMIT_AS),
file descriptors (RLIMIT_NOFILE), fork() (EAGAIN under a pids cgroup, with
the fork and exec stressors) and
memory (a memory cgroup smaller than the arena, and one that OOM-kills the
run). Each must be said clearly on stderr, and the run must adapt (fewer
workers, said loudly) or stop with exit 2/125 - never crash, hang, leave a
process behind or leave a THP setting changed (the settings guardian puts
them back even after the OOM killer's SIGKILL; as root the RLIMIT_AS sweep
and the OOM case run the sysfs stressor, so there are settings to put back).

A case the machine cannot make (no pids or memory cgroup can be created,
no prlimit or setpriv) says so, with the reason, on stdout and stderr; if
no case could run at all the test is skipped (exit 77)."""
import contextlib
import ctypes
import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "partners2"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pmdtest import PMDSTRESS, check, done, is_root, reachable, skip, skip_part  # noqa: E402
from cgroup import Cgroup  # noqa: E402
import thpsnap  # noqa: E402

libc = ctypes.CDLL(None, use_errno=True)
check(libc.prctl(36, 1, 0, 0, 0) == 0, "the test is a child subreaper (PR_SET_CHILD_SUBREAPER)")
tmp = tempfile.mkdtemp(prefix="pmd-exhaust-")
QUIET = ["--progress", "off", "--quiet"]
FATAL = ("Segmentation fault", "fatal SIG", "AddressSanitizer", "core dumped")
SYSFS = is_root() and os.access(f"{thpsnap.THP}/enabled", os.W_OK)
SYSFS_ARGS = ["--sysfs-values", "keep-thp", "--sysfs-rate", "200"]
cases_ran, cases_skipped = [], []


def case(name, why_not):
    """Whether case @name runs; if it cannot (@why_not), say why, visibly."""
    if why_not:
        cases_skipped.append(f"{name}: {why_not}")
        skip_part(f"{name}: {why_not}")
        print(f"test_exhaustion: SKIP {name}: {why_not}", file=sys.stderr)
        return False
    cases_ran.append(name)
    return True


@contextlib.contextmanager
def settings_kept(what, sysfs=False):
    """Around a case: every THP sysfs file must read as before it. Under the
    tests' THP lock, so that another test's churn is not taken for ours."""
    with thpsnap.Guard() if sysfs else thpsnap.Lock():
        before = thpsnap.read()
        yield
        after = thpsnap.read()
        check(after == before, f"{what}: THP sysfs settings unchanged "
              f"({thpsnap.diff(before, after) or 'same'})")


def orphans():
    me, out = os.getpid(), []
    for d in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{d}/stat") as f:
                st = f.read()
        except OSError:
            continue
        rest = st[st.rindex(")") + 2:].split()
        if int(rest[1]) == me:
            out.append((int(d), rest[0]))
    return out


def left_behind(grace=3.0):
    """Wait for the run's orphans to end; reap them; return those still running
    and those that came to us as zombies (a child pmdstress never reaped)."""
    end = time.monotonic() + grace
    while time.monotonic() < end and [o for o in orphans() if o[1] != "Z"]:
        time.sleep(0.05)
    left = orphans()  # a zombie orphan is left behind too: pmdstress did not reap it
    for pid, state in left:
        try:
            if state != "Z":
                os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                break
        except ChildProcessError:
            break
    return left


def run(args, prefix=(), timeout=180, preexec=None, json_report=True, binary=PMDSTRESS):
    path = os.path.join(tmp, "r.json")
    if os.path.exists(path):
        os.unlink(path)
    cmd = list(prefix) + [binary] + QUIET + list(args) + (["--json", path] if json_report else [])
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout,
                       preexec_fn=preexec)
    doc = None
    if os.path.exists(path):
        with open(path) as f:
            doc = json.load(f)
    return p.returncode, p.stdout, p.stderr, doc, time.monotonic() - t0


def no_crash(what, rc, err):
    check(rc >= 0 and not any(x in err for x in FATAL),
          f"{what}: no crash (rc {rc}){'' if rc >= 0 else chr(10) + err[-2000:]}")


def clean_exit(what, rc, err, allowed):
    check(rc in allowed, f"{what}: exit {rc} (allowed {sorted(allowed)}): {err.strip()[-400:]!r}")
    check(not left_behind(), f"{what}: no process left behind")


# ---- threads ------------------------------------------------------------------------------
pids = Cgroup("pids")
NO_PIDS = None if pids.path else f"no pids cgroup can be made here ({pids.why})"
if case("--threads 100000 under pids.max 300", NO_PIDS):
    pids.set_limit(300)
    with settings_kept("--threads 100000 under pids.max 300"):
        rc, out, err, doc, dt = run(["--threads", "100000", "--duration", "1s"],
                                    preexec=pids.preexec, timeout=300)
    no_crash("--threads 100000 under pids.max 300", rc, err)
    m = re.search(r"only (\d+) of 100000 worker threads could be created", err)
    check(m and int(m.group(1)) < 300, f"--threads 100000: said loudly how many were made ({err.strip()[:300]!r})")
    clean_exit("--threads 100000 under pids.max 300", rc, err, {0})
    if doc:
        nran = sum(s["workers"] for s in doc["stressors"] if s["status"] == "ran")
        check(0 < nran < 300, f"--threads 100000: the report counts the {nran} workers that ran")
        check(all(s["status"] == "ran" or s.get("reason") for s in doc["stressors"]),
              "every stressor left without a worker says why")
    check(pids.wait_empty(), "the pids cgroup is empty afterwards")

# RLIMIT_NPROC does not bind root: run as nobody when root, else as ourselves
if is_root():
    nobody = pwd.getpwnam("nobody")
    users = sum(1 for d in filter(str.isdigit, os.listdir("/proc"))
                if os.path.exists(f"/proc/{d}") and os.stat(f"/proc/{d}").st_uid == nobody.pw_uid)
    prefix = ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups",
              "prlimit", f"--nproc={users + 20}"]
else:
    users = sum(1 for d in filter(str.isdigit, os.listdir("/proc"))
                if os.path.exists(f"/proc/{d}") and os.stat(f"/proc/{d}").st_uid == os.getuid())
    prefix = ["prlimit", f"--nproc={users + 20}"]
NO_PRLIMIT = None if shutil.which("prlimit") else "no prlimit(1) (util-linux) on PATH"
if case("RLIMIT_NPROC", NO_PRLIMIT or (None if not is_root() or shutil.which("setpriv") else
                                      "no setpriv(1) to run as nobody (RLIMIT_NPROC does not "
                                      "bind root)")):
    with settings_kept("RLIMIT_NPROC"):
        rc, out, err, doc, dt = run(["--threads", "64", "--duration", "1s", "--size", "16M"],
                                    prefix=prefix, json_report=False,
                                    binary=reachable(PMDSTRESS) if is_root() else PMDSTRESS)
    no_crash("RLIMIT_NPROC", rc, err)
    check(re.search(r"only \d+ of 64 worker threads could be created", err),
          f"RLIMIT_NPROC: fewer threads, said loudly ({err.strip()[:300]!r})")
    clean_exit("RLIMIT_NPROC", rc, err, {0})

# ---- address space --------------------------------------------------------------------------
if case("an arena above RLIMIT_AS", NO_PRLIMIT):
    with settings_kept("an arena above RLIMIT_AS"):
        rc, out, err, doc, dt = run(["--size", "256M", "--duration", "1s"],
                                    prefix=["prlimit", f"--as={200 << 20}"], json_report=False)
    check(rc == 2 and "larger than RLIMIT_AS" in err and "256M" in err,
          f"an arena above RLIMIT_AS: refused at config time, exit 2 ({err.strip()!r})")
# just above the arena: the mapping, a thread stack or a histogram fails somewhere; as
# root with THP settings changing, which every way out must put back
if case("RLIMIT_AS just above the arena", NO_PRLIMIT):
    seen = set()
    stressors = ["--stressors", "fault,sysfs"] + SYSFS_ARGS if SYSFS else []
    for extra in (8, 16, 24, 28, 32, 40, 56, 80):
        what = f"RLIMIT_AS = arena + {extra}M"
        with settings_kept(what, sysfs=SYSFS):
            rc, out, err, doc, dt = run(["--size", "64M", "--threads", "16",
                                         "--duration", "700ms"] + stressors,
                                        prefix=["prlimit", f"--as={(64 + extra) << 20}"],
                                        json_report=False)
            no_crash(what, rc, err)
            check(rc in (0, 125), f"{what}: exit {rc} ({err.strip()[-300:]!r})")
            if rc == 125:
                check(re.search(r"cannot (map|allocate)|out of resources", err),
                      f"{what}: says what could not be had ({err.strip()!r})")
            seen.add(rc)
            check(not left_behind(), f"{what}: no process left behind")
    print(f"# RLIMIT_AS sweep exits: {sorted(seen)}"
          f"{' (with the sysfs stressor)' if SYSFS else ''}")

# ---- fork() returning EAGAIN ------------------------------------------------------------------
if case("fork() EAGAIN under pids.max 14", NO_PIDS):
    # the run is 13 tasks: the supervisor, the storm's two engine threads, 8 workers
    # and the 2 fork workers' writer threads; one left for the 4 forking workers' children
    pids.set_limit(14)
    with settings_kept("fork() under pids.max 14"):
        rc, out, err, doc, dt = run(["--stressors", "fault,fork,exec", "--threads", "8",
                                     "--fork-workers", "2", "--exec-workers", "2",
                                     "--duration", "2s", "--size", "16M"], preexec=pids.preexec)
    no_crash("fork() under pids.max 14", rc, err)
    check(dt < 60, f"fork() under pids.max 14: ended in {dt:.1f}s")
    texts = [e["text"] for e in (doc or {}).get("events", {}).get("kept", [])]
    eagain = [t for t in texts if "fork() failed: Resource temporarily unavailable" in t]
    # a limit ran out, nothing broke: 125 (cannot run here), never 5 (internal error)
    check(rc in (0, 125) and doc, f"fork() under pids.max 14: exit {rc} with a report")
    check(rc != 125 or (eagain and doc["verdict"]["status"] == "resources"),
          f"fork() under pids.max 14: the report says fork() failed with EAGAIN and calls it "
          f"out of resources ({texts[:3]}, {(doc or {}).get('verdict')})")
    # the workers back off and retry: the fork storm goes on at the rate the limit allows
    check(rc == 0, f"fork() EAGAIN: the fork and exec workers retry instead of stopping "
          f"(exit {rc})")
    if doc and rc == 0:
        st = {x["name"]: x for x in doc["stressors"]}
        refused = sum(st[n]["counters"]["eagain"]["total"] for n in ("fork", "exec") if n in st)
        check(refused > 0 and st["fork"]["ops"] > 0,
              f"fork() EAGAIN counted ({refused}) and forks still done ({st['fork']['ops']})")
        # exit 0 must not hide it: one stderr line per stressor held back, with its count
        for n in ("fork", "exec"):
            k = st[n]["counters"]["eagain"]["total"] if n in st else 0
            said = re.findall(rf"^pmdstress: {n}: fork\(\) failed with EAGAIN (\d+) times .*fewer "
                              rf"forks ran than asked$", err, re.M)
            check(said == ([str(k)] if k else []),
                  f"fork() EAGAIN: {n} says on stderr how often ({k}) it was refused: {said} "
                  f"({err.strip()[-400:]!r})")
    check(not left_behind(), "fork() under pids.max 14: no process left behind")
    check(pids.wait_empty(), "the pids cgroup is empty afterwards")
    pids.remove()

# ---- file descriptors ---------------------------------------------------------------------
# RLIMIT_NOFILE from 2 up: the run's descriptors (pagemap, the kernel log, the main loop's
# signalfd) fail in turn, and each is refused or worked around, said on stderr. Where only
# the signalfd fails, the main loop takes signals with sigtimedwait() and reads the log
# every 100 ms: a SIGINT must still end the run with its report.
if case("RLIMIT_NOFILE sweep", NO_PRLIMIT):
    ARGS = ["--threads", "2", "--size", "16M", "--stressors", "fault"]
    seen, errs = {}, {}
    for n in range(2, 11):
        what = f"RLIMIT_NOFILE = {n}"
        rc, out, err, doc, dt = run(ARGS + ["--duration", "300ms"],
                                    prefix=["prlimit", f"--nofile={n}"], json_report=False)
        no_crash(what, rc, err)
        clean_exit(what, rc, err, {0, 125})
        if rc == 125:
            check("not readable" in err or "cannot" in err, f"{what}: says why ({err.strip()!r})")
        if "no signalfd (Too many open files)" in err:
            check(err.count("no signalfd") == 1, f"{what}: the lost signalfd said once")
        seen[n], errs[n] = rc, err
    # the highest limit without a signalfd: the log open, if this user may read it at all
    fallback = max((n for n, e in errs.items() if "no signalfd" in e), default=None)
    log = "/dev/kmsg unreadable" not in errs[10]
    print(f"# RLIMIT_NOFILE sweep exits: {seen}; without a signalfd up to {fallback}")
    check(fallback is not None and seen[fallback] == 0,
          f"a limit that takes the signalfd: the run ends clean ({seen}, {fallback})")
    check(not log or "/dev/kmsg unreadable" not in errs.get(fallback, ""),
          f"and at the highest such limit the log is still read ({fallback})")
    check(seen[10] == 0, "RLIMIT_NOFILE = 10: a clean run")
    if fallback is not None:
        p = subprocess.Popen(["prlimit", f"--nofile={fallback}", PMDSTRESS] + QUIET + ARGS +
                             ["--duration", "30s"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        # it ends by the signal, as a program stopped by one does (src/run/run.c)
        check(p.returncode == -signal.SIGINT and "stopped by Interrupt" in err,
              f"without a signalfd SIGINT ends the run (rc {p.returncode}, "
              f"{time.monotonic() - t0:.2f}s: {err.strip()[-300:]!r})")
        check(not left_behind(), "RLIMIT_NOFILE: no process left behind")

# ---- memory cgroup -----------------------------------------------------------------------------
mem = Cgroup("memory")
NO_MEMCG = None if mem.path else f"no memory cgroup can be made here ({mem.why})"
if case("an arena above the memory cgroup's limit", NO_MEMCG):
    mem.set_limit(64 << 20)
    with settings_kept("an arena above the memory cgroup's limit"):
        rc, out, err, doc, dt = run(["--size", "128M", "--duration", "1s"],
                                    preexec=mem.preexec, json_report=False)
    check(rc == 2 and "128M" in err and "64M" in err and mem.limit_file() in err,
          f"an arena above the cgroup's limit: refused, exit 2, naming both and the file "
          f"({err.strip()!r})")
    check(not left_behind() and mem.wait_empty(), "refused: nothing left in the cgroup")

# an arena that fits the limit, but not with the rest of the tool: the OOM killer
# comes; with the sysfs stressor changing THP settings (root) the guardian must
# put them back after the SIGKILL
if case("OOM kill in a memory cgroup", NO_MEMCG):
    mem.set_limit(48 << 20)
    args = ["--size", "46M", "--threads", "6", "--duration", "6s", "--fault-chunks", "0",
            "--stressors", "fault,fork" + (",sysfs" if SYSFS else "")]
    if SYSFS:
        args += SYSFS_ARGS
    with settings_kept("arena near the cgroup's limit, OOM kill or not", sysfs=SYSFS):
        kills0 = mem.oom_kills()
        rc, out, err, doc, dt = run(args, preexec=mem.preexec, json_report=False, timeout=120)
        time.sleep(0.5)
        alive = left_behind(5.0)
        check(mem.wait_empty(10.0), "after the run: nothing left in the memory cgroup")
    killed = rc == -signal.SIGKILL
    print(f"# memory cgroup 48M, arena 46M: exit {rc}, OOM kills {mem.oom_kills() - kills0}")
    check(rc in (0, 2, 125) or killed, f"arena near the cgroup's limit: exit {rc} "
          f"({err.strip()[-400:]!r})")
    # SIGKILLed by the OOM killer, pmdstress reaps nothing: its children (they die
    # with it) and the guardian come to us as zombies, which is no fault of its
    running = [a for a in alive if a[1] != "Z"] if killed else alive
    check(not running, f"arena near the cgroup's limit: no process left behind ({alive})")
    if killed and SYSFS:
        check("pmdstress guardian:" in err and "put back" in err,
              f"the guardian said it put the settings back ({err.strip()[-300:]!r})")
if mem.path:
    mem.remove()

shutil.rmtree(tmp, ignore_errors=True)
print(f"# cases run: {len(cases_ran)} of {len(cases_ran) + len(cases_skipped)}")
if cases_skipped:
    print(f"# skipped: {'; '.join(cases_skipped)}")
if not cases_ran:
    skip(f"no exhaustion case could run here: {'; '.join(cases_skipped)}")
done()
