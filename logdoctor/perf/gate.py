"""The performance section of a diagnosis, with the model (logdoctor.perf.assess: the roofline, the effects, the
hardware table) imported only when a GPU is known (`--gpu` or a GPU-name fact): importing it costs start-up time
that a log without a GPU need not pay (docs/benchmarks.md, *Start-up*).

    findings, performance = assess(findings, profile, rules, perf_options(None))   # no GPU: no figures
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from logdoctor.engine.result import Finding, Missing, Performance
from logdoctor.perf.nogpu import without_gpu
from logdoctor.perf.options import PerfOptions, _fact_names, gpu_from_facts, unknown_gpu_how

if TYPE_CHECKING:
    from logdoctor.engine.rules import LoadedRule
    from logdoctor.perf.adapter import FactSource


def assess(
    findings: Sequence[Finding],
    profile: FactSource,
    rules: Sequence[LoadedRule],
    options: PerfOptions | None = None,
    *,
    engine: str = "unknown",
) -> tuple[list[Finding], Performance]:
    """`logdoctor.perf.assess.assess` when a GPU is known; without one the section says what to pass and the
    speculation findings say their effect is unknown (`without_gpu`)."""
    options = options or PerfOptions()
    if not options.gpu and gpu_from_facts(profile, _fact_names(profile)) is None:
        # no GPU: nothing to compute, and neither the model nor the table need be read
        return without_gpu(findings, rules, engine), Performance(
            known=False, unknown=[Missing(what="GPU", how=unknown_gpu_how(profile))]
        )
    from logdoctor.perf import assess as model

    return model.assess(findings, profile, rules, options, engine=engine)
