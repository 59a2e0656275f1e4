"""A problem names its root cause first: speculation that loses because its drafter accepts too little is
spec-low-acceptance first; speculation that would lose at this k even with a working drafter is spec-net-loss first."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor.engine.problems import root_first
from logdoctor.engine.result import Finding
from logdoctor.engine.rules import load_rules
from logdoctor.pipeline.run import LineSource, diagnose_parsed, parse_sources

STORY = Path(__file__).parents[2] / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"


def _finding(cause: str, score: int) -> Finding:
    return Finding(cause=cause, rule=cause, title=cause, score=score, severity="medium", explanation=cause, working="")


def test_the_root_takes_the_consequences_place_and_score() -> None:
    findings = [_finding("spec-net-loss", 82), _finding("kv-cache-pressure", 70), _finding("spec-low-acceptance", 59)]
    out = root_first(findings, {"spec.acceptance_is_root": (True, "why")})
    assert [(f.cause, f.score) for f in out] == [
        ("spec-low-acceptance", 82),
        ("spec-net-loss", 82),
        ("kv-cache-pressure", 70),
    ]
    assert out[0].severity == "high" and out[0].explanation.endswith("(why)")


def test_the_cost_of_k_as_root_puts_the_net_loss_first() -> None:
    findings = [_finding("spec-low-acceptance", 70), _finding("spec-net-loss", 40)]
    out = root_first(findings, {"spec.acceptance_is_root": (False, "why")})
    assert [(f.cause, f.score) for f in out] == [("spec-net-loss", 70), ("spec-low-acceptance", 70)]


@pytest.mark.parametrize("is_root", [True, False])
def test_nothing_moves_without_both_causes_or_when_the_root_leads(is_root: bool) -> None:
    alone = [_finding("spec-net-loss", 82), _finding("kv-cache-pressure", 50)]
    assert root_first(alone, {"spec.acceptance_is_root": (is_root, "")}) == alone
    root = "spec-low-acceptance" if is_root else "spec-net-loss"
    other = "spec-net-loss" if is_root else "spec-low-acceptance"
    leading = [_finding(root, 60), _finding(other, 80)]  # already first, whatever the scores
    assert root_first(leading, {"spec.acceptance_is_root": (is_root, "")}) == leading


def test_the_story_drafter_that_accepts_two_percent_is_the_root() -> None:
    """The story's DFlash drafter accepts ~2% of its 15 tokens where the method's published acceptance (6.3) is
    above the break-even (about 4): the fact says the acceptance is the root, and the report puts it first."""
    lines = list(enumerate(STORY.read_text().splitlines(), 1))
    parsed = parse_sources([LineSource(STORY.name, lines)])
    diagnosis, profile = diagnose_parsed(parsed, load_rules())
    assert profile.value("spec.acceptance_is_root") is True
    causes = [f.cause for f in diagnosis.findings]
    assert causes.index("spec-low-acceptance") < causes.index("spec-net-loss")
    assert diagnosis.problems[0].causes[:2] == ["spec-low-acceptance", "spec-net-loss"]
