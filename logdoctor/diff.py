"""`logdoctor diff`: what the fast deployment (baseline) had that the slow one (candidate) lacks.

One table, VOCABULARY, names every setting and measurement in engine-neutral words: the fact it
reads, how each engine spells it (startup-dump key or log field, and the flag that sets it), why it
matters, which direction is better, and how to set the baseline's value on the candidate's engine:

    key                     baseline (sglang)                        candidate (vllm 0.20.1)
    num_speculative_tokens  3   speculative_num_draft_tokens (k+1)   15  speculative_config.num_speculative_tokens
        port: --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}'

`diff_parsed` runs both deployments through the stages `diagnose` runs, compares them row by row,
runs the rules on the candidate with the baseline's facts beside it (`baseline.<fact>`, read by
`mode: diff` rules), states the throughput gap and splits it over the causes found (docs/diff.md).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from logdoctor import __version__
from logdoctor.engine.evaluate import evaluate, verdict_for
from logdoctor.engine.result import EngineReport, Finding, RuleOutcome, SourceReport, Verdict
from logdoctor.engine.rules import LoadedRule
from logdoctor.engine.suppress import Suppressions
from logdoctor.facts import AGGREGATIONS, BASELINE_PREFIX, CONFIG_KEYS, Profile, with_baseline
from logdoctor.run import Parsed, diagnose_parsed

DIFF_SCHEMA_VERSION = 1

Better = Literal["higher", "lower", "on", "any", "never", "attention", "transport"]
State = Literal["differs", "equal", "unknown"]


# --- the vocabulary ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Spelling:
    """How one engine spells a setting: where its log shows it (`key`) and the flag that sets it.

    `set_to` is the flag with the baseline's value filled in (`--tp-size {value}`); booleans use
    `when_on` / `when_off` instead. A measurement has a `key` (the log field) and no flag."""

    key: str | None = None
    flag: str | None = None
    set_to: str | None = None
    when_on: str | None = None
    when_off: str | None = None


PortFunction = Callable[["Side", str], str | None]


@dataclass(frozen=True)
class DiffKey:
    """One row of the diff table."""

    key: str
    group: str
    fact: str
    why: str
    better: Better
    vllm: Spelling
    sglang: Spelling
    aggregate: str | None = None  # series facts: how to summarise them (median, mean)
    fallback: str | None = None  # a second fact for the same thing (pasted benchmark results)
    detail: str | None = None  # a fact shown beside the value (the cudagraph mode, the reason)
    spec_off: Any = None  # the value when speculative decoding is known to be off
    tolerance: float = 0.0  # relative difference still counted as equal (measurements are noisy)
    basename: bool = False  # compare paths by their last part (/root/models/X vs org/X)
    fmt: str = ""  # format spec for numbers
    port: PortFunction | None = None  # composite flags (speculative config, CUDA-graph mode)
    measurement: bool = False  # measured, not set: no flag of its own

    def spelling(self, engine: str) -> Spelling | None:
        return self.vllm if engine == "vllm" else self.sglang if engine == "sglang" else None

    @property
    def facts(self) -> tuple[str, ...]:
        return tuple(f for f in (self.fact, self.fallback) if f is not None)


@dataclass(frozen=True)
class Side:
    """One deployment's profile as the port functions see it."""

    profile: Profile

    @property
    def engine(self) -> str:
        return self.profile.engine

    def value(self, name: str) -> Any:
        return self.profile.value(name)


def _config(fact: str) -> tuple[Spelling, Spelling]:
    """Spellings of a plain setting from facts.CONFIG_KEYS (one source of truth for keys and flags)."""
    entry = next(k for k in CONFIG_KEYS if k.fact == fact)

    def spelling(keys: tuple[str, ...], flag: str) -> Spelling:
        settable = flag.startswith("--")
        return Spelling(
            keys[0] if keys else None, flag if settable else None, f"{flag} {{value}}" if settable else None
        )

    return spelling(entry.vllm_keys, entry.vllm_flag), spelling(entry.sglang_keys, entry.sglang_flag)


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# Speculative decoding: method, k and drafter are one flag on vLLM and four on SGLang.
_SGLANG_ALGORITHM = {"mtp": "EAGLE", "eagle": "EAGLE", "eagle3": "EAGLE3", "draft_model": "STANDALONE"}
_NEEDS_DRAFTER = ("eagle", "eagle3", "dflash", "draft_model")


