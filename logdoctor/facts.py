"""Events -> one deployment profile, in engine-neutral names, so one rule covers vLLM and SGLang.

    StartupConfig(config={'tensor_parallel_size': 2, ...})       -> parallel.tp = 2
    ServerArgs tp_size=2                                         -> parallel.tp = 2
    SpecDecodeStats(mean_acceptance_length=1.31) x 40            -> spec.acceptance_length = [1.31, ...]
    CudaGraph(kind="mode_downgrade", mode_to="NONE") (later)     -> cuda_graphs.enabled = False (wins over config)

Each fact keeps the source lines it came from, so a finding can show its evidence. `FACTS` declares
every fact with its kind and a hint for when it is missing; the rule loader rejects unknown names.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from logdoctor.events import (
    AllReduceBackends,
    AttentionBackend,
    BenchmarkResult,
    CompileTime,
    CudaGraph,
    CustomAllReduce,
    EngineFailure,
    EngineVersion,
    EventBase,
    GpuInfo,
    GpuP2P,
    GpuTopology,
    HostInfo,
    HybridModel,
    KVCache,
    ModelInfo,
    NcclEnv,
    NcclInfo,
    NcclTransport,
    Offload,
    P2PCheck,
    PerfWarning,
    Platform,
    Preemption,
    Quantization,
    SchedulerConfig,
    SchedulerStats,
    SpecDecodeStats,
    StartupConfig,
)

FactKind = Literal["number", "bool", "str", "series", "list"]


@dataclass(frozen=True)
class Ref:
    """A line that supports a fact."""

    source: str
    line: int
    end_line: int | None = None


@dataclass
class Fact:
    value: Any
    refs: list[Ref] = field(default_factory=list)
    origin: str = ""


@dataclass(frozen=True)
class FactSpec:
    kind: FactKind
    description: str
    hint: str = ""  # how to get the lines this fact needs, shown for insufficient data


_STATS_HINT = (
    "vLLM prints its throughput/KV line every 10 s unless started with --disable-log-stats; "
    "SGLang prints `Decode batch` lines every --decode-log-interval decode steps"
)
_SPEC_HINT = (
    "vLLM prints `SpecDecoding metrics` with the stats line (not with --disable-log-stats); "
    "SGLang prints `accept len` on Decode batch lines"
)
_CONFIG_HINT = (
    "include the startup block of the log (vLLM `non-default args` / engine-init line, SGLang `server_args=`)"
)
_NCCL_HINT = "run with NCCL_DEBUG=INFO and include the NCCL init lines (Channel ... via ...)"
_TOPO_HINT = "include `nvidia-smi topo -m` output (logdoctor diagnose HOST collects it)"

FACTS: dict[str, FactSpec] = {
    # identity
    "engine": FactSpec("str", "serving engine: vllm, sglang, or nccl for a bare NCCL log"),
    "engine.version": FactSpec("str", "engine version as printed, or a range inferred from the header shape"),
    "model": FactSpec("str", "served model", _CONFIG_HINT),
    "model.weights_gib": FactSpec(
        "number", "weights in GPU memory per GPU, GiB (`Model loading took X GiB`, SGLang `mem usage=X GB`)"
    ),
    "model.dtype": FactSpec("str", "model weights dtype: bfloat16, float16, ...", _CONFIG_HINT),
    "model.max_len": FactSpec("number", "maximum model length (context) in tokens", _CONFIG_HINT),
    "parallel.tp": FactSpec("number", "tensor-parallel size", _CONFIG_HINT),
    "parallel.pp": FactSpec("number", "pipeline-parallel size", _CONFIG_HINT),
    "parallel.dp": FactSpec("number", "data-parallel size", _CONFIG_HINT),
    "parallel.nodes": FactSpec("number", "number of nodes the deployment spans", _CONFIG_HINT),
    "platform": FactSpec("str", "device platform the engine detected: cuda, rocm, cpu, ..."),
    "gpu.name": FactSpec("str", "GPU model", _TOPO_HINT),
    "gpu.count": FactSpec("number", "GPUs listed on the host", _TOPO_HINT),
    "host.container": FactSpec("str", "container the engine runs in: lxc, docker, none"),
    # speculative decoding
    "spec.enabled": FactSpec("bool", "speculative decoding configured or observed", _CONFIG_HINT),
    "spec.method": FactSpec(
        "str", "speculative method: mtp, eagle, eagle3, dflash, ngram, draft_model, ...", _CONFIG_HINT
    ),
    "spec.num_tokens": FactSpec("number", "speculative tokens per step (k)", _CONFIG_HINT),
    "spec.draft_model": FactSpec("str", "draft model path", _CONFIG_HINT),
    "spec.acceptance_length": FactSpec(
        "series", "mean acceptance length per interval, counting the bonus token", _SPEC_HINT
    ),
    "spec.acceptance_rate": FactSpec("series", "draft acceptance rate per interval, 0..1", _SPEC_HINT),
    "spec.position_acceptance": FactSpec(
        "list", "acceptance rate per draft position (mean over intervals)", _SPEC_HINT
    ),
    "spec.draft_weights_missing": FactSpec("bool", "the drafter's weights were not loaded (DFlash buffer skipped)"),
    "spec.synthetic_acceptance": FactSpec("bool", "rejection_sample_method='synthetic': acceptance numbers are fake"),
    "spec.v0_fallback": FactSpec("bool", "vLLM fell back to the V0 engine for speculative decoding"),
    # CUDA graphs
    "cuda_graphs.enabled": FactSpec("bool", "target decode replays CUDA graphs", _CONFIG_HINT),
    "cuda_graphs.mode": FactSpec("str", "cudagraph mode: FULL_AND_PIECEWISE, PIECEWISE, NONE, ..."),
    "cuda_graphs.max_batch": FactSpec("number", "largest captured batch size"),
    "cuda_graphs.drafter": FactSpec("bool", "the drafter replays CUDA graphs (False: runs eagerly)"),
    "cuda_graphs.eager_share": FactSpec(
        "number", "share of decode batches that ran without CUDA graphs (SGLang)", _STATS_HINT
    ),
    "cuda_graphs.downgraded": FactSpec("bool", "the engine downgraded the cudagraph mode at startup"),
    # attention
    "attention.backend": FactSpec("str", "attention backend of the target model"),
    "attention.drafter_backend": FactSpec("str", "attention backend of the drafter"),
    "attention.fallback_reason": FactSpec("str", "why a faster attention backend was not used"),
    "attention.forced": FactSpec("bool", "the user forced the attention backend"),
    "attention.stale_env": FactSpec("bool", "VLLM_ATTENTION_BACKEND is set but ignored by this version"),
    # communication
    "allreduce.custom": FactSpec("bool", "the engine's custom all-reduce kernel is in use"),
    "allreduce.reason": FactSpec("str", "why custom all-reduce is off: no-p2p, pcie-more-than-two, user, ..."),
    "nccl.transport": FactSpec("str", "slowest NCCL transport between GPUs of one host: P2P, SHM or NET", _NCCL_HINT),
    "nccl.p2p_channels": FactSpec("number", "NCCL channels connected via P2P", _NCCL_HINT),
    "nccl.shm_channels": FactSpec("number", "NCCL channels connected via SHM", _NCCL_HINT),
    "nccl.net_channels": FactSpec("number", "NCCL channels connected via NET", _NCCL_HINT),
    "nccl.p2p_disabled_env": FactSpec("bool", "NCCL_P2P_DISABLE=1 (or NCCL_P2P_LEVEL=LOC) in the environment"),
    "nccl.hosts": FactSpec("number", "distinct hosts in the NCCL lines", _NCCL_HINT),
    "topology.pcie_only": FactSpec("bool", "GPUs are linked only through PCIe (no NVLink)", _TOPO_HINT),
    "topology.p2p_supported": FactSpec("bool", "nvidia-smi reports P2P between every GPU pair", _TOPO_HINT),
    "topology.spans_nodes": FactSpec("bool", "tensor-parallel workers run on more than one node"),
    # KV cache and scheduler
    "kv.tokens": FactSpec("number", "KV cache capacity in tokens"),
    "kv.max_concurrency": FactSpec("number", "requests of max_model_len that fit in the KV cache"),
    "kv.memory_gib": FactSpec("number", "KV cache memory per GPU, GiB (`Available KV cache memory: X GiB`)"),
    "kv.usage": FactSpec("series", "KV cache usage per interval, 0..1", _STATS_HINT),
    "kv.cpu_usage": FactSpec("series", "CPU (swap) KV cache usage per interval, 0..1", _STATS_HINT),
    "sched.running": FactSpec("series", "running requests per interval", _STATS_HINT),
    "sched.waiting": FactSpec("series", "waiting (queued) requests per interval", _STATS_HINT),
    "sched.swapped": FactSpec("series", "swapped requests per interval (vLLM V0)", _STATS_HINT),
    "sched.preemptions": FactSpec("number", "preemptions and retractions counted in the log"),
    "sched.max_num_seqs": FactSpec(
        "number", "max concurrent requests (max_num_seqs / max_running_requests)", _CONFIG_HINT
    ),
    "sched.max_batched_tokens": FactSpec(
        "number", "token budget per step (max_num_batched_tokens / chunked_prefill_size)", _CONFIG_HINT
    ),
    "sched.spec_token_budget_warning": FactSpec("bool", "vLLM capped max_num_scheduled_tokens for draft slots"),
    "sched.prefix_caching": FactSpec("bool", "prefix caching enabled"),
    "memory.fraction": FactSpec("number", "gpu_memory_utilization / mem_fraction_static", _CONFIG_HINT),
    # throughput
    "throughput.generation": FactSpec("series", "generation tok/s per interval, warm-up excluded", _STATS_HINT),
    "throughput.per_request": FactSpec(
        "series", "decode tok/s per request in intervals with one running request", _STATS_HINT
    ),
    "throughput.with_spec": FactSpec(
        "series", "generation tok/s of processes that ran speculative decoding", _STATS_HINT
    ),
    "throughput.without_spec": FactSpec(
        "series", "generation tok/s of processes in the same input that ran without speculation"
    ),
    "throughput.intervals": FactSpec("number", "stats intervals seen (before warm-up exclusion)", _STATS_HINT),
    "throughput.first_interval_ratio": FactSpec(
        "number", "first interval's generation tok/s divided by the steady-state median", _STATS_HINT
    ),
    "bench.per_request": FactSpec("series", "per-request decode tok/s from pasted benchmark results"),
    "bench.output_throughput": FactSpec("series", "aggregate output tok/s from pasted benchmark results"),
    "bench.concurrency": FactSpec("series", "concurrency of each pasted benchmark row"),
    # hybrid models
    "hybrid.is_hybrid": FactSpec("bool", "mamba / linear-attention hybrid model"),
    "hybrid.attention_block_size": FactSpec("number", "attention block size forced by mamba page alignment"),
    "hybrid.mamba_padding": FactSpec("number", "percent the mamba page was padded"),
    "hybrid.mamba_cache_mode": FactSpec("str", "mamba cache mode: none, align, all"),
    "hybrid.prefix_caching_disabled": FactSpec("bool", "prefix caching was disabled because of the hybrid layout"),
    "hybrid.padding_waste": FactSpec("number", "percent of KV memory padding layers may waste"),
    "hybrid.cudagraph_capped": FactSpec("bool", "CUDA-graph capture sizes capped to fit mamba cache blocks"),
    # compile / warm-up
    "compile.torch_seconds": FactSpec("number", "torch.compile time"),
    "compile.init_seconds": FactSpec("number", "engine init time (profile, KV cache, warm-up)"),
    "compile.graph_capture_seconds": FactSpec("number", "CUDA-graph capture time"),
    "compile.disabled": FactSpec("bool", "torch.compile turned off (eager or TORCH_COMPILE_DISABLE)"),
    "compile.cache_hit": FactSpec("bool", "compiled graphs loaded from cache"),
    "compile.shm_waits": FactSpec("number", "`No available shared memory broadcast block` waits"),
    "stall.serving_waits": FactSpec(
        "number",
        "`No available shared memory broadcast block` waits after serving started (a stuck worker)",
        _STATS_HINT,
    ),
    "compile.phase_seconds": FactSpec("number", "wall-clock time between the first and last compile/warm-up line"),
    "compile.startup_seconds": FactSpec(
        "number", "longest of torch.compile, engine init, graph capture and the compile phase's wall-clock time"
    ),
    # quantization
    "quant.method": FactSpec("str", "quantization method"),
    "quant.kernel": FactSpec("str", "GEMM / MoE kernel chosen"),
    "quant.fallback": FactSpec("bool", "a slower quantization kernel was chosen"),
    "quant.fallback_reason": FactSpec("str", "the engine's words on the slower kernel"),
    "quant.default_kernel_config": FactSpec("bool", "default (untuned) MoE or block-FP8 kernel config used"),
    # offload
    "offload.cpu_gb": FactSpec("number", "weights offloaded to CPU memory, GiB"),
    "offload.swap_gb": FactSpec("number", "KV swap space, GiB (vLLM V0)"),
    "offload.kv": FactSpec("bool", "KV cache offloaded to host memory"),
    # failures and warnings
    "failure.kinds": FactSpec("list", "engine failures seen: engine-dead, cuda-oom, nccl-timeout, ..."),
    "failure.count": FactSpec("number", "engine failure events"),
    "warnings.topics": FactSpec("list", "performance warnings the engine printed, by topic"),
    "async_scheduling.enabled": FactSpec("bool", "vLLM async scheduling on"),
}


# --- configuration vocabulary ---------------------------------------------------------------------


@dataclass(frozen=True)
class ConfigKey:
    """One setting in engine-neutral words, with where each engine prints it and the flag that sets it."""

    fact: str
    vllm_keys: tuple[str, ...]
    sglang_keys: tuple[str, ...]
    vllm_flag: str
    sglang_flag: str


CONFIG_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey("model", ("model", "model_tag"), ("model_path",), "vllm serve MODEL", "--model-path"),
    ConfigKey("parallel.tp", ("tensor_parallel_size",), ("tp_size",), "--tensor-parallel-size", "--tp-size"),
    ConfigKey("parallel.pp", ("pipeline_parallel_size",), ("pp_size",), "--pipeline-parallel-size", "--pp-size"),
    ConfigKey("parallel.dp", ("data_parallel_size",), ("dp_size",), "--data-parallel-size", "--dp-size"),
    ConfigKey("parallel.nodes", (), ("nnodes",), "(Ray cluster)", "--nnodes"),
    ConfigKey(
        "memory.fraction",
        ("gpu_memory_utilization",),
        ("mem_fraction_static",),
        "--gpu-memory-utilization",
        "--mem-fraction-static",
    ),
    ConfigKey(
        "sched.max_num_seqs", ("max_num_seqs",), ("max_running_requests",), "--max-num-seqs", "--max-running-requests"
    ),
    ConfigKey(
        "sched.max_batched_tokens",
        ("max_num_batched_tokens",),
        ("chunked_prefill_size",),
        "--max-num-batched-tokens",
        "--chunked-prefill-size",
    ),
    ConfigKey("quant.method", ("quantization",), ("quantization",), "--quantization", "--quantization"),
    ConfigKey("offload.cpu_gb", ("cpu_offload_gb",), ("cpu_offload_gb",), "--cpu-offload-gb", "--cpu-offload-gb"),
    ConfigKey("offload.swap_gb", ("swap_space",), (), "--swap-space", "(none)"),
    ConfigKey("hybrid.mamba_cache_mode", ("mamba_cache_mode",), (), "--mamba-cache-mode", "(none)"),
    ConfigKey(
        "spec.draft_model",
        (),
        ("speculative_draft_model_path",),
        "--speculative-config '{\"model\": ...}'",
        "--speculative-draft-model-path",
    ),
)


def _is_none_like(value: Any) -> bool:
    return value is None or value in ("None", "null", "")


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if value in ("True", "true"):
        return True
    if value in ("False", "false"):
        return False
    return None


def _enum_name(value: Any) -> str | None:
    """`{'__enum__': 'CUDAGraphMode.FULL_AND_PIECEWISE', ...}` -> 'FULL_AND_PIECEWISE'."""
    if isinstance(value, dict) and "__enum__" in value:
        return str(value["__enum__"]).rsplit(".", 1)[-1]
    if isinstance(value, str) and value:
        return value.rsplit(".", 1)[-1].upper()
    return None


class ProfileBuilder:
    """Accumulates facts; a later `set` of the same fact wins unless `keep_first`."""

    def __init__(self) -> None:
        self.facts: dict[str, Fact] = {}

    def set(
        self, name: str, value: Any, event: EventBase | None = None, origin: str = "", *, keep_first: bool = False
    ) -> None:
        if value is None:
            return
        assert name in FACTS, name
        if keep_first and name in self.facts:
            return
        refs = [_ref(event)] if event is not None else []
        self.facts[name] = Fact(value=value, refs=refs, origin=origin)

    def value(self, name: str) -> Any:
        fact = self.facts.get(name)
        return None if fact is None else fact.value

    def add_ref(self, name: str, event: EventBase) -> None:
        fact = self.facts.get(name)
        if fact is not None and len(fact.refs) < 5:
            ref = _ref(event)
            if ref not in fact.refs:
                fact.refs.append(ref)

    def append(self, name: str, value: Any, event: EventBase, origin: str = "") -> None:
        if value is None:
            return
        fact = self.facts.get(name)
        if fact is None:  # not setdefault: it would build a Fact on every call
            fact = self.facts[name] = Fact(value=[], origin=origin)
        fact.value.append(value)
        if len(fact.refs) < 3:
            fact.refs.append(_ref(event))


def _ref(event: EventBase) -> Ref:
    return Ref(event.source, event.line, event.end_line)


@dataclass
class Profile:
    """The facts of one deployment (all sources given together)."""

    facts: dict[str, Fact]
    engine: str
    version: str | None = None

    def value(self, name: str) -> Any:
        fact = self.facts.get(name)
        return None if fact is None else fact.value

    def has(self, name: str) -> bool:
        fact = self.facts.get(name)
        if fact is None:
            return False
        spec = fact_spec(name)
        return not (isinstance(fact.value, list) and spec is not None and spec.kind == "series" and not fact.value)


# --- a baseline beside the profile (`logdoctor diff`) ----------------------------------------------

# `baseline.spec.acceptance_length` in a rule reads the baseline deployment's `spec.acceptance_length`.
BASELINE_PREFIX = "baseline."


def fact_spec(name: str) -> FactSpec | None:
    """The declaration of a fact name, `baseline.`-prefixed names included."""
    return FACTS.get(name.removeprefix(BASELINE_PREFIX))


def with_baseline(candidate: Profile, baseline: Profile) -> Profile:
    """The candidate's facts plus the baseline's under `baseline.<name>`: what diff-mode rules read."""
    facts = dict(candidate.facts)
    facts.update({BASELINE_PREFIX + name: fact for name, fact in baseline.facts.items()})
    return Profile(facts=facts, engine=candidate.engine, version=candidate.version)


# --- building ------------------------------------------------------------------------------------


def _apply_config_keys(b: ProfileBuilder, cfg: dict[str, Any], event: StartupConfig, engine: str) -> None:
    """The plain settings of CONFIG_KEYS, read under this engine's key names."""
    for key in CONFIG_KEYS:
        for name in key.vllm_keys if engine == "vllm" else key.sglang_keys:
            value = cfg.get(name)
            if _is_none_like(value):
                continue
            if key.fact == "sched.max_batched_tokens" and value == -1:
                continue  # SGLang's chunked_prefill_size=-1: chunked prefill off, no limit to report
            kind = FACTS[key.fact].kind
            b.set(key.fact, _as_number(value) if kind == "number" else str(value), event, event.origin)


