"""vLLM line types: §2 version, logo, serving model (catalogue/vllm.md)."""

from __future__ import annotations

import re

from logdoctor.engines.vllm.common import Events, NoticeBuild, _base, _event, _grammar, _notices, _remember_version
from logdoctor.events import EngineVersion
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

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


# One-message notices of vLLM 0.33 (rendered from its wheel by the drift check, docs/drift.md): one row a
# message, first match wins; the line type's cases hold one line of each.
_NOTICES: tuple[tuple[re.Pattern[str], NoticeBuild], ...] = (
    (re.compile("Launching vLLM \\(v(?P<version>[\\w.+-]+)\\) headless"), _event(EngineVersion, origin="version line")),
)


def parse_version_notices(line: LogLine, ctx: ParseContext) -> Events | None:
    return _notices(_NOTICES, line, ctx)


GRAMMARS: list[Grammar] = [
    _grammar(
        "version",
        ("server version", "█  version", "█  model", "processing API version"),
        parse_version,
        (
            case(
                "sample-1",
                "(APIServer pid=1) INFO 08-06 10:08:29 [utils.py:297]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.18.0",
                ("engine_version", {}),
            ),
            case(
                "sample-2",
                "(APIServer pid=1) INFO 08-06 10:08:29 [utils.py:297]   █▄█▀ █     █     █     █  model   "
                "/models/unsloth/Qwen3-8B-GGUF/Qwen3-8B-Q4_K_M.gguf",
                ("engine_version", {}),
            ),
            case(
                "version-0.5.1",
                "INFO 07-08 11:49:48 api_server.py:206] vLLM API server version 0.5.1",
                ("engine_version", {"version": "0.5.1", "origin": "version line", "engine": "vllm"}),
            ),
            case(
                "version-dev-build",
                "INFO 02-07 18:06:00 api_server.py:840] vLLM API server version 0.7.3.dev21+g0630d453",
                ("engine_version", {"version": "0.7.3.dev21+g0630d453"}),
            ),
            case(
                "version-serving-model-rendered",
                "(APIServer pid=1) INFO 05-20 12:00:00 [utils.py:290] vLLM server version 0.21.0, serving model Qwen/Qwen3-8B",
                ("engine_version", {"version": "0.21.0", "model": "Qwen/Qwen3-8B"}),
            ),
            case(
                "logo-0.18",
                "(APIServer pid=1) INFO 08-06 10:08:29 [utils.py:297] \n"
                "(APIServer pid=1) INFO 08-06 10:08:29 [utils.py:297]        █     █     █▄   ▄█\n"
                "(APIServer pid=1) INFO 08-06 10:08:29 [utils.py:297]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.18.0\n"
                "(APIServer pid=1) INFO 08-06 10:08:29 [utils.py:297]   █▄█▀ █     █     █     █  model   "
                "/models/unsloth/Qwen3-8B-GGUF/Qwen3-8B-Q4_K_M.gguf\n"
                "(APIServer pid=1) INFO 08-06 10:08:29 [utils.py:297]    ▀▀  ▀▀▀▀▀ ▀▀▀▀▀ ▀     ▀\n"
                "(APIServer pid=1) INFO 08-06 10:08:29 [utils.py:297] ",
                ("engine_version", {"version": "0.18.0", "origin": "logo"}),
                ("engine_version", {"model": "/models/unsloth/Qwen3-8B-GGUF/Qwen3-8B-Q4_K_M.gguf", "origin": "logo"}),
            ),
        ),
    ),
    _grammar(
        "version_notices",
        ("Launching vLLM (v",),
        parse_version_notices,
        (
            case(
                "v0.33-launching-vllm-v",
                "(APIServer pid=1) INFO 11-30 10:00:00 [serve.py:224] Launching vLLM (v0.33.0) headless multiproc executor, with head node address 10.0.0.1 for torch.distributed process group.",
                ("engine_version", {"version": "0.33.0"}),
            ),
        ),
    ),
]
