"""The warning vocabulary: a WARNING / ERROR line no line type read becomes a cause, "not understood", or nothing."""

from __future__ import annotations

import pytest

from logdoctor.events import EngineWarning
from logdoctor.parse.pipeline import parse_text
from logdoctor.parse.warning_vocabulary import classify


def _warnings(text: str, engine: str | None = None) -> list[EngineWarning]:
    return [e for e in parse_text(text, engine=engine) if isinstance(e, EngineWarning)]


@pytest.mark.parametrize(
    ("message", "logger", "cause", "strength"),
    [
        ("Grouped GEMM is not fully optimized yet for this shape", "fused_moe.py", "quantization-kernel-fallback", 1.0),
        ("Falling back to eager mode for the drafter", None, "cuda-graphs-disabled", 1.0),
        (
            "SageAttention3 does not support GQA/MQA (Hq != Hkv); falling back to torch SDPA.",
            None,
            "attention-backend-fallback",
            1.0,
        ),
        ("Pinned memory not available. CPU offload performance may be degraded.", None, "cpu-offload-or-swap", 1.0),
        ("Mixed chunked prefill is disabled for UNO speculative decoding.", None, "spec-net-loss", 0.75),
        # the subsystem only in the logger's file name: half the weight
        ("This path is sub-optimal for the current shape", "custom_all_reduce.py", "custom-allreduce-disabled", 0.75),
        ("Setting is not supported here", "custom_all_reduce.py", "custom-allreduce-disabled", 0.5),
        # real: fixtures/logs/realworld6/vllm-r004.log; the subject (quantization) comes before the unmapped
        # comparison (non-quantized models)
        (
            "bitsandbytes quantization is not fully optimized yet. The speed can be slower than non-quantized models.",
            "config.py",
            "quantization-kernel-fallback",
            1.0,
        ),
        # no subsystem named: the words of an implementation (a native path, an op, a kernel library) name a kernel
        (
            "Op rms_norm_gated: No implementation in priority list supports all args, execution fallback to native",
            "op.py",
            "quantization-kernel-fallback",
            1.0,
        ),
        ("DEEPEP_CONFIG is not initialized, using default config", "utils.py", "quantization-kernel-fallback", 0.75),
    ],
)
def test_a_performance_word_and_a_subsystem_give_a_cause(
    message: str, logger: str | None, cause: str, strength: float
) -> None:
    got = classify(message, logger)
    assert (got.cause, got.strength) == (cause, strength)


@pytest.mark.parametrize(
    "message",
    [
        "The tokenizer class is deprecated and will be removed in a future release.",
        "FutureWarning: `resume_download` is deprecated",
        "Using KV cache scaling factor 1.0 for fp8_e4m3. This may cause accuracy issues.",
        "Default sampling parameters have been overridden by the model's generation_config.json",
    ],
)
def test_noise_maps_to_nothing(message: str) -> None:
    assert classify(message).noise
    line = f"(APIServer pid=1) WARNING 11-30 10:00:00 [x.py:1] {message}"
    assert _warnings(line) == []


@pytest.mark.parametrize(
    "message",
    [
        "Served model name differs from the model path",  # no performance word
        "Something is slow",  # no subsystem
        "FlashInfer is not available. Falling back to the PyTorch-native implementation of top-p & top-k sampling.",
        "Found ulimit of 16384 and failed to automatically increase; this may slow things down",
    ],
)
def test_no_cause_fits_is_listed_not_scored(message: str) -> None:
    got = _warnings(f"(APIServer pid=1) WARNING 11-30 10:00:00 [api_server.py:91] {message}")
    assert [(w.cause, w.message) for w in got] == [(None, message)]


def test_tracebacks_and_exception_lines_are_left_to_the_failure_events() -> None:
    text = "\n".join(
        f"(EngineCore_DP0 pid=1) ERROR 11-30 10:00:00 [core.py:12] {m}"
        for m in ("Traceback (most recent call last):", '  File "x.py", line 3, in f', "ValueError: bad value")
    )
    assert _warnings(text) == []


def test_the_warning_keeps_its_place_and_the_engines_words() -> None:
    line = (
        "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [fused_moe.py:882] "
        "Grouped GEMM is not fully optimized yet for this shape"
    )
    (w,) = _warnings(line)
    assert (w.line, w.level, w.logger, w.engine) == (1, "WARNING", "fused_moe.py", "vllm")
    assert (w.performance, w.subsystem, w.subsystem_from) == ("not fully optimized", "gemm", "message")


def test_nccl_warn_lines_are_read_by_the_vocabulary() -> None:
    from logdoctor.facts import build_profile

    nccl = "node1:1234:1234 [0] NCCL WARN Falling back to a slower ring for this message size"
    profile = build_profile(parse_text(nccl))
    assert profile.value("warned.p2p") == 'NCCL warned: "Falling back to a slower ring for this message size"'
    assert profile.value("warned.p2p.strength") == 0.75  # the subsystem is the header's, not the message's


