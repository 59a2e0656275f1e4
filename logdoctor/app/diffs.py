"""The whole `logdoctor diff`: both deployments through the stages `diagnose` runs, then compared.

Rules run on the candidate with the baseline's facts beside it (`baseline.<fact>`, read by `mode: diff`
rules); the rows are linked to the findings that read them, the gap is measured and split over the
causes found, and the rows are ranked (docs/diff.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import date

from logdoctor import __version__
from logdoctor.diff.compare import compare, folded, link, rank_rows
from logdoctor.diff.gap import attribute, attribute_by_model, gap_note, measure_gap
from logdoctor.engine.deadline import Deadline
from logdoctor.engine.diffresult import DiffReport, DiffSide
from logdoctor.engine.evaluate import evaluate, verdict_for
from logdoctor.engine.result import RuleOutcome, Verdict
from logdoctor.engine.rules import LoadedRule
from logdoctor.engine.suppress import Suppressions
from logdoctor.facts import Profile, with_baseline
from logdoctor.perf.adapter import median_value
from logdoctor.perf.assess import model_gap
from logdoctor.perf.options import PerfOptions, SeenAcceptance, model_tail
from logdoctor.pipeline.run import Parsed, diagnose_parsed
from logdoctor.sources.limits import DEFAULT_MAX_SECONDS


def _with_seen(perf: PerfOptions | None, base: Profile, baseline: Parsed) -> PerfOptions | None:
    """The candidate's performance options with the acceptance the baseline measured (its method, k and median
    acceptance length), which the candidate's choices of that method use for the same model (perf/fixes.py): the
    baseline ran it, so its figure, not the published one, says what it gives."""
    if perf is None or not base.value("spec.enabled"):
        return perf
    method, k = base.value("spec.method"), base.value("spec.num_tokens")
    tau = median_value(base.value("spec.acceptance_length"))
    if not method or not isinstance(k, int | float) or k < 1 or tau is None:
        return perf
    names = ", ".join(s.name for s in baseline.stats) or "the baseline log"
    seen = SeenAcceptance(
        str(method), float(tau), int(k), f"the baseline ({base.engine}, {names})", model_tail(base.value("model"))
    )
    return replace(perf, seen=seen)


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
    perf: PerfOptions | None = None,
    max_seconds: float = DEFAULT_MAX_SECONDS,
) -> DiffReport:
    """Compare two deployments; findings are the candidate's own plus the regressions against the baseline.
    `max_seconds` (--max-seconds): the time each side's diagnosis, and then the comparison's rules, may take."""
    base_diagnosis, base_profile = diagnose_parsed(
        baseline, rules, engine=baseline_engine, today=today, perf=perf, max_seconds=max_seconds
    )
    cand_diagnosis, cand_profile = diagnose_parsed(
        candidate,
        rules,
        engine=candidate_engine,
        today=today,
        perf=_with_seen(perf, base_profile, baseline),
        max_seconds=max_seconds,
    )
    combined = with_baseline(cand_profile, base_profile)
    names = ", ".join(s.name for s in (*baseline.stats, *candidate.stats)) or "the inputs"
    findings, outcomes, warnings = evaluate(
        rules,
        combined,
        _lookup(baseline, candidate),
        suppressions,
        today,
        diff=True,
        deadline=Deadline(max_seconds, names),
    )
    # the candidate's findings as diagnose gives them (the model's effects and actions where its GPU is known): a box
    # of the diff says the numbers the gap line multiplies, not the rules' hardware-free estimates
    assessed = {f.rule: f for f in cand_diagnosis.findings}
    findings = sorted((assessed.get(f.rule, f) for f in findings), key=lambda f: -f.score)
    rows = link(compare(base_profile, cand_profile), findings, rules)
    gap = measure_gap(rows)
    no_gap = gap_note(rows, gap)
    baseline_rules = {f.rule for f in base_diagnosis.findings}
    if gap is not None:
        diff_rules = {item.id for item in rules if item.is_diff}
        about = diff_rules | {rule for row in rows if row.matters for rule in row.findings}
        gap = attribute(gap, findings, baseline_rules, about)
    if gap is not None:
        # by the model where the candidate's GPU is known: its problems' effects, the numbers `diagnose` gives
        gap = attribute_by_model(gap, cand_diagnosis.performance, cand_diagnosis.problems, baseline_rules)
    gap = model_gap(gap, base_diagnosis.performance, cand_diagnosis.performance)  # the model's part of the gap
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
            performance=base_diagnosis.performance,
        ),
        candidate=DiffSide(
            sources=cand_diagnosis.sources,
            engine=cand_diagnosis.engine,
            verdict=cand_diagnosis.verdict,
            findings=sorted(f.rule for f in cand_diagnosis.findings),
            performance=cand_diagnosis.performance,
        ),
        gap=gap,
        differences=shown,
        folded=len(rows) - len(shown),
        verdict=verdict,
        findings=findings,
        ruled_out=pick("ruled_out"),
        insufficient_data=pick("insufficient_data"),
        suppressed=pick("suppressed"),
        # How each side's lines were chosen (the server start of a restarted log), then the rules' warnings.
        warnings=[
            *(f"baseline: {n}" for n in baseline.notes),
            *(f"candidate: {n}" for n in candidate.notes),
            *warnings,
            *([no_gap] if no_gap else []),
        ],
    )
