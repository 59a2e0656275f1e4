"""`logdoctor watch PATH|-`: follow a growing log and keep its diagnosis current.

    $ logdoctor watch vllm-serve.log | cat
    11:02:14 problems  1 likely problem(s); top: speculation (score 82) ...  | speculation 82
    11:02:44 problems  2 likely problem(s); top: speculation (score 82) ...  | speculation 82, kv-cache-pressure 64

A file is followed like `tail -F`: waited for while it does not exist, new lines as they are written, and
through rotation - the file renamed away (logrotate) or truncated in place (copytruncate) and a new one written
under the name. The view is the current server run alone (`Watcher.current`): a server start inside a file
begins a new run by `diagnose`'s rules; a rotation begins one when the new file begins with a server start,
else the new file continues the run before it (what was read before stays part of it as `NAME@1`: its start-up
lines are still the configuration). Earlier runs get one line each. `-` follows stdin until it ends.

A host (`watch kpro5`, `watch root@kpro5:/var/log/vllm.log`) is followed over SSH with `tail -F` on the host
(logdoctor/sources/sshfollow.py), reconnecting with backoff when the connection drops.

Only lines with a keyword of some line type are kept, as the grep prefilter keeps them. Parsing is
incremental: each segment has one `EventStream` that is fed the lines that arrived since the last diagnosis,
and every `--interval` seconds with new lines the rules run again on the accumulated events, with what the
stream would give if the log ended here (`EventStream.peek_close`): the diagnosis `diagnose` gives of the
same lines. On a terminal the ranked view is redrawn in place (rich Live); piped, one line is printed for the
first diagnosis and one for each change of the verdict or of the ranked causes. Ctrl-C and SIGTERM end it
with exit 0.
"""

from __future__ import annotations

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
from typing import IO, TYPE_CHECKING, Any

from rich.console import Console
from rich.live import Live
from rich.text import Text

from logdoctor.engine.result import Diagnosis
from logdoctor.engine.rules import LoadedRule
from logdoctor.engine.suppress import Suppressions
from logdoctor.errors import InputError, LogdoctorError, UsageError
from logdoctor.eventlog import EventLog, LineTexts
from logdoctor.parse.keywords import candidate_keywords, keyword_regex
from logdoctor.parse.pipeline import EventStream, SourceStats
from logdoctor.pipeline.run import LineSource, Parsed, diagnose_parsed, merge_parsed, parse_sources, split_runs
from logdoctor.pipeline.tap import Run, run_starts
from logdoctor.redact import Redactor
from logdoctor.sanitize import clean, one_line

if TYPE_CHECKING:
    from logdoctor.app.fleet import HostOptions

from logdoctor.app.watchview import Change, View, change_of, live_view

READ_CHUNK = 1 << 20
POLL_SECONDS = 0.2  # how often a file is looked at for new bytes or a rotation
MAX_LINE = 1 << 20  # as the local reader: a longer line keeps its first 1 MiB


