"""Parse one rendered line and say how logdoctor did: right, wrong-values, wrong-event or missed.

classify("(Worker_TP0 pid=226) WARNING ... Custom allreduce is disabled because ...", "vllm",
         "CustomAllReduce", {"enabled": False, "reason": "no-p2p"})
-> Outcome(status="right", got=["CustomAllReduce"], diff={})
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from logdoctor.events import EngineVersion, EngineWarning, EventBase
from logdoctor.parse.pipeline import parse_text

Status = Literal["right", "wrong-values", "wrong-event", "missed"]
STATUSES: tuple[Status, ...] = ("right", "wrong-values", "wrong-event", "missed")


@dataclass
class Outcome:
    status: Status
    got: list[str] = field(default_factory=list)  # event classes produced
    diff: dict[str, tuple[Any, Any]] = field(default_factory=dict)  # field -> (expected, got), best candidate


def same(expected: Any, got: Any) -> bool:
    if isinstance(expected, bool) or isinstance(got, bool):
        return expected is got
    if isinstance(expected, int | float) and isinstance(got, int | float):
        return math.isclose(float(expected), float(got), rel_tol=1e-3, abs_tol=1e-6)
    if isinstance(expected, list) and isinstance(got, list):
        return len(expected) == len(got) and all(same(e, g) for e, g in zip(expected, got, strict=True))
    if isinstance(expected, dict) and isinstance(got, dict):
        return all(k in got and same(v, got[k]) for k, v in expected.items())
    return bool(expected == got)


def _events(line: str, engine: str) -> list[EventBase]:
    events = parse_text(line, source="drift", engine=engine)
    # A version inferred from the header shape says nothing about the message, and the warning vocabulary's reading
    # of a line no line type understood is not an event of a line type (bench/drift/warnings.py counts it).
    return [
        e
        for e in events
        if not (isinstance(e, EngineVersion) and e.origin == "inferred from header shape")
        and not isinstance(e, EngineWarning)
    ]


def classify(line: str, engine: str, event: str, fields: dict[str, Any]) -> Outcome:
    events = _events(line, engine)
    got = [type(e).__name__ for e in events]
    if event == "none-fits":
        return Outcome("missed", got)
    matching = [e for e in events if type(e).__name__ == event]
    if not matching:
        return Outcome("wrong-event" if events else "missed", got)
    best: dict[str, tuple[Any, Any]] | None = None
    for ev in matching:
        diff = {
            name: (want, getattr(ev, name))
            for name, want in fields.items()
            if not same(want, _plain(getattr(ev, name)))
        }
        if not diff:
            return Outcome("right", got)
        if best is None or len(diff) < len(best):
            best = diff
    return Outcome("wrong-values", got, best or {})


def _plain(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return value
