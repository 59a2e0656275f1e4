"""What the reporter says happened (logdoctor/parse/symptoms.py): a hang in the prose pasted with a log, and the
sentences that name one without reporting it. Sentences marked "real" are lines of fixture logs (the file is named);
the others are constructed."""

from __future__ import annotations

import pytest

from logdoctor.events import EngineFailure
from logdoctor.parse.pipeline import parse_text
from logdoctor.parse.symptoms import reported_hang
from logdoctor.testing import assert_fires, assert_not_fires, diagnose_text

NCCL_LINE = "worker2:182125:182125 [0] NCCL INFO Bootstrap : Using eno2:10.1.10.95<0>\n"


@pytest.mark.parametrize(
    "text",
    [
        # real: fixtures/logs/realworld12/nccl-c505.log line 5 (part) and nccl-c504.log line 3
        "From what I could tell, it looks like the initialization is successful, but it hangs/freezes right after "
        "initialization. This happens both in pytorch and using the all_reduce_perf.",
        "However, it stalled after outputs the following text.",
        "The server got stuck at Capturing CUDA graphs and never came up",
        "I think it hangs in the first all-reduce",
        "After 20 minutes the engine became unresponsive.",
        # real: fixtures/logs/realworld14/vllm-c1200.log line 3 (part); constructed in Japanese and Korean
        "VLLM就直接卡住了，NPU罢工利用率0%、VLLM显示Running: 56 reqs",
        "推理时服务器无响应",
        "vLLMがハングします",
        "서버가 멈췄습니다",
    ],
)
def test_a_reported_hang(text: str) -> None:
    assert reported_hang(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "This PR fixes a hang in the scheduler.",
        "This PR resolves an issue where the engine hangs after a preemption.",
        "It no longer hangs with the patch.",
        "The server doesn't hang anymore.",
        "Does it hang for you?",
        "If it hangs, restart it with NCCL_DEBUG=INFO.",
        "To avoid a hang, set NCCL_P2P_DISABLE=1.",
        # real: the rest of vLLM's shared-memory broadcast line, where a terminal broke it (realworld5 vllm-rh07)
        "60 seconds. This typically happens when some processes are hanging or doing some time-consuming work",
        "I am stuck on how to configure the router.",
        "I'm surprised that there can be such a thing as deadlock.",
        "the deadlock-safe fallback",
        "stall.serving_waits",
        # real: lines of fixtures/logs/realworld2/vllm-rh02.log and realworld8/sglang-b204.log
        "(EngineCore_DP0 pid=964370) <frozen importlib._bootstrap_external>:1241: FutureWarning: The cuda.cudart "
        "module is deprecated",
        "[2026-08-27 03:52:38] Freezing GC in Scheduler process.",
        # constructed in an offline run's format: the model's words, not the reporter's
        "Prompt: 'Tell me about GPUs.', Generated text: ' When the server hangs, check the driver.'",
        # constructed: a GPU card (`显卡`) is no hang; a negation, a condition and a question are no report
        "两张显卡在同一台机器上",
        "升级以后不会卡住了",
        "如果卡死怎么办",
        "服务卡死了吗？",
    ],
)
def test_no_reported_hang(text: str) -> None:
    assert reported_hang(text) is None


def test_the_reporter_s_hang_is_a_finding_of_a_log_only_when_no_failure_line_explains_it() -> None:
    said = "It hangs right after initialization.\n"
    assert_fires(diagnose_text(said + NCCL_LINE), rule="reported-hang", rank=1)
    # constructed: the same paste with NCCL's own error: the failure line is the finding
    failed = diagnose_text(
        said
        + NCCL_LINE
        + "worker2:182125:182125 [0] NCCL WARN Net : Connect to 10.1.10.96<43215> failed\n"
        + "Failed, NCCL error all_reduce_perf.cu:85 'unhandled system error'\n"
    )
    assert_not_fires(failed, rule="reported-hang")
    assert_fires(failed, rule="engine-failed", rank=1)
    # prose alone is no log
    assert diagnose_text(said).verdict.kind == "not-a-log"


def test_a_program_s_own_line_is_no_report() -> None:
    # constructed: an engine's line no line type reads, in vLLM's header, that says its workers hang
    engine_line = "INFO 11-02 09:10:00 [foo_connector.py:12] the transfer worker seems hung, retrying"
    assert not [e for e in parse_text(engine_line) if isinstance(e, EngineFailure)]
    assert [
        e.kind for e in parse_text("the server seems hung after the first request") if isinstance(e, EngineFailure)
    ] == ["reported-hang"]
