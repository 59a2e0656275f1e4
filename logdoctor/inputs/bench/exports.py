"""Benchmark exports that are not JSON: the GenAI-Perf / AIPerf CSV, GuideLLM's YAML and CSV reports.

    Metric,avg,min,max,p99,p95,p90,p75,p50,p25                  GenAI-Perf (export_data/csv_exporter.py): the
    Time To First Token (ms),8.00,7.00,9.00,8.98,8.90,...         request metrics' statistics, a blank line, then
                                                                   `Metric,Value` and the system metrics; values
    Metric,Value                                                   written `{:,.2f}`, so "1,764.61" comes quoted
    Output Token Throughput (tokens/sec),456.00

    Metric,avg,min,max,p1,p5,p10,p25,p50,p75,p90,p95,p99,std    AIPerf (aiperf/exporters/csv_exporter.py): the
                                                                   same two sections, its STAT_KEYS ascending
                                                                   (`sum` after `max` in later releases), `{:.2f}`

    Run Info,Run Info,...,Time to First Token,...                  GuideLLM 0.8 (benchmark/outputs/csv.py): three
    Run ID,Run Index,...,Successful ms,...                         header rows (group, field and status + units,
    ,,...,Mean,...                                                 statistic), then one row a benchmark

    benchmarks:                                                    GuideLLM (`--output kind=yaml`, yaml.dump of
    - config:                                                      GenerativeBenchmarksReport: keys sorted, lists
        backend:                                                   of mappings at their parent's indent)
          model: mock-llama

Both are block line types: the block opens on the header line and reads to the end of the export, so an export
pasted into a log, or followed by one, is read like the JSON ones (jsondoc.py). GuideLLM's YAML keeps the same
key paths as its JSON report, so the same reader (`jsondoc.guidellm_results`) turns them into events.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field
from typing import Any

from logdoctor.events import BenchmarkResult, EventBase
from logdoctor.inputs.bench import jsondoc, paths
from logdoctor.parse import blocks
from logdoctor.parse.envelope import LogLine, has_header
from logdoctor.parse.grammar import BlockFn, Grammar, ParseContext, case

_OPEN = "bench.export_open"
_MAX_LINES = 5_000_000  # a YAML report has a line a request field; runaway input ends here

# --- GenAI-Perf CSV -----------------------------------------------------------------------------------------

_CSV_HEADER_RE = re.compile(r"^Metric,avg,min,max\b")
# "Time To First Token (ms)" -> name and unit; GenAI-Perf writes name.replace("_", " ").title() (exporter_utils),
# AIPerf its metric's `header` and `unit` ("Network-Adjusted Time to First Token (ms)", "OSL Mismatch Diff %")
_CSV_NAME_RE = re.compile(r"(?P<name>[^,]*?[A-Za-z][^,]*?)(?: \((?P<unit>[^()]*)\))?")  # fullmatch on a cell
_CSV_FIELDS: dict[str, str] = {
    "time to first token": "mean_ttft_ms",
    "inter token latency": "mean_itl_ms",
    "request latency": "mean_e2e_ms",
    "output token throughput per user": "per_request_throughput",
    "output token throughput per request": "per_request_throughput",  # before 0.0.8
    "output token throughput": "output_throughput",
    "request throughput": "request_throughput",
    "acceptance length": "acceptance_length",  # AIPerf's spec_decode_acceptance_length (unit: ratio)
}
_CSV_MS = {"ms": 1.0, "s": 1000.0, "sec": 1000.0, "us": 0.001, "ns": 1e-6}


@dataclass
class _CsvExport:
    first: LogLine
    tool: str = "genai-perf"
    columns: list[str] = field(default_factory=list)
    fields: dict[str, float] = field(default_factory=dict)
    values: dict[str, float | int | str] = field(default_factory=dict)
    completed: int | None = None
    end: int | None = None


def _is_aiperf(columns: list[str]) -> bool:
    """AIPerf writes its STAT_KEYS ascending (avg, min, max, [sum,] p1, p5, ..., p99, std); GenAI-Perf descending
    (avg, min, max, p99, p95, ...) and never `std`."""
    stats = [c for c in columns if c != "sum"]
    return "std" in stats or stats[3:4] == ["p1"]


def _csv_number(text: str) -> float | None:
    try:
        number = float(text.replace(",", ""))
    except ValueError:
        return None  # "N/A" (a statistic GenAI-Perf did not compute)
    return number if math.isfinite(number) else None


def _csv_row(export: _CsvExport, text: str) -> bool:
    """Read one row; False when the line is not a row of the export (the block ends)."""
    try:
        cells = next(csv.reader([text]))
    except csv.Error:
        return False
    if len(cells) < 2:
        return False
    if cells[0] == "Metric":
        export.columns = [c.strip().lower() for c in cells[1:]]
        if _is_aiperf(export.columns):
            export.tool = "aiperf"
        return True
    m = _CSV_NAME_RE.fullmatch(cells[0].strip())
    if m is None:
        return False
    name, unit = m.group("name").lower(), (m.group("unit") or "").strip()
    stats = dict(zip(export.columns or ["value"], (_csv_number(c) for c in cells[1:]), strict=False))
    mean = stats.get("avg", stats.get("value"))
    if mean is None:
        return True
    if name == "request count":
        export.completed = int(mean)
        return True
    target = _CSV_FIELDS.get(name)
    if target is None:
        return True  # sequence lengths, time to second token, telemetry rows
    if target.endswith("_ms"):
        factor = _CSV_MS.get(unit)
        if factor is None:
            export.values[f"{name.replace(' ', '_')}_unit"] = unit  # an unknown unit: kept out of the fields
            return True
        mean *= factor
        if target == "mean_ttft_ms" and stats.get("p50") is not None:
            export.fields["median_ttft_ms"] = float(stats["p50"] or 0.0) * factor
    export.fields.setdefault(target, mean)
    return True


def _csv_event(export: _CsvExport, ctx: ParseContext) -> list[EventBase]:
    ctx.state.pop(_OPEN, None)
    if not export.fields:
        return []
    kwargs: dict[str, Any] = {**ctx.base(export.first, "bench"), **export.fields}
    kwargs["end_line"] = export.end if export.end != export.first.number else None
    return [BenchmarkResult(**kwargs, tool=export.tool, completed=export.completed, values=export.values)]


def _read_csv(export: _CsvExport) -> BlockFn:
    def read(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        text = line.text.rstrip("\r")
        if not text.strip():
            return []  # the blank line between the request and the system metrics
        if line.skip or has_header(line) or not _csv_row(export, text):
            ctx.block = None
            blocks.stash(ctx, _csv_event(export, ctx))
            return None
        export.end = line.number
        return []

    return read


def parse_genai_perf_csv(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    text = line.text.rstrip("\r")
    if not _CSV_HEADER_RE.match(text):
        return None
    export = _CsvExport(first=line, end=line.number)
    _csv_row(export, text)
    ctx.state[_OPEN] = export
    ctx.block = _read_csv(export)
    return []


# --- GuideLLM YAML ------------------------------------------------------------------------------------------

_YAML_OPEN_RE = re.compile(r"^benchmarks:\s*$")
_YAML_LINE_RE = re.compile(r"^(?P<indent> *)(?P<dash>- +)?(?P<key>[A-Za-z_][A-Za-z0-9_]*):(?: +(?P<value>.*))?$")
_YAML_ITEM_RE = re.compile(r"^(?P<indent> *)- ")


@dataclass
class _YamlReport:
    """The key paths of a yaml.dump'ed report, as the JSON scanner names them (`benchmarks.[0].metrics...`)."""

    doc: jsondoc.Document
    stack: list[tuple[int, str]] = field(default_factory=list)  # (column, key or "[i]")
    items: dict[tuple[str, ...], int] = field(default_factory=dict)  # list items seen under a path
    lines: int = 0

    def _pop(self, column: int, inclusive: bool) -> None:
        while self.stack and (self.stack[-1][0] > column or (inclusive and self.stack[-1][0] == column)):
            self.stack.pop()

    def _item(self, column: int) -> None:
        """A `- ` at `column`: the next item of the list whose key stands at that column (an indentless list)."""
        self._pop(column, inclusive=False)
        if self.stack and self.stack[-1][1].startswith("["):
            self.stack.pop()  # the previous item of the same list
        parent = tuple(k for _, k in self.stack)
        index = self.items.get(parent, 0)
        self.items[parent] = index + 1
        self.stack.append((column, f"[{index}]"))

    def feed(self, text: str) -> bool:
        """Read one line; False when it cannot be a line of the report (the block ends)."""
        self.lines += 1
        m = _YAML_LINE_RE.match(text)
        if m is None:
            item = _YAML_ITEM_RE.match(text)
            if item is not None:
                self._item(len(item.group("indent")))
                return True  # a list of scalars (`- 4`)
            return text.startswith(" ")  # a wrapped scalar's continuation; at column 0, the end
        column = len(m.group("indent"))
        if m.group("dash"):
            self._item(column)
            column += len(m.group("dash"))
        self._pop(column, inclusive=True)
        key, value = m.group("key"), m.group("value")
        if value is None or value in ("", "|", ">", "|-", ">-"):
            self.stack.append((column, key))
            return True
        dotted = ".".join([*(k for _, k in self.stack), key])
        if dotted == "metadata.guidellm_version" or paths.DEEP_KEEP_RE.match(dotted):
            self.doc.scalars.setdefault(dotted, _yaml_scalar(value))
        return True


