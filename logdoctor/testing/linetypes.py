"""Checking line types against their cases: the harness behind tests/test_line_types.py, usable for an engine
package outside logdoctor too.

    from logdoctor.testing.linetypes import case_failures, coverage_gaps
    for grammar in SPEC.grammars:
        for case in grammar.cases:
            assert not case_failures(case)
    assert not coverage_gaps(SPEC.grammars)
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from logdoctor.events import EventBase
from logdoctor.parse.grammar import Case, Grammar
from logdoctor.parse.pipeline import EventStream, parse_text
from logdoctor.registry import is_pattern


def matches(actual: Any, expected: Any) -> bool:
    """`actual` has every value of `expected`: floats within 0.1% of the expected value (or 1e-6, as
    `pytest.approx(expected, rel=1e-3, abs=1e-6)`), dicts by the keys named."""
    if isinstance(expected, float):
        return isinstance(actual, int | float) and abs(actual - expected) <= max(1e-3 * abs(expected), 1e-6)
    if isinstance(expected, dict) and isinstance(actual, dict):
        return all(k in actual and matches(actual[k], v) for k, v in expected.items())
    if isinstance(expected, list) and isinstance(actual, list):
        return len(actual) == len(expected) and all(matches(a, e) for a, e in zip(actual, expected, strict=True))
    return bool(actual == expected)


def find_event(events: Iterable[EventBase], type_: str, fields: dict[str, Any]) -> EventBase | None:
    """The first event of `type_` whose fields match `fields` (see `matches`)."""
    for event in events:
        data = event.model_dump()
        if event.type == type_ and all(k in data and matches(data[k], v) for k, v in fields.items()):
            return event
    return None


def describe(events: Iterable[EventBase]) -> str:
    return "\n".join(
        str(e.model_dump(exclude_none=True, exclude={"source", "timestamp", "level", "process", "message"}))
        for e in events
    )


def case_failures(case: Case) -> list[str]:
    """What a case expected and did not get; a case that expects nothing must give no event."""
    events = parse_text(case.text, source=f"case {case.id}", engine=case.engine)
    if not case.expect:
        return [f"{case.id}: expected no event, got:\n{describe(events)}"] if events else []
    if case.exact:
        types = [e.type for e in events]
        if types != [t for t, _ in case.expect]:
            return [f"{case.id}: expected exactly {[t for t, _ in case.expect]}, got {types}:\n{describe(events)}"]
        return [
            f"{case.id}: event {i + 1} ({type_}) does not have {fields}:\n{describe([event])}"
            for i, ((type_, fields), event) in enumerate(zip(case.expect, events, strict=True))
            if find_event([event], type_, fields) is None
        ]
    return [
        f"{case.id}: no {type_} event with {fields} among:\n{describe(events)}"
        for type_, fields in case.expect
        if find_event(events, type_, fields) is None
    ]


def claims(grammar: Grammar, case: Case) -> bool:
    """Does the line type, offered alone, recognise some line of the case?"""
    stream = EventStream(f"case {case.id}", enumerate(case.text.split("\n"), start=1), grammars=(grammar,))
    for _ in stream:
        pass
    return stream.stats.candidates > stream.stats.unrecognised


def module_patterns(grammar: Grammar) -> dict[str, re.Pattern[str]]:
    """The compiled regexes at the top level of the module that defines the line type's parse function
    (compiled on first use where the registry imported the module: registry.LazyPattern)."""
    module = sys.modules.get(getattr(grammar.parse, "__module__", ""))
    if module is None:
        return {}
    return {name: value for name, value in vars(module).items() if is_pattern(value)}


def coverage_gaps(grammars: Sequence[Grammar]) -> list[str]:
    """Line types none of whose cases they recognise, keywords no case of their line type contains, and
    top-level patterns of a grammar module that no case of that module's line types matches."""
    gaps: list[str] = []
    texts_by_module: dict[str, list[str]] = {}
    for grammar in grammars:
        texts = [c.text for c in grammar.cases]
        texts_by_module.setdefault(getattr(grammar.parse, "__module__", ""), []).extend(texts)
        if not grammar.cases:
            gaps.append(f"{grammar.name}: no cases")
            continue
        if not any(claims(grammar, c) for c in grammar.cases):
            gaps.append(f"{grammar.name}: recognises none of its own cases")
        for keyword in grammar.keywords:
            if not any(keyword in t for t in texts):
                gaps.append(f"{grammar.name}: keyword {keyword!r} is in none of its cases")
    seen: set[str] = set()
    for grammar in grammars:
        module = getattr(grammar.parse, "__module__", "")
        if module in seen:
            continue
        seen.add(module)
        texts = texts_by_module.get(module, [])
        for name, pattern in module_patterns(grammar).items():
            if not any(pattern.search(line) for t in texts for line in t.split("\n")):
                gaps.append(f"{module}.{name}: matches no case of the module's line types")
    return gaps
