"""Dotted key paths of benchmark JSON documents that the scanner in jsondoc.py keeps below its depth limit.

    benchmarks.[0].metrics.inter_token_latency_ms.successful.mean     GuideLLM (GenerativeBenchmarksReport)
    input_config.perf_analyzer.stimulus.concurrency                     GenAI-Perf 0.0.1x

These match key paths, not lines, so they live apart from the line types' patterns.
"""

from __future__ import annotations

import re

# the scalars kept below _MAX_DEPTH: GuideLLM's per-benchmark metric summaries, strategy and backend (its
# GenerativeBenchmarksReport, benchmarks[i].metrics.<metric>.successful.mean), GenAI-Perf's stimulus
_GUIDELLM_METRICS = (
    "time_to_first_token_ms|time_per_output_token_ms|inter_token_latency_ms|output_tokens_per_second"
    "|tokens_per_second|requests_per_second|request_concurrency|request_latency|request_totals"
)
DEEP_KEEP_RE = re.compile(
    rf"^benchmarks\.\[\d+\]\.(?:metrics\.(?:{_GUIDELLM_METRICS})\.(?:successful|errored)(?:\.(?:mean|median))?"
    r"|(?:config|args)\.(?:strategy|backend)\.[a-z_]+|worker\.[a-z_]+|run_stats\.requests_made\.[a-z]+)$"
    r"|^input_config\.perf_analyzer\.stimulus\.[a-z_]+$"
)
GUIDELLM_BENCHMARK_RE = re.compile(r"^benchmarks\.\[(\d+)\]\.")