@dataclass
class Segment:
    """The candidate lines of one file generation (before a rotation, or the current file), and their parse.

    `stream` has been fed `lines[:fed]`; `events` are the events it gave. `total` counts every line of the
    generation (candidates or not), as `diagnose` counts a prefiltered file's lines."""

    name: str
    engine: str = "auto"
    lines: list[tuple[int, str]] = field(default_factory=list)
    total: int = 0
    bytes_read: int = 0
    stream: EventStream | None = None
    events: EventLog = field(default_factory=EventLog)
    fed: int = 0
    closed: Parsed | None = None  # the final parse once the generation ended (rotated away)
    reparsed: int = 0  # diagnoses that had to parse every line again (a block was open)
    _starts: list[tuple[int, int | None]] | None = None  # the server starts of a closed generation

    def _stream(self) -> EventStream:
        if self.stream is None:
            self.stream = EventStream(self.name, (), engine=self.engine, keep_text=True)
        return self.stream

    def _feed_new(self) -> EventStream:
        stream = self._stream()
        if self.fed < len(self.lines):
            self.events.extend(stream.feed(self.lines[self.fed :]))
            self.fed = len(self.lines)
        return stream

    def _part(self, events: EventLog, stats: SourceStats, detection: Any, texts: LineTexts | None) -> Parsed:
        stats.lines = max(self.total, stats.lines)  # every line read, as a prefiltered `diagnose` says
        stats.prefiltered = True
        stats.bytes_read = self.bytes_read
        return Parsed(events, [stats], [detection], {self.name: texts if texts is not None else LineTexts()})

    def close(self) -> None:
        """The generation ended (rotated away): its parse is final."""
        stream = self._feed_new()
        self.events.extend(stream.close())
        self.closed = self._part(self.events, stream.stats, stream.detection, stream.texts)
        self.stream = None

    def whole(self) -> Parsed:
        """The parse of the lines so far, unsplit, as `parse_each` reads a file holding them: new lines only are
        parsed; the end of the source is what the stream would give if it ended now."""
        if self.closed is not None:
            done = self.closed
            return Parsed(done.events, list(done.stats), list(done.detections), dict(done.texts))
        stream = self._feed_new()
        peeked = stream.peek_close()
        if peeked is None:  # a grammar holds a block open: this once, parse every line again
            self.reparsed += 1
            return self.parsed_again()
        tail, stats, detection, texts = peeked
        events = EventLog()
        events.extend(self.events)  # the compressed batches shared, not encoded again for each view
        events.extend(tail)
        return self._part(events, stats, detection, texts)

    def starts(self, part: Parsed) -> list[tuple[int, int | None]]:
        """The server starts in `part` (this generation's parse): worked out once the generation has ended."""
        if self.closed is None or self._starts is None:
            found = run_starts(part.events)
            if self.closed is None:
                return found
            self._starts = found
        return self._starts

    def parsed(self) -> list[Parsed]:
        """`whole()` split per server start: the last start, as `parse_each` gives it."""
        return split_runs(self.whole())

    def parsed_again(self) -> Parsed:
        """Every line parsed afresh (what watch did before parsing became incremental; the benchmark's baseline)."""
        fresh = EventStream(self.name, list(self.lines), engine=self.engine, keep_text=True)
        return self._part(EventLog(fresh), fresh.stats, fresh.detection, fresh.texts)


class FileFollower:
    """`tail -F` of one path: complete lines as they are appended, through rename and truncation."""

    def __init__(self, path: Path, on_rotate: Callable[[str], None]) -> None:
        self.path = path
        self.on_rotate = on_rotate
        self._handle: IO[bytes] | None = None
        self._inode: tuple[int, int] | None = None
        self._partial = b""
        self.bytes_read = 0
        self.opened = False  # the file has been found at least once

    def _open(self) -> bool:
        try:
            handle = self.path.open("rb")
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise InputError(f"{self.path}: cannot read it ({exc.strerror or exc})") from exc
        stat = os.fstat(handle.fileno())
        self._handle, self._inode, self._partial = handle, (stat.st_dev, stat.st_ino), b""
        self.opened = True
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


@dataclass(frozen=True)
class Rotation:
    """The followed file was replaced or truncated (a host's `tail -F` says so): a new segment starts."""

    why: str


@dataclass(frozen=True)
class Failure:
    """The reading thread failed: the main thread raises `error` (a host that cannot be followed)."""

    error: Exception


CAUGHT_UP = "caught-up"  # a host's follow has read as far as the file reached when it started: show the view

# What the reading threads put on the watcher's queue: a raw line (stdin), a host's numbered candidate line
# (number, text, bytes read up to its end), a rotation, or None at the end of the input.
Arrival = bytes | tuple[int, str, int] | Rotation | Failure | str | None


def _stdin_lines(stream: IO[bytes], out: queue.Queue[Arrival]) -> None:
    for line in stream:
        out.put(line.rstrip(b"\n")[:MAX_LINE])
    out.put(None)


def _runs(starts: Sequence[tuple[int, int | None]], total: int) -> list[Run]:
    firsts = [first for first, _ in starts]
    return [
        Run(i + 1, len(starts), first, (firsts[i + 1] - 1) if i + 1 < len(starts) else max(total, first), banner)
        for i, (first, banner) in enumerate(starts)
    ]


def _starting(d: Diagnosis) -> bool:
    """A serving engine's start-up was read but no stats line yet: the server is starting or idle."""
    return d.verdict.kind in ("inconclusive", "healthy") and any(
        m.startswith("measured throughput") for m in d.verdict.missing
    )


