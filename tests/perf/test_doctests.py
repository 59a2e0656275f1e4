"""The examples in the perf modules' docstrings run and give what they show."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest

from logdoctor.facts import speculation
from logdoctor.perf import adapter, effects, hardware, model


@pytest.mark.parametrize("module", [hardware, model, effects, adapter, speculation])
def test_docstring_examples(module: ModuleType) -> None:
    result = doctest.testmod(module)
    assert result.failed == 0
