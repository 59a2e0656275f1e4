"""Benchmark results saved as JSON: `vllm bench serve --save-result` (and the older `benchmark_serving.py`),
`python -m sglang.bench_serving --output-file` (JSON Lines) and AIPerf's `profile_export_aiperf.json`.

The same document arrives in two layouts, and the line pipeline reads both with one block grammar:

    {"date": "20250524-035144", "backend": "vllm", ..., "mean_tpot_ms": 52.1, ...}     one line (as saved;
                                                                                       JSON Lines: one a line)
    {                                                                                  pretty-printed (`jq .`,
      "date": "20250524-035144",                                                       `json.dumps(indent=2)`,
      "backend": "vllm",               <- the block opens on the first key line a      a paste in an issue)
      ...                                 benchmark document has ("backend", AIPerf's
    }                                     "schema_version", or a result key) and reads
                                          to the closing brace

A small streaming scanner keeps the scalars of the document's first three levels (`mean_tpot_ms`,
`server_info.model_path`, `time_to_first_token.avg`) and skips the rest (per-request lists of `--save-detailed`
can be megabytes); no document is held in memory whole, and a document cut short (a truncated paste, a line cut
at the reader's cap) still gives the values read before the cut. Keys come from the tools' sources: vLLM 0.33.0
`vllm/benchmarks/serve.py` (`result_json`, `benchmark_result`), SGLang 0.5.23 `sglang/benchmark/serving.py`
(`result`), AIPerf docs/reference/json-export-schema.md (metric blocks `{"unit": ..., "avg": ...}`).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from logdoctor.events import BenchmarkResult, EventBase
from logdoctor.inputs.bench import paths
from logdoctor.parse import blocks
from logdoctor.parse.envelope import LogLine, has_header
from logdoctor.parse.grammar import BlockFn, Grammar, ParseContext, case

_OPEN = "bench.json_open"  # the document being read, so `finish` can close a cut one
_MAX_DEPTH = 3  # scalars deeper than this are skipped
_MAX_NESTING = 64  # deeper: not a benchmark report (a value's dotted key costs its depth to build)
_MAX_SCALARS = 4096  # a document with more scalars than this keeps only the first ones
_MAX_LINES = 5_000_000  # a pretty-printed --save-detailed result has a line a per-request value
# a bare JSON word: a number, a literal, Python's json Infinity / NaN, or a secret the reader masked
_JSON_WORD_RE = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null|-?Infinity|NaN|\*\*\*")

_TOKEN_RE = re.compile(r'\s*(?:(?P<s>"(?:[^"\\]|\\.)*")|(?P<p>[{}\[\]:,])|(?P<w>[^\s{}\[\]:,"]+)|(?P<bad>"))')
# the pretty layout's opening key lines, and the result keys that open a document pasted without them
_PRETTY_OPEN_RE = re.compile(
    r'^\s*"(?:backend|schema_version|output_throughput|mean_ttft_ms|request_throughput)"\s*:\s*\S'
    r'|^\s*"benchmarks"\s*:\s*\['  # GuideLLM's top-level list, after its "metadata" and "config" objects
)
Scalar = float | int | str | bool | None


@dataclass
class _Document:
    """One JSON document being scanned; `scalars` maps a dotted key path to its value."""

    first: LogLine
    stack: list[str] = field(default_factory=list)  # "{" or "["
    items: list[int] = field(default_factory=list)  # per open container: the values begun in it so far
    path: list[str] = field(default_factory=list)  # the key of each open object / array below the top level
    key: str | None = None  # the key whose value comes next
    expect_key: bool = False
    scalars: dict[str, Scalar] = field(default_factory=dict)
    end: int | None = None
    done: bool = False
    broken: bool = False
    lines: int = 0

    def feed(self, text: str) -> None:
        """Scan one line; stops at the document's closing brace or at text that cannot be JSON."""
        self.lines += 1
        for m in _TOKEN_RE.finditer(text):
            if self.done or self.broken:
                return
            if m.group("bad") is not None:  # a string cut at the end of the line
                self.broken = True
                return
            punct = m.group("p")
            if punct is not None:
                self._punct(punct)
            elif m.group("s") is not None:
                self._string(m.group("s"))
            elif m.group("w") is not None:
                word = m.group("w")
                if self.expect_key or not _JSON_WORD_RE.fullmatch(word):
                    self.broken = True  # prose, a log line without a header: not JSON
                    return
                self._value(_word(word))

    def _punct(self, p: str) -> None:
        if p in "{[":
            if len(self.stack) >= _MAX_NESTING:  # no report nests this deep; each value's key path would grow with it
                self.broken = True
                return
            if self.stack:
                self._begin_value()
                self.path.append(self.key if self.key is not None else f"[{self.items[-1] - 1}]")
            self.stack.append(p)
            self.items.append(0)
            self.key = None
            self.expect_key = p == "{"
        elif p in "}]":
            if not self.stack:
                self.broken = True
                return
            self.stack.pop()
            self.items.pop()
            if self.path and self.stack:
                self.path.pop()
            self.key = None
            self.expect_key = False
            if not self.stack:
                self.done = True
        elif p == ",":
            self.key = None
            self.expect_key = bool(self.stack) and self.stack[-1] == "{"

    def _string(self, token: str) -> None:
        try:
            text = str(json.loads(token))
        except ValueError:
            text = token[1:-1]
        if self.expect_key:
            self.key = text
            self.expect_key = False
            return
        self._value(text)

    def _begin_value(self) -> None:
        if self.items:
            self.items[-1] += 1

    def _value(self, value: Scalar) -> None:
        if not self.stack:
            self.broken = True  # text outside any object: not JSON
            return
        self._begin_value()
        if self.stack[-1] != "{" or self.key is None:
            return  # list items are not kept
        dotted = ".".join([*self.path, self.key])
        if len(self.stack) > _MAX_DEPTH and not paths.DEEP_KEEP_RE.match(dotted):
            return  # deep values are not kept, but for the few named above
        if len(self.scalars) < _MAX_SCALARS:
            self.scalars.setdefault(dotted, value)
        self.key = None


