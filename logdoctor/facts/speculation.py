"""Speculative decoding in one place: the drafter's cost, the acceptance a method typically reaches, and the one
k sweep that both the roofline (`logdoctor.perf.model`, with a GPU) and the rules' facts (`spec.best_k`,
`spec.step_cost`, without one) use, so the report's numbers agree.

    >>> points = sweep((0.21, 0.05, 0.02, 0.01, 0.004, 0.0), hardware_free_cost("block", 0.05, batch=1))
    >>> best(points).k, round(best(points).speedup, 3)
    (5, 1.232)

A step with k drafted tokens costs, in plain decode steps at the same batch (docs/expected-performance.md):

* verification of k+1 tokens for each running sequence: 1 while the step stays memory-bound, growing with the
  verified tokens past the compute knee (`verify_cost_ridge` without a GPU; the roofline with one);
* drafting: `passes(kind, k)` forward passes of the drafter, each costing `c` plain steps, where `c` is the
  bytes one drafter pass reads over the bytes one target step reads (`drafter_cost`): its layers plus the LM head
  it computes logits with. A sequential drafter (EAGLE, MTP, a draft model) makes k passes, a block drafter
  (DFlash) one for the whole block, a lookup drafter (n-gram, suffix) none.

Tokens per step come from per-position acceptance r_i (the share of drafts whose first i+1 tokens were accepted,
vLLM's `Per-position acceptance rate`): τ(k) = 1 + Σ_{i<k} r_i; speedup S(k) = τ(k) / cost(k).

This module imports nothing of logdoctor's: the facts layer calls it on every diagnosis.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

DrafterKind = Literal["sequential", "block", "lookup"]

# How each method drafts: one small forward pass per drafted token (an EAGLE/MTP head or a draft model), one pass
# for the whole block (DFlash: vllm/v1/spec_decode/dflash.py runs the drafter once over 1 + k query tokens), or a
# lookup with no GPU work (n-gram, suffix decoding).
DRAFTER_KINDS: dict[str, DrafterKind] = {
    "mtp": "sequential",
    "eagle": "sequential",
    "eagle3": "sequential",
    "draft_model": "sequential",
    "medusa": "block",
    "dflash": "block",
    "ngram": "lookup",
    "ngram_gpu": "lookup",
    "suffix": "lookup",
}

# The drafter's cost per pass (sequential: per drafted token; block: per block) in target decode steps, used only
# where it cannot be computed from bytes (no layer count for the target, or a separate draft model of unknown size).
# Assumptions, named as such in the working: an MTP/EAGLE head is one decoder layer plus the LM head; DFlash the
# low end of 0.05-0.15 (../shared/research-users-tools-roofline.md §3.2 worked example); a draft model ~1/10.
DEFAULT_DRAFT_COST: dict[str, float] = {
    "mtp": 0.05,
    "eagle": 0.05,
    "eagle3": 0.05,
    "draft_model": 0.10,
    "medusa": 0.02,
    "dflash": 0.05,
    "ngram": 0.0,
    "ngram_gpu": 0.0,
    "suffix": 0.0,
}


# A method the table does not know: the cost of one small decoder-layer pass (the least of the defaults above that
# does GPU work besides Medusa's heads), so the bound stays an upper bound.
UNKNOWN_DRAFT_COST = 0.05


def default_draft_cost(method: str) -> float:
    return DEFAULT_DRAFT_COST.get(method, UNKNOWN_DRAFT_COST)


@dataclass(frozen=True)
class DrafterLayers:
    """How many decoder layers a method's drafter has, and where that number comes from."""

    layers: int
    source: str
    # True: the method's architecture fixes it (MTP, EAGLE); False: a convention of one vendor's drafters
    by_method: bool = True


# Decoder layers of each method's drafter where the method fixes it (a draft model's comes from its own size).
DRAFTER_LAYERS: dict[str, DrafterLayers] = {
    "mtp": DrafterLayers(
        1,
        "one MTP module of one decoder layer, sharing the target's embedding and LM head (DeepSeek-V3 report, "
        "https://arxiv.org/abs/2412.19437 §2.2; vLLM: `Detected MTP model. Sharing target model lm_head weights`)",
    ),
    "eagle": DrafterLayers(1, "EAGLE's drafter is one decoder layer (https://arxiv.org/abs/2401.15077)"),
    "eagle3": DrafterLayers(1, "EAGLE-3's drafter is one decoder layer (https://arxiv.org/abs/2503.01840)"),
    "dflash": DrafterLayers(
        5,
        "z-lab's DFlash drafters have 5 decoder layers fed by 5 target layers (Qwen3-8B-DFlash-b16 config: "
        "num_hidden_layers 5, target_layer_ids [1, 9, 17, 25, 33], as converted in vllm-project/speculators' "
        "DFlashConverter tests); the drafter computes logits with the target's LM head "
        "(vllm/model_executor/models/qwen3_dflash.py)",
        by_method=False,
    ),
}


