"""`--format markdown`: short (at most a third of its size before the reports work, on the story
fixtures), each finding with its rule id, no configuration dump, valid CommonMark."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt

from logdoctor.app.cli import main

STORY = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "story"
# `logdoctor diagnose LOG --format markdown | wc -c` at ce87d55, before the report was shortened.
BEFORE = {
    "vllm-dflash-tp2-a6000.log": 18121,
    "sglang-mtp-tp2-a6000.log": 8544,
    "vllm-mtp-tp2-a6000-healthy.log": 4556,
}


def markdown(log: Path) -> str:
    result = CliRunner().invoke(main, ["diagnose", str(log), "--format", "markdown"])
    assert result.exit_code in (0, 1), result.output
    return result.stdout


@pytest.mark.parametrize("name", sorted(BEFORE))
def test_at_most_a_third_of_before(name: str) -> None:
    assert len(markdown(STORY / name).encode()) * 3 <= BEFORE[name]


def test_story_keeps_what_matters() -> None:
    text = markdown(STORY / "vllm-dflash-tp2-a6000.log")
    tokens = MarkdownIt("commonmark").parse(text)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings[0] == "logdoctor diagnosis"
    # one heading a problem: speculation (two rules) and the TP link (two rules), as the terminal's boxes
    assert headings[1] == "1. `speculation` 82: Speculative decoding costs more than it gives"
    assert headings[2].startswith("2. `tp-link` 60: ")
    # the two likely problems (vLLM 0.20.1's known DFlash issue is part of speculation); minor ones share a line
    assert len(headings) == 1 + 2
    assert "(rule `below-break-even`)" in text and "(rule `low-acceptance`)" in text
    # the minor problems on one line, counted as the terminal's "Also noted" counts them
    assert "Minor (3): `chunked-prefill-or-batching-config` 30 (rule `spec-token-budget`)" in text
    assert "drop --speculative-config, or fewer speculative tokens" in text  # the fix, k left to the GPU's figures
    fences = [t.content for t in tokens if t.type == "fence"]
    quoted = [fence.split(":", 1)[0] for fence in fences]
    assert quoted == ["60", "20"]  # a line a problem, none twice
    assert fences[0].startswith("60: SpecDecoding metrics: Mean acceptance length: 1.27")
    assert all(len(fence) < 160 for fence in fences)
    assert "also lines 62, 64, 15" in text  # the rest by number
    assert "Initializing a V1 LLM engine" not in text  # the engine-init dump, cited by four findings
    assert "could not check" not in text.lower() or text.count("Could not check") == 1
    assert "impact " not in text  # no score working