class Watcher:
    """Reads, diagnoses every `interval` seconds when lines arrived, and shows the result.

    The lines come from a file (`FileFollower`), stdin, or a host (`remote`: a function that runs in a thread
    of its own, puts numbered candidate lines on the queue it is given, and returns when `stop` is set)."""

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
        render: Callable[..., Any],  # (View, header, notice) -> what rich Live shows
        stdin: IO[bytes] | None = None,
        remote: Callable[[queue.Queue[Arrival], threading.Event], None] | None = None,
        name: str | None = None,
        incremental: bool = True,
    ) -> None:
        self.target = target
        self.name = name or ("<stdin>" if target == "-" else target)
        self.rules = rules
        self.engine = engine
        self.suppressions = suppressions
        self.interval = interval
        self.console = console
        self.err = err
        self.live = live
        self.render = render
        self.stop = threading.Event()
        # set by the signal handler, which must take no lock: Event.set() there deadlocks when the signal lands
        # while this thread holds the event's own lock (inside stop.wait): the loop turns it into `stop`
        self.signalled = False
        self.segments: list[Segment] = [Segment(self.name, engine)]
        self._number = 0
        self._redact = Redactor()
        self._keywords = re.compile(keyword_regex(candidate_keywords()))
        self._fresh = False
        self._last: Change | None = None
        self._last_run = (0, 1)
        self._ended = False
        self._stdin = stdin
        self._remote = remote
        self.incremental = incremental
        self.diagnoses = 0
        self._caught_up = False
        self.notice = ""  # the last rotation or connection message: the live view's second line
        self._earlier: dict[tuple[int, int, int], str] = {}  # earlier runs' one-line verdicts, diagnosed once
        self._run_label = ""
        self._run_key = (0, 1)  # (segment, first line) where the current run begins: a change of it is a new run
        self.missing = False  # the followed file does not exist (yet)

    # --- reading ---

    def _add(self, raw: bytes) -> None:
        self._number += 1
        self.segments[-1].bytes_read += len(raw) + 1
        self._keep(self._number, raw.decode("utf-8", errors="replace").rstrip("\r"))

    def _add_numbered(self, number: int, text: str, size: int) -> None:
        """A line the host's filter kept, with its number in the remote file (`size`: bytes read up to it)."""
        self._number = number
        segment = self.segments[-1]
        segment.bytes_read = max(segment.bytes_read, size)
        self._keep(number, text)

    def _keep(self, number: int, text: str) -> None:
        segment = self.segments[-1]
        segment.total = number
        if self._keywords.search(text) is None:
            return
        segment.lines.append((number, self._redact(text)))
        self._fresh = True

    def _rotated(self, why: str) -> None:
        done = self.segments[-1]
        done.name = f"{self.name}@{len(self.segments)}"
        if done.stream is not None:
            done.stream.source = done.stream.context.source = done.name
        if self.incremental:
            done.close()
        self.segments.append(Segment(self.name, self.engine))
        self._number = 0
        self._redact = Redactor()
        self._fresh = True
        self.say(f"{one_line(self.name)}: {why}")

    def say(self, message: str) -> None:
        """A rotation or connection message: on stderr when piped; in the live view's second line on a terminal,
        where a line printed above the redrawn view would stay there, stale."""
        if self.live:
            self.notice = message
            self._fresh = True
        else:
            self.err.print(Text(message, style="dim"), soft_wrap=True)

    # --- diagnosing ---

    def parsed(self) -> Parsed:
        """The current run's lines, parsed as `parse_sources` parses files holding them."""
        return self.current()[0]

    def current(self) -> tuple[Parsed, list[str]]:
        """The current run's parse, and one line for each earlier run (never mixed into it).

        A server start inside a file begins a new run, by `diagnose`'s rules (`split_runs`). A rotation begins one
        when the new file begins with a server start (a restart that writes a new log); a new file that begins
        with anything else (logrotate under a running server) continues the run of the file before it, whose
        start-up lines are still its configuration."""
        current: list[Parsed] = []
        earlier: list[str] = []
        labels: list[str] = []
        open_run = True
        for number in range(len(self.segments) - 1, -1, -1):
            segment = self.segments[number]
            if not segment.lines:
                continue
            part = segment.whole() if self.incremental else segment.parsed_again()
            starts = segment.starts(part)
            runs = _runs(starts, max(segment.total, part.stats[0].lines))
            if not open_run:
                earlier[:0] = [self._earlier_line(segment, part, starts, run) for run in runs]
                continue
            parts = split_runs(part, starts=starts)
            current[:0] = parts
            chosen = parts[0].run
            if chosen is not None:
                earlier[:0] = [self._earlier_line(segment, part, starts, r) for r in runs if r.index < chosen.index]
                labels.insert(0, f"{segment.name} {chosen.span()}")
                self._run_key = (number, chosen.first)
                open_run = False
            else:
                labels.insert(0, segment.name)
                self._run_key = (number, 1)
                open_run = starts[0][1] is None  # no server start at its top: the run began in an earlier file
        self._run_label = ", ".join(labels) or self.name
        if not current:
            return parse_sources([LineSource(name=self.name, lines=[])], self.engine), earlier
        return merge_parsed(current), earlier

    def _earlier_line(self, segment: Segment, part: Parsed, starts: list[tuple[int, int | None]], run: Run) -> str:
        """`vllm.log@1 lines 1-420: PROBLEMS 2 likely problem(s); top: ...`, the run diagnosed once."""
        key = (id(segment), run.first, run.last)  # a segment's name changes when it is rotated away
        if run.banner is None and run.index == 1 and segment is not self._first_with_lines():
            # a file that began without a server start: the rest of the run before it, which lacks its start-up
            # lines; diagnosed alone it would read as a run with no configuration
            return f"earlier run {one_line(segment.name)} {run.span()}: the run of the file before it, continued"
        if key not in self._earlier:
            if len(starts) > 1:
                runs = split_runs(part, all_runs=True, starts=starts)
                one = next(p for p in runs if p.run is not None and p.run.index == run.index)
            else:
                one = part
            diagnosis, _ = diagnose_parsed(one, self.rules, engine=self.engine, suppressions=self.suppressions)
            self._earlier[key] = f"{diagnosis.verdict.kind.upper()}  {diagnosis.verdict.summary}"
        return f"earlier run {one_line(segment.name)} {run.span()}: {self._earlier[key]}"

    def _first_with_lines(self) -> Segment | None:
        return next((s for s in self.segments if s.lines), None)

    def parsed_again(self) -> Parsed:
        """Every line parsed again from its start (the benchmark's baseline; what watch did before)."""
        parts = [part for s in self.segments if s.lines for part in split_runs(s.parsed_again())]
        if not parts:
            return parse_sources([LineSource(name=self.name, lines=[])], self.engine)
        return merge_parsed(parts)

    def diagnose(self) -> Diagnosis:
        """The current run's diagnosis (what `diagnose` of its lines says)."""
        self.diagnoses += 1
        diagnosis, _ = diagnose_parsed(self.parsed(), self.rules, engine=self.engine, suppressions=self.suppressions)
        return diagnosis

    def view(self) -> View:
        """What to show now: the current run's diagnosis, or why there is none yet."""
        if self.missing and not any(s.lines for s in self.segments):
            return View(None, f"waiting for {one_line(self.name)} to appear (tail -F)", self.name, [])
        parsed, earlier = self.current()
        if not any(True for _ in parsed.events):
            read = f"{self._number:,} line(s) read, none of a vLLM, SGLang or NCCL format" if self._number else ""
            if self._ended:  # the input is over: nothing more is coming
                ended = f"{one_line(self.name)} ended: " + (read or "no line read")
                return View(None, ended, self._run_label, earlier, self._run_key)
            waiting = f"waiting for lines of {one_line(self.name)}" + (f" ({read} yet)" if read else "")
            return View(None, waiting, self._run_label, earlier, self._run_key)
        self.diagnoses += 1
        diagnosis, _ = diagnose_parsed(parsed, self.rules, engine=self.engine, suppressions=self.suppressions)
        starting = "waiting for traffic: the server's start-up was read, no stats line yet"
        return View(diagnosis, starting if _starting(diagnosis) else None, self._run_label, earlier, self._run_key)

    def _show(self, view: View, live: Live | None) -> None:
        stamp = time.strftime("%H:%M:%S")
        if live is not None:
            lines = sum(len(s.lines) for s in self.segments)
            rest = f": {self._number:,} lines, {lines:,} read as candidates; updated {stamp} (Ctrl-C ends)"
            name = one_line(self.name)
            room = self.console.width - len("watching ") - len(rest)
            if len(name) > room:  # a long path keeps its end (the file's name): the rest of the line is news
                name = "…" + name[-max(room - 1, 8) :]
            head = f"watching {name}{rest}"
            live.update(self.render(view, head, self.notice), refresh=True)
            return
        if view.diagnosis is None:
            change = Change("ended" if self._ended else "waiting", view.waiting or "waiting", ())
        else:
            change = change_of(clean(view.diagnosis))
            if view.waiting is not None and not change.causes:
                change = Change("waiting", f"{view.waiting}; {change.summary}", ())
        if self._last is not None and view.key != self._last_run and view.diagnosis is not None:
            self.console.print(Text(f"{stamp} new run: {one_line(view.run)}"), soft_wrap=True, highlight=False)
            self._last = None
        if change != self._last:
            self.console.print(Text(change.line(stamp)), soft_wrap=True, highlight=False)
            self.console.file.flush()
            self._last = change
        self._last_run = view.key

    # --- the loop ---

    def run(self) -> None:
        follower: FileFollower | None = None
        lines_in: queue.Queue[Arrival] | None = None
        reader: threading.Thread | None = None
        if self._remote is not None:
            lines_in = queue.Queue()
            reader = threading.Thread(target=self._remote, args=(lines_in, self.stop), daemon=True)
            reader.start()
        elif self.target == "-":
            lines_in = queue.Queue()
            stream = self._stdin if self._stdin is not None else sys.stdin.buffer
            threading.Thread(target=_stdin_lines, args=(stream, lines_in), daemon=True).start()
        else:
            path = Path(self.target)
            if path.is_dir():
                raise InputError(f"{self.target}: is a directory, not a log")
            self.missing = not path.exists()  # like tail -F: wait for it to appear
            if self.missing:
                self.say(f"{one_line(self.target)}: no such file yet; waiting for it to appear")
            follower = FileFollower(path, self._rotated)
        live = (
            Live(console=self.console, auto_refresh=False, transient=False, vertical_overflow="crop")
            if self.live
            else None
        )
        if live is not None:
            live.start()
        try:
            shown_at = 0.0
            # a host: the first view waits until its log has been read as far as it reached (a view of the first
            # lines that arrived could call healthy what only lacks the rest)
            first = self._remote is None
            waiting = self._remote is not None
            while not self.stop.is_set() and not self.signalled:
                if follower is not None:
                    for raw in follower.poll():
                        self._add(raw)
                    if self.missing and follower.opened:
                        self.missing = False
                        self.say(f"{one_line(self.target)}: appeared; following it")
                elif lines_in is not None:
                    self._drain_queue(lines_in)
                if self._caught_up:
                    self._caught_up, first = False, waiting
                    waiting = False
                now = time.monotonic()
                due = first or now - shown_at >= self.interval or self._ended
                if (self._fresh or first or self._ended) and due and not (waiting and not self._ended):
                    self._fresh = False
                    self._show(self.view(), live)
                    shown_at, first = now, False
                if self._ended:
                    break
                self.stop.wait(POLL_SECONDS)
        finally:
            self.stop.set()
            if follower is not None:
                follower.close()
            if live is not None:
                live.stop()
            if reader is not None:
                reader.join(timeout=10)

    def _drain_queue(self, lines_in: queue.Queue[Arrival]) -> None:
        while True:
            try:
                item = lines_in.get_nowait()
            except queue.Empty:
                return
            if item is None:
                self._ended = True
                return
            if isinstance(item, bytes):
                self._add(item)
            elif isinstance(item, Rotation):
                self._rotated(item.why)
            elif isinstance(item, Failure):
                raise item.error
            elif item == CAUGHT_UP:
                self._caught_up = True
            else:
                self._add_numbered(*item)


