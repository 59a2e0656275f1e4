"""vLLM (catalogue/vllm.md), v0.6 to v0.33: one module per family of line types (the catalogue's sections).

version.py      §2    version line, logo, serving model
config.py       §2.2  non-default args, Namespace, engine-init dump
spec.py         §3    speculative decoding metrics and notices
stats.py        §4    periodic stats, preemption, iteration details
comm.py         §5    custom all-reduce, P2P, NCCL, distributed init
attention.py    §6    attention backend
memory.py       §7    KV cache, memory, model loading
hybrid.py       §8    mamba / hybrid models
graphs.py       §9    CUDA graphs and torch.compile
scheduling.py   §10   chunked prefill, batch limits, async scheduling, prefix caching
failures.py     §11   engine death, OOM, CUDA/NCCL errors, timeouts
model.py        §12   the model: architecture, max model len, dtype, Transformers fallback
quantization.py §12   quantization and kernels
platform.py     §12   platform, offload, other notices

facts.py        the configuration dump -> facts, beyond the plain settings
flags.py        the engine-neutral settings as vLLM spells them (dump keys, flags), diff's port lines
"""

from __future__ import annotations

from logdoctor.engines.vllm import (
    attention,
    comm,
    config,
    failures,
    flags,
    graphs,
    hybrid,
    memory,
    model,
    platform,
    quantization,
    scheduling,
    spec,
    stats,
    version,
)
from logdoctor.engines.vllm import facts as config_facts
from logdoctor.parse.detect import Detection
from logdoctor.parse.grammar import Grammar
from logdoctor.registry import EngineSpec

GRAMMARS: tuple[Grammar, ...] = (
    *version.GRAMMARS,
    *config.GRAMMARS,
    *spec.GRAMMARS,
    *stats.GRAMMARS,
    *comm.GRAMMARS,
    *attention.GRAMMARS,
    *memory.GRAMMARS,
    *hybrid.GRAMMARS,
    *graphs.GRAMMARS,
    *scheduling.GRAMMARS,
    *failures.GRAMMARS,
    *model.GRAMMARS,
    *quantization.GRAMMARS,
    *platform.GRAMMARS,
)


def infer_version(detection: Detection) -> str | None:
    """A version range from header shapes and process names (catalogue §14), when no version line was seen."""
    names = detection.process_names
    if detection.header_counts.get("vllm-old") and not detection.header_counts.get("vllm"):
        return "<=0.7.3"
    if any(n.startswith("EngineCore_DP") for n in names) or any(n.startswith("Worker_") for n in names):
        if "EngineCore" in names:
            return ">=0.18"
        return ">=0.10.2"
    if "APIServer" in names:
        return ">=0.10.1"
    if any(n.startswith("VllmWorker") for n in names):
        return "0.7-0.10"
    if detection.header_counts.get("vllm"):
        return ">=0.8.0"
    return None


SPEC = EngineSpec(
    name="vllm",
    label="vLLM",
    kind="serving",
    process_hints=("vllm serve", "vllm.entrypoints", "vllm/entrypoints"),
    log_globs=("*vllm*",),
    distribution="vllm",
    grammars=GRAMMARS,
    headers={
        "vllm": "vLLM header `LEVEL MM-DD HH:MM:SS [file.py:N]` (vLLM >= 0.8)",
        "vllm-old": "vLLM header `LEVEL MM-DD HH:MM:SS file.py:N]` (vLLM <= 0.7.3)",
    },
    infer_version=infer_version,
    flags=flags.FLAGS,
    apply_config=config_facts.apply_config,
    config_facts=config_facts.CONFIG_FACTS,
    port=flags.port,
)
