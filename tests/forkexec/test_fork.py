#!/usr/bin/env python3
# labels: e2e
# timeout: 240
"""The fork stressor: forks with copy-on-write checks of frozen chunks, alone
and under the storm; the AIM9 mode (the child exits at once); a MAP_SHARED
arena (checks off, said once); --verify off; bad options; and no child ever
left behind, also when the run is stopped by a signal mid-fork."""
import os
import signal
import sys
import time
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
sys.path.insert(0, os.path.dirname(__file__))
from pmdtest import check, done, run, spawn  # noqa: E402
from children import become_subreaper, children_of, leftovers  # noqa: E402

become_subreaper()
base = ["--size", "16M", "--progress", "off", "--quiet"]


def ordered(lat):
    return lat["count"] > 0 and lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"]


def no_leftovers(what):
    left = leftovers()
    check(not left, f"{what}: no child left behind (zombie or running): {left}")


# alone: nobody else writes the arena, so after ten forks without a written
# chunk (fresh ones are the storm's) it takes fresh ones, two per fork
r = run(base + ["--stressors", "fork", "--duration", "1500ms"])
f = r.stressor("fork")
check(r.rc == 0 and f and f["status"] == "ran", f"fork alone runs clean\n{r.show()}")
ops = f["ops"]
checked, unfrozen = r.counter("fork", "cow_checks"), r.counter("fork", "unfrozen")
check(ops > 10, f"children forked and reaped: {ops}")
check(unfrozen == 10 and checked + unfrozen in (ops, ops + 1),
      f"the first ten forks froze nothing, every later one was COW-checked "
      f"({unfrozen} unfrozen, {checked} checked of {ops})")
check(r.counter("fork", "frozen") == 2 * checked, f"two chunks frozen per check ({r.counter('fork', 'frozen')})")
check(r.counter("fork", "bad_slots") == 0, "no bad slots")
lat = f["latency"]
check(ordered(lat["fork"]) and ordered(lat["reap"]), f"fork and reap percentiles ordered: {lat['fork']}")
# the last fork may have been cut short by the end of the run: timed, killed, not counted
check(lat["fork"]["count"] in (ops, ops + 1) and lat["reap"]["count"] == ops,
      f"one fork and one reap latency per op ({lat['fork']['count']}, {lat['reap']['count']}, {ops})")
# reap_i = fork_i + the rest, for every op: every quantile of reap is at least fork's
check(all(lat["reap"][q] >= lat["fork"][q] for q in ("p50", "p90", "p99", "max")),
      "fork-to-reap is never shorter than the fork() call")
check(lat["cow_write"]["count"] in (checked, checked + 1),
      "the parent wrote the frozen chunks after every checked fork")
check(f["faults"] > 0, f"the parent's post-fork writes faulted (COW): {f['faults']}")
check(r.doc["events"]["total"] == 0, "no events")
no_leftovers("fork alone")

# under the storm: the fork scenario, shortened
r = run(["--config", "fork", "--threads", "4", "--duration", "2s", "--size", "16M",
         "--progress", "off", "--quiet"])
f = r.stressor("fork")
check(r.rc == 0, f"the fork scenario runs clean\n{r.show()}")
check(f["ops"] > 0 and r.counter("fork", "cow_checks") > 0,
      f"forks ({f['ops']}) with COW checks ({r.counter('fork', 'cow_checks')}) under the storm")
check(r.counter("fault", "rounds") > 0 and r.stressor("fault")["ops"] > 0,
      "the storm faulted during the forks")
# the writer thread wrote the frozen chunks while fork() copied them, and every child
# saw a prefix of its writes (a violation is a COW_LEAK event)
check(r.counter("fork", "fork_writes") > 0,
      f"writes made during fork() under the storm: {r.counter('fork', 'fork_writes')}")
check(r.doc["events"]["total"] == 0, f"no events {r.doc['events']['by_class']}")
no_leftovers("fork under the storm")

# AIM9 fork_test: the child exits at once, nothing frozen
r = run(base + ["--stressors", "fork", "--duration", "1s", "--fork-chunks", "0"])
check(r.rc == 0 and r.stressor("fork")["ops"] > 0, f"--fork-chunks 0 forks\n{r.show()}")
check(r.counter("fork", "cow_checks") == 0 and r.counter("fork", "frozen") == 0,
      "--fork-chunks 0: no chunk frozen, no COW check")
check(r.stressor("fork")["latency"]["cow_write"]["count"] == 0, "--fork-chunks 0: no post-fork writes")
no_leftovers("--fork-chunks 0")

# a MAP_SHARED arena shares its pages with the child by design: checks off, said once
r = run(base + ["--stressors", "fork", "--duration", "1s", "--shared"])
check(r.rc == 0 and r.stressor("fork")["ops"] > 0, f"--shared: forks run clean\n{r.show()}")
check(r.counter("fork", "cow_checks") == 0, "--shared: no COW checks")
check(r.err.count("MAP_SHARED") == 1 and "COW checks are off" in r.err,
      f"--shared: said once on stderr\n{r.err[-500:]}")
no_leftovers("--shared")

# without the writer thread nothing writes the frozen chunks during fork()
r = run(base + ["--stressors", "fork", "--duration", "1s", "--fork-writer", "off"])
check(r.rc == 0 and r.counter("fork", "cow_checks") > 0 and r.counter("fork", "fork_writes") == 0,
      f"--fork-writer off: COW-checked forks, no writes during fork()\n{r.show()}")

r = run(base + ["--stressors", "fork", "--duration", "1s", "--verify", "off"])
f = r.stressor("fork")
check(r.rc == 0 and f["ops"] > 0 and f["latency"]["verify"]["count"] == 0,
      f"--verify off: forks, no verification\n{r.show()}")

# stopped by a signal while forking back to back: the child is killed and reaped
p = spawn(["--stressors", "fork", "--duration", "30s", "--size", "16M", "--progress", "off",
           "--fork-chunks", "4"])
most = 0
t_end = time.monotonic() + 1.5
while time.monotonic() < t_end:
    most = max(most, len(children_of(p.pid)))
    time.sleep(0.005)
p.send_signal(signal.SIGTERM)
out, err = p.communicate(timeout=30)
# a clean stop, then the run ends by the signal it got (tests/e2e/test_signals.py)
check(p.returncode == -signal.SIGTERM and "clean, stopped by Terminated" in err,
      f"SIGTERM mid-fork: a clean stop, ended by SIGTERM (rc {p.returncode}) {err[-300:]}")
check(most <= 1, f"one fork worker never has more than one child at a time (saw {most})")
no_leftovers("SIGTERM mid-fork")

# bad values: one line naming the value, exit 2
for args, word in [(["--fork-chunks", "99"], "99"), (["--fork-slots", "0"], "0"),
                   (["--fork-slots", "511"], "511"),  # 510 is the writer thread's slot
                   (["--fork-slots", "512"], "512"), (["--fork-rate", "x"], "'x'"),
                   (["--fork-chunk", "2"], "did you mean")]:
    r = run(["--stressors", "fork"] + args, json_report=False)
    lines = r.err.strip().splitlines()
    check(r.rc == 2 and len(lines) == 1 and word in lines[0],
          f"{' '.join(args)}: exit 2 with one line naming it: {r.err.strip()!r}")
done()
