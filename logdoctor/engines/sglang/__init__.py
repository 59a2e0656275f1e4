"""SGLang (catalogue/sglang-nccl.md), v0.4 to v0.5: line types in grammars.py; the configuration dump ->
facts in facts.py; the engine-neutral settings as SGLang spells them, and diff's port lines, in flags.py."""

from __future__ import annotations

from logdoctor.engines.sglang import facts, flags
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
    flags=flags.FLAGS,
    apply_config=facts.apply_config,
    config_facts=facts.CONFIG_FACTS,
    port=flags.port,
)