def _apply_vllm_config(b: ProfileBuilder, cfg: dict[str, Any], event: StartupConfig) -> None:
    origin = event.origin
    _apply_config_keys(b, cfg, event, "vllm")
    if isinstance(cfg.get("dtype"), str) and cfg["dtype"] not in ("auto", "None"):
        b.set("model.dtype", cfg["dtype"].removeprefix("torch."), event, origin, keep_first=True)
    eager = _as_bool(cfg.get("enforce_eager"))
    if eager is True:
        b.set("cuda_graphs.enabled", False, event, f"{origin}: enforce_eager=True")
        b.set("cuda_graphs.mode", "NONE", event, origin)
        b.set("compile.disabled", True, event, origin)
    elif eager is False:
        b.set("cuda_graphs.enabled", True, event, f"{origin}: enforce_eager=False", keep_first=True)
    comp = cfg.get("compilation_config")
    if isinstance(comp, dict):
        mode = _enum_name(comp.get("cudagraph_mode")) if "cudagraph_mode" in comp else None
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
        if _as_bool(spec.get("enforce_eager")) is True:
            b.set("cuda_graphs.drafter", False, event, f"{origin}: speculative_config enforce_eager")
        if spec.get("rejection_sample_method") == "synthetic":
            b.set("spec.synthetic_acceptance", True, event, origin)
    elif "speculative_model" in cfg and not _is_none_like(cfg.get("speculative_model")):
        draft = str(cfg["speculative_model"])
        b.set("spec.enabled", True, event, origin)
        b.set("spec.draft_model", draft, event, origin)
        b.set("spec.method", "ngram" if "ngram" in draft else "draft_model", event, origin)
        k = cfg.get("num_speculative_tokens")
        if isinstance(k, int):
            b.set("spec.num_tokens", float(k), event, origin)
    elif spec is None and "speculative_config" in cfg and origin == "engine init":
        b.set("spec.enabled", False, event, origin, keep_first=True)
    if _as_bool(cfg.get("disable_custom_all_reduce")) is True:
        b.set("allreduce.custom", False, event, origin)
        b.set("allreduce.reason", "user", event, origin)
    prefix_flag = _as_bool(cfg.get("enable_prefix_caching"))
    if prefix_flag is not None:
        b.set("sched.prefix_caching", prefix_flag, event, origin)
    attn = cfg.get("attention_backend")
    if isinstance(attn, str) and attn not in ("None", "auto"):
        b.set("attention.backend", attn.upper(), event, origin, keep_first=True)
        b.set("attention.forced", True, event, origin)
    async_flag = _as_bool(cfg.get("async_scheduling"))
    if async_flag is not None:
        b.set("async_scheduling.enabled", async_flag, event, origin)


