#!/usr/bin/env python3
# labels: e2e results
# timeout: 180
"""pmdstress run --replay A.json: the new report's options and seed equal the
old one's (also for a seed the first run picked itself: options.global.seed
echoes the seed used), options given after --replay override, a replayed
injection is caught again and its events carry the seed, the report file is
never overwritten, what differs in the environment is printed and kept in the
new report's "replay" block, and a broken report is one line with exit 2."""
import copy
import hashlib
import json
import os
import shutil
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, fail, run  # noqa: E402

tmp = tempfile.mkdtemp(prefix="pmdreplay-")
OUTPUTS = ("json", "ktap", "jsonl")  # where output goes is not an option of the run


def save(name, doc):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def same_options(a, b, what, allow=(), allow_fault=()):
    ga = {k: v for k, v in a["options"]["global"].items() if k not in OUTPUTS + tuple(allow)}
    gb = {k: v for k, v in b["options"]["global"].items() if k not in OUTPUTS + tuple(allow)}
    diff = {k: (ga.get(k), gb.get(k)) for k in set(ga) | set(gb) if ga.get(k) != gb.get(k)}
    check(not diff, f"{what}: global options equal {diff}")
    sa, sb = copy.deepcopy(a["options"]["stressors"]), copy.deepcopy(b["options"]["stressors"])
    for k in allow_fault:
        sa["fault"].pop(k, None)
        sb["fault"].pop(k, None)
    check(sa == sb,
          f"{what}: stressor options equal\n{a['options']['stressors']}\n{b['options']['stressors']}")


# a run with a seed it picked itself and non-default options
first = ["--threads", "3", "--duration", "700ms", "--size", "8M", "--progress", "off", "--quiet",
         "--stressors", "fault", "--fault-order", "backward", "--fault-latency", "page",
         "--thp", "toggle"]
a = run(first)
if not check(a.rc == 0 and a.doc, f"the original run is clean\n{a.show()}"):
    fail("no clean report to replay")
check("--seed" not in a.doc["argv"] and a.doc["seed"].startswith("0x"),
      "the original run picked its own seed")
check(a.doc["options"]["global"]["seed"] == a.doc["seed"],
      f"options.global.seed is the seed used ({a.doc['options']['global']['seed']}), not 0")
pa = save("a.json", a.doc)
digest = hashlib.sha256(open(pa, "rb").read()).hexdigest()

r = run(["run", "--replay", pa])
check(r.rc == 0 and r.doc, f"the replay runs clean\n{r.show()}")
check(r.doc["seed"] == a.doc["seed"], f"same seed {r.doc['seed']} == {a.doc['seed']}")
same_options(a.doc, r.doc, "replay")
check(r.doc["scenario"] == a.doc["scenario"], "same scenario name")
check([s["name"] for s in r.doc["stressors"]] == [s["name"] for s in a.doc["stressors"]],
      "same stressors, in the same order")
check(r.doc.get("replay_of") == pa, f"the new report says what it replays ({r.doc.get('replay_of')})")
rp = r.doc.get("replay") or {}
check(rp.get("of") == pa and isinstance(rp.get("differences"), list),
      f"and keeps a replay block: of, differences ({rp})")
check(not [x for x in rp.get("differences", []) if x["what"] in ("kernel release", "machine")],
      f"same machine: no kernel difference listed ({rp.get('differences')})")
check("replaying" in r.err and "the machine matches" in r.err,
      f"the replay says so, and that the machine matches\n{r.err}")
check(hashlib.sha256(open(pa, "rb").read()).hexdigest() == digest,
      "the replayed report is not overwritten (its json option is not carried over)")

# a replay of a replay is the same run again
pr = save("r.json", r.doc)
rr = run(["run", "--replay", pr])
check(rr.rc == 0 and rr.doc["seed"] == a.doc["seed"], "a replay of a replay keeps the seed")
same_options(a.doc, rr.doc, "replay of a replay")

# options after --replay win
o = run(["run", "--replay", pa, "--threads", "2", "--seed", "5", "--fault-order", "forward"])
check(o.rc == 0 and o.doc, f"a replay with overrides runs\n{o.show()}")
g = o.doc["options"]["global"]
check(g["threads"] == "2" and o.doc["seed"] == "0x5" and g["seed"] == "0x5",
      f"--threads and --seed override (threads {g['threads']}, seed {o.doc['seed']})")
check(o.doc["options"]["stressors"]["fault"]["order"] == "forward",
      "a stressor option overrides")
check(o.doc["options"]["stressors"]["fault"]["latency"] == "page",
      "the options not overridden stay the report's")
same_options(a.doc, o.doc, "overrides", allow=("threads", "seed"), allow_fault=("order",))

# the same corruption, injected again, is found again
c = run(["--threads", "4", "--duration", "1s", "--size", "16M", "--progress", "off", "--quiet",
         "--stressors", "fault", "--fault-group", "4", "--seed", "7", "--inject",
         "foreign:3:17:2:1"])
if not check(c.rc == 1 and c.doc and c.doc["events"]["by_class"]["FOREIGN"] == 1,
             f"the original injection run finds its corruption\n{c.show()}"):
    fail("no injection report to replay")
