"""vLLM line types: §2 version, logo, serving model (catalogue/vllm.md)."""

from __future__ import annotations

import re

from logdoctor.engines.vllm.common import Events, _base, _grammar, _remember_version
from logdoctor.events import (
    EngineVersion,
)
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext

_VERSION_RE = re.compile(
    r"vLLM (?:API |gRPC )?server version (?P<ver>\S+?)(?:, serving model (?P<model>\S+))?\s*$"
    r"|vLLM batch processing API version (?P<batch_ver>\S+)\s*$"
)
_LOGO_VERSION_RE = re.compile(r"█.*\bversion\s+(?P<ver>\S+)\s*$")
_LOGO_MODEL_RE = re.compile(r"█.*\bmodel\s+(?P<model>\S+)\s*$")


def parse_version(line: LogLine, ctx: ParseContext) -> Events | None:
    m = _VERSION_RE.search(line.message)
    if m:
        version = m.group("ver") or m.group("batch_ver")
        _remember_version(ctx, version)
        return [EngineVersion(**_base(line, ctx), version=version, model=m.group("model"), origin="version line")]
    m = _LOGO_VERSION_RE.search(line.message)
    if m:
        _remember_version(ctx, m.group("ver"))
        return [EngineVersion(**_base(line, ctx), version=m.group("ver"), origin="logo")]
    m = _LOGO_MODEL_RE.search(line.message)
    if m:
        return [EngineVersion(**_base(line, ctx), model=m.group("model"), origin="logo")]
    return None


GRAMMARS: list[Grammar] = [
    _grammar(
        "version",
        ("server version", "█  version", "█  model", "processing API version"),
        parse_version,
        (
            "INFO 07-08 11:49:48 api_server.py:206] vLLM API server version 0.5.1",
            "INFO 02-07 18:06:00 api_server.py:840] vLLM API server version 0.7.3.dev21+g0630d453",
            "(APIServer pid=1) INFO 08-06 10:08:29 [utils.py:297]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.18.0",
            "(APIServer pid=1) INFO 08-06 10:08:29 [utils.py:297]   █▄█▀ █     █     █     █  model   "
            "/models/unsloth/Qwen3-8B-GGUF/Qwen3-8B-Q4_K_M.gguf",
        ),
    ),
]
