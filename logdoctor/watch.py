"""`logdoctor watch PATH|-`: follow a growing log and keep its diagnosis current.

    $ logdoctor watch vllm-serve.log | cat
    11:02:14 problems  1 likely cause(s); top: spec-net-loss (score 82) ...  | spec-net-loss 82
    11:02:44 problems  2 likely cause(s); top: spec-net-loss (score 82) ...  | spec-net-loss 82, kv-cache-pressure 64

A file is followed like `tail -F`: new lines as they are written, and through rotation - the file renamed
away (logrotate) or truncated in place (copytruncate) and a new one written under the name. What was read
before a rotation stays part of the deployment as `NAME@1` (its start-up lines are still the configuration);
the new file is read from its start. `-` follows stdin until it ends.

Every `--interval` seconds with new lines, the lines read so far are diagnosed again (only lines with a
keyword of some line type are kept, as the grep prefilter keeps them, so memory follows the candidate lines,
not the log). On a terminal the ranked view is redrawn in place (rich Live); piped, one line is printed
for the first diagnosis and one for each change of the verdict or of the ranked causes. Ctrl-C and SIGTERM
end it with exit 0.
"""

from __future__ import annotations

import io
import os
import queue
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import IO, Any

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from logdoctor.engine.result import Diagnosis
from logdoctor.engine.rules import LoadedRule
from logdoctor.engine.suppress import Suppressions
from logdoctor.errors import InputError, UsageError
from logdoctor.parse.pipeline import candidate_keywords, keyword_regex
from logdoctor.redact import Redactor
from logdoctor.report.terminal import cause_groups, render_terminal
from logdoctor.run import LineSource, diagnose_parsed, parse_sources
from logdoctor.sanitize import clean, one_line

READ_CHUNK = 1 << 20
POLL_SECONDS = 0.2  # how often a file is looked at for new bytes or a rotation
MAX_LINE = 1 << 20  # as the local reader: a longer line keeps its first 1 MiB


@dataclass
class Segment:
    """The candidate lines of one file generation (before a rotation, or the current file)."""

    name: str
    lines: list[tuple[int, str]] = field(default_factory=list)


class FileFollower:
    """`tail -F` of one path: complete lines as they are appended, through rename and truncation."""

    def __init__(self, path: Path, on_rotate: Callable[[str], None]) -> None:
        self.path = path
        self.on_rotate = on_rotate
        self._handle: IO[bytes] | None = None
        self._inode: tuple[int, int] | None = None
        self._partial = b""
        self.bytes_read = 0

    def _open(self) -> bool:
        try:
            handle = self.path.open("rb")
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise InputError(f"{self.path}: cannot read it ({exc.strerror or exc})") from exc
        stat = os.fstat(handle.fileno())
        self._handle, self._inode, self._partial = handle, (stat.st_dev, stat.st_ino), b""
        return True

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def _drain(self) -> list[bytes]:
        assert self._handle is not None
        out: list[bytes] = []
        while True:
            chunk = self._handle.read(READ_CHUNK)
            if not chunk:
                return out
            self.bytes_read += len(chunk)
            data = self._partial + chunk
            *complete, self._partial = data.split(b"\n")
            if len(self._partial) > MAX_LINE:
                complete.append(self._partial[:MAX_LINE])
                self._partial = b""
            out.extend(complete)

    def poll(self) -> Iterator[bytes]:
        """Every complete line since the last poll; on a rotation the old file's last lines, then `on_rotate`,
        then the new file's lines."""
        if self._handle is None:
            if self._open():
                yield from self._drain()
            return
        yield from self._drain()
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return  # renamed away, the new one not yet created: keep the old handle, look again later
        if (stat.st_dev, stat.st_ino) != self._inode:
            yield from self._drain()  # the last lines written to the old file before the rename
            self.close()
            self.on_rotate("renamed: reading the new file from its start")
            if self._open():
                yield from self._drain()
        elif stat.st_size < self._handle.tell():
            self._handle.seek(0)
            self._partial = b""
            self.on_rotate("truncated: reading it again from its start")
            yield from self._drain()


