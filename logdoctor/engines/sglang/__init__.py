"""SGLang (catalogue/sglang-nccl.md), v0.4 to v0.5: line types in grammars.py."""

from __future__ import annotations

from logdoctor.engines.sglang.grammars import GRAMMARS
from logdoctor.registry import EngineSpec

SPEC = EngineSpec(
    name="sglang",
    label="SGLang",
    kind="serving",
    process_hints=("sglang.launch_server", "sglang serve", "sglang.srt.entrypoints"),
    log_globs=("*sglang*",),
    distribution="sglang",
    grammars=tuple(GRAMMARS),
    headers={
        "sglang": "SGLang header `[YYYY-MM-DD HH:MM:SS TPn]`",
        "sglang-plain": "SGLang plain header",
    },
)
