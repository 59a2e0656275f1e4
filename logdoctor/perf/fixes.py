"""The effect of each finding's fix, computed on the deployment by the model (a faster link, custom all-reduce,
CUDA graphs, another k or no speculation, no CPU offload) and written into the finding: its speedup, its score on
the rules' scale, the statement and the actions; findings ranked by what they cost.

    computed = effect_for("cuda-graphs", deployment, table, profile, engine)  # 1.8x faster: scores 89
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from logdoctor.engine.problems import answered_by_model, sets_speculation
from logdoctor.engine.result import (
    SEVERITY_ORDER,
    Action,
    Finding,
    FindingEffect,
    severity_for,
)
from logdoctor.facts import speculation
from logdoctor.perf import effects
from logdoctor.perf.adapter import FactSource, median_positive, median_value
from logdoctor.perf.bound import tok1, working_line
from logdoctor.perf.hardware import HardwareTable
from logdoctor.perf.model import Deployment, SpecConfig, draft_cost
from logdoctor.perf.mtp import is_mtp, mtp_acceptance, mtp_head
from logdoctor.perf.nogpu import drop_flag as _drop_flag
from logdoctor.perf.options import SeenAcceptance, model_tail
from logdoctor.registry import REGISTRY

# A fix that recovers this share of decode time scores 50 (material): score = 100 * p / (p + HALF_SCORE_SHARE).
# 10% is where the rules' own impacts put "material" (custom-allreduce-off scores 60 for "typically 5-20% of
# decode time"), so an effect and a rule score mean about the same on one scale.
HALF_SCORE_SHARE = 0.1


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

    @property
    def step_cost(self) -> float | None:
        """A step as deployed in plain decode steps on this hardware: the acceptance length that breaks even."""
        if not self.now or self.k < 1:
            return None
        return self.tokens_per_step * self.plain / self.now


def _spec_choices(
    engine: str,
    dep: Deployment,
    plan: effects.SpecPlan,
    table: HardwareTable,
    profile: FactSource,
    seen: SeenAcceptance | None = None,
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
    if seen is not None and (seen.model != model_tail(profile.value("model")) or not seen.model):
        seen = None  # another model's acceptance says nothing of this one's head
    if seen is not None and is_mtp(seen.method) and seen.k >= 1:
        # the same model's MTP head as another deployment ran it: its measured acceptance, not the published low end
        typical = speculation.TypicalAcceptance("mtp", seen.tau, seen.k, f"measured by {seen.where}")
        family = seen.where
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
                        note=f"the model's own MTP head ({head}), at the "
                        + (
                            f"acceptance length {typical.tau:.2f} at k={typical.k} measured by {family}"
                            if seen is not None and family == seen.where
                            else f"typical acceptance length {typical.tau:g} at k={typical.k} of {family}"
                        ),
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
        f"speculation as deployed {words}: {seen}{tok1(choices.now)} expected as deployed, {tok1(choices.plain)} "
        f"expected without speculation, tok/s per request on {where}"
    )
    # the step in plain steps is the acceptance length that breaks even on this hardware; it replaces the rules'
    # figure (made without the GPU) in the finding's own text (`model_break_even`), so one number is said
    cost = choices.step_cost
    if cost is not None:
        out += f"; a step with k={choices.k} costs {cost:.2f} plain decode steps here, the acceptance length that breaks even"
    if choices.actions:
        best = choices.actions[0]
        out += f"; recommended: {best.text} ({tok1(best.expected_tok_s or 0.0)} tok/s, {best.speedup:.2f}x)"
    return out


def effect_for(
    kind: str,
    dep: Deployment,
    table: HardwareTable,
    profile: FactSource,
    engine: str,
    seen: SeenAcceptance | None = None,
) -> _Computed | None:
    """The effect of one fix on `dep`, or None where the model lacks what that formula needs. `seen`: the acceptance
    another deployment of the same model measured (diff), used for its method in place of the published figure."""
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
        choices = _spec_choices(engine, dep, plan, table, profile, seen)
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
            actions=_offload_actions(eff, dep, profile),
        )
    if kind == "kv-concurrency":
        kv_tokens = median_value(profile.value("kv.tokens"))
        # the queue while there was one: median waiting over intervals with requests waiting
        waiting = median_positive(profile.value("sched.waiting"))
        if kv_tokens is None or dep.context_tokens is None or not waiting:
            return None
        wanted = dep.batch + round(waiting)
        actions = _kv_actions(dep, table, profile, engine, kv_tokens, wanted)
        # the problem's effect is its recommended action's (the memory fraction the log allows), else every queued
        # request running
        more = actions[0][1] if actions else None
        eff = effects.kv_bound_speedup(dep, table, kv_tokens, dep.context_tokens, wanted, fixed_kv_tokens=more)
        # medians of series the facts do not pair per interval: rough, so it may only raise the rule's score
        return _Computed(
            eff,
            "aggregate",
            False,
            "B_fixed / t(B_fixed) vs B_fit / t(B_fit), aggregate",
            None,
            actions=tuple(a for a, _ in actions),
        )
    return None


def effect_unknown(kind: str, dep: Deployment, profile: FactSource) -> str | None:
    """Why the model has no effect for a KV-pressure or offload fix, where the log lacks what it needs (None where
    it is not that: another kind, or a fix that does not apply)."""
    if kind == "kv-concurrency":
        if median_value(profile.value("kv.tokens")) is None:
            return "the log gives no KV cache size in tokens (vLLM `GPU KV cache size`, SGLang `max_total_num_tokens`)"
        if dep.context_tokens is None:
            return "the stats lines give no KV usage with requests running (the context a request holds)"
        if not median_positive(profile.value("sched.waiting")):
            return "the stats lines show no request waiting (how many more would run)"
    if kind == "cpu-offload" and not dep.host_bytes_per_gpu and profile.value("offload.cpu_gb") is None:
        return "the log gives no offloaded GiB (--cpu-offload-gb); swapped KV blocks are not modelled"
    return None


# The most of a GPU's memory the engines are run with: vLLM's and SGLang's docs raise the fraction toward it when the
# KV cache is short, leaving the rest for the CUDA context, activations and graphs. A deployment already at or above it
# gets no utilization action.
MAX_MEMORY_FRACTION = 0.95
_GIB = 2**30


def _kv_actions(
    dep: Deployment, table: HardwareTable, profile: FactSource, engine: str, kv_tokens: float, wanted: int
) -> tuple[tuple[Action, float], ...]:
    """KV-bound concurrency: the memory fraction raised to MAX_MEMORY_FRACTION, from the log's numbers (the fraction
    set, the KV cache's GiB and tokens per GPU, the GPU's memory): the tokens it adds, the requests they hold and the
    aggregate tok/s at that batch by the model, each with the KV tokens it gives. None where the log lacks one of them
    (the effect stands alone)."""
    fraction = median_value(profile.value("memory.fraction"))
    kv_gib = median_value(profile.value("kv.memory_gib"))
    context = dep.context_tokens
    if fraction is None or kv_gib is None or context is None or not kv_tokens or fraction >= MAX_MEMORY_FRACTION:
        return ()
    per_token = kv_gib * _GIB / kv_tokens
    extra = (MAX_MEMORY_FRACTION - fraction) * dep.gpu.memory_gb * 1e9
    more = kv_tokens + extra / per_token
    eff = effects.kv_bound_speedup(dep, table, kv_tokens, context, wanted, fixed_kv_tokens=more)
    if eff.speedup <= 1.0:
        return ()
    spec = REGISTRY.get(engine)
    spelling = spec.flags.get("memory_fraction") if spec is not None else None
    if spelling is None or spelling.flag is None:
        return ()  # an engine that does not say how it sets the fraction
    flag = spelling.flag
    action = (
        Action(
            text=f"{flag} {MAX_MEMORY_FRACTION:g} (now {fraction:g})",
            expected_tok_s=round(eff.fixed_tok_s, 1),
            speedup=round(eff.speedup, 4),
            basis="aggregate",
            note=(
                f"{(MAX_MEMORY_FRACTION - fraction) * dep.gpu.memory_gb:.1f} GB more KV a GPU of the "
                f"{dep.gpu.memory_gb:g} GB: {kv_tokens:,.0f} -> {more:,.0f} tokens at {per_token / 1e3:.0f} kB a token, "
                f"{eff.note}, at {context:,.0f} tokens a request; aggregate tok/s by the model"
            ),
        ),
        more,
    )
    return (action,)


def _offload_actions(eff: effects.Effect, dep: Deployment, profile: FactSource) -> tuple[Action, ...]:
    """Weights offloaded to host memory: dropping --cpu-offload-gb where the GPU's share of memory holds them with the
    rest of the weights (the KV cache gives way), with the tok/s without the PCIe reads. Where it cannot hold them,
    no modelled action: the rule's more GPUs or a smaller checkpoint stand."""
    offload = median_value(profile.value("offload.cpu_gb"))
    set_fraction = median_value(profile.value("memory.fraction"))
    fraction = set_fraction or 0.9  # vLLM's default --gpu-memory-utilization
    # the whole model on each GPU once fixed: what the load put there plus the offloaded share, else from its size
    if dep.weights_bytes_per_gpu is not None:
        whole = dep.weights_bytes_per_gpu + dep.host_bytes_per_gpu
    elif dep.params is not None:
        whole = dep.params * dep.dtype_bytes / (dep.tp * dep.pp)
    else:
        return ()
    if not offload or eff.speedup <= 1.0:
        return ()
    left = fraction * dep.gpu.memory_gb * 1e9 - whole
    if left <= 0:
        return ()
    return (
        Action(
            text=f"drop --cpu-offload-gb {offload:g}",
            expected_tok_s=round(eff.fixed_tok_s, 2),
            speedup=round(eff.speedup, 4),
            note=(
                f"{dep.host_bytes_per_gpu / 1e9:.1f} GB a GPU read over PCIe every step now; the whole model, "
                f"{whole / 1e9:.1f} GB a GPU, fits in {fraction:g} of its {dep.gpu.memory_gb:g} GB"
                f"{'' if set_fraction else ' (the default utilization)'} and leaves {left / 1e9:.1f} GB for the KV cache"
            ),
        ),
    )


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
            note=f"the all-reduces of a step by the model: {tok1(eff.now_tok_s)} -> {tok1(eff.fixed_tok_s)} tok/s "
            "per request",
        ),
    )


