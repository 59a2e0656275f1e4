"""Hypothesis profiles: no per-example deadline (the test machine's two cores are shared, and timing is
asserted where it matters, as a bound); `FUZZ_EXAMPLES=N` sets the examples of the fuzz harness (`make fuzz`)."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

from hypothesis import HealthCheck, settings

# The parsed-condition cache (logdoctor/cache.py) of the tests, and of the logdoctor processes they start, goes to
# a directory of this run's own, never the user's ~/.cache.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="logdoctor-test-cache-")
atexit.register(shutil.rmtree, os.environ["XDG_CACHE_HOME"], True)
os.environ.pop("LOGDOCTOR_NO_CACHE", None)

settings.register_profile("logdoctor", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("logdoctor")