def drafter_kind(method: str) -> DrafterKind:
    return DRAFTER_KINDS.get(method, "sequential")


def passes(kind: DrafterKind, k: int) -> int:
    """Drafter forward passes in one step with k drafted tokens."""
    if k <= 0 or kind == "lookup":
        return 0
    return 1 if kind == "block" else k


@dataclass(frozen=True)
class DrafterCost:
    """One drafter pass in target decode steps (memory-bound: bytes read over bytes read), and how it was got."""

    ratio: float
    assumed: bool  # True: the method's default (DEFAULT_DRAFT_COST), not computed from the deployment
    formula: str
    inputs: dict[str, str]
    source: str


def drafter_cost(
    method: str,
    *,
    target_read_bytes: float | None,
    target_layers: int | None,
    lm_head_bytes: float | None = None,
    drafter_layers: int | None = None,
    drafter_bytes: float | None = None,
    drafter_in_load: bool = True,
) -> DrafterCost:
    """The drafter's cost per pass from the deployment's sizes (per GPU):

    c = (L_d · w_layer + W_head) / W_target, w_layer = (W_target − W_head) / (L_t + L_d)

    where W_target is what one target step reads, which includes the drafter's own layers when the engine counted
    them in its `Model loading took` figure (vLLM loads the drafter inside that measurement: gpu_model_runner.py
    `Loading drafter model...`), so they are taken out of the per-layer size. A drafter whose size is known
    (`drafter_bytes`, from its parameter count) is used as is. Falls back to the method's default ratio (assumed)
    when the target's layer count or size is unknown."""
    default = default_draft_cost(method)
    kind = drafter_kind(method)
    if kind == "lookup":
        return DrafterCost(0.0, False, "c = 0 (lookup drafter: no GPU pass)", {}, "the method drafts by lookup")
    known = DRAFTER_LAYERS.get(method)
    layers = drafter_layers if drafter_layers is not None else (known.layers if known else None)
    layer_source = "the drafter's config" if drafter_layers is not None else (known.source if known else "")
    head = lm_head_bytes or 0.0
    if not target_read_bytes or target_read_bytes <= 0:
        return DrafterCost(default, True, "c (assumed default)", {"method": method}, "DEFAULT_DRAFT_COST")
    if drafter_bytes is not None and drafter_bytes > 0:
        ratio = (drafter_bytes + head) / target_read_bytes
        return DrafterCost(
            ratio,
            False,
            "c = (W_draft + W_head) / W_target",
            {"W_draft": _gb(drafter_bytes), "W_head": _gb(head), "W_target": _gb(target_read_bytes)},
            "the drafter's parameter count; LM head: vocab x h x 2 / TP",
        )
    if layers is None or not target_layers:
        return DrafterCost(default, True, "c (assumed default)", {"method": method}, "DEFAULT_DRAFT_COST")
    counted = layers if drafter_in_load else 0
    per_layer = max(target_read_bytes - head, 0.0) / (target_layers + counted)
    ratio = (layers * per_layer + head) / target_read_bytes
    # a layer count that only a vendor's convention gives (not the drafter's own config) is an assumption
    assumed = drafter_layers is None and known is not None and not known.by_method
    return DrafterCost(
        ratio,
        assumed,
        "c = (L_d * w_layer + W_head) / W_target, w_layer = (W_target - W_head) / (L_t + L_d)",
        {
            "L_d": str(layers),
            "L_t": str(target_layers),
            "w_layer": _gb(per_layer),
            "W_head": _gb(head) if lm_head_bytes is not None else "unknown (0)",
            "W_target": _gb(target_read_bytes),
        },
        f"drafter layers: {layer_source}; a drafter layer taken as the size of a target layer",
    )


def _gb(n: float) -> str:
    return f"{n / 1e9:.2f} GB"


