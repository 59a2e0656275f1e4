"""The condition language: parsing, three-valued evaluation, load-time checks."""

from __future__ import annotations

from typing import Any

import pytest

from logdoctor.engine.conditions import ConditionError, parse_condition, parse_expression


class Facts:
    def __init__(self, **values: Any) -> None:
        self.values = {k.replace("__", "."): v for k, v in values.items()}

    def value(self, name: str) -> Any:
        return self.values.get(name)


FACTS = Facts(
    spec__acceptance_length=[1.1, 1.2, 1.0],
    spec__num_tokens=15.0,
    attention__backend="XFORMERS",
    cuda_graphs__enabled=False,
    sched__waiting=[0.0, 3.0, 4.0, 0.0],
    kv__usage=[0.5, 0.97],
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mean(spec.acceptance_length) < 1.3 + 0.1 * spec.num_tokens", True),
        ("mean(spec.acceptance_length) > 2", False),
        ("attention.backend in ['xformers', 'TORCH_SDPA']", True),
        ("attention.backend not in ['FLASH_ATTN']", True),
        ("share(sched.waiting > 0) >= 0.5", True),
        ("share(sched.waiting > 0) > 0.5", False),
        ("not cuda_graphs.enabled", True),
        ("cuda_graphs.enabled", False),
        ("max(kv.usage) >= 0.95 and share(sched.waiting > 0) >= 0.5", True),
        ("-spec.num_tokens < -3", True),
        ("spec.num_tokens * 2 - 1 > 28.5", True),
        ("(spec.num_tokens - 5) / 2 == 5", True),
        ("exists(kv.tokens)", False),
        ("exists(kv.usage)", True),
        ("count(kv.usage) == 2", True),
    ],
)
def test_evaluates(text: str, expected: bool) -> None:
    assert parse_condition(text).eval(FACTS) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("kv.tokens < 1000", None),  # missing fact: unknown, not false
        ("not (kv.tokens < 1000)", None),
        ("kv.tokens < 1000 and spec.num_tokens > 100", False),  # one false operand decides `and`
        ("kv.tokens < 1000 or spec.num_tokens > 1", True),  # one true operand decides `or`
        ("kv.tokens < 1000 or spec.num_tokens > 100", None),
    ],
)
def test_missing_facts_are_unknown(text: str, expected: bool | None) -> None:
    assert parse_condition(text).eval(FACTS) is expected


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        ("spec.acceptence_length > 1", "did you mean 'spec.acceptance_length'", 1),
        ("spec.acceptance_length > 1", "time series", 1),
        ("spec.num_tokens > 1 and mean(spec.num_tokens) > 1", "single value", 30),
        ("spec.num_tokens >", "cannot parse", 17),
        ("import os", "cannot parse", 8),
    ],
)
def test_errors_name_the_problem_and_column(text: str, message: str, column: int) -> None:
    with pytest.raises(ConditionError) as info:
        parse_condition(text)
    assert message in str(info.value)
    assert info.value.column == column


def test_expression_arithmetic() -> None:
    assert parse_expression("mean(spec.acceptance_length) * 10").eval(FACTS) == pytest.approx(11.0)
    assert parse_expression("spec.num_tokens / 0").eval(FACTS) == float("inf")
