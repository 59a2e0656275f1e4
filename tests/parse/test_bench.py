"""Pasted benchmark results (catalogue/sglang-nccl.md §10): the story's concurrency table, `vllm bench serve`,
`sglang.bench_serving` and `bench_one_batch(_server)`."""

from __future__ import annotations

from typing import Any

import pytest

from logdoctor.events import BenchmarkResult, EventBase
from logdoctor.inputs.bench import grammars as bench
from logdoctor.parse.envelope import parse_envelope
from logdoctor.parse.grammar import ParseContext
from logdoctor.parse.pipeline import parse_text


def results(text: str) -> list[BenchmarkResult]:
    events = parse_text(text)
    assert all(isinstance(ev, BenchmarkResult) for ev in events), [ev.type for ev in events]
    return [ev for ev in events if isinstance(ev, BenchmarkResult)]


def check(event: EventBase, expected: dict[str, Any]) -> None:
    for name, value in expected.items():
        actual = getattr(event, name)
        if isinstance(value, float):
            assert actual == pytest.approx(value), (name, actual)
        else:
            assert actual == value, (name, actual)


# --- the story's concurrency table -------------------------------------------------------------------

STORY_TABLE = """\
C | Agg tok/s | Per-req tok/s | TTFT(s) | Tokens | Wall(s) | Ok | Fail
1 | 18.0 | 18.0 | 0.21 | 512 | 28.6 | 1 | 0
4 | 60.2 | 15.1 | 0.35 | 2048 | 34.0 | 4 | 0
16 | 150.4 | 9.4 | 1.20 | 8192 | 54.5 | 15 | 1"""

MARKDOWN_TABLE = """\
| C | Agg tok/s | Per-req tok/s | TTFT(s) | Tokens | Wall(s) | Ok | Fail |
|---|-----------|---------------|---------|--------|---------|----|------|
| 1 | 73.5 | 73.5 | 0.05 | 512 | 7.0 | 1 | 0 |
| 8 | 410.2 | 51.3 | 0.09 | 4096 | 10.0 | 8 | 0 |"""

ALIGNED_TABLE = """\
  C | Agg tok/s | Per-req tok/s | TTFT(s) | Tokens | Wall(s) | Ok | Fail
----+-----------+---------------+---------+--------+---------+----+-----
  1 |      18.0 |          18.0 |    0.21 |    512 |    28.6 |  1 |    0"""


def test_story_table() -> None:
    rows = results(STORY_TABLE)
    assert [r.line for r in rows] == [2, 3, 4]
    check(
        rows[0],
        dict(
            tool="concurrency-table",
            concurrency=1.0,
            output_throughput=18.0,
            per_request_throughput=18.0,
            mean_ttft_ms=210.0,
            completed=1,
            failed=0,
            engine="bench",
            values={"tokens": 512, "wall_s": 28.6},
        ),
    )
    check(rows[2], dict(concurrency=16.0, output_throughput=150.4, per_request_throughput=9.4, completed=15, failed=1))


def test_markdown_table() -> None:
    rows = results(MARKDOWN_TABLE)
    assert [(r.concurrency, r.output_throughput, r.per_request_throughput) for r in rows] == [
        (1.0, 73.5, 73.5),
        (8.0, 410.2, 51.3),
    ]
    assert rows[0].mean_ttft_ms == pytest.approx(50.0)


def test_aligned_table_with_plus_separator() -> None:
    (row,) = results(ALIGNED_TABLE)
    check(row, dict(concurrency=1.0, output_throughput=18.0, mean_ttft_ms=210.0))


def test_table_in_a_markdown_fence_beside_a_log() -> None:
    text = (
        "```\n" + STORY_TABLE + "\n```\n"
        "[2026-04-05 20:02:51] Decode batch, #running-req: 1, #token: 11179, token usage: 0.08, cuda graph: True, "
        "gen throughput (token/s): 18.11, #queue-req: 0"
    )
    events = parse_text(text)
    assert [ev.type for ev in events] == ["benchmark_result"] * 3 + ["scheduler_stats"]


def test_table_followed_directly_by_a_log_line() -> None:
    text = STORY_TABLE + "\n[2025-03-04 00:36:46 TP0] sglang is using nccl==2.21.5"
    assert [ev.type for ev in parse_text(text)] == ["benchmark_result"] * 3 + ["nccl_version"]


