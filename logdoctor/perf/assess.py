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

import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from logdoctor.engine.diffresult import Gap
from logdoctor.engine.result import (
    SEVERITY_ORDER,
    Finding,
    FindingEffect,
    GapShare,
    Missing,
    Performance,
    severity_for,
)
from logdoctor.facts import speculation
from logdoctor.perf import effects
from logdoctor.perf.adapter import FactSource, Inputs, deployment_from_profile
from logdoctor.perf.hardware import HardwareTable, ModelShape
from logdoctor.perf.model import Deployment, Expected, ModelError, SpecConfig, Step, draft_cost, expected
from logdoctor.perf.options import UNKNOWN_GPU_HOW, PerfOptions, _fact_names, gpu_from_facts

if TYPE_CHECKING:
    from logdoctor.engine.rules import LoadedRule

# Where healthy runs land against the bound (docs/expected-performance.md, "Checks"): published healthy runs
# at 0.57-0.86, real engines at ~0.64 (vLLM PR#16937). Below HEALTHY_LOW is far below: not healthy.
HEALTHY_LOW = 0.5
HEALTHY_HIGH = 0.9
# A fix that recovers this share of decode time scores 50 (material): score = 100 * p / (p + HALF_SCORE_SHARE).
# 10% is where the rules' own impacts put "material" (custom-allreduce-off scores 60 for "typically 5-20% of
# decode time"), so an effect and a rule score mean about the same on one scale.
HALF_SCORE_SHARE = 0.1
# Fewer intervals with one running request than this, beside aggregate intervals, are not a per-request
# measurement (the tail of a batch draining): the aggregate is compared instead.
MIN_PER_REQUEST_INTERVALS = 3


def _median(value: Any) -> float | None:
    if isinstance(value, list):
        nums = [float(v) for v in value if isinstance(v, int | float) and not isinstance(v, bool)]
        return statistics.median(nums) if nums else None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _median_positive(value: Any) -> float | None:
    if isinstance(value, list):
        return _median([v for v in value if isinstance(v, int | float) and not isinstance(v, bool) and v > 0])
    return _median(value)


def _short(step: Step) -> str:
    """One line of the working: `what = result (formula)`."""
    return f"{step.what}: {step.result} ({step.formula})"


# --- the bound -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Bound:
    dep: Deployment  # at the measured batch
    at_batch: Expected
    single: Expected  # at batch 1
    basis: str | None  # "per request" / "aggregate"
    ratio: float | None
    measured_per_request: float | None
    measured_aggregate: float | None
    compare: Deployment  # the deployment the measurement is compared against (batch 1 for per-request intervals)


def _inputs(profile: FactSource, options: PerfOptions, table: HardwareTable) -> tuple[Inputs, str | None]:
    names = _fact_names(profile)
    found = (options.gpu, "--gpu") if options.gpu else gpu_from_facts(profile, names)
    gpu = found[0] if found else None
    model = str(profile.value("model") or "")
    shape = shape_from_facts(profile) or (table.model_shape(model) if model else None)
    tp = int(_median(profile.value("parallel.tp")) or 1)
    inputs = deployment_from_profile(
        profile,
        gpu=gpu,
        table=table,
        layers=shape[1].layers if shape else None,
        hidden_size=shape[1].hidden_size if shape else None,
        # the input embedding is stored in 16 bits even in quantised checkpoints
        unread_bytes_per_gpu=shape[1].unread_bytes_per_gpu(tp, 2.0) if shape else 0.0,
        lm_head_bytes_per_gpu=shape[1].lm_head_bytes_per_gpu(tp) if shape else None,
        vocab_size=shape[1].vocab_size if shape else None,
    )
    if shape is not None:
        inputs.derived.append(f"model shape: {shape[0]} ({shape[1].layers} layers, h={shape[1].hidden_size})")
    if found is not None and found[1] != "--gpu":
        inputs.derived = [d.replace("(--gpu)", f"({found[1]})") for d in inputs.derived]
    return inputs, found[1] if found else None


