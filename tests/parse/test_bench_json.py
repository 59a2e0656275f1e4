"""Saved benchmark JSON (logdoctor/inputs/bench/jsondoc.py): `vllm bench serve --save-result`, `sglang.bench_serving`
JSON Lines and AIPerf's export, in both layouts the line pipeline meets (one line, pretty-printed)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from logdoctor.events import BenchmarkResult
from logdoctor.parse.pipeline import EventStream, parse_text

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "inputs" / "bench"

# The keys `vllm bench serve --save-result` writes (vllm/benchmarks/serve.py, 0.33.0), values constructed.
VLLM_RESULT: dict[str, Any] = {
    "date": "20260508-141500",
    "endpoint_type": "openai-chat",
    "backend": "openai-chat",
    "label": None,
    "model_id": "Qwen/Qwen3-32B",
    "tokenizer_id": "Qwen/Qwen3-32B",
    "num_prompts": 64,
    "request_rate": "inf",
    "burstiness": 1.0,
    "max_concurrency": 16,
    "duration": 60.5,
    "completed": 63,
    "failed": 1,
    "total_input_tokens": 65536,
    "total_output_tokens": 16384,
    "request_throughput": 1.04,
    "request_goodput": None,
    "output_throughput": 270.8,
    "total_token_throughput": 1353.9,
    "mean_ttft_ms": 840.2,
    "median_ttft_ms": 801.0,
    "p99_ttft_ms": 1900.4,
    "mean_tpot_ms": 48.0,
    "median_tpot_ms": 47.1,
    "mean_itl_ms": 47.5,
    "mean_e2el_ms": 13000.1,
    "spec_decode_acceptance_length": 2.4,
}
EXPECTED = {
    "tool": "vllm-bench-serve",
    "concurrency": 16.0,
    "output_throughput": 270.8,
    "total_throughput": 1353.9,
    "request_throughput": 1.04,
    "per_request_throughput": pytest.approx(1000 / 48.0, rel=1e-3),
    "mean_ttft_ms": 840.2,
    "mean_tpot_ms": 48.0,
    "mean_itl_ms": 47.5,
    "mean_e2e_ms": 13000.1,
    "completed": 63,
    "failed": 1,
    "acceptance_length": 2.4,
    "request_rate": None,
    "model": "Qwen/Qwen3-32B",
    "backend": "openai-chat",
}


def results(text: str) -> list[BenchmarkResult]:
    events = parse_text(text)
    assert all(isinstance(ev, BenchmarkResult) for ev in events), [ev.type for ev in events]
    return [ev for ev in events if isinstance(ev, BenchmarkResult)]


def check(event: BenchmarkResult, expected: dict[str, Any]) -> None:
    for name, value in expected.items():
        assert getattr(event, name) == value, (name, getattr(event, name))


@pytest.mark.parametrize("indent", [None, 2, 4, "\t"])
def test_vllm_save_result_in_every_layout(indent: int | str | None) -> None:
    text = json.dumps(VLLM_RESULT, indent=indent)
    (event,) = results(text)
    check(event, EXPECTED)
    assert event.values["request_rate"] == "inf"
    assert event.values["p99_ttft_ms"] == 1900.4
    lines = text.count("\n") + 1
    if indent is None:
        assert (event.line, event.end_line) == (1, None)
    else:
        assert event.line == 4  # the `"backend"` line opens the block; `{`, `"date"`, `"endpoint_type"` came before
        assert event.end_line == lines


def test_detailed_result_lists_are_skipped_without_confusing_the_scanner() -> None:
    detailed = dict(
        VLLM_RESULT,
        ttfts=[0.1] * 500,
        itls=[[0.04, 0.05]] * 500,
        generated_texts=['a "quoted" {brace} ] and, comma: "mean_tpot_ms": 1'] * 50,
        errors=[""] * 500,
    )
    for text in (json.dumps(detailed), json.dumps(detailed, indent=2)):
        (event,) = results(text)
        check(event, EXPECTED)


def test_sglang_jsonl_from_issue_1268_verbatim() -> None:
    text = (FIXTURES / "sglang-bench-serving-1268.jsonl").read_text(encoding="utf-8")
    first, second = results(text)
    assert first.tool == second.tool == "sglang-bench-serving"
    assert (first.request_rate, second.request_rate) == (1.0, 2.0)
    assert first.output_throughput == pytest.approx(197.874, rel=1e-4)
    assert second.output_throughput == pytest.approx(402.835, rel=1e-4)
    assert first.median_ttft_ms == pytest.approx(18.003, rel=1e-4)
    assert first.mean_e2e_ms == pytest.approx(1060.013, rel=1e-4)
    assert first.completed == 300 and first.concurrency is None
    assert (first.line, second.line) == (1, 2)


def test_sglang_pretty_with_server_info_keeps_top_level_values() -> None:
    # The keys of sglang/benchmark/serving.py (0.5.23) `result`; server_info is the server's /get_server_info
    record = {
        "tag": None,
        "backend": "sglang-oai",
        "dataset_name": "random",
        "request_rate": float("inf"),
        "max_concurrency": 32,
        "server_info": {
            "model_path": "deepseek-ai/DeepSeek-V3",
            "tp_size": 8,
            "api_key": "sk-should-never-show-1234567890",
            "internal_states": [{"avg_spec_accept_length": 3.1, "output_throughput": 9999.0}],
            "output_throughput": 1.0,
        },
        "completed": 640,
        "output_throughput": 4120.5,
        "mean_ttft_ms": 512.0,
        "mean_tpot_ms": 7.5,
        "concurrency": 30.2,
        "accept_length": 3.05,
    }
    for text in (json.dumps(record), json.dumps(record, indent=2)):
        (event,) = results(text)
        assert event.tool == "sglang-bench-serving"
        assert event.output_throughput == 4120.5  # not server_info's nested output_throughput
        assert event.concurrency == 32.0 and event.values["mean_concurrency"] == 30.2
        assert event.acceptance_length == 3.05
        assert event.model == "deepseek-ai/DeepSeek-V3"
        assert event.values["server_tp_size"] == 8
        assert event.values["request_rate"] == "Infinity" and event.request_rate is None
        assert "sk-should-never-show" not in event.model_dump_json()


def test_aiperf_export_from_the_schema_page() -> None:
    # docs/reference/json-export-schema.md of ai-dynamo/aiperf: the example, verbatim
    text = """{
  "schema_version": "1.5",
  "request_latency": {
    "unit": "ms",
    "avg": 2620.71,
    "min": 2145.06,
    "max": 3411.10,
    "p50": 2568.73,
    "p99": 3371.24,
    "std": 297.93,
    "count": 20,
    "sum": 52414.29
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
    (event,) = results(text)
    check(event, {"tool": "aiperf", "mean_e2e_ms": 2620.71, "request_throughput": 1.45, "completed": 20})
    assert event.values["schema_version"] == "1.5"


def test_aiperf_latency_in_seconds_is_converted_and_unknown_units_are_kept_out() -> None:
    doc = {
        "schema_version": "1.5",
        "time_to_first_token": {"unit": "s", "avg": 0.25},
        "inter_token_latency": {"unit": "furlongs", "avg": 3.0},
        "output_token_throughput_per_user": {"unit": "tokens/sec/user", "avg": 41.0},
        "run_info": {"variation_label": "concurrency_8", "variation_values": {"phases.profiling.concurrency": 8}},
    }
    (event,) = results(json.dumps(doc, indent=2))
    assert event.mean_ttft_ms == 250.0
    assert event.mean_itl_ms is None and event.values["inter_token_latency_unit"] == "furlongs"
    assert event.per_request_throughput == 41.0 and event.concurrency == 8.0


def test_a_pasted_document_cut_short_keeps_what_was_read() -> None:
    text = json.dumps(VLLM_RESULT, indent=2)
    cut = text[: text.index('"mean_itl_ms"')]
    (event,) = results(cut)  # closed by the end of the source
    assert event.mean_tpot_ms == 48.0 and event.mean_itl_ms is None
    log_line = (
        "(APIServer pid=1) INFO 05-08 14:07:10 [api_server.py:1] Starting vLLM API server 0 on http://0.0.0.0:8000"
    )
    events = parse_text(cut + "\n" + log_line)
    bench = [e for e in events if isinstance(e, BenchmarkResult)]
    assert len(bench) == 1 and bench[0].mean_tpot_ms == 48.0  # the log line ends the block, nothing is lost


def test_a_one_line_document_cut_at_the_reader_cap_still_gives_its_values() -> None:
    text = json.dumps(dict(VLLM_RESULT, generated_texts=["x" * 50] * 10))
    (event,) = results(text[:-40])  # ends inside a string
    assert event.output_throughput == 270.8


def test_json_in_log_lines_is_left_to_the_engines() -> None:
    lines = [
        '(EngineCore pid=1) INFO 05-08 14:02:30 [core.py:93] compilation_config={"level": 3, "backend": "inductor"}',
        'INFO 05-08 14:02:30 [serving.py:1] {"backend": "vllm"}',
        '  "backend": "inductor"',  # a pretty line with no result key after it: no event
        "}",
    ]
    events = parse_text("\n".join(lines))
    assert not [e for e in events if isinstance(e, BenchmarkResult)]


def test_a_runaway_brace_does_not_swallow_the_log_after_it() -> None:
    text = '{"backend": "vllm", "output_throughput": 12.0, "nested": {"a": [1, 2\n' + "\n".join(
        f"(APIServer pid=1) INFO 05-08 14:07:{i:02d} [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
        "Avg generation throughput: 17.9 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.4%"
        for i in range(3)
    )
    events = parse_text(text)
    assert [e.type for e in events].count("scheduler_stats") == 3
    assert [e.output_throughput for e in events if isinstance(e, BenchmarkResult)] == [12.0]


def test_a_detailed_result_over_the_line_cap_keeps_its_throughputs(tmp_path: Path) -> None:
    from logdoctor.pipeline.run import local_line_sources
    from logdoctor.sources.local import MAX_LINE_BYTES

    # vLLM's order: the throughputs, then the per-request lists, then the latency means (serve.py)
    head = {k: VLLM_RESULT[k] for k in ("date", "backend", "model_id", "max_concurrency", "output_throughput")}
    detailed = {**head, "generated_texts": ["y" * 1000] * (MAX_LINE_BYTES // 1000 + 10), "mean_tpot_ms": 48.0}
    path = tmp_path / "detailed.json"
    path.write_text(json.dumps(detailed) + "\n" + json.dumps(VLLM_RESULT) + "\n", encoding="utf-8")
    (source,) = local_line_sources([str(path)])
    events = [e for e in EventStream(source.name, source.lines) if isinstance(e, BenchmarkResult)]
    assert [e.output_throughput for e in events] == [270.8, 270.8]
    assert events[0].mean_tpot_ms is None and events[1].mean_tpot_ms == 48.0


def test_prose_after_an_unclosed_brace_ends_the_document() -> None:
    text = '{"backend": "vllm", "output_throughput": 12.0, "nested": {"a": [1,\nLegend:\n  X    = Self\n'
    events = parse_text(text + "NCCL_P2P_DISABLE=1\n")
    assert [e.output_throughput for e in events if isinstance(e, BenchmarkResult)] == [12.0]


def test_a_pretty_detailed_result_keeps_the_means_after_its_lists() -> None:
    head = {k: VLLM_RESULT[k] for k in ("date", "backend", "model_id", "max_concurrency", "output_throughput")}
    detailed = {**head, "itls": [[0.01] * 50] * 2000, "mean_tpot_ms": 48.0}
    (event,) = results(json.dumps(detailed, indent=1))  # about 100,000 lines
    assert event.mean_tpot_ms == 48.0 and event.output_throughput == 270.8


def guidellm_report() -> str:
    # a real `guidellm run` 0.8.1 report (two benchmarks, 1 and 8 streams) against guidellm's mock server
    with gzip.open(FIXTURES / "guidellm-0.8.1-mock-sweep.json.gz", "rt", encoding="utf-8") as f:
        return f.read()


@pytest.mark.parametrize("indent", [None, 2])
def test_guidellm_report_gives_one_result_per_benchmark(indent: int | None) -> None:
    text = guidellm_report()
    assert "\n" not in text.strip()  # GuideLLM writes the report on one line (json.dumps, no indent)
    if indent is not None:
        text = json.dumps(json.loads(text), indent=indent)  # as `jq .` or a paste shows it
    one, eight = results(text)
    for event, streams in ((one, 1.0), (eight, 8.0)):
        check(event, {"tool": "guidellm", "concurrency": streams, "model": "mock-llama", "backend": "openai_http"})
        check(event, {"completed": 24, "failed": 0})
        assert event.values["strategy"] == "concurrent"
        # pretty-printed, the block opens on "benchmarks": the "metadata" object above it is not read
        assert event.values.get("guidellm_version") == ("0.8.1" if indent is None else None)
    # the mock server was started with --itl-ms 25 --ttft-ms 120: GuideLLM's ITL is vLLM's TPOT
    assert one.mean_tpot_ms is not None and 25.0 <= one.mean_tpot_ms <= 27.0
    assert one.per_request_throughput is not None and 37.0 <= one.per_request_throughput <= 40.0
    assert one.mean_ttft_ms is not None and 120.0 <= one.mean_ttft_ms <= 160.0
    assert one.mean_e2e_ms is not None and 1600.0 <= one.mean_e2e_ms <= 1900.0  # seconds in the report
    # its own TPOT (TTFT included) stays out of the fields
    assert float(one.values["guidellm_time_per_output_token_ms"]) > one.mean_tpot_ms
    assert eight.output_throughput is not None and one.output_throughput is not None
    assert eight.output_throughput > 6 * one.output_throughput  # 8 streams, the same per-request speed


def test_genai_perf_export_of_a_real_run() -> None:
    # triton-inference-server/perf_analyzer#298: a profile_export_genai_perf.json of the argparse era (flat
    # input_config, output_token_throughput_per_request), TRT-LLM behind Triton at concurrency 100, streaming
    (event,) = results((FIXTURES / "genai-perf-298-streaming-c100.json").read_text(encoding="utf-8"))
    check(event, {"tool": "genai-perf", "concurrency": 100.0, "model": "ensemble", "backend": "tensorrtllm"})
    check(event, {"mean_ttft_ms": 184.63779366666665, "mean_itl_ms": 2.1767344516666665})
    check(event, {"output_throughput": 44190.56002502682, "request_throughput": 17.222547659562533})
    check(event, {"per_request_throughput": 445.00388376637636, "mean_e2e_ms": 5767.434807386666})


def test_a_metric_written_as_a_string_is_no_number() -> None:
    # GenAI-Perf's own exporter test (genai-perf/tests/test_json_exporter.py at 16e6d333) writes "7"
    export = {"request_throughput": {"unit": "requests/sec", "avg": "7"}, "time_to_first_token": {"avg": 11}}
    (event,) = results(json.dumps(export, indent=2))
    assert event.request_throughput is None and event.mean_ttft_ms == 11.0


def test_genai_perf_0016_export_with_config_file_layout() -> None:
    # genai-perf 0.0.16's layout (tests/test_process_export_files.py at 263c5f6e); values constructed
    export = {
        "request_throughput": {"unit": "requests/sec", "avg": 15.0},
        "time_to_first_token": {"unit": "ms", "avg": 40.0, "p99": 80.0},
        "inter_token_latency": {"unit": "ms", "avg": 20.0},
        "output_token_throughput": {"unit": "tokens/sec", "avg": 200.0},
        "output_token_throughput_per_user": {"unit": "tokens/sec/user", "avg": 50.0},
        "telemetry_stats": {"gpu_power_usage": {"unit": "W", "gpu0": {"avg": 22.5}}},
        "input_config": {
            "model_names": ["small_model"],
            "endpoint": {"backend": "vllm", "url": "localhost:8001", "service_kind": "triton"},
            "perf_analyzer": {"path": "perf_analyzer", "stimulus": {"concurrency": 8}},
        },
    }
    (event,) = results(json.dumps(export, indent=2))
    check(event, {"tool": "genai-perf", "concurrency": 8.0, "backend": "vllm", "per_request_throughput": 50.0})
    check(event, {"request_throughput": 15.0, "mean_ttft_ms": 40.0, "output_throughput": 200.0})


def test_aiperf_json_acceptance_length() -> None:
    # aiperf 0.13.0 exports spec_decode_acceptance_length (metrics/types/spec_decode_metrics.py, unit "ratio")
    export = {
        "schema_version": "1.5",
        "request_latency": {"unit": "ms", "avg": 2620.71},
        "spec_decode_acceptance_length": {"unit": "ratio", "avg": 2.81, "p50": 3.0},
    }
    (event,) = results(json.dumps(export, indent=2))
    assert (event.tool, event.acceptance_length, event.mean_e2e_ms) == ("aiperf", 2.81, 2620.71)
