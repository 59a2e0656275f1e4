"""`logdoctor.testing` from pytest: diagnose a string, assert on findings, run a case."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor.engine.rules import load_rules
from logdoctor.testing import assert_fires, assert_not_fires, diagnose_text, discover, run_case
from tests.testing.conftest import DFLASH, HEALTHY, STORY, rule_file

RULES = load_rules()


@pytest.fixture(scope="module")
def story_text() -> str:
    return (STORY / f"{DFLASH}.log").read_text(encoding="utf-8")


def test_assert_fires_returns_the_best_finding(story_text: str) -> None:
    diagnosis = diagnose_text(story_text, rules=RULES)
    finding = assert_fires(diagnosis, cause="spec-low-acceptance", rank=1, min_score=75)
    assert finding.rule == "low-acceptance"
    assert assert_fires(diagnosis, rule="low-acceptance", rank=1).score == finding.score
    assert_not_fires(diagnosis, cause="cuda-graphs-disabled")


def test_assert_fires_says_what_happened_instead(story_text: str) -> None:
    diagnosis = diagnose_text(story_text, rules=RULES)
    with pytest.raises(AssertionError, match=r"missing: cause cuda-graphs-disabled did not fire: .*eager-decode was"):
        assert_fires(diagnosis, cause="cuda-graphs-disabled")
    with pytest.raises(AssertionError, match="rule no-such-rule was not evaluated"):
        assert_fires(diagnosis, rule="no-such-rule")
    with pytest.raises(AssertionError, match=r"rank mismatch: cause spec-net-loss expected at rank 1, found at rank 2"):
        assert_fires(diagnosis, cause="spec-net-loss", rank=1)
    with pytest.raises(AssertionError, match=r"fired with a lower score than expected: below-break-even scored \d+"):
        assert_fires(diagnosis, cause="spec-net-loss", min_score=100)
    with pytest.raises(AssertionError, match="unexpected: cause spec-net-loss fired: below-break-even scored"):
        assert_not_fires(diagnosis, cause="spec-net-loss")
    with pytest.raises(TypeError, match="exactly one of"):
        assert_fires(diagnosis)
    with pytest.raises(TypeError, match="exactly one of"):
        assert_not_fires(diagnosis, cause="spec-net-loss", rule="below-break-even")


def test_a_private_rule_pack_alone(tmp_path: Path) -> None:
    """A user's rule directory, without the built-in rules, on a line pasted into the test."""
    source = rule_file(Path(RULES[0].path).parents[1], "custom-allreduce-off")
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "my-allreduce.yaml").write_text(
        source.read_text(encoding="utf-8").replace("id: custom-allreduce-off", "id: my-allreduce"), encoding="utf-8"
    )
    line = (
        "(VllmWorker rank=0 pid=14480) WARNING 07-28 06:36:18 [custom_all_reduce.py:137] Custom allreduce is "
        "disabled because it's not supported on more than two PCIe-only GPUs. To silence this warning, specify "
        "disable_custom_all_reduce=True explicitly."
    )
    diagnosis = diagnose_text(line, engine="vllm", rules_dirs=[pack], builtin=False)
    assert [f.rule for f in diagnosis.findings] == ["my-allreduce"]
    assert_fires(diagnosis, rule="my-allreduce", rank=1)


def test_run_case_and_assert_passed(cases: Path) -> None:
    result = run_case(cases / f"{HEALTHY}.log", rules=RULES)
    assert result.passed, result.describe()
    result.assert_passed()
    (cases / f"{DFLASH}.expect.yaml").write_text(
        "source: x\nfires: [{cause: cuda-graphs-disabled}]\n", encoding="utf-8"
    )
    failed = run_case(cases / f"{DFLASH}.expect.yaml", rules=RULES)
    assert not failed.passed
    assert [f.kind for f in failed.failures] == ["missing"]
    with pytest.raises(AssertionError, match=r"FAILED .*\n  .*expect.yaml:2:\d+: missing: cause cuda-graphs-disabled"):
        failed.assert_passed()


def test_run_case_reports_a_bad_file_instead_of_raising(tmp_path: Path) -> None:
    log = tmp_path / "alone.log"
    log.write_text("hello\n", encoding="utf-8")
    result = run_case(log, rules=RULES)
    assert result.error is not None and "no expectation file alone.expect.yaml beside it" in result.error
    assert not result.passed


def test_discover_for_pytest_parametrize(cases: Path) -> None:
    found = discover([cases])
    assert [c.name.rsplit("/", 1)[-1] for c in found.cases] == [DFLASH, HEALTHY]
    assert found.cases[0].names == (f"{DFLASH}.log",)
    assert not found.bad
