"""The throughput gap between the two deployments, and how much of it each cause found plausibly explains.

Gap(key="decode_tok_s_per_request", ratio=4.0, summary="4.0x slower per request (18.2 vs 72.9 tok/s)")
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from logdoctor.engine.diffresult import CauseShare, Difference, Gap
from logdoctor.engine.problems import problem_id
from logdoctor.engine.result import Finding, Performance, Problem

GAP_KEYS = ("decode_tok_s_per_request", "generation_throughput")
_GAP_WORDS = {"decode_tok_s_per_request": "per request", "generation_throughput": "in generation throughput"}


def measure_gap(rows: Sequence[Difference]) -> Gap | None:
    """Per-request decode speed when both sides have it, else aggregate generation throughput."""
    by_key = {row.key: row for row in rows}
    for key in GAP_KEYS:
        row = by_key.get(key)
        if row is None or not isinstance(row.baseline, int | float) or not isinstance(row.candidate, int | float):
            continue
        if not (0 < row.baseline < math.inf and 0 < row.candidate < math.inf):  # a zero side: `gap_note`
            continue
        ratio = row.baseline / row.candidate
        numbers = f"({row.candidate:.1f} vs {row.baseline:.1f} tok/s)"
        if ratio >= 1.05:
            summary = f"{ratio:.1f}x slower {_GAP_WORDS[key]} {numbers}"
        elif ratio <= 1 / 1.05:
            summary = f"{1 / ratio:.1f}x faster {_GAP_WORDS[key]} {numbers}"
        else:
            summary = f"about as fast {_GAP_WORDS[key]} {numbers}"
        return Gap(key=key, baseline=row.baseline, candidate=row.candidate, ratio=round(ratio, 4), summary=summary)
    return None


def gap_note(rows: Sequence[Difference], gap: Gap | None) -> str | None:
    """Why there is no gap when a side measured zero (or no number) throughput: said, not left out in silence."""
    if gap is not None:
        return None
    by_key = {row.key: row for row in rows}
    for key in GAP_KEYS:
        row = by_key.get(key)
        if row is None or not isinstance(row.baseline, int | float) or not isinstance(row.candidate, int | float):
            continue
        bad = [
            side
            for side, value in (("baseline", row.baseline), ("candidate", row.candidate))
            if not 0 < value < math.inf
        ]
        if bad:
            said = " and ".join(
                f"the {side}'s is {_said(value)}"
                for side, value in zip(("baseline", "candidate"), (row.baseline, row.candidate), strict=True)
                if side in bad
            )
            return f"no throughput gap measured {_GAP_WORDS[key]}: {said} tok/s, so no ratio can be taken"
    return None


def _said(value: float) -> str:
    return "zero" if value == 0 else f"{value:g}"


def attribute(gap: Gap, findings: Sequence[Finding], baseline_rules: set[str], about_differences: set[str]) -> Gap:
    """Split a slowdown over the causes found, by score (docs/diff.md).

    Only findings about a difference count: regression (`mode: diff`) findings and the candidate's
    own findings that read a row where the deployments differ and it matters (`about_differences`);
    a finding that also fires on the baseline explains none of the gap. A cause counts with its best
    finding's score, read as the percent of the gap (on a log scale) it plausibly explains; when the
    causes add up to more than 100 they are scaled to fill the gap exactly, and below 100 the rest
    stays unexplained. A score is evidence strength, not a measurement: this is a plausible split."""
    if gap.ratio < 1.05:
        return gap
    best: dict[str, tuple[int, list[str]]] = {}
    top_cause: dict[str, str] = {}
    left_out: dict[str, str] = {}
    for f in findings:
        if f.rule in baseline_rules:
            left_out[f.rule] = "fires on the baseline too"
            continue
        if f.rule not in about_differences:
            left_out[f.rule] = "reads nothing the deployments differ in"
            continue
        pid = problem_id(f.cause)  # findings that share one mechanism are one problem: one share
        score, rules = best.get(pid, (0, []))
        if f.score > score:
            top_cause[pid] = f.cause
        best[pid] = (max(score, f.score), [*rules, f.rule])
    total = sum(score for score, _ in best.values()) / 100
    scale = 1 / total if total > 1 else 1.0
    shares = [
        CauseShare(
            cause=top_cause[pid],
            rules=rules,
            score=score,
            share=round(score / 100 * scale, 4),
            factor=round(gap.ratio ** (score / 100 * scale), 2),
            problem=pid,
        )
        for pid, (score, rules) in best.items()
    ]
    shares.sort(key=lambda s: (-s.share, s.problem))
    explained = sum(s.share for s in shares)
    return gap.model_copy(
        update={
            "attribution": shares,
            "unexplained_share": round(max(0.0, 1 - explained), 4),
            "left_out": left_out,
        }
    )


def attribute_by_model(
    gap: Gap, performance: Performance | None, problems: Sequence[Problem], baseline_rules: set[str]
) -> Gap:
    """Split a slowdown over the candidate's problems by the expected-performance model (docs/diff.md): each
    problem counts with the effect of its recommended action, the same factor `diagnose` shows for it, and one that
    fires on the baseline too explains none of the gap. The factors multiply; what they leave of the gap is said as
    what the model does not explain. Without the model (no GPU, no per-request effect) the gap is left as it is."""
    if gap.ratio < 1.05 or performance is None or not performance.known or not performance.shares:
        return gap
    by_id = {p.id: p for p in problems}
    shares: list[CauseShare] = []
    left_out: dict[str, str] = {}
    for share in performance.shares:
        problem = by_id.get(share.problem)
        rules = problem.rules if problem is not None else [share.rule]
        if all(rule in baseline_rules for rule in rules):
            for rule in rules:
                left_out[rule] = "fires on the baseline too"
            continue
        log_share = math.log(share.speedup) / math.log(gap.ratio) if share.speedup > 1 else 0.0
        shares.append(
            CauseShare(
                cause=share.cause,
                problem=share.problem or share.cause,
                rules=rules,
                score=problem.score if problem is not None else 0,
                share=round(log_share, 4),
                factor=round(share.speedup, 3),
            )
        )
    if not shares:
        return gap
    shares.sort(key=lambda s: (-s.factor, s.problem))
    explained = math.prod(s.factor for s in shares)
    return gap.model_copy(
        update={
            "method": "model",
            "attribution": shares,
            "unexplained_share": round(max(0.0, 1 - math.log(explained) / math.log(gap.ratio)), 4),
            "left_out": left_out,
        }
    )