pc = save("c.json", c.doc)
cr = run(["run", "--replay", pc])
check(cr.rc == 1 and cr.doc and cr.doc["events"]["by_class"]["FOREIGN"] == 1,
      f"its replay finds it again\n{cr.show()}")
ev = [(e["chunk"], e["page"], e["slot"]) for e in cr.events() if e.get("class") == "FOREIGN"]
check(ev == [(3, 17, 2)], f"at the same chunk, page and slot {ev}")
for doc, what in ((c.doc, "the original"), (cr.doc, "the replay")):
    seeds = [e.get("seed") for e in doc["events"]["kept"]]
    check(seeds and all(x == doc["seed"] == "0x7" for x in seeds),
          f"{what}: every kept event carries the run's seed {seeds}")

# what differs between the report's machine and this one is printed
d = copy.deepcopy(a.doc)
d["system"]["kernel"]["release"] = "5.10.0-replaytest"
d["system"]["thp"]["enabled"] = "never-test"
d["system"]["cpus_online"] = 128
d["system"]["numa_nodes"] = 4
d["system"]["root"] = not d["system"]["root"]
d["system"]["mthp"]["16kB"] = "always-test"
d["options"]["global"]["duration"] = "200ms"
e = run(["run", "--replay", save("env.json", d)])
check(e.rc == 0, f"a replay on another machine still runs\n{e.show()}")
for what in ["kernel release", "5.10.0-replaytest", "thp.enabled", "never-test", "CPUs online",
             "128 in the report", "NUMA nodes", "root", "mthp.16kB", "always-test",
             "the machine differs"]:
    check(what in e.err, f"environment difference shown: '{what}'")
# and kept in the new report, "now" being what that report's own system block says
if check(e.doc and isinstance((e.doc.get("replay") or {}).get("differences"), list),
         "the replay block lists the differences"):
    diffs = {x["what"]: (x["then"], x["now"]) for x in e.doc["replay"]["differences"]}
    sys_now = e.doc["system"]
    for what, want in [("kernel release", ("5.10.0-replaytest", sys_now["kernel"]["release"])),
                       ("CPUs online", ("128", str(sys_now["cpus_online"]))),
                       ("NUMA nodes", ("4", str(sys_now["numa_nodes"]))),
                       ("thp.enabled", ("never-test", sys_now["thp"]["enabled"])),
                       ("mthp.16kB", ("always-test", sys_now["mthp"].get("16kB", "(absent)")))]:
        check(diffs.get(what) == want, f"replay.differences: {what} {diffs.get(what)} == {want}")
    check(len(diffs) == len(e.doc["replay"]["differences"]) and
          "duration" not in diffs, f"one entry per difference, options are not system ({diffs})")

# broken reports and bad use: one line, exit 2, no run
bad = []


def mutate(name, fn, expect):
    doc = copy.deepcopy(a.doc)
    fn(doc)
    bad.append((save(f"bad-{name}.json", doc), expect))


mutate("value", lambda d: d["options"]["global"].update(threads="many"),
       "options.global.threads: threads: invalid value 'many'")
mutate("unknown-option", lambda d: d["options"]["global"].update(frobnicate="1"),
       "options.global.frobnicate: this pmdstress has no option --frobnicate")
mutate("unknown-stressor", lambda d: d["options"]["stressors"].update(nosuch={}),
       "options.stressors.nosuch: this pmdstress has no stressor 'nosuch'")
mutate("stressor-option", lambda d: d["options"]["stressors"]["fault"].update(bogus="1"),
       "options.stressors.fault.bogus: stressor fault has no option 'bogus'")
mutate("seed", lambda d: d.update(seed="12"), "seed: '12' is not a seed")
mutate("seed-type", lambda d: d.update(seed=12), "seed: expected a string, found an integer")
mutate("no-options", lambda d: d.pop("options"), "options: missing")
mutate("option-type", lambda d: d["options"]["global"].update(threads=3),
       "options.global.threads: expected a string")
mutate("version", lambda d: d.update(schema_version=9), "schema_version: version 9")
trunc = os.path.join(tmp, "bad-truncated.json")
with open(trunc, "w") as f:
    f.write(json.dumps(a.doc)[:500])
bad.append((trunc, "truncated?"))
for path, expect in bad:
    b = run(["run", "--replay", path], json_report=False)
    lines = b.err.strip().splitlines()
    check(b.rc == 2 and len(lines) == 1 and path in lines[0] and expect in lines[0],
          f"{os.path.basename(path)}: exit 2, one line: {b.err.strip()}")
for args, expect in [(["--replay"], "--replay needs a value"),
                     (["--replay", os.path.join(tmp, "none.json")], "cannot open"),
                     (["--replay", pa, "--config", "race"], "do not mix"),
                     (["--replay", pa, "--replay", pa], "given twice"),
                     (["--replay", pa, "--threads", "lots"], "--threads: invalid value 'lots'")]:
    b = run(["run"] + args, json_report=False)
    check(b.rc == 2 and len(b.err.strip().splitlines()) == 1 and expect in b.err,
          f"run {' '.join(os.path.basename(x) for x in args)}: exit 2 ({b.err.strip()})")

shutil.rmtree(tmp, ignore_errors=True)
done()
