r"""Markdown escaping for text that can hold log values: shared by every Markdown renderer (the report, the diff,
the fleet and outlier tables, the performance section) and by the GitHub issue body.

    text("see https://x.io/[a](b)")   ->   see https\://x.io/\[a\]\(b\)
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|<>~&])")
_AUTOLINK = re.compile(r"(?i)(https?|ftp|www|mailto)(:|\.)")
_BACKTICKS = re.compile(r"`+")


def code(text: str) -> str:
    """Text for inside a code span: no backtick can close it early, no newline can end it."""
    return text.replace("`", "'").replace("\n", " ")


def text(value: str) -> str:
    """Markdown-escaped text: renders as the characters themselves (no link, image, HTML, emphasis, autolink)."""
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", value).replace("\n", " ")
    return _AUTOLINK.sub(r"\1\\\2", escaped)  # `https\://`, `www\.`: GitHub autolinks neither


def fence(lines: Sequence[str]) -> str:
    """A code fence longer than any run of backticks in `lines`, so none of them can close it."""
    longest = max((len(run) for line in lines for run in _BACKTICKS.findall(line)), default=0)
    return "`" * max(3, longest + 1)
