#!/usr/bin/env python3
# labels: robust
# timeout: 240
"""Every option of every stressor, fed values it must refuse: generated from
`pmdstress --help` (its type and range), given on the command line (both
--name=VALUE and --name VALUE) and as an INI key. Each must exit 2 with one
line on stderr that names the option (and, for a file, the file, the line
and the key) and the offending value; nothing may run, crash or hang."""
import os
import re
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, check, done  # noqa: E402

U64_MAX = (1 << 64) - 1
SIZE_SFX = [(1 << 40, "T"), (1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")]
DUR_NS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9}


def parse_size(t):
    m = re.fullmatch(r"(\d+)([KMGT]?)", t)
    mult = dict((s, v) for v, s in SIZE_SFX).get(m.group(2), 1)
    return int(m.group(1)) * mult


def parse_duration(t):
    m = re.fullmatch(r"(\d+)(ns|us|ms|s|m|h)", t)
    return int(m.group(1)) * DUR_NS[m.group(2)]


def options():
    """[(flag, section, key, kind, lo, hi, allowed, cli_only)] from --help."""
    p = subprocess.run([PMDSTRESS, "--help"], capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, "--help exits 0")
    out, section, lines = [], "global", p.stdout.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^\[(\w+)\] ", line)
        if m:
            section = m.group(1)
            continue
        m = re.match(r"^  (--[\w<>-]+)\s", line)
        if not m or i + 1 >= len(lines) or "<stressor>" in m.group(1):
            continue
        flag = m.group(1)
        desc = re.match(r"^\s+\[(.*); default .*\]$", lines[i + 1]) or \
            re.match(r"^\s+\[(default .*)\]$", lines[i + 1])
        if not desc:
            continue
        what = desc.group(1)
        key = flag[2:] if section == "global" else flag[len(section) + 3:]
        if what.startswith("default"):  # --<stressor>-workers
            out.append((flag, section, key, "workers", 1, 1000000, None))
        elif m2 := re.match(r"integer (\d+)\.\.(\d+)", what):
            out.append((flag, section, key, "integer", int(m2.group(1)), int(m2.group(2)), None))
        elif m2 := re.match(r"size (\w+)\.\.(\w+)", what):
            out.append((flag, section, key, "size", parse_size(m2.group(1)),
                        parse_size(m2.group(2)), None))
        elif m2 := re.match(r"duration (\w+)\.\.(\w+)", what):
            out.append((flag, section, key, "duration", parse_duration(m2.group(1)),
                        parse_duration(m2.group(2)), None))
        elif m2 := re.match(r"one of ([\w|-]+)", what):
            out.append((flag, section, key, "enum", 0, 0, m2.group(1).split("|")))
        elif what == "on|off":
            out.append((flag, section, key, "bool", 0, 0, None))
        elif what.startswith("text up to"):
            out.append((flag, section, key, "text", 0, int(re.search(r"\d+", what).group()),
                        None))
        else:
            check(False, f"{flag}: --help describes it as {what!r}, which this test cannot read")
    return out


def bad_values(kind, lo, hi, allowed):
    """Values the option must refuse, each with the text the error must quote."""
    v = {"integer": ["-1", "abc", "1.5", "0x", "0xg1", "1e3", "", " 7",
                     "99999999999999999999999999"],
         "size": ["-4K", "4Q", "abc", "", "1.5M", "M", "99999999999999999999",
                  "16777216T"],
         # a fraction is taken when it comes to whole nanoseconds (1.5s is good)
         "duration": ["-1s", "ten", "1.5ns", "1.s", ".5s", "1.5.5s", "", "10x", "s",
                      "99999999999999999999h"],
         "enum": ["bogus", "", (allowed or ["x"])[0] + "x"],
         "bool": ["maybe", "2", "onn"],
         "workers": ["0", "-1", "101%", "0%", "x", "rest%", "%", "1000001", "1.5"],
         "text": []}[kind]
    if kind == "text":
        v.append("x" * (hi + 1))
    elif kind == "integer":
        if hi < U64_MAX:
            v.append(str(hi + 1))
        if lo > 0:
            v.append(str(lo - 1))
    elif kind == "size":
        v.append(f"{hi * 2 // (1 << 20)}M" if hi >= 1 << 20 else str(hi * 2))
        if lo > 1:
            v.append(str(lo - 1))
    elif kind == "duration":
        v.append(f"{hi // 10**9 + 1}s")
        v.append(f"{hi // 10**6 + 1}.5ms")  # past the top, as a fraction
        if lo > 1:
            v.append(f"{lo - 1}ns")
    return v


def lines_of(err):
    return [x for x in err.splitlines() if x.strip()]


def quoted(value):
    """How the error shows the value: quoted as given (long text may be cut)."""
    return f"'{value[:40]}"


opts = options()
names = {o[0] for o in opts}
for must in ["--threads", "--size", "--fault-order", "--zap-rate", "--fork-chunks",
             "--exec-program", "--sysfs-values", "--migrate-race", "--procwalk-smaps",
             "--fault-workers", "--toggle-maps-interval"]:
    check(must in names, f"--help lists {must} (the generator sees it)")

tmp = tempfile.mkdtemp(prefix="pmd-badopt-")
ini = os.path.join(tmp, "bad.ini")
ncli = nini = 0
failed = []


def expect_refused(args, what, needles):
    p = subprocess.run([PMDSTRESS] + args, capture_output=True, text=True, timeout=30,
                       errors="replace")
    ln = lines_of(p.stderr)
    ok = p.returncode == 2 and len(ln) == 1 and ln[0].startswith("pmdstress: ") and \
        all(n in ln[0] for n in needles) and not p.stdout.strip()
    if not ok:
        failed.append(f"{what}: rc {p.returncode}, stderr {p.stderr.strip()[:300]!r}, "
                      f"wanted {needles}")
    return ok


for flag, section, key, kind, lo, hi, allowed in opts:
    for value in bad_values(kind, lo, hi, allowed):
        # a report that cannot be opened is named as the file, like compare does
        needles = [value[:40], "cannot open"] if key == "replay" else [flag, quoted(value)]
        # the command line, --name=VALUE
        expect_refused([f"{flag}={value}", "--duration", "1s"], f"{flag}={value!r}", needles)
        ncli += 1
        # --name VALUE, where the next argument is the value (a flag never takes one)
        if kind != "bool" and value and not value.startswith("-"):
            expect_refused([flag, value, "--duration", "1s"], f"{flag} {value!r}", needles)
            ncli += 1
        if key in ("config", "replay"):
            continue  # command line only: refused in a file below, whatever the value
        if value != value.strip() or not value:
            continue  # an INI value is trimmed; an empty one is tested below
        # the same in a scenario file: file, line, section and key are named
        sec = "global" if section == "global" else section
        with open(ini, "w") as f:
            f.write(f"; generated\n[global]\nquiet = on\n[{sec}]\n" if sec != "global"
                    else "; generated\n[fault]\n[global]\nquiet = on\n")
            f.write(f"{key} = {value}\n")
        if len(f"{key} = {value}") > 198:
            # the line reader's limit comes first; a long value fits on the command line
            needles = [f"{ini}:5: line longer than 200 characters"]
        else:
            needles = [f"{ini}:5: [{sec}] ", key, quoted(value)]
        if key == "quiet":
            needles = [f"{ini}:5: [global] duplicate key 'quiet'"]
        expect_refused(["--config", ini], f"[{sec}] {key} = {value!r}", needles)
        nini += 1
    # an empty value in a file is refused too (not taken as the default)
    if kind not in ("text",) and key not in ("config", "replay"):
        with open(ini, "w") as f:
            f.write(f"[fault]\n[{section}]\n{key} =\n" if section != "fault"
                    else f"[fault]\n{key} =\n")
        line = 3 if section != "fault" else 2
        expect_refused(["--config", ini], f"[{section}] {key} = (empty)",
                       [f"{ini}:{line}: [{section}] ", key, "''"])
        nini += 1

# an option followed by another option has no value; a flag followed by a word is
# given that word as a value; a misspelt command gets a suggestion
expect_refused(["--threads", "--quiet"], "--threads --quiet", ["--threads needs a value",
                                                               "integer 0..1000000"])
expect_refused(["--fault-order", "--quiet"], "--fault-order --quiet",
               ["--fault-order needs a value", "mixed|forward|backward|random"])
expect_refused(["--fault-order"], "--fault-order (last)", ["--fault-order needs a value",
                                                           "mixed|forward|backward|random"])
expect_refused(["--shared", "maybe"], "--shared maybe", ["--shared: invalid value 'maybe'",
                                                         "on|off"])
expect_refused(["lst"], "the command 'lst'", ["unknown command 'lst'", "did you mean 'list'"])
ncli += 5

# command-line-only options are refused in a file, naming the key
for key in ("config", "replay"):
    with open(ini, "w") as f:
        f.write(f"[global]\n{key} = race\n[fault]\n")
    expect_refused(["--config", ini], f"[global] {key} in a file",
                   [f"{ini}:2: [global] ", f"'{key}' is only accepted on the command line"])
    nini += 1

check(not failed, f"{ncli} command-line and {nini} file cases refused with exit 2 and one "
      f"line naming option and value" + ("".join("\n  " + x for x in failed[:80])))
check(ncli > 400 and nini > 200, f"the generator made enough cases ({ncli} + {nini})")
os.unlink(ini)
os.rmdir(tmp)
done()