def _apply_sglang_config(b: ProfileBuilder, cfg: dict[str, Any], event: StartupConfig) -> None:
    origin = event.origin
    _apply_config_keys(b, cfg, event, "sglang")
    if _as_bool(cfg.get("disable_cuda_graph")) is True:
        b.set("cuda_graphs.enabled", False, event, f"{origin}: disable_cuda_graph=True")
        b.set("cuda_graphs.mode", "NONE", event, origin)
    elif _as_bool(cfg.get("disable_cuda_graph")) is False:
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
        method = {"EAGLE": "eagle", "EAGLE3": "eagle3", "NEXTN": "mtp", "STANDALONE": "draft_model"}.get(
            algo.upper(), algo.lower()
        )
        draft = cfg.get("speculative_draft_model_path")
        if method == "eagle" and (_is_none_like(draft) or draft == cfg.get("model_path")):
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
    if _as_bool(cfg.get("disable_custom_all_reduce")) is True:
        b.set("allreduce.custom", False, event, origin)
        b.set("allreduce.reason", "user", event, origin)
    radix = _as_bool(cfg.get("disable_radix_cache"))
    if radix is not None:
        b.set("sched.prefix_caching", not radix, event, origin)
    attn = cfg.get("attention_backend")
    if isinstance(attn, str) and attn not in ("None", "null"):
        b.set("attention.backend", attn.upper(), event, origin)
    draft_attn = cfg.get("speculative_draft_attention_backend")
    if isinstance(draft_attn, str) and draft_attn not in ("None", "null"):
        b.set("attention.drafter_backend", draft_attn.upper(), event, origin)


