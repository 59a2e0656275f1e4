"""NCCL debug output (`NCCL_DEBUG=INFO`, catalogue/sglang-nccl.md): line types in grammars.py."""

from __future__ import annotations

from logdoctor.engines.nccl.grammars import GRAMMARS
from logdoctor.registry import EngineSpec

SPEC = EngineSpec(
    name="nccl",
    label="NCCL",
    kind="collective",
    grammars=tuple(GRAMMARS),
    headers={"nccl": "NCCL `host:pid:tid [dev] NCCL INFO` lines"},
)
