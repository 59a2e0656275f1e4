"""Records (logdoctor.records.Record) behave as the pydantic models they replaced, checked against pydantic itself.

Each record class gets its pydantic twin (`pydantic_twin`: same fields, annotations, defaults, frozen and forbid);
the same inputs go to both: every value a fixture's events hold, and awkward ones (text for numbers, an int for a
float, a tuple for a list, an unknown field). Both must accept with equal dumps, JSON included, or both refuse.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from logdoctor.engine import diffresult, result
from logdoctor.engine.rules import Rule, load_rules, rule_model
from logdoctor.events import EVENT_TYPES, CompileTime, ProcessInfo, SchedulerStats
from logdoctor.parse.pipeline import EventStream
from logdoctor.perf import hardware
from logdoctor.records import Record, pydantic_twin
from logdoctor.report import json as json_report
from logdoctor.report import observed, timeline

ROOT = Path(__file__).resolve().parents[1]
TWINS: dict[type[Record], type[BaseModel]] = {}


def _records(*modules: Any) -> list[type[Record]]:
    return [
        v
        for m in modules
        for v in vars(m).values()
        if isinstance(v, type)
        and issubclass(v, Record)
        and v.__module__ == m.__name__
        and not v.__name__.startswith("_")
    ]


RECORDS = [*EVENT_TYPES, ProcessInfo, *_records(result, diffresult, json_report, observed, timeline, hardware)]


def _both(cls: type[Record], data: dict[str, Any]) -> tuple[Any, Any]:
    twin = pydantic_twin(cls, TWINS)
    try:
        mine: Any = cls(**data)
    except ValueError as exc:
        mine = exc
    try:
        theirs: Any = twin(**data)
    except ValidationError as exc:
        theirs = exc
    return mine, theirs


def _agree(cls: type[Record], data: dict[str, Any]) -> None:
    mine, theirs = _both(cls, data)
    if isinstance(theirs, ValidationError) or isinstance(mine, ValueError):
        assert isinstance(theirs, ValidationError) and isinstance(mine, ValueError), (cls.__name__, data, mine, theirs)
        return
    for options in ({}, {"exclude_none": True}, {"mode": "json"}, {"mode": "json", "exclude_none": True}):
        assert mine.model_dump(**options) == theirs.model_dump(**options), (cls.__name__, data, options)
    assert mine.model_dump_json(exclude_none=True) == theirs.model_dump_json(exclude_none=True)
    assert mine.model_dump_json() == theirs.model_dump_json()
    assert repr(mine) == repr(theirs).replace(type(theirs).__name__, cls.__name__, 1)


@pytest.mark.parametrize("cls", RECORDS, ids=lambda c: c.__name__)
def test_a_record_has_its_twins_fields(cls: type[Record]) -> None:
    twin = pydantic_twin(cls, TWINS)
    assert list(twin.model_fields) == list(cls.model_fields)
    for name, info in twin.model_fields.items():
        assert info.is_required() == (name in cls._required), name
        if name in cls._defaults:
            assert info.default == cls._defaults[name], name


def _fixture_events() -> list[Any]:
    events: list[Any] = []
    for log in sorted((ROOT / "fixtures" / "logs").rglob("*.log"))[:80]:
        text = log.read_text(encoding="utf-8", errors="replace")
        events.extend(EventStream(str(log), enumerate(text.splitlines(), 1)))
    return events


def test_fixture_events_convert_as_pydantic_converts_them() -> None:
    events = _fixture_events()
    assert len({type(e) for e in events}) >= 15  # most event types, from real and constructed logs
    for event in events:
        data = event.model_dump()
        _agree(type(event), data)
        # as a grammar passes them: numbers as the text the regex matched
        loose = {k: (str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v) for k, v in data.items()}
        _agree(type(event), loose)
        assert pickle.loads(pickle.dumps(event)) == event  # noqa: S301 - our own bytes


def test_events_built_unchecked_hold_what_the_constructor_would_keep() -> None:
    """`model_construct` takes values as they are: every event a line type builds with it (the batch lines of a busy
    SGLang server) must hold exactly what the checking constructor makes of the same values, types included."""
    logs = sorted((ROOT / "fixtures" / "logs").rglob("sglang*.log"))
    events = [
        event
        for log in logs
        for event in EventStream(str(log), enumerate(log.read_text(encoding="utf-8", errors="replace").splitlines(), 1))
        if event.type in ("scheduler_stats", "spec_decode_stats")
    ]
    assert len(events) > 100
    for event in events:
        checked = type(event)(**{name: value for name, value in vars(event).items()})
        assert checked == event
        for name in type(event).model_fields:
            assert type(getattr(checked, name)) is type(getattr(event, name)), (event, name)
        assert checked.model_dump_json() == event.model_dump_json()


AWKWARD: list[Any] = [
    "82.29", "82", " 7 ", "1_000", "1.0", "1e3", "", "x", "inf", 82, 82.0, 82.5, True, False, 0, 1, 2, None,
    [1, 2], (1, 2), ["a"], {"a": 1}, {"a": True}, {1: 2}, b"5", 1e-5, 1e-7, 2**70, "yes", "off", "sglang", "metrics",
]  # fmt: skip


@pytest.mark.parametrize("cls", [CompileTime, SchedulerStats, ProcessInfo], ids=lambda c: c.__name__)
def test_awkward_values_convert_or_fail_as_in_pydantic(cls: type[Record]) -> None:
    base: dict[str, Any] = {"source": "x.log", "line": 1} if cls is not ProcessInfo else {"role": "Worker"}
    required = {"kind": "torch_compile", "message": "m", "format": "vllm-v1"}
    base.update({k: v for k, v in required.items() if k in cls.model_fields})
    for name in cls.model_fields:
        for value in AWKWARD:
            _agree(cls, {**base, name: value})
    _agree(cls, {**base, "no_such_field": 1})
    _agree(cls, {k: v for k, v in base.items() if k != "source"})


def test_records_are_frozen_and_copied_with_updates() -> None:
    event = CompileTime(source="x", line=1, kind="torch_compile", message="m", seconds=3)
    assert event.seconds == 3.0 and isinstance(event.seconds, float)
    with pytest.raises(AttributeError):
        event.seconds = 4.0  # type: ignore[misc]
    later = event.model_copy(update={"seconds": 5.0})
    assert (later.seconds, event.seconds) == (5.0, 3.0)
    assert event == CompileTime(source="x", line=1, kind="torch_compile", message="m", seconds=3.0)
    assert hash(ProcessInfo(role="Worker", pid=1)) == hash(ProcessInfo(role="Worker", pid=1))


def test_json_floats_are_written_as_pydantic_writes_them() -> None:
    values = [
        1e-5,
        1.234e-5,
        -2.5e-5,
        1e-6,
        9.9e-7,
        1e-100,
        5e-324,
        1e16,
        1.5e300,
        0.0,
        -0.0,
        0.1,
        float("inf"),
        float("nan"),
    ]
    for value in values:
        _agree(CompileTime, {"source": "x", "line": 1, "kind": "warmup", "message": "m", "seconds": value})
    mine = CompileTime(source="x", line=1, kind="warmup", message="m", seconds=1e-5).model_dump_json()
    assert json.loads(mine)["seconds"] == 1e-5


def test_the_rule_model_is_the_rule_record() -> None:
    model = rule_model()
    assert list(model.model_fields) == list(Rule.model_fields)
    for name, info in model.model_fields.items():
        assert info.is_required() == (name in Rule._required), name
        if name in Rule._defaults:
            assert info.default == Rule._defaults[name], name
    for item in load_rules(()):
        data = item.rule.model_dump()
        assert Rule(**model.model_validate(data).model_dump()) == item.rule, item.id
