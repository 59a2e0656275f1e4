"""A deployment profile -> the model's `Deployment`, reading only facts (docs/rules.md) and saying what is missing.

inputs = deployment_from_profile(profile, gpu="RTX A6000")
inputs.deployment          # Deployment(gpu=RTX A6000, tp=2, weights_bytes_per_gpu=29.4e9, ...)
inputs.unknown             # [Missing("layers", "num_hidden_layers in the model's config.json ..."), ...]
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from typing import Any, Protocol

from logdoctor.facts.speculation import DRAFTER_LAYERS, overhead_seconds
from logdoctor.perf.hardware import HardwareTable, load_hardware
from logdoctor.perf.measured import as_measured
from logdoctor.perf.model import GIB, Deployment, Link, SpecConfig
from logdoctor.perf.options import unknown_gpu_how


class FactSource(Protocol):
    """What the adapter needs of a profile (`logdoctor.facts.Profile` has it)."""

    def value(self, name: str) -> Any: ...

    def has(self, name: str) -> bool: ...


@dataclass(frozen=True)
class Missing:
    what: str
    how: str  # the flag, command or line that would give it

    def __str__(self) -> str:
        return f"{self.what}: {self.how}"


@dataclass
class Inputs:
    deployment: Deployment | None
    unknown: list[Missing] = field(default_factory=list)
    derived: list[str] = field(default_factory=list)  # how each input was read or derived, for the working
    measured_per_request: float | None = None
    measured_aggregate: float | None = None


# bytes per weight by quantization method (weights only; 4-bit formats carry group scales: ~0.5)
_QUANT_BYTES = {
    "fp8": 1.0,
    "fp8linearmethod": 1.0,
    "modelopt": 1.0,
    "fbgemm_fp8": 1.0,
    "awq": 0.5,
    "awq_marlin": 0.5,
    "gptq": 0.5,
    "gptq_marlin": 0.5,
    "bitsandbytes": 0.5,
    "mxfp4": 0.5,
    "nvfp4": 0.5,
}
_DTYPE_BYTES = {"bfloat16": 2.0, "float16": 2.0, "half": 2.0, "float32": 4.0, "float": 4.0}
_PARAMS_RE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)[bB](?![a-zA-Z])")
_ACTIVE_RE = re.compile(r"-A(\d+(?:\.\d+)?)[bB](?![a-zA-Z])")


def median_value(series: Any) -> float | None:
    if isinstance(series, list):
        nums = [float(x) for x in series if isinstance(x, int | float) and not isinstance(x, bool)]
        return statistics.median(nums) if nums else None
    if isinstance(series, int | float) and not isinstance(series, bool):
        return float(series)
    return None


def median_positive(series: Any) -> float | None:
    """The median of the positive values of a series (intervals in which something ran)."""
    if isinstance(series, list):
        return median_value([x for x in series if isinstance(x, int | float) and not isinstance(x, bool) and x > 0])
    return median_value(series)


def params_from_name(model: str) -> tuple[float | None, float | None]:
    """(total, active) parameters from a model name: `Qwen3-30B-A3B` -> (30e9, 3e9), `Llama-3.1-8B` -> (8e9, None)."""
    tail = model.rstrip("/").rsplit("/", 1)[-1]
    active_m = _ACTIVE_RE.search(tail)
    active = float(active_m.group(1)) * 1e9 if active_m else None
    rest = _ACTIVE_RE.sub("", tail)
    sizes = [float(m.group(1)) for m in _PARAMS_RE.finditer(rest)]
    total = max(sizes) * 1e9 if sizes else None
    return total, active


_NAME_BYTES = (
    (re.compile(r"fp8|w8a8|int8", re.I), 1.0),
    (re.compile(r"awq|gptq|int4|w4a16|nf4|mxfp4|nvfp4", re.I), 0.5),
)


def _dtype_bytes(
    profile: FactSource, model: str, weights_bytes: float | None, params: float | None, shards: int
) -> tuple[float, str]:
    """Bytes per weight: the quantization method, else the model name (`-FP8`, `-AWQ`), else weights / params
    (both known), else the dtype; 2 when nothing says."""
    quant = str(profile.value("quant.method") or "").lower()
    if quant in _QUANT_BYTES:
        return _QUANT_BYTES[quant], f"quant.method {quant}"
    tail = model.rstrip("/").rsplit("/", 1)[-1]
    for pattern, size in _NAME_BYTES:
        if pattern.search(tail):
            return size, f"model name {tail!r}"
    if weights_bytes is not None and params:
        ratio = weights_bytes * shards / params
        size = min((0.5, 1.0, 2.0, 4.0), key=lambda b: abs(b - ratio))
        return size, f"weights loaded x {shards} / parameters in the name = {ratio:.2f}"
    dtype = str(profile.value("model.dtype") or "").lower()
    if dtype in _DTYPE_BYTES:
        return _DTYPE_BYTES[dtype], f"model.dtype {dtype}"
    return 2.0, "assumed: no dtype, quantization or size in the log"


def _link(profile: FactSource, has_nvlink: bool, derived: list[str]) -> Link:
    reason = profile.value("allreduce.reason")
    if (
        profile.value("topology.p2p_supported") is False
        or profile.value("nccl.p2p_disabled_env") is True
        or reason == "no-p2p"
        or profile.value("nccl.transport") in ("SHM", "NET")
    ):
        derived.append(
            "link: p2p-off (P2P check failed, NCCL_P2P_DISABLE, SHM/NET transport or custom all-reduce reason no-p2p)"
        )
        return "p2p-off"
    pcie_only = profile.value("topology.pcie_only")
    if pcie_only is False:
        derived.append("link: nvlink (nvidia-smi topo -m shows NV# links)")
        return "nvlink"
    if pcie_only is True or reason == "pcie-more-than-two" or not has_nvlink:
        derived.append("link: pcie (topology, custom all-reduce reason, or a GPU without NVLink)")
        return "pcie"
    return "unknown"


# A drafter's architecture class names its method (vLLM: Qwen3_5MTP, DFlashLagunaForCausalLM, EagleLlamaForCausalLM,
# Eagle3LlamaForCausalLM); the first match wins.
_ARCH_METHODS = (("dflash", "dflash"), ("eagle3", "eagle3"), ("eagle", "eagle"), ("mtp", "mtp"), ("medusa", "medusa"))


def _method_from_architecture(arch: str, derived: list[str]) -> str:
    low = arch.lower()
    for needle, method in _ARCH_METHODS:
        if needle in low:
            derived.append(f"speculative method: {method} from the drafter's architecture {arch}")
            return method
    return "unknown"


def _architecture(
    profile: FactSource,
    weights_bytes: float | None,
    dtype_bytes: float,
    shards: int,
    derived: list[str],
    unknown: list[Missing],
) -> None:
    """What the log's `Resolved architecture` and loaded size say about the model: multimodal (a vision encoder
    loaded but not read by text decode), the parameter count (a MoE: `moe_evidence`)."""
    arch = str(profile.value("model.architecture") or "")
    if weights_bytes is not None:
        derived.append(
            f"parameters from the load: W_gpu x {shards} / {dtype_bytes:g} bytes = {weights_bytes * shards / dtype_bytes / 1e9:.1f}e9"
        )
    if not arch:
        return
    derived.append(f"architecture: {arch} (`Resolved architecture`)")
    if arch.endswith("ForConditionalGeneration"):
        derived.append(
            "multimodal architecture: its vision encoder is loaded but text decode does not read it; its size is not "
            "in the log, so the bound is conservative by it"
        )


# Architectures that route every token to a few experts (transformers' and vLLM's model classes): `Moe` in the class
# name (Qwen3Moe, Qwen3_5Moe, Glm4Moe, Ernie4_5_Moe, Olmoe, PhiMoE, GraniteMoe, HunYuanMoEV1), and the MoE-only families
# whose class does not say so: Mixtral, DeepSeek-V2/V3 (Kimi K2), gpt-oss, Qwen3-Next, Llama 4, DBRX, Jamba, Arctic,
# Grok-1, MiniMax.
_MOE_ARCHITECTURE = re.compile(
    r"moe|mixtral|deepseekv[23]|gptoss|qwen3next|llama4|dbrx|jamba|arctic|grok|minimax", re.I
)


_NAME_SEPARATORS = re.compile(r"[-_.\s]")  # `gpt-oss-120b` -> `gptoss120b`, as the architecture spells the family


def moe_evidence(profile: FactSource) -> str | None:
    """What says the model is a MoE: its architecture, the engine's MoE kernel lines (`model.moe`), its
    config.json's routed experts, or a name of one of the MoE-only families (`openai/gpt-oss-120b`, where a pasted
    benchmark gives the name and no architecture line); None where nothing does."""
    arch = str(profile.value("model.architecture") or "")
    if _MOE_ARCHITECTURE.search(arch):
        return f"its architecture {arch}"
    if profile.value("model.moe") is True:
        return "the engine's MoE kernel lines"
    experts = profile.value("model.experts")
    if isinstance(experts, int | float) and not isinstance(experts, bool) and experts > 1:
        return f"{experts:g} routed experts in its config.json"
    name = str(profile.value("model") or "").rstrip("/").rsplit("/", 1)[-1]
    if _MOE_ARCHITECTURE.search(_NAME_SEPARATORS.sub("", name)):
        return f"its name {name}"
    return None


def _drafter_bytes(
    profile: FactSource, method: str, dtype_bytes: float, shards: int, derived: list[str]
) -> float | None:
    """A separate draft model's weights per GPU from the parameter count in its name (`Qwen3-0.6B`); None for drafters
    named after their target (`Qwen3.6-27B-DFlash`, EAGLE heads), whose size comes from their layer count."""
    if method != "draft_model":
        return None
    name = str(profile.value("spec.draft_model") or "")
    params, _ = params_from_name(name) if name else (None, None)
    if params is None:
        return None
    size = params * dtype_bytes / max(shards, 1)
    derived.append(f"draft model: {params / 1e9:g}e9 parameters from its name {name!r}, {size / 1e9:.2f} GB per GPU")
    return size


def _drafter_loaded(spec: SpecConfig, held: float, target_layers: int | None, lm_head: float | None) -> float | None:
    """The drafter's own weights per GPU inside the loaded figure: its size where known, else its layers at the
    size of a target layer, w_layer = (W - W_head) / (L_t + L_d); None where the layer counts are unknown."""
    if spec.drafter_bytes_per_gpu:
        return spec.drafter_bytes_per_gpu
    if spec.drafter == "lookup" or not target_layers:
        return None
    known = DRAFTER_LAYERS.get(spec.method)
    n = spec.drafter_layers if spec.drafter_layers is not None else (known.layers if known else None)
    if n is None:
        return None
    return n * max(held - (lm_head or 0.0), 0.0) / (target_layers + n)


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return None


# The loaded figure holds the text model's weights plus what the shape does not count (a vision tower, MTP layers,
# allocator slack): the shape's total should fall a little below it. A shape far off it is another model's config.
_SHAPE_LOAD_RANGE = (0.6, 1.1)


def _read_from_shape(
    read_params: float | None,
    params: float | None,
    vocab: int | None,
    hidden: int | None,
    dtype_bytes: float,
    shards: int,
    loaded: float | None,
    derived: list[str],
    unknown: list[Missing],
    where: str = "the config.json's shape",
) -> float | None:
    """The bytes one decode step reads per GPU from the model's config.json (or its `models:` entry): its layers' weights (the routed
    experts a token uses) at the weights' bytes, plus the LM head at 2 bytes (quantised checkpoints keep it in 16
    bits); not the input embedding, a vision tower or MTP layers, which the loaded figure counts. None without a
    config, or when the config does not match the load (said in `unknown`)."""
    if read_params is None:
        return None
    head = float(vocab * hidden) if vocab and hidden else 0.0
    read = (max(read_params - head, 0.0) * dtype_bytes + head * 2.0) / max(shards, 1)
    held = (max((params or read_params) - head, 0.0) * dtype_bytes + head * 2.0) / max(shards, 1)
    if loaded is not None and not _SHAPE_LOAD_RANGE[0] * loaded <= held <= _SHAPE_LOAD_RANGE[1] * loaded:
        unknown.append(
            Missing(
                "the model's config.json",
                f"its shape holds {held / 1e9:.2f} GB per GPU against {loaded / 1e9:.2f} GB loaded: another "
                "model's config, or another dtype? The loaded figure is used",
            )
        )
        return None
    derived.append(
        f"weights a step reads per GPU from {where}: ({read_params / 1e9:.4g}e9 read parameters - "
        f"LM head {head / 1e9:.3g}e9) x {dtype_bytes:g} B + LM head x 2 B, / {shards} = {read / 1e9:.2f} GB"
        + (f" (of {loaded / 1e9:.2f} GB loaded)" if loaded is not None else "")
    )
    return read


def deployment_from_profile(
    profile: FactSource,
    gpu: str | None = None,
    *,
    table: HardwareTable | None = None,
    layers: int | None = None,
    hidden_size: int | None = None,
    unread_bytes_per_gpu: float = 0.0,
    lm_head_bytes_per_gpu: float | None = None,
    vocab_size: int | None = None,
    shape_read_params: float | None = None,
    shape_params: float | None = None,
    shape_source: str = "the config.json's shape",
) -> Inputs:
    """Build the model's inputs from facts; `gpu` (a `--gpu` name) wins over `gpu.name` from the logs. The model's
    config.json, where given (`model.read_params`, `spec.draft_layers`, ...), says what a step reads; else the
    parameter counts of the model's `models:` entry (`shape_read_params`, `shape_params`, from `shape_source`)."""
    table = table or load_hardware()
    unknown: list[Missing] = []
    derived: list[str] = []
    name = gpu or profile.value("gpu.name")
    if not name:
        unknown.append(
            Missing(
                "GPU",
                unknown_gpu_how(profile),
            )
        )
        return Inputs(None, unknown, derived)
    found = table.lookup(str(name))
    if found.gpu is None:
        unknown.append(Missing("GPU", found.message))
        return Inputs(None, unknown, derived)
    derived.append(f"GPU: {found.message} ({'--gpu' if gpu else 'gpu.name'})")
    spec_gpu, measured = as_measured(
        found.gpu,
        sm_clock_ratio=_number(profile.value("gpu.sm_clock_ratio")),
        pcie_generation=_number(profile.value("gpu.pcie_link_generation")),
        pcie_lanes=_number(profile.value("gpu.pcie_link_width")),
    )
    derived.extend(measured)

    tp = int(profile.value("parallel.tp") or 1)
    pp = int(profile.value("parallel.pp") or 1)
    if not profile.has("parallel.tp"):
        unknown.append(
            Missing(
                "tensor-parallel size", "include the startup config (`non-default args` / `server_args=`); TP=1 assumed"
            )
        )

    model = str(profile.value("model") or "")
    total, active = params_from_name(model) if model else (None, None)
    config_params = _number(profile.value("model.params"))
    read_params = _number(profile.value("model.read_params"))
    if read_params is None and shape_read_params:
        # the models: table's counts for this model (its shape, cited there) stand where no config.json was given
        config_params, read_params = _number(shape_params) or config_params, _number(shape_read_params)
    else:
        shape_source = "the config.json's shape"
    if config_params:
        # the config's shape, not the name's rounding: a step reads `read_params` of them (MoE: the routed experts)
        total, active = config_params, read_params
    weights = profile.value("model.weights_gib")
    weights_bytes = float(weights) * GIB if isinstance(weights, int | float) else None
    dtype_bytes, how = _dtype_bytes(profile, model, weights_bytes, total, tp * pp)
    derived.append(f"weight dtype: {dtype_bytes:g} bytes ({how})")
    if weights_bytes is not None:
        derived.append(f"weights per GPU: {weights} GiB from model.weights_gib")
    elif total is not None:
        where = "the model's config.json" if config_params else f"the model name {model!r}"
        derived.append(f"parameters: {total / 1e9:.3g}e9 from {where}, {dtype_bytes:g} bytes each")
    else:
        unknown.append(
            Missing(
                "weights per GPU",
                "include the `Model loading took X GiB` line (vLLM) / `Load weight end ... mem usage` (SGLang)",
            )
        )
        return Inputs(None, unknown, derived)
    _architecture(profile, weights_bytes, dtype_bytes, tp * pp, derived, unknown)
    active_fraction = 1.0
    from_shape = _read_from_shape(
        read_params,
        config_params,
        vocab_size,
        hidden_size,
        dtype_bytes,
        tp * pp,
        weights_bytes,
        derived,
        unknown,
        shape_source,
    )
    if from_shape is not None:
        weights_bytes, unread_bytes_per_gpu, active = from_shape, 0.0, None
        # the read parameters leave the vision encoder out: the bound is no longer conservative by it
        derived[:] = [d for d in derived if not d.startswith("multimodal architecture")]
    if active is not None and total:
        active_fraction = active / total
        derived.append(f"MoE: {active / 1e9:g}e9 of {total / 1e9:g}e9 parameters active (model name)")
    moe = moe_evidence(profile)
    if moe is not None and active is None and from_shape is None:
        # A step reads the experts a token routes to, a share the log does not give: a bound from every expert
        # is below what the run can reach (a MoE of 26e9 with 4e9 active runs ~4x faster), so none is given.
        unknown.insert(
            0,
            Missing(
                "MoE active parameters",
                f"no bound: active parameters of {model or 'the model'} unknown (a MoE by {moe}; a step reads only "
                "the experts a token routes to). Give the model's config.json (`logdoctor diagnose LOG config.json`) "
                "or a models: entry with read_params in a --hardware file",
            ),
        )
        derived.append(f"MoE by {moe}, active parameters unknown: no bound")
        return Inputs(None, unknown, derived)

    # intervals in which something ran: an idle interval (0 running) says nothing about the batch of decode
    running = median_positive(profile.value("sched.running"))
    batch = max(1, round(running)) if running else 1
    if running is None:
        unknown.append(
            Missing(
                "running requests",
                "keep the stats lines (vLLM without --disable-log-stats; SGLang Decode batch lines); batch 1 assumed",
            )
        )

    kv_gib = profile.value("kv.memory_gib")
    kv_tokens = profile.value("kv.tokens")
    kv_per_token = None
    if isinstance(kv_gib, int | float) and isinstance(kv_tokens, int | float) and kv_tokens:
        kv_per_token = float(kv_gib) * GIB / float(kv_tokens)
        derived.append(
            f"KV bytes per token per GPU: {kv_gib} GiB / {kv_tokens:.0f} tokens = {kv_per_token / 1e3:.1f} kB"
        )
    usage = median_positive(profile.value("kv.usage"))
    context = None
    if usage is not None and isinstance(kv_tokens, int | float) and running:
        context = usage * float(kv_tokens) / running
        derived.append(
            f"context per request: KV usage {usage:.3f} x {kv_tokens:.0f} tokens / {running:g} running = {context:.0f} tokens"
        )
    if kv_per_token is None or context is None:
        unknown.append(
            Missing(
                "KV read per step",
                "keep the `Available KV cache memory` / `GPU KV cache size` lines and the stats lines",
            )
        )

    if layers is None:
        unknown.append(
            Missing(
                "layers",
                "num_hidden_layers / hidden_size of the model's config.json: add the model under `models:` in a "
                "--hardware file (all-reduce and eager launch time left out)",
            )
        )
    if weights_bytes is not None and not unread_bytes_per_gpu and from_shape is None:
        derived.append(
            "weights read = weights loaded: an untied input embedding or a vision encoder, loaded but not read by "
            "decode, makes the bound conservative by their size (pass unread_bytes_per_gpu)"
        )
    link = _link(profile, spec_gpu.nvlink is not None, derived)
    if tp > 1 and link == "unknown":
        unknown.append(
            Missing("link between the GPUs", "run `nvidia-smi topo -m` (logdoctor diagnose HOST collects it)")
        )
    custom = profile.value("allreduce.custom")
    cuda_graphs = profile.value("cuda_graphs.enabled") is not False

    spec = None
    if profile.value("spec.enabled") is True:
        k = profile.value("spec.num_tokens")
        positions = profile.value("spec.position_acceptance")
        tau = median_value(profile.value("spec.acceptance_length"))
        if isinstance(k, int | float) and k > 0:
            method = str(profile.value("spec.method") or "unknown")
            if method == "unknown":
                method = _method_from_architecture(str(profile.value("spec.draft_architecture") or ""), derived)
            drafter_bytes = _drafter_bytes(profile, method, dtype_bytes, tp * pp, derived)
            drafter_layers = _number(profile.value("spec.draft_layers"))
            draft_params = _number(profile.value("spec.draft_params"))
            if draft_params and drafter_bytes is None:
                # a drafter's checkpoint is bf16 (DFlash, EAGLE-3 drafters ship bf16 whatever the target's dtype)
                drafter_bytes = draft_params * 2.0 / max(tp * pp, 1)
                derived.append(
                    f"drafter: {draft_params / 1e9:.3g}e9 parameters of its own from its config.json "
                    f"({drafter_bytes / 1e9:.2f} GB per GPU at 2 bytes)"
                )
            if drafter_layers:
                derived.append(f"drafter layers: {drafter_layers:g} from its config.json (spec.draft_layers)")
            spec = SpecConfig(
                k=int(k),
                method=method,
                drafter_bytes_per_gpu=drafter_bytes,
                drafter_layers=int(drafter_layers) if drafter_layers else None,
                overhead_s_per_token=overhead_seconds(str(profile.value("engine") or "")),
                position_acceptance=tuple(float(x) for x in positions)
                if isinstance(positions, list) and positions
                else None,
                mean_acceptance_length=tau,
            )
            if spec.position_acceptance is None and tau is None:
                unknown.append(
                    Missing(
                        "speculative acceptance", "keep the `SpecDecoding metrics` lines (vLLM) / `accept len` (SGLang)"
                    )
                )
        else:
            unknown.append(Missing("speculative tokens (k)", "include the speculative config in the startup block"))

    if spec is not None and weights_bytes is not None and profile.value("engine") == "vllm" and from_shape is None:
        drafter = _drafter_loaded(spec, weights_bytes - unread_bytes_per_gpu, layers, lm_head_bytes_per_gpu)
        if drafter:
            unread_bytes_per_gpu += drafter
            derived.append(
                f"drafter weights in `Model loading took` (vLLM loads the drafter inside that measurement): "
                f"{drafter / 1e9:.2f} GB per GPU that a target step does not read"
            )
    offload = profile.value("offload.cpu_gb")
    host_bytes = float(offload) * GIB if isinstance(offload, int | float) and offload > 0 else 0.0
    if host_bytes:
        derived.append(f"weights in host memory: {offload} GiB per GPU from offload.cpu_gb (--cpu-offload-gb)")
    dep = Deployment(
        gpu=spec_gpu,
        gpus=int(profile.value("gpu.count") or tp * pp),
        tp=tp,
        pp=pp,
        weights_bytes_per_gpu=weights_bytes,
        weights_read_from=shape_source if from_shape is not None else "",
        params=total,
        active_fraction=active_fraction,
        dtype_bytes=dtype_bytes,
        kv_bytes_per_token_per_gpu=kv_per_token,
        context_tokens=context,
        layers=layers,
        hidden_size=hidden_size,
        unread_bytes_per_gpu=unread_bytes_per_gpu,
        lm_head_bytes_per_gpu=lm_head_bytes_per_gpu,
        host_bytes_per_gpu=host_bytes,
        batch=batch,
        link=link,
        custom_allreduce=custom if isinstance(custom, bool) else None,
        cuda_graphs=cuda_graphs,
        spec=spec,
    )
    per_request = median_value(profile.value("throughput.per_request"))
    if per_request is None:
        per_request = median_value(profile.value("bench.per_request"))
    aggregate = median_positive(profile.value("throughput.generation"))
    if per_request is None and aggregate is None:
        unknown.append(
            Missing(
                "measured throughput",
                "keep the stats lines (vLLM `Avg generation throughput`, SGLang `gen throughput`)",
            )
        )
    return Inputs(dep, unknown, derived, per_request, aggregate)
