"""Events as JSON lines and as the `logdoctor parse` table.

    {"type":"compile_time","source":"vllm.log","line":42,"kind":"torch_compile","seconds":82.29,...}

`type`, `source` and `line` (and `end_line` when the event spans lines) come first, then the event's
own fields in model order, so a diff of two golden files reads naturally. Both forms pass through
`sanitize.clean`: no control character of a log reaches the terminal, raw or as markup.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from logdoctor.events import EventBase
from logdoctor.sanitize import clean, clean_text, one_line

# What a serialized event shows when it holds a control or bidi character: JSON escapes C0 (`\u001b`, `\r`),
# and passes DEL, C1 and the bidi characters raw. A literal backslash-b in a log matches too (harmless: the
# event is cleaned, which changes nothing).
_UNSAFE_JSON = re.compile(r"\\u00[01][0-9a-fA-F]|\\[bfr]|[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def event_record(event: EventBase) -> dict[str, Any]:
    data = clean(event).model_dump(mode="json", exclude_none=True)
    ordered = {"type": data.pop("type"), "source": data.pop("source"), "line": data.pop("line")}
    if "end_line" in data:
        ordered["end_line"] = data.pop("end_line")
    ordered.update(data)
    return ordered


def event_json(event: EventBase) -> str:
    """One compact JSON line (without the newline), exactly as `logdoctor parse --format jsonl` writes it.

    pydantic's serializer keeps the model's field order (`type` is EventBase's first field, then
    `source`, `line`, `end_line`), which is the order `event_record` gives, at a fraction of the cost."""
    text = event.model_dump_json(exclude_none=True)
    if _UNSAFE_JSON.search(text) is None:
        return text
    return clean(event).model_dump_json(exclude_none=True)


def event_summary(event: EventBase) -> str:
    data = event.model_dump(
        mode="json",
        exclude_none=True,
        exclude={"type", "source", "line", "end_line", "timestamp", "level", "process", "engine"},
    )
    text = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in data.items())
    return text if len(text) <= 300 else text[:297] + "..."


def event_table(title: str, events: Iterable[EventBase]) -> Table:
    """The `logdoctor parse` table: every cell a `Text` (a model named `[link=...]x[/link]` stays literal)."""
    table = Table(title=Text(one_line(title)), show_lines=False, expand=False)
    table.add_column("line", justify="right", style="cyan", no_wrap=True)
    table.add_column("process", no_wrap=True)
    table.add_column("event", style="bold", no_wrap=True)
    table.add_column("values")
    for event in events:
        event = clean(event)
        line = str(event.line) if event.end_line is None else f"{event.line}-{event.end_line}"
        proc = event.process.label() if event.process else ""
        table.add_row(Text(line), Text(proc), Text(event.type), Text(event_summary(event)))
    return table


def say(console: Console, message: str, style: str = "") -> None:
    """One line of progress or notes on stderr: log, host and file text shown as text, never as markup."""
    console.print(Text(clean_text(message), style=style), highlight=False, soft_wrap=True)