# What one speculative step costs beyond the bytes it reads, per drafted token: the rejection sampler over k+1
# positions, the draft bookkeeping, the KV (and, for hybrids, recurrent-state) writes of k+1 positions, the
# drafter's own launches. A roofline of bytes leaves it out; measurements at batch 1 do not, and it is a time (CPU
# work and small kernels), not a share of the step:
#   * vLLM DFlash, Qwen3.5-4B on 1x H100 (vllm#49730): a step of 17.1 ms against 3.5 ms plain decode with 15
#     drafted tokens, where the bytes (verification ~1.0, drafter layers and the 1.27 GB LM head over ~8.4 GB:
#     c ~0.21) say ~4.4 ms: (17.1 - 4.4) / 15 = 0.85 ms a drafted token ("below acceptance length ~4 DFlash is
#     slower than no speculation");
#   * SGLang DFlash, Qwen3-8B on 1x A800 (sglang#29244): 88 -> 162 tok/s at accept len 2.8, a step of 17.3 ms
#     against 11.4 ms, where the bytes (five 0.39 GB layers and the 1.24 GB LM head over 15.1 GB, c = 0.21) say
#     13.8 ms: (17.3 - 13.8) / 15 = 0.23 ms a drafted token (15 drafts: the b16 drafter's block).
# With a GPU (the perf model) the overhead is this time, on top of the drafter's passes counted in bytes. Without
# one (the facts' break-even) it is a share of a plain step: a drafted token costs 0.2 plain steps beyond
# verification, the drafter's pass included (a sequential drafter's c = 0.05 of it), which is
#   * vllm#49730's break-even for a DFlash block of 15: acceptance length ~4 = 1.05 + 15 x 0.197, and
#   * the 1 + 0.2k the rules were checked with on the corpus for MTP/EAGLE (below-break-even),
# 0.23-0.85 ms on the 2-6 ms plain steps of the small models on fast GPUs most corpus runs are.
OVERHEAD_SECONDS_PER_DRAFTED_TOKEN: dict[str, float] = {"vllm": 0.85e-3, "sglang": 0.23e-3}
OVERHEAD_SECONDS_DEFAULT = 0.23e-3  # another engine: the least measured
OVERHEAD_PER_DRAFTED_TOKEN = 0.2


def overhead_plain_steps(kind: DrafterKind, ratio: float) -> float:
    """Without hardware: the per-step overhead of one drafted token beyond verification and the drafter's passes,
    in plain steps. A sequential drafter's pass (c a token) is part of the 0.2 a drafted token costs."""
    if kind == "sequential":
        return max(OVERHEAD_PER_DRAFTED_TOKEN - ratio, 0.0)
    return OVERHEAD_PER_DRAFTED_TOKEN


def overhead_seconds(engine: str | None) -> float:
    """The per-step overhead of one drafted token in seconds, for an engine (the least measured for another)."""
    return OVERHEAD_SECONDS_PER_DRAFTED_TOKEN.get(engine or "", OVERHEAD_SECONDS_DEFAULT)


def with_overhead(
    cost: Callable[[int], float], per_token: float = OVERHEAD_PER_DRAFTED_TOKEN
) -> Callable[[int], float]:
    """cost(k) (the bytes: verification and the drafter's passes) plus the per-step overhead of k drafted tokens,
    `per_token` plain steps each: what a speculative step is expected to cost, which the break-even, the best k and
    the effects use. The bound (`logdoctor.perf.model.expected`) leaves the overhead out: it is an upper bound."""

    def total(k: int) -> float:
        return cost(k) + (per_token * k if k > 0 else 0.0)

    return total


def break_even(cost: Callable[[int], float], k: int, per_token: float = OVERHEAD_PER_DRAFTED_TOKEN) -> float:
    """The acceptance length (tokens per step, bonus included) at which speculation with k drafted tokens is as
    fast as plain decode: τ* = r_v(B, k+1) + drafting + overhead (research doc §3.1 item 5, plus the overhead)."""
    return with_overhead(cost, per_token)(k)


def verify_cost_ridge(k: int, batch: float, ridge_tokens: float = 256.0) -> float:
    """Without a GPU: how much more a target forward over batch x (k + 1) tokens costs than one over batch tokens,
    1 while the step stays memory-bound (below the ridge, ~256 tokens on current GPUs: H100 bf16 989 TFLOP/s over
    3.35 TB/s), growing with the verified tokens past it."""
    return max(ridge_tokens, batch * (k + 1)) / max(ridge_tokens, batch)


def hardware_free_cost(kind: DrafterKind, ratio: float, batch: float) -> Callable[[int], float]:
    """cost(k) in plain decode steps without a GPU: verification by the ridge rule plus the drafter's passes (a block
    pass covers the verified tokens, so it grows with verification)."""

    def cost(k: int) -> float:
        verify = verify_cost_ridge(k, batch)
        if kind == "block":
            return verify * (1.0 + ratio * passes(kind, k))
        return verify + ratio * passes(kind, k)

    return cost


