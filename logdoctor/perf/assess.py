"""Expected performance in the diagnosis: the bound for this deployment, measured / expected, the effect of
each finding's fix, findings ranked by what they cost, and the gap attributed to them.

    options = perf_options(gpu="RTX A6000", hardware=())   # --gpu / --hardware (a bad file: one line, exit 2)
    findings, performance = assess(findings, profile, rules, options)
    performance.summary   # "18.2 tok/s per request, expected <= 136 on 2x RTX A6000 (13%, with speculation ...)"

The GPU is `--gpu`, else a GPU-name fact of the host (`gpu.name` from SSH host facts or pasted
`nvidia-smi` / collect_env text, or any fact named like `host.gpu_name`). Without one the section says so and
what to pass, and every finding keeps the score its rule gave it. docs/expected-performance.md has the
formulas, the healthy band and the ranking.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from logdoctor.engine.diffresult import Gap
from logdoctor.engine.problems import problem_id
from logdoctor.engine.result import (
    Finding,
    FindingEffect,
    GapShare,
    Missing,
    Performance,
)
from logdoctor.perf.adapter import FactSource
from logdoctor.perf.bound import (
    HEALTHY_HIGH,
    HEALTHY_LOW,
    band_of,
    bound_of,
    hardware_bound,
    model_inputs,
    tok,
    working_line,
)
from logdoctor.perf.fixes import _where, apply_effect, effect_for, effect_score, effect_unknown, graph_actions, rank
from logdoctor.perf.model import ModelError, SpecConfig
from logdoctor.perf.nogpu import without_gpu
from logdoctor.perf.options import PerfOptions, _fact_names, gpu_from_facts, unknown_gpu_how

if TYPE_CHECKING:
    from logdoctor.engine.rules import LoadedRule


def which_bound(p: Performance) -> str:
    """What the headline bound of a speculative deployment is: `without speculation`, `at k=2 for this drafter`,
    or `as deployed` (also for a deployment without speculation). A bound from another drafter's acceptance (the
    typical one) is never the headline."""
    hw = p.expected_hardware_tok_s
    # within rounding of as deployed (its figure comes back through the rounded ratio): as deployed
    if hw is None or p.best_k is None or hw <= _as_deployed(p) * 1.005:
        return "as deployed"
    if p.best_k == 0:
        return "without speculation"
    return f"at k={p.best_k} for this drafter"


def _as_deployed(p: Performance) -> float:
    measured = p.measured_per_request_tok_s if p.basis == "per request" else p.measured_aggregate_tok_s
    if measured is not None and p.ratio_as_deployed:
        return measured / p.ratio_as_deployed
    return (p.expected_per_request_tok_s if p.basis != "aggregate" else p.expected_aggregate_tok_s) or 0.0


def summary_line(p: Performance) -> str:
    """`18.2 tok/s per request, expected <= 28 on 2x RTX A6000 (65%)`; the expected bound alone when nothing was
    measured; empty when the bound is unknown. With speculation the bound is what this hardware could do (the best
    of no speculation, the method at a typical acceptance, and as deployed), and says which, with the bound as
    deployed beside it: `18.2 tok/s per request, expected <= 133 on 2x RTX A6000 (14%, with speculation at a
    typical acceptance length 6.3; as deployed <= 28, 65%)`."""
    if not p.known or p.expected_per_request_tok_s is None:
        return ""
    where = f"{p.gpus}x {p.gpu}" if p.gpus and p.gpus > 1 else str(p.gpu)
    which = which_bound(p)
    extra = ""
    if which != "as deployed" and p.ratio_as_deployed is not None:
        extra = f", {which}; as deployed <= {tok(_as_deployed(p))}, {p.ratio_as_deployed:.0%}"
    if p.basis == "per request" and p.measured_per_request_tok_s is not None and p.ratio is not None:
        exp = p.expected_hardware_tok_s or p.measured_per_request_tok_s / p.ratio
        return (
            f"{p.measured_per_request_tok_s:.1f} tok/s per request, expected <= {tok(exp)} on {where} "
            f"({p.ratio:.0%}{extra})"
        )
    if p.basis == "aggregate" and p.measured_aggregate_tok_s is not None and p.ratio is not None:
        # the bound itself, not measured / the rounded ratio (95 tok/s at 8% would say 1251 for a bound of 1249)
        exp = p.expected_hardware_tok_s or p.expected_aggregate_tok_s or p.measured_aggregate_tok_s / p.ratio
        return (
            f"{p.measured_aggregate_tok_s:.0f} tok/s aggregate at batch {p.batch}, expected <= "
            f"{tok(exp)} on {where} ({p.ratio:.0%}{extra})"
        )
    return f"expected <= {tok(p.expected_per_request_tok_s)} tok/s per request on {where} (nothing measured)"


# How a rule's text names a fact the log lacks (engine/evaluate.py); a rule that names the GPU (tp-over-pcie) says
# this of `gpu.name` when the GPU came from --gpu, not the log.
_GPU_NOT_IN_LOG = "GPU unknown (not in the log)"


def _with_gpu(findings: Sequence[Finding], given: str | None, name: str) -> list[Finding]:
    """The findings with a GPU the user gave (--gpu) named where a rule's text said the log does not name one."""
    if not given:
        return list(findings)
    said = f"GPU {name} (--gpu)"
    return [
        f.model_copy(update={"explanation": f.explanation.replace(_GPU_NOT_IN_LOG, said)})
        if _GPU_NOT_IN_LOG in f.explanation
        else f
        for f in findings
    ]