# --- `vllm bench serve` / benchmark_serving.py ---------------------------------------------------------

# VERBATIM head (vllm#43276), completed with the rows of the format (RENDERED values)
VLLM_SERVE = """\
============ Serving Benchmark Result ============
Successful requests:                     128
Failed requests:                         0
Maximum request concurrency:             16
Benchmark duration (s):                  152.04
Total input tokens:                      1053440
Total generated tokens:                  131072
Request throughput (req/s):              0.84
Output token throughput (tok/s):         862.09
Peak output token throughput (tok/s):    1039.00
Peak concurrent requests:                26.00
Total token throughput (tok/s):          7790.78
---------------Time to First Token----------------
Mean TTFT (ms):                          1417.27
Median TTFT (ms):                        1200.50
P99 TTFT (ms):                           3012.00
-----Time per Output Token (excl. 1st token)------
Mean TPOT (ms):                          16.00
Median TPOT (ms):                        15.50
P99 TPOT (ms):                           30.10
---------------Inter-token Latency----------------
Mean ITL (ms):                           15.90
Median ITL (ms):                         14.00
P99 ITL (ms):                            40.00
----------------End-to-end Latency----------------
Mean E2EL (ms):                          18000.00
Median E2EL (ms):                        17500.00
P99 E2EL (ms):                           25000.00
---------------Speculative Decoding---------------
Acceptance rate (%):                     40.00
Acceptance length:                       2.20
Drafts:                                  1000
Draft tokens:                            3000
Accepted tokens:                         1200
Per-position acceptance (%):
  Position 0:                            61.50
  Position 1:                            41.50
  Position 2:                            16.90
=================================================="""

# VERBATIM older form with `Total Token throughput` (vllm#18566 era), single stream
VLLM_SERVE_OLD = """\
============ Serving Benchmark Result ============
Successful requests:                     10
Benchmark duration (s):                  95.26
Total input tokens:                      10240
Total generated tokens:                  5120
Request throughput (req/s):              0.10
Output token throughput (tok/s):         53.75
Total Token throughput (tok/s):          161.24
---------------Time to First Token----------------
Mean TTFT (ms):                          98.11
Median TTFT (ms):                        97.55
P99 TTFT (ms):                           120.30
-----Time per Output Token (excl. 1st token)------
Mean TPOT (ms):                          18.45
Median TPOT (ms):                        18.40
P99 TPOT (ms):                           19.00
=================================================="""


def test_vllm_bench_serve() -> None:
    (row,) = results(VLLM_SERVE)
    check(
        row,
        dict(
            tool="vllm-bench-serve",
            line=1,
            end_line=len(VLLM_SERVE.split("\n")),
            completed=128,
            failed=0,
            concurrency=16.0,
            request_throughput=0.84,
            output_throughput=862.09,
            total_throughput=7790.78,
            mean_ttft_ms=1417.27,
            median_ttft_ms=1200.5,
            mean_tpot_ms=16.0,
            median_tpot_ms=15.5,
            mean_itl_ms=15.9,
            mean_e2e_ms=18000.0,
            acceptance_length=2.2,
            per_request_throughput=62.5,
        ),
    )
    assert row.values["acceptance_rate"] == pytest.approx(0.4)
    assert row.values["acceptance_position_0"] == pytest.approx(0.615)
    assert row.values["peak_output_token_throughput_tok_s"] == pytest.approx(1039.0)
    assert row.values["p99_ttft_ms"] == pytest.approx(3012.0)
    assert row.values["benchmark_duration_s"] == pytest.approx(152.04)


def test_vllm_bench_serve_old_labels() -> None:
    (row,) = results(VLLM_SERVE_OLD)
    check(row, dict(total_throughput=161.24, output_throughput=53.75, mean_tpot_ms=18.45, concurrency=None))
    assert row.per_request_throughput == pytest.approx(1000 / 18.45, rel=1e-3)


