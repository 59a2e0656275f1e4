"""A table of a server's metrics over time, as load harnesses and dashboards print it: a header naming the columns,
then one row an interval.

    time        tok/s   gen/s  req/s    ttft95    itl95   run  wait   kv%  preem
    10:04:30     3527    2890   8.60      7225       80   195   121    99  12.67
        -> SchedulerStats(format="metrics", generation_throughput=2890, running=195, waiting=121,
                          kv_cache_usage=0.99, preemptions=12)

The table is read by its header, not by a tool's name: a column is a scheduler reading where its name says which
(running, waiting, the KV cache's use, generated tokens a second, preemptions), whatever the harness; a table
without a KV-cache column is left to other readers. A row is a row when it has the header's number of cells (a
marker such as `*` may follow its first) and a number in each column read.
"""

from __future__ import annotations

import re

from logdoctor.events import EventBase, SchedulerStats
from logdoctor.inputs.bench.results import as_number
from logdoctor.parse import blocks
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import BlockFn, Grammar, ParseContext, case

# Column names, lower-case, as harnesses and dashboards write them -> the reading.
_COLUMNS: dict[str, str] = {
    "run": "running",
    "running": "running",
    "num_running": "running",
    "wait": "waiting",
    "waiting": "waiting",
    "num_waiting": "waiting",
    "queue": "waiting",
    "pending": "waiting",
    "kv%": "kv",
    "kv": "kv",
    "kv_usage": "kv",
    "kv_cache_usage": "kv",
    "kv_cache_usage_perc": "kv",
    "gen/s": "generation",
    "gen_tok/s": "generation",
    "gen_tok_s": "generation",
    "gen_throughput": "generation",
    "generation_tokens_per_s": "generation",
    # a count of preemptions; an abbreviated column (`preem`) may be a rate, which is not a count
    "preemptions": "preemptions",
    "num_preemptions": "preemptions",
}
_KV_KEYWORDS = ("kv%", "KV%", "kv_usage", "kv_cache_usage")
_CELL_SPLIT_RE = re.compile(r"[\s|]+")
# a harness's mark on a row (`10:01:30*`: inside the scored window)
_MARKER_RE = re.compile(r"(?<=\d)[*+!]+(?=\s|$)")
# Markdown's `|---|---|` under the header
_SEPARATOR_RE = re.compile(r"^\s*\|?[\s|:-]*-{3,}[\s|:-]*$")


def _cells(text: str) -> list[str]:
    return [c for c in _CELL_SPLIT_RE.split(text.strip()) if c]


def parse_header(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    names = [c.lower() for c in _cells(line.text)]
    readings = {i: _COLUMNS[n] for i, n in enumerate(names) if n in _COLUMNS}
    # a header: short column names, a KV-cache column and two more readings (a sentence naming "KV%" is none)
    if "kv" not in readings.values() or len(readings) < 3 or len(names) > 40 or max(map(len, names)) > 24:
        return None
    percent = any(names[i].endswith("%") for i, reading in readings.items() if reading == "kv")
    ctx.block = _read_rows(len(names), readings, percent=percent)
    return []


def _read_rows(width: int, readings: dict[int, str], *, percent: bool) -> BlockFn:
    def read(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        if _SEPARATOR_RE.match(line.text):
            return []
        cells = _cells(line.text)
        if blocks.is_blank(line) or len(cells) != width:
            ctx.block = None
            return [] if blocks.is_blank(line) else None
        values: dict[str, float] = {}
        for index, reading in readings.items():
            value = as_number(_MARKER_RE.sub("", cells[index]) if index == 0 else cells[index])
            if not isinstance(value, int | float):
                ctx.block = None
                return None
            values[reading] = float(value)
        kv = values.get("kv")
        if kv is not None and (percent or kv > 1.0):
            kv /= 100.0  # a percentage column, or a share written as one
        event = SchedulerStats(
            **ctx.base(line, "bench"),
            format="metrics",
            generation_throughput=values.get("generation"),
            running=_count(values.get("running")),
            waiting=_count(values.get("waiting")),
            preemptions=_count(values.get("preemptions")),
            kv_cache_usage=kv,
            extra={"tool": "metrics-table"},
        )
        return [event]

    return read


def _count(value: float | None) -> int | None:
    return None if value is None else int(value)


GRAMMAR = Grammar(
    "bench.metrics_table",
    "bench",
    _KV_KEYWORDS,
    parse_header,
    (
        case(
            "harness-table",
            "time        tok/s   gen/s  req/s    ttft95    itl95   run  wait   kv%  preem\n"
            "10:04:00*    3879    2982   9.92       243       74   221     0    93   0.00\n"
            "10:04:30     3527    2890   8.60      7225       80   195   121    99  12.67",
            ("scheduler_stats", {"format": "metrics", "running": 221, "waiting": 0, "kv_cache_usage": 0.93}),
            ("scheduler_stats", {"generation_throughput": 2890.0, "waiting": 121, "preemptions": None}),
            exact=True,
        ),
        case(
            "markdown-columns",
            "| step | running | waiting | kv_cache_usage |\n|---|---|---|---|\n| 1 | 32 | 4 | 0.97 |",
            ("scheduler_stats", {"running": 32, "waiting": 4, "kv_cache_usage": 0.97}),
            exact=True,
        ),
        case("kv-usage-word-in-prose", "we watched KV% climb while the queue grew"),
        case("kv_usage-only", "kv_usage 0.5"),
        case("KV%-column-alone", "KV% 93"),
    ),
)
