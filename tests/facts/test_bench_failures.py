"""Failed benchmark requests: judged only where the client printed both its successful and its failed requests.

Constructed in the `vllm bench serve` format (the `Failed requests:` line of vllm-project/vllm#26478); the real
vllm-c207 block of fixtures/logs/realworld9 prints only its successful requests."""

from __future__ import annotations

from pathlib import Path

from tests.facts.helpers import findings_by_rule, profile

_BLOCK = (
    "============ Serving Benchmark Result ============\n"
    "Successful requests:                     {ok}\n"
    "{failed}"
    "Maximum request concurrency:             512\n"
    "Output token throughput (tok/s):         12792.49\n"
    "==================================================\n"
)


def test_the_share_of_failed_requests_is_read_from_both_counts() -> None:
    text = _BLOCK.format(ok=514, failed="Failed requests:                         486\n")
    assert profile(text).value("bench.failed_share") == 0.486
    assert "bench-requests-failed" in findings_by_rule(text)


def test_no_failed_requests_or_no_failed_count_is_no_failure() -> None:
    none_failed = _BLOCK.format(ok=1000, failed="Failed requests:                         0\n")
    assert profile(none_failed).value("bench.failed_share") == 0.0
    assert "bench-requests-failed" not in findings_by_rule(none_failed)
    # successful requests alone: how many were sent is not printed, so nothing is judged
    assert profile(_BLOCK.format(ok=514, failed="")).value("bench.failed_share") is None


def test_a_block_that_prints_only_its_successful_requests_is_not_judged() -> None:
    real = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "realworld9" / "vllm-c207.log"
    assert "bench-requests-failed" not in findings_by_rule(real.read_text())