def _stdin_lines(stream: IO[bytes], out: queue.Queue[bytes | None]) -> None:
    for line in stream:
        out.put(line.rstrip(b"\n")[:MAX_LINE])
    out.put(None)


@dataclass
class Change:
    """What the piped output reports: the verdict and the ranked causes with their top scores."""

    kind: str
    summary: str
    causes: tuple[tuple[str, int], ...]

    def line(self, stamp: str) -> str:
        ranked = ", ".join(f"{cause} {score}" for cause, score in self.causes) or "no findings"
        return f"{stamp} {self.kind}  {self.summary}  | {ranked}"


def change_of(d: Diagnosis, top: int = 5) -> Change:
    likely, minor = cause_groups(d.findings)
    causes = tuple((g.cause, g.top.score) for g in [*likely, *minor][:top])
    return Change(d.verdict.kind, d.verdict.summary, causes)


class Watcher:
    """Reads, diagnoses every `interval` seconds when lines arrived, and shows the result."""

    def __init__(
        self,
        target: str,
        rules: Sequence[LoadedRule],
        *,
        engine: str,
        suppressions: Suppressions | None,
        interval: float,
        console: Console,
        err: Console,
        live: bool,
        render: Callable[[Diagnosis], Any],
        stdin: IO[bytes] | None = None,
    ) -> None:
        self.target = target
        self.name = "<stdin>" if target == "-" else target
        self.rules = rules
        self.engine = engine
        self.suppressions = suppressions
        self.interval = interval
        self.console = console
        self.err = err
        self.live = live
        self.render = render
        self.stop = threading.Event()
        self.segments: list[Segment] = [Segment(self.name)]
        self._number = 0
        self._redact = Redactor()
        self._keywords = re.compile(keyword_regex(candidate_keywords()))
        self._fresh = False
        self._last: Change | None = None
        self._ended = False
        self._stdin = stdin

    # --- reading ---

    def _add(self, raw: bytes) -> None:
        self._number += 1
        text = raw.decode("utf-8", errors="replace").rstrip("\r")
        if self._keywords.search(text) is None:
            return
        self.segments[-1].lines.append((self._number, self._redact(text)))
        self._fresh = True

    def _rotated(self, why: str) -> None:
        done = self.segments[-1]
        done.name = f"{self.name}@{len(self.segments)}"
        self.segments.append(Segment(self.name))
        self._number = 0
        self._redact = Redactor()
        self._fresh = True
        self.err.print(Text(f"{one_line(self.name)}: {why}", style="dim"), soft_wrap=True)

    # --- diagnosing ---

    def diagnose(self) -> Diagnosis:
        sources = [LineSource(name=s.name, lines=list(s.lines), path=None) for s in self.segments if s.lines]
        if not sources:
            sources = [LineSource(name=self.name, lines=[])]
        parsed = parse_sources(sources, self.engine)
        diagnosis, _ = diagnose_parsed(parsed, self.rules, engine=self.engine, suppressions=self.suppressions)
        return diagnosis

    def _show(self, diagnosis: Diagnosis, live: Live | None) -> None:
        stamp = time.strftime("%H:%M:%S")
        if live is not None:
            lines = sum(len(s.lines) for s in self.segments)
            head = Text(
                f"watching {one_line(self.name)}: {self._number:,} lines, {lines:,} read as candidates; "
                f"updated {stamp} (Ctrl-C ends)",
                style="dim",
            )
            live.update(Group(head, self.render(diagnosis)), refresh=True)
            return
        change = change_of(clean(diagnosis))
        if change != self._last:
            self.console.print(Text(change.line(stamp)), soft_wrap=True, highlight=False)
            self.console.file.flush()
            self._last = change

    # --- the loop ---

    def run(self) -> None:
        follower: FileFollower | None = None
        lines_in: queue.Queue[bytes | None] | None = None
        if self.target == "-":
            lines_in = queue.Queue()
            stream = self._stdin if self._stdin is not None else sys.stdin.buffer
            threading.Thread(target=_stdin_lines, args=(stream, lines_in), daemon=True).start()
        else:
            path = Path(self.target)
            if path.is_dir():
                raise InputError(f"{self.target}: is a directory, not a log")
            if not path.exists():
                raise InputError(f"{self.target}: no such file")
            follower = FileFollower(path, self._rotated)
        live = Live(console=self.console, auto_refresh=False, transient=False) if self.live else None
        if live is not None:
            live.start()
        try:
            shown_at = 0.0
            first = True
            while not self.stop.is_set():
                if follower is not None:
                    for raw in follower.poll():
                        self._add(raw)
                elif lines_in is not None:
                    self._drain_queue(lines_in)
                now = time.monotonic()
                if (self._fresh or first) and (first or now - shown_at >= self.interval or self._ended):
                    self._fresh = False
                    self._show(self.diagnose(), live)
                    shown_at, first = now, False
                if self._ended:
                    break
                self.stop.wait(POLL_SECONDS)
        finally:
            if follower is not None:
                follower.close()
            if live is not None:
                live.stop()

    def _drain_queue(self, lines_in: queue.Queue[bytes | None]) -> None:
        while True:
            try:
                raw = lines_in.get_nowait()
            except queue.Empty:
                return
            if raw is None:
                self._ended = True
                return
            self._add(raw)


