#!/usr/bin/env python3
# labels: robust
# timeout: 120
"""The stressor wall: stress/*.c are compiled in a target of their own whose
include path is include/ only (CMakeLists.txt, pmdstressors), so a stressor
that includes an engine header from src/ does not build. Checked with the
build's own compile command for stress/page.c (compile_commands.json): as it
is, it compiles; with `#include "run.h"` added, it fails naming run.h; the
engine's own files (src/) still see src/."""
import json
import os
import shlex
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import BUILD_DIR, SOURCE_DIR, check, done, skip  # noqa: E402

db = os.path.join(BUILD_DIR, "compile_commands.json")
if not os.path.exists(db):
    skip(f"no {db} (configure with CMAKE_EXPORT_COMPILE_COMMANDS, as CMakeLists.txt does)")
with open(db) as f:
    cmds = json.load(f)


def command(src):
    for c in cmds:
        if os.path.realpath(c["file"]) == os.path.realpath(os.path.join(SOURCE_DIR, src)):
            return c
    return None


def compile_with(c, extra_first_line):
    """Compile c's file with a line put before it, to a throwaway object."""
    src = os.path.join(SOURCE_DIR, c["file"]) if not os.path.isabs(c["file"]) else c["file"]
    with tempfile.TemporaryDirectory() as d:
        copy = os.path.join(d, os.path.basename(src))
        with open(src) as f, open(copy, "w") as g:
            g.write(extra_first_line + "\n" + f.read())
        args = shlex.split(c["command"]) if "command" in c else list(c["arguments"])
        out = args.index("-o")
        args[out + 1] = os.path.join(d, "x.o")
        args = [copy if os.path.realpath(a) == os.path.realpath(src) else a for a in args]
        # the stressors' own headers (stress/*.h) are found next to the file
        args.insert(1, "-I" + os.path.dirname(src))
        return subprocess.run(args, capture_output=True, text=True, cwd=c["directory"])


page = command("stress/page.c")
if not check(page is not None, "compile_commands.json has stress/page.c"):
    done()
r = compile_with(page, "")
check(r.returncode == 0, f"stress/page.c compiles as it is\n{r.stderr[-1500:]}")
r = compile_with(page, '#include "run.h"')
check(r.returncode != 0 and "run.h" in r.stderr,
      f"a stressor including src/run/run.h does not build ({r.returncode}: {r.stderr.strip()[:200]})")
r = compile_with(page, "#include <pmdstress/stressor.h>")
check(r.returncode == 0, "the contract's headers are what a stressor includes")
eng = command("src/kernel/race.c")
check(eng is not None and compile_with(eng, '#include "run.h"').returncode == 0,
      "the engine's files see src/")
done()
