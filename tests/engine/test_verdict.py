"""The verdict on real and hostile inputs: never healthy on what was not understood (logdoctor/engine/verdict.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from logdoctor.engine.result import Diagnosis
from logdoctor.engine.rules import load_rules
from logdoctor.pipeline.run import LineSource, diagnose_sources

ROOT = Path(__file__).resolve().parents[2]
STORY = ROOT / "fixtures" / "logs" / "story"


def diagnose(text: str) -> Diagnosis:
    lines = list(enumerate(text.split("\n"), start=1))
    return diagnose_sources([LineSource(name="input", lines=lines)], load_rules())


@pytest.mark.parametrize(
    "text",
    [
        "",
        (ROOT / "README.md").read_text(encoding="utf-8"),
        os.urandom(20_000).decode("latin-1"),
        "x" * 200_000,
    ],
    ids=["empty", "readme", "random-bytes", "one-long-line"],
)
def test_not_a_log(text: str) -> None:
    verdict = diagnose(text).verdict
    assert verdict.kind == "not-a-log" and not verdict.healthy


def test_problem_log() -> None:
    verdict = diagnose((STORY / "vllm-dflash-tp2-a6000.log").read_text(encoding="utf-8")).verdict
    assert verdict.kind == "problems" and not verdict.healthy
    # spec-net-loss and spec-low-acceptance are one problem: speculation that costs more than it gives
    assert "2 likely problem(s); top: speculation" in verdict.summary  # and the TP link (custom all-reduce off)


def test_healthy_log_with_configuration_and_measurements() -> None:
    verdict = diagnose((STORY / "vllm-mtp-tp2-a6000-healthy.log").read_text(encoding="utf-8")).verdict
    assert verdict.kind == "healthy" and verdict.healthy and verdict.missing == []


def test_stats_excerpt_is_inconclusive_and_says_what_it_did_not_read() -> None:
    """A stats excerpt (or a log cut after its start-up) cannot rule out the causes read from the configuration:
    eager decode, custom all-reduce, the attention backend, the kernels. Not healthy."""
    text = (
        "(APIServer pid=1) INFO 05-19 10:13:11 [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
        "Avg generation throughput: 655.3 tokens/s, Running: 8 reqs, Waiting: 0 reqs, GPU KV cache usage: 25.9%, "
        "Prefix cache hit rate: 0.0%\n"
    ) * 6
    verdict = diagnose(text).verdict
    assert verdict.kind == "inconclusive" and not verdict.healthy
    assert [m.split(":")[0] for m in verdict.missing] == ["configuration"]
    assert "missing: configuration" in verdict.summary


def test_a_start_up_without_stats_lines_with_nothing_found_is_healthy_and_says_so() -> None:
    text = (
        "(APIServer pid=1) INFO 05-19 10:13:01 [api_server.py:1805] vLLM API server version 0.10.1\n"
        "(APIServer pid=1) INFO 05-19 10:13:01 [utils.py:326] non-default args: {'model': 'Qwen/Qwen3-8B'}\n"
    )
    verdict = diagnose(text).verdict
    assert verdict.kind == "healthy", verdict.summary
    assert "not read: measured throughput" in verdict.summary


def test_a_vllm_header_without_any_event_is_inconclusive_not_healthy() -> None:
    text = "(APIServer pid=1) INFO 05-19 10:13:11 [api_server.py:100] Started server process\n"
    verdict = diagnose(text).verdict
    assert verdict.kind in ("inconclusive", "not-a-log") and not verdict.healthy


def test_lines_with_a_keyword_that_no_line_type_understood_are_counted() -> None:
    text = (STORY / "vllm-mtp-tp2-a6000-healthy.log").read_text(encoding="utf-8")
    text += "(APIServer pid=1) INFO 05-19 10:13:11 [loggers.py:271] Engine 000: Avg prompt throughput: garbled\n"
    verdict = diagnose(text).verdict
    assert verdict.not_understood == 1
    assert "1 line(s) not understood" in verdict.summary


def test_far_below_the_expected_bound_is_not_healthy() -> None:
    """The healthy story run measures 72 tok/s per request on 2x RTX A6000; had it run on H200s, whose bandwidth is
    six times the A6000's, the same 72 tok/s would be far below the bound, with no finding to say why: not healthy."""
    from logdoctor.perf.options import perf_options
    from logdoctor.pipeline.run import diagnose_parsed, parse_sources

    text = (STORY / "vllm-mtp-tp2-a6000-healthy.log").read_text(encoding="utf-8")
    lines = list(enumerate(text.split("\n"), start=1))
    parsed = parse_sources([LineSource(name="input", lines=lines)])
    on_h200 = diagnose_parsed(parsed, load_rules(), perf=perf_options("H200"))[0]
    assert on_h200.performance is not None and on_h200.performance.band == "below"
    assert on_h200.verdict.kind == "inconclusive" and not on_h200.verdict.healthy
    assert any(m.startswith("an explanation: throughput is") for m in on_h200.verdict.missing)
    assert "expected <=" in on_h200.verdict.summary and "on 2x H200" in on_h200.verdict.summary


def test_a_minor_finding_with_part_of_the_evidence_missing_is_inconclusive() -> None:
    """A log cut before its stats lines (or pasted without its start-up) may hold a minor finding that the part not
    read would confirm: not healthy. Here the start-up of the healthy story run is kept up to its first stats line
    only: its long start-up is a note (below 50), and no measured throughput was read."""
    text = (STORY / "vllm-mtp-tp2-a6000-healthy.log").read_text(encoding="utf-8")
    startup = text[: text.index("Avg generation throughput")]
    startup = startup[: startup.rindex("\n") + 1]
    result = diagnose(startup)
    assert result.findings and all(f.score < 50 for f in result.findings), [(f.rule, f.score) for f in result.findings]
    assert result.verdict.kind == "inconclusive" and not result.verdict.healthy
    assert "measured throughput" in result.verdict.summary
