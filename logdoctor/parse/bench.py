"""Benchmark results users paste beside a log: the story's concurrency table, `vllm bench serve` and
`sglang.bench_serving` result blocks."""

from __future__ import annotations

from logdoctor.events import EventBase
from logdoctor.parse.registry import Grammar, ParseContext

GRAMMARS: list[Grammar] = []


def finish(context: ParseContext) -> list[EventBase]:
    """Events of a block still open when the source ends."""
    return []