def shape_from_facts(profile: FactSource) -> tuple[str, ModelShape] | None:
    """The model's shape from its config.json given beside the log (`model.layers`, ... from
    logdoctor/inputs/modelconfig), which wins over the built-in `models:` table: (where it was read, the shape)."""
    layers, hidden = profile.value("model.layers"), profile.value("model.hidden_size")
    if not isinstance(layers, int | float) or not isinstance(hidden, int | float) or layers < 1 or hidden < 1:
        return None
    vocab = profile.value("model.vocab_size")
    tied = profile.value("model.tied_embeddings")
    where = str(profile.value("model.config_source") or "the model's config.json")
    shape = ModelShape(
        layers=int(layers),
        hidden_size=int(hidden),
        vocab_size=int(vocab) if isinstance(vocab, int | float) and vocab >= 1 else None,
        tied_embeddings=tied is not False,
        source=where,
    )
    return where, shape


def _bound(inputs: Inputs, table: HardwareTable, profile: FactSource) -> _Bound:
    dep = inputs.deployment
    assert dep is not None
    at_batch = expected(dep, table)
    single_dep = replace(dep, batch=1)
    single = expected(single_dep, table) if dep.batch != 1 else at_batch
    per_request, aggregate = inputs.measured_per_request, inputs.measured_aggregate
    basis: str | None = None
    ratio: float | None = None
    compare = dep
    intervals = profile.value("throughput.per_request")
    from_intervals = isinstance(intervals, list) and bool(intervals)
    if from_intervals and len(intervals) < MIN_PER_REQUEST_INTERVALS and aggregate is not None:
        per_request = None  # one or two such intervals are a batch draining, not a steady single request
    if per_request is not None:
        # `throughput.per_request` comes from intervals with one running request; a pasted benchmark's
        # per-request rate from its own concurrency
        compare = single_dep if from_intervals else dep
        ratio = per_request / (single if from_intervals else at_batch).per_request_tok_s
        basis = "per request"
    elif aggregate is not None:
        ratio = aggregate / at_batch.aggregate_tok_s
        basis = "aggregate"
    return _Bound(dep, at_batch, single, basis, ratio, per_request, aggregate, compare)


@dataclass(frozen=True)
class _Hardware:
    """What this hardware could do for the model, on the basis of the comparison (per request at the compared
    batch, or aggregate at the measured batch): without speculation, with the method in use at its published
    typical acceptance (at the best k for it), and as deployed."""

    no_spec: float | None
    typical: float | None
    typical_tau: float | None
    typical_k: int | None
    typical_source: str | None
    as_deployed: float

    @property
    def best(self) -> float:
        return max(x for x in (self.no_spec, self.typical, self.as_deployed) if x is not None)


def _hardware(b: _Bound, table: HardwareTable) -> _Hardware:
    aggregate = b.basis == "aggregate"
    dep = b.dep if aggregate else b.compare
    scale = float(dep.batch) if aggregate else 1.0
    as_deployed = (b.at_batch if aggregate else expected(dep, table)).per_request_tok_s * scale
    spec = dep.spec
    if spec is None or spec.k <= 0:
        return _Hardware(None, None, None, None, None, as_deployed)
    no_spec = expected(replace(dep, spec=None), table).per_request_tok_s * scale
    typical = speculation.TYPICAL_ACCEPTANCE.get(spec.method)
    if typical is None:
        return _Hardware(no_spec, None, None, None, None, as_deployed)
    positions = speculation.iid_positions(typical.tau, typical.k)
    at_typical = replace(
        dep, spec=replace(spec, k=typical.k, position_acceptance=positions, mean_acceptance_length=typical.tau)
    )
    plan = effects.spec_best_k(at_typical, table, overhead=False)  # a bound: the bytes alone
    return _Hardware(
        no_spec,
        plan.best.tok_s_per_request * scale,
        typical.tau,
        plan.best.k,
        typical.source,
        as_deployed,
    )