def assess(
    findings: Sequence[Finding],
    profile: FactSource,
    rules: Sequence[LoadedRule],
    options: PerfOptions | None = None,
    *,
    engine: str = "unknown",
) -> tuple[list[Finding], Performance]:
    """The performance section and the findings with their effects, ranked (`rank`). Where the bound cannot be
    computed the findings come back unchanged, in their order."""
    options = options or PerfOptions()
    if not options.gpu and gpu_from_facts(profile, _fact_names(profile)) is None:
        # no GPU: nothing to compute, and the table need not be read (start-up time of `diagnose FILE`)
        how = Missing(what="GPU", how=unknown_gpu_how(profile))
        return without_gpu(findings, rules, engine), Performance(known=False, unknown=[how])
    table = options.hardware()
    inputs, gpu_from = model_inputs(profile, options, table)
    unknown = [Missing(what=m.what, how=m.how) for m in inputs.unknown]
    if inputs.deployment is None:
        if gpu_from is None:
            unknown = [Missing(what="GPU", how=unknown_gpu_how(profile)), *(u for u in unknown if u.what != "GPU")]
        return list(findings), Performance(known=False, unknown=unknown, derived=list(inputs.derived))
    try:
        b = bound_of(inputs, table, profile)
    except ModelError as exc:
        unknown.append(Missing(what="expected throughput", how=str(exc)))
        return list(findings), Performance(known=False, unknown=unknown, derived=list(inputs.derived))

    effect_of = {item.id: item.rule.effect for item in rules if item.rule.effect is not None}
    measured = b.measured_per_request if b.basis == "per request" else None
    out: list[Finding] = []
    for finding in _with_gpu(findings, options.gpu, b.dep.gpu.name):
        kind = effect_of.get(finding.rule)
        computed = effect_for(kind, b.compare, table, profile, engine, options.seen) if kind else None
        if kind is None or computed is None:
            why = effect_unknown(kind, b.compare, profile) if kind else None
            if why is not None:
                said = f"unknown by the model on {_where(b.compare)}: {why}"
                finding = finding.model_copy(
                    update={"estimate": f"{finding.estimate}; {said}" if finding.estimate else said}
                )
            out.append(finding)
            continue
        if kind == "cuda-graphs" and not computed.actions:
            computed = replace(computed, actions=graph_actions(computed.effect, finding.fix))
        applied = apply_effect(finding, computed, measured, b.compare)
        assert applied.effect is not None
        applied = applied.model_copy(update={"effect": applied.effect.model_copy(update={"kind": kind})})
        out.append(applied)
    ranked = rank(out) if any(f.effect for f in out) else out

    # One share a problem (engine/problems.py): the largest per-request effect among its findings, the one its box
    # shows. `explained` is the product of the shares, and the gap is that over measured / expected as deployed, so
    # the summary, each finding, --explain and the JSON carry the same numbers and the rest is said as the rest.
    best: dict[str, tuple[Finding, FindingEffect]] = {}
    for f in ranked:
        if f.effect is None or f.effect.basis != "per request":
            continue
        pid = problem_id(f.cause)
        if pid not in best or f.effect.speedup > best[pid][1].speedup:
            best[pid] = (f, f.effect)
    shares = [
        GapShare(rule=f.rule, cause=f.cause, speedup=effect.speedup, problem=pid) for pid, (f, effect) in best.items()
    ]
    explained: float | None = None
    gap: float | None = None
    if shares:
        explained = math.prod(share.speedup for share in shares)
        if b.ratio is not None and b.basis == "per request":
            gap = explained / b.ratio
    at = b.at_batch
    hw = hardware_bound(b, table, profile)
    measured_value = b.measured_per_request if b.basis == "per request" else b.measured_aggregate
    ratio = b.ratio
    if measured_value is not None and b.basis is not None and hw.no_spec is not None:
        ratio = measured_value / hw.best  # what this hardware could do, not only this deployment as configured
    perf = Performance(
        known=True,
        gpu=b.dep.gpu.name,
        gpus=b.dep.gpus,
        tp=b.dep.tp,
        batch=b.dep.batch,
        bound=at.bound,
        expected_per_request_tok_s=round(at.per_request_tok_s, 2),
        expected_aggregate_tok_s=round(at.aggregate_tok_s, 2),
        expected_single_request_tok_s=round(b.single.per_request_tok_s, 2),
        tokens_per_step=round(at.tokens_per_step, 3),
        step_ms=round(at.step_seconds * 1e3, 3),
        measured_per_request_tok_s=b.measured_per_request,
        measured_aggregate_tok_s=b.measured_aggregate,
        ratio=round(ratio, 3) if ratio is not None else None,
        basis="per request" if b.basis == "per request" else ("aggregate" if b.basis else None),
        band=band_of(ratio),  # type: ignore[arg-type]
        expected_no_spec_tok_s=_r2(hw.no_spec),
        expected_typical_spec_tok_s=_r2(hw.typical),
        typical_acceptance=hw.typical_tau,
        typical_k=hw.typical_k,
        typical_source=hw.typical_source,
        expected_hardware_tok_s=_r2(hw.best) if hw.no_spec is not None else None,
        best_k=hw.best_k,
        ratio_as_deployed=round(b.ratio, 4) if b.ratio is not None else None,
        working=[working_line(s) for s in at.working],
        derived=list(inputs.derived),
        unknown=[*unknown, *(_missing(u) for u in at.unknown if _new(u, unknown))],
        gap=round(gap, 3) if gap is not None else None,
        explained=round(explained, 3) if explained is not None else None,
        shares=shares,
    )
    return ranked, perf.model_copy(update={"summary": summary_line(perf)})


