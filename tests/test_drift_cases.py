"""The committed drift cases (fixtures/drift/*.yaml, written by `make drift`), replayed without any download.

Every case recorded as `right` must still parse to the expected event with the expected values; a case
recorded otherwise that now comes out right is reported (refresh the fixtures with `make drift`).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml
from drift.classify import classify
from drift.relevance import load_relevance

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "drift"


def _load() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for path in sorted(FIXTURES.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for case in data["cases"]:
            cases.append(case | {"fixture": path.name})
    return cases


CASES = _load()
RIGHT = [c for c in CASES if c["status"] == "right"]
NOT_RIGHT = [c for c in CASES if c["status"] != "right"]


def test_fixtures_exist_for_the_checked_releases() -> None:
    names = {p.name for p in FIXTURES.glob("*.yaml")}
    assert {"vllm-0.33.0.yaml", "sglang-0.5.23.yaml"} <= names
    by_engine = {e: sum(1 for c in CASES if c["engine"] == e) for e in ("vllm", "sglang")}
    assert by_engine["vllm"] >= 200 and by_engine["sglang"] >= 90, by_engine


@pytest.mark.parametrize("case", RIGHT, ids=[f"{c['fixture']}:{c['source']}" for c in RIGHT])
def test_right_case_stays_right(case: dict[str, Any]) -> None:
    outcome = classify(case["line"], case["engine"], case["event"], case["fields"])
    assert outcome.status == "right", (
        f"{case['fixture']}: regression on {case['key']}\n"
        f"  line:     {case['line']}\n"
        f"  expected: {case['event']} {case['fields']}\n"
        f"  got:      {outcome.status}, events {outcome.got}, differing {outcome.diff}"
    )


def test_cases_not_yet_right_are_reported_when_they_improve() -> None:
    improved = []
    for case in NOT_RIGHT:
        outcome = classify(case["line"], case["engine"], case["event"], case["fields"])
        if outcome.status == "right" or (outcome.status != case["status"] and case["status"] == "missed"):
            improved.append(f"{case['fixture']}: {case['key']}: {case['status']} -> {outcome.status}")
    if improved:
        warnings.warn(
            f"{len(improved)} drift case(s) improved; run `make drift` to refresh the fixtures:\n  "
            + "\n  ".join(improved),
            stacklevel=1,
        )


def test_cases_match_the_relevance_list() -> None:
    """Expectations come from bench/drift/relevance.yaml: an edit there without `make drift` is caught here."""
    relevance = load_relevance()
    for engine in ("vllm", "sglang"):
        entries = {e.key: e for e in relevance.for_engine(engine)}
        for case in (c for c in CASES if c["engine"] == engine):
            entry = entries.get(case["key"])
            assert entry is not None, f"{case['fixture']}: {case['key']} is no longer in relevance.yaml"
            assert (entry.event, entry.fields, entry.cause) == (case["event"], case["fields"], case["cause"]), (
                f"{case['fixture']}: {case['key']} differs from relevance.yaml; run `make drift`"
            )