def test_two_blocks_and_a_log_line_between() -> None:
    text = (
        VLLM_SERVE_OLD
        + "\n(APIServer pid=1) INFO 05-19 10:13:11 [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
        "Avg generation throughput: 55.3 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 1.9%, "
        "Prefix cache hit rate: 0.0%\n" + VLLM_SERVE
    )
    events = parse_text(text)
    assert [ev.type for ev in events] == ["benchmark_result", "scheduler_stats", "benchmark_result"]


# --- `sglang.bench_serving` ----------------------------------------------------------------------------

# VERBATIM (sglang#6681, 0.4.3.post4 with the `reqeuest` typo, no TPOT block), the paste ends mid-block
SGLANG_043 = """\

============ Serving Benchmark Result ============
Backend:                                 sglang
Traffic request rate:                    128.0
Max reqeuest concurrency:                512
Successful requests:                     1024
Benchmark duration (s):                  287.20
Concurrency:                             507.99
----------------End-to-End Latency----------------"""

# RENDERED 0.5.23 row order, with trailing padding kept on some rows (sglang#9428)
_SGLANG_0523_ROWS = """\
============ Serving Benchmark Result ============
Backend:                                 sglang
Traffic request rate:                    inf
Max request concurrency:                 1
Successful requests:                     20
Benchmark duration (s):                  139.27
Total input tokens:                      20480
Total input text tokens:                 20480
Total generated tokens:                  10240
Total generated tokens (retokenized):    10236
Request throughput (req/s):              0.14
Input token throughput (tok/s):          147.05
Output token throughput (tok/s):         73.53
Peak output token throughput (tok/s):    80.00
Peak concurrent requests:                1
Total token throughput (tok/s):          220.58
Concurrency:                             1.00
Accept length:                           3.12
----------------End-to-End Latency----------------
Mean E2E Latency (ms):                   6963.20
Median E2E Latency (ms):                 6950.00
---------------Time to First Token----------------
Mean TTFT (ms):                          45.10
Median TTFT (ms):                        44.80
P99 TTFT (ms):                           60.00
-----Time per Output Token (excl. 1st token)------
Mean TPOT (ms):                          13.54
Median TPOT (ms):                        13.50
---------------Inter-Token Latency----------------
Mean ITL (ms):                           40.10
Median ITL (ms):                         39.00
P95 ITL (ms):                            45.00
P99 ITL (ms):                            50.00
Max ITL (ms):                            120.00
----------------Cache Hit Details-----------------
Total prompt tokens:                     20480
Total cached tokens:                     0
Cache hit rate:                          0.0%
=================================================="""


def _pad(text: str) -> str:
    """Rows as SGLang prints them: `{:<40} {:<10}`, trailing spaces included."""
    return "\n".join(
        line.ljust(51) if ":" in line and line[0].isalpha() and len(line) < 51 else line for line in text.split("\n")
    )


SGLANG_0523 = _pad(_SGLANG_0523_ROWS)


def test_sglang_bench_serving_043_cut_off() -> None:
    (row,) = results(SGLANG_043)
    check(
        row,
        dict(
            tool="sglang-bench-serving",
            line=2,
            end_line=9,
            concurrency=512.0,
            completed=1024,
            failed=None,
            output_throughput=None,
        ),
    )
    assert row.values["backend"] == "sglang"
    assert row.values["concurrency"] == pytest.approx(507.99)
    assert row.values["traffic_request_rate"] == pytest.approx(128.0)


def test_sglang_bench_serving_0523() -> None:
    (row,) = results(SGLANG_0523)
    check(
        row,
        dict(
            tool="sglang-bench-serving",
            concurrency=1.0,
            completed=20,
            request_throughput=0.14,
            output_throughput=73.53,
            total_throughput=220.58,
            acceptance_length=3.12,
            mean_e2e_ms=6963.2,
            mean_ttft_ms=45.1,
            median_ttft_ms=44.8,
            mean_tpot_ms=13.54,
            mean_itl_ms=40.1,
        ),
    )
    assert row.per_request_throughput == pytest.approx(1000 / 13.54, rel=1e-3)
    assert row.values["traffic_request_rate"] == "inf"
    assert row.values["cache_hit_rate"] == 0.0
    assert row.values["max_itl_ms"] == pytest.approx(120.0)


