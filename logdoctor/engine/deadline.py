"""The time one input's diagnosis may take (`--max-seconds`, docs/security.md): checked before each rule and
between the stages after them, so that a rule set or an input that would run for ever stops with one line:

    x.log: stopped after 1800 s diagnosing (at rule cuda-graphs-off, 12 of 80): over --max-seconds (raise it ...)

The read and parse of the input have their own clock of the same length (logdoctor/sources/local.py).
"""

from __future__ import annotations

import time

from logdoctor.errors import InputError


class Deadline:
    """`seconds` from `started` (a `time.monotonic()` value; now by default); 0 seconds: no limit."""

    def __init__(self, seconds: float, what: str, started: float | None = None) -> None:
        self.seconds = seconds
        self.what = what
        self.started = time.monotonic() if started is None else started

    def check(self, where: str) -> None:
        """Raise InputError (exit 2) when the time is up; `where` says what was being done."""
        if self.seconds > 0 and time.monotonic() - self.started > self.seconds:
            raise InputError(
                f"{self.what}: stopped after {self.seconds:g} s diagnosing ({where}): over --max-seconds "
                "(raise it to diagnose longer)"
            )