def _word(text: str) -> Scalar:
    if text in ("true", "false"):
        return text == "true"
    if text == "null":
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text  # Infinity, NaN, a masked secret (***)
    return number if math.isfinite(number) else text


Document = _Document  # for the other exports' readers (exports.py), which fill its scalars themselves
word = _word


def is_json_word(text: str) -> bool:
    return _JSON_WORD_RE.fullmatch(text) is not None


def _num(value: Scalar) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _text(value: Scalar) -> str | None:
    return value if isinstance(value, str) and value else None


# --- the tools' keys ---------------------------------------------------------------------------------------

# vLLM `vllm bench serve` / `benchmark_serving.py` and SGLang `bench_serving`: flat keys -> BenchmarkResult fields
_FLAT_FIELDS: dict[str, str] = {
    "output_throughput": "output_throughput",
    "total_token_throughput": "total_throughput",  # vLLM
    "total_throughput": "total_throughput",  # SGLang
    "request_throughput": "request_throughput",
    "mean_ttft_ms": "mean_ttft_ms",
    "median_ttft_ms": "median_ttft_ms",
    "mean_tpot_ms": "mean_tpot_ms",
    "median_tpot_ms": "median_tpot_ms",
    "mean_itl_ms": "mean_itl_ms",
    "mean_e2el_ms": "mean_e2e_ms",  # vLLM
    "mean_e2e_latency_ms": "mean_e2e_ms",  # SGLang
    "spec_decode_acceptance_length": "acceptance_length",  # vLLM 0.30+
    "accept_length": "acceptance_length",  # SGLang
}
# kept in `values` when present (numbers and words)
_FLAT_VALUES = (
    "date",
    "label",
    "tag",
    "endpoint_type",
    "dataset_name",
    "num_prompts",
    "burstiness",
    "duration",
    "total_input_tokens",
    "total_output_tokens",
    "median_itl_ms",
    "median_e2el_ms",
    "median_e2e_latency_ms",
    "p99_ttft_ms",
    "p99_tpot_ms",
    "p99_itl_ms",
    "max_output_tokens_per_s",
    "max_concurrent_requests",
    "random_input_len",
    "random_output_len",
    "spec_decode_acceptance_rate",
    "server_info.tp_size",
    "server_info.speculative_algorithm",
    "server_info.speculative_num_draft_tokens",
)
_SGLANG_MARKERS = ("accept_length", "total_output_tokens_retokenized", "mean_e2e_latency_ms", "sharegpt_output_len")