def test_sglang_block_ended_by_a_log_line_is_kept() -> None:
    text = (
        SGLANG_043 + "\n[2025-05-01 10:00:00 TP0] Decode batch. #running-req: 1, #token: 9322, token usage: 0.00, "
        "gen throughput (token/s): 97.52, #queue-req: 0"
    )
    events = parse_text(text)
    assert sorted(ev.type for ev in events) == ["benchmark_result", "scheduler_stats"]
    assert next(ev for ev in events if isinstance(ev, BenchmarkResult)).completed == 1024


# --- `sglang.bench_one_batch_server` and `bench_one_batch` --------------------------------------------

# RENDERED from the 0.5.23 prints, two cases, then the Markdown summary table (its first row repeats case 1)
_ONE_BATCH_SERVER = """\
batch size: 1
input_len: 1024
output_len: 512
latency: 7.12 s
input throughput: 30612.25 tok/s
output throughput: 73.55 tok/s
last_ttft: 0.03 s
last generation throughput: 73.48 tok/s
acc_length: 3.12
cache hit rate: 0.0000
batch size: 8
input_len: 1024
output_len: 512
latency: 10.00 s
input throughput: 30612.25 tok/s
output throughput: 300.10 tok/s
ttft: 0.05 s
Last generation throughput: 320.00 tok/s

| batch size | input len | latency (s) | input throughput (tok/s) | output throughput (tok/s) | acc length | ITL (ms) | input cost ($/1M) | output cost ($/1M) | cache hit rate |
| ---------- | --------- | ----------- | ------------------------ | ------------------------- | ---------- | -------- | ----------------- | ------------------ | -------------- |
| 1 | 1024 | 7.12 | 30612.25 | 73.55 | 3.12 | 13.60 | 0.01 | 0.50 | 0.0 |
| 16 | 1024 | 12.00 | 30612.25 | 500.00 | n/a | 32.00 | 0.01 | 0.50 | 0.0 |"""
# the source prints `f"acc_length: {x:.2f} "`, with a trailing space
ONE_BATCH_SERVER = _ONE_BATCH_SERVER.replace("acc_length: 3.12", "acc_length: 3.12 ")


def test_bench_one_batch_server() -> None:
    rows = results(ONE_BATCH_SERVER)
    assert [(r.line, r.concurrency) for r in rows] == [(1, 1.0), (11, 8.0), (23, 16.0)]
    check(
        rows[0],
        dict(
            tool="sglang-bench-one-batch",
            end_line=10,
            output_throughput=73.55,
            per_request_throughput=73.48,
            mean_ttft_ms=30.0,
            acceptance_length=3.12,
        ),
    )
    assert rows[0].values["input_len"] == 1024
    assert rows[0].values["latency_s"] == pytest.approx(7.12)
    check(rows[1], dict(output_throughput=300.1, per_request_throughput=40.0, mean_ttft_ms=50.0))
    check(rows[2], dict(output_throughput=500.0, acceptance_length=None, mean_itl_ms=32.0))


def test_bench_one_batch_offline() -> None:
    text = "\n".join(
        [
            "Prefill. latency: 0.03512 s, throughput:  29157.20 token/s",
            "Decode 0. Batch size: 1, latency: 0.01405 s, throughput:     71.17 token/s",
            "Decode 1. Batch size: 1, latency: 0.01362 s, throughput:     73.42 token/s",
            "Decode.  median latency: 0.01362 s, median throughput:     73.42 token/s",
            "Total. latency:  1.756 s, throughput:    656.13 token/s",
        ]
    )
    (row,) = results(text)
    check(row, dict(line=4, concurrency=1.0, output_throughput=73.42, per_request_throughput=73.42))


def test_finish_closes_an_open_block() -> None:
    ctx = ParseContext(source="t")
    lines = VLLM_SERVE_OLD.split("\n")[:3]
    header = parse_envelope("t", 1, lines[0])
    assert bench.parse_serving_header(header, ctx) == []
    assert ctx.block is not None
    for number, text in enumerate(lines[1:], start=2):
        assert ctx.block(parse_envelope("t", number, text), ctx) == []
    (row,) = bench.finish(ctx)
    assert isinstance(row, BenchmarkResult)
    assert (row.completed, row.values["benchmark_duration_s"]) == (10, 95.26)
    assert bench.finish(ctx) == []
