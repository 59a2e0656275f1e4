"""A summary of labelled measurements, one a line: the runs a user measured and named.

    Eager mode:    199.104 ms ± 4.669 ms      -> BenchmarkResult(tool="labelled-summary", mean_e2e_ms=199.104,
    Compiled mode: 51.841 ms ± 1.415 ms           values={"label": "Eager mode"}), and one for "Compiled mode"

Scripts and people summarise a comparison this way (`Baseline: 45.2 tok/s`, `With EAGLE: 81.0 tok/s`): a short
label, a colon, one number and its unit (a time, or a rate in tokens or requests a second), maybe a spread. A line
alone says nothing of a comparison, so a line is read only beside another of the same kind of unit within a few
lines; each names its own run (logdoctor.pipeline.runlabels).
"""

from __future__ import annotations

import re

from logdoctor.events import BenchmarkResult, EventBase

TOOL = "labelled-summary"
# `  - Eager mode:  199.104 ms ± 4.669 ms`, `Baseline (TP=2): 45.2 tok/s (n=5)`
_LINE_RE = re.compile(
    r"^\s*(?:[-*+]\s+)?(?P<label>[A-Za-z][\w .,/()+=#-]{0,60}?)\s*:\s*(?P<value>\d+(?:\.\d+)?)\s*"
    r"(?P<unit>ms|s|sec|secs|seconds|tok/s|toks/s|tokens/s|token/s|tokens/sec|tok/sec|req/s|requests/s)"
    r"(?![\w/])(?:\s*(?:±|\+/-)\s*\d+(?:\.\d+)?\s*[a-z/]*)?\s*(?:\([^()]*\))?\s*$"
)
_TIME_MS = {"ms": 1.0, "s": 1000.0, "sec": 1000.0, "secs": 1000.0, "seconds": 1000.0}
_REQUESTS = frozenset({"req/s", "requests/s"})
_GAP = 3  # lines between two summary lines of one summary (a blank line, a fence)


def _kind(unit: str) -> str:
    return "time" if unit in _TIME_MS else "requests" if unit in _REQUESTS else "tokens"


class SummaryReader:
    """Watches the lines no line type took for labelled measurements; a line's event is given once a second line
    of the same kind of unit follows within `_GAP` lines."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.pending: tuple[EventBase, str] | None = None  # a first line and its text, until a second one follows
        self.last: tuple[int, str] | None = None  # the last summary line read: its number and kind of unit

    def offer(self, number: int, text: str) -> list[tuple[EventBase, str]]:
        """The events (each with its line's text) that this line completes."""
        end = text.rstrip()[-1:]
        if end not in ("s", "c", ")") or ":" not in text:  # a unit (`ms`, `tok/s`, `sec`) or a note ends the line
            return []
        m = _LINE_RE.match(text)
        if m is None:
            return []
        unit = m.group("unit")
        kind = _kind(unit)
        value = float(m.group("value"))
        if value <= 0:
            return []
        label = m.group("label").strip()
        event = BenchmarkResult(
            source=self.source,
            line=number,
            engine="bench",
            tool=TOOL,
            mean_e2e_ms=value * _TIME_MS[unit] if kind == "time" else None,
            request_throughput=value if kind == "requests" else None,
            output_throughput=value if kind == "tokens" else None,
            values={"label": label},
        )
        joined = self.last is not None and self.last[1] == kind and 0 < number - self.last[0] <= _GAP
        self.last = (number, kind)
        if joined:
            first, self.pending = self.pending, None
            return [first, (event, text)] if first is not None else [(event, text)]
        self.pending = (event, text)
        return []


def own_label(event: EventBase) -> str | None:
    """The label a summary line gives its own measurement."""
    if isinstance(event, BenchmarkResult) and event.tool == TOOL:
        label = event.values.get("label")
        return label if isinstance(label, str) else None
    return None
