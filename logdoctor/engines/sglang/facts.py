"""SGLang's `server_args=ServerArgs(...)` -> facts, beyond the plain settings of flags.py (read by the core).

server_args=ServerArgs(..., speculative_algorithm='EAGLE', speculative_num_draft_tokens=4, ...)
    -> spec.enabled = True, spec.method = mtp (an EAGLE drafter that is the target's own head), spec.num_tokens = 3
"""

from __future__ import annotations

from typing import Any

from logdoctor.events import StartupConfig
from logdoctor.facts.profile import ProfileBuilder
from logdoctor.facts.values import as_bool, is_none_like

CONFIG_FACTS = (
    "cuda_graphs.enabled",
    "cuda_graphs.mode",
    "cuda_graphs.max_batch",
    "spec.enabled",
    "spec.method",
    "spec.num_tokens",
    "allreduce.custom",
    "allreduce.reason",
    "sched.prefix_caching",
    "attention.backend",
    "attention.drafter_backend",
    "model.runner",
    "offload.cpu_experts",
)

# speculative_algorithm -> the engine-neutral method (NEXTN is printed as EAGLE in the dump; see below).
_METHODS = {"EAGLE": "eagle", "EAGLE3": "eagle3", "NEXTN": "mtp", "STANDALONE": "draft_model"}


def apply_config(b: ProfileBuilder, cfg: dict[str, Any], event: StartupConfig) -> None:
    origin = event.origin
    embedding = as_bool(cfg.get("is_embedding"))
    if embedding is not None:  # an embedding/reward server: one forward pass a request, no decode steps
        b.set("model.runner", "pooling" if embedding else "generate", event, origin)
    if as_bool(cfg.get("disable_cuda_graph")) is True:
        b.set("cuda_graphs.enabled", False, event, f"{origin}: disable_cuda_graph=True")
        b.set("cuda_graphs.mode", "NONE", event, origin)
    elif as_bool(cfg.get("disable_cuda_graph")) is False:
        b.set("cuda_graphs.enabled", True, event, f"{origin}: disable_cuda_graph=False", keep_first=True)
    graph_cfg = cfg.get("cuda_graph_config")
    if isinstance(graph_cfg, dict):
        decode = graph_cfg.get("decode")
        if isinstance(decode, dict):
            if decode.get("backend") == "disabled":
                b.set("cuda_graphs.enabled", False, event, f"{origin}: cuda_graph_config decode disabled")
            if isinstance(decode.get("max_bs"), int):
                b.set("cuda_graphs.max_batch", float(decode["max_bs"]), event, origin)
    max_bs = cfg.get("cuda_graph_max_bs")
    if isinstance(max_bs, int):
        b.set("cuda_graphs.max_batch", float(max_bs), event, origin)
    algo = cfg.get("speculative_algorithm")
    if isinstance(algo, str) and algo not in ("None", "null", ""):
        b.set("spec.enabled", True, event, origin)
        method = _METHODS.get(algo.upper(), algo.lower())
        draft = cfg.get("speculative_draft_model_path")
        if method == "eagle" and (is_none_like(draft) or draft == cfg.get("model_path")):
            # The dump shows NEXTN as EAGLE; an EAGLE "drafter" that is the target itself (or none at all) is
            # the model's own multi-token-prediction head.
            method = "mtp"
        b.set("spec.method", method, event, origin)
        steps = cfg.get("speculative_num_draft_tokens")
        if isinstance(steps, int):
            # SGLang's draft-token count includes the verified token of the tree root: k = tokens - 1.
            b.set("spec.num_tokens", float(max(steps - 1, 1)), event, f"{origin}: speculative_num_draft_tokens={steps}")
    elif "speculative_algorithm" in cfg:
        b.set("spec.enabled", False, event, origin, keep_first=True)
    kt_weights = cfg.get("kt_weight_path")
    if isinstance(kt_weights, str) and not is_none_like(kt_weights):
        # --kt-weight-path turns on KTransformers' CPU experts: every routed expert beyond
        # --kt-num-gpu-experts is computed on the CPU from host memory (sglang/srt/layers/moe/kt_ep_wrapper.py).
        gpu_experts = cfg.get("kt_num_gpu_experts")
        b.set("offload.cpu_experts", True, event, f"{origin}: kt_weight_path set, kt_num_gpu_experts={gpu_experts}")
    if as_bool(cfg.get("disable_custom_all_reduce")) is True:
        b.set("allreduce.custom", False, event, origin)
        b.set("allreduce.reason", "user", event, origin)
    radix = as_bool(cfg.get("disable_radix_cache"))
    if radix is not None:
        b.set("sched.prefix_caching", not radix, event, origin)
    attn = cfg.get("attention_backend")
    if isinstance(attn, str) and attn not in ("None", "null"):
        b.set("attention.backend", attn.upper(), event, origin)
    draft_attn = cfg.get("speculative_draft_attention_backend")
    if isinstance(draft_attn, str) and draft_attn not in ("None", "null"):
        b.set("attention.drafter_backend", draft_attn.upper(), event, origin)
