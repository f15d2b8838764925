#!/usr/bin/env python3
# labels: soak
# timeout: 7500
"""The long soak (opt-in: ctest -L '^soak$'): the compressed soak's checks
(memory flat after the warm-up, the race running, a full report and KTAP
file after SIGTERM) over PMD_SOAK_SECONDS, 2 hours by default."""
import os
import sys

env = dict(os.environ)
env.setdefault("PMD_SOAK_SECONDS", "7200")
here = os.path.dirname(os.path.abspath(__file__))
os.execve(sys.executable, [sys.executable, os.path.join(here, "test_soak_compressed.py")], env)
