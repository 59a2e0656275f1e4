"""The bound for one deployment: the model's inputs from its facts, the expected decode speed as deployed, what
this hardware could do for the model, and where the measured speed lands against it (the healthy band).

    b = bound_of(inputs, table, profile)   # b.measured / b.expected.per_request_tok_s -> 0.13, "below"
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from logdoctor.facts import speculation
from logdoctor.perf import effects
from logdoctor.perf.adapter import FactSource, Inputs, deployment_from_profile, median_value
from logdoctor.perf.hardware import HardwareTable, ModelShape
from logdoctor.perf.model import Deployment, Expected, Step, expected
from logdoctor.perf.mtp import is_mtp, mtp_acceptance
from logdoctor.perf.options import PerfOptions, _fact_names, gpu_from_facts

if TYPE_CHECKING:
    pass

# Where healthy runs land against the bound (docs/expected-performance.md, "Checks"): published healthy runs
# at 0.57-0.86, real engines at ~0.64 (vLLM PR#16937). Below HEALTHY_LOW is far below: not healthy.
HEALTHY_LOW = 0.5
HEALTHY_HIGH = 0.9
# Fewer intervals with one running request than this, beside aggregate intervals, are not a per-request
# measurement (the tail of a batch draining): the aggregate is compared instead.
MIN_PER_REQUEST_INTERVALS = 3


def tok(x: float) -> str:
    return f"{x:.0f}" if x >= 10 else f"{x:.1f}"


def tok1(x: float) -> str:
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}"


def working_line(step: Step) -> str:
    """One line of the working: `what = result (formula)`."""
    return f"{step.what}: {step.result} ({step.formula})"


@dataclass(frozen=True)
class Bound:
    dep: Deployment  # at the measured batch
    at_batch: Expected
    single: Expected  # at batch 1
    basis: str | None  # "per request" / "aggregate"
    ratio: float | None
    measured_per_request: float | None
    measured_aggregate: float | None
    compare: Deployment  # the deployment the measurement is compared against (batch 1 for per-request intervals)


def model_inputs(profile: FactSource, options: PerfOptions, table: HardwareTable) -> tuple[Inputs, str | None]:
    names = _fact_names(profile)
    found = (options.gpu, "--gpu") if options.gpu else gpu_from_facts(profile, names)
    gpu = found[0] if found else None
    model = str(profile.value("model") or "")
    shape = shape_from_facts(profile) or (table.model_shape(model) if model else None)
    tp = int(median_value(profile.value("parallel.tp")) or 1)
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
        shape_read_params=shape[1].read_params if shape else None,
        shape_params=shape[1].params if shape else None,
        shape_source=f"the models: entry {shape[0]}" if shape else "the config.json's shape",
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


def bound_of(inputs: Inputs, table: HardwareTable, profile: FactSource) -> Bound:
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
        interval = median_interval(profile, dep, table)
        if interval is not None:
            ratio, aggregate, dep = interval
            at_batch = expected(dep, table)
            compare = dep
            basis = "aggregate"
        else:
            aggregate = None  # no interval says its own batch: a rate with another interval's batch is no bound
    return Bound(dep, at_batch, single, basis, ratio, per_request, aggregate, compare)


def median_interval(
    profile: FactSource, dep: Deployment, table: HardwareTable
) -> tuple[float, float, Deployment] | None:
    """The stats interval whose generation rate is the median of the run's against the bound at that interval's own
    batch (`throughput.generation` with `throughput.batch`, in step): (measured / bound, its rate, the deployment at
    its batch); the lower of the two middle ones for an even count. A median of the rates over a median of the
    batches pairs a busy interval's rate with a quiet one's batch (4511 tok/s at 128 running set against the bound
    at 7), which is no bound; an interval that ended with nothing running says no batch and is left out."""
    rates, batches = profile.value("throughput.generation"), profile.value("throughput.batch")
    if not isinstance(rates, list) or not isinstance(batches, list) or len(rates) != len(batches):
        return None
    bounds: dict[int, Expected] = {}
    scored: list[tuple[float, float, int]] = []
    for rate, running in zip(rates, batches, strict=True):
        batch = round(running) if isinstance(running, int | float) else 0
        if not isinstance(rate, int | float) or rate <= 0 or batch < 1:
            continue
        if batch not in bounds:
            bounds[batch] = expected(replace(dep, batch=batch), table)
        scored.append((float(rate) / bounds[batch].aggregate_tok_s, float(rate), batch))
    if not scored:
        return None
    scored.sort()
    ratio, rate, batch = scored[(len(scored) - 1) // 2]
    return ratio, rate, replace(dep, batch=batch)


@dataclass(frozen=True)
class HardwareBound:
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


def hardware_bound(b: Bound, table: HardwareTable, profile: FactSource) -> HardwareBound:
    aggregate = b.basis == "aggregate"
    dep = b.dep if aggregate else b.compare
    scale = float(dep.batch) if aggregate else 1.0
    as_deployed = (b.at_batch if aggregate else expected(dep, table)).per_request_tok_s * scale
    spec = dep.spec
    if spec is None or spec.k <= 0:
        return HardwareBound(None, None, None, None, None, None, None, as_deployed)
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
        return HardwareBound(no_spec, best_k, best_same, None, None, None, None, as_deployed)
    positions = speculation.iid_positions(typical.tau, typical.k)
    at_typical = replace(
        dep, spec=replace(spec, k=typical.k, position_acceptance=positions, mean_acceptance_length=typical.tau)
    )
    at = effects.spec_best_k(at_typical, table)
    return HardwareBound(
        no_spec,
        best_k,
        best_same,
        at.best.tok_s_per_request * scale,
        typical.tau,
        at.best.k,
        typical.source,
        as_deployed,
    )


def band_of(ratio: float | None) -> str | None:
    if ratio is None:
        return None
    if ratio > 1.0:
        return "above-bound"
    return "healthy" if ratio >= HEALTHY_LOW else "below"
