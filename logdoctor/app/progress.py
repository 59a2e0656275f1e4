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
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from logdoctor.sanitize import one_line

if TYPE_CHECKING:  # rich's spinner (rich.status, rich.live) is imported when a terminal first shows one
    from rich.console import Console
    from rich.status import Status

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
        # a host's source (its `host` set) names a remote path: no local size to show
        return [
            dataclasses.replace(s, lines=self.wrap(s.name, None if getattr(s, "host", None) else s.path, s.lines))
            for s in sources
        ]

    def _show(self, text: str) -> None:
        if self._status is None:
            from rich.status import Status

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


class HostProgress:
    """One status line on a terminal's stderr while hosts are collected over SSH (`diagnose HOST`, `diff`):

        ⠋ kpro5: reading /var/log/vllm/serve.log: 48,212 lines, 9.6 MB, 12 s · node2: connecting to root@node2:22

    each host's step as the collector reports it (connecting, looking for logs, host facts, reading a log with
    the lines and megabytes that have arrived), then `parsing` once its collection is done, until `stop`.
    Nothing at all when stderr is not a terminal or with `LOGDOCTOR_NO_PROGRESS=1`: the notes, what was found
    and what is incomplete are printed as lines by the caller either way, and results stay on stdout."""

    REFRESH = 0.25  # seconds between redraws of the counts

    def __init__(self, console: Console, *, enabled: bool | None = None) -> None:
        self.console = console
        self.enabled = console.is_terminal if enabled is None else enabled
        if os.environ.get("LOGDOCTOR_NO_PROGRESS"):
            self.enabled = False
        self._lock = threading.Lock()
        self._steps: dict[str, tuple[str, float]] = {}  # host -> (step, when it began)
        self._collections: dict[str, Any] = {}  # host -> its ssh.HostCollection (progress does not import ssh)
        self._counted: dict[int, tuple[int, int]] = {}  # id(source) -> (lines counted, bytes of them)
        self._status: Status | None = None
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def say(self, host: str, message: str) -> None:
        """The collector's `progress(host, message)` callback (called from its worker threads)."""
        if not self.enabled:
            return
        if message.startswith("done:"):
            message = "parsing and diagnosing"
        elif message.startswith("failed:"):
            message = "failed"
        with self._lock:
            self._steps[host] = (message, time.monotonic())
        self._start()
        status = self._status
        if status is not None:
            status.update(self.line())

    def started(self, collection: Any) -> None:
        """A host's collection as it starts (`on_started`): its sources' lines are counted while they arrive."""
        if self.enabled:
            with self._lock:
                self._collections[collection.host] = collection

    def _reading(self, host: str) -> str:
        collection = self._collections.get(host)
        if collection is None or not collection.sources:
            return ""
        source = collection.sources[-1]
        lines = source.lines
        counted, size = self._counted.get(id(source), (0, 0))
        total = len(lines)
        size += sum(len(text) + 1 for _, text in lines[counted:total])
        self._counted[id(source)] = (total, size)
        return f": {total:,} lines, {size / 1e6:,.1f} MB"

    def line(self) -> str:
        now = time.monotonic()
        parts = []
        with self._lock:
            for host, (step, since) in self._steps.items():
                counts = self._reading(host) if step.startswith("reading ") else ""
                parts.append(f"{one_line(host)}: {one_line(step)}{counts}, {now - since:.0f} s")
        return " · ".join(parts)

    def _start(self) -> None:
        with self._lock:
            if self._status is not None or self._done.is_set():
                return
            from rich.status import Status

            self._status = Status("", console=self.console, spinner="dots")
            self._status.start()
            self._thread = threading.Thread(target=self._refresh, daemon=True, name="logdoctor-progress")
            self._thread.start()

    def _refresh(self) -> None:
        while not self._done.wait(self.REFRESH):
            status = self._status
            if status is not None:
                status.update(self.line())

    def stop(self) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with self._lock:
            status, self._status = self._status, None
        if status is not None:
            status.stop()

    def __enter__(self) -> HostProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
