"""The contract between the pipeline and the engine grammars.

A grammar module (`vllm.py`, `sglang.py`, `nccl.py`, `bench.py`, `host.py`) exports `GRAMMARS`, a list
of `Grammar`. Each names the literal keywords a line must contain to be worth parsing: the pipeline
(and the remote collector's `grep -F`) selects candidate lines by those keywords alone, so pyparsing
and regexes only ever run on lines that will very likely become events.

    Grammar(
        name="vllm.spec_decode",
        engine="vllm",
        keywords=("SpecDecoding metrics:",),
        parse=parse_spec_decode,            # (LogLine, ParseContext) -> list[Event] | None
        samples=("(APIServer pid=1) INFO 05-08 16:25:09 [metrics.py:101] SpecDecoding metrics: ...",),
    )

`parse` returns None when the line is not its business (the next grammar sharing a keyword is tried),
or a list of events (possibly empty: recognised, nothing to report).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from logdoctor.events import Engine, EventBase
from logdoctor.parse.envelope import LogLine

ParseFn = Callable[[LogLine, "ParseContext"], "list[EventBase] | None"]
BlockFn = Callable[[LogLine, "ParseContext"], "list[EventBase] | None"]


@dataclass(frozen=True)
class Grammar:
    name: str
    engine: Engine
    keywords: tuple[str, ...]
    parse: ParseFn
    samples: tuple[str, ...] = ()


@dataclass
class ParseContext:
    """Per-source state shared by the grammars while one source is parsed."""

    source: str
    forced_engine: str | None = None
    # Set by a grammar that has opened a multi-line block (a benchmark result table, a tqdm bar run):
    # every following line is offered to it first, keyword or not, until it returns None.
    block: BlockFn | None = None
    state: dict[str, Any] = field(default_factory=dict)
    header_counts: dict[str, int] = field(default_factory=dict)

    def base(self, line: LogLine, engine: Engine) -> dict[str, Any]:
        """The EventBase fields for an event parsed from `line`."""
        return {
            "source": self.source,
            "line": line.number,
            "end_line": line.end,
            "timestamp": line.timestamp,
            "level": line.level,
            "process": line.process,
            "engine": engine,
        }