def _port_speculation(base: Side, engine: str) -> str | None:
    if base.value("spec.enabled") is False:
        return {"vllm": "drop --speculative-config", "sglang": "drop --speculative-algorithm"}.get(engine)
    method = base.value("spec.method")
    k = base.value("spec.num_tokens")
    draft = base.value("spec.draft_model") if method in _NEEDS_DRAFTER else None
    if not isinstance(method, str):
        return None
    steps = int(k) if isinstance(k, int | float) and k >= 1 else None
    if engine == "vllm":
        config: dict[str, Any] = {"method": method}
        if draft:
            config["model"] = draft
        if steps is not None:
            config["num_speculative_tokens"] = steps
        return f"--speculative-config '{json.dumps(config)}'"
    if engine == "sglang":
        parts = [f"--speculative-algorithm {_SGLANG_ALGORITHM.get(method, method.upper())}"]
        if draft:
            parts.append(f"--speculative-draft-model-path {draft}")
        if steps is not None:
            if method in ("mtp", "eagle", "eagle3", "draft_model"):
                parts.append(f"--speculative-num-steps {steps} --speculative-eagle-topk 1")
            parts.append(f"--speculative-num-draft-tokens {steps + 1}")  # SGLang counts the root token
        return " ".join(parts)
    return None


def _port_cuda_graphs(base: Side, engine: str) -> str | None:
    enabled = base.value("cuda_graphs.enabled")
    if engine == "vllm":
        if enabled is False:
            return "--enforce-eager"
        mode = base.value("cuda_graphs.mode") if base.engine == "vllm" else None
        mode = mode if isinstance(mode, str) and mode != "NONE" else "FULL_AND_PIECEWISE"
        return f"drop --enforce-eager; --compilation-config '{json.dumps({'cudagraph_mode': mode})}'"
    if engine == "sglang":
        return "--disable-cuda-graph" if enabled is False else "drop --disable-cuda-graph"
    return None


def _port_drafter_graphs(base: Side, engine: str) -> str | None:
    on = base.value("cuda_graphs.drafter")
    if engine == "vllm":
        return (
            'drop "enforce_eager": true from --speculative-config'
            if on
            else 'add "enforce_eager": true to --speculative-config'
        )
    if engine == "sglang" and on:
        return "drop --disable-cuda-graph (the drafter's graphs follow the target's)"
    return None


def _port_custom_all_reduce(base: Side, engine: str) -> str | None:
    if engine not in ("vllm", "sglang"):
        return None
    if base.value("allreduce.custom") is False:
        return "--disable-custom-all-reduce"
    return "drop --disable-custom-all-reduce (it also needs GPU P2P: nvidia-smi topo -p2p r)"


# Attention backends: one canonical name per kernel family, the flag value on each engine, and a speed class.
_ATTENTION_CANONICAL = {"FA3": "FLASH_ATTN", "FA4": "FLASH_ATTN", "TRITON": "TRITON_ATTN", "TORCH_NATIVE": "TORCH_SDPA"}
_ATTENTION_ON_VLLM = {
    "FLASHINFER": "FLASHINFER",
    "TRITON": "TRITON_ATTN",
    "TORCH_NATIVE": "TORCH_SDPA",
    "FLEX_ATTENTION": "FLEX_ATTENTION",
    "FLASHMLA": "FLASHMLA",
    "CUTLASS_MLA": "CUTLASS_MLA",
}
_ATTENTION_ON_SGLANG = {
    "FLASHINFER": "flashinfer",
    "TRITON_ATTN": "triton",
    "TORCH_SDPA": "torch_native",
    "FLEX_ATTENTION": "flex_attention",
    "FLASHMLA": "flashmla",
    "CUTLASS_MLA": "cutlass_mla",
}
# 0: the fast kernels; 1: Triton (a legitimate default for some models and GPUs); 2: reference paths.
_ATTENTION_SPEED = {
    "FLASH_ATTN": 0,
    "FLASHINFER": 0,
    "FLASHMLA": 0,
    "CUTLASS_MLA": 0,
    "TRTLLM_MHA": 0,
    "TRTLLM_MLA": 0,
    "TRITON_ATTN": 1,
    "TRITON_MLA": 1,
    "XFORMERS": 2,
    "TORCH_SDPA": 2,
    "SDPA": 2,
    "FLEX_ATTENTION": 2,
}
_TRANSPORT_SPEED = {"P2P": 0, "NVLS": 0, "COLLNET": 1, "SHM": 1, "NET": 2}


def _attention_flag(name: Any, base_engine: str, engine: str, flag: str) -> str | None:
    if not isinstance(name, str):
        return None
    upper = name.upper()
    if base_engine == engine:
        value = name.lower() if engine == "sglang" else upper
    elif engine == "vllm":
        value = _ATTENTION_ON_VLLM.get(upper) or ""
    else:
        value = _ATTENTION_ON_SGLANG.get(upper) or ""
    return f"{flag} {value}" if value else None


