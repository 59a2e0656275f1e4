"""GenAI-Perf's CSV and GuideLLM's YAML report (logdoctor/inputs/bench/exports.py): what the cases do not pin down."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from logdoctor.events import BenchmarkResult
from logdoctor.parse.pipeline import parse_text

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "inputs" / "bench"


def fixture(name: str) -> str:
    with gzip.open(FIXTURES / name, "rt", encoding="utf-8") as f:
        return f.read()


def results(text: str) -> list[BenchmarkResult]:
    return [e for e in parse_text(text) if isinstance(e, BenchmarkResult)]


def test_guidellm_yaml_and_json_reports_of_one_run_give_the_same_results() -> None:
    from_yaml = results(fixture("guidellm-0.8.1-mock-sweep.yaml.gz"))
    from_json = results(fixture("guidellm-0.8.1-mock-sweep.json.gz"))
    assert len(from_yaml) == len(from_json) == 2

    def fields(e: BenchmarkResult) -> dict[str, object]:
        return e.model_dump(exclude={"line", "end_line", "source"})

    assert [fields(e) for e in from_yaml] == [fields(e) for e in from_json]
    assert [e.concurrency for e in from_yaml] == [1.0, 8.0]
    assert from_yaml[0].end_line is not None and from_yaml[0].end_line > 10000  # the whole report was read


def test_guidellm_yaml_then_a_log_line_ends_the_report() -> None:
    text = fixture("guidellm-0.8.1-mock-sweep.yaml.gz")
    head = text[: text.index("\nconfig:\n")]  # the benchmarks list only, then a vLLM log line
    # a line of fixtures/logs/story/vllm-dflash-tp2-a6000.log
    log = (
        "(APIServer pid=2961) INFO 05-08 14:07:10 [loggers.py:271] Engine 000: Avg prompt throughput: 46.0 tokens/s, "
        "Avg generation throughput: 17.9 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.4%, "
        "Prefix cache hit rate: 21.4%"
    )
    events = parse_text(head + "\n" + log + "\n")
    assert len([e for e in events if isinstance(e, BenchmarkResult)]) == 2
    assert any(not isinstance(e, BenchmarkResult) for e in events)  # the log line was read as a log line


def test_genai_perf_csv_with_telemetry_and_crlf_line_ends() -> None:
    # csv.writer ends rows with \r\n; GenAI-Perf appends GPU telemetry rows after the system metrics
    rows = [
        "Metric,avg,min,max,p99,p95,p90,p75,p50,p25,p10,p5,p1",
        'Time To First Token (ms),"1,764.61",1.0,2.0,3.0,4.0,5.0,6.0,"1,700.00",8.0,9.0,10.0,11.0',
        "Inter Token Latency (ms),22.17,22.13,22.23,22.23,22.19,22.18,22.17,22.17,22.16,22.15,22.14,22.13",
        "Output Token Throughput Per User (tokens/sec/user),45.11,44.97,45.18,45.18,45.17,45.17,45.1,45.1,45,45,45,45",
        "",
        "Metric,Value",
        "Output Token Throughput (tokens/sec),360.87",
        "Request Throughput (per sec),0.61",
        "Request Count (count),40.00",
        "",
        "Metric,GPU,avg,min,max",
        "GPU Power Usage (W),gpu0,120.50,100.00,140.00",
    ]
    (event,) = results("\r\n".join(rows) + "\r\n")
    assert event.tool == "genai-perf"
    assert (event.mean_ttft_ms, event.median_ttft_ms, event.mean_itl_ms) == (1764.61, 1700.0, 22.17)
    assert (event.per_request_throughput, event.output_throughput, event.completed) == (45.11, 360.87, 40)
    assert event.request_throughput == 0.61


def test_a_csv_header_alone_gives_no_result() -> None:
    assert results("Metric,avg,min,max,p99\n") == []


def test_the_guidellm_fixture_is_the_tools_own_output() -> None:
    data = json.loads(fixture("guidellm-0.8.1-mock-sweep.json.gz"))
    assert data["metadata"]["guidellm_version"] == "0.8.1" and len(data["benchmarks"]) == 2


def test_csv_cells_that_are_not_finite_numbers_are_no_values() -> None:
    text = (
        "Metric,avg,min,max\nRequest Latency (ms),nan,1.0,2.0\n\n"
        "Metric,Value\nRequest Count (count),inf\nRequest Throughput (per sec),2.5\n"
    )
    (event,) = results(text)
    assert (event.mean_e2e_ms, event.completed, event.request_throughput) == (None, None, 2.5)
