#!/usr/bin/env python3
# labels: static
# timeout: 900
"""Static analysis with the checked-in configurations: cppcheck
(tools/static-analysis/cppcheck.supp) and clang-tidy (.clang-tidy) over
src/, stress/ and the headers they include, clean. A canary with deliberate
bugs shows each tool reports here. clang-tidy is slow (minutes for the whole
tree on two CPUs), so a file found clean is remembered in the build tree
under a hash of its text, every header, the configuration and its compile
command: the next run checks only what changed."""
import concurrent.futures
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import BUILD_DIR, SOURCE_DIR, check, done, skip, skip_part  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CANARY = os.path.join(HERE, "static_canary.c")
ROOMS = sorted(glob.glob(os.path.join(SOURCE_DIR, "src", "*", "")))
SOURCES = sorted(glob.glob(os.path.join(SOURCE_DIR, "src", "*", "*.c")) +
                 glob.glob(os.path.join(SOURCE_DIR, "stress", "*.c")))
cppcheck = shutil.which("cppcheck")
tidy = shutil.which("clang-tidy")
if not cppcheck and not tidy:
    skip("neither cppcheck nor clang-tidy is installed (tools/deps installs both)")

# ---- cppcheck ---------------------------------------------------------------------------
if cppcheck:
    CPP = [cppcheck, "--enable=warning,portability", "--std=c11", "--library=posix",
           "--library=gnu", "--inline-suppr", "--quiet", "-j", str(os.cpu_count() or 2),
           "--error-exitcode=1", "-D_GNU_SOURCE", "-D__x86_64__", "-D__linux__",
           f"-I{SOURCE_DIR}/include", f"-I{BUILD_DIR}/gen"] + [f"-I{r}" for r in ROOMS] + [
           f"--suppressions-list={SOURCE_DIR}/tools/static-analysis/cppcheck.supp",
           "--template={file}:{line}: {severity}: {message} [{id}]"]
    r = subprocess.run(CPP + [CANARY], capture_output=True, text=True)
    check(r.returncode == 1 and "canary" in r.stderr,
          f"cppcheck reports the canary's bugs ({r.stderr.strip()[:300]!r})")
    # relative paths: the suppressions name files as src/room/x.c
    r = subprocess.run(CPP + ["src", "stress"], capture_output=True, text=True, timeout=600,
                       cwd=SOURCE_DIR)
    check(r.returncode == 0 and not r.stderr.strip(),
          f"cppcheck: src/ and stress/ are clean (rc {r.returncode})\n{r.stderr.strip()[:6000]}")
else:
    skip_part("cppcheck is not installed")

# ---- clang-tidy --------------------------------------------------------------------------
db = os.path.join(BUILD_DIR, "compile_commands.json")
if not tidy:
    skip_part("clang-tidy is not installed")
    done()
if not os.path.exists(db):
    check(False, f"{db} exists (CMAKE_EXPORT_COMPILE_COMMANDS)")
    done()
r = subprocess.run([tidy, f"--config-file={SOURCE_DIR}/.clang-tidy", "--quiet", CANARY, "--",
                    "-std=c11", "-D_GNU_SOURCE"], capture_output=True, text=True, timeout=300)
check(r.returncode != 0 and "clang-analyzer-core.NullDereference" in r.stdout,
      f"clang-tidy reports the canary's NULL dereference ({r.stdout.strip()[:300]!r})")

with open(db) as f:
    commands = {os.path.realpath(e["file"]): e.get("command") or " ".join(e.get("arguments", []))
                for e in json.load(f)}
common = hashlib.sha256()
for path in [os.path.join(SOURCE_DIR, ".clang-tidy")] + sorted(
        glob.glob(os.path.join(SOURCE_DIR, "include", "pmdstress", "*.h")) +
        glob.glob(os.path.join(SOURCE_DIR, "src", "*", "*.h")) +
        glob.glob(os.path.join(SOURCE_DIR, "stress", "*.h")) +
        glob.glob(os.path.join(BUILD_DIR, "gen", "*.h"))):
    with open(path, "rb") as f:
        common.update(path.encode() + b"\0" + f.read())
common.update(subprocess.run([tidy, "--version"], capture_output=True).stdout)
cache_path = os.path.join(BUILD_DIR, "static-analysis", "clang-tidy-clean.json")
os.makedirs(os.path.dirname(cache_path), exist_ok=True)
try:
    with open(cache_path) as f:
        cache = json.load(f)
except (OSError, ValueError):
    cache = {}


def key(path):
    h = common.copy()
    with open(path, "rb") as f:
        h.update(f.read())
    h.update((commands.get(os.path.realpath(path)) or "").encode())
    return h.hexdigest()


def lint(path):
    p = subprocess.run([tidy, "-p", BUILD_DIR, "--quiet", path], capture_output=True,
                       text=True, errors="replace", timeout=600)
    findings = [line for line in p.stdout.splitlines() if ": warning: " in line or ": error: " in line]
    return path, p.returncode, findings, p.stdout


todo = [s for s in SOURCES if cache.get(os.path.relpath(s, SOURCE_DIR)) != key(s)]
missing = [s for s in SOURCES if os.path.realpath(s) not in commands]
check(not missing, f"every source is in the compile database ({[os.path.basename(m) for m in missing]})")
print(f"# clang-tidy: {len(todo)} of {len(SOURCES)} files changed since they were last found clean")
bad = []
with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
    for path, rc, findings, out in pool.map(lint, todo):
        rel = os.path.relpath(path, SOURCE_DIR)
        if rc == 0 and not findings:
            cache[rel] = key(path)
        else:
            cache.pop(rel, None)
            bad.append((rel, findings or out.strip().splitlines()[-5:]))
with open(cache_path, "w") as f:
    json.dump(cache, f, indent=1, sort_keys=True)
check(not bad, f"clang-tidy: src/ and stress/ (and the headers they include) are clean" +
      "".join(f"\n  {rel}:\n    " + "\n    ".join(lines[:20]) for rel, lines in bad))
done()