def _band(ratio: float | None) -> str | None:
    if ratio is None:
        return None
    if ratio > 1.0:
        return "above-bound"
    return "healthy" if ratio >= HEALTHY_LOW else "below"


# --- effects ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Computed:
    effect: effects.Effect
    basis: str
    firm: bool
    formula: str
    fixed: Deployment | None  # the deployment with this fix applied (for the combined speedup)
    fix_line: str | None = None
    method: str | None = None  # speculative method in use (spec-k)


def _spec_fix(engine: str, dep: Deployment, plan: effects.SpecPlan, gpu: str) -> str:
    spec = dep.spec
    assert spec is not None
    where = f"at batch {dep.batch} on {dep.tp}x {gpu}" if dep.tp > 1 else f"at batch {dep.batch} on {gpu}"
    best, cur = plan.best, plan.current
    gain = f"{best.tok_s_per_request / cur.tok_s_per_request:.2f}x the current k={spec.k}"
    if best.k == 0:
        flag = "drop --speculative-config" if engine != "sglang" else "drop --speculative-algorithm"
        return f"by the model: {flag} ({gain}: no k beats plain decode {where})"
    if engine == "sglang":
        flag = f"--speculative-num-steps {best.k} --speculative-num-draft-tokens {best.k + 1}"
    else:
        flag = f'--speculative-config \'{{"method": "{spec.method}", "num_speculative_tokens": {best.k}}}\''
    return (
        f"by the model: {flag} (expected {best.tokens_per_step:.2f} tokens a step, "
        f"{best.speedup_vs_no_spec:.2f}x plain decode, {gain}, {where})"
    )


def _effect_for(kind: str, dep: Deployment, table: HardwareTable, profile: FactSource, engine: str) -> _Computed | None:
    """The effect of one fix on `dep`, or None where the model lacks what that formula needs."""
    needs_layers = kind in ("custom-allreduce", "p2p", "cuda-graphs")
    if needs_layers and dep.layers is None:
        return None
    if kind == "custom-allreduce":
        if dep.tp <= 1 or dep.custom_allreduce is not False:
            return None
        eff = effects.custom_allreduce(dep, table)
        link = "pcie" if dep.link == "p2p-off" else dep.link
        return _Computed(
            eff,
            "per request",
            dep.link != "unknown",
            "2 * L * (alpha_NCCL - alpha_custom) per step",
            replace(dep, custom_allreduce=True, link=link),
        )
    if kind == "p2p":
        if dep.tp <= 1 or dep.link != "p2p-off":
            return None
        eff = effects.p2p_off(dep, table)
        return _Computed(
            eff,
            "per request",
            True,
            "2 * L * (alpha_host - alpha_P2P) per step",
            replace(dep, link="pcie", custom_allreduce=dep.tp <= 2),
        )
    if kind == "cuda-graphs":
        # eager vs graph replay at this batch: graphs off, or on but this batch above the captured sizes
        eff = effects.cuda_graphs(dep, table)
        # the launch time is the least the microbenchmark host's CPU took (hardware.yaml): another host launches
        # faster or slower, so the effect may only raise the rule's score
        return _Computed(
            eff, "per request", False, "L * eager overhead per layer, fixed per step", replace(dep, cuda_graphs=True)
        )
    if kind == "spec-k":
        if dep.spec is None:
            return None
        try:
            plan = effects.spec_best_k(dep, table)
        except ValueError:
            return None
        assumed = draft_cost(dep).assumed
        # the gap compares bounds, which leave the per-step overhead out: its fixed case is the k best by the bytes
        best_k = effects.spec_best_k(dep, table, overhead=False).best.k
        fixed = replace(dep, spec=None) if best_k == 0 else replace(dep, spec=replace(dep.spec, k=best_k))
        return _Computed(
            plan.effect,
            "per request",
            not assumed and dep.spec.position_acceptance is not None,
            "tau(k) / (t_verify(B, k+1) + t_draft(k) + overhead(k)) at the best k vs the current k",
            fixed,
            _spec_fix(engine, dep, plan, dep.gpu.name),
            dep.spec.method,
        )
    if kind == "cpu-offload":
        if not dep.host_bytes_per_gpu:
            return None
        eff = effects.cpu_offload(dep, table)
        fixed_weights = (
            None if dep.weights_bytes_per_gpu is None else dep.weights_bytes_per_gpu + dep.host_bytes_per_gpu
        )
        return _Computed(
            eff,
            "per request",
            True,
            "offloaded bytes / BW_PCIe per step, read from GPU memory once fixed",
            replace(dep, host_bytes_per_gpu=0.0, weights_bytes_per_gpu=fixed_weights),
        )
    if kind == "kv-concurrency":
        kv_tokens = _median(profile.value("kv.tokens"))
        # the queue while there was one: median waiting over intervals with requests waiting
        waiting = _median_positive(profile.value("sched.waiting"))
        if kv_tokens is None or dep.context_tokens is None or not waiting:
            return None
        wanted = dep.batch + round(waiting)
        eff = effects.kv_bound_speedup(dep, table, kv_tokens, dep.context_tokens, wanted)
        # medians of series the facts do not pair per interval: rough, so it may only raise the rule's score
        return _Computed(eff, "aggregate", False, "B_wanted / t(B_wanted) vs B_fit / t(B_fit), aggregate", None)
    return None


