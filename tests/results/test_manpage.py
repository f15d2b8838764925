#!/usr/bin/env python3
# labels: e2e results
# timeout: 180
"""The man page and the install target. build/pmdstress.1 is written at
build time from the option tables --help prints (src/cli/manpage.c): man -l
renders it without a warning, and every option --help lists (global, common
and each stressor's) is in the rendered page, with its range, as are every
stressor, scenario and command. cmake --install into a scratch prefix puts
pmdstress in bin/ (it runs from PATH, outside the checkout), the man page
where man finds it by name, and the scenarios in share/pmdstress/scenarios/."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import BUILD_DIR, PMDSTRESS, SOURCE_DIR, check, done, skip  # noqa: E402

MAN = shutil.which("man")
if not MAN:
    skip("no man(1) to render the page (apt-get install man-db; tools/deps does)")
page = os.path.join(BUILD_DIR, "pmdstress.1")
if not check(os.path.exists(page), f"the build wrote {page}"):
    done()


def render(args, env=None):
    e = dict(os.environ, MANWIDTH="200", MAN_KEEP_FORMATTING="0", LANG="C.UTF-8", PAGER="cat")
    e.update(env or {})
    p = subprocess.run([MAN] + args, capture_output=True, text=True, timeout=60, env=e)
    return p.returncode, re.sub(r".\x08", "", p.stdout), p.stderr


rc, text, err = render(["--warnings", "-l", page])
check(rc == 0 and len(text) > 5000 and not err.strip(),
      f"man -l renders it, no warning (rc {rc}, {len(text)} chars, {err.strip()[:500]!r})")
flat = re.sub(r"\s+", " ", text.replace("\u2010", "-").replace("\u2212", "-"))

help_text = subprocess.run([PMDSTRESS, "--help"], capture_output=True, text=True).stdout
opts = re.findall(r"^  (--\S+) +.*\n +\[([^\]]*)\]", help_text, re.M)
missing = [o for o, _ in opts if f"{o} " not in flat]
check(len(opts) > 50 and not missing,
      f"every option of --help ({len(opts)}) is in the page (missing: {missing[:10]})")
bad = [o for o, what in opts if re.sub(r"\s+", " ", what) not in flat]
check(not bad, f"with its type, range and default as --help gives them (differs: {bad[:10]})")
lst = subprocess.run([PMDSTRESS, "list"], capture_output=True, text=True).stdout
names = re.findall(r"^  (\S+) ", lst, re.M)
check(names and all(re.search(rf"\b{re.escape(n)}\b", flat) for n in names),
      f"every stressor and scenario of 'pmdstress list' is in the page ({len(names)})")
for word in ("compare", "plot", "list", "version", "EXIT STATUS", "125"):
    check(word in flat, f"the page has {word!r}")

# the install target
prefix = tempfile.mkdtemp(prefix="pmd-install-")
p = subprocess.run(["cmake", "--install", BUILD_DIR, "--prefix", prefix], capture_output=True,
                   text=True, timeout=120)
check(p.returncode == 0, f"cmake --install --prefix {prefix}: rc {p.returncode}\n{p.stderr[-800:]}")
binp = os.path.join(prefix, "bin", "pmdstress")
check(os.access(binp, os.X_OK), "bin/pmdstress installed")
scen = sorted(os.listdir(os.path.join(prefix, "share", "pmdstress", "scenarios"))) \
    if os.path.isdir(os.path.join(prefix, "share", "pmdstress", "scenarios")) else []
want = sorted(f for f in os.listdir(os.path.join(SOURCE_DIR, "configs")) if f.endswith(".ini"))
check(scen == want, f"share/pmdstress/scenarios holds configs/*.ini ({len(scen)} of {len(want)})")
env = dict(os.environ, PATH=os.path.join(prefix, "bin") + ":/usr/bin:/bin")
p = subprocess.run(["pmdstress", "--threads", "2", "--duration", "300ms", "--size", "8M",
                    "--stressors", "fault", "--quiet"], capture_output=True, text=True,
                   timeout=60, env=env, cwd=prefix)
check(p.returncode == 0, f"pmdstress from PATH runs outside the checkout (rc {p.returncode}) "
      f"{p.stderr[-300:]!r}")
rc, text2, err = render(["pmdstress"], env={"MANPATH": os.path.join(prefix, "share", "man")})
check(rc == 0 and "pmdstress" in text2 and "EXIT STATUS" in text2,
      f"man finds the installed page by name (rc {rc}, {err.strip()[:200]!r})")
shutil.rmtree(prefix, ignore_errors=True)
done()
