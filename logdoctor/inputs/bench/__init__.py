"""Benchmark results (`vllm bench serve`, `sglang.bench_serving`, tables, saved JSON): line types in grammars.py
(printed results) and jsondoc.py (`--save-result` JSON, `--output-file` JSON Lines, AIPerf's export)."""

from __future__ import annotations

from logdoctor.events import EventBase
from logdoctor.inputs.bench import grammars, jsondoc
from logdoctor.parse.grammar import ParseContext
from logdoctor.registry import EngineSpec


def finish(context: ParseContext) -> list[EventBase]:
    """Results still open when a source ends: a JSON document cut short, then the printed blocks."""
    return jsondoc.finish(context) + grammars.finish(context)


SPEC = EngineSpec(
    name="bench",
    label="benchmark results",
    kind="input",
    grammars=(*grammars.GRAMMARS, *jsondoc.GRAMMARS),
    finish=finish,
)
