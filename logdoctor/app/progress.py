"""Progress on stderr while long inputs are read: a rich progress bar when stderr is a terminal, nothing otherwise.

    reading vllm-serve.log ━━━━━━━━━━━━━━━━━━━╺━━━━━━━━━━━━━━━━━━━━━━━━  62.4/131.0 MB  48%  9.1 MB/s  0:00:08

Bytes done of the total, the percentage, the rate and the time left, for every way a local input is read:

- a file read here line by line: the reader's own byte count (`LocalSource.bytes_read`);
- a file read through the grep prefilter in this process (only the matching lines come back): the line number
  of the last one, times the mean line length of the file's first MiB; an estimate, never past the size;
- a big file parsed by worker processes (logdoctor/pipeline/parallel.py): the bytes of the ranges they have
  parsed, told four times a second while the workers run;
- stdin, a pipe or a gzip stream: bytes read, with no total, no percentage and no time left.

It costs one comparison a line and redraws four times a second. Nothing is shown for an input read in under
half a second, when stderr is not a terminal, with `--quiet` or with `LOGDOCTOR_NO_PROGRESS=1`. Results stay on
stdout, untouched.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from logdoctor.sanitize import one_line

if TYPE_CHECKING:  # rich's progress (rich.progress, rich.live) is imported when a terminal first shows one
    from rich.console import Console
    from rich.progress import Progress, TaskID
    from rich.status import Status

LineSourceT = TypeVar("LineSourceT", bound=Any)  # run.LineSource (progress does not import run)

UPDATE_EVERY = 256  # lines between looks at the clock (a grep prefilter's lines are few and far between)
UPDATE_SECONDS = 0.25  # between updates of the bytes done
SHOW_AFTER = 0.5  # seconds: a short input shows nothing at all
SAMPLE_BYTES = 1 << 20  # the head of a file whose mean line length estimates a prefiltered read's position


def progress_wanted(console: Console) -> bool:
    """A terminal's stderr, not quietened (`--quiet` makes the stderr console quiet) nor turned off."""
    return console.is_terminal and not console.quiet and not os.environ.get("LOGDOCTOR_NO_PROGRESS")


def _mean_line_bytes(path: str) -> float | None:
    with contextlib.suppress(OSError), open(path, "rb") as handle:
        head = handle.read(SAMPLE_BYTES)
        lines = head.count(b"\n")
        if lines:
            return len(head) / lines
    return None


class _Input:
    """One input's progress: where its bytes done come from, and its total (None: unknown)."""

    def __init__(self, name: str, local: Any) -> None:
        self.name = name
        self.local = local  # sources.local.LocalSource, or None (a host's source)
        size = getattr(local, "size", 0) if local is not None else 0
        compressed = getattr(local, "gzipped", False) or getattr(local, "kind", "") == "stdin"
        self.total: int | None = size if size and not compressed and not getattr(local, "pipe", False) else None
        self.mean_line: float | None = None
        self.started = time.monotonic()

    def done(self, line: int) -> int:
        """Bytes done at line number `line`: the reader's count, else (grep's matches only) an estimate."""
        read = int(getattr(self.local, "bytes_read", 0) or 0)
        if read or self.total is None:
            return read
        if self.mean_line is None:
            self.mean_line = _mean_line_bytes(self.local.path) or 100.0
        return min(int(line * self.mean_line), self.total)


class ReadProgress:
    """A progress bar a local input on stderr; `enabled` is False when stderr is not a terminal or with --quiet."""

    REFRESH = 4  # redraws a second

    def __init__(self, console: Console, *, enabled: bool | None = None) -> None:
        self.console = console
        self.enabled = progress_wanted(console) if enabled is None else enabled
        if os.environ.get("LOGDOCTOR_NO_PROGRESS"):
            self.enabled = False
        self._progress: Progress | None = None
        self._tasks: dict[int, TaskID] = {}
        self._lock = threading.Lock()

    def _update(self, item: _Input, done: int, *, final: bool = False) -> None:
        if self._progress is None:
            if final or time.monotonic() - item.started < SHOW_AFTER:
                return
            self._start()
        assert self._progress is not None
        with self._lock:
            task = self._tasks.get(id(item))
            if task is None:
                task = self._progress.add_task(f"reading {one_line(item.name)}", total=item.total)
                self._tasks[id(item)] = task
        self._progress.update(task, completed=done if not final or item.total is None else item.total)

    def _start(self) -> None:
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TaskProgressColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=self.console,
            transient=True,
            refresh_per_second=self.REFRESH,
        )
        self._progress.start()

    def wrap(self, name: str, local: Any, lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
        """`lines` of the input `name` (`local`: its sources.local.LocalSource, None when it has none), with the
        bar moved as they go by."""
        if not self.enabled:
            return iter(lines)
        return self._wrap(_Input(name, local), lines)

    def _wrap(self, item: _Input, lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
        number = 0
        updated = 0.0
        for count, pair in enumerate(lines, start=1):
            if count % UPDATE_EVERY == 0 and (now := time.monotonic()) - updated >= UPDATE_SECONDS:
                number, updated = pair[0], now
                self._update(item, item.done(number))
            yield pair
        if self._progress is not None:
            self._update(item, item.done(number), final=True)

    def sources(self, sources: Sequence[LineSourceT]) -> list[LineSourceT]:
        """The same sources, each one's lines wrapped and its workers' progress told (`dataclasses.replace` on
        run.LineSource)."""
        if not self.enabled:
            return list(sources)
        out = []
        for s in sources:
            # a host's source (its `host` set) names a remote path: no local size to show
            item = _Input(s.name, None if getattr(s, "host", None) else getattr(s, "local", None))
            out.append(
                dataclasses.replace(
                    s,
                    lines=self._wrap(item, s.lines),
                    progress=lambda done, item=item: self._update(item, done),
                )
            )
        return out

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
            self._tasks.clear()

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
        self.enabled = progress_wanted(console) if enabled is None else enabled
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