def _port_attention(base: Side, engine: str) -> str | None:
    return _attention_flag(base.value("attention.backend"), base.engine, engine, "--attention-backend")


def _port_drafter_attention(base: Side, engine: str) -> str | None:
    flag = {"vllm": "--speculative-config.attention_backend", "sglang": "--speculative-draft-attention-backend"}
    if engine not in flag:
        return None
    return _attention_flag(base.value("attention.drafter_backend"), base.engine, engine, flag[engine])


_TP_VLLM, _TP_SGLANG = _config("parallel.tp")
_PP_VLLM, _PP_SGLANG = _config("parallel.pp")
_DP_VLLM, _DP_SGLANG = _config("parallel.dp")
_SEQS_VLLM, _SEQS_SGLANG = _config("sched.max_num_seqs")
_BATCHED_VLLM, _BATCHED_SGLANG = _config("sched.max_batched_tokens")
_MEMORY_VLLM, _MEMORY_SGLANG = _config("memory.fraction")
_QUANT_VLLM, _QUANT_SGLANG = _config("quant.method")

_SPEC_VLLM = Spelling("speculative_config.method", "--speculative-config")
_SPEC_SGLANG = Spelling("speculative_algorithm", "--speculative-algorithm")

VOCABULARY: tuple[DiffKey, ...] = (
    # throughput: what the user measures
    DiffKey(
        "decode_tok_s_per_request",
        "throughput",
        "throughput.per_request",
        "what one user sees: decode tok/s of a single request (stats intervals with one running request, "
        "or a pasted benchmark's per-request rate)",
        "higher",
        Spelling("Avg generation throughput at Running: 1 reqs"),
        Spelling("gen throughput (token/s) at #running-req: 1"),
        aggregate="median",
        fallback="bench.per_request",
        tolerance=0.05,
        fmt=".1f",
        measurement=True,
    ),
    DiffKey(
        "generation_throughput",
        "throughput",
        "throughput.generation",
        "decode tok/s of all running requests together; compare it only under similar load",
        "higher",
        Spelling("Avg generation throughput"),
        Spelling("gen throughput (token/s)"),
        aggregate="median",
        tolerance=0.05,
        fmt=".1f",
        measurement=True,
    ),
    # speculative decoding
    DiffKey(
        "speculative_method",
        "speculative decoding",
        "spec.method",
        "the drafter decides how many tokens a step yields: an MTP head or an EAGLE drafter trained for the "
        "target accepts 2.5-3.5 tokens per step, a mismatched drafter about 1",
        "any",
        _SPEC_VLLM,
        _SPEC_SGLANG,
        spec_off="off",
        port=_port_speculation,
    ),
    DiffKey(
        "num_speculative_tokens",
        "speculative decoding",
        "spec.num_tokens",
        "k: each step verifies k+1 positions and runs the drafter k times; a larger k pays only when acceptance "
        "keeps up",
        "any",
        Spelling("speculative_config.num_speculative_tokens", "--speculative-config"),
        Spelling("speculative_num_draft_tokens (k + 1)", "--speculative-num-draft-tokens"),
        spec_off=0,
        port=_port_speculation,
    ),
    DiffKey(
        "draft_model",
        "speculative decoding",
        "spec.draft_model",
        "the drafter's checkpoint (for MTP the target's own head); it must match the target's tokenizer and "
        "chat template",
        "any",
        Spelling("speculative_config.model", "--speculative-config"),
        Spelling("speculative_draft_model_path", "--speculative-draft-model-path"),
        spec_off="none",
        basename=True,
        port=_port_speculation,
    ),
    DiffKey(
        "mean_acceptance_length",
        "speculative decoding",
        "spec.acceptance_length",
        "tokens per verification step, the bonus token included: at equal step cost, per-request decode "
        "speed scales with it",
        "higher",
        Spelling("SpecDecoding metrics: Mean acceptance length"),
        Spelling("Decode batch: accept len"),
        aggregate="mean",
        tolerance=0.05,
        fmt=".2f",
        port=_port_speculation,
        measurement=True,
    ),
    DiffKey(
        "draft_acceptance_rate",
        "speculative decoding",
        "spec.acceptance_rate",
        "share of drafted tokens the target accepted",
        "higher",
        Spelling("SpecDecoding metrics: Avg Draft acceptance rate"),
        Spelling("Decode batch: accept rate"),
        aggregate="mean",
        tolerance=0.1,
        fmt=".1%",
        port=_port_speculation,
        measurement=True,
    ),
    # CUDA graphs
    DiffKey(
        "cuda_graphs",
        "CUDA graphs",
        "cuda_graphs.enabled",
        "without CUDA graphs every decode step launches hundreds of kernels from Python: 1.5-4x slower at "
        "small batches",
        "on",
        Spelling("enforce_eager / compilation_config.cudagraph_mode", "--enforce-eager / --compilation-config"),
        Spelling("disable_cuda_graph", "--disable-cuda-graph"),
        detail="cuda_graphs.mode",
        port=_port_cuda_graphs,
    ),
    DiffKey(
        "drafter_cuda_graphs",
        "CUDA graphs",
        "cuda_graphs.drafter",
        "an eager drafter pays the kernel-launch overhead k times per step",
        "on",
        Spelling("speculative_config.enforce_eager", "--speculative-config"),
        Spelling("Capture draft cuda graph", "--disable-cuda-graph"),
        port=_port_drafter_graphs,
    ),
    DiffKey(
        "cuda_graph_max_batch",
        "CUDA graphs",
        "cuda_graphs.max_batch",
        "batches larger than the largest captured size decode eagerly",
        "higher",
        Spelling(
            "compilation_config.max_cudagraph_capture_size",
            "--compilation-config",
            "--compilation-config '{{\"max_cudagraph_capture_size\": {value}}}'",
        ),
        Spelling("cuda_graph_max_bs", "--cuda-graph-max-bs", "--cuda-graph-max-bs {value}"),
    ),
    # attention
    DiffKey(
        "attention_backend",
        "attention",
        "attention.backend",
        "the attention kernel: FlashAttention and FlashInfer are the fast paths on NVIDIA GPUs; Triton is a "
        "default for some models; SDPA, xFormers and Flex are fallbacks",
        "attention",
        Spelling("attention_backend", "--attention-backend"),
        Spelling("attention_backend", "--attention-backend"),
        port=_port_attention,
    ),
    DiffKey(
        "drafter_attention_backend",
        "attention",
        "attention.drafter_backend",
        "the drafter's attention kernel (DFlash drafters need non-causal attention)",
        "attention",
        Spelling("speculative_config.attention_backend", "--speculative-config.attention_backend"),
        Spelling("speculative_draft_attention_backend", "--speculative-draft-attention-backend"),
        port=_port_drafter_attention,
    ),
    # parallelism and communication
    DiffKey(
        "tensor_parallel_size",
        "parallelism and communication",
        "parallel.tp",
        "GPUs that share every layer; each layer ends in an all-reduce between them",
        "any",
        _TP_VLLM,
        _TP_SGLANG,
    ),
    DiffKey(
        "pipeline_parallel_size",
        "parallelism and communication",
        "parallel.pp",
        "pipeline stages; a request's tokens pass through each in turn",
        "any",
        _PP_VLLM,
        _PP_SGLANG,
    ),
    DiffKey(
        "data_parallel_size",
        "parallelism and communication",
        "parallel.dp",
        "independent replicas; per-request speed does not change with it",
        "any",
        _DP_VLLM,
        _DP_SGLANG,
    ),
    DiffKey(
        "custom_all_reduce",
        "parallelism and communication",
        "allreduce.custom",
        "the engines' custom all-reduce beats NCCL on decode's small messages; it needs GPU P2P (NVLink, or "
        "PCIe P2P on at most two GPUs)",
        "on",
        Spelling("disable_custom_all_reduce", "--disable-custom-all-reduce"),
        Spelling("disable_custom_all_reduce", "--disable-custom-all-reduce"),
        detail="allreduce.reason",
        port=_port_custom_all_reduce,
    ),
    DiffKey(
        "nccl_transport",
        "parallelism and communication",
        "nccl.transport",
        "how NCCL moves data between the GPUs of one host: P2P directly, SHM through host memory, NET through "
        "the network (set by the topology and NCCL_P2P_DISABLE / NCCL_P2P_LEVEL, not by an engine flag)",
        "transport",
        Spelling("NCCL INFO Channel ... via P2P/SHM/NET"),
        Spelling("NCCL INFO Channel ... via P2P/SHM/NET"),
        measurement=True,
    ),
    # memory and scheduling
    DiffKey(
        "kv_cache_tokens",
        "memory and scheduling",
        "kv.tokens",
        "tokens of context that fit in GPU memory at once: caps the batch and long contexts (set through the "
        "memory fraction and the maximum model length)",
        "higher",
        Spelling("GPU KV cache size"),
        Spelling("max_total_num_tokens", "--max-total-tokens", "--max-total-tokens {value}"),
        tolerance=0.1,
        fmt=",.0f",
    ),
    DiffKey(
        "max_concurrent_requests",
        "memory and scheduling",
        "sched.max_num_seqs",
        "the most requests decoded together; more requests queue",
        "higher",
        _SEQS_VLLM,
        _SEQS_SGLANG,
    ),
    DiffKey(
        "max_batched_tokens",
        "memory and scheduling",
        "sched.max_batched_tokens",
        "tokens scheduled per step (the prefill chunk); with speculation each running request also takes k+1 slots",
        "higher",
        _BATCHED_VLLM,
        _BATCHED_SGLANG,
    ),
    DiffKey(
        "memory_fraction",
        "memory and scheduling",
        "memory.fraction",
        "share of GPU memory the engine takes for weights and KV cache (SGLang's counts the static part only, "
        "so the two engines' numbers are close, not equal)",
        "higher",
        _MEMORY_VLLM,
        _MEMORY_SGLANG,
        tolerance=0.03,
    ),
    DiffKey(
        "prefix_caching",
        "memory and scheduling",
        "sched.prefix_caching",
        "reuses the KV of shared prompt prefixes (system prompts, multi-turn chats): less prefill work",
        "on",
        Spelling(
            "enable_prefix_caching",
            "--enable-prefix-caching",
            None,
            "--enable-prefix-caching",
            "--no-enable-prefix-caching",
        ),
        Spelling(
            "disable_radix_cache", "--disable-radix-cache", None, "drop --disable-radix-cache", "--disable-radix-cache"
        ),
    ),
    DiffKey(
        "quantization",
        "memory and scheduling",
        "quant.method",
        "weight format: a different quantization means different kernels (and a different model)",
        "any",
        _QUANT_VLLM,
        _QUANT_SGLANG,
    ),
    # the deployment itself
    DiffKey(
        "engine",
        "deployment",
        "engine",
        "the serving engine; the flags above are translated between engines",
        "never",
        Spelling(),
        Spelling(),
        measurement=True,
    ),
    DiffKey(
        "engine_version",
        "deployment",
        "engine.version",
        "engine release (SGLang logs rarely print it)",
        "never",
        Spelling(),
        Spelling(),
        measurement=True,
    ),
    DiffKey(
        "model",
        "deployment",
        "model",
        "the served model; a different model makes the comparison about the model, not the deployment",
        "any",
        Spelling("model", "vllm serve MODEL", "vllm serve {value}"),
        Spelling("model_path", "--model-path", "--model-path {value}"),
        basename=True,
    ),
    DiffKey(
        "gpu",
        "deployment",
        "gpu.name",
        "GPU model",
        "any",
        Spelling("nvidia-smi"),
        Spelling("nvidia-smi"),
        measurement=True,
    ),
    DiffKey(
        "container",
        "deployment",
        "host.container",
        "where the engine runs (LXC and VMs often hide GPU P2P)",
        "any",
        Spelling(),
        Spelling(),
        measurement=True,
    ),
)

