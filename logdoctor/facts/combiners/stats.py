"""The periodic stats lines -> throughput, KV usage and queue series, per process, warm-up excluded.

    SchedulerStats(generation_throughput=18.2, running=1, waiting=0)  -> throughput.per_request += 18.2

Processes that also printed spec-decode metrics count as "with speculation", the others of the same
input as "without", so one paste of two server runs can be compared.

vLLM's `Avg prompt throughput: P tokens/s, Avg generation throughput: G tokens/s` over every interval
    -> throughput.prompt_ratio = sum(P) / sum(G): prompt tokens the engine prefilled per generated token
"""

from __future__ import annotations

import statistics

from logdoctor.events import EventBase, EventLog, SchedulerStats, SpecDecodeStats
from logdoctor.facts.combiner import Combiner
from logdoctor.facts.profile import ProfileBuilder
from logdoctor.facts.series import Series

ProcessKey = tuple[str, int | None]


class Stats(Combiner):
    reads = (SchedulerStats, SpecDecodeStats)
    produces = (
        "throughput.intervals",
        "throughput.generation",
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
        # Held compressed (events.EventLog) and read back in one pass at finish: a log of a million stats lines
        # would otherwise hold a million pydantic events here.
        self.stats_by_pid: dict[ProcessKey, EventLog] = {}
        self.spec_pids: set[ProcessKey] = set()

    def add(self, ev: EventBase) -> None:
        key = (ev.source, ev.process.pid if ev.process is not None else None)
        if isinstance(ev, SchedulerStats):
            held = self.stats_by_pid.get(key)
            if held is None:
                held = self.stats_by_pid[key] = EventLog()
            held.append(ev)
        else:
            self.spec_pids.add(key)

    def finish(self) -> None:
        b, stats_by_pid, spec_pids = self.b, self.stats_by_pid, self.spec_pids
        total = sum(len(v) for v in stats_by_pid.values())
        if not total:
            return
        b.set("throughput.intervals", float(total), None, "stats lines")
        ratio = _PromptRatio()
        spec_sources = {src for src, _ in spec_pids}
        for key, values in stats_by_pid.items():
            has_spec = key in spec_pids or (key[1] is None and key[0] in spec_sources)
            spec_series = "throughput.with_spec" if has_spec else "throughput.without_spec"
            steady = _Steady()
            active = Series()  # generation tok/s of the decode intervals that generated
            first_decode: SchedulerStats | None = None
            for s in values:
                assert isinstance(s, SchedulerStats)
                ratio.add(s)
                if s.format != "sglang-prefill":
                    first_decode = first_decode or s
                    for kept in steady.add(s):
                        _append_steady(b, kept, spec_series if spec_pids else None)
                    if s.generation_throughput:
                        active.append(s.generation_throughput)
                if s.kv_cache_usage is not None:
                    b.append("kv.usage", s.kv_cache_usage, s, "stats lines")
                if s.cpu_kv_cache_usage is not None:
                    b.append("kv.cpu_usage", s.cpu_kv_cache_usage, s, "stats lines")
                if s.running is not None and s.format != "sglang-prefill":
                    b.append("sched.running", float(s.running), s, "stats lines")
                waiting = s.waiting if s.waiting is not None else s.queue
                if waiting is not None:
                    b.append("sched.waiting", float(waiting), s, "stats lines")
                if s.swapped is not None:
                    b.append("sched.swapped", float(s.swapped), s, "stats lines")
            for kept in steady.end():
                _append_steady(b, kept, spec_series if spec_pids else None)
            if len(active) >= 3 and first_decode is not None:
                median = statistics.median(active[1:])
                if median > 0:
                    b.set("throughput.first_interval_ratio", active[0] / median, first_decode, "first stats interval")
        ratio.finish(b)


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


def _append_steady(b: ProfileBuilder, s: SchedulerStats, spec_series: str | None) -> None:
    b.append("throughput.generation", s.generation_throughput, s, "stats lines")
    if s.running == 1 and (s.waiting or 0) == 0:
        b.append("throughput.per_request", s.generation_throughput, s, "stats lines with one running request")
    if spec_series is not None:
        b.append(spec_series, s.generation_throughput, s, "stats lines")


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
