#!/usr/bin/env python3
# labels: e2e
# timeout: 120
"""One seed, one shape, the same random choices: the fault stressor draws
each round's first page from its group's generator, not from the worker
that happens to reach the gate last, so every worker's own stream (its
random-order step, its starting chunk) depends on the seed and the worker
alone. The "choices" counter is a digest of all those choices; two runs of
one seed with a fixed number of rounds must report the same value, and
another seed another one."""
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pmdtest import check, done, run  # noqa: E402

# two groups of three (forward, backward, random), two chunks a round, 30 rounds each
SHAPE = ["--stressors", "fault", "--threads", "6", "--fault-group", "3", "--fault-chunks", "2",
         "--fault-order", "mixed", "--fault-sweeps", "30", "--size", "16M",
         "--duration", "60s", "--progress", "off", "--quiet", "on"]


def choices(seed):
    r = run(SHAPE + ["--seed", seed], timeout=90)
    if not check(r.rc == 0 and r.counter("fault", "rounds") == 60,
                 f"seed {seed}: 60 rounds, clean (rounds {r.counter('fault', 'rounds')})"):
        print(r.show())
    return r.counter("fault", "choices")


a = [choices("0x1234") for _ in range(3)]
b = choices("0x4321")
check(a[0], f"the digest of the choices is reported ({a[0]})")
check(a[0] == a[1] == a[2], f"one seed, three runs, the same choices ({a})")
check(b != a[0], f"another seed, other choices ({b} vs {a[0]})")
done()
