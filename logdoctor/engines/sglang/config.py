"""SGLang line types: the server_args dump."""

from __future__ import annotations

import re

from logdoctor.engines.sglang.common import _DRAFT_TOKENS, _grammar
from logdoctor.events import (
    EventBase,
    StartupConfig,
)
from logdoctor.parse import blocks
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case
from logdoctor.parse.pyrepr import parse_value, scan_top_level

# --- the server_args dump --------------------------------------------------------------------------

_SERVER_ARGS_RE = re.compile(r"\bserver_args=(?P<dump>(?:ServerArgs\(|\{).*)$")
# `device='cuda', … mem_fraction_static=0.88`: an elision someone typed between two kwargs, without a comma.
_ELISION_BEFORE_KWARG_RE = re.compile(r"(?<=,)\s*(?:…|\.\.\.)\s+(?=[A-Za-z_]\w*=)")
_MAX_DUMP_LINES = 2000
_MAX_DUMP_CHARS = 4 * 1024 * 1024


def _open_brackets(text: str) -> int:
    """Bracket depth at the end of `text`, ignoring quoted strings (negative if over-closed)."""
    return scan_top_level(text).depth


def _server_args_event(line: LogLine, ctx: ParseContext, dump: str, end: int | None) -> list[EventBase]:
    dump = _ELISION_BEFORE_KWARG_RE.sub(" ", dump.strip())
    parsed = parse_value(dump)
    config = parsed.value if isinstance(parsed.value, dict) else {}
    if config.get("__class__") == "ServerArgs":
        config = {k: v for k, v in config.items() if k != "__class__"}
    draft_tokens = config.get("speculative_num_draft_tokens")
    if isinstance(draft_tokens, int) and not isinstance(draft_tokens, bool) and draft_tokens >= 2:
        ctx.state[_DRAFT_TOKENS] = draft_tokens
    base = ctx.base(line, "sglang")
    if end is not None:
        base["end_line"] = end
    return [StartupConfig(**base, origin="server_args", config=config, truncated=parsed.truncated)]


def parse_server_args(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _SERVER_ARGS_RE.search(line.message)
    if not m:
        return None
    dump = m.group("dump").rstrip()
    if _open_brackets(dump) <= 0 or dump.endswith(("…", "...")):
        return _server_args_event(line, ctx, dump, None)
    # Unbalanced and not visibly cut: a terminal or a log shipper wrapped it; read the continuation lines.
    parts = [dump]
    state = {"lines": 0, "chars": len(dump), "end": line.number}

    def continuation(nxt: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        text = nxt.text.rstrip()
        if blocks.is_blank(nxt) or nxt.header is not None or nxt.process is not None:
            ctx.block = None
            events = _server_args_event(line, ctx, "".join(parts), state["end"] if state["lines"] else None)
            if blocks.is_blank(nxt):
                return events
            blocks.stash(ctx, events)
            return None
        parts.append(text)
        state["lines"] += 1
        state["chars"] += len(text)
        state["end"] = nxt.number
        joined = "".join(parts)
        if _open_brackets(joined) <= 0 or state["lines"] >= _MAX_DUMP_LINES or state["chars"] >= _MAX_DUMP_CHARS:
            ctx.block = None
            return _server_args_event(line, ctx, joined, state["end"])
        return []

    ctx.block = continuation
    return []


GRAMMARS: list[Grammar] = [
    _grammar(
        "server_args",
        ("server_args=",),
        parse_server_args,
        (
            case(
                "sample-1",
                "[2026-09-24 01:50:02] server_args={'model_path': '/models/x', 'tp_size': 2, 'quantization': "
                "'auto-round', 'kv_cache_dtype': 'fp8_e4m3', 'speculative_algorithm': 'DFLASH'}",
                ("startup_config", {}),
            ),
            case(
                "sample-2",
                "[2025-01-23 19:34:55] server_args=ServerArgs(model_path='meta-llama/Meta-Llama-3.1-8B-Instruct', "
                "tp_size=1, disable_cuda_graph=False, cuda_graph_max_bs=160)",
                ("startup_config", {}),
            ),
        ),
    ),
]
