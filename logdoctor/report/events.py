"""Events as JSON lines: what `logdoctor parse --format jsonl` prints and golden event files hold.

    {"type":"compile_time","source":"vllm.log","line":42,"kind":"torch_compile","seconds":82.29,...}

`type`, `source` and `line` (and `end_line` when the event spans lines) come first, then the event's
own fields in model order, so a diff of two golden files reads naturally.
"""

from __future__ import annotations

from typing import Any

from logdoctor.events import EventBase


def event_record(event: EventBase) -> dict[str, Any]:
    data = event.model_dump(mode="json", exclude_none=True)
    ordered = {"type": data.pop("type"), "source": data.pop("source"), "line": data.pop("line")}
    if "end_line" in data:
        ordered["end_line"] = data.pop("end_line")
    ordered.update(data)
    return ordered


def event_json(event: EventBase) -> str:
    """One compact JSON line (without the newline), exactly as `logdoctor parse --format jsonl` writes it.

    pydantic's serializer keeps the model's field order (`type` is EventBase's first field, then
    `source`, `line`, `end_line`), which is the order `event_record` gives, at a fraction of the cost."""
    return event.model_dump_json(exclude_none=True)
