"""Time series for the HTML report, computed from the parsed events of one deployment.

    (APIServer pid=2961) INFO 05-08 14:07:10 [loggers.py:257] Engine 000: Avg prompt throughput: 46.0 tokens/s,
        Avg generation throughput: 17.9 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.4%
    -> decode_tok_s (0.0, 17.9), decode_tok_s_per_request (0.0, 17.9), running (0.0, 1), waiting (0.0, 0),
       kv_usage_percent (0.0, 1.4)

`t` is seconds since the deployment's first throughput line (so two deployments overlay on the moment
they started serving); `origin` is the log's clock at t = 0, for a wall-clock axis. `gaps` says where a series'
line is broken (an idle stretch with no stats lines is not drawn as a slope). Start-up events get negative times: markers keep them (the report lists them),
series drop them (an SGLang warm-up prefill minutes before serving would squeeze every chart into its
last pixels; `warmup` counts them). Events without a timestamp are not placed.
vLLM prints no year: `MM-DD HH:MM:SS` is read in a leap year so `02-29` parses. Two lines of one
series within the same second (an SGLang prefill and decode line) are 1 ms apart (REPEAT_STEP).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from logdoctor.events import (
    CustomAllReduce,
    EngineFailure,
    EngineVersion,
    EventBase,
    PerfWarning,
    Preemption,
    SchedulerStats,
    SpecDecodeStats,
    StartupConfig,
)
from logdoctor.records import Record, field

SERIES = (
    "decode_tok_s",
    "decode_tok_s_per_request",
    "acceptance_length",
    "kv_usage_percent",
    "running",
    "waiting",
)
# Timestamps have whole seconds: a second line of one series within the same second is placed this much later,
# so every line keeps its point (a chart needs distinct x values) and the order the log printed them in.
REPEAT_STEP = 0.001
MarkerKind = Literal["restart", "preemption", "warning", "failure"]
_DECODE_FORMATS = ("vllm-v0", "vllm-v1", "sglang-decode")
_START_ORIGINS = ("version line", "logo", "engine init")


class _Model(Record):
    """Frozen, unknown fields refused (logdoctor.records.Record)."""


class Marker(_Model):
    t: float
    kind: MarkerKind
    label: str  # from the log: escaped wherever it is shown
    source: str
    line: int


class Timeline(_Model):
    """Each series is a list of `[t, value]` pairs in time order."""

    series: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    markers: list[Marker] = field(default_factory=list)
    unplaced: int = 0  # stats events without a timestamp
    warmup: int = 0  # points before the first throughput line, not drawn (start-up and warm-up requests)
    # The log's clock at t = 0 (`2026-05-08T14:07:10`, as printed: no time zone), so a chart's axis can say the
    # time of day; `dated`: the log printed the year (vLLM prints `MM-DD` only: the date is then shown without it).
    origin: str | None = None
    dated: bool = False

    def points(self, name: str) -> int:
        return len(self.series.get(name, []))


# A series is drawn as a broken line where two points are further apart than this many of its usual intervals
# (the median spacing of its points): vLLM prints stats every 10 s while it serves and nothing while idle, so a
# line joined across an idle hour would show a climb or a fall that never happened.
GAP_INTERVALS = 3.0
MIN_GAP_SECONDS = 1.0  # points within this are never a gap (lines of one second are REPEAT_STEP apart)


def gaps(points: Sequence[tuple[float, float]]) -> list[float]:
    """Where `points` (in time order) should not be joined: the midpoint of each interval longer than
    GAP_INTERVALS times the series' median interval (and than MIN_GAP_SECONDS)."""
    steps = sorted(b[0] - a[0] for a, b in itertools.pairwise(points) if b[0] - a[0] > 10 * REPEAT_STEP)
    if len(steps) < 2:
        return []
    usual = steps[len(steps) // 2]
    limit = max(GAP_INTERVALS * usual, MIN_GAP_SECONDS)
    return [round((a[0] + b[0]) / 2, 3) for a, b in itertools.pairwise(points) if b[0] - a[0] > limit]


def parse_timestamp(text: str) -> datetime | None:
    for fmt, prefix in (("%Y-%m-%d %H:%M:%S", ""), ("%Y-%m-%d %H:%M:%S.%f", ""), ("%Y-%m-%d %H:%M:%S", "2000-")):
        try:
            return datetime.strptime(prefix + text, fmt)
        except ValueError:
            continue
    return None


def _decode(event: EventBase) -> bool:
    return (
        isinstance(event, SchedulerStats)
        and event.format in _DECODE_FORMATS
        and event.generation_throughput is not None
    )


def _origin(events: Sequence[tuple[datetime, EventBase]]) -> datetime | None:
    for when, event in events:
        if _decode(event):
            return when
    return events[0][0] if events else None


def _label(event: EventBase) -> str:
    message = getattr(event, "message", None)
    if isinstance(message, str) and message:
        return message
    return event.type


def timeline_of(events: Sequence[EventBase]) -> Timeline:
    """The series and markers of one deployment's events (all its sources together)."""
    placed: list[tuple[datetime, EventBase]] = []
    unplaced = 0
    dated = True
    for event in events:
        when = parse_timestamp(event.timestamp) if event.timestamp else None
        if when is None:
            unplaced += isinstance(event, SchedulerStats | SpecDecodeStats)
            continue
        stamp = event.timestamp or ""
        dated = dated and stamp[:4].isdigit() and stamp[4:5] == "-"
        placed.append((when, event))
    dated = dated and bool(placed)
    placed.sort(key=lambda pair: pair[0])  # a stable sort: one source's order is kept within a second
    origin = _origin(placed)
    series: dict[str, list[tuple[float, float]]] = {name: [] for name in SERIES}

    warmup = 0

    def add(name: str, t: float, value: float) -> None:
        nonlocal warmup
        if t < 0:
            warmup += 1
            return
        points = series[name]
        if points and points[-1][0] >= t:  # another line of the same second: keep both, in log order
            t = round(points[-1][0] + REPEAT_STEP, 6)
        points.append((t, value))

    markers: list[Marker] = []
    serving = False  # a decode line was seen since the last start: the next start is a restart
    preemptions: int | None = None
    for when, event in placed:
        assert origin is not None
        t = (when - origin).total_seconds()

        def mark(kind: MarkerKind, label: str, t: float = t, event: EventBase = event) -> None:
            markers.append(Marker(t=t, kind=kind, label=label, source=event.source, line=event.line))

        if isinstance(event, SchedulerStats):
            if _decode(event):
                assert event.generation_throughput is not None
                serving = True
                add("decode_tok_s", t, event.generation_throughput)
                if event.running:
                    add("decode_tok_s_per_request", t, round(event.generation_throughput / event.running, 3))
            if event.kv_cache_usage is not None:
                add("kv_usage_percent", t, round(event.kv_cache_usage * 100, 3))
            if event.running is not None:
                add("running", t, event.running)
            waiting = event.waiting if event.waiting is not None else event.queue
            if waiting is not None:
                add("waiting", t, waiting)
            if event.preemptions is not None:
                if preemptions is not None and event.preemptions > preemptions:
                    mark("preemption", f"{event.preemptions - preemptions} preemption(s)")
                preemptions = event.preemptions
        elif isinstance(event, SpecDecodeStats):
            if event.mean_acceptance_length is not None:
                add("acceptance_length", t, event.mean_acceptance_length)
        elif isinstance(event, EngineVersion | StartupConfig) and serving:
            if isinstance(event, StartupConfig) or event.origin in _START_ORIGINS:
                serving = False
                mark("restart", "engine started again")
        elif isinstance(event, Preemption):
            mark("preemption", event.message)
        elif isinstance(event, EngineFailure):
            mark("failure", event.message)
        elif (
            isinstance(event, PerfWarning)
            or (isinstance(event, CustomAllReduce) and not event.enabled)
            or event.level in ("WARNING", "ERROR")
        ):
            mark("warning", _label(event))
    return Timeline(
        series={k: v for k, v in series.items() if v},
        markers=_distinct(markers),
        unplaced=unplaced,
        warmup=warmup,
        origin=origin.isoformat() if origin is not None else None,
        dated=dated,
    )


def _distinct(markers: list[Marker]) -> list[Marker]:
    """One marker for a message every rank printed at the same second (`Worker_TP0`, `Worker_TP1`)."""
    seen: set[tuple[float, str, str]] = set()
    out: list[Marker] = []
    for marker in markers:
        key = (marker.t, marker.kind, marker.label)
        if key not in seen:
            seen.add(key)
            out.append(marker)
    return out
