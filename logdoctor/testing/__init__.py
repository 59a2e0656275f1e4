"""Test rules the way `logdoctor test` does, from pytest: logdoctor's own rules or a private rule pack.

    from logdoctor.testing import assert_fires, assert_not_fires, diagnose_text, run_case

    def test_my_rule_fires() -> None:
        diagnosis = diagnose_text(LOG, rules_dirs=["my_rules"], builtin=False)
        assert_fires(diagnosis, rule="my-kv-rule", rank=1, min_score=60)
        assert_not_fires(diagnosis, cause="cuda-graphs-disabled")

    @pytest.mark.parametrize("case", discover([Path("fixtures/logs")]).cases, ids=lambda c: c.name)
    def test_fixture(case: Case) -> None:
        run_case(case, rules_dirs=["my_rules"]).assert_passed()

The failure messages are the ones `logdoctor test` prints: what was expected and what happened instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from logdoctor.engine.result import Diagnosis, Finding
from logdoctor.engine.rules import LoadedRule, load_rules
from logdoctor.pipeline.run import LineSource, diagnose_sources
from logdoctor.testing.cases import (
    Case,
    CaseResult,
    Failure,
    SuiteResult,
    Todo,
    discover,
    run_case,
    run_suite,
)
from logdoctor.testing.checks import check_fires, check_not_fires, matching_findings
from logdoctor.testing.expectations import Expectation, ExpectationError, load_expectation

__all__ = [
    "Case",
    "CaseResult",
    "Expectation",
    "ExpectationError",
    "Failure",
    "SuiteResult",
    "Todo",
    "assert_fires",
    "assert_not_fires",
    "diagnose_text",
    "discover",
    "load_expectation",
    "run_case",
    "run_suite",
]


def diagnose_text(
    text: str,
    *,
    engine: str | None = None,
    rules_dirs: Iterable[Path | str] = (),
    builtin: bool = True,
    rules: Sequence[LoadedRule] | None = None,
    source: str = "<text>",
) -> Diagnosis:
    """Run the whole pipeline on a log given as a string (several lines, any envelope)."""
    if rules is None:
        rules = load_rules([Path(d) for d in rules_dirs], builtin=builtin)
    lines = list(enumerate(text.splitlines(), start=1))
    return diagnose_sources([LineSource(name=source, lines=lines, kind="text")], rules, engine=engine)


def assert_fires(
    diagnosis: Diagnosis,
    cause: str | None = None,
    rule: str | None = None,
    rank: int | None = None,
    min_score: int | None = None,
) -> Finding:
    """The rule (or some rule of the cause) fired, at `rank` and `min_score` when given; returns its best finding.

    `rank` is 1-based: among causes when `cause` is given, among findings when `rule` is."""
    _one_target(cause, rule)
    problem = check_fires(diagnosis, cause=cause, rule=rule, rank=rank, min_score=min_score)
    if problem is not None:
        raise AssertionError(str(problem))
    return max(matching_findings(diagnosis, cause, rule), key=lambda f: f.score)


def assert_not_fires(diagnosis: Diagnosis, cause: str | None = None, rule: str | None = None) -> None:
    """Neither the rule (nor any rule of the cause) fired, at any score."""
    _one_target(cause, rule)
    problem = check_not_fires(diagnosis, cause=cause, rule=rule)
    if problem is not None:
        raise AssertionError(str(problem))


def _one_target(cause: str | None, rule: str | None) -> None:
    if (cause is None) == (rule is None):
        raise TypeError("give exactly one of cause= or rule=")