# AIPerf metric blocks: tag -> (field, the unit the field is in)
_AIPERF_FIELDS: dict[str, tuple[str, str]] = {
    "output_token_throughput": ("output_throughput", "tokens/sec"),
    "output_token_throughput_per_user": ("per_request_throughput", "tokens/sec/user"),
    "output_token_throughput_per_request": ("per_request_throughput", "tokens/sec"),  # GenAI-Perf before 0.0.8
    "request_throughput": ("request_throughput", "requests/sec"),
    "time_to_first_token": ("mean_ttft_ms", "ms"),
    "inter_token_latency": ("mean_itl_ms", "ms"),
    "request_latency": ("mean_e2e_ms", "ms"),
    # AIPerf 0.13's spec_decode_acceptance_length (metrics/types/spec_decode_metrics.py, unit "ratio")
    "spec_decode_acceptance_length": ("acceptance_length", "ratio"),
}
_TIME_FACTORS = {"ms": 1.0, "s": 1000.0, "sec": 1000.0, "us": 0.001, "ns": 1e-6}
# the concurrency of a sweep variation (the schema page's run_info example); input_config's layout is not documented
_AIPERF_CONCURRENCY = (
    "run_info.variation_values.phases.profiling.concurrency",
    "input_config.perf_analyzer.stimulus.concurrency",  # GenAI-Perf 0.0.1x (ConfigCommand.to_json_dict)
    "input_config.concurrency",  # GenAI-Perf before its config files: the argparse namespace
)
_GENAI_PERF_RATE = ("input_config.perf_analyzer.stimulus.request_rate", "input_config.request_rate")
# keys only AIPerf writes (schema_version since its first export); GenAI-Perf's export has none of them
_AIPERF_MARKERS = ("schema_version", "aiperf_version", "benchmark_id", "was_cancelled")


def _flat_result(doc: _Document, ctx: ParseContext) -> BenchmarkResult | None:
    s = doc.scalars
    fields: dict[str, float] = {}
    for key, name in _FLAT_FIELDS.items():
        number = _num(s.get(key))
        if number is not None:
            fields.setdefault(name, number)
    if "output_throughput" not in fields and "mean_tpot_ms" not in fields and "mean_ttft_ms" not in fields:
        return None
    sglang = any(k in s for k in _SGLANG_MARKERS) or any(k.startswith("server_info.") for k in s)
    values: dict[str, float | int | str] = {}
    for key in _FLAT_VALUES:
        value = s.get(key)
        if isinstance(value, int | float | str) and not isinstance(value, bool):
            values[key.replace("server_info.", "server_")] = value
    mean_concurrency = _num(s.get("concurrency"))
    if sglang and mean_concurrency is not None:
        values["mean_concurrency"] = mean_concurrency  # SGLang's measured mean; `max_concurrency` is the cap
    tpot = fields.get("mean_tpot_ms")
    per_request = None
    if tpot:
        per_request = round(1000.0 / tpot, 4)
        values["per_request_throughput_from"] = "1000 / mean TPOT"
    rate = s.get("request_rate")
    if isinstance(rate, str):
        values["request_rate"] = rate  # "inf" (vLLM), Infinity (SGLang), "trace"
    completed, failed = _num(s.get("completed")), _num(s.get("failed"))
    kwargs: dict[str, Any] = {**ctx.base(doc.first, "bench"), **fields}
    kwargs["end_line"] = doc.end if doc.end != doc.first.number else None
    return BenchmarkResult(
        **kwargs,
        tool="sglang-bench-serving" if sglang else "vllm-bench-serve",
        concurrency=_num(s.get("max_concurrency")),
        per_request_throughput=per_request,
        completed=int(completed) if completed is not None else None,
        failed=int(failed) if failed is not None else None,
        request_rate=_num(rate),
        model=_text(s.get("model_id")) or _text(s.get("server_info.model_path")) or _text(s.get("model")),
        backend=_text(s.get("backend")),
        values=values,
    )


