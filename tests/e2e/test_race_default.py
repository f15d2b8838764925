#!/usr/bin/env python3
# labels: e2e
# timeout: 120
"""The default race, as a user runs it: `pmdstress --threads 64` for the
default time; assert on the JSON report. The race is what configs/race.ini
lists: the storm and each partner safe without root (toggle, zap, split,
collapse, populate, pin, lock, softdirty, procwalk, fork; ksm where ksmd
already runs; migrate where there are two NUMA nodes) ran, at no more than
its rate, with ordered latency percentiles; the root-only, opt-in sysfs
partner is not in it. "THP happened"
is pmdstress's own per-chunk classification, never a system-wide counter
another process may have raised. With THP disabled system-wide the race is
not THP vs PTE: the test skips (77) once its other checks passed."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import pmdtest  # noqa: E402
from pmdtest import check, done, run, skip, thp_available  # noqa: E402

# each partner of the default race and a latency it must have measured in 10 s
PARTNERS = {"toggle": "chunk_call", "zap": "dontneed_call", "split": "protect_call",
            "collapse": "call", "populate": "write_call", "pin": "splice_call",
            "lock": "lock_call", "ksm": "check", "softdirty": "clear",
            "migrate": "move_chunk", "procwalk": "smaps_read", "fork": "fork"}
# the one skip a partner may have here: a kernel without the feature it drives
KERNEL_LACKS = {"collapse": ("kernel lacks MADV_COLLAPSE", "kernel without transparent huge pages"),
                "populate": ("kernel lacks MADV_POPULATE_READ",),
                # the default never starts ksmd (it merges the whole machine's memory)
                "ksm": ("kernel without KSM", "ksmd is not running"),
                # a machine without a second NUMA node (this development VM)
                "migrate": ("migration needs two NUMA nodes",)}


def ordered(lat):
    return lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p99_9"] <= lat["max"]


def check_partner(name, main_lat):
    s = r.stressor(name)
    if not check(s is not None, f"{name} is part of the default race"):
        return
    if s["status"] == "skipped" and any(w in (s.get("reason") or "")
                                        for w in KERNEL_LACKS.get(name, ())):
        print(f"# {name} skipped: {s['reason']}")
        return
    check(s["status"] == "ran" and s["workers"] == 1,
          f"{name} ran with its 1 worker: status {s['status']} {s.get('reason', '')}")
    rate = int(d["options"]["stressors"].get(name, {}).get("rate", "0"))
    # softdirty's rate paces its clears; its ops count the chunk checks between them too
    paced = (s["ops_per_s"] if name != "softdirty" else
             (r.counter(name, "clears") + r.counter(name, "referenced")) / d["duration_s"])
    check(s["ops"] > 0 and 0 < paced <= rate * 1.05 + 1,
          f"{name}: {s['ops']} ops, {paced:.1f}/s paced, at most its rate {rate}")
    lats = s.get("latency", {})
    check(main_lat in lats and lats[main_lat]["count"] > 0,
          f"{name}: latency {main_lat} measured ({lats.get(main_lat, {}).get('count')} calls)")
    bad = {k: v for k, v in lats.items() if v["count"] > 0 and not ordered(v)}
    check(not bad, f"{name}: every latency's percentiles ordered, min <= p50 <= p90 <= p99 "
          f"<= p99.9 <= max {bad}")

r = run(["--threads", "64", "--progress", "plain"], timeout=90)
d = r.doc
check(r.rc == 0, "pmdstress --threads 64 exits 0" + ("" if r.rc == 0 else f"\n{r.show()}"))
check(d is not None, "a JSON report was written")
if d is None:
    done()
check(d["schema"] == "pmdstress-report" and d["schema_version"] == 1, "schema and version")
check(9.5 <= d["duration_s"] <= 12, f"the default run is bounded at about 10 s ({d['duration_s']:.2f}s)")
check(d["stop_reason"] == "duration", "stopped by its duration")
check(d["verdict"]["status"] == "clean" and d["verdict"]["exit_code"] == 0, "verdict clean")
check(d["threads"] == 64, "64 threads ran")
check(d["seed"].startswith("0x") and int(d["seed"], 16) != 0, "the seed is recorded")
check(d["options"]["global"]["threads"] == "64", "options echo --threads")
check("fault" in d["options"]["stressors"], "options echo the fault stressor's block")
check(d["system"]["kernel"]["release"] == os.uname().release, "kernel release recorded")
check("enabled" in d["system"]["thp"], "THP sysfs settings recorded")
f = r.stressor("fault")
check(f and f["status"] == "ran", "fault ran")
check(f["ops"] > 0 and f["ops_per_s"] > 0, f"pages written: {f['ops']}")
check(f["faults"] > 0, f"faults counted by the workers: {f['faults']}")
check(r.counter("fault", "rounds") > 10, f"rounds: {r.counter('fault', 'rounds')}")
check(r.counter("fault", "collisions") > 0,
      f"touch windows overlapped in {r.counter('fault', 'collisions')} rounds")
check(r.counter("fault", "bad_slots") == 0, "no bad slots")
lat = f["latency"]["first_touch"]
check(lat["count"] > 0 and ordered(lat), f"first_touch percentiles ordered: {lat}")
# a round's chunk is read once between rounds, not again before the next round
# (stress/fault.c, finish_round's keep), where each group races all its chunks
# every round: on up to 3 CPUs the default's groups (as many racers as CPUs) have
# one chunk each of the 32; with more CPUs a group alternates between chunks and
# looks at the next one too. A second look only when a group's turn starts again
# (100 ms turns: about 100 in 10 s); before the keep, two a round.
rounds, looks = r.counter("fault", "rounds"), f["latency"]["verify"]["count"]
if len(os.sched_getaffinity(0)) <= 3:
    check(rounds <= looks <= 1.25 * rounds + 128,
          f"the storm verified {looks} times in {rounds} rounds: once a round")
else:
    check(rounds <= looks <= 2 * rounds + 128,
          f"the storm verified {looks} times in {rounds} rounds: at most twice a round")
check(r.vmstat("pgfault", 0) > 0, "vmstat pgfault delta > 0")

names = [s["name"] for s in d["stressors"]]
check(sorted(names) == sorted(["fault"] + list(PARTNERS)),
      f"the default race is the storm and its six partners: {names}")
check("sysfs" not in names and "sysfs" not in d["options"]["stressors"],
      "no sysfs stressor: it is root-only and opt-in, never in the default race")
for name, main_lat in PARTNERS.items():
    check_partner(name, main_lat)

# the workers' counts next to the kernel's: the text line and the JSON block agree
rec = d["reconcile"]
check(rec["worker_faults"] == sum(s.get("faults", 0) for s in d["stressors"]) and
      rec["thp_chunks_verified"] == sum(s["thp_coverage"]["thp"] for s in d["stressors"]
                                        if "thp_coverage" in s),
      f"reconcile: worker faults and PMD-mapped chunks are the stressors' sums ({rec})")
check(rec["vmstat_pgfault"] >= rec["worker_faults"] > 0,
      f"reconcile: the kernel counted at least the workers' faults ({rec})")
check(f"reconcile: workers counted {rec['worker_faults']} faults, the kernel "
      f"{rec['vmstat_pgfault']} (pgfault" in r.out, "the text report prints the same reconcile line")

check(d["events"]["total"] == 0 and d["events"]["kept"] == [], "no events")
check("verdict: clean (exit 0)" in r.out, "text report ends with the verdict")
check("[" in r.out and "ops" in r.out and "faults" in r.out, "periodic status lines printed")
if not thp_available():
    if pmdtest._failed:
        done()
    skip("THP is disabled system-wide: the default race is not THP vs PTE here")
# the storm's own chunks, classified when verified, and the arena's share at the end
check(f["thp_coverage"]["thp"] > 0, f"THP-mapped chunks seen by the storm: {f['thp_coverage']}")
# zap's subranges and toggle's unaligned flips land inside rounds: they split
# a round's huge PMD, and the chunk ends as pieces of a huge page mapped by
# PTEs: mixed
check(f["thp_coverage"]["mixed"] > 0,
      f"mixed chunks seen by the storm (a PMD split inside a round): {f['thp_coverage']}")
# Each chunk the storm verified PMD-mapped got its huge page in that round
# (every round starts from pmd_none): from a huge fault (thp_fault_alloc) or
# a collapse (khugepaged, MADV_COLLAPSE: thp_collapse_alloc). The counters
# are system-wide and other processes only add to them, so the storm's
# count can only be at most their sum. The storm's own count, not the
# reconcile sum: fork counts the chunks it froze, which are the storm's
# huge pages seen a second time.
rec_huge = rec["vmstat_thp_fault_alloc"] + max(r.vmstat("thp_collapse_alloc", 0), 0)
check(f["thp_coverage"]["thp"] <= rec_huge,
      f"reconcile: the storm's {f['thp_coverage']['thp']} PMD-mapped chunks are at most the "
      f"huge pages the kernel allocated: thp_fault_alloc {rec['vmstat_thp_fault_alloc']} + "
      f"thp_collapse_alloc {r.vmstat('thp_collapse_alloc', 0)}")
# THP is available (enabled madvise or always) and the race's arena is
# MADV_HUGEPAGE: the storm's huge faults show in the kernel's own counter
check(d["options"]["global"]["thp"] == "madvise" and rec["vmstat_thp_fault_alloc"] > 0,
      f"thp=madvise arena, THP {d['system']['thp']['enabled']}: huge faults happened, "
      f"thp_fault_alloc {rec['vmstat_thp_fault_alloc']}")
check(d["arena"]["thp_share_end"] is not None and d["arena"]["thp_share_end"] > 0,
      f"THP share of the arena at the end {d['arena']['thp_share_end']}")
# The seed race: a THP-path and a PTE-path fault on one empty PMD, provoked by
# the default command with what this kernel allows, and said with its evidence
race = d.get("race")
check(race is not None, "the report has a race object")
if race:
    check(race["rounds"] == r.counter("fault", "rounds") and
          race["collided"] == r.counter("fault", "collisions"),
          f"race: rounds and collided are the storm's ({race['rounds']}, {race['collided']})")
    check(race["mechanisms"], f"the default race has a seed-race mechanism here: "
          f"{race['mechanisms']} {race['mechanisms_why']}")
    check(race["seed_rounds"] > 0 and race["seed_race"] > 0,
          f"seed race provoked: {race['seed_race']} of {race['rounds']} rounds "
          f"({race['seed_rounds']} seed rounds), evidence {race['evidence']['seed_race']}")
    how = race["evidence"]["seed_race"]
    check(how == ("traced" if pmdtest.is_root() else "inferred") or
          (how == "inferred" and "trace_off" in race["evidence"]),
          f"evidence: {how} {race['evidence'].get('trace_off', '')}")
    check(f"seed race: {race['seed_race']} of {race['rounds']} rounds had a THP-path and a "
          f"PTE-path fault on one empty PMD" in r.out, "the text report says so in one line")
done()
