"""The GenAI-Perf / AIPerf CSV and GuideLLM's YAML and CSV reports (logdoctor/inputs/bench/exports.py): what the
cases do not pin down."""

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


def test_guidellm_csv_and_json_reports_of_one_run_give_the_same_results() -> None:
    from_csv = results(fixture("guidellm-0.8.1-mock-sweep.csv.gz"))
    from_json = results(fixture("guidellm-0.8.1-mock-sweep.json.gz"))
    assert len(from_csv) == len(from_json) == 2

    def fields(e: BenchmarkResult) -> dict[str, object]:
        return e.model_dump(exclude={"line", "end_line", "source"})

    assert [fields(e) for e in from_csv] == [fields(e) for e in from_json]
    assert [e.concurrency for e in from_csv] == [1.0, 8.0]  # the rows' Strategy: concurrent@1, concurrent@8
    assert from_csv[0].end_line == 5  # three header rows and one row a benchmark


def test_guidellm_csv_strategies_other_than_concurrent() -> None:
    # str() of GuideLLM's strategies (scheduler/strategies.py of 0.8.1): synchronous, throughput@N, constant@R
    head = "Run Info,Run Info,Benchmark,Inter Token Latency\nRun ID,Run Index,Strategy,Successful ms\n,,,Mean\n"
    rows = ["r,0,synchronous,20.0", "r,1,throughput@64,40.0", "r,2,constant@2.50,25.0", "r,3,throughput@unlimited,50"]
    events = results(head + "\n".join(rows) + "\n")
    assert [(e.concurrency, e.request_rate, e.values.get("strategy")) for e in events] == [
        (1.0, None, "synchronous"),
        (64.0, None, "throughput"),
        (None, 2.5, "constant"),
        (None, None, "throughput"),
    ]
    assert [e.per_request_throughput for e in events] == [50.0, 25.0, 40.0, 20.0]


def test_guidellm_csv_row_of_another_width_ends_the_report() -> None:
    text = fixture("guidellm-0.8.1-mock-sweep.csv.gz")
    log = (
        "(APIServer pid=2961) INFO 05-08 14:07:10 [loggers.py:271] Engine 000: Avg prompt throughput: 46.0 tokens/s, "
        "Avg generation throughput: 17.9 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.4%, "
        "Prefix cache hit rate: 21.4%"
    )
    events = parse_text(text + "a,b\n" + log + "\n")
    assert len([e for e in events if isinstance(e, BenchmarkResult)]) == 2
    assert any(not isinstance(e, BenchmarkResult) for e in events)


def test_aiperf_csv_from_its_docs_is_aiperf_and_stops_before_the_telemetry() -> None:
    # ai-dynamo/aiperf docs/tutorials/working-with-profile-exports.md: its three example sections of one run
    text = (FIXTURES / "aiperf-docs-profile-export.csv").read_text(encoding="utf-8")
    (event,) = results(text.replace("\n", "\r\n"))  # csv.writer's line ends
    assert event.tool == "aiperf"
    assert (event.mean_ttft_ms, event.median_ttft_ms, event.mean_itl_ms) == (1588.8, 787.54, 51.76)
    assert (event.mean_e2e_ms, event.output_throughput, event.request_throughput) == (6550.36, 1274.63, 13.16)
    assert event.completed == 200


def test_aiperf_csv_of_current_releases_with_sum_and_unusual_names() -> None:
    # aiperf 0.13.0: STAT_KEYS gain `sum` after `max`; metric headers hold hyphens, %, and parentheses
    # (metrics/types/*.py), and rows come sorted by tag, so such a row sits between the ones read
    text = (
        "Metric,avg,min,max,sum,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\n"
        "Acceptance Length,2.81,1.00,5.00,,1.00,1.00,1.00,2.00,3.00,3.00,4.00,4.00,5.00,0.90\n"
        "Inter Token Latency (ms),12.57,11.80,13.00,879.00,11.80,11.80,12.40,12.50,12.60,12.70,12.90,12.90,13.00,0.26\n"
        "Network-Adjusted Time to First Token (ms),150.00,50.00,2500.00,,,,,,,,,,,\n"
        "OSL Mismatch Diff %,0.50,0.00,1.00,,,,,,,,,,,\n"
        "Time to First Token (ms),165.73,56.50,2506.00,11601.00,57.00,60.00,61.00,76.00,153.00,170.00,189.00,196.00,"
        "985.00,287.00\n"
        "\n"
        "Metric,Value\n"
        "Request Count,70\n"
    )
    (event,) = results(text)
    assert event.tool == "aiperf"
    assert (event.mean_ttft_ms, event.median_ttft_ms, event.mean_itl_ms) == (165.73, 153.0, 12.57)
    assert (event.acceptance_length, event.completed) == (2.81, 70)