GROUPS: tuple[str, ...] = tuple(dict.fromkeys(entry.group for entry in VOCABULARY))
_GAP_KEYS = ("decode_tok_s_per_request", "generation_throughput")


# --- the result model ----------------------------------------------------------------------------


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Difference(_Model):
    """One row: the same setting or measurement on both deployments."""

    key: str
    group: str
    state: State  # equal, differs, or unknown (a side's log cannot show it)
    baseline: Any = None  # null when unknown
    candidate: Any = None
    baseline_detail: str | None = None  # e.g. the cudagraph mode, why custom all-reduce is off
    candidate_detail: str | None = None
    matters: bool = False
    why: str
    port: str | None = None  # the candidate engine's flag that reproduces the baseline's value
    baseline_flag: str | None = None
    candidate_flag: str | None = None
    baseline_key: str | None = None  # where the baseline's engine prints it (startup-dump key or log field)
    candidate_key: str | None = None
    findings: list[str] = Field(default_factory=list)  # fired rules that read this row's fact


class CauseShare(_Model):
    """How much of the gap one cause plausibly explains (docs/diff.md: score share)."""

    cause: str
    rules: list[str]
    score: int
    share: float  # fraction of the gap on a log scale
    factor: float  # gap ** share: "explains about 1.7x"


