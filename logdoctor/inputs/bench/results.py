"""What the printed benchmark results' line types share (logdoctor.inputs.bench.grammars, .offline): one result
being assembled from a block's rows, its numbers and keys, and its event, reported once."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from logdoctor.events import BenchmarkResult, EventBase
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import ParseContext

OPEN = "bench.open"  # the result block being read, so `finish` can close it
SEEN = "bench.seen"  # rows already reported (a bench_one_batch_server case and its summary-table row)

Number = float | int | str
NON_WORD_RE = re.compile(r"[^a-z0-9]+")
SPACES_RE = re.compile(r"\s+")


def as_number(text: str) -> Number:
    text = text.strip().replace(",", "")
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    return number if math.isfinite(number) else text  # `Traffic request rate: inf` stays a word


def field_key(label: str) -> str:
    """`Output token throughput (tok/s)` -> `output_token_throughput_tok_s`."""
    return NON_WORD_RE.sub("_", label.lower()).strip("_")


@dataclass
class Result:
    """One result being assembled; mapped fields take the first value seen (later sections repeat labels)."""

    tool: str
    first: LogLine
    fields: dict[str, Any] = field(default_factory=dict)
    values: dict[str, Number] = field(default_factory=dict)
    end: int | None = None

    def set(self, name: str, value: Number | None) -> None:
        if value is not None and not isinstance(value, str):
            self.fields.setdefault(name, value)

    def event(self, ctx: ParseContext) -> BenchmarkResult | None:
        if not self.fields and not self.values:
            return None
        # a block cut after its first rows (a paste's limit) still says what it generated and in how long: the
        # output rate is that quotient by definition
        tokens, seconds = self.values.get("total_generated_tokens"), self.values.get("benchmark_duration_s")
        if (
            "output_throughput" not in self.fields
            and isinstance(tokens, int | float)
            and isinstance(seconds, int | float)
            and tokens > 0
            and seconds > 0
        ):
            self.fields["output_throughput"] = round(tokens / seconds, 4)
            self.values["output_throughput_from"] = "total generated tokens / benchmark duration"
        tpot = self.fields.get("mean_tpot_ms")
        if "per_request_throughput" not in self.fields and isinstance(tpot, int | float) and tpot > 0:
            self.fields["per_request_throughput"] = round(1000.0 / tpot, 4)
            self.values["per_request_throughput_from"] = "1000 / mean TPOT"
        base = ctx.base(self.first, "bench")
        base["end_line"] = self.end if self.end != self.first.number else None
        return BenchmarkResult(**base, tool=self.tool, **self.fields, values=self.values)


def emit(result: Result, ctx: ParseContext) -> list[EventBase]:
    """The event of a finished result, unless the same result was already reported."""
    ctx.state.pop(OPEN, None)
    event = result.event(ctx)
    if event is None:
        return []
    seen: set[tuple[object, ...]] = ctx.state.setdefault(SEEN, set())
    key = (event.tool, event.concurrency, event.output_throughput, event.values.get("input_len"))
    if event.tool == "sglang-bench-one-batch" and key in seen:
        return []
    seen.add(key)
    return [event]
