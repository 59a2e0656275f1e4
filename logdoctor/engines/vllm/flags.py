"""How vLLM spells the engine-neutral settings (logdoctor.vocabulary): dump keys, log fields, flags, ports.

"tensor_parallel_size": Spelling("--tensor-parallel-size", config_keys=("tensor_parallel_size",))
port("cuda_graphs", baseline)  -> "drop --enforce-eager; --compilation-config '{\"cudagraph_mode\": ...}'"
"""

from __future__ import annotations

import json
from typing import Any

from logdoctor.registry import Spelling
from logdoctor.vocabulary import Side, speculation

NAME = "vllm"

FLAGS: dict[str, Spelling] = {
    "decode_tok_s_per_request": Spelling(shown_as="Avg generation throughput at Running: 1 reqs"),
    "generation_throughput": Spelling(shown_as="Avg generation throughput"),
    "speculative_method": Spelling("--speculative-config", shown_as="speculative_config.method"),
    "num_speculative_tokens": Spelling("--speculative-config", shown_as="speculative_config.num_speculative_tokens"),
    "draft_model": Spelling("--speculative-config", shown_as="speculative_config.model"),
    "mean_acceptance_length": Spelling(shown_as="SpecDecoding metrics: Mean acceptance length"),
    "draft_acceptance_rate": Spelling(shown_as="SpecDecoding metrics: Avg Draft acceptance rate"),
    "cuda_graphs": Spelling(
        "--enforce-eager / --compilation-config", shown_as="enforce_eager / compilation_config.cudagraph_mode"
    ),
    "drafter_cuda_graphs": Spelling("--speculative-config", shown_as="speculative_config.enforce_eager"),
    "cuda_graph_max_batch": Spelling(
        "--compilation-config",
        "--compilation-config '{{\"max_cudagraph_capture_size\": {value}}}'",
        shown_as="compilation_config.max_cudagraph_capture_size",
    ),
    "attention_backend": Spelling("--attention-backend", shown_as="attention_backend"),
    "drafter_attention_backend": Spelling(
        "--speculative-config.attention_backend", shown_as="speculative_config.attention_backend"
    ),
    "tensor_parallel_size": Spelling("--tensor-parallel-size", config_keys=("tensor_parallel_size",)),
    "pipeline_parallel_size": Spelling("--pipeline-parallel-size", config_keys=("pipeline_parallel_size",)),
    "data_parallel_size": Spelling("--data-parallel-size", config_keys=("data_parallel_size",)),
    "custom_all_reduce": Spelling(
        "--disable-custom-all-reduce",
        shown_as="disable_custom_all_reduce",
        when_on="drop --disable-custom-all-reduce (it also needs GPU P2P: nvidia-smi topo -p2p r)",
        when_off="--disable-custom-all-reduce",
    ),
    "nccl_transport": Spelling(shown_as="NCCL INFO Channel ... via P2P/SHM/NET"),
    "kv_cache_tokens": Spelling(shown_as="GPU KV cache size"),
    "max_concurrent_requests": Spelling("--max-num-seqs", config_keys=("max_num_seqs",)),
    "max_batched_tokens": Spelling("--max-num-batched-tokens", config_keys=("max_num_batched_tokens",)),
    "memory_fraction": Spelling("--gpu-memory-utilization", config_keys=("gpu_memory_utilization",)),
    "prefix_caching": Spelling(
        "--enable-prefix-caching",
        shown_as="enable_prefix_caching",
        when_on="--enable-prefix-caching",
        when_off="--no-enable-prefix-caching",
    ),
    "quantization": Spelling("--quantization", config_keys=("quantization",)),
    "model": Spelling("vllm serve MODEL", "vllm serve {value}", config_keys=("model", "model_tag")),
    "gpu": Spelling(shown_as="nvidia-smi"),
    "cpu_offload_gb": Spelling("--cpu-offload-gb", config_keys=("cpu_offload_gb",)),
    "swap_space_gb": Spelling("--swap-space", config_keys=("swap_space",)),
    "mamba_cache_mode": Spelling("--mamba-cache-mode", config_keys=("mamba_cache_mode",)),
}

# Attention backends as other engines name them -> vLLM's --attention-backend value.
_ATTENTION = {
    "FLASHINFER": "FLASHINFER",
    "TRITON": "TRITON_ATTN",
    "TORCH_NATIVE": "TORCH_SDPA",
    "FLEX_ATTENTION": "FLEX_ATTENTION",
    "FLASHMLA": "FLASHMLA",
    "CUTLASS_MLA": "CUTLASS_MLA",
}
_SPECULATION = ("speculative_method", "num_speculative_tokens", "draft_model", "mean_acceptance_length")


def _attention(name: Any, base: Side, flag: str) -> str | None:
    if not isinstance(name, str):
        return None
    upper = name.upper()
    value = upper if base.engine == NAME else _ATTENTION.get(upper) or ""
    return f"{flag} {value}" if value else None


def _speculation(base: Side) -> str | None:
    if base.value("spec.enabled") is False:
        return "drop --speculative-config"
    found = speculation(base)
    if found is None:
        return None
    method, steps, draft = found
    config: dict[str, Any] = {"method": method}
    if draft:
        config["model"] = draft
    if steps is not None:
        config["num_speculative_tokens"] = steps
    return f"--speculative-config '{json.dumps(config)}'"


def port(setting: str, base: Side) -> str | None:
    """The vLLM flags that set the baseline's value of a composite setting."""
    if setting in _SPECULATION or setting == "draft_acceptance_rate":
        return _speculation(base)
    if setting == "cuda_graphs":
        if base.value("cuda_graphs.enabled") is False:
            return "--enforce-eager"
        mode = base.value("cuda_graphs.mode") if base.engine == NAME else None
        mode = mode if isinstance(mode, str) and mode != "NONE" else "FULL_AND_PIECEWISE"
        return f"drop --enforce-eager; --compilation-config '{json.dumps({'cudagraph_mode': mode})}'"
    if setting == "drafter_cuda_graphs":
        if base.value("cuda_graphs.drafter"):
            return 'drop "enforce_eager": true from --speculative-config'
        return 'add "enforce_eager": true to --speculative-config'
    if setting == "attention_backend":
        return _attention(base.value("attention.backend"), base, "--attention-backend")
    if setting == "drafter_attention_backend":
        return _attention(base.value("attention.drafter_backend"), base, "--speculative-config.attention_backend")
    return None