@dataclass(frozen=True)
class KPoint:
    k: int
    tokens_per_step: float  # τ(k)
    step_cost: float  # in plain decode steps at the same batch
    speedup: float  # τ(k) / cost(k): over no speculation


def tokens_per_step(positions: Sequence[float], k: int) -> float:
    """τ(k) = 1 + Σ_{i<k} r_i: the bonus token plus the expected accepted prefix of k drafts."""
    return 1.0 + sum(positions[:k])


def sweep(positions: Sequence[float], cost: Callable[[int], float], k_max: int | None = None) -> tuple[KPoint, ...]:
    """τ(k), cost(k) and the speedup for every k from 0 (no speculation) to `k_max` (default: every position)."""
    top = len(positions) if k_max is None else min(k_max, len(positions))
    points = [KPoint(0, 1.0, 1.0, 1.0)]
    for k in range(1, top + 1):
        tau = tokens_per_step(positions, k)
        c = cost(k)
        points.append(KPoint(k, tau, c, tau / c if c > 0 else 0.0))
    return tuple(points)


def best(points: Sequence[KPoint]) -> KPoint:
    """The fastest k; on a tie the smaller k (fewer drafts for the same speed)."""
    out = points[0]
    for p in points[1:]:
        if p.speedup > out.speedup + 1e-9:
            out = p
    return out


def iid_positions(mean_acceptance_length: float, k: int) -> tuple[float, ...]:
    """Per-position rates r_i = α^(i+1) whose τ(k) equals a mean acceptance length (α by bisection): for SGLang's
    `accept len`, which has no per-position breakdown, and for a published acceptance length."""
    target = min(max(mean_acceptance_length, 1.0), k + 1.0)
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if 1.0 + sum(mid ** (i + 1) for i in range(k)) < target:
            lo = mid
        else:
            hi = mid
    alpha = (lo + hi) / 2
    return tuple(alpha ** (i + 1) for i in range(k))


@dataclass(frozen=True)
class TypicalAcceptance:
    """A mean acceptance length that a working drafter of this method is published to reach, at k drafted tokens."""

    method: str
    tau: float
    k: int
    source: str


# What a working drafter of each method reaches, from published measurements (../shared/research-users-tools-
# roofline.md §3.2). The bound "with speculation at a typical acceptance" uses these: the low end where a range is
# published. A method without an entry gets no such bound (said in the report).
TYPICAL_ACCEPTANCE: dict[str, TypicalAcceptance] = {
    "dflash": TypicalAcceptance(
        "dflash",
        6.3,
        15,
        "DFlash in SGLang: acceptance length ~6.3 at every TP and concurrency on H200 "
        "(https://github.com/sgl-project/sglang/pull/16818)",
    ),
    "mtp": TypicalAcceptance(
        "mtp",
        2.5,
        3,
        "SGLang NextN/MTP: acceptance length 2.5-3 with 4 draft tokens (https://github.com/sgl-project/sglang/pull/3582); "
        "the low end",
    ),
}

# What the acceptance rules compare a drafter with (`spec.typical_acceptance`): one published figure a method, and for
# an MTP head one a model family (its own head's; another family's says nothing of it), each at the k it was measured
# at (../shared/research-users-tools-roofline.md §3.2 and the sources named). A method without one (n-gram and suffix
# lookup, whose acceptance is the workload's repetition; Medusa; a draft model, which is any model) is unknown: the
# rule does not judge it.
ACCEPTANCE_BY_METHOD: dict[str, TypicalAcceptance] = {
    "dflash": TYPICAL_ACCEPTANCE["dflash"],
    "eagle": TypicalAcceptance(
        "eagle",
        1.89,
        2,
        "EAGLE-1 in vLLM V1, Llama-3-8B on MT-Bench: acceptance length 1.89 at k=2, 2.08 at k=4 "
        "(https://github.com/vllm-project/vllm/pull/16035)",
    ),
    "eagle3": TypicalAcceptance(
        "eagle3",
        2.26,
        3,
        "EAGLE-3 in vLLM on MT-Bench at k=3: mean acceptance length 2.60 (Llama-3.1-8B), 2.26 (Qwen3-8B), 2.56 "
        "(gpt-oss-20b) with RedHatAI's speculators (https://github.com/vllm-project/vllm/pull/32030); the low end",
    ),
}
ACCEPTANCE_BY_MTP_FAMILY: dict[str, TypicalAcceptance] = {
    # a head drafts one position after another, so the first three of k=6 are what k=3 accepts
    "Qwen3.x": TypicalAcceptance(
        "mtp",
        2.52,
        3,
        "Qwen3.6-27B MTP in vLLM 0.20.1 on 2x RTX 3090: per-position acceptance 0.740, 0.473, 0.309 over the first "
        "three drafts, 2.52 tokens a step at k=3; 0.917, 0.837, 0.648 (3.40) on other requests "
        "(https://github.com/noonghunna/club-3090/issues/105); the low end",
    ),
    "DeepSeek": TYPICAL_ACCEPTANCE["mtp"],
}
MTP_METHODS = frozenset({"mtp", "nextn", "deepseek_mtp", "qwen3_next_mtp", "qwen3_5_mtp", "mimo_mtp", "ernie_mtp"})


