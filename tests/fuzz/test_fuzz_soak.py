#!/usr/bin/env python3
# labels: soak fuzz
# timeout: 3600
"""The long fuzz run: each target for 15 minutes (PMD_FUZZ_SECONDS overrides)."""
import os
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzzrun  # noqa: E402
from pmdtest import done  # noqa: E402

seconds = int(os.environ.get("PMD_FUZZ_SECONDS") or 900)
fuzzrun.build()
for target in fuzzrun.TARGETS:
    fuzzrun.fuzz(target, seconds)
done()