_SLOW_ORDER = {"P2P": 0, "NVLS": 0, "COLLNET": 1, "SHM": 2, "NET": 3}


def build_profile(events: Iterable[EventBase], engine: str | None = None, version: str | None = None) -> Profile:
    """Combine the events of all sources of one deployment into facts. Later runtime lines override startup config."""
    b = ProfileBuilder()
    stats_by_pid: dict[tuple[str, int | None], list[SchedulerStats]] = {}
    spec_pids: set[tuple[str, int | None]] = set()
    spec_events: list[SpecDecodeStats] = []
    position_sums: list[float] = []
    position_counts: list[int] = []
    transports: dict[str, int] = {}
    nccl_hosts: set[str] = set()
    failures: list[str] = []
    warnings: list[str] = []
    preemptions = 0
    decode_lines = 0
    eager_decode_lines = 0
    eager_examples: list[SchedulerStats] = []  # evidence: the first Decode batch lines without CUDA graphs
    gpu_names: list[str] = []
    engine_votes: dict[str, int] = {}
    versions: dict[str, str] = {}
    bench_rows: list[BenchmarkResult] = []
    compile_times: list[tuple[float, CompileTime]] = []
    serving_sources: set[str] = set()  # sources whose stats lines have begun: the server is serving

    for ev in events:
        event_engine = ev.engine
        if event_engine in ("vllm", "sglang", "nccl"):
            engine_votes[event_engine] = engine_votes.get(event_engine, 0) + 1
        # Stats and spec-decode lines are nearly all the events of a serving log: test them first (an isinstance
        # of a pydantic model that fails costs a few hundred nanoseconds; the event types are disjoint).
        if isinstance(ev, SpecDecodeStats):
            spec_events.append(ev)
            if ev.process is not None:
                spec_pids.add((ev.source, ev.process.pid))
            else:
                spec_pids.add((ev.source, None))
            if ev.num_speculative_tokens:
                b.set("spec.num_tokens", float(ev.num_speculative_tokens), ev, "spec-decode metrics", keep_first=True)
            b.set("spec.enabled", True, ev, "spec-decode metrics")
            positions = ev.per_position_acceptance
            if positions:
                missing = len(positions) - len(position_sums)
                if missing > 0:
                    position_sums.extend([0.0] * missing)
                    position_counts.extend([0] * missing)
                for i, rate in enumerate(positions):
                    position_sums[i] += rate
                    position_counts[i] += 1
        elif isinstance(ev, SchedulerStats):
            if ev.source not in serving_sources:
                serving_sources.add(ev.source)
                b.set("stall.serving_waits", 0.0, None, "no waits after serving started", keep_first=True)
            key = (ev.source, ev.process.pid if ev.process is not None else None)
            stats_by_pid.setdefault(key, []).append(ev)
            if ev.format == "sglang-decode":
                decode_lines += 1
                if ev.cuda_graph is False:
                    eager_decode_lines += 1
                    if len(eager_examples) < 3:
                        eager_examples.append(ev)
            if ev.preemptions:
                preemptions += ev.preemptions
                b.set("sched.preemptions", float(preemptions), ev, "stats lines")
        elif isinstance(ev, EngineVersion):
            if ev.version and ev.engine in ("vllm", "sglang"):
                versions.setdefault(ev.engine, ev.version)
            if ev.model:
                b.set("model", ev.model, ev, ev.origin, keep_first=True)
        elif isinstance(ev, StartupConfig):
            if ev.engine == "sglang" or ev.origin == "server_args":
                _apply_sglang_config(b, ev.config, ev)
            else:
                _apply_vllm_config(b, ev.config, ev)
        elif isinstance(ev, ModelInfo):
            if ev.model:
                b.set("model", ev.model, ev, "model line", keep_first=True)
            if ev.dtype:
                b.set("model.dtype", ev.dtype.removeprefix("torch."), ev, "model line")
            if ev.max_model_len:
                b.set("model.max_len", float(ev.max_model_len), ev, "model line")
            if ev.is_hybrid:
                b.set("hybrid.is_hybrid", True, ev, "model line")
        elif isinstance(ev, Platform):
            if ev.platform:
                b.set("platform", ev.platform.lower(), ev, "platform line")
            if ev.gpu_name:
                gpu_names.append(ev.gpu_name)
        elif isinstance(ev, CustomAllReduce):
            if ev.enabled:
                b.set("allreduce.custom", True, ev, "custom all-reduce in use", keep_first=True)
            else:
                b.set("allreduce.custom", False, ev, ev.message or "custom all-reduce disabled")
                if ev.reason:
                    b.set("allreduce.reason", ev.reason, ev, "custom all-reduce warning")
        elif isinstance(ev, AllReduceBackends):
            uses_custom = any(x.upper() == "CUSTOM" for x in ev.backends)
            b.set("allreduce.custom", uses_custom, ev, "all-reduce backend list")
        elif isinstance(ev, P2PCheck):
            if ev.supported is False:
                b.set("topology.p2p_supported", False, ev, ev.message)
        elif isinstance(ev, NcclTransport):
            transports[ev.transport] = transports.get(ev.transport, 0) + 1
            if ev.process is not None and ev.process.host:
                nccl_hosts.add(ev.process.host)
            fact = {"P2P": "nccl.p2p_channels", "SHM": "nccl.shm_channels", "NET": "nccl.net_channels"}.get(
                ev.transport
            )
            if fact:
                b.set(fact, float(transports[ev.transport]), ev, "NCCL channel lines", keep_first=True)
                b.facts[fact].value = float(transports[ev.transport])
                b.add_ref(fact, ev)
            current = b.value("nccl.transport")
            if current is None or _SLOW_ORDER.get(ev.transport, 1) > _SLOW_ORDER.get(current, 1):
                b.set("nccl.transport", ev.transport, ev, ev.detail)
        elif isinstance(ev, NcclEnv):
            if (ev.name == "NCCL_P2P_DISABLE" and ev.value.strip() not in ("0", "")) or (
                ev.name == "NCCL_P2P_LEVEL" and ev.value.strip().upper() in ("LOC", "0")
            ):
                b.set("nccl.p2p_disabled_env", True, ev, f"{ev.name}={ev.value}")
        elif isinstance(ev, NcclInfo):
            if ev.process is not None and ev.process.host:
                nccl_hosts.add(ev.process.host)
            if ev.kind == "p2p-disabled":
                b.set("nccl.p2p_disabled_env", True, ev, ev.message, keep_first=True)
        elif isinstance(ev, AttentionBackend):
            _apply_attention(b, ev)
        elif isinstance(ev, KVCache):
            if ev.kv_tokens:
                b.set("kv.tokens", float(ev.kv_tokens), ev, "KV cache size line", keep_first=True)
            if ev.max_concurrency is not None:
                b.set("kv.max_concurrency", ev.max_concurrency, ev, "maximum concurrency line", keep_first=True)
            kv_gib = ev.available_memory_gib if ev.available_memory_gib is not None else ev.kv_cache_memory_gib
            if kv_gib:
                b.set("kv.memory_gib", kv_gib, ev, "KV cache memory line", keep_first=True)
        elif isinstance(ev, HybridModel):
            _apply_hybrid(b, ev)
        elif isinstance(ev, CudaGraph):
            _apply_cuda_graph(b, ev)
        elif isinstance(ev, CompileTime):
            _apply_compile(b, ev)
            stamp = _seconds(ev.timestamp)
            if stamp is not None:
                compile_times.append((stamp, ev))
        elif isinstance(ev, Quantization):
            if ev.method:
                b.set("quant.method", ev.method.lower(), ev, ev.message, keep_first=True)
            if ev.kernel:
                b.set("quant.kernel", ev.kernel, ev, ev.message)
            if ev.fallback:
                b.set("quant.fallback", True, ev, ev.message)
                b.set("quant.fallback_reason", ev.message, ev, ev.message)
        elif isinstance(ev, Preemption):
            preemptions += ev.count or 1
            b.set("sched.preemptions", float(preemptions), ev, ev.message)
            if ev.cumulative:
                preemptions = max(preemptions, ev.cumulative)
                b.facts["sched.preemptions"].value = float(preemptions)
        elif isinstance(ev, EngineFailure):
            failures.append(ev.kind)
            if ev.kind == "shm-broadcast-wait":
                waits = (b.value("compile.shm_waits") or 0.0) + 1.0
                b.set("compile.shm_waits", waits, ev, ev.message)
                if ev.source in serving_sources:
                    stalls = (b.value("stall.serving_waits") or 0.0) + 1.0
                    b.set("stall.serving_waits", stalls, ev, ev.message)
            else:
                b.set("failure.kinds", sorted(set(failures) - {"shm-broadcast-wait"}), ev, ev.message, keep_first=True)
                b.facts["failure.kinds"].value = sorted(set(failures) - {"shm-broadcast-wait"})
                b.add_ref("failure.kinds", ev)
        elif isinstance(ev, SchedulerConfig):
            _apply_scheduler_config(b, ev)
        elif isinstance(ev, Offload):
            if ev.kind == "weights" and ev.gib:
                b.set("offload.cpu_gb", ev.gib, ev, ev.message)
            elif ev.kind == "swap" and ev.gib:
                b.set("offload.swap_gb", ev.gib, ev, ev.message)
            elif ev.kind == "kv":
                b.set("offload.kv", True, ev, ev.message)
        elif isinstance(ev, PerfWarning):
            warnings.append(ev.topic)
            b.set("warnings.topics", sorted(set(warnings)), ev, ev.message, keep_first=True)
            b.facts["warnings.topics"].value = sorted(set(warnings))
            b.add_ref("warnings.topics", ev)
            _apply_warning(b, ev)
        elif isinstance(ev, BenchmarkResult):
            bench_rows.append(ev)
        elif isinstance(ev, GpuInfo):
            gpu_names.append(ev.name)
            b.set("gpu.count", float(len(gpu_names)), ev, "nvidia-smi --query-gpu")
        elif isinstance(ev, GpuTopology):
            links = list(ev.links.values())
            if links:
                pcie_only = not any(link.upper().startswith("NV") for link in links)
                b.set("topology.pcie_only", pcie_only, ev, "nvidia-smi topo -m: " + ", ".join(sorted(set(links))))
        elif isinstance(ev, GpuP2P):
            statuses = list(ev.status.values())
            if statuses:
                b.set("topology.p2p_supported", all(s.upper() == "OK" for s in statuses), ev, "nvidia-smi topo -p2p")
        elif isinstance(ev, HostInfo) and ev.kind == "container":
            b.set("host.container", ev.value, ev, f"{ev.name}: {ev.value}")

    if gpu_names:
        b.set("gpu.name", gpu_names[0], None, "GPU listing")
    if nccl_hosts:
        b.set("nccl.hosts", float(len(nccl_hosts)), None, "NCCL line hosts")
        if len(nccl_hosts) > 1:
            b.set("topology.spans_nodes", True, None, f"NCCL lines from {len(nccl_hosts)} hosts")
    if decode_lines:
        b.facts["cuda_graphs.eager_share"] = Fact(
            value=eager_decode_lines / decode_lines,
            refs=[_ref(e) for e in eager_examples],
            origin=f"{eager_decode_lines}/{decode_lines} Decode batch lines",
        )
        if eager_decode_lines == decode_lines and "cuda_graphs.enabled" not in b.facts:
            b.set("cuda_graphs.enabled", False, eager_examples[0], "every Decode batch line says cuda graph: False")
    if failures and "failure.kinds" in b.facts:
        b.set("failure.count", float(len([f for f in failures if f != "shm-broadcast-wait"])), None, "failure lines")
    _apply_compile_phase(b, compile_times)
    _apply_spec_series(b, spec_events, position_sums, position_counts)
    _apply_stats_series(b, stats_by_pid, spec_pids)
    _apply_bench(b, bench_rows)

    detected = engine or (
        max(engine_votes, key=lambda k: (k != "nccl", engine_votes[k])) if engine_votes else "unknown"
    )
    b.set("engine", detected, None, "detection")
    found_version = version or versions.get(detected)
    if found_version:
        b.set("engine.version", found_version, None, "version line")
    return Profile(facts=b.facts, engine=detected, version=found_version)