def test_python_warnings() -> None:
    py = "/usr/lib/python3/site-packages/vllm/attention.py:12: UserWarning: attention falls back to SDPA"
    (w2,) = _warnings(py)
    assert (w2.cause, w2.logger) == ("attention-backend-fallback", "attention.py")


def test_sglang_lines_without_a_level_need_a_strong_word_and_a_cause() -> None:
    kept = "[2025-11-30 10:00:00 TP0] Grouped GEMM for this shape is not fully optimized yet"
    assert [w.cause for w in _warnings(kept)] == ["quantization-kernel-fallback"]
    plain = "[2025-11-30 10:00:00 TP0] Load weight begin. avail mem=70.00 GB; slow disk"  # no subsystem
    assert _warnings(plain) == []
    weak = "[2025-11-30 10:00:00 TP0] Disable cuda graph capture for the vision tower performance run"
    assert _warnings(weak) == []


def test_a_stream_of_chosen_line_types_reads_no_warnings() -> None:
    from logdoctor.parse.pipeline import EventStream

    line = "(Worker_TP0 pid=2) WARNING 11-30 10:00:00 [fused_moe.py:8] Grouped GEMM is not fully optimized yet"
    stream = EventStream("t", [(1, line)], grammars=())
    assert list(stream) == []


def test_the_candidate_test_and_the_grep_keywords_agree() -> None:
    """A large file is prefiltered by grep on these keywords; a small one by may_be_warning: the same lines."""
    from logdoctor.parse.keywords import candidate_keywords
    from logdoctor.parse.warning_vocabulary import LEVELLESS_KEYWORDS, WARNING_KEYWORDS, may_be_warning

    for keyword in WARNING_KEYWORDS:
        assert may_be_warning(f"x {keyword} y")
        assert keyword in candidate_keywords()
    for keyword in LEVELLESS_KEYWORDS:  # only after an SGLang header's date
        assert may_be_warning(f"[2025-11-30 10:00:00 TP0] x {keyword} y")
        assert not may_be_warning(f"(APIServer pid=1) INFO 11-30 10:00:00 [logger.py:43] prompt: 'x {keyword} y'")
        assert keyword in candidate_keywords()
    assert not may_be_warning("(APIServer pid=1) INFO 11-30 10:00:00 [api_server.py:1] Started server process")


def test_a_line_chosen_only_for_its_warning_words_and_no_warning_is_not_counted() -> None:
    from logdoctor.parse.pipeline import EventStream

    line = "[2025-11-30 10:00:00] Received request: prompt='why is my query slow, and how do I optimize it'"
    stream = EventStream("t", [(1, line)])
    assert list(stream) == []
    assert stream.stats.unrecognised == 0


@pytest.mark.parametrize(
    ("message", "subsystem"),
    [
        # the subject first: an unmapped subsystem before a mapped one keeps the line unscored
        ("Non-quantized layer lm_head falling back to the unquantized method", "non quantized"),
        ("Weight cache IPC loading failed; falling back to disk loading", "weight cache"),
        ("Hugepage mmap via libc failed; falling back to plain mmap.", "hugepage"),
        ("Failed to decode JPEG on GPU, falling back to CPU.", "jpeg"),
    ],
)
def test_a_subsystem_with_no_cause_named_first_gives_none(message: str, subsystem: str) -> None:
    got = classify(message)
    assert (got.cause, got.subsystem) == (None, subsystem)
    assert got.performance is not None


def test_a_known_performance_warning_no_rule_reads_speaks_for_its_cause() -> None:
    from logdoctor.facts import build_profile

    # Constructed from vLLM's utils/jit_monitor.py message: a line type knows it (perf_warning), no rule of its own
    # reads the topic, so it is the compile cause's warning instead of a silent event.
    jit = (
        "(Worker_TP0 pid=9) WARNING 11-30 10:00:00 [jit_monitor.py:141] Triton kernel JIT compilation during "
        "inference: _fwd_kernel. This causes a latency spike; consider extending warmup to cover this shape/config."
    )
    profile = build_profile(parse_text(jit))
    assert str(profile.value("warned.compile")).startswith('vLLM warned: "Triton kernel JIT compilation')
    assert profile.value("warned.compile.strength") == 0.75
    # A topic that names no cause stays out of the warned facts.
    stats_off = (
        "(APIServer pid=1) WARNING 11-30 10:00:00 [async_llm.py:1] "
        "AsyncLLM created with api_server_count more than 1; disabling stats logging"
    )
    events = parse_text(stats_off)
    assert [e.type for e in events] == ["perf_warning"]
    assert not any(name.startswith("warned.") for name in build_profile(events).facts)
