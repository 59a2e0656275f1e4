"""The local prefilter: one escaped ERE alternation selects exactly what `grep -F -f KEYWORDS` selects."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from logdoctor.sources.local import ere_alternation, open_local

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


def test_prefiltered_lines_keep_their_numbers(tmp_path: Path) -> None:
    source = open_local(str(write_log(tmp_path)))
    lines = list(source.lines(KEYWORDS, prefilter=True))
    assert source.prefiltered
    assert [n for n, _ in lines] == SELECTED
    assert lines[0] == (1, LINES[0])
    assert source.total_lines == len(LINES)
