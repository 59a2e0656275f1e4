"""SGLang line types: the version (check_env, a package pin, a docker image) and the NCCL version."""

from __future__ import annotations

import re

from logdoctor.engines.sglang.common import _VERSION, _grammar, _version_tuple
from logdoctor.events import (
    EngineVersion,
    EventBase,
    NcclVersion,
)
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

# --- version ---------------------------------------------------------------------------------------

_PIN_VERSION_RE = re.compile(r"\bsglang(?:\[[\w,\s-]+\])?==(?P<ver>\d+\.\d+[\w.]*)")
_CHECK_ENV_VERSION_RE = re.compile(r"^\s*sglang\s*:\s*v?(?P<ver>\d+\.\d+[\w.+]*)\s*$")
_IMAGE_VERSION_RE = re.compile(r"lmsysorg/sglang:v?(?P<ver>\d+\.\d+\.\d+(?:\.post\d+|rc\d+)?)")


def parse_version(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    for regex, origin in (
        (_CHECK_ENV_VERSION_RE, "check_env"),
        (_PIN_VERSION_RE, "package pin"),
        (_IMAGE_VERSION_RE, "docker image"),
    ):
        m = regex.search(line.message)
        if m:
            ctx.state.setdefault(_VERSION, _version_tuple(m.group("ver")))
            return [EngineVersion(**ctx.base(line, "sglang"), version=m.group("ver"), origin=origin)]
    return None


_NCCL_VERSION_RE = re.compile(r"sglang is using nccl==(?P<ver>\d+\.\d+\.\d*)")


def parse_nccl_version(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _NCCL_VERSION_RE.search(line.message)
    if not m:
        return None
    version = m.group("ver")
    if version.endswith("."):  # SGLang renders patch 0 as nothing: 22700 -> "2.27."
        version += "0"
    return [NcclVersion(**ctx.base(line, "sglang"), version=version)]


GRAMMARS: list[Grammar] = [
    _grammar(
        "version",
        ("sglang==", "sglang[all]==", "sglang: ", "lmsysorg/sglang:"),
        parse_version,
        (
            case("sample-1", "sglang: 0.5.6.post2", ("engine_version", {})),
            case("sample-2", "pip install sglang==0.4.6.post5", ("engine_version", {})),
            case(
                "row-1",
                "sglang: 0.5.6.post2",
                ("engine_version", {"version": "0.5.6.post2", "origin": "check_env", "engine": "sglang"}),
                exact=True,
            ),
            case(
                "row-2",
                "pip install sglang[all]==0.4.6.post5",
                ("engine_version", {"version": "0.4.6.post5", "origin": "package pin"}),
                exact=True,
            ),
            case(
                "row-3",
                "docker run --gpus all lmsysorg/sglang:v0.5.20-cu129 python3 -m sglang.launch_server",
                ("engine_version", {"version": "0.5.20", "origin": "docker image"}),
                exact=True,
            ),
        ),
    ),
    _grammar(
        "nccl_version",
        ("sglang is using nccl==",),
        parse_nccl_version,
        (
            case("sample-1", "[2025-03-04 00:36:46 TP0] sglang is using nccl==2.21.5", ("nccl_version", {})),
            case(
                "row-1",
                "[2025-03-04 00:36:46 TP0] sglang is using nccl==2.21.5",
                ("nccl_version", {"version": "2.21.5", "engine": "sglang"}),
                exact=True,
            ),
            case(
                "row-2",
                "[2025-02-24 14:09:34 TP12] sglang is using nccl==2.21.5",
                ("nccl_version", {"version": "2.21.5"}),
                exact=True,
            ),
            case(
                "row-3",
                "[2026-01-01 10:00:00 TP0] sglang is using nccl==2.27.",
                ("nccl_version", {"version": "2.27.0"}),
                exact=True,
            ),
        ),
    ),
]
