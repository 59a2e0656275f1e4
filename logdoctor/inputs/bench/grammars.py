"""Benchmark results users paste beside a log (catalogue/sglang-nccl.md §10): the story's concurrency table,
`vllm bench serve` / `benchmark_serving.py` and `sglang.bench_serving` result blocks (also pasted without their
title line), SGLang's accuracy benchmarks (`benchmark/gsm8k/bench_sglang.py`) and vLLM's
speculative-decoding example (`examples/offline_inference/spec_decode.py`); offline runs (`bench_one_batch_server`,
`LLM.generate`'s progress bar, `vllm bench throughput`) are read in logdoctor.inputs.bench.offline.

    C | Agg tok/s | Per-req tok/s | TTFT(s) | Tokens | Wall(s) | Ok | Fail      -> one BenchmarkResult a row
    1 | 18.0      | 18.0          | 0.21    | 512    | 28.6    | 1  | 0

    ============ Serving Benchmark Result ============                     -> one BenchmarkResult a block,
    Successful requests:                     128                           emitted at the closing `=====`
    Output token throughput (tok/s):         862.09                        (or at a blank line, a foreign
    ...                                                                     line, or the end of the source)

Units are normalised: latencies in milliseconds (`TTFT(s)` columns are converted), rates 0..1.
"""

from __future__ import annotations

import re

from logdoctor.events import EventBase
from logdoctor.inputs.bench import metricstable, offline, specexample
from logdoctor.inputs.bench.results import OPEN, SPACES_RE, Result, as_number, emit, field_key
from logdoctor.parse import blocks
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import BlockFn, Grammar, ParseContext, case

# --- `Serving Benchmark Result` blocks (vLLM and SGLang) --------------------------------------------

_SERVING_HEADER_RE = re.compile(r"^\s*=+ ?(?P<kind>Serving|Offline Throughput) Benchmark Result ?=+\s*$")
_ROW_RE = re.compile(r"^\s*(?P<label>[A-Za-z(][^:]*?):\s*(?P<value>.*?)\s*$")

# label (lower-case, typos included) -> BenchmarkResult field and a unit factor
_SERVING_FIELDS: dict[str, tuple[str, float]] = {
    "successful requests": ("completed", 1),
    "failed requests": ("failed", 1),
    "max request concurrency": ("concurrency", 1),
    "max reqeuest concurrency": ("concurrency", 1),  # SGLang 0.3.6-0.4.5
    "maximum request concurrency": ("concurrency", 1),
    "request throughput (req/s)": ("request_throughput", 1),
    "output token throughput (tok/s)": ("output_throughput", 1),
    "total token throughput (tok/s)": ("total_throughput", 1),
    "mean ttft (ms)": ("mean_ttft_ms", 1),
    "median ttft (ms)": ("median_ttft_ms", 1),
    "mean tpot (ms)": ("mean_tpot_ms", 1),
    "median tpot (ms)": ("median_tpot_ms", 1),
    "mean itl (ms)": ("mean_itl_ms", 1),
    "mean e2e latency (ms)": ("mean_e2e_ms", 1),
    "mean e2el (ms)": ("mean_e2e_ms", 1),
    "accept length": ("acceptance_length", 1),  # SGLang
    "acceptance length": ("acceptance_length", 1),  # vLLM
}
_INT_FIELDS = {"completed", "failed"}


def _serving_row(result: Result, label: str, raw: str) -> None:
    lowered = label.lower()
    percent = raw.endswith("%")
    value = as_number(raw.rstrip("%")) if raw else ""
    # `Per-position acceptance (%):` is followed by `  Position 0:   74.00` rows, in percent without the sign.
    if percent or lowered.endswith("(%)") or lowered.startswith("position "):
        value = round(float(value) / 100, 6) if isinstance(value, int | float) else value
    mapped = _SERVING_FIELDS.get(lowered)
    if mapped is not None and isinstance(value, int | float):
        name, factor = mapped
        result.set(name, int(value) if name in _INT_FIELDS else float(value) * factor)
        return
    if lowered == "backend" and result.tool == "vllm-bench-serve":
        result.tool = "sglang-bench-serving"
    if raw:
        key = field_key(label)
        result.values.setdefault(f"acceptance_{key}" if lowered.startswith("position ") else key, value)


