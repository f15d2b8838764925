#!/usr/bin/env python3
# labels: e2e results
# timeout: 120
"""README, docs/, --help, the man page and the binary agree, each compared
with the binary rather than kept by hand: the transcripts of pmdstress in
README and docs/ are what it prints now (tools/docs-sync --check); --help's
usage lines name every command the binary takes, each command's own --help
gives the same synopsis, and "unknown command" lists the same names; the exit
statuses of --help, of README's table and of the man page are the same
codes; every `--option a|b|c` written in README and docs/ lists that option's
values as the binary allows them."""
import glob
import os
import re
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import BUILD_DIR, PMDSTRESS, SOURCE_DIR, check, done  # noqa: E402


def pmd(*args):
    p = subprocess.run([PMDSTRESS] + list(args), capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


# transcripts
p = subprocess.run([os.path.join(SOURCE_DIR, "tools", "docs-sync"), "--check", "--pmdstress",
                    PMDSTRESS], capture_output=True, text=True, timeout=120)
check(p.returncode == 0, "README's and docs/'s transcripts are what pmdstress prints now "
      f"(else: tools/docs-sync)\n{p.stdout[-3000:]}{p.stderr[-500:]}")

# the usage lines and the commands
rc, help_text, _ = pmd("--help")
usage = [ln.split("pmdstress ", 1)[1] for ln in help_text.split("\n\n", 1)[0].splitlines()]
check(rc == 0 and len(usage) >= 6, f"--help opens with the usage lines ({usage})")
names = []
for syn in usage:
    word = syn.split()[0]
    name = "run" if word.startswith("[") else word
    if name not in names:
        names.append(name)
check(set(names) == {"run", "compare", "plot", "list", "help", "version"},
      f"the usage lines name every command: {names}")
for name in ("compare", "plot"):
    rc, out, err = pmd(name, "--help")
    own = out.splitlines()[0] if out else ""
    mine = [s for s in usage if s.startswith(name + " ")]
    check(rc == 0 and mine and own == f"usage: pmdstress {mine[0]}",
          f"{name} --help's usage line is --help's: {own!r} vs {mine}")
for args, want in ((["list"], "stressors:"), (["version"], "pmdstress "), (["help"], "usage:")):
    rc, out, err = pmd(*args)
    check(rc == 0 and out.startswith(want), f"pmdstress {' '.join(args)} runs (rc {rc})")
rc, out, err = pmd("run", "--replay")
check(rc == 2 and "--replay needs a value" in err, f"run --replay is taken ({err.strip()!r})")
rc, out, err = pmd("xyzzy")
listed = re.search(r"\(commands: ([a-z, ]+);", err)
check(rc == 2 and listed and set(listed.group(1).split(", ")) == set(names),
      f"'unknown command' lists the commands of the usage lines ({err.strip()!r})")

# exit statuses: --help, README, the man page
m = re.search(r"^Exit:(.*?)\n\n", help_text, re.M | re.S)
help_codes = [int(c) for c in re.findall(r"(?:^|,)\s*(\d+) ", m.group(1).replace("\n", " "))] \
    if m else []
readme = open(os.path.join(SOURCE_DIR, "README.md")).read()
sect = readme.split("## Exit status", 1)[1].split("\n## ", 1)[0]
readme_codes = list(dict.fromkeys(int(c) for c in re.findall(r"^\| (\d+) \|", sect, re.M)))  # a code may have several rows
man_path = os.path.join(BUILD_DIR, "pmdstress.1")
man = open(man_path).read() if os.path.exists(man_path) else ""
msect = man.split(".SH EXIT STATUS", 1)[-1].split(".SH ", 1)[0]
man_codes = [int(c) for c in re.findall(r"^\.B (\d+)$", msect, re.M)]
check(help_codes and help_codes == readme_codes == man_codes,
      f"exit statuses: --help {help_codes}, README {readme_codes}, man page {man_codes}")

# every `--option a|b|c` of the docs: the values the binary allows
allowed = {}
for opt, vals in re.findall(r"^  (--\S+) .*\n +\[(?:one of )?([a-z0-9|_-]+\|[a-z0-9|_-]+);",
                            help_text, re.M):
    allowed[opt] = vals
docs = [os.path.join(SOURCE_DIR, "README.md")] + glob.glob(os.path.join(SOURCE_DIR, "docs",
                                                                          "*.md"))
seen = 0
for path in docs:
    text = open(path).read()
    for opt, vals in re.findall(r"`(--[a-z0-9-]+)[\s=]([a-z0-9_-]+(?:\|[a-z0-9_-]+)+)`", text):
        if opt not in allowed:
            continue
        seen += 1
        check(vals == allowed[opt], f"{os.path.relpath(path, SOURCE_DIR)}: `{opt} {vals}`: the "
              f"binary allows {allowed[opt]}")
check(seen >= 3, f"the docs' option values were found and compared ({seen})")
done()
