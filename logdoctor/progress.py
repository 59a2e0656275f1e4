"""Progress on stderr while long inputs are read: a rich spinner line when stderr is a terminal, nothing otherwise.

    ⠋ reading vllm-serve.log (312.4 MB): line 1,204,311, 14 s

It wraps the numbered lines an input gives (`(number, text)` pairs), so it works the same for a file read
whole and one the grep prefilter thins out (the line number is the file's own); it costs one comparison a
line and redraws four times a second. Results stay on stdout, untouched.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from rich.console import Console
from rich.status import Status

from logdoctor.sanitize import one_line

LineSourceT = TypeVar("LineSourceT", bound=Any)  # run.LineSource (progress does not import run)

UPDATE_EVERY = 4096  # lines between updates of the shown line number
SHOW_AFTER = 0.5  # seconds: a short input shows nothing at all


def _size(path: str | None) -> str:
    if not path:
        return ""
    with contextlib.suppress(OSError):
        size = Path(path).stat().st_size
        if size:
            return f" ({size / 1e6:,.1f} MB)"
    return ""


class ReadProgress:
    """One status line for the inputs of a run; `enabled` is False when stderr is not a terminal."""

    def __init__(self, console: Console, *, enabled: bool | None = None) -> None:
        self.console = console
        self.enabled = console.is_terminal if enabled is None else enabled
        if os.environ.get("LOGDOCTOR_NO_PROGRESS"):
            self.enabled = False
        self._status: Status | None = None

    def wrap(self, name: str, path: str | None, lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
        if not self.enabled:
            yield from lines
            return
        label = f"reading {one_line(name)}{_size(path)}"
        started = time.monotonic()
        for count, item in enumerate(lines, start=1):
            if count % UPDATE_EVERY == 0:
                elapsed = time.monotonic() - started
                if elapsed >= SHOW_AFTER:
                    self._show(f"{label}: line {item[0]:,}, {elapsed:.0f} s")
            yield item
        self.stop()

    def sources(self, sources: Sequence[LineSourceT]) -> list[LineSourceT]:
        """The same sources, each one's lines wrapped (`dataclasses.replace` on run.LineSource)."""
        if not self.enabled:
            return list(sources)
        return [dataclasses.replace(s, lines=self.wrap(s.name, s.path, s.lines)) for s in sources]

    def _show(self, text: str) -> None:
        if self._status is None:
            self._status = Status(text, console=self.console, spinner="dots")
            self._status.start()
        else:
            self._status.update(text)

    def stop(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def __enter__(self) -> ReadProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