def _aiperf_result(doc: _Document, ctx: ParseContext) -> BenchmarkResult | None:
    s = doc.scalars
    fields: dict[str, float] = {}
    values: dict[str, float | int | str] = {}
    for tag, (name, unit) in _AIPERF_FIELDS.items():
        value = _num(s.get(f"{tag}.avg"))
        if value is None:
            continue
        shown = str(s.get(f"{tag}.unit") or unit)
        if unit == "ms":
            factor = _TIME_FACTORS.get(shown)
            if factor is None:
                values[f"{tag}_unit"] = shown  # a unit we do not know: keep the number out of the fields
                continue
            value *= factor
        fields[name] = value
    if not fields:
        return None
    count = _num(s.get("request_count.avg"))
    concurrency = next((c for c in (_num(s.get(k)) for k in _AIPERF_CONCURRENCY) if c is not None), None)
    for key in ("schema_version", "aiperf_version", "benchmark_id", "run_info.run_label"):
        provenance = s.get(key)
        if isinstance(provenance, str | int | float) and not isinstance(provenance, bool):
            values[key.replace("run_info.", "")] = provenance
    genai_perf = not any(k in s for k in _AIPERF_MARKERS)
    rate = next((r for r in (_num(s.get(k)) for k in _GENAI_PERF_RATE) if r is not None), None)
    kwargs: dict[str, Any] = {**ctx.base(doc.first, "bench"), **fields}
    kwargs["end_line"] = doc.end if doc.end != doc.first.number else None
    return BenchmarkResult(
        **kwargs,
        tool="genai-perf" if genai_perf else "aiperf",
        concurrency=concurrency,
        completed=int(count) if count is not None else None,
        request_rate=rate if genai_perf else None,
        model=_text(s.get("input_config.formatted_model_name")) if genai_perf else None,
        backend=(_text(s.get("input_config.endpoint.backend")) or _text(s.get("input_config.backend")))
        if genai_perf
        else None,
        values=values,
    )


# GuideLLM: a metric's summary over the successful requests -> BenchmarkResult field (the unit's factor to ms)
_GUIDELLM_FIELDS: dict[str, tuple[str, float]] = {
    "output_tokens_per_second.successful.mean": ("output_throughput", 1.0),
    "tokens_per_second.successful.mean": ("total_throughput", 1.0),
    "requests_per_second.successful.mean": ("request_throughput", 1.0),
    "time_to_first_token_ms.successful.mean": ("mean_ttft_ms", 1.0),
    "time_to_first_token_ms.successful.median": ("median_ttft_ms", 1.0),
    # GuideLLM's inter_token_latency_ms is (latency - TTFT) / (output tokens - 1): what vLLM calls TPOT;
    # its own time_per_output_token_ms divides the whole latency, TTFT included, and is kept in `values`
    "inter_token_latency_ms.successful.mean": ("mean_tpot_ms", 1.0),
    "inter_token_latency_ms.successful.median": ("median_tpot_ms", 1.0),
    "request_latency.successful.mean": ("mean_e2e_ms", 1000.0),  # seconds
}


def _first_number(scalars: dict[str, Scalar], *keys: str) -> float | None:
    return next((n for n in (_num(scalars.get(k)) for k in keys) if n is not None), None)


def guidellm_results(doc: _Document, ctx: ParseContext) -> list[EventBase]:
    """One event per benchmark of a GuideLLM report (a sweep or `--rate` list holds several)."""
    s = doc.scalars
    indices = sorted({int(m.group(1)) for m in map(paths.GUIDELLM_BENCHMARK_RE.match, s) if m is not None})
    version = _text(s.get("metadata.guidellm_version"))
    events: list[EventBase] = []
    for i in indices:
        p = f"benchmarks.[{i}]."
        fields: dict[str, float] = {}
        for key, (name, factor) in _GUIDELLM_FIELDS.items():
            number = _num(s.get(f"{p}metrics.{key}"))
            if number is not None:
                fields[name] = number * factor
        if not fields:
            continue
        if "mean_tpot_ms" in fields:
            fields["mean_itl_ms"] = fields["mean_tpot_ms"]
        strategy = next((k for k in ("config.strategy.", "args.strategy.") if f"{p}{k}type_" in s), "config.strategy.")
        kind = _text(s.get(f"{p}{strategy}type_"))
        concurrency = _first_number(s, f"{p}{strategy}streams", f"{p}{strategy}max_concurrency")
        if kind == "synchronous":
            concurrency = 1.0
        values: dict[str, float | int | str] = {}
        if kind:
            values["strategy"] = kind
        if version:
            values["guidellm_version"] = version
        measured = _num(s.get(f"{p}metrics.request_concurrency.successful.mean"))
        if measured is not None:
            values["mean_concurrency"] = round(measured, 3)
        whole = _num(s.get(f"{p}metrics.time_per_output_token_ms.successful.mean"))
        if whole is not None:
            values["guidellm_time_per_output_token_ms"] = round(whole, 3)
        tpot = fields.get("mean_tpot_ms")
        if tpot:
            values["per_request_throughput_from"] = "1000 / mean inter-token latency"
        completed = _first_number(s, f"{p}metrics.request_totals.successful", f"{p}run_stats.requests_made.successful")
        failed = _first_number(s, f"{p}metrics.request_totals.errored", f"{p}run_stats.requests_made.errored")
        kwargs: dict[str, Any] = {**ctx.base(doc.first, "bench"), **fields}
        kwargs["end_line"] = doc.end if doc.end != doc.first.number else None
        events.append(
            BenchmarkResult(
                **kwargs,
                tool="guidellm",
                concurrency=concurrency,
                per_request_throughput=round(1000.0 / tpot, 4) if tpot else None,
                completed=int(completed) if completed is not None else None,
                failed=int(failed) if failed is not None else None,
                request_rate=_num(s.get(f"{p}{strategy}rate")),
                model=_text(s.get(f"{p}config.backend.model")) or _text(s.get(f"{p}worker.backend_model")),
                backend=_text(s.get(f"{p}config.backend.kind")) or _text(s.get(f"{p}worker.backend_type")),
                values=values,
            )
        )
    return events


