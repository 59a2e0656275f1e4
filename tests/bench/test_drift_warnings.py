"""bench/drift/warnings.py: every warning-level call of a release accounted for, on a constructed wheel."""

from __future__ import annotations

import textwrap
import zipfile
from pathlib import Path

from drift.extract import extract_wheel
from drift.warnings import (
    WARN_BEGIN,
    WARN_END,
    Reviewed,
    ReviewedList,
    census,
    committed_censuses,
    load_reviewed,
    update_doc,
    write_census,
)

MOE = textwrap.dedent(
    """
    from vllm.logger import init_logger

    logger = init_logger(__name__)

    def pick(path, rid):
        logger.info("Using configuration from %s for MoE layer.", path)
        logger.warning("Using default MoE config. Performance might be sub-optimal! Config file not found at %s", path)
        logger.warning("Grouped GEMM is not fully optimized yet for this shape")
        logger.warning("The tokenizer class is deprecated and will be removed")
        logger.error("Request %s has an invalid field", rid)
        logger.warning("Something here is slower than it could be")
        logger.error("ValueError: bad value %s", rid)
    """
)
API = textwrap.dedent(
    """
    import logging

    logger = logging.getLogger(__name__)

    def validate(req):
        logger.warning("Falling back to the default response format for %s", req)
    """
)


def _wheel(tmp_path: Path) -> Path:
    wheel = tmp_path / "vllm-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("vllm/model_executor/layers/fused_moe/fused_moe.py", MOE)
        zf.writestr("vllm/entrypoints/openai/serving.py", API)
        zf.writestr("vllm/broken.py", "def (:\n")  # a module that does not parse is skipped, not fatal
    return wheel


def _outcomes(tmp_path: Path, reviewed: ReviewedList | None = None) -> dict[str, tuple[str, str]]:
    result = census(extract_wheel(_wheel(tmp_path), "vllm", "9.9.9"), reviewed)
    return {call.template[:30]: (call.outcome, call.detail) for call in result.calls}


def test_every_warning_level_call_ends_in_one_outcome(tmp_path: Path) -> None:
    got = _outcomes(tmp_path)
    assert "Using configuration from {con" not in got  # INFO: not in the census
    assert got["Using default MoE config. Perf"] == ("event", "PerfWarning")
    assert got["Grouped GEMM is not fully opti"] == ("vocabulary", "quantization-kernel-fallback")
    assert got["The tokenizer class is depreca"][0] == "irrelevant"
    assert got["The tokenizer class is depreca"][1].startswith("noise:")
    assert got["Request {rid|%s} has an invali"][1].startswith("no performance word:")
    # an exception logged at ERROR is a failure event, read by its structure (logdoctor/parse/failures.py)
    assert got["ValueError: bad value {rid|%s}"] == ("event", "EngineFailure")
    # no subsystem word in the message: the logger's file name (fused_moe.py) gives it
    assert got["Something here is slower than "] == ("vocabulary", "quantization-kernel-fallback")
    # "response format" is noise-free, has a performance word and no subsystem: the worklist, until reviewed
    assert got["Falling back to the default re"][0] == "not-understood"


def test_a_reviewed_module_is_irrelevant_with_its_reason(tmp_path: Path) -> None:
    reviewed = ReviewedList(vllm=[Reviewed(module="vllm/entrypoints/openai/", reason="request validation")])
    got = _outcomes(tmp_path, reviewed)
    assert got["Falling back to the default re"] == ("irrelevant", "reviewed: request validation")
    assert got["Grouped GEMM is not fully opti"][0] == "vocabulary"  # another module: not covered


def test_the_census_file_and_the_doc_tables(tmp_path: Path) -> None:
    result = census(extract_wheel(_wheel(tmp_path), "vllm", "9.9.9"))
    out = tmp_path / "census"
    path = write_census(result, out)
    first = path.read_bytes()
    write_census(result, out)
    assert path.read_bytes() == first  # deterministic
    (data,) = committed_censuses(out)
    assert data["calls"] == 7
    assert data["outcomes"] == {"event": 2, "vocabulary": 2, "irrelevant": 2, "not-understood": 1}
    doc = tmp_path / "drift.md"
    doc.write_text(f"intro\n{WARN_BEGIN}\nold\n{WARN_END}\ntail\n", encoding="utf-8")
    assert update_doc(doc, out)
    text = doc.read_text(encoding="utf-8")
    assert "| vllm 9.9.9 | 7 | 2 (29%) | 2 (29%) | 2 (29%) | 1 (14%) | 85.7% |" in text
    assert "old" not in text and text.endswith("tail\n")


def test_the_committed_review_list_loads() -> None:
    reviewed = load_reviewed()
    assert all(entry.reason for entry in [*reviewed.vllm, *reviewed.sglang])
