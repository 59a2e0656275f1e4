"""The value model of a profile: a fact's value with the lines behind it, and the readers of raw config values.

    Fact(value=2.0, refs=[Ref("vllm.log", 12)], origin="non-default args")

Configuration dumps print values as Python reprs or strings (`'True'`, `'null'`, `'0.92'`,
`{'__enum__': 'CUDAGraphMode.FULL'}`); `as_number`, `as_bool` and `enum_name` read them the same way
for every engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from logdoctor.events import EventBase


@dataclass(frozen=True)
class Ref:
    """A line that supports a fact."""

    source: str
    line: int
    end_line: int | None = None


@dataclass
class Fact:
    value: Any
    refs: list[Ref] = field(default_factory=list)
    origin: str = ""


def ref(event: EventBase) -> Ref:
    return Ref(event.source, event.line, event.end_line)


def is_none_like(value: Any) -> bool:
    return value is None or value in ("None", "null", "")


def as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float | str):
        try:
            return float(value)
        except (ValueError, OverflowError):  # not a number, or an integer no float holds (310 digits)
            return None
    return None


def as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if value in ("True", "true"):
        return True
    if value in ("False", "false"):
        return False
    return None


def enum_name(value: Any) -> str | None:
    """`{'__enum__': 'CUDAGraphMode.FULL_AND_PIECEWISE', ...}` -> 'FULL_AND_PIECEWISE'."""
    if isinstance(value, dict) and "__enum__" in value:
        return str(value["__enum__"]).rsplit(".", 1)[-1]
    if isinstance(value, str) and value:
        return value.rsplit(".", 1)[-1].upper()
    return None
