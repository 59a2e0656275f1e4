"""Shared helpers for grammars that read multi-line blocks through `ctx.block`.

A block can only hand events back by consuming a line. When a block is cut short by a line that
belongs to somebody else (a truncated benchmark result followed by a log line, a `server_args=` dump
cut off by a log shipper), the block's events are stashed here and the line is handed back to the
pipeline; `bench.finish` drains the stash at the end of the source, so nothing is lost:

    ============ Serving Benchmark Result ============
    Successful requests:                     128
    [2026-05-24 03:51:44 TP0] Decode batch, ...      <- ends the block: its event is stashed
"""

from __future__ import annotations

import re

from logdoctor.events import EventBase
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import ParseContext

_PENDING = "blocks.pending"
# A shell command a user pasted above a run's output (`$ python3 bench.py --flag`, `VAR=1 torchrun ...`): kept with
# the evidence when no line type read it, as what tells two runs of one script apart (logdoctor.pipeline.pasted).
# Markdown's inline code may wrap it (`` `vllm serve M --enforce-eager` ``); forks of an engine keep its flags and
# name their own program (Aphrodite is vLLM's).
SHELL_COMMAND_RE = re.compile(
    r"^\s*`?(?:\$\s*)?(?:\w+=\S*\s+)*(?:python\d?(?:\.\d+)?|torchrun|bash|sh|vllm|sglang|aphrodite|docker)\s+\S"
)
# a rule line of a result block: `=====`, `-----`, or a title between `=` runs (`==== Serving Benchmark Result ====`)
RULE_RE = re.compile(r"^\s*(?P<c>[=-])(?P=c){4,}(?P<title>[^=-].*?)?(?P=c)*\s*$")


def stash(ctx: ParseContext, events: list[EventBase]) -> None:
    """Keep events of a block that ended on a foreign line until the source ends."""
    if events:
        ctx.state.setdefault(_PENDING, []).extend(events)


def drain(ctx: ParseContext) -> list[EventBase]:
    """The stashed events, oldest first; the stash is emptied."""
    pending: list[EventBase] = ctx.state.pop(_PENDING, [])
    return pending


def is_blank(line: LogLine) -> bool:
    """An empty line, a Markdown fence or an elision: the end of any table or block."""
    return line.skip or not line.text.strip()
