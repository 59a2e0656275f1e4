"""Compare one Diagnosis with one expectation: did it fire, at what rank and score, and if not, why not.

Shared by `logdoctor test` (case files) and `logdoctor.testing.assert_fires` (pytest), so both say the
same thing when an expectation fails:

    missing: cause spec-net-loss did not fire: below-break-even was ruled out (condition not met: ...)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from logdoctor.engine.result import Diagnosis, Finding, RuleOutcome

ProblemKind = Literal[
    "missing",
    "unexpected",
    "rank mismatch",
    "outcome mismatch",
    "golden missing",
    "golden drift",
    "sample",
    "error",
]

_OUTCOME_WORDS = {
    "fired": "fired",
    "ruled_out": "was ruled out",
    "insufficient_data": "had insufficient data",
    "not_applicable": "was not applicable",
    "suppressed": "was suppressed",
}


@dataclass(frozen=True)
class Problem:
    kind: ProblemKind
    message: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


def target_name(cause: str | None, rule: str | None) -> str:
    return f"cause {cause}" if cause is not None else f"rule {rule}"


def matching_findings(diagnosis: Diagnosis, cause: str | None, rule: str | None) -> list[Finding]:
    return [f for f in diagnosis.findings if (cause is None or f.cause == cause) and (rule is None or f.rule == rule)]


def cause_ranking(diagnosis: Diagnosis) -> list[str]:
    """Causes in the order of their best finding: the ranking a reader of the report sees."""
    seen: list[str] = []
    for finding in diagnosis.findings:
        if finding.cause not in seen:
            seen.append(finding.cause)
    return seen


def rank_of(diagnosis: Diagnosis, cause: str | None, rule: str | None) -> int | None:
    """1-based: among causes when `cause` is given, among findings when `rule` is."""
    if cause is not None:
        ranking = cause_ranking(diagnosis)
        return ranking.index(cause) + 1 if cause in ranking else None
    for index, finding in enumerate(diagnosis.findings, start=1):
        if finding.rule == rule:
            return index
    return None


def not_fired_outcomes(diagnosis: Diagnosis, cause: str | None, rule: str | None) -> list[RuleOutcome]:
    outcomes = [
        *diagnosis.ruled_out,
        *diagnosis.insufficient_data,
        *diagnosis.not_applicable,
        *diagnosis.suppressed,
    ]
    return [o for o in outcomes if (cause is None or o.cause == cause) and (rule is None or o.rule == rule)]


def describe_outcome(outcome: RuleOutcome) -> str:
    return f"{outcome.rule} {_OUTCOME_WORDS[outcome.outcome]} ({outcome.reason})"


def why_not_fired(
    diagnosis: Diagnosis, cause: str | None, rule: str | None, rule_causes: Mapping[str, str] | None = None
) -> str:
    """What happened instead: each rule of the target, and its outcome with the engine's reason."""
    outcomes = not_fired_outcomes(diagnosis, cause, rule)
    if outcomes:
        return "; ".join(describe_outcome(o) for o in outcomes)
    if rule is not None:
        if rule_causes is not None and rule not in rule_causes:
            return f"rule {rule} is not in the rule set (deleted or renamed?)"
        return f"rule {rule} was not evaluated (deprecated, or not in the rule set)"
    if rule_causes is not None and cause not in rule_causes.values():
        return f"no rule in the rule set has cause {cause}"
    return f"no rule of cause {cause} was evaluated"


def _ranking_text(diagnosis: Diagnosis, by_cause: bool, upto: int) -> str:
    if by_cause:
        best: dict[str, int] = {}
        for f in diagnosis.findings:
            best.setdefault(f.cause, f.score)
        items = [f"{n}. {c} ({best[c]})" for n, c in enumerate(cause_ranking(diagnosis), start=1)]
    else:
        items = [f"{n}. {f.rule} ({f.score})" for n, f in enumerate(diagnosis.findings, start=1)]
    shown = items[:upto]
    more = f", ... {len(items) - upto} more" if len(items) > upto else ""
    return ", ".join(shown) + more if shown else "nothing fired"


def check_fires(
    diagnosis: Diagnosis,
    *,
    cause: str | None = None,
    rule: str | None = None,
    rank: int | None = None,
    min_score: int | None = None,
    rule_causes: Mapping[str, str] | None = None,
) -> Problem | None:
    """None when the target fired (at `min_score` or more, at `rank`); else the problem, saying what happened."""
    target = target_name(cause, rule)
    found = matching_findings(diagnosis, cause, rule)
    if not found:
        return Problem("missing", f"{target} did not fire: {why_not_fired(diagnosis, cause, rule, rule_causes)}")
    best = max(found, key=lambda f: f.score)
    if min_score is not None and best.score < min_score:
        return Problem(
            "missing",
            f"{target} fired with a lower score than expected: {best.rule} scored {best.score} < min_score "
            f"{min_score} ({best.working})",
        )
    if rank is not None:
        actual = rank_of(diagnosis, cause, rule)
        if actual != rank:
            ranking = _ranking_text(diagnosis, cause is not None, max(rank, actual or 0) + 1)
            return Problem("rank mismatch", f"{target} expected at rank {rank}, found at rank {actual}: {ranking}")
    return None


def check_not_fires(diagnosis: Diagnosis, *, cause: str | None = None, rule: str | None = None) -> Problem | None:
    found = matching_findings(diagnosis, cause, rule)
    if not found:
        return None
    fired = "; ".join(f"{f.rule} scored {f.score}: {f.explanation}" for f in found)
    return Problem("unexpected", f"{target_name(cause, rule)} fired: {fired}")


def check_outcome(
    diagnosis: Diagnosis,
    rule: str,
    expected: Literal["ruled_out", "insufficient_data"],
    rule_causes: Mapping[str, str] | None = None,
) -> Problem | None:
    """The rule must come out exactly `expected` (not fired, not the other non-fired outcome)."""
    want = _OUTCOME_WORDS[expected].removeprefix("was ").removeprefix("had ")
    found = matching_findings(diagnosis, None, rule)
    if found:
        best = found[0]
        return Problem(
            "outcome mismatch", f"rule {rule}: expected {want}, but it fired (score {best.score}: {best.explanation})"
        )
    outcomes = not_fired_outcomes(diagnosis, None, rule)
    if not outcomes:
        return Problem(
            "outcome mismatch", f"rule {rule}: expected {want}, but {why_not_fired(diagnosis, None, rule, rule_causes)}"
        )
    outcome = outcomes[0]
    if outcome.outcome == expected:
        return None
    return Problem(
        "outcome mismatch", f"rule {rule}: expected {want}, but it {_OUTCOME_WORDS[outcome.outcome]} ({outcome.reason})"
    )
