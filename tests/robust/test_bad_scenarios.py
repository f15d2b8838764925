#!/usr/bin/env python3
# labels: robust
# timeout: 240
"""Bad scenario files and bad values that only the meaning of an option can
refuse: the INI structure (empty files, duplicate sections and keys, keys
outside a section, unknown sections with a suggestion, binary garbage, NUL
bytes, over-long lines, a folder, a huge file), output files that cannot be
written (found before the run, not after it), option combinations a
stressor's setup refuses, and values with control bytes. Each is exit 2 with
one line on stderr naming the file and line, or the option, and the value.
And what must be accepted: a UTF-8 byte order mark, CRLF line ends."""
import os
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import PMDSTRESS, check, done  # noqa: E402

tmp = tempfile.mkdtemp(prefix="pmd-badini-")
QUICK = ["--duration", "300ms", "--threads", "3", "--size", "8M", "--progress", "off", "--quiet"]


def pmd(args, timeout=60):
    p = subprocess.run([PMDSTRESS] + args, capture_output=True, text=True, errors="replace",
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def refused(args, needles, what):
    rc, out, err = pmd(args)
    lines = [x for x in err.splitlines() if x.strip()]
    ok = rc == 2 and len(lines) == 1 and all(n in lines[0] for n in needles) and not out.strip()
    check(ok, f"{what}: exit 2, one line with {needles} (rc {rc}: {err.strip()[:300]!r})")


def ini(name, data):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    return path


# ---- the file's structure -----------------------------------------------------------------
cases = [
    ("empty.ini", b"", "empty scenario"),
    ("comments.ini", b"; only\n# comments\n\n", "empty scenario"),
    ("dupsec.ini", b"[fault]\n[global]\nthreads = 2\n[fault]\n", ":4: duplicate section [fault]"),
    ("dupkey.ini", b"[global]\nthreads = 2\nthreads = 3\n[fault]\n",
     ":3: [global] duplicate key 'threads'"),
    ("outside.ini", b"threads = 2\n[fault]\n", ":1: 'threads' is outside any section"),
    ("unknown.ini", b"[global]\n[faultt]\n", ":2: unknown stressor 'faultt' (did you mean 'fault'?)"),
    ("nosuch.ini", b"[frobnicate]\n", ":1: unknown stressor 'frobnicate'"),
    ("emptyname.ini", b"[]\n", "empty section name"),
    ("unterminated.ini", b"[fault\n", ":1: section header without ']'"),
    ("novalue.ini", b"[global]\nthreads\n", ":2: syntax error"),
    ("indented.ini", b"[global]\n  threads = 2\n", ":2: indented line"),
    ("unknownkey.ini", b"[fault]\norderr = forward\n", "unknown key 'orderr' (did you mean 'order'?)"),
    ("badvalue.ini", b"[fault]\nchunks = lots\n", ":2: [fault] chunks: invalid value 'lots'"),
    ("negative.ini", b"[global]\nsize = -2M\n[fault]\n", ":2: [global] size: invalid value '-2M'"),
    ("huge.ini", b"[global]\nsize = 99999999999999999999999G\n[fault]\n",
     "size: invalid value '99999999999999999999999G'"),
    ("longline.ini", b"[global]\n; " + b"x" * 300 + b"\n", ":2: line longer than 200 characters"),
    ("nul.ini", b"[global]\nthreads = 2\x00\n", "not a text file (contains a NUL byte)"),
    ("garbage.ini", bytes(range(256)) * 4, "garbage.ini"),
    ("bigfile.ini", b"; padding\n" * 200000, "scenario file larger than 1 MiB"),
    ("cli-only.ini", b"[global]\nreplay = a.json\n", "'replay' is only accepted on the command line"),
    ("globl.ini", b"[globl]\nthreads = 2\n", ":1: unknown stressor 'globl' (did you mean 'global'?)"),
    # refused only by the checks across options, after the file was read: still its line
    ("size2m.ini", b"[fault]\n[global]\nthreads = 2\nsize = 3M\n",
     ":4: [global] size: invalid value '3M' (must be a multiple of 2M"),
    ("sizemem.ini", b"[global]\nsize = 255G\n[fault]\n",
     ":2: [global] size: invalid value '255G' ("),  # larger than memory, a cgroup or RLIMIT_AS
    ("memnode.ini", b"[global]\nmem-policy = bind:63\n[fault]\n",
     ":2: [global] mem-policy: invalid value 'bind:63' (node 63 does not exist"),
    ("cpunode.ini", b"[fault]\n[global]\ncpu-nodes = 63\n",
     ":3: [global] cpu-nodes: invalid value '63' (node 63 does not exist"),
]
for name, data, needle in cases:
    path = ini(name, data)
    refused(["--config", path], [path, needle], f"scenario {name}")
refused(["--config", tmp], [tmp, "Is a directory"], "a folder as the scenario")
refused(["--config", os.path.join(tmp, "missing.ini")], ["missing.ini", "cannot open"],
        "a missing scenario file")
refused(["--config", "rac"], ["no scenario 'rac'", "did you mean 'race'"], "a misspelt builtin")
# the command line wins over the file: a bad size given there is the command line's
path = ini("sizeok.ini", b"[global]\nsize = 8M\n[fault]\n")
refused(["--config", path, "--size", "3M"], ["pmdstress: --size: invalid value '3M'"],
        "a bad --size on the command line over a file's good one")
rc, out, err = pmd(["--config", ini("sizebad.ini", b"[global]\nsize = 3M\n[fault]\n")] + QUICK)
check(rc == 0, f"a file's bad size the command line replaced runs (rc {rc}: {err.strip()[:200]!r})")

# accepted: a byte order mark and CRLF line ends (editors on other systems write them)
path = ini("bom.ini", b"\xef\xbb\xbf[fault]\r\nchunks = 1\r\n[global]\r\nthreads = 3\r\n")
rc, out, err = pmd(["--config", path] + QUICK)
check(rc == 0, f"a UTF-8 BOM and CRLF line ends: the scenario runs (rc {rc}: {err.strip()[:300]!r})")

# ---- values only their meaning can refuse --------------------------------------------------
for args, needles in [
    (["--stressors", "fault,bogus"], ["--stressors", "unknown stressor 'bogus'"]),
    (["--stressors", ","], ["--stressors", "invalid value ','"]),
    (["--cpu-nodes", "bogus"], ["--cpu-nodes", "invalid value 'bogus'"]),
    (["--cpu-nodes", "63"], ["--cpu-nodes", "'63'"]),
    (["--mem-policy", "bind:"], ["--mem-policy", "'bind:'"]),
    (["--mem-policy", "bind:63"], ["--mem-policy", "'bind:63'"]),
    (["--mem-policy", "preferred:0,1"], ["--mem-policy", "preferred takes one node"]),
    (["--json", "/nonexistent/dir/r.json"], ["--json", "/nonexistent/dir/r.json", "folder"]),
    (["--ktap", "/nonexistent/dir/r.ktap"], ["--ktap", "/nonexistent/dir/r.ktap"]),
    (["--json", tmp], ["--json", "it is a directory"]),
    (["--jsonl", "/nonexistent/dir/r.jsonl"], ["--jsonl", "cannot write"]),
    (["--json", "-", "--ktap", "-"], ["--json - and --ktap - both want stdout"]),
    (["--json", "-", "--jsonl", "-"], ["--json - and --jsonl - both want stdout"]),
    (["--jsonl", "-", "--ktap", "-"], ["--jsonl - and --ktap - both want stdout"]),
    # two outputs in one file: the report overwrote the time series
    (["--json", f"{tmp}/same.out", "--jsonl", f"{tmp}/same.out"],
     ["--json", "--jsonl", "same.out", "are one file"]),
    (["--json", f"{tmp}/r.out", "--ktap", f"{tmp}/./r.out"], ["--json", "--ktap", "are one file"]),
    (["--jsonl", f"{tmp}/t.out", "--ktap", f"{tmp}/../{os.path.basename(tmp)}/t.out"],
     ["--jsonl", "--ktap", "are one file"]),
    (["--replay", tmp], [tmp, "not a regular file"]),
    (["--replay", "/dev/null"], ["/dev/null", "not a regular file"]),
    (["--quiet=maybe"], ["--quiet", "invalid value 'maybe'", "on|off"]),
    (["--no-verify=on"], ["--no-verify", "a --no- flag takes no value"]),
    (["--no-threads"], ["--no-threads", "only on/off options"]),
    (["--threads", "4\n5"], ["--threads", "'4\\x0a5'"]),
    (["--inject", "stale:1:600"], ["--inject", "page must be below 512"]),
]:
    refused(args + QUICK, needles, " ".join(args).replace("\n", "\\n"))
rc, out, err = pmd(["--threads", "4\x1b[2J"] + QUICK)
check(rc == 2 and "\x1b" not in err and "\\x1b" in err,
      f"control bytes of a value are shown escaped, never sent to the terminal ({err.strip()!r})")

# ---- combinations a stressor's setup refuses (after the arena is mapped, still exit 2) ------
for args, needles in [
    (["--fault-chunks", "5", "--size", "8M"], ["fault:", "need 5 chunk(s) each, the arena has 4"]),
    (["--threads", "200", "--fault-group", "1", "--size", "8M"], ["fault:", "raise --size"]),
    (["--stressors", "fault,zap,split", "--fault-chunks", "9", "--size", "16M"],
     ["fault:", "the arena has 8"]),
]:
    rc, out, err = pmd(args + ["--duration", "300ms", "--progress", "off", "--quiet"])
    lines = [x for x in err.splitlines() if x.strip()]
    check(rc == 2 and lines and all(n in lines[-1] for n in needles),
          f"setup refuses {' '.join(args)}: exit 2 with the reason ({err.strip()[:300]!r})")

# nothing a refused run may leave: no report file
path = os.path.join(tmp, "refused.json")
rc, out, err = pmd(["--fault-chunks", "5", "--size", "8M", "--json", path] + QUICK[:2])
check(rc == 2 and not os.path.exists(path), "a refused run writes no report")

# the folder of --json goes away during the run: said with the reason, and not exit 0
gone = tempfile.mkdtemp(prefix="pmd-gone-")
p = subprocess.Popen([PMDSTRESS, "--json", os.path.join(gone, "r.json"), "--duration", "1500ms",
                      "--threads", "3", "--size", "8M", "--progress", "off", "--quiet"],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
time.sleep(0.5)
os.rmdir(gone)
out, err = p.communicate(timeout=60)
check(p.returncode == 5 and "cannot write the JSON report" in err and
      "No such file or directory" in err and "a report asked for is missing" in err,
      f"a report that cannot be written at the end: exit 5 with the reason "
      f"(rc {p.returncode}: {err.strip()!r})")

for f in os.listdir(tmp):
    os.unlink(os.path.join(tmp, f))
os.rmdir(tmp)
done()
