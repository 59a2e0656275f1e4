"""Benchmark results users paste beside a log (catalogue/sglang-nccl.md §10): the story's concurrency table,
`vllm bench serve` / `benchmark_serving.py` and `sglang.bench_serving` result blocks (also pasted without their
title line), `bench_one_batch_server`, SGLang's accuracy benchmarks (`benchmark/gsm8k/bench_sglang.py`) and vLLM's
speculative-decoding example (`examples/offline_inference/spec_decode.py`).

    C | Agg tok/s | Per-req tok/s | TTFT(s) | Tokens | Wall(s) | Ok | Fail      -> one BenchmarkResult a row
    1 | 18.0      | 18.0          | 0.21    | 512    | 28.6    | 1  | 0

    ============ Serving Benchmark Result ============                     -> one BenchmarkResult a block,
    Successful requests:                     128                           emitted at the closing `=====`
    Output token throughput (tok/s):         862.09                        (or at a blank line, a foreign
    ...                                                                     line, or the end of the source)

Units are normalised: latencies in milliseconds (`TTFT(s)` columns are converted), rates 0..1.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from logdoctor.events import BenchmarkResult, EventBase
from logdoctor.inputs.bench import specexample
from logdoctor.parse import blocks
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import BlockFn, Grammar, ParseContext, case

_OPEN = "bench.open"  # the result block being read, so `finish` can close it
_SEEN = "bench.seen"  # rows already reported (a bench_one_batch_server case and its summary-table row)

Number = float | int | str
_NON_WORD_RE = re.compile(r"[^a-z0-9]+")
_SPACES_RE = re.compile(r"\s+")


def _number(text: str) -> Number:
    text = text.strip().replace(",", "")
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    return number if math.isfinite(number) else text  # `Traffic request rate: inf` stays a word


def _key(label: str) -> str:
    """`Output token throughput (tok/s)` -> `output_token_throughput_tok_s`."""
    return _NON_WORD_RE.sub("_", label.lower()).strip("_")


@dataclass
class _Result:
    """One result being assembled; mapped fields take the first value seen (later sections repeat labels)."""

    tool: str
    first: LogLine
    fields: dict[str, Any] = field(default_factory=dict)
    values: dict[str, Number] = field(default_factory=dict)
    end: int | None = None

    def set(self, name: str, value: Number | None) -> None:
        if value is not None and not isinstance(value, str):
            self.fields.setdefault(name, value)

    def event(self, ctx: ParseContext) -> BenchmarkResult | None:
        if not self.fields and not self.values:
            return None
        tpot = self.fields.get("mean_tpot_ms")
        if "per_request_throughput" not in self.fields and isinstance(tpot, int | float) and tpot > 0:
            self.fields["per_request_throughput"] = round(1000.0 / tpot, 4)
            self.values["per_request_throughput_from"] = "1000 / mean TPOT"
        base = ctx.base(self.first, "bench")
        base["end_line"] = self.end if self.end != self.first.number else None
        return BenchmarkResult(**base, tool=self.tool, **self.fields, values=self.values)


def _emit(result: _Result, ctx: ParseContext) -> list[EventBase]:
    """The event of a finished result, unless the same result was already reported."""
    ctx.state.pop(_OPEN, None)
    event = result.event(ctx)
    if event is None:
        return []
    seen: set[tuple[object, ...]] = ctx.state.setdefault(_SEEN, set())
    key = (event.tool, event.concurrency, event.output_throughput, event.values.get("input_len"))
    if event.tool == "sglang-bench-one-batch" and key in seen:
        return []
    seen.add(key)
    return [event]


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


def _serving_row(result: _Result, label: str, raw: str) -> None:
    lowered = label.lower()
    percent = raw.endswith("%")
    value = _number(raw.rstrip("%")) if raw else ""
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
        key = _key(label)
        result.values.setdefault(f"acceptance_{key}" if lowered.startswith("position ") else key, value)


def _read_serving(result: _Result) -> BlockFn:
    def read(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        text = line.text
        rule = blocks.RULE_RE.match(text)
        if rule and rule.group("c") == "=" and not rule.group("title"):
            result.end = line.number
            ctx.block = None
            return _emit(result, ctx)
        if rule:
            result.end = line.number
            return []
        m = _ROW_RE.match(text)
        if m and not blocks.is_blank(line):
            _serving_row(result, m.group("label").strip(), m.group("value"))
            result.end = line.number
            return []
        ctx.block = None
        events = _emit(result, ctx)
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
    result = _Result(tool=tool, first=line)
    ctx.state[_OPEN] = result
    ctx.block = _read_serving(result)
    return []


# sglang.bench_serving prints `Backend:` as its first row (`{:<40} {:<10}`): a block pasted without its title line
# begins there.
_SERVING_FIRST_ROW_RE = re.compile(r"^\s*Backend:\s{20,}(?P<value>\S+)\s*$")


def parse_serving_first_row(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _SERVING_FIRST_ROW_RE.match(line.text)
    if not m:
        return None
    result = _Result(tool="sglang-bench-serving", first=line, end=line.number)
    result.values["backend"] = m.group("value")
    ctx.state[_OPEN] = result
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


def _read_accuracy(result: _Result) -> BlockFn:
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


def _accuracy_events(result: _Result, ctx: ParseContext) -> list[EventBase]:
    """The result, once it holds a latency or a throughput (an `Accuracy:` line alone measures no speed)."""
    ctx.state.pop(_OPEN_ACCURACY, None)
    return _emit(result, ctx) if "latency_s" in result.values or result.fields else []


def parse_accuracy(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _ACCURACY_RE.match(line.text)
    if not m:
        return None
    result = _Result(tool="sglang-bench-accuracy", first=line, end=line.number)
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
        first = _number(cells[0]) if cells else ""
        if blocks.is_blank(line) or len(cells) != len(columns) or isinstance(first, str):
            ctx.block = None
            return [] if blocks.is_blank(line) else None
        result = _Result(tool=tool, first=line)
        for column, cell in zip(columns, cells, strict=True):
            value = _number(cell)
            mapped = _TABLE_COLUMNS.get(column)
            if mapped is not None and isinstance(value, int | float):
                name, factor = mapped
                result.set(name, int(value) if name in _INT_FIELDS else round(float(value) * factor, 6))
            elif cell and cell.lower() != "n/a":
                result.values[_key(column)] = value
        return _emit(result, ctx)

    return read


def parse_table_header(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    if "|" not in line.text:
        return None
    columns = [_SPACES_RE.sub(" ", c.lower()) for c in _cells(line.text)]
    if "agg tok/s" in columns:
        tool = "concurrency-table"
    elif columns[:2] == ["batch size", "input len"]:
        tool = "sglang-bench-one-batch"
    else:
        return None
    ctx.block = _read_table(tool, columns)
    return []


# --- bench_one_batch_server cases and bench_one_batch (offline) -----------------------------------

_CASE_START_RE = re.compile(r"^\s*batch size: (?P<bs>\d+)\s*$")
_CASE_ROW_RE = re.compile(r"^\s*(?P<key>[A-Za-z_][\w ]*?): (?P<value>[-\d.]+|n/a)(?: (?P<unit>s|tok/s))?\s*$")
_CASE_FIELDS: dict[str, tuple[str, float]] = {
    "output throughput": ("output_throughput", 1),
    "last_ttft": ("mean_ttft_ms", 1000),
    "ttft": ("mean_ttft_ms", 1000),
    "acc_length": ("acceptance_length", 1),
}


def _case_row(result: _Result, key: str, raw: str, unit: str | None) -> None:
    value = _number(raw)
    name = key.strip().lower()
    mapped = _CASE_FIELDS.get(name)
    if mapped is not None and isinstance(value, int | float):
        result.set(mapped[0], float(value) * mapped[1])
    elif name == "last generation throughput" and isinstance(value, int | float):
        # the server's last decode interval, summed over the batch
        result.values["last_generation_throughput"] = value
        batch = result.fields.get("concurrency")
        if isinstance(batch, int | float) and batch > 0:
            result.set("per_request_throughput", round(float(value) / batch, 4))
    elif name == "latency" and isinstance(value, int | float):
        result.values["latency_s"] = value
    else:
        result.values[_key(name)] = value


def _new_case(line: LogLine, bs: str) -> _Result:
    result = _Result(tool="sglang-bench-one-batch", first=line)
    result.set("concurrency", float(bs))
    return result


def _read_case(state: dict[str, _Result]) -> BlockFn:
    def read(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        text = line.text
        start = _CASE_START_RE.match(text)
        if start:
            events = _emit(state["result"], ctx)
            state["result"] = _new_case(line, start.group("bs"))
            ctx.state[_OPEN] = state["result"]
            return events
        m = _CASE_ROW_RE.match(text)
        if m and not blocks.is_blank(line):
            _case_row(state["result"], m.group("key"), m.group("value"), m.group("unit"))
            state["result"].end = line.number
            return []
        ctx.block = None
        events = _emit(state["result"], ctx)
        if blocks.is_blank(line):
            return events
        blocks.stash(ctx, events)
        return None

    return read


def parse_case_start(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _CASE_START_RE.match(line.text)
    if not m:
        return None
    state = {"result": _new_case(line, m.group("bs"))}
    ctx.state[_OPEN] = state["result"]
    ctx.block = _read_case(state)
    return []


# A result pasted as a shell comment above or below its command (`# Decode.  median latency: ...`) is read the same.
_OFFLINE_DECODE_RE = re.compile(
    r"^\s*(?:#\s*)?Decode\.\s+median latency: (?P<latency>[\d.]+) s, median throughput:\s+(?P<tps>[\d.]+) token/s"
)
_OFFLINE_BATCH_RE = re.compile(r"^\s*(?:#\s*)?Decode \d+\. Batch size: (?P<bs>\d+),")
_OFFLINE_BS = "bench.offline_batch_size"
_OFFLINE_PREFILL_RE = re.compile(
    r"^\s*(?:#\s*)?Prefill\. latency: (?P<latency>[\d.]+) s, throughput:\s+(?P<tps>[\d.]+) token/s"
)
_OFFLINE_PREFILL = "bench.offline_prefill"


# bench_one_batch runs one warm-up pass (first-call kernel JIT, autotuning, lazy initialisation) before it prints
# `Benchmark ...` and the measured passes: the warm-up's first decode step, against the measured pass's median, is
# what warming up cost (`Decode.  latency: 1.75760 s` then, after `Benchmark ...`, a median of 0.02719 s).
_OFFLINE_STEP_RE = re.compile(r"^\s*(?:#\s*)?Decode\.\s+latency: (?P<latency>[\d.]+) s, throughput:")
_OFFLINE_BENCHMARK_RE = re.compile(r"^\s*Benchmark \.\.\.\s*$")
_OFFLINE_FIRST_STEP = "bench.offline_first_step"  # the first decode step of the pass being read
_OFFLINE_PREVIOUS_STEP = "bench.offline_previous_step"  # that of the pass whose median was read last
_OFFLINE_WARMUP = "bench.offline_warmup"  # the warm-up pass's first decode step, once `Benchmark ...` was read


def parse_offline(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    """`python -m sglang.bench_one_batch`: per-step lines give the batch size, the median line the result."""
    if _OFFLINE_BENCHMARK_RE.match(line.text):
        first = ctx.state.pop(_OFFLINE_PREVIOUS_STEP, None)
        if not isinstance(first, float):
            return None
        ctx.state[_OFFLINE_WARMUP] = first
        return []
    m = _OFFLINE_STEP_RE.match(line.text)
    if m:
        ctx.state.setdefault(_OFFLINE_FIRST_STEP, float(m.group("latency")))
        return []
    m = _OFFLINE_BATCH_RE.match(line.text)
    if m:
        ctx.state[_OFFLINE_BS] = int(m.group("bs"))
        return []
    m = _OFFLINE_PREFILL_RE.match(line.text)
    if m:  # the prefill of the run whose decode median follows
        ctx.state[_OFFLINE_PREFILL] = float(m.group("tps"))
        return []
    m = _OFFLINE_DECODE_RE.match(line.text)
    if not m:
        return None
    result = _Result(tool="sglang-bench-one-batch", first=line)
    batch = ctx.state.get(_OFFLINE_BS)
    tps = float(m.group("tps"))
    result.set("output_throughput", tps)
    if isinstance(batch, int) and batch > 0:
        result.set("concurrency", float(batch))
        result.set("per_request_throughput", round(tps / batch, 4))
    result.values["median_decode_latency_s"] = float(m.group("latency"))
    prefill = ctx.state.pop(_OFFLINE_PREFILL, None)
    if isinstance(prefill, float):
        result.values["prefill_throughput"] = prefill
    ctx.state[_OFFLINE_PREVIOUS_STEP] = ctx.state.pop(_OFFLINE_FIRST_STEP, None)
    warmup = ctx.state.pop(_OFFLINE_WARMUP, None)
    if isinstance(warmup, float):
        result.values["warmup_first_decode_latency_s"] = warmup
    return _emit(result, ctx)


# --- offline runs: `LLM.generate`'s progress bar, `vllm bench throughput` / `latency` -------------------------

# vLLM's `LLM.generate` draws a tqdm bar; since 0.5 its postfix carries the run's average speeds:
#   Processed prompts: 100%|██████| 1000/1000 [00:30<00:00, 33.1it/s, est. speed input: 3391.03 toks/s, output: ...]
# A terminal narrower than the bar cuts its postfix (`output: 305.54 toks/`): a speed followed by a space is whole.
# The bar is redrawn (carriage returns, or one line per redraw in a file): the finished bar is the run's result,
# reported once; a bar the source ends before finishing gives its last redraw (a running average, still a sample).
_PROGRESS_RE = re.compile(
    r"Processed prompts:\s+(?P<pct>\d+)%\|[^|]*\|\s*(?P<n>\d+)/(?P<total>\d+)\s*\[(?P<elapsed>[\d:]+)<[^,\]]*"
    r"(?:,\s*(?P<rate>[\d.]+)(?P<unit>it/s|s/it))?"
    r"(?:,\s*est\. speed input:\s*(?P<inp>[\d.]+) toks/s, output:\s*(?P<out>[\d.]+)(?: toks/s| t?o?k?s?/?\s*$))?"
)
_PROGRESS = "bench.progress"  # the last redraw of the bar being drawn: (line, match)
_PROGRESS_DONE = "bench.progress_done"  # finished bars already reported: (total, output speed)


def _elapsed_s(text: str) -> int:
    seconds = 0
    for part in text.split(":"):
        seconds = seconds * 60 + int(part)
    return seconds


def _progress_event(line: LogLine, m: re.Match[str], ctx: ParseContext) -> list[EventBase]:
    result = _Result(tool="vllm-offline", first=line)
    n, total = int(m.group("n")), int(m.group("total"))
    elapsed = _elapsed_s(m.group("elapsed"))
    if m.group("out"):
        result.set("output_throughput", float(m.group("out")))
        result.values["input_throughput"] = float(m.group("inp"))
    if elapsed > 0:
        result.set("request_throughput", round(n / elapsed, 4))
    result.set("completed", n)
    result.values["prompts"] = total
    result.values["elapsed_s"] = elapsed
    if n < total:
        result.values["finished"] = "no: the bar's last redraw before the input ends"
    return _emit(result, ctx)


def parse_progress(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _PROGRESS_RE.search(line.text)
    if not m:
        return None
    n, total = int(m.group("n")), int(m.group("total"))
    if n < total:
        ctx.state[_PROGRESS] = (line, m)
        return []
    ctx.state.pop(_PROGRESS, None)
    done: set[tuple[int, str | None]] = ctx.state.setdefault(_PROGRESS_DONE, set())
    key = (total, m.group("out"))
    if key in done:
        return []  # tqdm repaints a finished bar
    done.add(key)
    return _progress_event(line, m, ctx)


# `vllm bench throughput` (benchmarks/benchmark_throughput.py): one line, the rate over the whole run
_THROUGHPUT_RE = re.compile(
    r"^\s*Throughput: (?P<req>[\d.]+) requests/s, (?P<total>[\d.]+) (?:total )?tokens/s"
    r"(?:, (?P<out>[\d.]+) output tokens/s)?"
)
# `vllm bench latency` (benchmarks/benchmark_latency.py): the mean time of one batch, end to end
_LATENCY_RE = re.compile(r"^\s*Avg latency: (?P<s>[\d.]+) seconds")


def parse_vllm_offline(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _THROUGHPUT_RE.match(line.text)
    if m:
        result = _Result(tool="vllm-bench-throughput", first=line)
        result.set("request_throughput", float(m.group("req")))
        result.set("total_throughput", float(m.group("total")))
        if m.group("out"):
            result.set("output_throughput", float(m.group("out")))
        return _emit(result, ctx)
    m = _LATENCY_RE.match(line.text)
    if m:
        result = _Result(tool="vllm-bench-latency", first=line)
        result.set("mean_e2e_ms", round(float(m.group("s")) * 1000, 3))
        return _emit(result, ctx)
    return None


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
    Grammar(
        "bench.one_batch_case",
        "bench",
        ("batch size: ",),
        parse_case_start,
        (case("sample-1", "batch size: 1", ("benchmark_result", {})),),
    ),
    Grammar(
        "bench.one_batch_offline",
        "bench",
        ("median throughput:", ". Batch size: ", "Prefill. latency: ", "Decode.  latency: ", "Benchmark ..."),
        parse_offline,
        (
            case(
                "warm-up-pass-then-benchmark",
                "Prefill. latency: 1.82421 s, throughput:     70.17 token/s\n"
                "Decode.  latency: 1.75760 s, throughput:      0.57 token/s\n"
                "Decode.  latency: 0.02740 s, throughput:     36.49 token/s\n"
                "Decode.  median latency: 0.02711 s, median throughput:     36.88 token/s\n"
                "Total. latency:  3.745 s, throughput:     36.32 token/s\n"
                "Benchmark ...\n"
                "Prefill. latency: 0.16921 s, throughput:    756.48 token/s\n"
                "Decode.  latency: 0.02716 s, throughput:     36.81 token/s\n"
                "Decode.  median latency: 0.02719 s, median throughput:     36.78 token/s",
                ("benchmark_result", {"output_throughput": 36.88, "values": {"median_decode_latency_s": 0.02711}}),
                (
                    "benchmark_result",
                    {
                        "output_throughput": 36.78,
                        "values": {"median_decode_latency_s": 0.02719, "warmup_first_decode_latency_s": 1.7576},
                    },
                ),
                exact=True,
            ),
            case(
                "sample-1",
                "Decode.  median latency: 0.01362 s, median throughput:     73.42 token/s",
                ("benchmark_result", {}),
            ),
            case(
                "result-as-a-shell-comment-sglang-1008",
                "# Decode.  median latency: 0.00642 s, median throughput:    155.67 token/s",
                ("benchmark_result", {"output_throughput": 155.67}),
                exact=True,
            ),
            case(
                "bench-latency-prefill-then-median",
                "Prefill. latency: 0.03508 s, throughput:   3649.08 token/s\n"
                "Decode.  latency: 0.01379 s, throughput:     72.52 token/s\n"
                "Decode.  median latency: 0.01362 s, median throughput:     73.42 token/s\n"
                "Total. latency:  0.296 s, throughput:    441.28 token/s",
                (
                    "benchmark_result",
                    {
                        "output_throughput": 73.42,
                        "values": {"median_decode_latency_s": 0.01362, "prefill_throughput": 3649.08},
                    },
                ),
                exact=True,
            ),
        ),
    ),
    Grammar(
        "bench.offline_progress",
        "bench",
        ("Processed prompts:",),
        parse_progress,
        (
            case(
                "finished-bar-with-speeds",
                "Processed prompts: 100%|██████████| 1000/1000 [00:30<00:00, 33.10it/s, est. speed input: 3391.03 "
                "toks/s, output: 3284.47 toks/s]",
                (
                    "benchmark_result",
                    {
                        "tool": "vllm-offline",
                        "output_throughput": 3284.47,
                        "completed": 1000,
                        "request_throughput": 33.3333,
                    },
                ),
                exact=True,
            ),
            case(
                "redraws-report-the-finished-bar-once",
                "Processed prompts:  50%|█████     | 4/8 [00:01<00:01,  3.10it/s, est. speed input: 30.1 toks/s, output: 70.2 toks/s]\n"
                "Processed prompts: 100%|██████████| 8/8 [00:02<00:00,  3.20it/s, est. speed input: 34.4 toks/s, output: 84.7 toks/s]\n"
                "Processed prompts: 100%|██████████| 8/8 [00:02<00:00,  3.20it/s, est. speed input: 34.4 toks/s, output: 84.7 toks/s]",
                ("benchmark_result", {"output_throughput": 84.7, "completed": 8}),
                exact=True,
            ),
            case(
                "postfix-cut-by-the-terminal-after-a-whole-speed",
                "Processed prompts: 100%|█| 10/10 [00:33<00:00,  3.35s/it, est. speed input: 40.85 toks/s, output: 305.54 toks/",
                ("benchmark_result", {"output_throughput": 305.54, "completed": 10}),
                exact=True,
            ),
            case(
                "unfinished-bar-gives-its-last-redraw",
                "Processed prompts:   0%|  | 34/10000 [00:29<3:36:54,  1.31s/it, est. speed input: 407.31 toks/s, "
                "output: 7561.83 toks/s]",
                ("benchmark_result", {"output_throughput": 7561.83, "completed": 34}),
                exact=True,
            ),
        ),
    ),
    Grammar(
        "bench.vllm_offline",
        "bench",
        ("Throughput: ", "Avg latency: "),
        parse_vllm_offline,
        (
            case(
                "bench-throughput",
                "Throughput: 4.37 requests/s, 2237.05 total tokens/s, 1118.52 output tokens/s",
                (
                    "benchmark_result",
                    {"tool": "vllm-bench-throughput", "output_throughput": 1118.52, "request_throughput": 4.37},
                ),
                exact=True,
            ),
            case(
                "bench-throughput-0.5",
                "Throughput: 12.31 requests/s, 5039.48 tokens/s",
                ("benchmark_result", {"total_throughput": 5039.48, "output_throughput": None}),
                exact=True,
            ),
            case(
                "bench-latency",
                "Avg latency: 1.2345 seconds",
                ("benchmark_result", {"tool": "vllm-bench-latency", "mean_e2e_ms": 1234.5}),
                exact=True,
            ),
        ),
    ),
]


def finish(context: ParseContext) -> list[EventBase]:
    """Events of a block still open when the source ends, and of blocks cut short by a foreign line."""
    events: list[EventBase] = []
    bar = context.state.pop(_PROGRESS, None)
    if bar is not None:
        events.extend(_progress_event(bar[0], bar[1], context))
    result = context.state.get(_OPEN)
    if isinstance(result, _Result):
        context.block = None
        events.extend(_emit(result, context))
    accuracy = context.state.get(_OPEN_ACCURACY)
    if isinstance(accuracy, _Result):
        context.block = None
        events.extend(_accuracy_events(accuracy, context))
    events.extend(specexample.finish(context))
    return blocks.drain(context) + events