def mtp_family(architecture: str) -> str | None:
    """The model family whose MTP head figure applies, from the architecture the log names; None for a family
    without a published figure (MiMo, GLM, ERNIE) or an architecture not in the log."""
    arch = architecture.lower()
    if arch.startswith("qwen3"):
        return "Qwen3.x"
    if arch.startswith("deepseek"):
        return "DeepSeek"
    return None


def published_acceptance(method: str | None, architecture: str = "") -> TypicalAcceptance | None:
    """The published acceptance of a working drafter of this method (an MTP head: of this model family), or None
    where none is published for it."""
    m = (method or "").lower()
    if m in MTP_METHODS or "mtp" in m:
        family = mtp_family(architecture)
        return ACCEPTANCE_BY_MTP_FAMILY[family] if family else None
    return ACCEPTANCE_BY_METHOD.get(m)


# Where the log names no method: the acceptance per drafted token of a working drafter on chat, α ≈ 0.7 (the EAGLE
# paper's ~0.65 acceptance rate, https://github.com/SafeAILab/EAGLE/issues/169; the i.i.d. table of
# ../shared/research-users-tools-roofline.md §3.1: τ = 1.7 at k=1, 2.19 at k=2, 2.53 at k=3).
GENERIC_ALPHA = 0.7
GENERIC_SOURCE = (
    "the log names no method: a working drafter accepts about 0.7 of each drafted token (EAGLE paper, "
    "SafeAILab/EAGLE#169); τ(k) = 1 + Σ 0.7^(i+1)"
)


def typical_acceptance(method: str | None, k: int | None, architecture: str = "") -> tuple[float, str] | None:
    """The mean acceptance length a working drafter of `method` (an MTP head: of the model family `architecture`
    names) reaches at `k` drafted tokens, and its source: the published (τ, k) carried to this k with the i.i.d.
    per-token rate it implies (a drafter's acceptance falls with depth, so this is an estimate); the generic rate
    where the log names no method; None where the method has no published figure."""
    if not method:
        # neither method nor k known: the acceptance length a working drafter reaches at the smallest k, the only
        # figure a run at any k would reach (a measured length of 1.9 is 90% acceptance at k=1)
        at = 1 if k is None or k < 1 else k
        return round(1.0 + sum(GENERIC_ALPHA ** (i + 1) for i in range(at)), 3), f"{GENERIC_SOURCE}, k={at}"
    known = published_acceptance(method, architecture)
    if known is None:
        return None
    at = known.k if k is None or k < 1 else k
    alpha_positions = iid_positions(known.tau, known.k)
    alpha = alpha_positions[0] if alpha_positions else GENERIC_ALPHA
    tau = 1.0 + sum(alpha ** (i + 1) for i in range(at))
    return round(tau, 3), f"{known.source}; at k={at} with the per-token rate {alpha:.2f} that implies"


__all__ = [
    "ACCEPTANCE_BY_METHOD",
    "ACCEPTANCE_BY_MTP_FAMILY",
    "DEFAULT_DRAFT_COST",
    "DRAFTER_KINDS",
    "DRAFTER_LAYERS",
    "GENERIC_ALPHA",
    "MTP_METHODS",
    "OVERHEAD_PER_DRAFTED_TOKEN",
    "OVERHEAD_SECONDS_DEFAULT",
    "OVERHEAD_SECONDS_PER_DRAFTED_TOKEN",
    "TYPICAL_ACCEPTANCE",
    "UNKNOWN_DRAFT_COST",
    "DrafterCost",
    "DrafterKind",
    "KPoint",
    "TypicalAcceptance",
    "best",
    "break_even",
    "default_draft_cost",
    "drafter_cost",
    "drafter_kind",
    "hardware_free_cost",
    "iid_positions",
    "mtp_family",
    "overhead_plain_steps",
    "overhead_seconds",
    "passes",
    "published_acceptance",
    "sweep",
    "tokens_per_step",
    "typical_acceptance",
    "verify_cost_ridge",
    "with_overhead",
]