class Gap(_Model):
    key: str  # the row measured: decode_tok_s_per_request or generation_throughput
    baseline: float
    candidate: float
    ratio: float  # baseline / candidate: above 1 the candidate is slower
    summary: str
    method: str = "score-share"
    attribution: list[CauseShare] = Field(default_factory=list)
    unexplained_share: float = 0.0
    left_out: dict[str, str] = Field(default_factory=dict)  # rule -> why it explains none of the gap


class DiffSide(_Model):
    sources: list[SourceReport]
    engine: EngineReport
    verdict: Verdict
    findings: list[str] = Field(default_factory=list)  # rules that fire on this deployment alone


class DiffReport(_Model):
    schema_version: int = DIFF_SCHEMA_VERSION
    report: Literal["diff"] = "diff"
    tool: dict[str, str] = Field(default_factory=dict)
    baseline: DiffSide
    candidate: DiffSide
    gap: Gap | None = None
    differences: list[Difference]
    folded: int = 0  # equal rows and rows neither log shows, left out (`--all` shows them)
    verdict: Verdict
    findings: list[Finding]
    ruled_out: list[RuleOutcome] = Field(default_factory=list)
    insufficient_data: list[RuleOutcome] = Field(default_factory=list)
    suppressed: list[RuleOutcome] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


