"""Engine failures, workers stuck on shared memory, and the performance warnings the engine printed.

EngineFailure(kind="cuda-oom") x 2            -> failure.kinds = [cuda-oom], failure.count = 2
`No available shared memory broadcast block`  -> compile.shm_waits (+ stall.serving_waits once serving, or in an
                                                 excerpt that shows no start: workers that stopped answering)
    `... found in 60 seconds` during a start     -> compile.startup_wait_seconds += 60 (workers still compiling)
EngineFailure(kind="shutdown")                -> nothing here: a stop is not a failure (derived.py reads it)
EngineFailure(kind="request-error")           -> nothing here: one request's error, the server served on
EngineFailure(kind="reported-hang")           -> failure.reported_hang = True (the reporter's words, no failure line)
a log with no failure line                    -> failure.count = 0 (the absence of a failure line is evidence)
"""

from __future__ import annotations

import re

from logdoctor.events import (
    CompileTime,
    EngineFailure,
    EngineVersion,
    EventBase,
    FailureKind,
    PerfWarning,
    SchedulerStats,
    StartupConfig,
    WarningTopic,
)
from logdoctor.facts.combiner import Combiner
from logdoctor.facts.profile import ProfileBuilder

_SHM_WAIT: FailureKind = "shm-broadcast-wait"
_WAIT_SECONDS_RE = re.compile(r"broadcast block found in (\d+(?:\.\d+)?) seconds")
_SHUTDOWN: FailureKind = "shutdown"
_REQUEST_ERROR: FailureKind = "request-error"
_REPORTED_HANG: FailureKind = "reported-hang"


class Failures(Combiner):
    reads = (SchedulerStats, EngineFailure, PerfWarning, EngineVersion, StartupConfig, CompileTime)
    produces = (
        "failure.kinds",
        "failure.count",
        "failure.reported_hang",
        "compile.shm_waits",
        "compile.startup_wait_seconds",
        "stall.serving_waits",
        "warnings.topics",
    )

    def __init__(self, b: ProfileBuilder) -> None:
        super().__init__(b)
        self.failures: list[FailureKind] = []
        self.warnings: list[WarningTopic] = []
        self.serving_sources: set[str] = set()  # sources whose stats lines have begun: the server is serving
        # sources that show a start (a version line, the configuration, loading or compiling): a wait there before
        # serving is the start still running; in an excerpt that shows neither a start nor serving it is not
        self.starting_sources: set[str] = set()

    def add(self, ev: EventBase) -> None:
        b = self.b
        if isinstance(ev, EngineVersion | StartupConfig | CompileTime):
            if not isinstance(ev, EngineVersion) or ev.version:
                self.starting_sources.add(ev.source)
        elif isinstance(ev, SchedulerStats):
            if ev.source not in self.serving_sources:
                self.serving_sources.add(ev.source)
                b.set("stall.serving_waits", 0.0, None, "no waits after serving started", keep_first=True)
        elif isinstance(ev, EngineFailure):
            if ev.kind in (_SHUTDOWN, _REQUEST_ERROR):
                return
            if ev.kind == _REPORTED_HANG:
                b.set("failure.reported_hang", True, ev, ev.message, keep_first=True)
                return
            self.failures.append(ev.kind)
            if ev.kind == _SHM_WAIT:
                waits = (b.value("compile.shm_waits") or 0.0) + 1.0
                b.set("compile.shm_waits", waits, ev, ev.message)
                if ev.source in self.serving_sources or ev.source not in self.starting_sources:
                    # vLLM: "some processes are hanging or doing some time-consuming work"; with no start in the
                    # log to do that work, the workers stopped answering
                    stalls = (b.value("stall.serving_waits") or 0.0) + 1.0
                    b.set("stall.serving_waits", stalls, ev, ev.message)
                else:
                    # Before the first stats line the wait is start-up: vLLM's own text says the workers are
                    # "doing some time-consuming work (e.g. compilation, weight/kv cache quantization)".
                    m = _WAIT_SECONDS_RE.search(ev.message or "")
                    waited = (b.value("compile.startup_wait_seconds") or 0.0) + (float(m.group(1)) if m else 60.0)
                    b.set("compile.startup_wait_seconds", waited, ev, ev.message)
            else:
                kinds = sorted(set(self.failures) - {_SHM_WAIT})
                b.set("failure.kinds", kinds, ev, ev.message, keep_first=True)
                b.replace("failure.kinds", kinds)
                b.add_ref("failure.kinds", ev)
        elif isinstance(ev, PerfWarning):
            self.warnings.append(ev.topic)
            topics = sorted(set(self.warnings))
            b.set("warnings.topics", topics, ev, ev.message, keep_first=True)
            b.replace("warnings.topics", topics)
            b.add_ref("warnings.topics", ev)

    def finish(self) -> None:
        if self.failures and "failure.kinds" in self.b.facts:
            count = float(len([f for f in self.failures if f != _SHM_WAIT]))
            self.b.set("failure.count", count, None, "failure lines")
        elif "failure.count" not in self.b.facts:
            # Every failure kind has a line of its own; none was read, so none happened in this log.
            self.b.set("failure.count", 0.0, None, "no failure line in the log")