def _event(doc: _Document, ctx: ParseContext) -> list[EventBase]:
    ctx.state.pop(_OPEN, None)
    if any(k.startswith("benchmarks.[") for k in doc.scalars):
        return guidellm_results(doc, ctx)
    aiperf = any(k.endswith(".avg") for k in doc.scalars)  # AIPerf's / GenAI-Perf's metric blocks; others are flat
    event = _aiperf_result(doc, ctx) if aiperf else _flat_result(doc, ctx)
    return [event] if event is not None else []


def _read(doc: _Document) -> BlockFn:
    def read(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        if line.skip or has_header(line) or doc.lines >= _MAX_LINES:
            ctx.block = None  # a fence, a log line or a runaway document ends it: what was read is kept
            blocks.stash(ctx, _event(doc, ctx))
            return None
        if not line.text.strip():
            return []  # blank lines inside a pasted document; the end of the source closes it in `finish`
        doc.feed(line.text)
        if doc.broken:
            ctx.block = None
            blocks.stash(ctx, _event(doc, ctx))
            return None
        doc.end = line.number
        if doc.done:
            ctx.block = None
            return _event(doc, ctx)
        return []

    return read


def parse_json_result(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    text = line.text
    stripped = text.lstrip()
    doc = _Document(first=line)
    if stripped.startswith("{"):
        doc.feed(stripped)
    elif _PRETTY_OPEN_RE.match(text):
        doc.items.append(0)
        doc.stack.append("{")  # inside the document's top-level object, whose `{` line came before
        doc.expect_key = True
        doc.feed(text)
    else:
        return None
    doc.end = line.number
    if doc.broken and not doc.scalars:
        return None
    if doc.done or doc.broken:
        events = _event(doc, ctx)
        return events if events or doc.done else None
    ctx.state[_OPEN] = doc
    ctx.block = _read(doc)
    return []


def finish(ctx: ParseContext) -> list[EventBase]:
    """A document still open when the source ends (a paste cut before its closing brace)."""
    doc = ctx.state.get(_OPEN)
    if isinstance(doc, _Document):
        ctx.block = None
        return _event(doc, ctx)
    return []


_VLLM_ONE_LINE = (
    '{"date": "20250524-035144", "endpoint_type": "vllm", "backend": "vllm", "label": null, '
    '"model_id": "Qwen/Qwen3-8B", "tokenizer_id": "Qwen/Qwen3-8B", "num_prompts": 100, "request_rate": "inf", '
    '"burstiness": 1.0, "max_concurrency": 8, "duration": 30.1, "completed": 100, "failed": 0, '
    '"request_throughput": 3.32, "output_throughput": 850.1, "total_token_throughput": 4250.5, '
    '"mean_ttft_ms": 120.5, "median_ttft_ms": 110.2, "mean_tpot_ms": 9.1, "mean_itl_ms": 9.0}'
)
_SGLANG_ONE_LINE = (
    '{"backend": "sglang", "dataset_name": "sharegpt", "request_rate": 1, "total_input_tokens": 74403, '
    '"total_output_tokens": 61393, "total_output_tokens_retokenized": 53379, "mean_e2e_latency_ms": '
    '1060.0129053120813, "median_e2e_latency_ms": 631.0748402029276, "median_ttft_ms": 18.003160133957863, '
    '"median_itl_ms": 4.990246146917343, "output_throughput": 197.87412207948074, "sharegpt_output_len": null, '
    '"random_input_len": 1024, "random_output_len": 1024, "random_range_ratio": 0.0, "duration": '
    '310.26290529966354, "completed": 300}'
)
_AIPERF_PRETTY = """\
  "schema_version": "1.5",
  "request_latency": {
    "unit": "ms",
    "avg": 2620.71,
    "count": 20
  },
  "request_throughput": {
    "unit": "requests/sec",
    "avg": 1.45
  },
  "request_count": {
    "unit": "requests",
    "avg": 20.0
  }
}"""

# a GuideLLM report's shape (GenerativeBenchmarksReport, 0.8.1), pretty-printed from its "benchmarks" line;
# the values are those of fixtures/inputs/bench/guidellm-0.8.1-mock-sweep.json.gz's first benchmark, rounded
_GUIDELLM_PRETTY = """\
  "benchmarks": [
    {
      "type_": "generative_benchmark",
      "config": {"strategy": {"type_": "concurrent", "streams": 1}, "backend": {"model": "mock-llama"}},
      "metrics": {
        "request_totals": {"successful": 24, "errored": 0, "incomplete": 0, "total": 24},
        "time_to_first_token_ms": {"successful": {"mean": 135.2, "median": 131.7}},
        "inter_token_latency_ms": {"successful": {"mean": 25.68, "median": 25.6}},
        "output_tokens_per_second": {"successful": {"mean": 36.26}}
      }
    }
  ]
}"""

GRAMMARS: list[Grammar] = [
    Grammar(
        "bench.json_result",
        "bench",
        (
            '"backend": ',
            '"schema_version": ',
            '"output_throughput": ',
            '"mean_ttft_ms": ',
            '"request_throughput": ',
            '"benchmarks": ',
        ),
        parse_json_result,
        (
            case(
                "vllm-save-result-one-line",
                _VLLM_ONE_LINE,
                (
                    "benchmark_result",
                    {
                        "tool": "vllm-bench-serve",
                        "concurrency": 8,
                        "output_throughput": 850.1,
                        "per_request_throughput": 109.8901,
                        "mean_ttft_ms": 120.5,
                        "request_rate": None,
                        "model": "Qwen/Qwen3-8B",
                        "backend": "vllm",
                    },
                ),
                exact=True,
            ),
            case(
                # sgl-project/sglang#1268 (zhyncs, H100 SXM): the first JSON Lines record, verbatim
                "sglang-jsonl-1268",
                _SGLANG_ONE_LINE,
                (
                    "benchmark_result",
                    {
                        "tool": "sglang-bench-serving",
                        "output_throughput": 197.8741,
                        "request_rate": 1.0,
                        "mean_e2e_ms": 1060.0129,
                        "completed": 300,
                        "backend": "sglang",
                    },
                ),
                exact=True,
            ),
            case(
                "vllm-pretty",
                '{\n  "date": "20250524-035144",\n  "backend": "openai-chat",\n  "model_id": "m",\n'
                '  "max_concurrency": 4,\n  "ttfts": [\n    0.1,\n    0.2\n  ],\n  "mean_tpot_ms": 50.0\n}',
                ("benchmark_result", {"concurrency": 4, "per_request_throughput": 20.0, "backend": "openai-chat"}),
                exact=True,
            ),
            case(
                # the AIPerf schema page's example, from its first key line
                "aiperf-pretty",
                _AIPERF_PRETTY,
                (
                    "benchmark_result",
                    {"tool": "aiperf", "request_throughput": 1.45, "mean_e2e_ms": 2620.71, "completed": 20},
                ),
                exact=True,
            ),
            case(
                "guidellm-pretty",
                _GUIDELLM_PRETTY,
                (
                    "benchmark_result",
                    {
                        "tool": "guidellm",
                        "concurrency": 1,
                        "mean_tpot_ms": 25.68,
                        "per_request_throughput": 38.9408,
                        "completed": 24,
                        "model": "mock-llama",
                    },
                ),
                exact=True,
            ),
            case(
                "pretty-output-throughput-first",
                '  "output_throughput": 120.5,\n  "mean_ttft_ms": 30.0\n}',
                ("benchmark_result", {"output_throughput": 120.5, "mean_ttft_ms": 30.0}),
                exact=True,
            ),
            case(
                "mean-ttft-only",
                '{"mean_ttft_ms": 12.0}',
                ("benchmark_result", {"mean_ttft_ms": 12.0}),
                exact=True,
            ),
            case(
                "request-throughput-only-is-not-a-result",
                '{"request_throughput": 3.2}',
                exact=True,
            ),
        ),
    ),
]