def graph_actions(eff: effects.Effect, fix: Sequence[str]) -> tuple[Action, ...]:
    """CUDA graphs: the rule's first fix line is the one that turns them on at this batch (drop --enforce-eager, the
    capture mode or sizes), which is what the model computes; it carries the number."""
    if eff.speedup <= 1.0 or not fix:
        return ()
    return (
        Action(
            text=fix[0],
            expected_tok_s=round(eff.fixed_tok_s, 2),
            speedup=round(eff.speedup, 4),
            note=f"CUDA graphs replayed at this batch by the model: {tok1(eff.now_tok_s)} -> "
            f"{tok1(eff.fixed_tok_s)} tok/s per request",
        ),
    )


_REPLICAS = re.compile(r"--(?:data-parallel-size|dp-size) \d+ instead of")


def _one_gpu_holds(dep: Deployment) -> bool:
    """Whether one GPU could hold every TP rank's weights (unknown weights: it may). Where the weights are what a
    step reads (the model's parameter counts), those are the least the GPUs hold."""
    if dep.weights_bytes_per_gpu is None or dep.tp <= 1:
        return True
    return dep.weights_bytes_per_gpu * dep.tp < dep.gpu.memory_gb * 1e9 * 0.9


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
    # the figures at the precision the actions carry (2 decimals), so the box's line and its action print one number
    return (
        f"fixed: {eff.speedup:.3f}x ({tok1(round(eff.now_tok_s, 2))} -> {tok1(round(eff.fixed_tok_s, 2))} {unit} "
        f"expected on {_where(dep)}{steps})"
    )


