"""NCCL debug output (`NCCL_DEBUG=INFO`, catalogue/sglang-nccl.md): one module per family of line types.

common.py     what the line types share: the engine of a line, `_grammar`
transport.py  the transport of each channel
version.py    the NCCL version
env.py        NCCL_* settings, echoed by NCCL or set in a pasted command
info.py       the INFO facts worth keeping
failures.py   WARN lines and NCCL errors
"""

from __future__ import annotations

from logdoctor.engines.nccl import env, failures, info, transport, version
from logdoctor.parse.grammar import Grammar
from logdoctor.registry import EngineSpec

GRAMMARS: tuple[Grammar, ...] = (
    *transport.GRAMMARS,
    *version.GRAMMARS,
    *env.GRAMMARS,
    *info.GRAMMARS,
    *failures.GRAMMARS,
)

SPEC = EngineSpec(
    name="nccl",
    label="NCCL",
    kind="collective",
    grammars=GRAMMARS,
    headers={"nccl": "NCCL `host:pid:tid [dev] NCCL INFO` lines"},
)
