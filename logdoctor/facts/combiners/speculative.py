"""Speculative decoding: whether it runs, the method and k, and acceptance per interval and per position.

SpecDecodeStats(mean_acceptance_length=1.31, ...) x 40  -> spec.acceptance_length = [1.31, ...]
BenchmarkResult(acceptance_length=1.04) and no spec-decode line  -> spec.acceptance_length = [1.04]
vLLM V0 cumulative counters                             -> differenced into per-interval rates
"""

from __future__ import annotations

import math
import re

from logdoctor.eventlog import EventLog
from logdoctor.events import BenchmarkResult, CompileTime, EventBase, PerfWarning, SpecDecodeStats
from logdoctor.facts.combiner import Combiner
from logdoctor.facts.profile import ProfileBuilder

# SGLang loads an MTP/NextN head as the EAGLE drafter (`type=Qwen3_5ForCausalLMMTP`).
_MTP_DRAFT_RE = re.compile(r"type=\w*(?:MTP|NextN)\b")


def interval_reading(e: SpecDecodeStats) -> tuple[float | None, float | None, tuple[float, str] | None]:
    """An interval spec-decode line's acceptance length, its rate as vLLM defines it (accepted / drafted), and the k
    its rate implies with how it was found (None where it implies none). A parse worker reads its range's lines with
    it too (facts/partial.py)."""
    length, rate = e.mean_acceptance_length, e.acceptance_rate
    if e.format == "sglang" and length is not None and rate and math.isfinite(length / rate):
        # SGLang's `accept rate` is accept_len / num_draft_tokens (k + 1), not accepted / drafted:
        # recover k and the vLLM-comparable rate (L - 1) / k.
        k = round(length / rate) - 1
        if k >= 1:
            return length, max(0.0, (length - 1) / k), (float(k), "accept len / accept rate")
    elif e.format == "sglang-per-draft" and e.num_speculative_tokens:
        # SGLang 0.5.11+: the rate is accepted / drafted already; the grammar derived k from it.
        return length, rate, (float(e.num_speculative_tokens), "(accept len - 1) / accept rate")
    return length, rate, None