def _apply_warning(b: ProfileBuilder, ev: PerfWarning) -> None:
    """Warnings that carry a fact (topic names are the vLLM/SGLang grammars' vocabulary)."""
    topic = ev.topic
    if topic in ("moe-config", "fp8-block-config", "int8-block-config"):
        b.set("quant.default_kernel_config", True, ev, ev.message)
    elif topic in ("attention-env", "env-var-ignored"):
        b.set("attention.stale_env", True, ev, ev.message)
    elif topic in ("tp-spans-nodes", "spans-nodes"):
        b.set("topology.spans_nodes", True, ev, ev.message)
    elif topic == "spec-drafter-weights":
        b.set("spec.draft_weights_missing", True, ev, ev.message)
    elif topic == "spec-synthetic-rejection":
        b.set("spec.synthetic_acceptance", True, ev, ev.message)
    elif topic == "v0-fallback" and "peculative" in ev.message:
        b.set("spec.v0_fallback", True, ev, ev.message)


def _apply_attention(b: ProfileBuilder, ev: AttentionBackend) -> None:
    if ev.role == "drafter" and ev.backend:
        b.set("attention.drafter_backend", ev.backend, ev, ev.message or "")
    elif ev.role in ("target", "unknown", "decode") and ev.backend:
        # The first selection for the target model is authoritative; later lines are per-rank repeats.
        if b.value("attention.backend") is None or ev.forced:
            b.set("attention.backend", ev.backend, ev, ev.message or "")
        else:
            b.add_ref("attention.backend", ev)
    if ev.forced:
        b.set("attention.forced", True, ev, ev.message or "")
    if ev.fallback_reason == "env-var-ignored":
        b.set("attention.stale_env", True, ev, ev.message or "")
    elif ev.fallback_reason and ev.role in ("target", "unknown", "decode"):
        b.set("attention.fallback_reason", ev.fallback_reason, ev, ev.message or ev.fallback_reason)


