"""What fixing a cause would buy on this deployment: a speedup computed from the model, with its working.

    >>> from logdoctor.perf.hardware import load_hardware
    >>> table = load_hardware()
    >>> gpu = table.lookup("RTX 4090").gpu
    >>> dep = Deployment(gpu=gpu, tp=4, weights_bytes_per_gpu=4e9, layers=32, link="pcie", custom_allreduce=False)
    >>> round(custom_allreduce(dep, table).speedup, 2)
    1.21

Each function returns an `Effect`: `speedup` is t_now / t_fixed for decode at the deployment's batch
(1.0 = fixing it changes nothing), `working` the steps behind it. Rules rank
findings by `tok_s_recovered`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from logdoctor.facts import speculation
from logdoctor.perf.hardware import HardwareTable
from logdoctor.perf.model import (
    Deployment,
    SpecConfig,
    Step,
    _Work,
    allreduce_latency_us,
    spec_positions,
    spec_step,
    step_time,
)


@dataclass(frozen=True)
class Effect:
    cause: str
    speedup: float
    now_tok_s: float  # expected per request as deployed
    fixed_tok_s: float  # expected per request once fixed
    working: tuple[Step, ...]
    note: str = ""

    @property
    def tok_s_recovered(self) -> float:
        return self.fixed_tok_s - self.now_tok_s


def _effect(
    cause: str, now: float, fixed: float, tau_now: float, tau_fixed: float, work: _Work, note: str = ""
) -> Effect:
    work.prefix = ""
    now_tps, fixed_tps = tau_now / now, tau_fixed / fixed
    work.add(
        "speedup if fixed",
        "S = (tau_fixed / t_fixed) / (tau_now / t_now)",
        {
            "t_now": f"{now * 1e3:.3f} ms",
            "t_fixed": f"{fixed * 1e3:.3f} ms",
            "tau_now": f"{tau_now:.3f}",
            "tau_fixed": f"{tau_fixed:.3f}",
        },
        f"{fixed_tps / now_tps:.3f}x ({now_tps:.1f} -> {fixed_tps:.1f} tok/s per request)",
        "logdoctor.perf.model",
    )
    return Effect(cause, fixed_tps / now_tps, now_tps, fixed_tps, tuple(work.steps), note)


def custom_allreduce(dep: Deployment, table: HardwareTable) -> Effect:
    """(a) custom all-reduce off -> on, on the same link (with P2P off the fix needs P2P first: see `p2p_off`)."""
    work = _Work()
    work.prefix = "as deployed: "
    now = step_time(replace(dep, spec=None, custom_allreduce=False), table, 1, work).total
    link = "pcie" if dep.link == "p2p-off" else dep.link
    work.prefix = "fixed: "
    fixed = step_time(replace(dep, spec=None, custom_allreduce=True, link=link), table, 1, work).total
    note = ""
    if dep.link == "p2p-off":
        note = "custom all-reduce needs GPU P2P: the fixed case assumes P2P is enabled"
    if dep.layers is None:
        note = "layers unknown: the all-reduce time could not be computed"
    return _effect("custom-allreduce-disabled", now, fixed, 1.0, 1.0, work, note)


def p2p_off(dep: Deployment, table: HardwareTable) -> Effect:
    """(d) P2P off (all-reduce through host memory) -> P2P over PCIe, custom all-reduce where the engines allow it
    (they gate it off for more than two PCIe-only GPUs: vllm RFC#56128)."""
    work = _Work()
    work.prefix = "as deployed: "
    now = step_time(replace(dep, spec=None, link="p2p-off", custom_allreduce=False), table, 1, work).total
    custom = dep.tp <= 2  # with P2P back the engines re-enable it (custom all-reduce was off for want of P2P)
    work.prefix = "fixed: "
    fixed = step_time(replace(dep, spec=None, link="pcie", custom_allreduce=custom), table, 1, work).total
    return _effect(
        "nccl-no-p2p", now, fixed, 1.0, 1.0, work, "" if custom else "more than two PCIe GPUs: NCCL over P2P"
    )


def cuda_graphs(dep: Deployment, table: HardwareTable, batch: int | None = None) -> Effect:
    """(b) eager -> CUDA graphs at `batch` (default: the deployment's). The launch overhead is fixed per step
    while the GPU time grows with the batch, so the effect shrinks as the batch grows (`cuda_graphs_by_batch`)."""
    work = _Work()
    d = replace(dep, spec=None, batch=batch or dep.batch)
    work.prefix = "as deployed: "
    # eager: the longer of the GPU time and the launches (model.step_time), the least it can cost; the same basis
    # as the bound and the gap, so the effect never promises more than the bound with graphs allows
    now = step_time(replace(d, cuda_graphs=False), table, 1, work).total
    work.prefix = "fixed: "
    fixed = step_time(replace(d, cuda_graphs=True), table, 1, work).total
    note = "layers unknown: the launch overhead could not be computed" if dep.layers is None else ""
    return _effect("cuda-graphs-disabled", now, fixed, 1.0, 1.0, work, note)


def cuda_graphs_by_batch(dep: Deployment, table: HardwareTable, batches: Sequence[int]) -> dict[int, float]:
    return {b: cuda_graphs(dep, table, b).speedup for b in batches}


def cpu_offload(dep: Deployment, table: HardwareTable) -> Effect:
    """(f) weights in host memory -> on the GPU: the offloaded bytes cross PCIe in every forward pass as deployed;
    fixed, they are read from GPU memory like the rest (more GPUs, or a smaller checkpoint, to hold them)."""
    work = _Work()
    work.prefix = "as deployed: "
    now = step_time(replace(dep, spec=None), table, 1, work).total
    held = dep.weights_bytes_per_gpu
    fixed_dep = replace(
        dep,
        spec=None,
        host_bytes_per_gpu=0.0,
        weights_bytes_per_gpu=None if held is None else held + dep.host_bytes_per_gpu,
    )
    work.prefix = "fixed: "
    fixed = step_time(fixed_dep, table, 1, work).total
    return _effect("cpu-offload-or-swap", now, fixed, 1.0, 1.0, work)


@dataclass(frozen=True)
class KChoice:
    k: int
    tokens_per_step: float
    step_seconds: float
    tok_s_per_request: float
    speedup_vs_no_spec: float


@dataclass(frozen=True)
class SpecPlan:
    """Expected tokens per step and speed for every k (0 = no speculation) at the deployment's batch."""

    choices: tuple[KChoice, ...]
    best: KChoice
    current: KChoice
    effect: Effect
    positions_from: str


def spec_best_k(dep: Deployment, table: HardwareTable, k_max: int | None = None, *, overhead: bool = True) -> SpecPlan:
    """(c) τ(k) for every k from the per-position acceptance, the cost of verifying k+1 tokens for each running
    sequence (compute-bound at large batch: rejected drafts cost FLOPs) plus drafting; the best k, 0 included."""
    if dep.spec is None:
        raise ValueError("no speculative decoding in this deployment")
    positions, how = spec_positions(dep.spec)
    if positions is None:
        raise ValueError("no acceptance measured: per-position acceptance or the mean acceptance length is needed")
    k_max = min(k_max or len(positions), len(positions))
    _, base_t = spec_step(dep, table, 0, positions)
    base = 1.0 / base_t

    # the one k sweep (logdoctor.facts.speculation.sweep): the roofline's step time in plain steps, plus the per-step
    # overhead a drafted token costs beyond its bytes (speculation.with_overhead: the same cost the rules' break-even
    # uses); the bound itself (model.expected) leaves the overhead out
    def roofline(k: int) -> float:
        return spec_step(dep, table, k, positions)[1] / base_t

    # overhead=False: the bytes alone, for the bounds (the typical-acceptance bound, the gap)
    # the overhead is a time (speculation.overhead_seconds), here in plain steps of this deployment
    per_token = dep.spec.overhead_s_per_token / base_t
    cost = speculation.with_overhead(roofline, per_token) if overhead else roofline
    points = speculation.sweep(positions, cost, k_max)
    choices = [KChoice(p.k, p.tokens_per_step, p.step_cost * base_t, p.speedup * base, p.speedup) for p in points]
    top = speculation.best(points)
    best = choices[top.k]
    cur_k = min(dep.spec.k, k_max)
    current = choices[cur_k]
    work = _Work()
    work.add(
        "tokens per step and speed for each k",
        "tau(k) = 1 + sum_{i<k} r_i; S(k) = tau(k) / ((t_verify(B, k+1) + t_draft(k) + o * k) / t_step(B, 1)), "
        f"o = {dep.spec.overhead_s_per_token * 1e3:.2f} ms a drafted token"
        + ("" if overhead else " (left out: a bound)"),
        {"B": str(dep.batch), "positions": how},
        "; ".join(f"k={c.k}: tau={c.tokens_per_step:.2f} S={c.speedup_vs_no_spec:.2f}" for c in choices),
        "Leviathan et al. (https://arxiv.org/abs/2211.17192); vLLM per-position counters",
    )
    if dep.spec.k > k_max:
        work.miss(f"acceptance beyond position {k_max} (the current k={dep.spec.k} is evaluated at k={k_max})")
    effect = _effect(
        "spec-net-loss",
        current.step_seconds,
        best.step_seconds,
        current.tokens_per_step,
        best.tokens_per_step,
        work,
        "best is no speculation" if best.k == 0 else f"best k={best.k}",
    )
    return SpecPlan(tuple(choices), best, current, effect, how)


@dataclass(frozen=True)
class Concurrency:
    max_requests: float
    working: tuple[Step, ...]


def kv_concurrency(kv_tokens: float, context_tokens: float, *, spec_k: int = 0) -> Concurrency:
    """(e) requests that fit in the KV cache at once: kv_tokens / (context + draft slots) per request."""
    work = _Work()
    per_request = context_tokens + spec_k
    n = kv_tokens / per_request
    work.add(
        "KV-bound concurrency",
        "max_requests = KV_tokens / (S + k)",
        {"KV_tokens": f"{kv_tokens:.0f}", "S": f"{context_tokens:.0f}", "k": str(spec_k)},
        f"{n:.1f} requests",
        "vLLM `Maximum concurrency for N tokens per request` is the same ratio (kv_cache_utils.py)",
    )
    return Concurrency(n, tuple(work.steps))


def kv_bound_speedup(
    dep: Deployment,
    table: HardwareTable,
    kv_tokens: float,
    context_tokens: float,
    wanted: int,
    fixed_kv_tokens: float | None = None,
) -> Effect:
    """Aggregate speedup if `wanted` requests could run instead of the KV-bound number (more KV memory or a
    shorter context): each step serves more sequences while it stays bandwidth-bound. With `fixed_kv_tokens` (a
    cache of that size, e.g. at a higher memory utilization) as many of them as it holds. Here `now_tok_s` and
    `fixed_tok_s` are aggregate tok/s, not per request."""
    work = _Work()
    k = dep.spec.k if dep.spec else 0
    fits = max(1, int(kv_concurrency(kv_tokens, context_tokens, spec_k=k).max_requests))
    running = min(fits, wanted)
    target = wanted
    if fixed_kv_tokens is not None:
        target = max(running, min(wanted, int(kv_concurrency(fixed_kv_tokens, context_tokens, spec_k=k).max_requests)))
    work.prefix = "as deployed: "
    now = step_time(replace(dep, spec=None, batch=running, context_tokens=context_tokens), table, 1, work).total
    work.prefix = "fixed: "
    fixed = step_time(replace(dep, spec=None, batch=target, context_tokens=context_tokens), table, 1, work).total
    # aggregate: B / t
    return _effect(
        "kv-cache-pressure",
        now,
        fixed,
        float(running),
        float(target),
        work,
        f"{running} of {wanted} requests fit" + (f"; {target} fit fixed" if fixed_kv_tokens is not None else ""),
    )


def allreduce_cost_per_token(dep: Deployment, table: HardwareTable) -> float:
    """2 * L * α in seconds (latency only): the all-reduce time of one decode step."""
    if dep.layers is None or dep.tp <= 1:
        return 0.0
    return 2 * dep.layers * allreduce_latency_us(dep, table)[0] * 1e-6


__all__ = [
    "Concurrency",
    "Effect",
    "KChoice",
    "SpecConfig",
    "SpecPlan",
    "allreduce_cost_per_token",
    "cpu_offload",
    "cuda_graphs",
    "cuda_graphs_by_batch",
    "custom_allreduce",
    "kv_bound_speedup",
    "kv_concurrency",
    "p2p_off",
    "spec_best_k",
    "speedup_if_fixed",
]


def speedup_if_fixed(cause: str, dep: Deployment, table: HardwareTable) -> Effect | None:
    """The effect of fixing one cause (docs/causes.md id) on this deployment, or None where the model has no formula
    for it (or, for speculation, no acceptance was measured)."""
    if cause == "custom-allreduce-disabled":
        return custom_allreduce(dep, table)
    if cause in ("nccl-no-p2p", "tp-over-slow-link") and dep.link == "p2p-off":
        return p2p_off(dep, table)
    if cause == "cuda-graphs-disabled":
        return cuda_graphs(dep, table)
    if cause == "cpu-offload-or-swap" and dep.host_bytes_per_gpu:
        return cpu_offload(dep, table)
    if cause in ("spec-net-loss", "spec-low-acceptance") and dep.spec is not None:
        try:
            return spec_best_k(dep, table).effect
        except ValueError:
            return None
    return None
