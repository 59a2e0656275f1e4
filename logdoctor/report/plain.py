"""Styled text for the terminal report that needs rich only where rich draws it (docs/benchmarks.md, *Start-up*).

    line = Text.assemble(("╭─ ", "dim"), ("1. ", "bold"), "spec-net-loss")
    console.print(line, soft_wrap=True)   # a rich Console draws rich's Text; a PlainConsole writes `line.plain`

`Text` keeps what rich's `Text` keeps (the characters, a style for the whole, styled spans) and builds it the
way rich's does, so `Text.__rich__` gives the rich `Text` the report built before, and any rich Console prints
it as it did. Piped without colour and without COLUMNS, the report goes to a `PlainConsole`, which writes the
characters itself (what rich writes there: no styles, lines as long as they are) and hands anything else (a
table, a tab, a line too long for its width) to a rich Console on the same stream; so `diagnose x.log > out`
does not import rich, and writes what it wrote before byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import IO, TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text as RichText

# The control characters rich's Text removes from what it is given (rich.control.STRIP_CONTROL_CODES).
_STRIPPED = {7: None, 8: None, 11: None, 12: None, 13: None}


def _strip(text: str) -> str:
    return text.translate(_STRIPPED) if any(chr(c) in text for c in _STRIPPED) else text


class Span(NamedTuple):
    """A styled range, as rich.text.Span."""

    start: int
    end: int
    style: Any  # a style name ("bold cyan") or a rich Style


class Text:
    """The part of rich.text.Text the terminal report uses, built as rich builds it."""

    __slots__ = ("_length", "_parts", "spans", "style")

    def __init__(self, text: str = "", style: Any = "") -> None:
        text = _strip(text)
        self._parts = [text]
        self._length = len(text)
        self.style = style
        self.spans: list[Span] = []

    @classmethod
    def assemble(cls, *parts: str | Text | RichText | tuple[str, Any], style: Any = "") -> Text:
        text = cls(style=style)
        for part in parts:
            if isinstance(part, tuple):
                text.append(*part)
            else:
                text.append(part)
        return text

    @property
    def plain(self) -> str:
        if len(self._parts) != 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0]

    def __len__(self) -> int:
        return self._length

    def __str__(self) -> str:
        return self.plain

    def __repr__(self) -> str:
        return f"<text {self.plain!r} {self.spans!r} {self.style!r}>"

    def append(self, text: str | Text | RichText, style: Any = None) -> Text:
        if isinstance(text, str):
            if text:
                text = _strip(text)
                offset = self._length
                self._parts.append(text)
                if style:
                    self.spans.append(Span(offset, offset + len(text), style))
                self._length += len(text)
            return self
        if style is not None:
            raise ValueError("style must not be set when appending Text instance")
        if len(text):
            self.append_text(text)
        return self

    def append_text(self, text: Text | RichText) -> Text:
        offset = self._length
        if text.style:
            self.spans.append(Span(offset, offset + len(text), text.style))
        self._parts.append(text.plain)
        self.spans.extend(Span(start + offset, end + offset, style) for start, end, style in text.spans)
        self._length += len(text)
        return self

    def stylize(self, style: Any, start: int = 0, end: int | None = None) -> None:
        if style:
            length = self._length
            if start < 0:
                start = length + start
            if end is None:
                end = length
            if end < 0:
                end = length + end
            if start >= length or end <= start:
                return
            self.spans.append(Span(start, min(length, end), style))

    def __rich__(self) -> RichText:
        from rich.text import Span as RichSpan
        from rich.text import Text as RichText

        return RichText(self.plain, style=self.style, spans=[RichSpan(*span) for span in self.spans])

    @classmethod
    def of(cls, text: Text | RichText) -> Text:
        """This text, or a rich Text as one."""
        if isinstance(text, Text):
            return text
        out = cls(text.plain, style=text.style)
        out.spans = [Span(*span) for span in text.spans]
        return out

    def wrap(self, console: Console | PlainConsole, width: int) -> list[Text]:
        """The lines rich's `Text.wrap(console, width)` gives."""
        if isinstance(console, PlainConsole) and fits(self.plain, width):
            return list(self._lines())
        real = console.rich() if isinstance(console, PlainConsole) else console
        return [Text.of(line) for line in self.__rich__().wrap(real, width)]

    def _lines(self) -> Iterable[Text]:
        plain = self.plain
        if "\n" not in plain:
            yield self
            return
        start = 0
        for piece in plain.split("\n"):
            end = start + len(piece)
            line = Text(piece, style=self.style)
            line.spans = [
                Span(max(s, start) - start, min(e, end) - start, style)
                for s, e, style in self.spans
                if s < end and e > start
            ]
            yield line
            start = end + 1


def fits(plain: str, width: int) -> bool:
    """Whether rich would write `plain` as it is at this width: no tab to expand, every line far shorter than
    the width (a character is at most two cells wide)."""
    return "\t" not in plain and all(2 * len(line) < width for line in plain.split("\n"))


class PlainConsole:
    """What the terminal report asks of a rich Console, for a stream that is not a terminal, without colour and
    without a width limit (`width`: terminal.UNLIMITED_WIDTH); the rest goes to a rich Console made like the one
    this stands for (`make`)."""

    is_terminal = False

    def __init__(self, file: IO[str], width: int, make: Any) -> None:
        self.file = file
        self.width = width
        self._make = make
        self._rich: Console | None = None

    def rich(self) -> Console:
        if self._rich is None:
            self._rich = self._make()
        return self._rich

    def print(self, *objects: Any, soft_wrap: bool | None = None, **options: Any) -> None:
        if not objects and not options:
            self.file.write("\n")
            return
        if len(objects) == 1 and isinstance(objects[0], Text) and not options and fits(objects[0].plain, self.width):
            self.file.write(objects[0].plain + "\n")
            return
        self.rich().print(*objects, soft_wrap=soft_wrap, **options)

    def __getattr__(self, name: str) -> Any:  # anything else a rich Console has
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.rich(), name)
