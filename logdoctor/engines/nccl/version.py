"""NCCL line types: the version NCCL (or torch) prints."""

from __future__ import annotations

import re

from logdoctor.engines.nccl.common import _grammar
from logdoctor.events import (
    EngineVersion,
    EventBase,
    NcclVersion,
)
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

# --- version ---------------------------------------------------------------------------------------

# `NCCL version 2.21.5+cuda12.4`, `NCCL version 2.27.3+cuda12.9`, torch: `NCCL version: 2.25.1,`
_VERSION_RE = re.compile(r"\bNCCL version:? (?P<ver>\d+\.\d+(?:\.\d+)*)(?:\+cuda(?P<cuda>\d+(?:\.\d+)*))?")


def parse_version(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _VERSION_RE.search(line.message)
    if not m:
        return None
    base = ctx.base(line, "nccl")
    version = m.group("ver")
    return [
        NcclVersion(**base, version=version, cuda=m.group("cuda")),
        EngineVersion(**base, version=version, origin="nccl version"),
    ]


GRAMMARS: list[Grammar] = [
    _grammar(
        "version",
        ("NCCL version",),
        parse_version,
        (
            case("sample-1", "NCCL version 2.21.5+cuda12.4", ("nccl_version", {}), ("engine_version", {})),
            case(
                "sample-2",
                "vm:668:668 [0] NCCL INFO NCCL version 2.28.9+cuda13.0",
                ("nccl_version", {}),
                ("engine_version", {}),
            ),
            case(
                "row-1",
                "NCCL version 2.21.5+cuda12.4",
                ("nccl_version", {"version": "2.21.5", "cuda": "12.4"}),
                ("engine_version", {"version": "2.21.5", "origin": "nccl version", "engine": "nccl"}),
                exact=True,
            ),
            case(
                "row-2",
                "NCCL version 2.19.3+cuda12.3",
                ("nccl_version", {"version": "2.19.3", "cuda": "12.3"}),
                ("engine_version", {}),
                exact=True,
            ),
            case(
                "row-3",
                "NCCL version 2.18.1+cuda12.1",
                ("nccl_version", {"version": "2.18.1"}),
                ("engine_version", {}),
                exact=True,
            ),
            case(
                "row-4",
                "NCCL version 2.7.8+cuda10.0",
                ("nccl_version", {"version": "2.7.8", "cuda": "10.0"}),
                ("engine_version", {}),
                exact=True,
            ),
            case(
                "row-5",
                "gpu-node:100:100 [0] NCCL INFO NCCL version 2.27.3+cuda12.9",
                ("nccl_version", {"version": "2.27.3", "cuda": "12.9", "level": "INFO"}),
                ("engine_version", {}),
                exact=True,
            ),
            case(
                "row-6",
                "NCCL version 2.21.5.1+cuda12.4",
                ("nccl_version", {"version": "2.21.5.1"}),
                ("engine_version", {}),
                exact=True,
            ),
            case(
                "row-7",
                "I0820 14:27:21.482718 4030958 ProcessGroupNCCL.cpp:980] [PG ID 1 PG GUID 1 Rank 1] ProcessGroupNCCL "
                "environments: NCCL version: 2.25.1, TORCH_NCCL_ASYNC_ERROR_HANDLING: 3",
                ("nccl_version", {"version": "2.25.1", "cuda": None}),
                ("engine_version", {}),
                exact=True,
            ),
        ),
    ),
]
