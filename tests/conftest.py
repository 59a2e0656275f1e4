"""Hypothesis profiles: no per-example deadline (the test machine's two cores are shared, and timing is
asserted where it matters, as a bound); `FUZZ_EXAMPLES=N` sets the examples of the fuzz harness (`make fuzz`)."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile("logdoctor", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("logdoctor")