# --- comparing -----------------------------------------------------------------------------------


def read(entry: DiffKey, profile: Profile) -> Any:
    """The row's value on one deployment, or None when its logs cannot show it (never guessed)."""
    for name in entry.facts:
        value = profile.value(name)
        if value is None or value == []:
            continue
        if entry.aggregate is not None:
            numbers = [float(x) for x in value if isinstance(x, int | float) and not isinstance(x, bool)]
            if not numbers:
                continue
            return round(AGGREGATIONS[entry.aggregate](numbers), 4)
        return value
    if entry.spec_off is not None and profile.value("spec.enabled") is False:
        return entry.spec_off
    return None


def _canonical(entry: DiffKey, value: Any) -> Any:
    if isinstance(value, str):
        text = value.rstrip("/").rsplit("/", 1)[-1] if entry.basename else value
        text = text.casefold()
        if entry.better == "attention":
            upper = text.upper()
            return _ATTENTION_CANONICAL.get(upper, upper)
        return text
    return value


def same(entry: DiffKey, a: Any, b: Any) -> bool:
    a, b = _canonical(entry, a), _canonical(entry, b)
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=entry.tolerance) if entry.tolerance else float(a) == float(b)
    return bool(a == b)


def worse(entry: DiffKey, baseline: Any, candidate: Any) -> bool:
    """Whether the candidate's value is on the slower side of the baseline's (the row matters)."""
    if entry.better == "any":
        return True
    if entry.better == "never":
        return False
    if entry.better == "on":
        return baseline is True and candidate is False
    if entry.better in ("higher", "lower"):
        if not isinstance(baseline, int | float) or not isinstance(candidate, int | float):
            return False
        return candidate < baseline if entry.better == "higher" else candidate > baseline
    speed = _ATTENTION_SPEED if entry.better == "attention" else _TRANSPORT_SPEED
    slow_base = speed.get(str(_canonical(entry, baseline)).upper())
    slow_cand = speed.get(str(_canonical(entry, candidate)).upper())
    return slow_base is not None and slow_cand is not None and slow_cand > slow_base


def port(entry: DiffKey, baseline: Side, engine: str) -> str | None:
    """The flag on `engine` that sets the baseline's value, or None when no flag does."""
    if entry.port is not None:
        return entry.port(baseline, engine)
    if entry.measurement:
        return None
    spelling = entry.spelling(engine)
    value = read(entry, baseline.profile)
    if spelling is None or value is None:
        return None
    if isinstance(value, bool):
        return spelling.when_on if value else spelling.when_off
    if spelling.set_to is None:
        return None
    return spelling.set_to.format(value=_number(value))


def _detail(entry: DiffKey, profile: Profile) -> str | None:
    if entry.detail is None:
        return None
    value = profile.value(entry.detail)
    return None if value is None else str(value)


def compare(baseline: Profile, candidate: Profile) -> list[Difference]:
    """Every row of the vocabulary, in vocabulary order (ranking happens in `rank_rows`)."""
    base_side = Side(baseline)
    rows: list[Difference] = []
    for entry in VOCABULARY:
        b, c = read(entry, baseline), read(entry, candidate)
        if b is None or c is None:
            state: State = "unknown"
        else:
            state = "equal" if same(entry, b, c) else "differs"
        base_spelling = entry.spelling(baseline.engine) or Spelling()
        cand_spelling = entry.spelling(candidate.engine) or Spelling()
        rows.append(
            Difference(
                key=entry.key,
                group=entry.group,
                state=state,
                baseline=b,
                candidate=c,
                baseline_detail=_detail(entry, baseline),
                candidate_detail=_detail(entry, candidate),
                matters=state == "differs" and worse(entry, b, c),
                why=entry.why,
                port=port(entry, base_side, candidate.engine) if state == "differs" else None,
                baseline_flag=base_spelling.flag,
                candidate_flag=cand_spelling.flag,
                baseline_key=base_spelling.key,
                candidate_key=cand_spelling.key,
            )
        )
    return rows