def effect_score(speedup: float) -> int:
    """0-100 from the share of decode time a fix recovers, p = 1 - 1/speedup: 50 at 10% (1.11x), 75 at 30% (1.43x),
    83 at 2x, 89 at 5x."""
    p = max(0.0, 1.0 - 1.0 / speedup) if speedup > 0 else 0.0
    return max(1, min(100, round(100 * p / (p + HALF_SCORE_SHARE))))


def _apply(finding: Finding, computed: _Computed, measured: float | None) -> Finding:
    eff = computed.effect
    base = measured if measured is not None else eff.now_tok_s
    recovered = base * (eff.speedup - 1.0)
    escore = effect_score(eff.speedup)
    score = escore if computed.firm else max(finding.score, escore)
    lost = 1.0 - 1.0 / eff.speedup if eff.speedup > 0 else 0.0
    how = "replaces" if computed.firm else "may only raise (an input was assumed)"
    working = (
        f"{finding.working}; effect by the model: {eff.speedup:.3f}x ({lost:.1%} of decode time) -> "
        f"effect score {escore}, which {how} the rule's {finding.score} = {score}"
    )
    fix = finding.fix
    if computed.fix_line is not None:
        fix = [computed.fix_line, *(step for step in finding.fix if not _sets_k(step, computed.method))]
    return finding.model_copy(
        update={
            "score": score,
            "severity": severity_for(score),
            "working": working,
            "fix": fix,
            "effect": FindingEffect(
                kind="",  # set by the caller (the rule's effect name)
                speedup=round(eff.speedup, 4),
                basis="aggregate" if computed.basis == "aggregate" else "per request",
                expected_now_tok_s=round(eff.now_tok_s, 2),
                expected_fixed_tok_s=round(eff.fixed_tok_s, 2),
                tok_s_recovered=round(recovered, 2),
                formula=computed.formula,
                working=[_short(s) for s in eff.working],
                firm=computed.firm,
                rule_score=finding.score,
                note=eff.note,
            ),
        }
    )


_K_FLAG = re.compile(r"num_speculative_tokens|--speculative-num-draft-tokens|--speculative-num-steps")
_METHOD = re.compile(r'"method":\s*"([^"]+)"')


