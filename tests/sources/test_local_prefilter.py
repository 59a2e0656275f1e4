"""The local prefilter: one escaped ERE alternation selects exactly what `grep -F -f KEYWORDS` selects."""

from __future__ import annotations

import itertools
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from logdoctor.sources.local import Along, ere_alternation, open_local

KEYWORDS = [
    "SpecDecoding metrics:",
    "LLM engine (v",
    "[rank0]:[E",
    "a.b",
    "x|y",
    "c{2}",
    "^start",
    "end$",
    "back\\slash",
    "plus+star*?",
    "GPU0\t",
    "█  version",
]
LINES = [
    "(APIServer pid=1) INFO 05-08 16:25:09 [metrics.py:101] SpecDecoding metrics: Accepted: 1 tokens",
    "Initializing a V1 LLM engine (v0.20.1) with config: model='m'",
    "LLM engine v0.20.1 (no parenthesis: no match)",
    "[rank0]:[E ProcessGroupNCCL.cpp:563] timeout",
    "axb is not a.b",
    "axb only",
    "x|y literal",
    "xy only",
    "cc is not c{2}",
    "cc only",
    "a ^start in the middle",
    "start only",
    "the end$ here",
    "back\\slash",
    "backslash only",
    "plus+star*? literal",
    "plusstar only",
    "GPU0\tGPU1",
    "GPU0 GPU1",
    "(APIServer pid=1) INFO 08-06 10:08:29 [utils.py:297]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.18.0",
    "",
]
SELECTED = [1, 2, 4, 5, 7, 9, 11, 13, 14, 16, 18, 20]


def grep(args: list[str], path: Path) -> list[str]:
    result = subprocess.run(
        ["grep", "-a", "-n", *args, "--", str(path)],
        capture_output=True,
        env={**os.environ, "LC_ALL": "C"},
        check=False,
    )
    assert result.returncode in (0, 1), result.stderr
    return result.stdout.decode("utf-8").splitlines()


def write_log(tmp_path: Path) -> Path:
    log = tmp_path / "x.log"
    log.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    return log


def test_alternation_escapes_every_special_character() -> None:
    assert ere_alternation(["a.b", "(v", "x|y", "c{2}", "^$", "\\", "[]", "*+?"]) == (
        r"a\.b|\(v|x\|y|c\{2\}|\^\$|\\|\[\]|\*\+\?"
    )


def test_alternation_splits_on_newline_like_grep_f() -> None:
    assert ere_alternation(["one\ntwo", "three"]) == "one|two|three"


def test_grep_e_alternation_selects_what_grep_f_selects(tmp_path: Path) -> None:
    log = write_log(tmp_path)
    fixed = tmp_path / "fixed.keywords"
    fixed.write_text("\n".join(KEYWORDS) + "\n", encoding="utf-8")
    alternation = tmp_path / "alternation.keywords"
    alternation.write_text(ere_alternation(KEYWORDS) + "\n", encoding="utf-8")
    selected = grep(["-F", "-f", str(fixed)], log)
    assert grep(["-E", "-f", str(alternation)], log) == selected
    assert [int(line.split(":", 1)[0]) for line in selected] == SELECTED


def test_a_keyword_along_a_companion_selects_only_lines_with_both(tmp_path: Path) -> None:
    keywords = ["SpecDecoding metrics:", Along("slow", "[20"), Along("fell back", "[20")]
    lines = [
        "[2026-05-08 16:20:01 TP0] Attention fell back to triton",  # 1: both
        "Received request x: prompt: 'why is my code slow?'",  # 2: the word alone
        "slow [2026 at the end",  # 3: the companion after the word
        "[20 alone",  # 4: the companion alone
        "SpecDecoding metrics: slow",  # 5: a plain keyword
    ]
    log = tmp_path / "x.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    alternation = tmp_path / "alternation.keywords"
    alternation.write_text(ere_alternation(keywords) + "\n", encoding="utf-8")
    assert [int(line.split(":", 1)[0]) for line in grep(["-E", "-f", str(alternation)], log)] == [1, 3, 5]
    fixed = tmp_path / "fixed.keywords"
    fixed.write_text("\n".join(keywords) + "\n", encoding="utf-8")  # grep -F: a superset, never less
    assert [int(line.split(":", 1)[0]) for line in grep(["-F", "-f", str(fixed)], log)] == [1, 2, 3, 5]