def stop_on_signals(watcher: Watcher) -> Callable[[], None]:
    """Ctrl-C and SIGTERM end the watch at the loop's next poll (exit 0); returns what restores the handlers.

    The handler only sets `watcher.signalled`. It runs in the main thread between two bytecodes, possibly
    inside `stop.wait()` while that thread holds the event's lock, so `stop.set()` there (which takes the
    same, non-reentrant lock) would hang the process for good; the loop sets `stop` itself."""
    previous: dict[int, Any] = {}

    def handler(signum: int, frame: FrameType | None) -> None:
        watcher.signalled = True

    for signum in (signal.SIGINT, signal.SIGTERM):
        previous[signum] = signal.signal(signum, handler)

    def restore() -> None:
        for signum, old in previous.items():
            signal.signal(signum, old)

    return restore


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
    ssh: HostOptions | None = None,
) -> None:
    """`logdoctor watch`: follow until the input ends (stdin), Ctrl-C or SIGTERM."""
    remote: Callable[[queue.Queue[Arrival], threading.Event], None] | None = None
    name: str | None = None
    said: list[Callable[[str], None]] = []  # the watcher's `say`, once it exists
    if target != "-" and not os.path.exists(target) and is_host_target(target, ssh):
        remote, name = host_reader(target, ssh, err, lambda message: said[0](message) if said else None)
    elif ssh is not None and ssh.host_only_given():
        raise UsageError(f"{', '.join(ssh.host_only_given())} only apply to host targets (user@host)")
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
        remote=remote,
        name=name,
    )
    said.append(watcher.say)
    restore = stop_on_signals(watcher)
    try:
        watcher.run()
    finally:
        restore()


