"""vLLM parsing beyond single line types: behaviour over several lines, keyword hygiene, real corpus logs.

The line-by-line cases (every VERBATIM and important RENDERED line of catalogue/vllm.md) live with their line
types in logdoctor/engines/vllm/ and run in tests/test_line_types.py.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from logdoctor.engines import vllm
from logdoctor.engines.vllm import graphs as vllm_graphs
from logdoctor.engines.vllm import spec as vllm_spec
from logdoctor.events import EngineFailure
from logdoctor.parse.pipeline import EventStream, parse_text
from logdoctor.testing.linetypes import find_event

Expect = list[tuple[str, dict[str, Any]]]

CORPUS = Path("/work/shared/corpus/realworld")


# --- behaviour that needs more than one line ---------------------------------------------------


def test_capture_bar_reported_at_start_and_end_only() -> None:
    text = "\n".join(
        f"Capturing CUDA graphs (decode, FULL): {pct:3d}%|█     | {n}/35 [00:0{n // 10}<00:01, 16.81it/s]"
        for pct, n in ((0, 0), (37, 13), (74, 26), (100, 35))
    )
    events = [e for e in parse_text(text) if e.type == "cuda_graph"]
    assert [e.line for e in events] == [1, 4]


def test_traceback_source_lines_are_not_failures() -> None:
    text = (
        "(APIServer pid=1) Traceback (most recent call last):\n"
        '(APIServer pid=1)     raise RuntimeError("Engine core initialization failed. See root cause above. "\n'
        "(APIServer pid=1) RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}"
    )
    failures = [e for e in parse_text(text) if e.type == "engine_failure"]
    assert [e.line for e in failures] == [3]


def test_benign_shutdown_lines_are_not_failures() -> None:
    text = (
        "(APIServer pid=1) INFO 07-20 10:00:00 [launcher.py:100] [shutdown] API server: shutdown triggered\n"
        "[rank0]:[W507 00:37:04.709644328 ProcessGroupNCCL.cpp:1575] Warning: WARNING: destroy_process_group() was not "
        "called before program exit, which can leak resources."
    )
    # The stop itself is an event (kind "shutdown": the marker after which errors are teardown), never a failure.
    kinds = [e.kind for e in parse_text(text) if isinstance(e, EngineFailure)]
    assert kinds == ["shutdown"]


def test_other_engine_headers_are_not_claimed() -> None:
    text = (
        "[2025-05-09 11:14:36 TP0] Using default MoE config. Performance might be sub-optimal! Config file not found "
        "at /x.json"
    )
    assert [e for e in parse_text(text) if e.engine == "vllm"] == []


def test_truncated_dump_followed_by_header_line() -> None:
    """A dump that looks cut (no final key) but is followed by a header line: both lines still give events."""
    text = (
        "(EngineCore pid=1) INFO 05-06 06:05:38 [core.py:109] Initializing a V1 LLM engine (v0.20.1) with config: "
        "model='/model', tensor_parallel_size=2\n"
        "(EngineCore pid=1) INFO 05-06 06:05:39 [vllm.py:1081] Cudagraph is disabled under eager mode"
    )
    events = parse_text(text)
    config = find_event(events, "startup_config", {"config": {"tensor_parallel_size": 2}})
    assert config is not None and config.line == 1
    assert find_event(events, "cuda_graph", {"kind": "eager_mode", "line": 2}) is not None


# --- the per-position rates as the former lazy pattern read them -------------------------------

_LAZY_SPEC_V1_RE = re.compile(vllm_spec._SPEC_V1_RE.pattern.replace(r"(?P<pos>[\d., nan]+)", r"(?P<pos>[\d., nan]+?)"))


@given(
    rates=st.lists(st.sampled_from(["0.5", "0.125", " 0.25", "nan", "", " ", "1"]), min_size=1, max_size=6),
    tail=st.sampled_from(
        ["", ",", ", ", " ", "  \t", ", Avg Draft acceptance rate: 12.5%", ", Avg Draft acceptance rate: nan% "]
    ),
)
def test_spec_positions_read_as_the_lazy_pattern_did(rates: list[str], tail: str) -> None:
    message = (
        "SpecDecoding metrics: Mean acceptance length: 2.50, Accepted: 10 tokens, Drafted: 40 tokens, "
        "Per-position acceptance rate: " + ",".join(rates) + tail
    )
    assert _LAZY_SPEC_V1_RE.pattern != vllm_spec._SPEC_V1_RE.pattern
    greedy, lazy = vllm_spec._SPEC_V1_RE.search(message), _LAZY_SPEC_V1_RE.search(message)
    assert (greedy is None) == (lazy is None)
    if greedy is None or lazy is None:
        return
    assert greedy.group("rate") == lazy.group("rate")
    assert greedy.group("pos").split(",")[:-1] == lazy.group("pos").split(",")[:-1]
    assert greedy.group("pos").split(",")[-1].strip() == lazy.group("pos").split(",")[-1].strip()


# --- a kernel compiled during inference, read from the phrase out as the regex read it from every word --------------

_JIT_PIECES = ["Triton", " ", "JIT", "-", "a", "x.y", "(", ".", "\t", ":", "_k", " during inference: ", "inference:"]


@given(st.lists(st.sampled_from(_JIT_PIECES), max_size=16).map("".join))
def test_jit_during_inference_reads_what_its_regex_matches(text: str) -> None:
    expected = vllm_graphs._JIT_DURING_INFERENCE_RE.search(text) is not None
    assert vllm_graphs._jit_during_inference(text) == expected


def test_jit_during_inference_is_linear_in_a_run_of_words() -> None:
    """The regex from each word to the run's end was quadratic: 8,000 characters of words cost 16x 2,000."""

    def cost(size: int) -> float:
        text = "Triton JIT compilation " + ("a " * size)[:size] + ", during inference: \t"
        best = float("inf")
        for _ in range(3):
            started = time.process_time()
            vllm_graphs._jit_during_inference(text)
            best = min(best, time.process_time() - started)
        return best

    small, large = cost(2_000), cost(8_000)
    assert large < 0.002 or large / small < 8, (small, large)


