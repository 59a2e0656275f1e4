"""SGLang (catalogue/sglang-nccl.md), v0.4 to v0.5: one module per family of line types.

common.py        what the line types share: rule tables, event builders, `_grammar`
command.py       the launch command pasted with the log
stats.py         Prefill batch / Decode batch lines (batch.py reads them)
config.py        the server_args dump
version.py       version (check_env, package pin, docker image), NCCL version
memory.py        memory, weights, KV pool, mamba pool
graphs.py        CUDA graphs
attention.py     attention backend
spec.py          speculative decoding setup and acceptance
comm.py          custom all-reduce and P2P
runtime.py       retraction, crashes, warnings, readiness
quantization.py  quantization kernels and their tuned configs

facts.py         the configuration dump -> facts
flags.py         the engine-neutral settings as SGLang spells them, diff's port lines
"""

from __future__ import annotations

from logdoctor.engines.sglang import (
    attention,
    comm,
    command,
    config,
    facts,
    flags,
    graphs,
    memory,
    quantization,
    runtime,
    spec,
    stats,
    version,
)
from logdoctor.parse.grammar import Grammar
from logdoctor.registry import EngineSpec

GRAMMARS: tuple[Grammar, ...] = (
    *command.GRAMMARS,
    *stats.GRAMMARS,
    *config.GRAMMARS,
    *version.GRAMMARS,
    *memory.GRAMMARS,
    *graphs.GRAMMARS,
    *attention.GRAMMARS,
    *spec.GRAMMARS,
    *comm.GRAMMARS,
    *runtime.GRAMMARS,
    *quantization.GRAMMARS,
)

SPEC = EngineSpec(
    name="sglang",
    label="SGLang",
    kind="serving",
    process_hints=("sglang.launch_server", "sglang serve", "sglang.srt.entrypoints"),
    log_globs=("*sglang*",),
    distribution="sglang",
    grammars=GRAMMARS,
    headers={
        "sglang": "SGLang header `[YYYY-MM-DD HH:MM:SS TPn]`",
        "sglang-plain": "SGLang plain header",
    },
    flags=flags.FLAGS,
    apply_config=facts.apply_config,
    config_facts=facts.CONFIG_FACTS,
    port=flags.port,
)
