"""How SGLang spells the engine-neutral settings (logdoctor.vocabulary): dump keys, log fields, flags, ports.

"tensor_parallel_size": Spelling("--tp-size", config_keys=("tp_size",))
port("speculative_method", baseline)  -> "--speculative-algorithm EAGLE --speculative-num-steps 3 ..."
"""

from __future__ import annotations

from typing import Any

from logdoctor.registry import Spelling
from logdoctor.vocabulary import Side, speculation

NAME = "sglang"

FLAGS: dict[str, Spelling] = {
    "decode_tok_s_per_request": Spelling(shown_as="gen throughput (token/s) at #running-req: 1"),
    "generation_throughput": Spelling(shown_as="gen throughput (token/s)"),
    "speculative_method": Spelling("--speculative-algorithm", shown_as="speculative_algorithm"),
    "num_speculative_tokens": Spelling(
        "--speculative-num-draft-tokens", shown_as="speculative_num_draft_tokens (k + 1)"
    ),
    "draft_model": Spelling("--speculative-draft-model-path", config_keys=("speculative_draft_model_path",)),
    "mean_acceptance_length": Spelling(shown_as="Decode batch: accept len"),
    "draft_acceptance_rate": Spelling(shown_as="Decode batch: accept rate"),
    "cuda_graphs": Spelling("--disable-cuda-graph", shown_as="disable_cuda_graph"),
    "drafter_cuda_graphs": Spelling("--disable-cuda-graph", shown_as="Capture draft cuda graph"),
    "cuda_graph_max_batch": Spelling(
        "--cuda-graph-max-bs", "--cuda-graph-max-bs {value}", shown_as="cuda_graph_max_bs"
    ),
    "attention_backend": Spelling("--attention-backend", shown_as="attention_backend"),
    "drafter_attention_backend": Spelling(
        "--speculative-draft-attention-backend", shown_as="speculative_draft_attention_backend"
    ),
    "tensor_parallel_size": Spelling("--tp-size", config_keys=("tp_size",)),
    "pipeline_parallel_size": Spelling("--pp-size", config_keys=("pp_size",)),
    "data_parallel_size": Spelling("--dp-size", config_keys=("dp_size",)),
    "custom_all_reduce": Spelling(
        "--disable-custom-all-reduce",
        shown_as="disable_custom_all_reduce",
        when_on="drop --disable-custom-all-reduce (it also needs GPU P2P: nvidia-smi topo -p2p r)",
        when_off="--disable-custom-all-reduce",
    ),
    "nccl_transport": Spelling(shown_as="NCCL INFO Channel ... via P2P/SHM/NET"),
    "kv_cache_tokens": Spelling("--max-total-tokens", "--max-total-tokens {value}", shown_as="max_total_num_tokens"),
    "max_concurrent_requests": Spelling("--max-running-requests", config_keys=("max_running_requests",)),
    "max_batched_tokens": Spelling("--chunked-prefill-size", config_keys=("chunked_prefill_size",)),
    "memory_fraction": Spelling("--mem-fraction-static", config_keys=("mem_fraction_static",)),
    "prefix_caching": Spelling(
        "--disable-radix-cache",
        shown_as="disable_radix_cache",
        when_on="drop --disable-radix-cache",
        when_off="--disable-radix-cache",
    ),
    "quantization": Spelling("--quantization", config_keys=("quantization",)),
    "model": Spelling("--model-path", "--model-path {value}", config_keys=("model_path",)),
    "gpu": Spelling(shown_as="nvidia-smi"),
    "nodes": Spelling("--nnodes", config_keys=("nnodes",)),
    "cpu_offload_gb": Spelling("--cpu-offload-gb", config_keys=("cpu_offload_gb",)),
}

# Attention backends as other engines name them -> SGLang's --attention-backend value.
_ATTENTION = {
    "FLASHINFER": "flashinfer",
    "TRITON_ATTN": "triton",
    "TORCH_SDPA": "torch_native",
    "FLEX_ATTENTION": "flex_attention",
    "FLASHMLA": "flashmla",
    "CUTLASS_MLA": "cutlass_mla",
}
# speculative method -> --speculative-algorithm (an MTP head loads as an EAGLE drafter).
_ALGORITHM = {"mtp": "EAGLE", "eagle": "EAGLE", "eagle3": "EAGLE3", "draft_model": "STANDALONE"}
_SPECULATION = ("speculative_method", "num_speculative_tokens", "draft_model", "mean_acceptance_length")


def _attention(name: Any, base: Side, flag: str) -> str | None:
    if not isinstance(name, str):
        return None
    value = name.lower() if base.engine == NAME else _ATTENTION.get(name.upper()) or ""
    return f"{flag} {value}" if value else None


def _speculation(base: Side) -> str | None:
    if base.value("spec.enabled") is False:
        return "drop --speculative-algorithm"
    found = speculation(base)
    if found is None:
        return None
    method, steps, draft = found
    parts = [f"--speculative-algorithm {_ALGORITHM.get(method, method.upper())}"]
    if draft:
        parts.append(f"--speculative-draft-model-path {draft}")
    if steps is not None:
        if method in ("mtp", "eagle", "eagle3", "draft_model"):
            parts.append(f"--speculative-num-steps {steps} --speculative-eagle-topk 1")
        parts.append(f"--speculative-num-draft-tokens {steps + 1}")  # SGLang counts the root token
    return " ".join(parts)


def port(setting: str, base: Side) -> str | None:
    """The SGLang flags that set the baseline's value of a composite setting."""
    if setting in _SPECULATION or setting == "draft_acceptance_rate":
        return _speculation(base)
    if setting == "cuda_graphs":
        return "--disable-cuda-graph" if base.value("cuda_graphs.enabled") is False else "drop --disable-cuda-graph"
    if setting == "drafter_cuda_graphs":
        return (
            "drop --disable-cuda-graph (the drafter's graphs follow the target's)"
            if base.value("cuda_graphs.drafter")
            else None
        )
    if setting == "attention_backend":
        return _attention(base.value("attention.backend"), base, "--attention-backend")
    if setting == "drafter_attention_backend":
        return _attention(base.value("attention.drafter_backend"), base, "--speculative-draft-attention-backend")
    return None
