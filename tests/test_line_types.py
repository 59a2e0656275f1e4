"""Every registered line type, checked both ways: each case gives its events, and each line type, keyword and
grammar-module pattern is exercised by some case. This one harness replaces the per-engine sample tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor.parse.grammar import Case, Grammar
from logdoctor.registry import REGISTRY
from logdoctor.testing.linetypes import case_failures, coverage_gaps

GRAMMARS = REGISTRY.grammars()
CASES = [(g, c) for g in GRAMMARS for c in g.cases]


@pytest.mark.parametrize(("grammar", "case"), CASES, ids=[f"{g.name}/{c.id}" for g, c in CASES])
def test_case_gives_its_events(grammar: Grammar, case: Case) -> None:
    failures = case_failures(case)
    assert not failures, "\n".join(failures)


KNOWN_GAPS = Path(__file__).with_name("line_type_gaps.txt")


def test_every_line_type_keyword_and_pattern_is_exercised() -> None:
    """No new gap, and no stale entry in the list of known gaps (it only shrinks)."""
    known = {line for line in KNOWN_GAPS.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")}
    gaps = set(coverage_gaps(GRAMMARS))
    new, closed = sorted(gaps - known), sorted(known - gaps)
    assert not new, "line types, keywords or patterns without a case:\n" + "\n".join(new)
    assert not closed, f"no longer gaps: remove them from {KNOWN_GAPS.name}:\n" + "\n".join(closed)


def test_case_ids_are_unique_within_a_line_type() -> None:
    for grammar in GRAMMARS:
        ids = [c.id for c in grammar.cases]
        assert len(ids) == len(set(ids)), grammar.name


def test_every_engine_has_line_types_with_cases() -> None:
    for spec in REGISTRY.specs():
        assert spec.grammars, spec.name
        assert all(g.engine == spec.name for g in spec.grammars), spec.name