def _apply_hybrid(b: ProfileBuilder, ev: HybridModel) -> None:
    b.set("hybrid.is_hybrid", True, ev, ev.message, keep_first=True)
    if ev.attention_block_size is not None:
        b.set("hybrid.attention_block_size", float(ev.attention_block_size), ev, ev.message)
    if ev.kind == "mamba-page-padding" and ev.padding_percent is not None:
        b.set("hybrid.mamba_padding", ev.padding_percent, ev, ev.message)
    if ev.kind == "padding-layers" and ev.padding_percent is not None:
        b.set("hybrid.padding_waste", ev.padding_percent, ev, ev.message)
    if ev.mamba_cache_mode:
        b.set("hybrid.mamba_cache_mode", ev.mamba_cache_mode, ev, ev.message)
    if ev.prefix_caching is False:
        b.set("hybrid.prefix_caching_disabled", True, ev, ev.message)
        b.set("sched.prefix_caching", False, ev, ev.message)
    if ev.kind == "cudagraph-cap":
        b.set("hybrid.cudagraph_capped", True, ev, ev.message)


def _apply_cuda_graph(b: ProfileBuilder, ev: CudaGraph) -> None:
    if ev.role == "drafter":
        if ev.kind in ("drafter_eager", "eager_mode", "capture_skipped", "capture_failed") or (
            ev.kind == "mode_downgrade" and (ev.mode_to or "").upper() == "NONE"
        ):
            b.set("cuda_graphs.drafter", False, ev, ev.message)
        elif ev.kind in ("capture_finished", "capture_progress", "capture_started"):
            b.set("cuda_graphs.drafter", True, ev, ev.message, keep_first=True)
        return
    if ev.kind == "drafter_eager":
        b.set("cuda_graphs.drafter", False, ev, ev.message)
    elif ev.kind in ("eager_mode", "capture_skipped", "capture_failed"):
        b.set("cuda_graphs.enabled", False, ev, ev.message)
        b.set("cuda_graphs.mode", "NONE", ev, ev.message)
    elif ev.kind == "mode_downgrade":
        b.set("cuda_graphs.downgraded", True, ev, ev.message)
        if ev.mode_to:
            b.set("cuda_graphs.mode", ev.mode_to.upper(), ev, ev.message)
            if ev.mode_to.upper() == "NONE":
                b.set("cuda_graphs.enabled", False, ev, ev.message)
    elif ev.kind in ("capture_finished", "capture_progress"):
        if b.value("cuda_graphs.enabled") is not False:
            b.set("cuda_graphs.enabled", True, ev, ev.message)
        if ev.seconds is not None and ev.kind == "capture_finished":
            b.set("compile.graph_capture_seconds", ev.seconds, ev, ev.message, keep_first=True)
    elif ev.kind == "capture_capped":
        b.set("hybrid.cudagraph_capped", True, ev, ev.message)
        if ev.max_batch_size is not None:
            b.set("cuda_graphs.max_batch", float(ev.max_batch_size), ev, ev.message)
        if ev.max_batch_size == 0:
            b.set("cuda_graphs.enabled", False, ev, ev.message)
    if ev.kind == "capture_sizes" and ev.max_batch_size is not None:
        b.set("cuda_graphs.max_batch", float(ev.max_batch_size), ev, ev.message)
        if b.value("cuda_graphs.enabled") is None:
            b.set("cuda_graphs.enabled", True, ev, ev.message)


