"""The repository speaks of the product: no doc, comment, test or script names a work round, a wave of work or an
internal issue number, which mean nothing to a reader outside the team (history lives in git)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# A number followed by a dot or colon is an address or a version (SGLang's `Session <ip>:<port> failed.`).
# "GitHub issue #1876" in a quoted release note is the engine's own tracker.
_INTERNAL = re.compile(r"\b(?:sessions?|waves?) #?\d+\b(?![.:\d])|(?<!github )\bissues? #?\d+\b", re.IGNORECASE)

# Real logs and what is generated from them or from the engines' wheels quote other people's words.
_EXCLUDED_SUFFIXES = (".log", ".gz", ".png", ".jsonl")
_EXCLUDED_PREFIXES = ("fixtures/drift/",)


def _tracked_text_files() -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True, timeout=60
        ).stdout.decode()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    names = [n for n in out.split("\0") if n]
    return [
        REPO / n
        for n in names
        if not n.endswith(_EXCLUDED_SUFFIXES) and not n.startswith(_EXCLUDED_PREFIXES) and (REPO / n).is_file()
    ]


def test_no_internal_round_or_issue_numbers() -> None:
    hits: list[str] = []
    for path in _tracked_text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if _INTERNAL.search(line):
                hits.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:120]}")
    assert not hits, "internal round or issue numbers:\n" + "\n".join(hits)


# The words the pattern is for, spelt here by parts so that this file holds no hit of its own.
_WORDS = ("session", "wave", "issue")


@pytest.mark.parametrize("word", _WORDS)
def test_the_pattern_catches_each_word_with_a_number(word: str) -> None:
    assert _INTERNAL.search(f"measured in {word} 6")
    assert _INTERNAL.search(f"Tolerance ({word} 11, item 3)")
    assert _INTERNAL.search(f"see {word.title()} #12")


def test_the_pattern_leaves_addresses_versions_and_engine_trackers() -> None:
    assert not _INTERNAL.search("[2025-11-30 10:00:00 TP0] Session 10.0.0.2:17001 failed.")
    assert not _INTERNAL.search("a wave 2.5 times taller")
    assert not _INTERNAL.search("vllm-project/vllm#19254")
    assert not _INTERNAL.search("machines with one NIC per GPU (Github Issue #1876)")
