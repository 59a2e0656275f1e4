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
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from logdoctor.engine.diffresult import Gap
from logdoctor.engine.problems import answered_by_model, problem_id, sets_speculation
from logdoctor.engine.result import (
    SEVERITY_ORDER,
    Action,
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
from logdoctor.perf.mtp import is_mtp, mtp_acceptance, mtp_head
from logdoctor.perf.nogpu import drop_flag as _drop_flag
from logdoctor.perf.nogpu import without_gpu
from logdoctor.perf.options import PerfOptions, _fact_names, gpu_from_facts, unknown_gpu_how

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
    """What this hardware could do for the model with this deployment's drafter and acceptance, on the basis of
    the comparison (per request at the compared batch, or aggregate at the measured batch): without speculation,
    at the best k for this drafter, and as deployed; and, beside them and never the headline, the method at its
    published typical acceptance (another drafter's measurement)."""

    no_spec: float | None
    best_k: int | None  # the k this drafter does best at (0: without speculation)
    best_same: float | None  # at that k
    typical: float | None
    typical_tau: float | None
    typical_k: int | None
    typical_source: str | None
    as_deployed: float

    @property
    def best(self) -> float:
        return max(x for x in (self.no_spec, self.best_same, self.as_deployed) if x is not None)


def _hardware(b: _Bound, table: HardwareTable, profile: FactSource) -> _Hardware:
    aggregate = b.basis == "aggregate"
    dep = b.dep if aggregate else b.compare
    scale = float(dep.batch) if aggregate else 1.0
    as_deployed = (b.at_batch if aggregate else expected(dep, table)).per_request_tok_s * scale
    spec = dep.spec
    if spec is None or spec.k <= 0:
        return _Hardware(None, None, None, None, None, None, None, as_deployed)
    no_spec = expected(replace(dep, spec=None), table).per_request_tok_s * scale
    best_k: int | None = None
    best_same: float | None = None
    try:
        plan = effects.spec_best_k(dep, table)
        best_k, best_same = plan.best.k, plan.best.tok_s_per_request * scale
    except ValueError:
        pass
    # an MTP head at its own family's published acceptance (Qwen's for Qwen), another method at its own
    typical = mtp_acceptance(profile)[0] if is_mtp(spec.method) else speculation.TYPICAL_ACCEPTANCE.get(spec.method)
    if typical is None:
        return _Hardware(no_spec, best_k, best_same, None, None, None, None, as_deployed)
    positions = speculation.iid_positions(typical.tau, typical.k)
    at_typical = replace(
        dep, spec=replace(spec, k=typical.k, position_acceptance=positions, mean_acceptance_length=typical.tau)
    )
    at = effects.spec_best_k(at_typical, table)
    return _Hardware(
        no_spec,
        best_k,
        best_same,
        at.best.tok_s_per_request * scale,
        typical.tau,
        at.best.k,
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
    actions: tuple[Action, ...] = ()  # the model's choices, best first (spec-k)
    spec: _SpecChoices | None = None


def _k_flag(engine: str, method: str, k: int) -> str:
    if engine == "sglang":
        return f"--speculative-num-steps {k} --speculative-eagle-topk 1 --speculative-num-draft-tokens {k + 1}"
    return f'--speculative-config \'{{"method": "{method}", "num_speculative_tokens": {k}}}\''


def _mtp_flag(engine: str, k: int, model: str) -> str:
    if engine == "sglang":
        path = f" --speculative-draft-model-path {model}" if model else ""
        return (
            f"--speculative-algorithm EAGLE{path} --speculative-num-steps {k} --speculative-eagle-topk 1 "
            f"--speculative-num-draft-tokens {k + 1}"
        )
    return _k_flag(engine, "mtp", k)


@dataclass(frozen=True)
class _SpecChoices:
    actions: list[Action]
    now: float  # as deployed, tok/s per request by the model
    plain: float  # without speculation
    fixed: Deployment  # the deployment with the recommended action applied
    k: int = 0  # as deployed
    tokens_per_step: float = 1.0  # as deployed, by the measured acceptance
    break_even_assumed: float | None = None  # the rules' spec.break_even (no GPU: 0.2 plain steps a drafted token)


def _spec_choices(
    engine: str, dep: Deployment, plan: effects.SpecPlan, table: HardwareTable, profile: FactSource
) -> _SpecChoices:
    """The fixes of a speculation problem, each with its expected tok/s per request on this hardware, best first:
    another k for this drafter (never the k already set), no speculation, and the model's own MTP head where the log
    says it has one (at the published typical acceptance of MTP heads). Only those the model expects to beat the
    deployment as it is."""
    spec = dep.spec
    assert spec is not None
    now = plan.current.tok_s_per_request
    plain = plan.choices[0].tok_s_per_request
    options: list[tuple[Action, Deployment]] = []
    others = [c for c in plan.choices if c.k >= 1 and c.k != spec.k]
    if others:
        best_k = max(others, key=lambda c: c.tok_s_per_request)
        options.append(
            (
                Action(
                    text=_k_flag(engine, spec.method, best_k.k),
                    expected_tok_s=round(best_k.tok_s_per_request, 2),
                    speedup=round(best_k.tok_s_per_request / now, 4),
                    note=f"k={best_k.k} for this drafter: {best_k.tokens_per_step:.2f} tokens a step by its "
                    f"measured per-position acceptance (now k={spec.k})",
                ),
                replace(dep, spec=replace(spec, k=best_k.k)),
            )
        )
    options.append(
        (
            Action(
                text=_drop_flag(engine),
                expected_tok_s=round(plain, 2),
                speedup=round(plain / now, 4),
                note="plain decode: no drafting or verification cost",
            ),
            replace(dep, spec=None),
        )
    )
    head = mtp_head(profile) if not is_mtp(spec.method) else None
    typical, family = mtp_acceptance(profile)
    if head is not None and dep.layers is not None:
        positions = speculation.iid_positions(typical.tau, typical.k)
        mtp_spec = SpecConfig(
            k=typical.k,
            method="mtp",
            position_acceptance=positions,
            mean_acceptance_length=typical.tau,
            overhead_s_per_token=spec.overhead_s_per_token,
        )
        mtp_dep = replace(dep, spec=mtp_spec)
        try:
            mtp_plan = effects.spec_best_k(mtp_dep, table)
        except ValueError:
            mtp_plan = None
        if mtp_plan is not None:
            best = max((c for c in mtp_plan.choices if c.k >= 1), key=lambda c: c.tok_s_per_request)
            options.append(
                (
                    Action(
                        text=_mtp_flag(engine, best.k, str(profile.value("model") or "")),
                        expected_tok_s=round(best.tok_s_per_request, 2),
                        speedup=round(best.tok_s_per_request / now, 4),
                        note=f"the model's own MTP head ({head}), at the typical acceptance length "
                        f"{typical.tau:g} at k={typical.k} of {family}",
                        source=typical.source,
                    ),
                    replace(mtp_dep, spec=replace(mtp_spec, k=best.k)),
                )
            )
    better = sorted((o for o in options if (o[0].speedup or 0.0) > 1.0), key=lambda o: -(o[0].expected_tok_s or 0.0))
    assumed = profile.value("spec.break_even")
    rule = float(assumed) if isinstance(assumed, int | float) else None
    actions = [a for a, _ in better]
    fixed = better[0][1] if better else dep
    return _SpecChoices(actions, now, plain, fixed, plan.current.k, plan.current.tokens_per_step, rule)


def _spec_statement(choices: _SpecChoices, measured: float | None, where: str) -> str:
    """Speculation as deployed against plain decode, a loss read as a loss."""
    ratio = choices.now / choices.plain if choices.plain else 1.0
    seen = f"{measured:.1f} tok/s per request measured, " if measured is not None else ""
    words = f"runs at {ratio:.2f}x of plain decode" if ratio < 1 else f"gives {ratio:.2f}x plain decode"
    out = (
        f"speculation as deployed {words}: {seen}{_tok1(choices.now)} expected as deployed, {_tok1(choices.plain)} "
        f"expected without speculation, tok/s per request on {where}"
    )
    # the step in plain steps is the acceptance length that breaks even on this hardware; the rules' figure, made
    # without the GPU, is said beside it where it differs, so the two are not read as one disagreeing with the other
    cost = choices.tokens_per_step * choices.plain / choices.now if choices.now else None
    if cost is not None and choices.k >= 1:
        out += f"; a step with k={choices.k} costs {cost:.2f} plain decode steps here, the acceptance length that breaks even"
        rule = choices.break_even_assumed
        if rule is not None and abs(rule - cost) >= 0.05 * cost:
            out += f" (the {rule:.1f} above assumes 0.2 plain steps a drafted token, as on small models on fast GPUs)"
    if choices.actions:
        best = choices.actions[0]
        out += f"; recommended: {best.text} ({_tok1(best.expected_tok_s or 0.0)} tok/s, {best.speedup:.2f}x)"
    return out


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
            actions=_link_actions(eff, str(profile.value("allreduce.reason") or ""), dep),
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
            actions=_link_actions(eff, "host-memory", dep),
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
        choices = _spec_choices(engine, dep, plan, table, profile)
        recommended = choices.actions[0] if choices.actions else None
        fixed_tps = recommended.expected_tok_s if recommended and recommended.expected_tok_s else choices.now
        eff = effects.Effect(
            "spec-net-loss",
            fixed_tps / choices.now,
            choices.now,
            fixed_tps,
            plan.effect.working,
            "as deployed is the best the model finds" if recommended is None else recommended.note,
        )
        firm = not assumed and dep.spec.position_acceptance is not None and not (recommended and recommended.source)
        return _Computed(
            eff,
            "per request",
            firm,
            "tau(k) / (t_verify(B, k+1) + t_draft(k) + overhead(k)) for each choice vs as deployed",
            choices.fixed,
            None,
            dep.spec.method,
            tuple(choices.actions),
            choices,
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


# The TP link's recommended action, by why custom all-reduce is off (allreduce.reason): turned off by the user, or
# off for want of P2P (or for a reason the log does not give). Across nodes, or on more than two PCIe-only GPUs
# (the engines gate it off there), enabling P2P does not bring it back: no modelled action.
_P2P_HOW = "BIOS ACS off and IOMMU passthrough (in LXC/VMs pass the GPUs through with P2P)"
ENABLE_P2P = f"enable GPU P2P between the TP GPUs so custom all-reduce runs: {_P2P_HOW}"
ENABLE_P2P_NCCL = f"enable GPU P2P between the TP GPUs so NCCL stops going through host memory: {_P2P_HOW}"
DROP_DISABLE_CUSTOM = "drop --disable-custom-all-reduce"


def _link_actions(eff: effects.Effect, reason: str, dep: Deployment) -> tuple[Action, ...]:
    """`reason`: allreduce.reason for custom all-reduce, "host-memory" for NCCL without P2P."""
    if reason in ("spans-nodes", "pcie-more-than-two") or eff.speedup <= 1.0:
        return ()
    if reason not in ("user", "host-memory") and dep.tp > 2 and dep.link in ("pcie", "p2p-off", "unknown"):
        return ()
    text = {"user": DROP_DISABLE_CUSTOM, "host-memory": ENABLE_P2P_NCCL}.get(reason, ENABLE_P2P)
    return (
        Action(
            text=text,
            expected_tok_s=round(eff.fixed_tok_s, 2),
            speedup=round(eff.speedup, 4),
            note=f"the all-reduces of a step by the model: {_tok1(eff.now_tok_s)} -> {_tok1(eff.fixed_tok_s)} tok/s "
            "per request",
        ),
    )


def _graph_actions(eff: effects.Effect, fix: Sequence[str]) -> tuple[Action, ...]:
    """CUDA graphs: the rule's first fix line is the one that turns them on at this batch (drop --enforce-eager, the
    capture mode or sizes), which is what the model computes; it carries the number."""
    if eff.speedup <= 1.0 or not fix:
        return ()
    return (
        Action(
            text=fix[0],
            expected_tok_s=round(eff.fixed_tok_s, 2),
            speedup=round(eff.speedup, 4),
            note=f"CUDA graphs replayed at this batch by the model: {_tok1(eff.now_tok_s)} -> "
            f"{_tok1(eff.fixed_tok_s)} tok/s per request",
        ),
    )


def effect_score(speedup: float) -> int:
    """0-100 from the share of decode time a fix recovers, p = 1 - 1/speedup: 50 at 10% (1.11x), 75 at 30% (1.43x),
    83 at 2x, 89 at 5x."""
    p = max(0.0, 1.0 - 1.0 / speedup) if speedup > 0 else 0.0
    return max(1, min(100, round(100 * p / (p + HALF_SCORE_SHARE))))


def _where(dep: Deployment) -> str:
    return f"{dep.tp}x {dep.gpu.name}" if dep.tp > 1 else dep.gpu.name


def _statement(computed: _Computed, measured: float | None, dep: Deployment) -> str:
    """The effect in words, on one basis with the numbers the gap line multiplies."""
    eff = computed.effect
    if computed.spec is not None:
        return _spec_statement(computed.spec, measured, _where(dep))
    unit = "tok/s aggregate" if computed.basis == "aggregate" else "tok/s per request"
    # these effects are computed on plain decode steps (effects.py): said, so the figures are not read as the
    # speculative deployment's
    steps = ", plain decode steps" if dep.spec is not None else ""
    return (
        f"fixed: {eff.speedup:.3f}x ({_tok1(eff.now_tok_s)} -> {_tok1(eff.fixed_tok_s)} {unit} expected on "
        f"{_where(dep)}{steps})"
    )


def _apply(finding: Finding, computed: _Computed, measured: float | None, dep: Deployment) -> Finding:
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
    if computed.spec is not None:
        # the model's choices replace the rule's k, drop and method advice: one answer, never two that disagree
        fix = [a.text for a in computed.actions] + [
            step for step in finding.fix if not _contradicts(step, computed.method)
        ]
    elif computed.actions:
        fix = list(
            dict.fromkeys([a.text for a in computed.actions] + [s for s in finding.fix if not answered_by_model(s)])
        )
    elif computed.fix_line is not None:
        fix = [computed.fix_line, *finding.fix]
    statement = _statement(computed, measured, dep)
    return finding.model_copy(
        update={
            "score": score,
            "severity": severity_for(score),
            "working": working,
            "fix": fix,
            "estimate": statement,
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
                actions=list(computed.actions),
                statement=statement,
            ),
        }
    )


def _contradicts(step: str, method: str | None) -> bool:
    """A rule's speculation advice that the model's choices answer (another k, no speculation, another method), or
    advice for a method other than the one in use (a DFlash checkpoint for an MTP deployment)."""
    if sets_speculation(step):
        return True
    return "dflash" in step.lower() and (method or "").lower() != "dflash"


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


def _tok1(x: float) -> str:
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}"


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
        how = Missing(what="GPU", how=unknown_gpu_how(profile))
        return without_gpu(findings, rules, engine), Performance(known=False, unknown=[how])
    table = options.hardware()
    inputs, gpu_from = _inputs(profile, options, table)
    unknown = [Missing(what=m.what, how=m.how) for m in inputs.unknown]
    if inputs.deployment is None:
        if gpu_from is None:
            unknown = [Missing(what="GPU", how=unknown_gpu_how(profile)), *(u for u in unknown if u.what != "GPU")]
        return list(findings), Performance(known=False, unknown=unknown, derived=list(inputs.derived))
    try:
        b = _bound(inputs, table, profile)
    except ModelError as exc:
        unknown.append(Missing(what="expected throughput", how=str(exc)))
        return list(findings), Performance(known=False, unknown=unknown, derived=list(inputs.derived))

    effect_of = {item.id: item.rule.effect for item in rules if item.rule.effect is not None}
    measured = b.measured_per_request if b.basis == "per request" else None
    out: list[Finding] = []
    for finding in findings:
        kind = effect_of.get(finding.rule)
        computed = _effect_for(kind, b.compare, table, profile, engine) if kind else None
        if kind is None or computed is None:
            out.append(finding)
            continue
        if kind == "cuda-graphs" and not computed.actions:
            computed = replace(computed, actions=_graph_actions(computed.effect, finding.fix))
        applied = _apply(finding, computed, measured, b.compare)
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
    hw = _hardware(b, table, profile)
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
        best_k=hw.best_k,
        ratio_as_deployed=round(b.ratio, 4) if b.ratio is not None else None,
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