def test_keywords_are_specific() -> None:
    generic = {"INFO", "WARNING", "ERROR", "model", "vllm", "vLLM", "backend", "Using", "took"}
    for grammar in vllm.GRAMMARS:
        for keyword in grammar.keywords:
            assert keyword.strip() not in generic and len(keyword.strip()) >= 7, (grammar.name, keyword)


# --- real logs ---------------------------------------------------------------------------------

CORPUS_EXPECTED: dict[str, set[str]] = {
    "vllm-001": {"scheduler_stats", "spec_decode_stats"},
    "vllm-002": {"scheduler_stats"},
    "vllm-004": {"hybrid_model"},
    "vllm-009": {"compile_time"},
    "vllm-011": {"compile_time"},
    "vllm-013": {"attention_backend"},
    "vllm-016": {"spec_decode_stats"},
    "vllm-017": {"perf_warning"},
    "vllm-018": {"engine_version", "startup_config"},
    "vllm-021": {"perf_warning", "custom_allreduce", "quantization", "kv_cache", "nccl_version", "startup_config"},
    "vllm-022": {"custom_allreduce"},
    "vllm-024": {"quantization"},
    "vllm-026": {"attention_backend"},
    "vllm-028": {"hybrid_model"},
    "vllm-032": {"quantization"},
    "vllm-033": {"hybrid_model", "compile_time"},
    "vllm-034": {"startup_config", "kv_cache", "cuda_graph", "compile_time", "attention_backend", "model_info"},
    "vllm-037": {"hybrid_model"},
    "vllm-h02": {"scheduler_stats"},
    "vllm-h04": {"startup_config", "kv_cache", "cuda_graph", "compile_time", "attention_backend", "model_info"},
}


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not available")
@pytest.mark.parametrize("name", sorted(CORPUS_EXPECTED))
def test_corpus_log(name: str) -> None:
    path = CORPUS / f"{name}.log"
    if not path.exists():
        pytest.skip(f"{path} not in this corpus")
    lines = enumerate(path.read_text(encoding="utf-8", errors="replace").split("\n"), start=1)
    stream = EventStream(name, lines)
    events = list(stream)
    assert CORPUS_EXPECTED[name] <= {e.type for e in events}
    assert stream.stats.unrecognised == 0, stream.stats.unrecognised_samples


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not available")
def test_corpus_018_wrapped_engine_init() -> None:
    text = (CORPUS / "vllm-018.log").read_text(encoding="utf-8")
    config = find_event(parse_text(text), "startup_config", {"origin": "engine init"})
    assert config is not None
    data = config.model_dump()["config"]
    assert data["enforce_eager"] is True
    assert data["num_scheduler_steps"] == 1
    assert data["compilation_config"]["cudagraph_capture_sizes"] == []


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not available")
def test_corpus_h04_dump_wrapped_over_thirteen_lines() -> None:
    text = (CORPUS / "vllm-h04.log").read_text(encoding="utf-8")
    config = find_event(parse_text(text), "startup_config", {"origin": "engine init"})
    assert config is not None and (config.line, config.end_line) == (11, 23) and not config.model_dump()["truncated"]
    data = config.model_dump()["config"]
    assert data["tensor_parallel_size"] == 1 and data["enforce_eager"] is False
    assert data["compilation_config"]["max_capture_size"] == 512