_MTP_DRAFT_RE = re.compile(r"type=\w*(?:MTP|NextN)\b")


def _apply_compile(b: ProfileBuilder, ev: CompileTime) -> None:
    if ev.kind in ("model_load", "weights_load") and ev.memory_gib:
        b.set("model.weights_gib", ev.memory_gib, ev, ev.message, keep_first=True)
    if ev.kind == "torch_compile" and ev.seconds is not None:
        b.set("compile.torch_seconds", ev.seconds, ev, ev.message, keep_first=True)
    elif ev.kind == "init_engine" and ev.seconds is not None:
        b.set("compile.init_seconds", ev.seconds, ev, ev.message, keep_first=True)
    elif ev.kind == "graph_capture" and ev.seconds is not None:
        b.set("compile.graph_capture_seconds", ev.seconds, ev, ev.message, keep_first=True)
    elif ev.kind == "compile_disabled":
        b.set("compile.disabled", True, ev, ev.message)
    elif (
        ev.kind == "draft_weights_load"
        and _MTP_DRAFT_RE.search(ev.message)
        and b.value("spec.method") in (None, "eagle")
    ):
        # SGLang loads an MTP/NextN head as the EAGLE drafter (`type=Qwen3_5ForCausalLMMTP`).
        b.set("spec.method", "mtp", ev, ev.message)
    if ev.cache_hit is not None:
        b.set("compile.cache_hit", ev.cache_hit, ev, ev.message, keep_first=True)


_HYBRID_WORDS = re.compile(r"mamba|hybrid|linear.attention|NemotronH|Qwen3Next|Qwen3_5|Jamba|FalconH1|GDN", re.I)


def _seconds(timestamp: str | None) -> float | None:
    """Seconds within a year from `MM-DD HH:MM:SS` or `YYYY-MM-DD HH:MM:SS` (only differences are used)."""
    if not timestamp:
        return None
    try:
        date_part, time_part = timestamp.rsplit(" ", 1)
        month, day = (int(x) for x in date_part.split("-")[-2:])
        hh, mm, ss = (int(float(x)) for x in time_part.split(":"))
    except ValueError:
        return None
    return (((month * 31 + day) * 24 + hh) * 60 + mm) * 60 + ss


def _apply_compile_phase(b: ProfileBuilder, times: list[tuple[float, CompileTime]]) -> None:
    """The longest compile phase of one process: two server runs in one paste are two phases."""
    by_process: dict[tuple[str, int | None], list[tuple[float, CompileTime]]] = {}
    for stamp, event in times:
        pid = event.process.pid if event.process is not None else None
        by_process.setdefault((event.source, pid), []).append((stamp, event))
    best: tuple[float, CompileTime, CompileTime] | None = None
    for group in by_process.values():
        if len(group) < 2:
            continue
        group.sort(key=lambda t: t[0])
        span = group[-1][0] - group[0][0]
        if 0 < span < 3 * 3600 and (best is None or span > best[0]):
            best = (span, group[0][1], group[-1][1])
    if best is not None:
        b.set("compile.phase_seconds", float(best[0]), best[2], "compile/warm-up line timestamps")
        b.add_ref("compile.phase_seconds", best[1])
    candidates = [
        name
        for name in (
            "compile.torch_seconds",
            "compile.init_seconds",
            "compile.graph_capture_seconds",
            "compile.phase_seconds",
        )
        if isinstance(b.value(name), float | int)
    ]
    if candidates:
        longest = max(candidates, key=lambda n: float(b.value(n)))
        fact = b.facts[longest]
        b.facts["compile.startup_seconds"] = Fact(value=float(fact.value), refs=list(fact.refs), origin=longest)