def _yaml_scalar(text: str) -> jsondoc.Scalar:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text in ("null", "~"):
        return None
    if text in ("true", "false"):
        return text == "true"
    return jsondoc.word(text) if jsondoc.is_json_word(text) else text


def _yaml_event(report: _YamlReport, ctx: ParseContext) -> list[EventBase]:
    ctx.state.pop(_OPEN, None)
    return jsondoc.guidellm_results(report.doc, ctx)


def _read_yaml(report: _YamlReport) -> BlockFn:
    def read(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        if not line.text.strip():
            return []
        if line.skip or has_header(line) or report.lines >= _MAX_LINES or not report.feed(line.text.rstrip("\r")):
            ctx.block = None
            blocks.stash(ctx, _yaml_event(report, ctx))
            return None
        report.doc.end = line.number
        return []

    return read


def parse_guidellm_yaml(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    if not _YAML_OPEN_RE.match(line.text):
        return None
    report = _YamlReport(doc=jsondoc.Document(first=line, end=line.number))
    report.feed(line.text)
    ctx.state[_OPEN] = report
    ctx.block = _read_yaml(report)
    return []


# --- GuideLLM CSV -------------------------------------------------------------------------------------------

_GL_CSV_OPEN_RE = re.compile(r"^Run Info,Run Info,")
# (group, field, statistic) of GuideLLM's CSV -> the key path its JSON report gives the same number under
_GL_CSV_COLUMNS: dict[tuple[str, str, str], str] = {
    ("Token Throughput", "Successful Output Tokens/Sec", "Mean"): "metrics.output_tokens_per_second.successful.mean",
    ("Token Throughput", "Successful Total Tokens/Sec", "Mean"): "metrics.tokens_per_second.successful.mean",
    ("Server Throughput", "Successful Requests/Sec", "Mean"): "metrics.requests_per_second.successful.mean",
    ("Server Throughput", "Successful Concurrency", "Mean"): "metrics.request_concurrency.successful.mean",
    ("Time to First Token", "Successful ms", "Mean"): "metrics.time_to_first_token_ms.successful.mean",
    ("Time to First Token", "Successful ms", "Median"): "metrics.time_to_first_token_ms.successful.median",
    ("Inter Token Latency", "Successful ms", "Mean"): "metrics.inter_token_latency_ms.successful.mean",
    ("Inter Token Latency", "Successful ms", "Median"): "metrics.inter_token_latency_ms.successful.median",
    ("Time per Output Token", "Successful ms", "Mean"): "metrics.time_per_output_token_ms.successful.mean",
    ("Request Latency", "Successful Sec", "Mean"): "metrics.request_latency.successful.mean",
    ("Request Counts", "Successful", ""): "metrics.request_totals.successful",
    ("Request Counts", "Errored", ""): "metrics.request_totals.errored",
}
# the value after `@` in str(strategy) (guidellm/scheduler/strategies.py): streams, max concurrency, or the rate
_GL_STRATEGY_VALUE = {"concurrent": "streams", "throughput": "max_concurrency", "constant": "rate", "poisson": "rate"}


@dataclass
class _GuidellmCsv:
    """GuideLLM's CSV report: its three header rows name each column, then each row is one benchmark."""

    doc: jsondoc.Document
    header: list[list[str]] = field(default_factory=list)
    rows: int = 0

    def feed(self, text: str) -> bool:
        """Read one row; False when the line is not a row of the report (the block ends)."""
        try:
            cells = next(csv.reader([text]))
        except (csv.Error, StopIteration):
            return False
        if self.header and len(cells) != len(self.header[0]):
            return False
        if len(self.header) < 3:
            self.header.append(cells)
            return True
        self._benchmark(dict(zip(zip(*self.header, strict=True), cells, strict=True)))
        self.rows += 1
        return True

    def _benchmark(self, row: dict[tuple[str, ...], str]) -> None:
        scalars = self.doc.scalars
        p = f"benchmarks.[{self.rows}]."
        for column, path in _GL_CSV_COLUMNS.items():
            number = _csv_number(row.get(column, ""))
            if number is not None:
                scalars[p + path] = number
        kind, _, value = row.get(("Benchmark", "Strategy", ""), "").partition("@")
        if kind:
            scalars[p + "config.strategy.type_"] = kind
            target = _GL_STRATEGY_VALUE.get(kind)
            number = _csv_number(value) if target and value else None
            if target and number is not None:
                scalars[p + f"config.strategy.{target}"] = number
        backend = _json_object(row.get(("Run Info", "Backend", ""), ""))
        for key in ("model", "kind"):
            if isinstance(backend.get(key), str):
                scalars[p + f"config.backend.{key}"] = backend[key]
        version = _json_object(row.get(("Runtime Info", "Metadata", ""), "")).get("guidellm_version")
        if isinstance(version, str):
            scalars.setdefault("metadata.guidellm_version", version)


def _json_object(text: str) -> dict[str, Any]:
    """A cell holding json.dumps of a mapping (GuideLLM's config columns); anything else is empty."""
    if not text.startswith("{"):
        return {}
    import json

    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _guidellm_csv_event(report: _GuidellmCsv, ctx: ParseContext) -> list[EventBase]:
    ctx.state.pop(_OPEN, None)
    return jsondoc.guidellm_results(report.doc, ctx)


def _read_guidellm_csv(report: _GuidellmCsv) -> BlockFn:
    def read(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        text = line.text.rstrip("\r")
        if line.skip or has_header(line) or report.rows >= _MAX_LINES or not text.strip() or not report.feed(text):
            ctx.block = None
            blocks.stash(ctx, _guidellm_csv_event(report, ctx))
            return None
        report.doc.end = line.number
        return []

    return read


def parse_guidellm_csv(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    text = line.text.rstrip("\r")
    if not _GL_CSV_OPEN_RE.match(text):
        return None
    report = _GuidellmCsv(doc=jsondoc.Document(first=line, end=line.number))
    if not report.feed(text):
        return None
    ctx.state[_OPEN] = report
    ctx.block = _read_guidellm_csv(report)
    return []


def finish(ctx: ParseContext) -> list[EventBase]:
    """An export still open when the source ends (both end with the file)."""
    open_export = ctx.state.get(_OPEN)
    if isinstance(open_export, _CsvExport):
        ctx.block = None
        return _csv_event(open_export, ctx)
    if isinstance(open_export, _YamlReport):
        ctx.block = None
        return _yaml_event(open_export, ctx)
    if isinstance(open_export, _GuidellmCsv):
        ctx.block = None
        return _guidellm_csv_event(open_export, ctx)
    return []


# GenAI-Perf's own test of its CSV exporter (tests/test_csv_exporter.py, perf_analyzer at 0f0d58a9^)
_GENAI_PERF_CSV = """\
Metric,avg,min,max,p99,p95,p90,p75,p50,p25
Time To First Token (ms),8.00,7.00,9.00,8.98,8.90,8.80,8.50,8.00,7.50
Time To Second Token (ms),2.00,1.00,3.00,2.98,2.90,2.80,2.50,2.00,1.50
Request Latency (ms),5.00,4.00,6.00,5.98,5.90,5.80,5.50,5.00,4.50
Inter Token Latency (ms),11.00,10.00,12.00,11.98,11.90,11.80,11.50,11.00,10.50
Output Sequence Length,2.00,1.00,3.00,2.98,2.90,2.80,2.50,2.00,1.50
Input Sequence Length,6.00,5.00,7.00,6.98,6.90,6.80,6.50,6.00,5.50

Metric,Value
Output Token Throughput (per sec),456.00
Request Throughput (per sec),123.00"""

# AIPerf's docs (docs/tutorials/working-with-profile-exports.md, "Aggregated Statistics (CSV)"): its two example
# snippets, the request metrics and the summary metrics of one run, joined by the blank line AIPerf writes between
_AIPERF_CSV = """\
Metric,avg,min,max,p1,p5,p10,p25,p50,p75,p90,p95,p99,std
Request Latency (ms),6550.36,4996.25,9383.37,5523.64,5641.18,5649.25,5678.54,5799.90,7314.96,8594.21,8980.84,9381.63,1171.14
Time to First Token (ms),1588.80,382.24,4121.09,403.48,547.97,641.77,659.03,787.54,2439.00,3695.10,4051.43,4119.33,1189.99
Inter Token Latency (ms),51.76,46.81,56.30,50.41,50.50,50.53,50.86,51.98,52.17,53.18,54.32,55.87,1.23
Output Sequence Length (tokens),96.85,91.00,97.00,91.00,97.00,97.00,97.00,97.00,97.00,97.00,97.00,97.00,0.88

Metric,Value
Benchmark Duration (sec),15.20
Request Throughput (requests/sec),13.16
Request Count,200.00
Output Token Throughput (tokens/sec),1274.63"""

# the shape of GuideLLM 0.8.1's CSV report (fixtures/inputs/bench/guidellm-0.8.1-mock-sweep.csv.gz), cut down to
# the columns read
_GUIDELLM_CSV = """\
Run Info,Run Info,Benchmark,Request Counts,Request Counts,Time to First Token,Inter Token Latency,Token Throughput
Run ID,Backend,Strategy,Successful,Errored,Successful ms,Successful ms,Successful Output Tokens/Sec
,,,,,Mean,Mean,Mean
r1,"{""kind"": ""openai_http"", ""model"": ""mock-llama""}",concurrent@8,24,0,130.46,25.39,292.87"""

# the shape of GuideLLM 0.8.1's YAML report (fixtures/inputs/bench/guidellm-0.8.1-mock-sweep.yaml.gz), cut down
_GUIDELLM_YAML = """\
benchmarks:
- config:
    backend:
      kind: openai_http
      model: mock-llama
    strategy:
      streams: 8
      type_: concurrent
  metrics:
    inter_token_latency_ms:
      successful:
        mean: 25.4
        median: 25.4
    output_tokens_per_second:
      successful:
        mean: 292.9
    request_latency:
      successful:
        mean: 1.7
    request_totals:
      errored: 0
      successful: 24
metadata:
  guidellm_version: 0.8.1"""

GRAMMARS: list[Grammar] = [
    Grammar(
        "bench.genai_perf_csv",
        "bench",
        ("Metric,avg,min,max",),
        parse_genai_perf_csv,
        (
            case(
                "genai-perf-csv-exporter-test",
                _GENAI_PERF_CSV,
                (
                    "benchmark_result",
                    {
                        "tool": "genai-perf",
                        "mean_ttft_ms": 8.0,
                        "median_ttft_ms": 8.0,
                        "mean_itl_ms": 11.0,
                        "mean_e2e_ms": 5.0,
                        "output_throughput": 456.0,
                        "request_throughput": 123.0,
                    },
                ),
                exact=True,
            ),
            case(
                "aiperf-csv-docs-example",
                _AIPERF_CSV,
                (
                    "benchmark_result",
                    {
                        "tool": "aiperf",
                        "mean_ttft_ms": 1588.8,
                        "median_ttft_ms": 787.54,
                        "mean_itl_ms": 51.76,
                        "mean_e2e_ms": 6550.36,
                        "output_throughput": 1274.63,
                        "request_throughput": 13.16,
                        "completed": 200,
                    },
                ),
                exact=True,
            ),
            case(
                # GenAI-Perf's `{:,.2f}` puts a thousands comma in, and the csv writer quotes the cell
                "genai-perf-csv-thousands",
                'Metric,avg,min,max,p99\nTime To First Token (ms),"1,764.61","1,732.66","1,885.98","1,874.74"',
                ("benchmark_result", {"tool": "genai-perf", "mean_ttft_ms": 1764.61}),
                exact=True,
            ),
        ),
    ),
    Grammar(
        "bench.guidellm_csv",
        "bench",
        ("Run Info,Run Info,",),
        parse_guidellm_csv,
        (
            case(
                "guidellm-csv-report",
                _GUIDELLM_CSV,
                (
                    "benchmark_result",
                    {
                        "tool": "guidellm",
                        "concurrency": 8,
                        "mean_tpot_ms": 25.39,
                        "mean_itl_ms": 25.39,
                        "per_request_throughput": 39.3856,
                        "mean_ttft_ms": 130.46,
                        "output_throughput": 292.87,
                        "completed": 24,
                        "failed": 0,
                        "model": "mock-llama",
                        "backend": "openai_http",
                    },
                ),
                exact=True,
            ),
        ),
    ),
    Grammar(
        "bench.guidellm_yaml",
        "bench",
        ("benchmarks:",),
        parse_guidellm_yaml,
        (
            case(
                "guidellm-yaml-report",
                _GUIDELLM_YAML,
                (
                    "benchmark_result",
                    {
                        "tool": "guidellm",
                        "concurrency": 8,
                        "mean_tpot_ms": 25.4,
                        "output_throughput": 292.9,
                        "mean_e2e_ms": 1700.0,
                        "completed": 24,
                        "failed": 0,
                        "model": "mock-llama",
                    },
                ),
                exact=True,
            ),
        ),
    ),
]
