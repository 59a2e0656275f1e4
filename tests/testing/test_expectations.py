"""Expectation files: the schema, and errors that point at file:line:column."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor.testing.expectations import ExpectationError, load_expectation
from tests.testing.conftest import STORY


def load_text(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "case.expect.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ExpectationError) as info:
        load_expectation(path, "case.expect.yaml")
    return info.value.problems


@pytest.mark.parametrize("path", sorted(STORY.glob("*.expect.yaml")), ids=lambda p: p.name)
def test_the_story_expectations_are_valid(path: Path) -> None:
    loaded = load_expectation(path)
    assert loaded.expectation.source


def test_every_key(tmp_path: Path) -> None:
    path = tmp_path / "case.expect.yaml"
    path.write_text(
        """\
source: a test box
constructed: false
engine: sglang
healthy: false
fires:
  - {cause: kv-cache-pressure, rank: 1, min_score: 60}
  - rule: preemptions
must_not_fire: [{cause: cuda-graphs-disabled}, {rule: eager-decode}]
ruled_out: [low-acceptance]
insufficient_data: [tp-spans-nodes]
todo:
  - {cause: tp-over-slow-link, note: needs topology}
  - {rule: long-startup, fires: false, note: model download}
allow:
  - {cause: torch-compile-or-warmup, reason: restarts often}
""",
        encoding="utf-8",
    )
    loaded = load_expectation(path, "case.expect.yaml")
    expect = loaded.expectation
    assert expect.engine == "sglang"
    assert expect.fires[0].rank == 1 and expect.fires[1].rule == "preemptions"
    assert not expect.todo[1].fires
    assert not expect.good_log
    assert str(loaded.where("fires", 1)) == "case.expect.yaml:7:5"
    assert str(loaded.where("ruled_out", 0)) == "case.expect.yaml:9:13"


@pytest.mark.parametrize(
    ("text", "good_log"),
    [
        ("source: x\n", True),
        ("source: x\nhealthy: true\nfires: [{cause: kv-cache-pressure}]\n", True),
        ("source: x\nhealthy: false\n", False),
        ("source: x\nfires: [{cause: kv-cache-pressure}]\n", False),
    ],
)
def test_which_cases_are_good_logs(tmp_path: Path, text: str, good_log: bool) -> None:
    path = tmp_path / "case.expect.yaml"
    path.write_text(text, encoding="utf-8")
    assert load_expectation(path).expectation.good_log is good_log


def test_source_is_required(tmp_path: Path) -> None:
    assert load_text(tmp_path, "fires: []\n") == ["case.expect.yaml:1:1: source: Field required"]


def test_unknown_key_points_at_the_key(tmp_path: Path) -> None:
    problems = load_text(tmp_path, "source: x\nmust_not_fires: []\n")
    assert problems == [
        "case.expect.yaml:2:1: must_not_fires: unknown key 'must_not_fires' (did you mean 'must_not_fire'?)"
    ]


def test_entry_needs_exactly_one_target(tmp_path: Path) -> None:
    problems = load_text(
        tmp_path, "source: x\nfires:\n  - {rank: 1}\n  - {cause: engine-failure, rule: engine-failed}\n"
    )
    assert problems == [
        "case.expect.yaml:3:5: fires.0: give exactly one of `cause` or `rule`",
        "case.expect.yaml:4:5: fires.1: give exactly one of `cause` or `rule`",
    ]


def test_todo_needs_a_note_and_allow_a_reason(tmp_path: Path) -> None:
    problems = load_text(tmp_path, "source: x\ntodo: [{rule: a}]\nallow: [{rule: b, reason: ''}]\n")
    assert problems[0].startswith("case.expect.yaml:2:8: todo.0.note: Field required")
    assert problems[1].startswith("case.expect.yaml:3:27: allow.0.reason: String should have at least 1 character")


def test_healthy_cannot_expect_a_serious_finding(tmp_path: Path) -> None:
    problems = load_text(tmp_path, "source: x\nhealthy: true\nfires: [{cause: kv-cache-pressure, min_score: 60}]\n")
    assert problems == [
        "case.expect.yaml:3:47: fires.0.min_score: healthy: true, but cause kv-cache-pressure is expected to "
        "score 60 (a healthy log has no finding at 50 or more)"
    ]


def test_contradictions(tmp_path: Path) -> None:
    problems = load_text(
        tmp_path, "source: x\nfires: [{rule: a}]\nmust_not_fire: [{rule: a}]\nruled_out: [b]\ninsufficient_data: [b]\n"
    )
    assert problems == [
        "case.expect.yaml:3:17: must_not_fire.0: rule a is also in `fires`",
        "case.expect.yaml:5:21: insufficient_data.0: rule b is also in `ruled_out`",
    ]


def test_duplicate_keys_and_bad_yaml(tmp_path: Path) -> None:
    assert load_text(tmp_path, "source: x\nsource: y\n") == ["case.expect.yaml:2:1: duplicate key 'source'"]
    problems = load_text(tmp_path, "source: x\n  fires: [\n")
    assert problems[0].startswith("case.expect.yaml:2:8: invalid YAML: ")
    assert load_text(tmp_path, "- a list\n") == [
        "case.expect.yaml:1:1: an expectation file must be a mapping (source:, fires:, ...)"
    ]
