"""Rule loading: the built-in set is valid, errors carry file:line:column, scoring is continuous."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor.engine.evaluate import strength
from logdoctor.engine.rules import CAUSES, ScoreCurve, load_rules
from logdoctor.errors import RuleError

CAUSES_MD = Path(__file__).resolve().parents[2].parent / "shared" / "CAUSES.md"


def test_builtin_rules_load_and_cover_every_cause() -> None:
    rules = load_rules()
    assert len(rules) >= 25
    assert {r.rule.cause for r in rules} == set(CAUSES)


def test_causes_match_the_public_contract() -> None:
    if not CAUSES_MD.exists():
        pytest.skip("../shared/CAUSES.md not beside this checkout")
    text = CAUSES_MD.read_text(encoding="utf-8")
    for cause in CAUSES:
        assert f"`{cause}`" in text


def _write(tmp_path: Path, name: str, body: str) -> Path:
    directory = tmp_path / "rules"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / name).write_text(body, encoding="utf-8")
    return directory


GOOD = """\
id: my-rule
cause: kv-cache-pressure
title: t
engines: [vllm]
requires: [kv.usage]
when: "max(kv.usage) > 0.9"
impact: 50
explain: "usage {max(kv.usage) * 100:.0f}%"
"""


def test_user_rules_load_beside_builtin(tmp_path: Path) -> None:
    directory = _write(tmp_path, "r.yaml", GOOD)
    rules = load_rules([directory], builtin=False)
    assert [r.id for r in rules] == ["my-rule"]


def test_unknown_fact_points_at_file_line_and_column(tmp_path: Path) -> None:
    directory = _write(tmp_path, "r.yaml", GOOD.replace('when: "max(kv.usage) > 0.9"', 'when: "max(kv.usag) > 0.9"'))
    with pytest.raises(RuleError) as info:
        load_rules([directory], builtin=False)
    message = str(info.value)
    assert "r.yaml:6:12: when: unknown fact 'kv.usag' (did you mean 'kv.usage'?)" in message


def test_every_error_of_a_rule_set_is_reported(tmp_path: Path) -> None:
    _write(tmp_path, "a.yaml", GOOD.replace("cause: kv-cache-pressure", "cause: kv-pressure"))
    directory = _write(tmp_path, "b.yaml", GOOD.replace("impact: 50", "impact: 500").replace("my-rule", "other"))
    _write(tmp_path, "c.yaml", GOOD.replace("requires: [kv.usage]", "requires: [kv.usag]").replace("my-rule", "third"))
    with pytest.raises(RuleError) as info:
        load_rules([directory], builtin=False)
    message = str(info.value)
    assert "a.yaml:2:8: cause: unknown cause 'kv-pressure'" in message
    assert "b.yaml:7:9: impact:" in message
    assert "c.yaml:5:12: requires.0: unknown fact 'kv.usag'" in message


def test_duplicate_ids_and_unknown_keys(tmp_path: Path) -> None:
    _write(tmp_path, "a.yaml", GOOD)
    directory = _write(tmp_path, "b.yaml", GOOD + "severity: high\n")
    with pytest.raises(RuleError) as info:
        load_rules([directory], builtin=False)
    assert "b.yaml:9:1: severity: Extra inputs are not permitted" in str(info.value)
    directory2 = _write(tmp_path / "x", "c.yaml", GOOD)
    (directory2 / "d.yaml").write_text(GOOD, encoding="utf-8")
    with pytest.raises(RuleError, match="duplicate rule id 'my-rule'"):
        load_rules([directory2], builtin=False)


def test_strength_curve_is_continuous_and_passes_its_anchors() -> None:
    lower_is_worse = ScoreCurve(metric="x", info=2.5, warn=1.3)
    assert strength(2.5, lower_is_worse) == pytest.approx(0.25)
    assert strength(1.3, lower_is_worse) == pytest.approx(0.75)
    values = [strength(x / 10, lower_is_worse) for x in range(5, 40)]
    assert values == sorted(values, reverse=True)
    assert min(values) > 0 and max(values) < 1
    higher_is_worse = ScoreCurve(metric="x", info=0.1, warn=0.5)
    assert strength(0.9, higher_is_worse) > strength(0.5, higher_is_worse) > strength(0.1, higher_is_worse)