def test_prefiltered_lines_keep_their_numbers(tmp_path: Path) -> None:
    source = open_local(str(write_log(tmp_path)))
    lines = list(source.lines(KEYWORDS, prefilter=True))
    assert source.prefiltered
    assert [n for n, _ in lines] == SELECTED
    assert lines[0] == (1, LINES[0])
    assert source.total_lines == len(LINES)


STORY = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"


def _prefiltered(path: Path, parts: int, monkeypatch: pytest.MonkeyPatch) -> tuple[list[tuple[int, str]], Any]:
    import logdoctor.sources.local as local
    from logdoctor.parse.keywords import candidate_keywords

    monkeypatch.setattr(local, "prefilter_parts", lambda size: parts)
    source = open_local(str(path))
    lines = list(source.lines(candidate_keywords(), prefilter=True))
    return lines, (source.total_lines, source.bytes_read, source.prefiltered, source.notes)


@pytest.mark.parametrize("tail", [b"", b"no newline at the end: SpecDecoding metrics:"])
def test_the_prefilter_split_in_ranges_gives_one_greps_lines_numbers_and_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tail: bytes
) -> None:
    """Split over 2 to 9 byte ranges, the prefilter yields exactly the lines, numbers and line count of one
    grep over the whole file (ranges cut mid-line, a line longer than a range, a last line with no newline)."""
    story = STORY.read_bytes()
    path = tmp_path / "big.log"
    path.write_bytes(story * 3 + b"x" * (len(story) // 2) + b"\n" + story + tail)
    whole, whole_stats = _prefiltered(path, 1, monkeypatch)
    assert len(whole) > 300 and whole_stats[0] == path.read_bytes().count(b"\n")
    for parts in range(2, 10):
        assert _prefiltered(path, parts, monkeypatch) == (whole, whole_stats), parts


def test_ranges_are_cut_after_a_newline_and_cover_the_file(tmp_path: Path) -> None:
    from logdoctor.sources.local import split_at_lines

    data = b"".join(b"l" * (i * 37 % 301) + b"\n" for i in range(2000)) + b"z" * 50_000
    path = tmp_path / "f.log"
    path.write_bytes(data)
    for parts in (1, 2, 3, 7, 64, 5000):
        ranges = split_at_lines(str(path), len(data), parts)
        assert ranges[0][0] == 0 and ranges[-1][1] == len(data)
        assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
        assert all(start == 0 or data[start - 1 : start] == b"\n" for start, _ in ranges)
        assert len(ranges) <= parts


def test_the_number_of_ranges(monkeypatch: pytest.MonkeyPatch) -> None:
    from logdoctor.sources.local import PREFILTER_MAX_PARTS, PREFILTER_PART_BYTES, prefilter_parts

    monkeypatch.delenv("LOGDOCTOR_PREFILTER_PARTS", raising=False)
    assert prefilter_parts(PREFILTER_PART_BYTES - 1) == 1  # too small to split
    assert 1 <= prefilter_parts(1 << 30) <= min(PREFILTER_MAX_PARTS, len(os.sched_getaffinity(0)))
    monkeypatch.setenv("LOGDOCTOR_PREFILTER_PARTS", "1")
    assert prefilter_parts(1 << 30) == 1  # one grep, as before the split
    monkeypatch.setenv("LOGDOCTOR_PREFILTER_PARTS", "3")
    assert prefilter_parts(1 << 30) == 3 and prefilter_parts(2 * PREFILTER_PART_BYTES) == 2


def test_parse_ranges_are_small_enough_for_a_dense_file_and_at_most_sixty_four(monkeypatch: pytest.MonkeyPatch) -> None:
    import logdoctor.sources.local as local

    mib = 1024 * 1024
    for cpus in (2, 16):  # the same cut on any machine: a range's series stay under their cap in its worker
        monkeypatch.setattr(local, "usable_cpus", lambda cpus=cpus: cpus)
        assert local.parse_parts(100 * mib) == 50
        assert local.parse_parts(32 * mib) == 16
        assert local.parse_parts(1 << 30) == 64  # a big file: bigger ranges, at most PARSE_MAX_PARTS
        assert local.parse_parts(1) == 1
