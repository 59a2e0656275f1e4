"""vLLM's speculative-decoding example (`examples/offline_inference/spec_decode.py`) pasted beside a log: its
2025 rows (`num_drafts: ...`, `acceptance at token i: ...`) or its 2026 `Speculative Decoding Stats` block, read
as the run's acceptance and one benchmark sample.

The acceptance counters are vLLM's own, so the stats carry the vLLM engine (the one bench reader that names an
engine: the example prints only vLLM's counters).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from logdoctor.events import BenchmarkResult, EventBase, SpecDecodeStats
from logdoctor.parse import blocks
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import BlockFn, Grammar, ParseContext, case

_SPEC_TITLE_RE = re.compile(r"^\s*=+ ?Speculative Decoding Stats ?=+\s*$")
_SPEC_FIRST_ROW_RE = re.compile(r"^\s*(?:total_num_output_tokens|num_drafts): \d+\s*$")
_SPEC_ROW_RE = re.compile(r"^\s*(?P<label>[A-Za-z_][\w ()/]*?):\s+(?P<value>[\d.]+)\s*$")
_SPEC_POSITION_RE = re.compile(r"\bacceptance at token (?P<i>\d+)\b")
_SPEC_FIELDS = {
    "num_drafts": "num_drafts",
    "number of drafts": "num_drafts",
    "num_draft_tokens": "drafted",
    "draft tokens generated": "drafted",
    "num_accepted_tokens": "accepted",
    "accepted tokens": "accepted",
    "mean acceptance length": "length",
    "output token throughput (tok/s)": "output_throughput",
}


@dataclass
class _SpecRun:
    first: LogLine
    titled: bool  # opened by the block's title: blank lines inside it do not end it
    end: int = 0
    numbers: dict[str, float] = field(default_factory=dict)
    positions: dict[int, float] = field(default_factory=dict)

    def events(self, ctx: ParseContext) -> list[EventBase]:
        n = self.numbers
        drafts, drafted, accepted = n.get("num_drafts"), n.get("drafted"), n.get("accepted")
        length = n.get("length") or (1 + accepted / drafts if drafts and accepted is not None else None)
        if length is None:
            return []
        positions = [self.positions[i] for i in sorted(self.positions)]
        k = len(positions) or (round(drafted / drafts) if drafts and drafted else None)
        base = ctx.base(self.first, "vllm")
        base["end_line"] = self.end if self.end != self.first.number else None
        spec = SpecDecodeStats(
            **base,
            format="metrics",  # the engine's own counters, over the whole run: one interval
            mean_acceptance_length=length,
            acceptance_rate=round(accepted / drafted, 4) if drafted and accepted is not None else None,
            per_position_acceptance=positions or None,
            num_speculative_tokens=k,
            accepted_tokens=int(accepted) if accepted is not None else None,
            drafted_tokens=int(drafted) if drafted is not None else None,
            num_drafts=int(drafts) if drafts is not None else None,
            extra={"tool": "vllm-spec-decode-example"},
        )
        result = BenchmarkResult(
            **{**base, "engine": "bench"},
            tool="vllm-spec-decode-example",
            output_throughput=n.get("output_throughput"),
            acceptance_length=length,
        )
        return [spec, result]


def _read_spec(run: _SpecRun) -> BlockFn:
    def read(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        text = line.text
        rule = blocks.RULE_RE.match(text)
        closing = run.titled and rule is not None and rule.group("c") == "=" and not rule.group("title")
        if closing or (rule is not None and rule.group("c") == "-"):
            run.end = line.number
            if not closing:
                return []
            ctx.block = None
            ctx.state.pop(_OPEN_SPEC, None)
            return run.events(ctx)
        m = _SPEC_ROW_RE.match(text)
        if m:
            label, value = m.group("label").strip().lower(), float(m.group("value"))
            position = _SPEC_POSITION_RE.match(label)
            if position:
                run.positions[int(position.group("i"))] = value
            elif label in _SPEC_FIELDS:
                run.numbers[_SPEC_FIELDS[label]] = value
            run.end = line.number
            return []
        if run.titled and blocks.is_blank(line) and not line.skip:
            return []
        ctx.block = None
        ctx.state.pop(_OPEN_SPEC, None)
        events = run.events(ctx)
        if blocks.is_blank(line):
            return events
        blocks.stash(ctx, events)
        return None

    return read


def parse_spec_example(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    titled = _SPEC_TITLE_RE.match(line.text) is not None
    if not titled and not _SPEC_FIRST_ROW_RE.match(line.text):
        return None
    run = _SpecRun(first=line, titled=titled, end=line.number)
    ctx.state[_OPEN_SPEC] = run
    ctx.block = _read_spec(run)
    return [] if titled else ctx.block(line, ctx)


_OPEN_SPEC = "bench.open_spec"


GRAMMAR = Grammar(
    "bench.spec_decode_example",
    "bench",
    ("total_num_output_tokens: ", "num_drafts: ", "Speculative Decoding Stats"),
    parse_spec_example,
    (
        case(
            "rows-2025",
            "total_num_output_tokens: 213421\nnum_drafts: 154015\nnum_draft_tokens: 462045\n"
            "num_accepted_tokens: 57143\nmean acceptance length: 1.37\n"
            "--------------------------------------------------\n"
            "acceptance at token 0: 0.29\nacceptance at token 1: 0.07\nacceptance at token 2: 0.01",
            (
                "spec_decode_stats",
                {
                    "format": "metrics",
                    "mean_acceptance_length": 1.37,
                    "acceptance_rate": 0.1237,
                    "per_position_acceptance": [0.29, 0.07, 0.01],
                    "num_speculative_tokens": 3,
                },
            ),
            ("benchmark_result", {"tool": "vllm-spec-decode-example", "acceptance_length": 1.37}),
            exact=True,
        ),
        case(
            "stats-block-2026",
            "=========== Speculative Decoding Stats ============\n"
            "Total input tokens:                      31000     \n"
            "Total output tokens:                     25600     \n"
            "\n"
            "Input token throughput (tok/s):          9000.00   \n"
            "Output token throughput (tok/s):         2500.00   \n"
            "\n"
            "Number of drafts:                        10000     \n"
            "Draft tokens generated:                  30000     \n"
            "Draft utilization rate:                  50.0      \n"
            "Accepted tokens:                         15000     \n"
            "Mean acceptance length:                  2.50      \n"
            "====================================================",
            (
                "spec_decode_stats",
                {"mean_acceptance_length": 2.5, "acceptance_rate": 0.5, "num_speculative_tokens": 3},
            ),
            ("benchmark_result", {"output_throughput": 2500.0, "acceptance_length": 2.5}),
            exact=True,
        ),
    ),
)


def finish(context: ParseContext) -> list[EventBase]:
    """The events of an example's block still open when the source ends."""
    spec = context.state.pop(_OPEN_SPEC, None)
    if not isinstance(spec, _SpecRun):
        return []
    context.block = None
    return spec.events(context)
