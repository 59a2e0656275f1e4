"""Offline benchmark results: `bench_one_batch_server`'s cases, `bench_one_batch`'s decode steps, `LLM.generate`'s
progress bar and `vllm bench throughput` / `latency` (the line types; logdoctor.inputs.bench.grammars has the serving
blocks and tables)."""

from __future__ import annotations

import re

from logdoctor.events import EventBase
from logdoctor.inputs.bench.results import OPEN, Result, as_number, emit, field_key
from logdoctor.parse import blocks
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import BlockFn, Grammar, ParseContext, case

# --- bench_one_batch_server cases and bench_one_batch (offline) -----------------------------------

_CASE_START_RE = re.compile(r"^\s*batch size: (?P<bs>\d+)\s*$")
_CASE_ROW_RE = re.compile(r"^\s*(?P<key>[A-Za-z_][\w ]*?): (?P<value>[-\d.]+|n/a)(?: (?P<unit>s|tok/s))?\s*$")
_CASE_FIELDS: dict[str, tuple[str, float]] = {
    "output throughput": ("output_throughput", 1),
    "last_ttft": ("mean_ttft_ms", 1000),
    "ttft": ("mean_ttft_ms", 1000),
    "acc_length": ("acceptance_length", 1),
}


def _case_row(result: Result, key: str, raw: str, unit: str | None) -> None:
    value = as_number(raw)
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
        result.values[field_key(name)] = value


def _new_case(line: LogLine, bs: str) -> Result:
    result = Result(tool="sglang-bench-one-batch", first=line)
    result.set("concurrency", float(bs))
    return result


def _read_case(state: dict[str, Result]) -> BlockFn:
    def read(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        text = line.text
        start = _CASE_START_RE.match(text)
        if start:
            events = emit(state["result"], ctx)
            state["result"] = _new_case(line, start.group("bs"))
            ctx.state[OPEN] = state["result"]
            return events
        m = _CASE_ROW_RE.match(text)
        if m and not blocks.is_blank(line):
            _case_row(state["result"], m.group("key"), m.group("value"), m.group("unit"))
            state["result"].end = line.number
            return []
        ctx.block = None
        events = emit(state["result"], ctx)
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
    ctx.state[OPEN] = state["result"]
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
    result = Result(tool="sglang-bench-one-batch", first=line)
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
    return emit(result, ctx)


# --- offline runs: `LLM.generate`'s progress bar, `vllm bench throughput` / `latency` -------------------------

# vLLM's `LLM.generate` draws a tqdm bar; since 0.5 its postfix carries the run's average speeds:
#   Processed prompts: 100%|██████| 1000/1000 [00:30<00:00, 33.1it/s, est. speed input: 3391.03 toks/s, output: ...]
# A terminal narrower than the bar cuts its postfix (`output: 305.54 toks/`): a speed followed by a space is whole.
# The bar is redrawn (carriage returns, or one line per redraw in a file): the finished bar is the run's result,
# reported once; a bar the source ends before finishing gives its last redraw (a running average, still a sample).
# Output captured as text from a notebook or a web page loses the bar's block characters and its `|` frame:
#   Processed prompts: 100% 1000/1000 [01:14<00:00, 13.42it/s, est. speed input: 1341.95 toks/s, output: 3354.88 toks/s]
_PROGRESS_RE = re.compile(
    r"Processed prompts:\s+(?P<pct>\d+)%(?:\|[^|]*\|)?\s*(?P<n>\d+)/(?P<total>\d+)\s*\[(?P<elapsed>[\d:]+)<[^,\]]*"
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
    result = Result(tool="vllm-offline", first=line)
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
    return emit(result, ctx)


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
        result = Result(tool="vllm-bench-throughput", first=line)
        result.set("request_throughput", float(m.group("req")))
        result.set("total_throughput", float(m.group("total")))
        if m.group("out"):
            result.set("output_throughput", float(m.group("out")))
        return emit(result, ctx)
    m = _LATENCY_RE.match(line.text)
    if m:
        result = Result(tool="vllm-bench-latency", first=line)
        result.set("mean_e2e_ms", round(float(m.group("s")) * 1000, 3))
        return emit(result, ctx)
    return None


# --- speculative-decoding benchmark summaries: SGLang's EAGLE benchmark (benchmark/mtbench) and client scripts -----
# `#questions: 80, Throughput: 276.30 token/s, Acceptance length: 5.36` (one line), and a client's summary lines
# `Average Output throughput: 41.960 token/s` / `Average Accept length: 1.037` (the rate kept for the length below it).
_QUESTIONS_RE = re.compile(
    r"^\s*#questions: (?P<n>\d+), Throughput: (?P<tps>[\d.]+) token/s(?:, Accept(?:ance)? length: (?P<acc>[\d.]+))?"
)
_AVERAGE_RE = re.compile(r"^\s*Average (?P<what>Output throughput|Accept length): (?P<value>[\d.]+)(?: token/s)?\s*$")
_AVERAGE_RATE = "bench.average_rate"  # (line number, tok/s) of the last `Average Output throughput` line
_AVERAGE_REACH = 4  # lines from that rate to its acceptance length


def parse_spec_summary(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _QUESTIONS_RE.match(line.text)
    if m:
        result = Result(tool="sglang-spec-bench", first=line)
        result.set("output_throughput", float(m.group("tps")))
        if m.group("acc"):
            result.set("acceptance_length", float(m.group("acc")))
        result.values["questions"] = int(m.group("n"))
        return emit(result, ctx)
    m = _AVERAGE_RE.match(line.text)
    if m is None:
        return None
    value = float(m.group("value"))
    if m.group("what") == "Output throughput":
        ctx.state[_AVERAGE_RATE] = (line.number, value)
        return []
    result = Result(tool="spec-bench-client", first=line)
    result.set("acceptance_length", value)
    rate = ctx.state.pop(_AVERAGE_RATE, None)
    if rate is not None and 0 < line.number - rate[0] <= _AVERAGE_REACH:
        result.set("output_throughput", rate[1])
    return emit(result, ctx)


def finish(context: ParseContext) -> list[EventBase]:
    """The event of a progress bar still being drawn when the source ends."""
    bar = context.state.pop(_PROGRESS, None)
    return _progress_event(bar[0], bar[1], context) if bar is not None else []


GRAMMARS: list[Grammar] = [
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
                # real: fixtures/logs/realworld13/vllm-c951.log line 13 (a notebook's output, the bar's frame gone)
                "bar-without-its-frame",
                "Processed prompts: 100% 1000/1000 [01:14<00:00, 13.42it/s, est. speed input: 1341.95 toks/s, output: "
                "3354.88 toks/s]",
                ("benchmark_result", {"output_throughput": 3354.88, "completed": 1000}),
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
    Grammar(
        "bench.spec_summary",
        "bench",
        ("#questions: ", "Average Output throughput: ", "Average Accept length: "),
        parse_spec_summary,
        (
            case(
                "mtbench-eagle-line",
                "#questions: 80, Throughput: 224.70 token/s, Acceptance length: 3.75",
                (
                    "benchmark_result",
                    {"tool": "sglang-spec-bench", "output_throughput": 224.7, "acceptance_length": 3.75},
                ),
                exact=True,
            ),
            case(
                "client-average-lines",
                "Average Output throughput: 50.000 token/s\nAverage Accept length: 2.500",
                (
                    "benchmark_result",
                    {"tool": "spec-bench-client", "output_throughput": 50.0, "acceptance_length": 2.5},
                ),
                exact=True,
            ),
        ),
    ),
]