def stop_on_signals(stop: threading.Event) -> Callable[[], None]:
    """Ctrl-C and SIGTERM set `stop` (the loop ends at its next poll, exit 0); returns what restores them."""
    previous: dict[int, Any] = {}

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()

    for signum in (signal.SIGINT, signal.SIGTERM):
        previous[signum] = signal.signal(signum, handler)

    def restore() -> None:
        for signum, old in previous.items():
            signal.signal(signum, old)

    return restore


def live_view(console: Console, *, verbose: bool) -> Callable[[Diagnosis], Text]:
    """The terminal report as one renderable for rich Live, drawn at the console's width and colours."""

    def view(diagnosis: Diagnosis) -> Text:
        buffer = io.StringIO()
        offscreen = Console(
            file=buffer,
            width=console.width,
            force_terminal=console.is_terminal,
            color_system=console.color_system,  # type: ignore[arg-type]
            no_color=console.no_color,
            highlight=False,
            soft_wrap=False,
        )
        render_terminal(diagnosis, offscreen, verbose=verbose)
        return Text.from_ansi(buffer.getvalue())

    return view


def run_watch(
    target: str,
    rules: Sequence[LoadedRule],
    *,
    engine: str,
    suppressions: Suppressions | None,
    interval: float,
    console: Console,
    err: Console,
    verbose: bool = False,
) -> None:
    """`logdoctor watch`: follow until the input ends (stdin), Ctrl-C or SIGTERM."""
    if target != "-" and not os.path.exists(target) and looks_remote(target):
        raise UsageError(
            f"{target}: watch follows a local file or stdin; over SSH it is not built yet "
            "(run `logdoctor diagnose HOST`, or `ssh HOST tail -F LOG | logdoctor watch -`)"
        )
    live = console.is_terminal and sys.stdout.isatty()
    watcher = Watcher(
        target,
        rules,
        engine=engine,
        suppressions=suppressions,
        interval=interval,
        console=console,
        err=err,
        live=live,
        render=live_view(console, verbose=verbose),
    )
    restore = stop_on_signals(watcher.stop)
    try:
        watcher.run()
    finally:
        restore()


def looks_remote(target: str) -> bool:
    """`user@host`, `ssh://host`, `host:path`: what diagnose would take for a host."""
    return target.startswith("ssh://") or "@" in target or (":" in target and "/" not in target.split(":")[0])
