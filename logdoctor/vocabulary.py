"""The engine-neutral settings and measurements, one list that facts and `logdoctor diff` share.

    Setting("tensor_parallel_size", "parallel.tp", group="parallelism and communication", why="GPUs that ...")

A setting names the fact it is read into and, when `diff` shows it, its group, why it matters and which
direction is better. How each engine spells it (the startup-dump keys it is read from, where else its
log shows it, the flag that sets it) lives in the engine's package (`EngineSpec.flags`): the core reads
a plain setting from any engine's dump by those keys (logdoctor/facts/combiners/config.py), and diff
writes the candidate engine's flag with them. A `composite` setting's flag depends on several facts
(the speculative config, the CUDA-graph mode): the engine's `EngineSpec.port` writes it.

This module imports nothing of logdoctor's own at run time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from logdoctor.facts import Profile

Better = Literal["higher", "lower", "on", "any", "never", "attention", "transport"]


@dataclass(frozen=True)
class Setting:
    """One setting or measurement in engine-neutral words."""

    key: str  # the name diff shows and engines spell: "tensor_parallel_size"
    fact: str  # the fact it is read into: "parallel.tp"
    group: str | None = None  # diff's group of rows; None: read into facts, not compared by diff
    why: str = ""
    better: Better = "any"
    aggregate: str | None = None  # series facts: how diff summarises them (median, mean)
    fallback: str | None = None  # a second fact for the same thing (pasted benchmark results)
    detail: str | None = None  # a fact shown beside the value (the cudagraph mode, the reason)
    spec_off: Any = None  # the value when speculative decoding is known to be off
    tolerance: float = 0.0  # relative difference still counted as equal (measurements are noisy)
    basename: bool = False  # compare paths by their last part (/root/models/X vs org/X)
    fmt: str = ""  # format spec for numbers
    composite: bool = False  # its flag depends on several facts: written by the engine's `port`
    measurement: bool = False  # measured, not set: no flag of its own
    unlimited: Any = None  # a configured value that means "no limit": not read into the fact

    @property
    def facts(self) -> tuple[str, ...]:
        return tuple(f for f in (self.fact, self.fallback) if f is not None)


@dataclass(frozen=True)
class Side:
    """One deployment's profile as an engine's port function sees it (the baseline of `logdoctor diff`)."""

    profile: Profile

    @property
    def engine(self) -> str:
        return self.profile.engine

    def value(self, name: str) -> Any:
        return self.profile.value(name)


# An engine's port function: (setting key, the baseline) -> this engine's flag that sets the baseline's value.
PortFunction = Callable[[str, Side], "str | None"]

_THROUGHPUT = "throughput"
_SPEC = "speculative decoding"
_GRAPHS = "CUDA graphs"
_ATTENTION = "attention"
_COMM = "parallelism and communication"
_MEMORY = "memory and scheduling"
_DEPLOYMENT = "deployment"

_ROWS: tuple[Setting, ...] = (
    # throughput: what the user measures
    Setting(
        "decode_tok_s_per_request",
        "throughput.per_request",
        _THROUGHPUT,
        "what one user sees: decode tok/s of a single request (stats intervals with one running request, "
        "or a pasted benchmark's per-request rate)",
        "higher",
        aggregate="median",
        fallback="bench.per_request",
        tolerance=0.05,
        fmt=".1f",
        measurement=True,
    ),
    Setting(
        "generation_throughput",
        "throughput.generation",
        _THROUGHPUT,
        "decode tok/s of all running requests together; compare it only under similar load",
        "higher",
        aggregate="median",
        tolerance=0.05,
        fmt=".1f",
        measurement=True,
    ),
    # speculative decoding
    Setting(
        "speculative_method",
        "spec.method",
        _SPEC,
        "the drafter decides how many tokens a step yields: an MTP head or an EAGLE drafter trained for the "
        "target accepts 2.5-3.5 tokens per step, a mismatched drafter about 1",
        "any",
        spec_off="off",
        composite=True,
    ),
    Setting(
        "num_speculative_tokens",
        "spec.num_tokens",
        _SPEC,
        "k: each step verifies k+1 positions and runs the drafter k times; a larger k pays only when acceptance "
        "keeps up",
        "any",
        spec_off=0,
        composite=True,
    ),
    Setting(
        "draft_model",
        "spec.draft_model",
        _SPEC,
        "the drafter's checkpoint (for MTP the target's own head); it must match the target's tokenizer and "
        "chat template",
        "any",
        spec_off="none",
        basename=True,
        composite=True,
    ),
    Setting(
        "mean_acceptance_length",
        "spec.acceptance_length",
        _SPEC,
        "tokens per verification step, the bonus token included: at equal step cost, per-request decode "
        "speed scales with it",
        "higher",
        aggregate="mean",
        tolerance=0.05,
        fmt=".2f",
        composite=True,
        measurement=True,
    ),
    Setting(
        "draft_acceptance_rate",
        "spec.acceptance_rate",
        _SPEC,
        "share of drafted tokens the target accepted",
        "higher",
        aggregate="mean",
        tolerance=0.1,
        fmt=".1%",
        composite=True,
        measurement=True,
    ),
    # CUDA graphs
    Setting(
        "cuda_graphs",
        "cuda_graphs.enabled",
        _GRAPHS,
        "without CUDA graphs every decode step launches hundreds of kernels from Python: 1.5-4x slower at "
        "small batches",
        "on",
        detail="cuda_graphs.mode",
        composite=True,
    ),
    Setting(
        "drafter_cuda_graphs",
        "cuda_graphs.drafter",
        _GRAPHS,
        "an eager drafter pays the kernel-launch overhead k times per step",
        "on",
        composite=True,
    ),
    Setting(
        "cuda_graph_max_batch",
        "cuda_graphs.max_batch",
        _GRAPHS,
        "batches larger than the largest captured size decode eagerly",
        "higher",
    ),
    # attention
    Setting(
        "attention_backend",
        "attention.backend",
        _ATTENTION,
        "the attention kernel: FlashAttention and FlashInfer are the fast paths on NVIDIA GPUs; Triton is a "
        "default for some models; SDPA, xFormers and Flex are fallbacks",
        "attention",
        composite=True,
    ),
    Setting(
        "drafter_attention_backend",
        "attention.drafter_backend",
        _ATTENTION,
        "the drafter's attention kernel (DFlash drafters need non-causal attention)",
        "attention",
        composite=True,
    ),
    # parallelism and communication
    Setting(
        "tensor_parallel_size",
        "parallel.tp",
        _COMM,
        "GPUs that share every layer; each layer ends in an all-reduce between them",
    ),
    Setting(
        "pipeline_parallel_size",
        "parallel.pp",
        _COMM,
        "pipeline stages; a request's tokens pass through each in turn",
    ),
    Setting(
        "data_parallel_size",
        "parallel.dp",
        _COMM,
        "independent replicas; per-request speed does not change with it",
    ),
    Setting(
        "custom_all_reduce",
        "allreduce.custom",
        _COMM,
        "the engines' custom all-reduce beats NCCL on decode's small messages; it needs GPU P2P (NVLink, or "
        "PCIe P2P on at most two GPUs)",
        "on",
        detail="allreduce.reason",
    ),
    Setting(
        "nccl_transport",
        "nccl.transport",
        _COMM,
        "how NCCL moves data between the GPUs of one host: P2P directly, SHM through host memory, NET through "
        "the network (set by the topology and NCCL_P2P_DISABLE / NCCL_P2P_LEVEL, not by an engine flag)",
        "transport",
        measurement=True,
    ),
    # memory and scheduling
    Setting(
        "kv_cache_tokens",
        "kv.tokens",
        _MEMORY,
        "tokens of context that fit in GPU memory at once: caps the batch and long contexts (set through the "
        "memory fraction and the maximum model length)",
        "higher",
        tolerance=0.1,
        fmt=",.0f",
    ),
    Setting(
        "max_concurrent_requests",
        "sched.max_num_seqs",
        _MEMORY,
        "the most requests decoded together; more requests queue",
        "higher",
    ),
    Setting(
        "max_batched_tokens",
        "sched.max_batched_tokens",
        _MEMORY,
        "tokens scheduled per step (the prefill chunk); with speculation each running request also takes k+1 slots",
        "higher",
        unlimited=-1,
    ),
    Setting(
        "memory_fraction",
        "memory.fraction",
        _MEMORY,
        "share of GPU memory the engine takes for weights and KV cache (SGLang's counts the static part only, "
        "so the two engines' numbers are close, not equal)",
        "higher",
        tolerance=0.03,
    ),
    Setting(
        "prefix_caching",
        "sched.prefix_caching",
        _MEMORY,
        "reuses the KV of shared prompt prefixes (system prompts, multi-turn chats): less prefill work",
        "on",
    ),
    Setting(
        "quantization",
        "quant.method",
        _MEMORY,
        "weight format: a different quantization means different kernels (and a different model)",
        "any",
    ),
    # the deployment itself
    Setting(
        "engine",
        "engine",
        _DEPLOYMENT,
        "the serving engine; the flags above are translated between engines",
        "never",
        measurement=True,
    ),
    Setting(
        "engine_version",
        "engine.version",
        _DEPLOYMENT,
        "engine release (SGLang logs rarely print it)",
        "never",
        measurement=True,
    ),
    Setting(
        "model",
        "model",
        _DEPLOYMENT,
        "the served model; a different model makes the comparison about the model, not the deployment",
        "any",
        basename=True,
    ),
    Setting("gpu", "gpu.name", _DEPLOYMENT, "GPU model", "any", measurement=True),
    Setting(
        "container",
        "host.container",
        _DEPLOYMENT,
        "where the engine runs (LXC and VMs often hide GPU P2P)",
        "any",
        measurement=True,
    ),
)

# Read from the startup dump into facts; not rows of `logdoctor diff`.
_READ_ONLY: tuple[Setting, ...] = (
    Setting("nodes", "parallel.nodes"),
    Setting("cpu_offload_gb", "offload.cpu_gb"),
    Setting("swap_space_gb", "offload.swap_gb"),
    Setting("mamba_cache_mode", "hybrid.mamba_cache_mode"),
)

SETTINGS: dict[str, Setting] = {s.key: s for s in (*_ROWS, *_READ_ONLY)}

# The rows of `logdoctor diff`, in the order it lists them, and their groups in that order.
DIFF_ROWS: tuple[Setting, ...] = tuple(s for s in SETTINGS.values() if s.group is not None)
GROUPS: tuple[str, ...] = tuple(dict.fromkeys(s.group for s in DIFF_ROWS if s.group is not None))

# Drafting methods whose draft model is a checkpoint of its own (a port names it).
NEEDS_DRAFTER = ("eagle", "eagle3", "dflash", "draft_model")


def speculation(base: Side) -> tuple[str, int | None, Any] | None:
    """The baseline's speculative method, k and drafter checkpoint, for an engine's port function."""
    method = base.value("spec.method")
    k = base.value("spec.num_tokens")
    draft = base.value("spec.draft_model") if method in NEEDS_DRAFTER else None
    if not isinstance(method, str):
        return None
    steps = int(k) if isinstance(k, int | float) and k >= 1 else None
    return method, steps, draft