def _apply_scheduler_config(b: ProfileBuilder, ev: SchedulerConfig) -> None:
    if ev.kind == "chunked-prefill" and ev.value is not None:
        b.set("sched.max_batched_tokens", float(ev.value), ev, ev.message)
    elif ev.kind == "max-num-seqs" and ev.value is not None:
        b.set("sched.max_num_seqs", float(ev.value), ev, ev.message)
    elif ev.kind == "spec-token-budget":
        b.set("sched.spec_token_budget_warning", True, ev, ev.message)
    elif ev.kind == "async-scheduling" and ev.enabled is not None:
        b.set("async_scheduling.enabled", ev.enabled, ev, ev.message)
    elif ev.kind == "prefix-caching" and ev.enabled is not None:
        b.set("sched.prefix_caching", ev.enabled, ev, ev.message)
        if ev.enabled is False and _HYBRID_WORDS.search(ev.message):
            b.set("hybrid.is_hybrid", True, ev, ev.message, keep_first=True)
            b.set("hybrid.prefix_caching_disabled", True, ev, ev.message)
    elif ev.kind == "spec-v0-fallback":
        b.set("spec.v0_fallback", True, ev, ev.message)
    elif ev.kind == "draft-weights-missing":
        b.set("spec.draft_weights_missing", True, ev, ev.message)
    elif ev.kind == "synthetic-acceptance":
        b.set("spec.synthetic_acceptance", True, ev, ev.message)


def _apply_spec_series(
    b: ProfileBuilder, spec_events: Sequence[SpecDecodeStats], sums: list[float], counts: list[int]
) -> None:
    if not spec_events:
        return
    cumulative = [e for e in spec_events if not e.interval]
    interval = [e for e in spec_events if e.interval]
    for e in interval:
        length, rate = e.mean_acceptance_length, e.acceptance_rate
        if e.format == "sglang" and length is not None and rate:
            # SGLang's `accept rate` is accept_len / num_draft_tokens (k + 1), not accepted / drafted:
            # recover k and the vLLM-comparable rate (L - 1) / k.
            k = round(length / rate) - 1
            if k >= 1:
                b.set("spec.num_tokens", float(k), e, "accept len / accept rate", keep_first=True)
                rate = max(0.0, (length - 1) / k)
        if length is not None:
            b.append("spec.acceptance_length", length, e, "spec-decode metrics")
        if rate is not None:
            b.append("spec.acceptance_rate", rate, e, "spec-decode metrics")
    # vLLM V0 counters are cumulative: difference consecutive lines for per-interval values.
    previous: SpecDecodeStats | None = None
    for e in cumulative:
        if e.accepted_tokens is None or e.drafted_tokens is None:
            continue
        acc, drafted = e.accepted_tokens, e.drafted_tokens
        if (
            previous is not None
            and previous.accepted_tokens is not None
            and previous.drafted_tokens is not None
            and drafted >= previous.drafted_tokens
        ):
            acc -= previous.accepted_tokens
            drafted -= previous.drafted_tokens
        previous = e
        if drafted <= 0:
            continue
        rate = acc / drafted
        b.append("spec.acceptance_rate", rate, e, "cumulative spec-decode metrics (differenced)")
        k_tokens = e.num_speculative_tokens
        if k_tokens:
            b.append("spec.acceptance_length", 1 + rate * k_tokens, e, "cumulative spec-decode metrics (differenced)")
    if sums:
        b.set(
            "spec.position_acceptance",
            [round(s / c, 4) for s, c in zip(sums, counts, strict=True)],
            spec_events[0],
            "per-position acceptance",
        )


def _steady(values: list[SchedulerStats]) -> list[SchedulerStats]:
    """Drop warm-up: the first interval of a process when it has enough others, and idle intervals."""
    active = [s for s in values if (s.generation_throughput or 0) > 0]
    if len(active) >= 4:
        active = active[1:]
    return active


def _apply_stats_series(
    b: ProfileBuilder,
    stats_by_pid: dict[tuple[str, int | None], list[SchedulerStats]],
    spec_pids: set[tuple[str, int | None]],
) -> None:
    total = sum(len(v) for v in stats_by_pid.values())
    if not total:
        return
    b.set("throughput.intervals", float(total), None, "stats lines")
    spec_sources = {src for src, _ in spec_pids}
    for key, values in stats_by_pid.items():
        decode_like = [s for s in values if s.format != "sglang-prefill"]
        steady = _steady(decode_like)
        has_spec = key in spec_pids or (key[1] is None and key[0] in spec_sources)
        spec_series = "throughput.with_spec" if has_spec else "throughput.without_spec"
        for s in steady:
            b.append("throughput.generation", s.generation_throughput, s, "stats lines")
            if s.running == 1 and (s.waiting or 0) == 0:
                b.append("throughput.per_request", s.generation_throughput, s, "stats lines with one running request")
            if spec_pids:
                b.append(spec_series, s.generation_throughput, s, "stats lines")
        for s in values:
            if s.kv_cache_usage is not None:
                b.append("kv.usage", s.kv_cache_usage, s, "stats lines")
            if s.cpu_kv_cache_usage is not None:
                b.append("kv.cpu_usage", s.cpu_kv_cache_usage, s, "stats lines")
            if s.running is not None and s.format != "sglang-prefill":
                b.append("sched.running", float(s.running), s, "stats lines")
            waiting = s.waiting if s.waiting is not None else s.queue
            if waiting is not None:
                b.append("sched.waiting", float(waiting), s, "stats lines")
            if s.swapped is not None:
                b.append("sched.swapped", float(s.swapped), s, "stats lines")
        active: list[float] = [s.generation_throughput for s in decode_like if s.generation_throughput]
        if len(active) >= 3:
            median = statistics.median(active[1:])
            if median > 0:
                b.set("throughput.first_interval_ratio", active[0] / median, decode_like[0], "first stats interval")


def _apply_bench(b: ProfileBuilder, rows: Sequence[BenchmarkResult]) -> None:
    for row in rows:
        if row.per_request_throughput is not None:
            b.append("bench.per_request", row.per_request_throughput, row, "pasted benchmark")
        elif row.mean_tpot_ms:
            b.append("bench.per_request", 1000.0 / row.mean_tpot_ms, row, "pasted benchmark (1000 / mean TPOT)")
        if row.output_throughput is not None:
            b.append("bench.output_throughput", row.output_throughput, row, "pasted benchmark")
        if row.concurrency is not None:
            b.append("bench.concurrency", row.concurrency, row, "pasted benchmark")


# --- aggregations shared with the rule engine ----------------------------------------------------


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    pos = (len(ordered) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


AGGREGATIONS: dict[str, Callable[[Sequence[float]], float]] = {
    "mean": lambda v: statistics.fmean(v),
    "median": lambda v: statistics.median(v),
    "max": lambda v: max(v),
    "min": lambda v: min(v),
    "p10": lambda v: _percentile(v, 0.10),
    "p90": lambda v: _percentile(v, 0.90),
    "first": lambda v: v[0],
    "last": lambda v: v[-1],
    "sum": lambda v: float(sum(v)),
    "count": lambda v: float(len(v)),
}
