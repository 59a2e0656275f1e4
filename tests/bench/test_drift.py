"""bench/drift: the logger-call extraction, rendering and classification, on constructed sources."""

from __future__ import annotations

import textwrap
from pathlib import Path

from drift.classify import classify
from drift.extract import Placeholder, extract_source
from drift.relevance import Relevant
from drift.render import format_value, render_line

SOURCE = textwrap.dedent(
    """
    import logging
    from vllm.logger import init_logger

    logger = init_logger(__name__)
    _audit = logging.getLogger("audit")

    def kv(num_tokens, gib):
        logger.info("GPU KV cache size: %d tokens, %.2f GiB", num_tokens, gib)
        logger.warning_once(f"Available KV cache memory: {gib:.2f} GiB")
        logger.info("Maximum concurrency for {} tokens per request: {:.2f}x".format(4096, 1.5))
        logger.debug("implicit " "concatenation")

    def held(mode):
        msg = "Cudagraph mode %s is not supported. "
        msg += "Overriding to NONE."
        logger.warning(msg, mode)
        _audit.error("audit %s", mode)
        print_warning_once("Using default MoE config.")

    def stats(log_fn, a, b):
        log_fn("Avg prompt throughput: %.1f tokens/s", a)
        parts = ["Running: %d reqs", "Waiting: %d reqs"]
        parts.append("Preemptions: %d")
        args = [a, b, 0]
        emit = logger.debug if a == 0 else logger.info
        emit(", ".join(parts), *args)
    """
)


def test_extracts_every_call_form() -> None:
    found = [(m.level, m.template) for m in extract_source("vllm/x.py", SOURCE)]
    assert found == [
        ("INFO", "GPU KV cache size: {num_tokens|%d} tokens, {gib|%.2f} GiB"),
        ("WARNING", "Available KV cache memory: {gib|{:.2f}} GiB"),
        ("INFO", "Maximum concurrency for {4096|{}} tokens per request: {1.5|{:.2f}}x"),
        ("DEBUG", "implicit concatenation"),
        ("WARNING", "Cudagraph mode {mode|%s} is not supported. Overriding to NONE."),  # held in a variable, +=
        ("ERROR", "audit {mode|%s}"),  # a logging.getLogger() logger under another name
        ("WARNING", "Using default MoE config."),
        ("INFO", "Avg prompt throughput: {a|%.1f} tokens/s"),  # through a log_fn parameter
        # a list joined, args passed as *args (named by position), the level of the busy branch
        ("INFO", "Running: {arg0|%d} reqs, Waiting: {arg1|%d} reqs, Preemptions: {arg2|%d}"),
    ]


def test_format_value_follows_the_call_site() -> None:
    assert format_value(1.29, "%.2f") == "1.29"
    assert format_value(34944, "{:,}") == "34,944"
    assert format_value("fa3", "{!r}") == "'fa3'"
    assert format_value("12.0", "%d") == "12.0"  # a pre-formatted value is kept as given


def test_render_and_classify_a_vllm_line() -> None:
    (msg,) = [m for m in extract_source("vllm/v1/worker/gpu_worker.py", SOURCE) if m.literal.startswith("Available")]
    entry = Relevant(
        module="vllm/v1/worker/gpu_worker.py", match="Available KV cache memory", cause="kv-cache-pressure",
        event="KVCache", fields={"available_memory_gib": 6.51}, values={"gib": 6.51},
    )  # fmt: skip
    line = render_line("vllm", "0.33.0", msg, entry)
    assert (
        line
        == f"(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [gpu_worker.py:{msg.line}] Available KV cache memory: 6.51 GiB"
    )
    assert classify(line, "vllm", "KVCache", {"available_memory_gib": 6.51}).status == "right"
    assert classify(line, "vllm", "KVCache", {"available_memory_gib": 7.0}).status == "wrong-values"
    assert classify(line, "vllm", "CudaGraph", {}).status == "wrong-event"
    assert classify(line.replace("Available KV cache memory", "Spare room"), "vllm", "KVCache", {}).status == "missed"


def test_sglang_header_depends_on_the_process() -> None:
    (msg,) = [m for m in extract_source("sglang/srt/server_args.py", SOURCE) if m.literal.startswith("Using default")]
    entry = Relevant(
        module="sglang/srt/server_args.py",
        match="Using default",
        cause="quantization-kernel-fallback",
        event="PerfWarning",
    )
    assert render_line("sglang", "0.5.23", msg, entry) == "[2025-11-30 10:00:00] Using default MoE config."
    scheduler = msg.__class__("sglang/srt/managers/scheduler.py", msg.line, msg.level, list(msg.parts))
    assert render_line("sglang", "0.5.23", scheduler, entry).startswith("[2025-11-30 10:00:00 TP0] ")


def test_placeholder_defaults_are_plausible() -> None:
    from drift.render import default_value

    assert default_value(Placeholder("num_gpu_blocks", "%d")) == 4
    assert default_value(Placeholder("ratio", "{:.2f}")) == 1.5
    assert default_value(Placeholder("backend", "%s")) == "backend"


def test_changes_since_the_last_check() -> None:
    from drift.check import Case
    from drift.report import changes

    def case(key: str, status: str, template: str) -> Case:
        return Case(
            key, "kv-cache-pressure", "vllm", "0.33.0", "m.py:1", "INFO", template, "line", "KVCache", {}, status, []
        )

    previous = {
        "engine": "vllm",
        "version": "0.32.0",
        "messages_extracted": 3400,
        "cases": [
            {"key": "a::gone", "status": "right", "template": "gone"},
            {"key": "a::kept", "status": "missed", "template": "old wording {x|%d}"},
        ],
    }
    lines = changes(previous, [case("a::kept", "right", "new wording {x|%d}"), case("a::new", "missed", "new")], 3496)
    assert any(line.startswith("disappeared") and "a::gone" in line for line in lines)
    assert any(line.startswith("appeared") and "a::new" in line for line in lines)
    assert any(line.startswith("reworded") and "old wording" in line and "new wording" in line for line in lines)
    assert any("a::kept: missed -> right" in line for line in lines)
    assert lines[-1].endswith("3400 -> 3496")


def test_relevance_list_errors_name_the_entry(tmp_path: Path) -> None:
    import pytest
    from drift.relevance import RelevanceError, load_relevance

    bad = tmp_path / "relevance.yaml"
    bad.write_text(
        "vllm:\n"
        "- {module: vllm/a.py, match: x, cause: no-such-cause, event: KVCache}\n"
        "- {module: vllm/a.py, match: x, cause: kv-cache-pressure, event: KVCache}\n",
        encoding="utf-8",
    )
    with pytest.raises(RelevanceError) as err:
        load_relevance(bad)
    assert "vllm[0] ('x'): unknown cause 'no-such-cause'" in str(err.value)
    assert "vllm[1] ('x'): duplicate key" in str(err.value)
    bad.write_text(
        "vllm:\n- {module: vllm/a.py, match: x, cause: kv-cache-pressure, event: KVCache, fields: {kv_tokenz: 1}}\n"
    )
    with pytest.raises(RelevanceError, match="KVCache has no field"):
        load_relevance(bad)
    bad.write_text("vllm:\n- {module: vllm/a.py, match: x, cause: kv-cache-pressure, event: none-fits}\n")
    with pytest.raises(RelevanceError, match="needs a note"):
        load_relevance(bad)
