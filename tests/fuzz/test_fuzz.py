#!/usr/bin/env python3
# labels: fuzz
# timeout: 1200
"""libFuzzer on the scenario-file path (fuzz_ini), the command line
(fuzz_cli) and the JSON report readers behind compare and replay
(fuzz_report), with ASan, UBSan and leak detection: a bounded run of each
from its seed corpus (configs/*.ini, real reports, hand-made edge cases).
Each target stops after its time or PMD_FUZZ_RUNS inputs (200000), whichever
comes first; PMD_FUZZ_SECONDS sets the time per target; the soak label has a
long run."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzzrun  # noqa: E402
from pmdtest import done  # noqa: E402

seconds = int(os.environ.get("PMD_FUZZ_SECONDS", "0") or 0)
runs = int(os.environ.get("PMD_FUZZ_RUNS", "200000"))
fuzzrun.build()
for target, default in (("fuzz_ini", 20), ("fuzz_cli", 10), ("fuzz_report", 25)):
    fuzzrun.fuzz(target, seconds or default, runs=runs)
done()