def _read_serving(result: Result) -> BlockFn:
    def read(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        text = line.text
        rule = blocks.RULE_RE.match(text)
        if rule and rule.group("c") == "=" and not rule.group("title"):
            result.end = line.number
            ctx.block = None
            return emit(result, ctx)
        if rule:
            result.end = line.number
            return []
        m = _ROW_RE.match(text)
        if m and not blocks.is_blank(line):
            _serving_row(result, m.group("label").strip(), m.group("value"))
            result.end = line.number
            return []
        ctx.block = None
        events = emit(result, ctx)
        if blocks.is_blank(line):
            return events
        blocks.stash(ctx, events)
        return None

    return read


def parse_serving_header(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _SERVING_HEADER_RE.match(line.text)
    if not m:
        return None
    # sglang.bench_offline_throughput prints the same rows under its own title (the engine in-process, no server)
    tool = "sglang-bench-offline-throughput" if m.group("kind") == "Offline Throughput" else "vllm-bench-serve"
    result = Result(tool=tool, first=line)
    ctx.state[OPEN] = result
    ctx.block = _read_serving(result)
    return []


# sglang.bench_serving prints `Backend:` as its first row (`{:<40} {:<10}`): a block pasted without its title line
# begins there.
_SERVING_FIRST_ROW_RE = re.compile(r"^\s*Backend:\s{20,}(?P<value>\S+)\s*$")


def parse_serving_first_row(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _SERVING_FIRST_ROW_RE.match(line.text)
    if not m:
        return None
    result = Result(tool="sglang-bench-serving", first=line, end=line.number)
    result.values["backend"] = m.group("value")
    ctx.state[OPEN] = result
    ctx.block = _read_serving(result)
    return []


# --- SGLang's accuracy benchmarks (benchmark/gsm8k/bench_sglang.py, mmlu, hellaswag, ...) ------------------------

# They print four lines at the end of a run; the latency is the whole run's, the throughput its generated tokens
# over that time:
#   Accuracy: 0.955 / Invalid: 0.000 / Latency: 5.809 s / Output throughput: 4113.320 token/s
_OPEN_ACCURACY = "bench.open_accuracy"
_ACCURACY_RE = re.compile(r"^\s*Accuracy: (?P<value>[\d.]+)\s*$")
_ACCURACY_ROW_RE = re.compile(
    r"^\s*(?:Invalid: (?P<invalid>[\d.]+)|Latency: (?P<latency>[\d.]+) s|Output throughput: (?P<tps>[\d.]+) token/s)\s*$"
)


def _read_accuracy(result: Result) -> BlockFn:
    def read(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        m = _ACCURACY_ROW_RE.match(line.text)
        if m:
            result.end = line.number
            if m.group("invalid"):
                result.values["invalid"] = float(m.group("invalid"))
            elif m.group("latency"):
                result.values["latency_s"] = float(m.group("latency"))
            else:
                result.set("output_throughput", float(m.group("tps")))
            return []
        ctx.block = None
        events = _accuracy_events(result, ctx)
        if blocks.is_blank(line):
            return events
        blocks.stash(ctx, events)
        return None

    return read


def _accuracy_events(result: Result, ctx: ParseContext) -> list[EventBase]:
    """The result, once it holds a latency or a throughput (an `Accuracy:` line alone measures no speed)."""
    ctx.state.pop(_OPEN_ACCURACY, None)
    return emit(result, ctx) if "latency_s" in result.values or result.fields else []


def parse_accuracy(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _ACCURACY_RE.match(line.text)
    if not m:
        return None
    result = Result(tool="sglang-bench-accuracy", first=line, end=line.number)
    result.values["accuracy"] = float(m.group("value"))
    ctx.state[_OPEN_ACCURACY] = result
    ctx.block = _read_accuracy(result)
    return []


# --- vLLM's examples/offline_inference/spec_decode.py --------------------------------------------------------

# The example reads the engine's spec-decode counters (`LLM.get_metrics()`) at the end of the run and prints them:
# until 2025 as `num_drafts: N` rows and `acceptance at token i: r`, since then as a `Speculative Decoding Stats`
# block (`Number of drafts:`, `Mean acceptance length:`, `Output token throughput (tok/s):`).


# --- tables: the story's concurrency table, the bench_one_batch_server summary -------------------------

_SEPARATOR_RE = re.compile(r"^[\s|:+=-]*-[\s|:+=-]*$")

# column header (lower-case, spaces squeezed) -> field and unit factor; other columns go to `values`
_TABLE_COLUMNS: dict[str, tuple[str, float]] = {
    "c": ("concurrency", 1),
    "concurrency": ("concurrency", 1),
    "agg tok/s": ("output_throughput", 1),
    "per-req tok/s": ("per_request_throughput", 1),
    "ttft(s)": ("mean_ttft_ms", 1000),
    "ttft (s)": ("mean_ttft_ms", 1000),
    "ttft(ms)": ("mean_ttft_ms", 1),
    "ttft (ms)": ("mean_ttft_ms", 1),
    "ok": ("completed", 1),
    "fail": ("failed", 1),
    "batch size": ("concurrency", 1),
    "output throughput (tok/s)": ("output_throughput", 1),
    "acc length": ("acceptance_length", 1),
    "itl (ms)": ("mean_itl_ms", 1),
}


def _cells(text: str) -> list[str]:
    cells = [c.strip() for c in text.strip().split("|")]
    if cells and cells[0] == "":
        cells = cells[1:]
    if cells and cells[-1] == "":
        cells = cells[:-1]
    return cells


def _read_table(tool: str, columns: list[str]) -> BlockFn:
    def read(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        text = line.text
        if not blocks.is_blank(line) and _SEPARATOR_RE.match(text):
            return []
        cells = _cells(text) if "|" in text else []
        first = as_number(cells[0]) if cells else ""
        if blocks.is_blank(line) or len(cells) != len(columns) or isinstance(first, str):
            ctx.block = None
            return [] if blocks.is_blank(line) else None
        result = Result(tool=tool, first=line)
        for column, cell in zip(columns, cells, strict=True):
            value = as_number(cell)
            mapped = _TABLE_COLUMNS.get(column)
            if mapped is not None and isinstance(value, int | float):
                name, factor = mapped
                result.set(name, int(value) if name in _INT_FIELDS else round(float(value) * factor, 6))
            elif cell and cell.lower() != "n/a":
                result.values[field_key(column)] = value
        return emit(result, ctx)

    return read


def parse_table_header(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    if "|" not in line.text:
        return None
    columns = [SPACES_RE.sub(" ", c.lower()) for c in _cells(line.text)]
    if "agg tok/s" in columns:
        tool = "concurrency-table"
    elif columns[:2] == ["batch size", "input len"]:
        tool = "sglang-bench-one-batch"
    else:
        return None
    ctx.block = _read_table(tool, columns)
    return []


GRAMMARS: list[Grammar] = [
    Grammar(
        "bench.serving_result_untitled",
        "bench",
        ("Backend:",),
        parse_serving_first_row,
        (
            case(
                "sglang-bench-serving-pasted-without-its-title",
                "Backend:                                 vllm      \n"
                "Traffic request rate:                    256.0     \n"
                "Successful requests:                     1024      \n"
                "Output token throughput (tok/s):         2120.64   \n"
                "Median ITL (ms):                         26.52     ",
                (
                    "benchmark_result",
                    {"tool": "sglang-bench-serving", "output_throughput": 2120.64, "completed": 1024},
                ),
                exact=True,
            ),
        ),
    ),
    Grammar(
        "bench.accuracy",
        "bench",
        ("Accuracy: ",),
        parse_accuracy,
        (
            case(
                "gsm8k-bench-sglang",
                "Accuracy: 0.955\nInvalid: 0.000\nLatency: 5.809 s\nOutput throughput: 4113.320 token/s",
                (
                    "benchmark_result",
                    {
                        "tool": "sglang-bench-accuracy",
                        "output_throughput": 4113.32,
                        "values": {"accuracy": 0.955, "invalid": 0.0, "latency_s": 5.809},
                    },
                ),
                exact=True,
            ),
            case("accuracy-alone-measures-no-speed", "Accuracy: 0.955\nsomething else"),
        ),
    ),
    specexample.GRAMMAR,
    metricstable.GRAMMAR,
    Grammar(
        "bench.serving_result",
        "bench",
        ("Serving Benchmark Result", "Offline Throughput Benchmark Result"),
        parse_serving_header,
        (
            case("sample-1", "============ Serving Benchmark Result ============"),
            case(
                "sglang-bench-offline-throughput",
                "====== Offline Throughput Benchmark Result =======\n"
                "Backend:                                 engine    \n"
                "Successful requests:                     2000      \n"
                "Benchmark duration (s):                  350.25    \n"
                "Last generation throughput (tok/s):      33.36     \n"
                "Request throughput (req/s):              5.71      \n"
                "Output token throughput (tok/s):         1109.45   \n"
                "Total token throughput (tok/s):          2898.68   \n"
                "==================================================",
                (
                    "benchmark_result",
                    {"tool": "sglang-bench-offline-throughput", "output_throughput": 1109.45, "completed": 2000},
                ),
                exact=True,
            ),
        ),
    ),
    Grammar(
        "bench.table",
        "bench",
        ("Agg tok/s", "| batch size | input len |"),
        parse_table_header,
        (
            case("sample-1", "C | Agg tok/s | Per-req tok/s | TTFT(s) | Tokens | Wall(s) | Ok | Fail"),
            case(
                "markdown-separator",
                "| C | Agg tok/s | Per-req tok/s | TTFT(s) | Tokens | Wall(s) | Ok | Fail |\n"
                "|---|---|---|---|---|---|---|---|\n"
                "| 1 | 18.0 | 18.0 | 0.21 | 512 | 28.6 | 1 | 0 |",
                ("benchmark_result", {"concurrency": 1, "output_throughput": 18.0}),
            ),
            case(
                "sample-2",
                "| batch size | input len | latency (s) | input throughput (tok/s) | output throughput (tok/s) | acc length "
                "| ITL (ms) | input cost ($/1M) | output cost ($/1M) | cache hit rate |",
            ),
        ),
    ),
]


def finish(context: ParseContext) -> list[EventBase]:
    """Events of a block still open when the source ends, and of blocks cut short by a foreign line."""
    events: list[EventBase] = []
    events.extend(offline.finish(context))
    result = context.state.get(OPEN)
    if isinstance(result, Result):
        context.block = None
        events.extend(emit(result, context))
    accuracy = context.state.get(_OPEN_ACCURACY)
    if isinstance(accuracy, Result):
        context.block = None
        events.extend(_accuracy_events(accuracy, context))
    events.extend(specexample.finish(context))
    return blocks.drain(context) + events
