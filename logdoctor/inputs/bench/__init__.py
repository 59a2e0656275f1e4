"""Benchmark results (`vllm bench serve`, `sglang.bench_serving`, tables, saved JSON): line types in grammars.py
(printed results), offline.py (offline runs), jsondoc.py (`--save-result` JSON, `--output-file` JSON Lines, AIPerf's, GenAI-Perf's and
GuideLLM's JSON exports) and exports.py (GenAI-Perf's CSV, GuideLLM's YAML)."""

from __future__ import annotations

from logdoctor.events import EventBase
from logdoctor.inputs.bench import exports, grammars, jsondoc, offline
from logdoctor.parse.grammar import ParseContext
from logdoctor.registry import EngineSpec


def finish(context: ParseContext) -> list[EventBase]:
    """Results still open when a source ends: a JSON document cut short, then the printed blocks."""
    return jsondoc.finish(context) + exports.finish(context) + grammars.finish(context)


SPEC = EngineSpec(
    name="bench",
    label="benchmark results",
    kind="input",
    grammars=(*grammars.GRAMMARS, *offline.GRAMMARS, *jsondoc.GRAMMARS, *exports.GRAMMARS),
    finish=finish,
)
