"""The periodic stats lines -> throughput, KV usage and queue series, per process, warm-up excluded.

    SchedulerStats(generation_throughput=18.2, running=1, waiting=0)  -> throughput.per_request += 18.2

Processes that also printed spec-decode metrics count as "with speculation", the others of the same
input as "without", so one paste of two server runs can be compared.

vLLM's `Avg prompt throughput: P tokens/s, Avg generation throughput: G tokens/s` over every interval
    -> throughput.prompt_ratio = sum(P) / sum(G): prompt tokens the engine prefilled per generated token
"""

from __future__ import annotations

import statistics

from logdoctor.events import EventBase, SchedulerStats, SpecDecodeStats
from logdoctor.facts.combiner import Combiner
from logdoctor.facts.profile import ProfileBuilder
from logdoctor.facts.series import Series, concat
from logdoctor.facts.values import Fact

ProcessKey = tuple[str, int | None]


class Stats(Combiner):
    reads = (SchedulerStats, SpecDecodeStats)
    produces = (
        "throughput.intervals",
        "throughput.generation",
        "throughput.batch",
        "throughput.per_request",
        "throughput.with_spec",
        "throughput.without_spec",
        "throughput.first_interval_ratio",
        "throughput.prompt_ratio",
        "kv.usage",
        "kv.cpu_usage",
        "sched.running",
        "sched.waiting",
        "sched.swapped",
    )

    def __init__(self, b: ProfileBuilder) -> None:
        super().__init__(b)
        # Each process's series as its stats lines stream by (bounded: facts/series.py), joined in process order
        # at finish, as if appended process by process: no stats event is held.
        self.processes: dict[ProcessKey, _Process] = {}
        self.spec_pids: set[ProcessKey] = set()
        self.ratio = _PromptRatio()

    def add(self, ev: EventBase) -> None:
        key = (ev.source, ev.process.pid if ev.process is not None else None)
        if isinstance(ev, SchedulerStats):
            process = self.processes.get(key)
            if process is None:
                process = self.processes[key] = _Process()
            process.add(ev)
            self.ratio.add(ev)
        else:
            self.spec_pids.add(key)

    def finish(self) -> None:
        b, processes, spec_pids = self.b, self.processes, self.spec_pids
        total = sum(p.intervals for p in processes.values())
        if not total:
            return
        b.set("throughput.intervals", float(total), None, "stats lines")
        self.ratio.finish(b)
        spec_sources = {src for src, _ in spec_pids}
        for process in processes.values():
            process.end()
        for name in _SERIES:
            _join(b, name, [p.series.facts.get(name) for p in processes.values()])
        if spec_pids:
            # The steady generation tok/s of each process, split by whether it printed spec-decode lines.
            with_spec: list[Fact | None] = []
            without_spec: list[Fact | None] = []
            for key, process in processes.items():
                has_spec = key in spec_pids or (key[1] is None and key[0] in spec_sources)
                (with_spec if has_spec else without_spec).append(process.series.facts.get("throughput.generation"))
            _join(b, "throughput.with_spec", with_spec)
            _join(b, "throughput.without_spec", without_spec)
        for process in processes.values():
            active, first = process.active, process.first_decode
            if len(active) >= 3 and first is not None:
                median = statistics.median(active[1:])
                if median > 0:
                    b.set("throughput.first_interval_ratio", active[0] / median, first, "first stats interval")


# The series each process's stats lines give, joined over the processes at finish.
_SERIES = (
    "throughput.generation",
    "throughput.batch",
    "throughput.per_request",
    "kv.usage",
    "kv.cpu_usage",
    "sched.running",
    "sched.waiting",
    "sched.swapped",
)


def _join(b: ProfileBuilder, name: str, parts: list[Fact | None]) -> None:
    """One series fact from the processes' parts, in process order: values concatenated, the first three lines."""
    found = [p for p in parts if p is not None]
    if found:
        refs = [r for p in found for r in p.refs][:3]
        b.put(name, Fact(value=concat(p.value for p in found), refs=refs, origin=found[0].origin))


class _Process:
    """One process's stats lines, summed up as they come."""

    def __init__(self) -> None:
        self.series = ProfileBuilder()  # this process's own series facts (a scratch builder, never the profile)
        self.intervals = 0
        self.steady = _Steady()
        self.active = Series()  # generation tok/s of the decode intervals that generated
        self.first_decode: SchedulerStats | None = None

    def add(self, s: SchedulerStats) -> None:
        self.intervals += 1
        series = self.series
        if s.format != "sglang-prefill":
            self.first_decode = self.first_decode or s
            for kept in self.steady.add(s):
                _append_steady(series, kept)
            if s.generation_throughput:
                self.active.append(s.generation_throughput)
        if s.kv_cache_usage is not None:
            series.append("kv.usage", s.kv_cache_usage, s, "stats lines")
        if s.cpu_kv_cache_usage is not None:
            series.append("kv.cpu_usage", s.cpu_kv_cache_usage, s, "stats lines")
        if s.running is not None and s.format != "sglang-prefill":
            series.append("sched.running", float(s.running), s, "stats lines")
        waiting = s.waiting if s.waiting is not None else s.queue
        if waiting is not None:
            series.append("sched.waiting", float(waiting), s, "stats lines")
        if s.swapped is not None:
            series.append("sched.swapped", float(s.swapped), s, "stats lines")

    def end(self) -> None:
        for kept in self.steady.end():
            _append_steady(self.series, kept)


class _Steady:
    """Warm-up dropped as the intervals stream by: the first interval of a process that generated, when it has at
    least three more such intervals, and idle intervals. Holds at most three intervals, until the fourth shows
    whether the first is dropped."""

    def __init__(self) -> None:
        self.held: list[SchedulerStats] = []
        self.streaming = False  # four active intervals seen: the first was dropped

    def add(self, s: SchedulerStats) -> list[SchedulerStats]:
        if (s.generation_throughput or 0) <= 0:
            return []
        if self.streaming:
            return [s]
        self.held.append(s)
        if len(self.held) < 4:
            return []
        self.streaming = True
        kept, self.held = self.held[1:], []
        return kept

    def end(self) -> list[SchedulerStats]:
        kept, self.held = self.held, []
        return kept


def _append_steady(b: ProfileBuilder, s: SchedulerStats) -> None:
    b.append("throughput.generation", s.generation_throughput, s, "stats lines")
    # the same interval's running requests, so a rate is compared with its own batch (0: none left, or not said)
    b.append("throughput.batch", float(s.running or 0), s, "stats lines")
    if s.running == 1 and (s.waiting or 0) == 0:
        b.append("throughput.per_request", s.generation_throughput, s, "stats lines with one running request")


class _PromptRatio:
    """Both rates are averages over the same interval, so their sums compare the tokens: a ratio far above 1
    means long prompts re-sent for short answers (agents, multi-turn chat, RAG), where prefix reuse pays."""

    def __init__(self) -> None:
        self.pairs = 0
        self.prompt = 0.0  # summed in the order met, as `sum` would
        self.generated = 0.0

    def add(self, s: SchedulerStats) -> None:
        if s.format.startswith("vllm") and s.prompt_throughput is not None and s.generation_throughput is not None:
            self.pairs += 1
            self.prompt += s.prompt_throughput
            self.generated += s.generation_throughput

    def finish(self, b: ProfileBuilder) -> None:
        if self.pairs >= 3 and self.generated > 0:
            b.set(
                "throughput.prompt_ratio", round(self.prompt / self.generated, 3), None, f"{self.pairs} stats intervals"
            )
