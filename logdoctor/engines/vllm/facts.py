"""vLLM's configuration dump -> facts, beyond the plain settings of flags.py (read by the core).

non-default args: {'speculative_config': {'method': 'mtp', 'num_speculative_tokens': 3}, ...}
    -> spec.enabled = True, spec.method = mtp, spec.num_tokens = 3
engine init: ... enforce_eager=True ...  -> cuda_graphs.enabled = False, compile.disabled = True
engine init: ... device_config=cpu ...    -> platform = cpu (the platform line is DEBUG since 0.11.1)
non-default args: {'runner': 'pooling', ...} -> model.runner = pooling (no decode steps)
"""

from __future__ import annotations

from typing import Any

from logdoctor.events import StartupConfig
from logdoctor.facts.profile import ProfileBuilder
from logdoctor.facts.values import as_bool, enum_name, is_none_like

CONFIG_FACTS = (
    "cuda_graphs.enabled",
    "cuda_graphs.mode",
    "cuda_graphs.max_batch",
    "cuda_graphs.drafter",
    "compile.disabled",
    "spec.enabled",
    "spec.method",
    "spec.draft_model",
    "spec.num_tokens",
    "spec.synthetic_acceptance",
    "allreduce.custom",
    "allreduce.reason",
    "sched.prefix_caching",
    "attention.backend",
    "attention.forced",
    "async_scheduling.enabled",
    "model.dtype",
    "model.runner",
    "platform",
)
# `device_config=` of the engine-init dump: the device vLLM resolved (vllm/config/device.py); cuda is left to the
# platform line, which also names ROCm and the GPU.
_DEVICE_PLATFORMS = frozenset({"cpu", "tpu", "xpu", "hpu", "neuron"})
# `task=` (before 0.10) and `runner=`/`convert=` (0.10+) of vllm/config: the tasks that pool one forward pass
# into a vector or a score instead of decoding (`RunnerOption`, `_ResolvedTask`, `ConvertOption`).
_POOLING_TASKS = frozenset({"pooling", "embed", "embedding", "classify", "score", "reward"})
_GENERATE_TASKS = frozenset({"generate", "transcription", "draft"})


def _runner(cfg: dict[str, Any]) -> str | None:
    """generate or pooling, where the dump says: `runner`/`task`/`convert`, or an engine init's `pooler_config`."""
    for key in ("runner", "task", "convert"):
        value = cfg.get(key)
        if isinstance(value, str):
            if value.lower() in _POOLING_TASKS:
                return "pooling"
            if value.lower() in _GENERATE_TASKS and key != "convert":
                return "generate"
    if "pooler_config" in cfg:  # the engine-init dump: None for a decoding model, PoolerConfig(...) for pooling
        return "generate" if is_none_like(cfg["pooler_config"]) else "pooling"
    return None


def apply_config(b: ProfileBuilder, cfg: dict[str, Any], event: StartupConfig) -> None:
    origin = event.origin
    runner = _runner(cfg)
    if runner is not None:
        b.set("model.runner", runner, event, origin, keep_first=runner == "generate")
    if isinstance(cfg.get("dtype"), str) and cfg["dtype"] not in ("auto", "None"):
        b.set("model.dtype", cfg["dtype"].removeprefix("torch."), event, origin, keep_first=True)
    eager = as_bool(cfg.get("enforce_eager"))
    if eager is True:
        b.set("cuda_graphs.enabled", False, event, f"{origin}: enforce_eager=True")
        b.set("cuda_graphs.mode", "NONE", event, origin)
        b.set("compile.disabled", True, event, origin)
    elif eager is False:
        b.set("cuda_graphs.enabled", True, event, f"{origin}: enforce_eager=False", keep_first=True)
    comp = cfg.get("compilation_config")
    if isinstance(comp, dict):
        mode = enum_name(comp.get("cudagraph_mode")) if "cudagraph_mode" in comp else None
        if mode:
            b.set("cuda_graphs.mode", mode, event, origin)
            if mode == "NONE":
                b.set("cuda_graphs.enabled", False, event, f"{origin}: cudagraph_mode=NONE")
        if comp.get("use_cudagraph") is False:
            b.set("cuda_graphs.enabled", False, event, f"{origin}: use_cudagraph=false")
        sizes = comp.get("cudagraph_capture_sizes")
        max_size = comp.get("max_cudagraph_capture_size", comp.get("max_capture_size"))
        if isinstance(max_size, int):
            b.set("cuda_graphs.max_batch", float(max_size), event, origin, keep_first=True)
            if max_size == 0:
                b.set("cuda_graphs.enabled", False, event, f"{origin}: max_capture_size=0")
        elif isinstance(sizes, list) and sizes and all(isinstance(s, int) for s in sizes):
            b.set("cuda_graphs.max_batch", float(max(sizes)), event, origin, keep_first=True)
    spec = cfg.get("speculative_config")
    if isinstance(spec, dict) and spec:
        method = spec.get("method")
        draft = spec.get("model", spec.get("draft_model"))
        k = spec.get("num_speculative_tokens", spec.get("num_spec_tokens"))
        if method is None and isinstance(draft, str):
            lowered = draft.lower()
            method = next((m for m in ("dflash", "eagle3", "eagle", "mtp", "ngram") if m in lowered), "draft_model")
        b.set("spec.enabled", True, event, origin)
        if method:
            b.set("spec.method", str(method).lower(), event, origin)
        if isinstance(draft, str) and draft not in ("None", "[ngram]"):
            b.set("spec.draft_model", draft, event, origin)
        if isinstance(k, int):
            b.set("spec.num_tokens", float(k), event, origin)
        if as_bool(spec.get("enforce_eager")) is True:
            b.set("cuda_graphs.drafter", False, event, f"{origin}: speculative_config enforce_eager")
        if spec.get("rejection_sample_method") == "synthetic":
            b.set("spec.synthetic_acceptance", True, event, origin)
    elif "speculative_model" in cfg and not is_none_like(cfg.get("speculative_model")):
        draft = str(cfg["speculative_model"])
        b.set("spec.enabled", True, event, origin)
        b.set("spec.draft_model", draft, event, origin)
        b.set("spec.method", "ngram" if "ngram" in draft else "draft_model", event, origin)
        k = cfg.get("num_speculative_tokens")
        if isinstance(k, int):
            b.set("spec.num_tokens", float(k), event, origin)
    elif origin in ("engine init", "command line") and (
        (spec is None and "speculative_config" in cfg)
        or ("speculative_model" in cfg and is_none_like(cfg.get("speculative_model")))  # vLLM before 0.7
    ):
        b.set("spec.enabled", False, event, origin, keep_first=True)
    if as_bool(cfg.get("disable_custom_all_reduce")) is True:
        b.set("allreduce.custom", False, event, origin)
        b.set("allreduce.reason", "user", event, origin)
    prefix_flag = as_bool(cfg.get("enable_prefix_caching"))
    if prefix_flag is not None:
        b.set("sched.prefix_caching", prefix_flag, event, origin)
    attn = cfg.get("attention_backend")
    if isinstance(attn, str) and attn not in ("None", "auto"):
        b.set("attention.backend", attn.upper(), event, origin, keep_first=True)
        b.set("attention.forced", True, event, origin)
    device = cfg.get("device_config", cfg.get("device"))
    if isinstance(device, str) and device.lower() in _DEVICE_PLATFORMS:
        b.set("platform", device.lower(), event, f"{origin}: device_config={device}", keep_first=True)
    async_flag = as_bool(cfg.get("async_scheduling"))
    if async_flag is not None:
        b.set("async_scheduling.enabled", async_flag, event, origin)
