#!/usr/bin/env python3
# labels: robust
# timeout: 300
"""A capability this machine lacks is a skip ctest shows as skipped, never a
pass. pmdtest's done() ends a test that skipped a part with 77 (and lists the
reasons), a failed check still with 1; every script test has ctest's
SKIP_RETURN_CODE 77; and the tests a fresh machine used to pass without
running (test_static_analysis without cppcheck and clang-tidy,
test_valgrind without valgrind) exit 77 with the reason when their tools are
not on PATH; test_memcg where no cgroup hierarchy is mounted (a mount
namespace without /sys/fs/cgroup, as root) skips its cgroup part with
pmdstress's reason instead of crashing."""
import json
import os
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import BUILD_DIR, SOURCE_DIR, check, done, is_root, skip_part  # noqa: E402

LIB = os.path.join(SOURCE_DIR, "tests", "lib")


def snippet(body):
    code = f"import sys; sys.path.insert(0, {LIB!r})\nfrom pmdtest import *\n{body}\n"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)


p = snippet('check(True, "a"); skip_part("no frobnicator here"); done()')
check(p.returncode == 77 and "SKIP: 1 part(s) could not run here: no frobnicator here" in
      p.stderr and "# SKIP no frobnicator here" in p.stdout,
      f"a skipped part: exit 77 with the reason (rc {p.returncode}, {p.stderr.strip()!r})")
p = snippet('check(False, "a"); skip_part("no frobnicator here"); done()')
check(p.returncode == 1, f"a failed check wins over a skipped part: exit 1 (rc {p.returncode})")
p = snippet('check(True, "a"); done()')
check(p.returncode == 0, f"all checked: exit 0 (rc {p.returncode})")

# ctest's view: every script test skips on 77
q = subprocess.run(["ctest", "--show-only=json-v1"], cwd=BUILD_DIR, capture_output=True,
                   text=True, timeout=60)
tests = json.loads(q.stdout).get("tests", []) if q.returncode == 0 else []
scripts, missing = 0, []
for t in tests:
    if not any(str(c).endswith(".py") for c in t.get("command", [])):
        continue
    scripts += 1
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    if str(props.get("SKIP_RETURN_CODE")) != "77":
        missing.append(t["name"])
check(scripts > 50 and not missing,
      f"every script test ({scripts}) has SKIP_RETURN_CODE 77 (not: {missing})")

# the tools missing: a skip with the reason, at once
env = dict(os.environ, PATH="/nonexistent")
for rel, why in (("robust/test_static_analysis.py", "neither cppcheck nor clang-tidy"),
                 ("sanitizers/test_valgrind.py", "valgrind is not installed")):
    p = subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "tests", rel)], env=env,
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 77 and why in p.stderr and "ok " not in p.stdout,
          f"{rel} with its tool off PATH: exit 77, '{why}' (rc {p.returncode}, "
          f"{p.stderr.strip()[-200:]!r})")

# no cgroup hierarchy: test_memcg skips that part with pmdstress's reason (it crashed)
if is_root() and os.path.exists("/usr/bin/unshare"):
    p = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                        f"umount -R /sys/fs/cgroup && exec {sys.executable} "
                        f"{os.path.join(SOURCE_DIR, 'tests', 'e2e', 'test_memcg.py')}"],
                       capture_output=True, text=True, timeout=170)
    check(p.returncode == 77 and "memory cgroup mode" in p.stderr and
          "no memory cgroup hierarchy" in p.stderr and "Traceback" not in p.stderr,
          f"test_memcg without a cgroup hierarchy: exit 77 with pmdstress's reason (rc "
          f"{p.returncode}, {p.stderr.strip()[-300:]!r})")
else:
    skip_part("test_memcg without a cgroup hierarchy: needs root and unshare(1)")
done()