def is_host_target(target: str, ssh: HostOptions | None) -> bool:
    """A host (`kpro5`, `root@kpro5`, `ssh://...`) or a host and a path (`root@kpro5:/var/log/vllm.log`), as
    `diagnose` decides it (an existing local path always wins)."""
    from logdoctor.sources.sshconfig import load_ssh_config
    from logdoctor.sources.sshfollow import split_follow_target
    from logdoctor.sources.target import looks_like_host

    host, path = split_follow_target(target)
    if path is not None:
        return looks_like_host(host) or host in load_ssh_config(ssh.ssh_config if ssh else None).aliases()
    return looks_like_host(target, aliases=load_ssh_config(ssh.ssh_config if ssh else None).aliases())


def host_reader(
    target: str, ssh: HostOptions | None, err: Console, notify: Callable[[str], None] | None = None
) -> tuple[Callable[[queue.Queue[Arrival], threading.Event], None], str]:
    """The reading thread of `watch HOST`: the host's log followed over SSH (logdoctor/sources/sshfollow.py).
    `notify` gets its connection messages (the watcher shows them); on stderr without it."""
    from logdoctor.report.events import say
    from logdoctor.sources.sshfollow import HostFollow, follow_target

    if ssh is None:
        ssh = watch_host_options()
    host, path = follow_target(target)
    if path is not None and ssh.logs:
        raise UsageError(f"{target}: give the remote path once, in the target or with --log")
    label = host.label or host.host
    follow = HostFollow(
        host,
        ssh.ssh_options(),
        candidate_keywords(),
        path=path,
        say=lambda message: notify(f"{label}: {message}") if notify else say(err, f"{label}: {message}", "dim"),
    )

    def read(out: queue.Queue[Arrival], stop: threading.Event) -> None:
        try:
            follow.run(
                lambda number, text, size: out.put((number, text, size)),
                lambda why: out.put(Rotation(why)),
                stop,
                lambda: out.put(CAUGHT_UP),
            )
        except LogdoctorError as exc:  # the main thread raises it: one line naming the host, exit 3
            exc.args = (f"{label}: {exc}",)
            out.put(Failure(exc))
        except Exception as exc:  # a bug: exit 4, as anywhere else
            out.put(Failure(exc))
        finally:
            out.put(None)

    return read, label


def watch_host_options(**given: Any) -> HostOptions:
    """`HostOptions` for a follow: the SSH options `watch` offers (`given`), the collection-only ones at their
    defaults (a follow keeps no bundle, reads one host, and has no end to bound with a byte cap or a timeout)."""
    from logdoctor.app.fleet import HostOptions
    from logdoctor.sources.limits import DEFAULT_JOBS, DEFAULT_MAX_BYTES, DEFAULT_READ_TIMEOUT

    values: dict[str, Any] = {
        "ssh_config": None,
        "identities": (),
        "known_hosts": None,
        "timeout": None,
        "logs": (),
        "sudo": False,
        "accept_new": False,
        **given,
    }
    return HostOptions(
        save=None, max_bytes=DEFAULT_MAX_BYTES, jobs=DEFAULT_JOBS, read_timeout=DEFAULT_READ_TIMEOUT, **values
    )