def _link(rows: list[Difference], findings: Sequence[Finding], rules: Sequence[LoadedRule]) -> list[Difference]:
    """Name, on each row, the fired rules that read its facts (either side's)."""
    reads = {item.id: {n.removeprefix(BASELINE_PREFIX) for n in item.facts()} for item in rules}
    by_key = {entry.key: entry for entry in VOCABULARY}
    out: list[Difference] = []
    for row in rows:
        facts = set(by_key[row.key].facts)
        linked = [f.rule for f in findings if facts & reads.get(f.rule, set())]
        out.append(row.model_copy(update={"findings": linked}))
    return out


def rank_rows(rows: list[Difference], findings: Sequence[Finding], gap_key: str | None) -> list[Difference]:
    """The gap's row first; then rows that differ and matter, a group at a time, the group whose rows the
    strongest findings read first; then other differences; then rows one side cannot show; then equal ones."""
    score = {f.rule: f.score for f in findings}
    group_score: dict[str, int] = {}
    for row in rows:
        if row.matters:
            best = max((score[r] for r in row.findings), default=0)
            group_score[row.group] = max(group_score.get(row.group, 0), best)
    order = {entry.key: i for i, entry in enumerate(VOCABULARY)}

    def tier(row: Difference) -> int:
        if row.matters:
            return 0
        if row.state == "differs":
            return 1
        if row.state == "unknown" and (row.baseline is not None or row.candidate is not None):
            return 2
        return 3

    def key(row: Difference) -> tuple[int, int, int, int, int]:
        group = -group_score.get(row.group, 0) if tier(row) == 0 else 0
        return (row.key != gap_key, tier(row), group, GROUPS.index(row.group), order[row.key])

    return sorted(rows, key=key)


def folded(row: Difference) -> bool:
    """Equal rows and rows neither deployment's logs show are folded unless `--all`."""
    return row.state == "equal" or (row.baseline is None and row.candidate is None)


# --- the gap -------------------------------------------------------------------------------------

_GAP_WORDS = {"decode_tok_s_per_request": "per request", "generation_throughput": "in generation throughput"}


def measure_gap(rows: Sequence[Difference]) -> Gap | None:
    """Per-request decode speed when both sides have it, else aggregate generation throughput."""
    by_key = {row.key: row for row in rows}
    for key in _GAP_KEYS:
        row = by_key.get(key)
        if row is None or not isinstance(row.baseline, int | float) or not isinstance(row.candidate, int | float):
            continue
        if row.baseline <= 0 or row.candidate <= 0:
            continue
        ratio = row.baseline / row.candidate
        numbers = f"({row.candidate:.1f} vs {row.baseline:.1f} tok/s)"
        if ratio >= 1.05:
            summary = f"{ratio:.1f}x slower {_GAP_WORDS[key]} {numbers}"
        elif ratio <= 1 / 1.05:
            summary = f"{1 / ratio:.1f}x faster {_GAP_WORDS[key]} {numbers}"
        else:
            summary = f"about as fast {_GAP_WORDS[key]} {numbers}"
        return Gap(key=key, baseline=row.baseline, candidate=row.candidate, ratio=round(ratio, 4), summary=summary)
    return None


def attribute(gap: Gap, findings: Sequence[Finding], baseline_rules: set[str], about_differences: set[str]) -> Gap:
    """Split a slowdown over the causes found, by score (docs/diff.md).

    Only findings about a difference count: regression (`mode: diff`) findings and the candidate's
    own findings that read a row where the deployments differ and it matters (`about_differences`);
    a finding that also fires on the baseline explains none of the gap. A cause counts with its best
    finding's score, read as the percent of the gap (on a log scale) it plausibly explains; when the
    causes add up to more than 100 they are scaled to fill the gap exactly, and below 100 the rest
    stays unexplained. A score is evidence strength, not a measurement: this is a plausible split."""
    if gap.ratio < 1.05:
        return gap
    best: dict[str, tuple[int, list[str]]] = {}
    left_out: dict[str, str] = {}
    for f in findings:
        if f.rule in baseline_rules:
            left_out[f.rule] = "fires on the baseline too"
            continue
        if f.rule not in about_differences:
            left_out[f.rule] = "reads nothing the deployments differ in"
            continue
        score, rules = best.get(f.cause, (0, []))
        best[f.cause] = (max(score, f.score), [*rules, f.rule])
    total = sum(score for score, _ in best.values()) / 100
    scale = 1 / total if total > 1 else 1.0
    shares = [
        CauseShare(
            cause=cause,
            rules=rules,
            score=score,
            share=round(score / 100 * scale, 4),
            factor=round(gap.ratio ** (score / 100 * scale), 2),
        )
        for cause, (score, rules) in best.items()
    ]
    shares.sort(key=lambda s: (-s.share, s.cause))
    explained = sum(s.share for s in shares)
    return gap.model_copy(
        update={
            "attribution": shares,
            "unexplained_share": round(max(0.0, 1 - explained), 4),
            "left_out": left_out,
        }
    )


