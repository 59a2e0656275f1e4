"""Events as JSON lines: what `logdoctor parse --format jsonl` prints and golden event files hold.

    {"type": "CompileTime", "source": "vllm.log", "line": 42, "kind": "torch_compile", "seconds": 82.29, ...}

`type`, `source` and `line` (and `end_line` when the event spans lines) come first, then the event's
own fields in model order, so a diff of two golden files reads naturally.
"""

from __future__ import annotations

import json
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
    """One JSON line (without the newline), exactly as `logdoctor parse --format jsonl` writes it."""
    return json.dumps(event_record(event), ensure_ascii=False)
