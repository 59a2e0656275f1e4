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

ProcessKey = tuple[str, int | None]


def _steady(values: list[SchedulerStats]) -> list[SchedulerStats]:
    """Drop warm-up: the first interval of a process when it has enough others, and idle intervals."""
    active = [s for s in values if (s.generation_throughput or 0) > 0]
    if len(active) >= 4:
        active = active[1:]
    return active


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
        self.stats_by_pid: dict[ProcessKey, list[SchedulerStats]] = {}
        self.spec_pids: set[ProcessKey] = set()

    def add(self, ev: EventBase) -> None:
        key = (ev.source, ev.process.pid if ev.process is not None else None)
        if isinstance(ev, SchedulerStats):
            self.stats_by_pid.setdefault(key, []).append(ev)
        else:
            self.spec_pids.add(key)

    def finish(self) -> None:
        b, stats_by_pid, spec_pids = self.b, self.stats_by_pid, self.spec_pids
        total = sum(len(v) for v in stats_by_pid.values())
        if not total:
            return
        b.set("throughput.intervals", float(total), None, "stats lines")
        _prompt_ratio(b, [s for values in stats_by_pid.values() for s in values])
        spec_sources = {src for src, _ in spec_pids}
        for key, values in stats_by_pid.items():
            decode_like = [s for s in values if s.format != "sglang-prefill"]
            steady = _steady(decode_like)
            has_spec = key in spec_pids or (key[1] is None and key[0] in spec_sources)
            spec_series = "throughput.with_spec" if has_spec else "throughput.without_spec"
            for s in steady:
                b.append("throughput.generation", s.generation_throughput, s, "stats lines")
                if s.running == 1 and (s.waiting or 0) == 0:
                    b.append(
                        "throughput.per_request", s.generation_throughput, s, "stats lines with one running request"
                    )
                if spec_pids:
                    b.append(spec_series, s.generation_throughput, s, "stats lines")
            for s in values:
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
            active: list[float] = [s.generation_throughput for s in decode_like if s.generation_throughput]
            if len(active) >= 3:
                median = statistics.median(active[1:])
                if median > 0:
                    b.set("throughput.first_interval_ratio", active[0] / median, decode_like[0], "first stats interval")


def _prompt_ratio(b: ProfileBuilder, stats: list[SchedulerStats]) -> None:
    """Both rates are averages over the same interval, so their sums compare the tokens: a ratio far above 1
    means long prompts re-sent for short answers (agents, multi-turn chat, RAG), where prefix reuse pays."""
    pairs = [
        (s.prompt_throughput, s.generation_throughput)
        for s in stats
        if s.format.startswith("vllm") and s.prompt_throughput is not None and s.generation_throughput is not None
    ]
    prompt = sum(p for p, _ in pairs)
    generated = sum(g for _, g in pairs)
    if len(pairs) >= 3 and generated > 0:
        b.set("throughput.prompt_ratio", round(prompt / generated, 3), None, f"{len(pairs)} stats intervals")