# --- the whole diff ------------------------------------------------------------------------------


def _lookup(baseline: Parsed, candidate: Parsed) -> Callable[[str, int], str | None]:
    def lookup(source: str, line: int) -> str | None:
        text = candidate.lookup(source, line)
        return text if text is not None else baseline.lookup(source, line)

    return lookup


def diff_parsed(
    baseline: Parsed,
    candidate: Parsed,
    rules: Sequence[LoadedRule],
    *,
    baseline_engine: str | None = None,
    candidate_engine: str | None = None,
    suppressions: Suppressions | None = None,
    show_all: bool = False,
    today: date | None = None,
) -> DiffReport:
    """Compare two deployments; findings are the candidate's own plus the regressions against the baseline."""
    base_diagnosis, base_profile = diagnose_parsed(baseline, rules, engine=baseline_engine, today=today)
    cand_diagnosis, cand_profile = diagnose_parsed(candidate, rules, engine=candidate_engine, today=today)
    combined = with_baseline(cand_profile, base_profile)
    findings, outcomes, warnings = evaluate(
        rules, combined, _lookup(baseline, candidate), suppressions, today, diff=True
    )
    rows = _link(compare(base_profile, cand_profile), findings, rules)
    gap = measure_gap(rows)
    baseline_rules = {f.rule for f in base_diagnosis.findings}
    if gap is not None:
        diff_rules = {item.id for item in rules if item.is_diff}
        about = diff_rules | {rule for row in rows if row.matters for rule in row.findings}
        gap = attribute(gap, findings, baseline_rules, about)
    rows = rank_rows(rows, findings, gap.key if gap is not None else None)
    verdict = verdict_for(findings, outcomes)
    if gap is not None and gap.ratio >= 1.05 and not gap.attribution:
        checks = verdict.summary.removeprefix("healthy: ")
        verdict = Verdict(healthy=False, summary=f"no finding explains the gap ({gap.summary}); {checks}")
    shown = rows if show_all else [row for row in rows if not folded(row)]

    def pick(kind: str) -> list[RuleOutcome]:
        return [o for o in outcomes if o.outcome == kind]

    return DiffReport(
        tool={"name": "logdoctor", "version": __version__},
        baseline=DiffSide(
            sources=base_diagnosis.sources,
            engine=base_diagnosis.engine,
            verdict=base_diagnosis.verdict,
            findings=sorted(baseline_rules),
        ),
        candidate=DiffSide(
            sources=cand_diagnosis.sources,
            engine=cand_diagnosis.engine,
            verdict=cand_diagnosis.verdict,
            findings=sorted(f.rule for f in cand_diagnosis.findings),
        ),
        gap=gap,
        differences=shown,
        folded=len(rows) - len(shown),
        verdict=verdict,
        findings=findings,
        ruled_out=pick("ruled_out"),
        insufficient_data=pick("insufficient_data"),
        suppressed=pick("suppressed"),
        warnings=warnings,
    )


# --- shared by the renderers ---------------------------------------------------------------------


def format_value(key: str, value: Any, detail: str | None = None) -> str:
    """A row's value as the reports show it: `on (FULL_AND_PIECEWISE)`, `262,144`, `3.08`, `unknown`."""
    if value is None:
        return "unknown"
    entry = next(e for e in VOCABULARY if e.key == key)
    if isinstance(value, bool):
        text = "on" if value else "off"
    elif isinstance(value, int | float) and entry.fmt:
        text = format(value, entry.fmt)
    elif isinstance(value, float):
        text = _number(value) if value.is_integer() else f"{value:.4g}"
    else:
        text = str(value)
    if detail and detail.upper() != text.upper():
        text += f" ({detail})"
    return text


def engine_label(side: DiffSide) -> str:
    return side.engine.name + (f" {side.engine.version}" if side.engine.version else "")
