"""The hand-written condition reader gives pyparsing's trees, columns included, or leaves the text to pyparsing."""

from __future__ import annotations

from typing import Any

import pytest

from logdoctor.engine import conditions
from logdoctor.engine.conditioncache import encode
from logdoctor.engine.conditiongrammar import _read
from logdoctor.engine.conditions import ConditionError, _pyparse


def _both(kind: str, text: str) -> tuple[Any, Any]:
    fast = _read(kind, text)
    try:
        slow: Any = encode(_pyparse(kind, text))
    except ConditionError:
        slow = "error"
    return (encode(fast) if fast is not None else None), slow


def _builtin_texts(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    from logdoctor.engine.rules import load_rules

    seen: list[tuple[str, str]] = []
    real = conditions._parse

    def record(kind: str, text: str, known: Any) -> Any:
        seen.append((kind, text))
        return real(kind, text, known)

    monkeypatch.setenv("LOGDOCTOR_NO_CACHE", "1")
    monkeypatch.setattr(conditions, "_parse", record)
    load_rules()
    return seen


def test_every_builtin_condition_reads_as_pyparsing_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _builtin_texts(monkeypatch)
    assert len(texts) > 200
    read = 0
    for kind, text in texts:
        fast, slow = _both(kind, text)
        if fast is not None:
            read += 1
            assert fast == slow, text
    assert read == len(texts)  # the built-in rules never need pyparsing


TRICKY = [
    "a.b > 1",
    "  a.b\n  >= 2 and\n c",
    "not a and b or not not c",
    "(a > 1) and (b or c)",
    "(a + 1) * 2 > 3",
    "(a)",
    "(a) > 1",
    "- - a < -3.5e2",
    "a - -b * c / d + e",
    "x not in ['A', \"B\", 1, true, false]",
    "x in []",
    "x NOT IN ['a']",
    "mean(a.b) >= 0.9 AND share(c.d > 0) < 0.5",
    "SHARE(c.d <= 1 + 2) > 0",
    "exists(a) Or EXISTS(b)",
    "mean > 1",
    "mean (a) > 1",
    "android > 1 and order < 2",
    "truex",
    "true",
    "false == a",
    "a < b < c",
    "a >",
    "a and",
    "Mean(a) > 1",
    "max(a, b) > 1",
    "a ==== b",
    "'it\\'s' == a",
    "'unclosed == a",
    "a $ b",
    "exists.x > 1",
    "a.b.c_1 != 'x y'",
    "((a > 1))",
    "(a > 1) + 2 > 3",
    "not (a in 'xyz')",
    "1.",
    "[1, 2,]",
    "in > 1",
    "a in b in c",
    "\ta\r\n>\t1",
    # one fact name alone (read without the reader), and names that begin with a keyword or an aggregation
    "spec.num_tokens",
    "mean",
    "mean.x",
    "and.x",
    "notx",
    "true.x",
    "share",
    "exists_x",
    " a.b",
    "a.b ",
]


@pytest.mark.parametrize("text", TRICKY)
@pytest.mark.parametrize("kind", ["condition", "expression"])
def test_the_reader_reads_what_pyparsing_reads_or_leaves_it(kind: str, text: str) -> None:
    fast, slow = _both(kind, text)
    if fast is not None:
        assert fast == slow
