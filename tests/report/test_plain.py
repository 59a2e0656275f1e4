"""report/plain.py: the plain writer writes what rich writes for a pipe without colour or width limit, and its
Text gives rich the Text rich's own calls would have built."""

from __future__ import annotations

import io
from typing import Any

import pytest
from rich.console import Console
from rich.text import Text as RichText

from logdoctor.report.plain import PlainConsole, Text
from logdoctor.report.terminal import UNLIMITED_WIDTH, excerpt, print_wrapped

SAMPLES = [
    "",
    "plain line",
    "two\nlines",
    "ends with a newline\n",
    "\n",
    "bell\x07 back\x08 vt\x0b ff\x0c cr\r gone",
    "a\ttab",
    "wide 漢字 and emoji 🚀 cells",
    "x" * 60_000,
    "trailing spaces   ",
]


def _rich_console(out: io.StringIO) -> Console:
    return Console(
        file=out,
        width=UNLIMITED_WIDTH,
        force_terminal=False,
        no_color=True,
        color_system=None,
        highlight=False,
        soft_wrap=False,
    )


def _both(draw: object) -> tuple[str, str]:
    mine, theirs = io.StringIO(), io.StringIO()
    plain = PlainConsole(mine, UNLIMITED_WIDTH, lambda: _rich_console(mine))
    draw(plain, Text)  # type: ignore[operator]
    draw(_rich_console(theirs), RichText)  # type: ignore[operator]
    return mine.getvalue(), theirs.getvalue()


@pytest.mark.parametrize("sample", SAMPLES, ids=range(len(SAMPLES)))
@pytest.mark.parametrize("soft_wrap", [True, False])
def test_printing_writes_what_rich_writes(sample: str, soft_wrap: bool) -> None:
    def draw(console: object, cls: type) -> None:
        console.print(cls.assemble(("│ ", "dim"), "  ", (sample, "green")), soft_wrap=soft_wrap)  # type: ignore[attr-defined]
        console.print()  # type: ignore[attr-defined]
        console.print(cls(sample, style="bold"), soft_wrap=soft_wrap)  # type: ignore[attr-defined]

    mine, theirs = _both(draw)
    assert mine == theirs


@pytest.mark.parametrize("sample", SAMPLES, ids=range(len(SAMPLES)))
def test_wrapped_lines_are_rich_lines(sample: str) -> None:
    def draw(console: object, cls: type) -> None:
        print_wrapped(console, cls(sample, style="italic"))  # type: ignore[arg-type]

    mine, theirs = _both(draw)
    assert mine == theirs


def test_text_gives_rich_the_text_rich_builds() -> None:
    def build(cls: Any) -> Any:
        text = cls.assemble(("╭─ ", "dim"), ("1. ", "bold"), "cause", ("", "red"), style="")
        piece = cls("value=12 more")
        piece.stylize("bold underline", 0, 8)
        piece.stylize("dim", 20, 30)  # past the end: ignored
        text.append_text(piece)
        text.append(" … ", style="dim")
        text.append(cls("tail", style="cyan"))
        text.append(cls(""))
        return text

    mine, theirs = build(Text).__rich__(), build(RichText)
    assert (mine.plain, mine.style, mine.spans) == (theirs.plain, theirs.style, theirs.spans)


def test_colour_goes_to_rich_unchanged() -> None:
    rows = excerpt("INFO 05-08 14:07:20 [x.py:1] Running: 7 reqs, Waiting: 3 reqs", [(29, 39)], 60)
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=True, color_system="standard")
    for row in rows:
        console.print(row, soft_wrap=True)
    assert "\x1b[" in out.getvalue() and "Running: 7" in out.getvalue()