# The rules' break-even in a finding's text ("break-even is about 4.0", below-break-even's explain), made without the
# GPU at 0.2 plain steps a drafted token.
_RULE_BREAK_EVEN = re.compile(r"break-even is about \d+(?:\.\d+)?")


def model_break_even(text: str, choices: _SpecChoices, where: str) -> str:
    """`text` with the rules' assumed break-even replaced by the model's on this hardware, where it has one."""
    cost = choices.step_cost
    if cost is None:
        return text
    return _RULE_BREAK_EVEN.sub(f"break-even is about {cost:.2f} on {where} (the model's step cost)", text)


def apply_effect(finding: Finding, computed: _Computed, measured: float | None, dep: Deployment) -> Finding:
    eff = computed.effect
    explanation = finding.explanation
    if computed.spec is not None:
        explanation = model_break_even(explanation, computed.spec, _where(dep))
    base = measured if measured is not None else eff.now_tok_s
    recovered = base * (eff.speedup - 1.0)
    escore = effect_score(eff.speedup)
    score = escore if computed.firm else max(finding.score, escore)
    lost = 1.0 - 1.0 / eff.speedup if eff.speedup > 0 else 0.0
    how = "replaces" if computed.firm else "may only raise (an input was assumed)"
    rule_working = finding.working
    spec = computed.spec
    if spec is not None and spec.step_cost is not None and spec.break_even_assumed is not None:
        # the rule scored against its own break-even: said as the rules' figure, beside the model's that replaces it
        rule_working = rule_working.replace(
            "spec.break_even =",
            f"spec.break_even {spec.break_even_assumed:.2f} (the rules' 0.2 plain steps a drafted token; "
            f"{spec.step_cost:.2f} on {_where(dep)} by the model) =",
        )
    working = (
        f"{rule_working}; effect by the model: {eff.speedup:.3f}x ({lost:.1%} of decode time) -> "
        f"effect score {escore}, which {how} the rule's {finding.score} = {score}"
    )
    fix = finding.fix
    if computed.actions and computed.spec is None and not _one_gpu_holds(dep):
        # replicas in place of TP need one GPU to hold the whole model: where the log's weights say it cannot, the
        # advice does not fit this deployment
        fix = [step for step in fix if not _REPLICAS.search(step)]
    if computed.spec is not None:
        # the model's choices replace the rule's k, drop and method advice: one answer, never two that disagree
        fix = [a.text for a in computed.actions] + [
            step for step in finding.fix if not _contradicts(step, computed.method)
        ]
    elif computed.actions:
        fix = list(dict.fromkeys([a.text for a in computed.actions] + [s for s in fix if not answered_by_model(s)]))
    elif computed.fix_line is not None:
        fix = [computed.fix_line, *finding.fix]
    statement = _statement(computed, measured, dep)
    return finding.model_copy(
        update={
            "score": score,
            "severity": severity_for(score),
            "explanation": explanation,
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
                working=[working_line(s) for s in eff.working],
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