def _side_bound(p: Performance | None, per_request: bool) -> float | None:
    if p is None or not p.known:
        return None
    if not per_request:
        return p.expected_aggregate_tok_s
    if p.basis == "per request" and p.expected_single_request_tok_s is not None:
        return p.expected_single_request_tok_s  # per-request intervals: one running request
    return p.expected_per_request_tok_s


def model_gap(gap: Gap | None, baseline: Performance | None, candidate: Performance | None) -> Gap | None:
    """`logdoctor diff`: the part of the measured gap that the two deployments' bounds account for (their settings
    on their hardware), and the rest (how close each side runs to its own bound)."""
    if gap is None:
        return None
    per_request = gap.key == "decode_tok_s_per_request"
    base, cand = _side_bound(baseline, per_request), _side_bound(candidate, per_request)
    if not base or not cand:
        return gap
    expected_ratio = base / cand
    words = "per request" if per_request else "aggregate"
    rest = gap.ratio / expected_ratio
    summary = (
        f"bounds as deployed: baseline {base:.1f}, candidate {cand:.1f} tok/s {words} ({expected_ratio:.2f}x); "
        f"measured at {gap.baseline / base:.0%} and {gap.candidate / cand:.0%} of them ({rest:.2f}x)"
    )
    return gap.model_copy(update={"expected_ratio": round(expected_ratio, 4), "expected_summary": summary})


def _missing(text: str) -> Missing:
    """`what: how` from one of the model's unknown lines."""
    what, _, how = text.partition(": ")
    return Missing(what=what, how=how or text)


def _r2(x: float | None) -> float | None:
    return None if x is None else round(x, 2)


def _new(text: str, unknown: Sequence[Missing]) -> bool:
    head = text.split(" (")[0].split(":")[0].lower()
    return not any(head.startswith(u.what.lower()) or u.what.lower().startswith(head) for u in unknown)


__all__ = [
    "HEALTHY_HIGH",
    "HEALTHY_LOW",
    "SpecConfig",
    "assess",
    "effect_score",
    "model_gap",
    "rank",
    "summary_line",
]