def _sets_k(step: str, method: str | None) -> bool:
    """A rule's fix that sets k for the method in use: the model's best k replaces it (a fix that switches the
    method, such as to the model's own MTP head, stays)."""
    if not _K_FLAG.search(step):
        return False
    named = _METHOD.search(step)
    return named is None or named.group(1) in (method, "...")


def rank(findings: Sequence[Finding]) -> list[Finding]:
    """By score, where a finding with an effect scores by what its fix recovers (`effect_score`, monotone in the
    speedup, so those rank by tok/s recovered among themselves) and one without keeps its rule's score: both
    stay in one list on one scale, and no finding is dropped. Ties: tok/s recovered, then the rule's own score (two
    findings whose fixes share one effect, such as the speculation rules' spec-k, rank as their rules found them),
    then severity and ids."""
    return sorted(
        findings,
        key=lambda f: (
            -f.score,
            -(f.effect.tok_s_recovered if f.effect else 0.0),
            -(f.effect.rule_score if f.effect else f.score),
            -SEVERITY_ORDER[f.severity],
            f.cause,
            f.rule,
        ),
    )


# --- the section -----------------------------------------------------------------------------------


def _tok(x: float) -> str:
    return f"{x:.0f}" if x >= 10 else f"{x:.1f}"


def which_bound(p: Performance) -> str:
    """What the hardware bound of a speculative deployment is: `with speculation at a typical acceptance length
    6.3`, `without speculation`, or `as deployed` (also for a deployment without speculation)."""
    hw = p.expected_hardware_tok_s
    if hw is None:
        return "as deployed"
    if (
        p.expected_typical_spec_tok_s is not None
        and hw == p.expected_typical_spec_tok_s
        and (p.expected_no_spec_tok_s is None or hw > p.expected_no_spec_tok_s)
    ):
        return f"with speculation at a typical acceptance length {p.typical_acceptance:g}"
    if p.expected_no_spec_tok_s is not None and hw == p.expected_no_spec_tok_s and hw > _as_deployed(p):
        return "without speculation"
    return "as deployed"


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
        extra = f", {which}; as deployed <= {_tok(_as_deployed(p))}, {p.ratio_as_deployed:.0%}"
    if p.basis == "per request" and p.measured_per_request_tok_s is not None and p.ratio is not None:
        exp = p.expected_hardware_tok_s or p.measured_per_request_tok_s / p.ratio
        return (
            f"{p.measured_per_request_tok_s:.1f} tok/s per request, expected <= {_tok(exp)} on {where} "
            f"({p.ratio:.0%}{extra})"
        )
    if p.basis == "aggregate" and p.measured_aggregate_tok_s is not None and p.ratio is not None:
        exp = p.expected_hardware_tok_s or p.measured_aggregate_tok_s / p.ratio
        return (
            f"{p.measured_aggregate_tok_s:.0f} tok/s aggregate at batch {p.batch}, expected <= "
            f"{_tok(exp)} on {where} ({p.ratio:.0%}{extra})"
        )
    return f"expected <= {_tok(p.expected_per_request_tok_s)} tok/s per request on {where} (nothing measured)"


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
        how = Missing(what="GPU", how=UNKNOWN_GPU_HOW)
        return list(findings), Performance(known=False, unknown=[how])
    table = options.hardware()
    inputs, gpu_from = _inputs(profile, options, table)
    unknown = [Missing(what=m.what, how=m.how) for m in inputs.unknown]
    if inputs.deployment is None:
        if gpu_from is None:
            unknown = [Missing(what="GPU", how=UNKNOWN_GPU_HOW), *(u for u in unknown if u.what != "GPU")]
        return list(findings), Performance(known=False, unknown=unknown, derived=list(inputs.derived))
    try:
        b = _bound(inputs, table, profile)
    except ModelError as exc:
        unknown.append(Missing(what="expected throughput", how=str(exc)))
        return list(findings), Performance(known=False, unknown=unknown, derived=list(inputs.derived))

    effect_of = {item.id: item.rule.effect for item in rules if item.rule.effect is not None}
    measured = b.measured_per_request if b.basis == "per request" else None
    out: list[Finding] = []
    fixes: dict[str, _Computed] = {}
    shares: list[GapShare] = []
    share_kinds: list[str] = []
    for finding in findings:
        kind = effect_of.get(finding.rule)
        computed = _effect_for(kind, b.compare, table, profile, engine) if kind else None
        if kind is None or computed is None:
            out.append(finding)
            continue
        applied = _apply(finding, computed, measured)
        assert applied.effect is not None
        applied = applied.model_copy(update={"effect": applied.effect.model_copy(update={"kind": kind})})
        out.append(applied)
        if computed.basis == "per request" and kind not in fixes:
            fixes[kind] = computed
            shares.append(GapShare(rule=finding.rule, cause=finding.cause, speedup=round(computed.effect.speedup, 4)))
            share_kinds.append(kind)
    ranked = rank(out) if fixes or any(f.effect for f in out) else out

    explained: float | None = None
    gap: float | None = None
    if fixes:
        fixed = b.compare
        for name in ("p2p", "custom-allreduce", "cuda-graphs", "cpu-offload", "spec-k"):
            c = fixes.get(name)
            if c is None or c.fixed is None:
                continue
            fixed = _merge(fixed, c.fixed, name)
        now = expected(b.compare, table).per_request_tok_s
        explained = expected(fixed, table).per_request_tok_s / now
        # each share on the gap's own basis, the bound, so the shares and `explained` agree: a finding's effect
        # may count more (the spec-k effect counts the per-step overhead of drafted tokens, which bounds leave out)
        for i, (share, share_kind) in enumerate(zip(shares, share_kinds, strict=True)):
            c = fixes[share_kind]
            if c.fixed is not None:
                alone = expected(_merge(b.compare, c.fixed, share_kind), table).per_request_tok_s / now
                shares[i] = share.model_copy(update={"speedup": round(alone, 4)})
        if b.ratio is not None and b.basis == "per request":
            gap = explained / b.ratio
    at = b.at_batch
    hw = _hardware(b, table)
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
        band=_band(ratio),  # type: ignore[arg-type]
        expected_no_spec_tok_s=_r2(hw.no_spec),
        expected_typical_spec_tok_s=_r2(hw.typical),
        typical_acceptance=hw.typical_tau,
        typical_k=hw.typical_k,
        typical_source=hw.typical_source,
        expected_hardware_tok_s=_r2(hw.best) if hw.no_spec is not None else None,
        ratio_as_deployed=round(b.ratio, 3) if b.ratio is not None else None,
        working=[_short(s) for s in at.working],
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
        f"by the model, the deployments' settings explain {expected_ratio:.2f}x of {gap.ratio:.2f}x (bounds "
        f"{base:.1f} vs {cand:.1f} tok/s {words}); the other {rest:.2f}x is how close each runs to its bound "
        f"(baseline {gap.baseline / base:.0%}, candidate {gap.candidate / cand:.0%})"
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


def _merge(into: Deployment, fixed: Deployment, kind: str) -> Deployment:
    """Apply one fix's change to a deployment that may already carry others."""
    if kind == "p2p":
        return replace(into, link=fixed.link, custom_allreduce=fixed.custom_allreduce)
    if kind == "custom-allreduce":
        return replace(into, custom_allreduce=True, link="pcie" if into.link == "p2p-off" else into.link)
    if kind == "cuda-graphs":
        return replace(into, cuda_graphs=True)
    if kind == "spec-k":
        return replace(into, spec=fixed.spec)
    if kind == "cpu-offload":
        return replace(into, host_bytes_per_gpu=0.0, weights_bytes_per_gpu=fixed.weights_bytes_per_gpu)
    return into


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