class Speculation(Combiner):
    reads = (SpecDecodeStats, PerfWarning, CompileTime, BenchmarkResult)
    produces = (
        "spec.enabled",
        "spec.num_tokens",
        "spec.method",
        "spec.acceptance_length",
        "spec.acceptance_rate",
        "spec.position_acceptance",
        "spec.draft_weights_missing",
        "spec.synthetic_acceptance",
        "spec.v0_fallback",
    )

    def __init__(self, b: ProfileBuilder) -> None:
        super().__init__(b)
        # One spec-decode line an interval, a million in a week-long log: per-interval lines are read as they come
        # (into scratch series, joined after any cumulative ones at finish); vLLM V0's cumulative lines are
        # differenced at finish, so they are held, compressed (eventlog.EventLog).
        self.first: SpecDecodeStats | None = None
        self.interval = ProfileBuilder()
        self.k_from_rate: tuple[float, SpecDecodeStats, str] | None = None  # the first k an interval line implies
        self.cumulative = EventLog()
        self.position_sums: list[float] = []
        self.position_counts: list[int] = []
        self.benchmarked: list[BenchmarkResult] = []  # benchmark clients' acceptance lengths (SGLang's `Accept length`)

    def add(self, ev: EventBase) -> None:
        b = self.b
        if isinstance(ev, BenchmarkResult):
            if ev.acceptance_length:
                self.benchmarked.append(ev)
            return
        if isinstance(ev, SpecDecodeStats):
            self.first = self.first or ev
            if ev.interval:
                self._interval(ev)
            else:
                self.cumulative.append(ev)
            if ev.num_speculative_tokens:
                b.set("spec.num_tokens", float(ev.num_speculative_tokens), ev, "spec-decode metrics", keep_first=True)
            b.set("spec.enabled", True, ev, "spec-decode metrics")
            positions = ev.per_position_acceptance
            if positions:
                sums, counts = self.position_sums, self.position_counts
                missing = len(positions) - len(sums)
                if missing > 0:
                    sums.extend([0.0] * missing)
                    counts.extend([0] * missing)
                for i, rate in enumerate(positions):
                    sums[i] += rate
                    counts[i] += 1
        elif isinstance(ev, PerfWarning):
            topic = ev.topic
            if topic == "spec-drafter-weights":
                b.set("spec.draft_weights_missing", True, ev, ev.message)
            elif topic == "spec-synthetic-rejection":
                b.set("spec.synthetic_acceptance", True, ev, ev.message)
            elif topic == "v0-fallback" and "peculative" in ev.message:
                b.set("spec.v0_fallback", True, ev, ev.message)
        elif (
            isinstance(ev, CompileTime)
            and ev.kind == "draft_weights_load"
            and _MTP_DRAFT_RE.search(ev.message)
            and b.value("spec.method") in (None, "eagle")
        ):
            b.set("spec.method", "mtp", ev, ev.message)

    def _interval(self, e: SpecDecodeStats) -> None:
        length, rate, k = interval_reading(e)
        if k is not None:
            self.k_from_rate = self.k_from_rate or (k[0], e, k[1])
        if length is not None:
            self.interval.append("spec.acceptance_length", length, e, "spec-decode metrics")
        if rate is not None:
            self.interval.append("spec.acceptance_rate", rate, e, "spec-decode metrics")

    def finish(self) -> None:
        b, first = self.b, self.first
        if first is None:
            # No spec-decode line of the server's: the acceptance the benchmark client measured (it counts the
            # bonus token, as the server's mean acceptance length does) is the measurement.
            for ev in self.benchmarked:
                assert ev.acceptance_length is not None
                b.append("spec.acceptance_length", ev.acceptance_length, ev, "the benchmark's acceptance length")
                b.set("spec.enabled", True, ev, "the benchmark's acceptance length")
                _benchmarked_positions(b, ev)
            return
        if self.k_from_rate is not None:
            b.set("spec.num_tokens", *self.k_from_rate, keep_first=True)
        for name, fact in self.interval.facts.items():
            b.put(name, fact)  # what the cumulative lines add comes after, as their lines came after in the list
        cumulative = self.cumulative
        # vLLM V0 counters are cumulative: difference consecutive lines for per-interval values.
        previous: SpecDecodeStats | None = None
        for e in cumulative:
            assert isinstance(e, SpecDecodeStats)
            if e.accepted_tokens is None or e.drafted_tokens is None:
                continue
            acc, drafted = e.accepted_tokens, e.drafted_tokens
            if (
                previous is not None
                and previous.accepted_tokens is not None
                and previous.drafted_tokens is not None
                and drafted >= previous.drafted_tokens
            ):
                acc -= previous.accepted_tokens
                drafted -= previous.drafted_tokens
            previous = e
            if drafted <= 0:
                continue
            rate = acc / drafted
            b.append("spec.acceptance_rate", rate, e, "cumulative spec-decode metrics (differenced)")
            k_tokens = e.num_speculative_tokens
            if k_tokens:
                b.append(
                    "spec.acceptance_length", 1 + rate * k_tokens, e, "cumulative spec-decode metrics (differenced)"
                )
        sums, counts = self.position_sums, self.position_counts
        if sums:
            b.set(
                "spec.position_acceptance",
                [round(s / c, 4) for s, c in zip(sums, counts, strict=True)],
                first,
                "per-position acceptance",
            )


def _benchmarked_positions(b: ProfileBuilder, ev: BenchmarkResult) -> None:
    """A benchmark client's `Per-position acceptance (%)` rows (`vllm bench serve`: one `Position i:` row a drafted
    token) and its `Acceptance rate (%)`: the per-position acceptance, k (a row a speculative token) and the rate."""
    positions: list[float] = []
    while isinstance(value := ev.values.get(f"acceptance_position_{len(positions)}"), int | float):
        positions.append(float(value))
    if positions:
        b.set("spec.position_acceptance", positions, ev, "the benchmark's per-position acceptance")
        b.set("spec.num_tokens", float(len(positions)), ev, "the benchmark's per-position rows", keep_first=True)
    rate = ev.values.get("acceptance_rate")
    if isinstance(rate, int | float) and 0 <= rate <= 1:
        b.append("spec.acceptance_rate", float(rate), ev, "the benchmark's acceptance rate")
