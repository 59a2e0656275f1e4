"""What every NCCL line type shares: the engine of a line, and `_grammar`, which declares a line type.

NCCL's own lines (catalogue/sglang-nccl.md §11), NCCL 2.4 to 2.30, in any engine's log.

The envelope (`host:pid:tid [dev] NCCL INFO`, NCCL >= 2.26 WARN timestamps, mpirun/Ray/docker wrappers)
is stripped first; these grammars read the message:

    node031:1936469:1936515 [2] NCCL INFO Channel 00 : 2[2] -> 3[3] via SHM/direct/direct
    vm:668:668 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1
    NCCL version 2.21.5+cuda12.4                                   (bare, on stdout, NCCL <= 2.21)

`Using network Socket` names the network plugin NCCL will use *if* it needs the network (bootstrap and
inter-node); a healthy single-host run prints it too, so it is not evidence of a NET transport between
GPUs: only `Channel ... via NET/...` lines are.
"""

from __future__ import annotations

from collections.abc import Iterable

from logdoctor.events import (
    Engine,
)
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Case, Grammar, ParseFn

Values = dict[str, str | int | float | bool]


def _engine(line: LogLine) -> Engine:
    """Torch errors about NCCL are printed by the serving engine's process; NCCL's own lines are NCCL's."""
    if line.engine_hint == "vllm":
        return "vllm"
    if line.engine_hint == "sglang":
        return "sglang"
    return "nccl"


def _grammar(name: str, keywords: Iterable[str], parse: ParseFn, cases: Iterable[Case]) -> Grammar:
    """An NCCL line type: NCCL's lines appear in any engine's log, so no engine guard."""
    return Grammar(f"nccl.{name}", "nccl", tuple(keywords), parse, tuple(cases))
