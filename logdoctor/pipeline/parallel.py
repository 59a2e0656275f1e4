"""A big local file parsed in worker processes, one byte range each, merged in order into one parse.

`diagnose` of a gigabyte log spends most of its time in Python's per-line parsing (docs/benchmarks.md,
*Parallel parse*), which one process runs on one core whatever the prefilter does. Here the file is cut
into byte ranges at line ends (`LocalSource.parallel_ranges`, one a CPU), and each range is prefiltered
(its own `head -c | grep -n`) and parsed by a forked worker; the parent merges the ranges' events, counts,
detections and evidence texts in file order.

The parse of a line depends on what came before it (the grammars' state: the vLLM version, the number of
speculative tokens; the workers' ranks; a block or a terminal-wrapped line still open). A worker cannot
know the state at its range's start without parsing everything before it, so it guesses: it first parses
the head of the file (`WARMUP_BYTES`, where a server prints its start-up lines), keeping the state and
dropping the events, then its range. The guess is checked: the state each worker started from must equal
the state the range before ended with (`EventStream.carried_state`), and no range may end with anything
open (`EventStream.cut_clean`). By induction the merged parse is then the one-process parse. When a check
fails (a server restarted mid-file, a block cut by a range end), the file is parsed again in one process:
slower, never different.

Workers are forked (they inherit the loaded registry; no import), and only when this process runs no
other thread (a fork copies locks held by other threads): on a terminal, where the progress spinner runs
in a thread, the file is parsed in one process.
"""

from __future__ import annotations

import os
import pickle
import threading
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from logdoctor.errors import InputError
from logdoctor.eventlog import EventLog, LineTexts
from logdoctor.events import EventBase
from logdoctor.facts.partial import RangeFacts, Stretch, periodic
from logdoctor.parse.detect import Detection
from logdoctor.parse.pipeline import UNPARSED_SAMPLE_SIZE, EventStream, SourceStats
from logdoctor.sources.local import LocalSource, usable_cpus

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from logdoctor.pipeline.tap import Clues, Tap

WARMUP_BYTES = 4 * 1024 * 1024  # the head of the file each worker parses first, for the state at its range's start
# ... or less: the head up to this many periodic events (stats lines), by when the server is serving and its start-up
# state is known. An event-dense log holds ~40,000 events in WARMUP_BYTES, which every worker parsed again.
WARMUP_SERVING_EVENTS = 1000
WORKERS_OFF = "LOGDOCTOR_PARSE_WORKERS"  # `0`: parse every file in this process
PROGRESS_SECONDS = 0.25  # how often `collect` tells its progress callback the bytes parsed, while it waits
_FAILED = 0xFFFFFFFF  # the index a worker's message carries when it could not go on


@dataclass
class RangeParse:
    """What a worker sends back for its range: its events and evidence texts as the compressed batches of its
    `EventLog` and `LineTexts` (`batches()`), which the parent adopts as they are (`adopt`): it neither decodes
    nor encodes them again, and holds no range's events as objects."""

    events: list[tuple[bytes, int]]
    stats: SourceStats
    detection: Detection
    texts: list[tuple[bytes, tuple[int, int]]]
    start_state: str | None  # the state it started from (None: the first range, which starts fresh)
    end_state: str  # the state it ended with
    clean: bool  # nothing open at its end
    error: str | None = None  # an InputError's message (a cap): raised in the parent
    fallback: str | None = None  # why the file must be parsed in one process after all
    # Its fact partials (logdoctor.facts.partial): the periodic events summed up in stretches, the others whole,
    # in order; None where the range gave up on them (the parent then reads its events one by one).
    facts: list[Stretch | EventBase] | None = None
    # Each line whose engine the detection so far decided (a warning with no engine header): the range's detection up
    # to it and the engine it was given, checked in the parent against the detection of the ranges before.
    engines_guessed: list[tuple[Detection, str]] = field(default_factory=list)


def _warmup_end(source: LocalSource, start: int) -> int:
    """Where a worker's warm-up stops: the first line end at or after WARMUP_BYTES, or the range's start."""
    if start <= WARMUP_BYTES:
        return start
    with open(source.path, "rb") as fh:
        fh.seek(WARMUP_BYTES)
        at = WARMUP_BYTES
        while at < start:
            block = fh.read(64 * 1024)
            if not block:
                return start
            found = block.find(b"\n")
            if found >= 0:
                return min(start, at + found + 1)
            at += len(block)
    return start


def _until_serving(lines: Iterator[tuple[int, str]], served: list[int]) -> Iterator[tuple[int, str]]:
    """`lines` until `served[0]` (the periodic events parsed from them so far) reaches WARMUP_SERVING_EVENTS."""
    try:
        for line in lines:
            yield line
            if served[0] >= WARMUP_SERVING_EVENTS:
                return
    finally:
        close = getattr(lines, "close", None)
        if close is not None:
            close()  # the head's grep, stopped early


class _Shared:
    """What the workers share (created before the fork): each range's line count, whether it is known, and the
    next range to take."""

    def __init__(self, context: Any, ranges: int) -> None:
        self.counts = context.Array("q", ranges, lock=False)
        self.ready = [context.Event() for _ in range(ranges)]
        self.next = context.Value("i", 0)

    def take(self) -> int:
        with self.next.get_lock():
            index = int(self.next.value)
            self.next.value = index + 1
        return index

    def offset(self, index: int) -> int:
        """The lines before range `index` (waits for the counts of the ranges before it)."""
        for event in self.ready[:index]:
            event.wait()
        return sum(self.counts[i] for i in range(index))


def _parse_range(
    stream: EventStream,
    source: LocalSource,
    keywords: Sequence[str],
    ranges: list[tuple[int, int]],
    index: int,
    shared: _Shared,
    warm: bool,
) -> RangeParse:
    """Range `index` parsed by `stream`, which starts from the state it holds (a range this worker parsed
    before) or, with `warm`, from the state of the file's head."""
    start, end = ranges[index]
    name = source.name
    stream.final = False
    if warm and index > 0:
        served = [0]
        head = source.range_lines(keywords, 0, _warmup_end(source, start))
        stream.begin_range(_until_serving(head, served), SourceStats(name=name))
        for event in stream:
            if periodic(event):
                served[0] += 1
    start_state = stream.carried_state() if index > 0 else None
    stats = SourceStats(name=name, kind=source.kind, path=source.path)
    stream.begin_range(source.range_lines(keywords, start, end, lambda: shared.offset(index)), stats)
    stream.final = index == len(ranges) - 1
    # Compressed as they come: the worker holds no range's events as objects either; their facts are summed up
    # as they go by.
    facts = RangeFacts()
    events = EventLog(facts.tap(stream))
    assert stream.texts is not None
    return RangeParse(
        events=events.batches(),
        stats=stats,
        detection=stream.detection,
        texts=stream.texts.batches(),
        start_state=start_state,
        end_state=stream.carried_state(),
        clean=stream.cut_clean,
        facts=facts.segments(),
        engines_guessed=stream.engines_guessed,
    )


def _worker(
    conn: Connection,
    source: LocalSource,
    keywords: Sequence[str],
    ranges: list[tuple[int, int]],
    worker: int,
    workers: int,
    engine: str | None,
    shared: _Shared,
) -> None:
    """A forked worker: first the line counts of its share of the ranges (every `workers`-th), then ranges taken
    in turn until none is left, each one's parse pickled down `conn` after its index (or why it could not be
    parsed apart)."""
    import gc
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    gc.freeze()  # what the parent held: never traversed (nor its pages copied) by this worker's collections
    try:
        for mine in range(worker, len(ranges), workers):
            shared.counts[mine] = source.count_range_lines(*ranges[mine])
            shared.ready[mine].set()
        stream = EventStream(source.name, iter(()), engine=engine, keep_text=True)
        warm = True
        while (index := shared.take()) < len(ranges):
            result = _parse_range(stream, source, keywords, ranges, index, shared, warm)
            warm = False
            conn.send_bytes(index.to_bytes(4, "little") + pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception as exc:
        empty = SourceStats(name=source.name)
        failed = RangeParse([], empty, Detection(), [], None, "", False)
        if isinstance(exc, InputError):
            failed.error = str(exc)
        else:  # the file is then parsed in one process, which reports what is wrong with it
            failed.fallback = f"{type(exc).__name__}: {exc}"
        for event in shared.ready:  # no worker may wait for a count that will not come
            event.set()
        conn.send_bytes(_FAILED.to_bytes(4, "little") + pickle.dumps(failed, protocol=pickle.HIGHEST_PROTOCOL))
    finally:
        conn.close()


def workers_allowed() -> bool:
    """Whether a file may be parsed in forked workers: two CPUs or more, a fork start method, this process's only
    thread, and not turned off by `LOGDOCTOR_PARSE_WORKERS=0` or `LOGDOCTOR_PREFILTER_PARTS=1`."""
    import multiprocessing

    if os.environ.get(WORKERS_OFF, "").strip() == "0" or usable_cpus() < 2:
        return False
    return threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods()


class RangeWork:
    """A file's workers, started (`start_in_ranges`); `collect` waits for their ranges and merges them."""

    def __init__(
        self,
        source: LocalSource,
        ranges: list[tuple[int, int]],
        keywords: Sequence[str],
        engine: str | None,
    ):
        import multiprocessing
        import time

        self.source = source
        self.engine = engine
        self._ranges = ranges
        source._started = time.monotonic()  # --max-seconds counts from here, as in a one-process read
        context = multiprocessing.get_context("fork")
        self._shared = _Shared(context, len(ranges))
        workers = min(usable_cpus(), len(ranges))
        self._procs: list[Any] = []
        self._conns: list[Connection] = []
        try:
            for worker in range(workers):
                receive, send = context.Pipe(duplex=False)
                proc = context.Process(
                    target=_worker,
                    args=(send, source, keywords, ranges, worker, workers, engine, self._shared),
                    daemon=True,
                    name=f"logdoctor-parse-{worker}",
                )
                proc.start()
                send.close()
                self._procs.append(proc)
                self._conns.append(receive)
        except BaseException:
            self.cancel()
            raise

    def cancel(self, *, finished: bool = False) -> None:
        """Stop the workers (their greps end on a closed pipe) and close the pipes; `finished`: every range came
        in, so the workers are exiting on their own (waited for a moment before they are killed)."""
        for conn in self._conns:
            conn.close()
        for proc in self._procs:
            if finished:
                proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()
            proc.join()
        self._conns, self._procs = [], []

    def collect(
        self, stat: SourceStats, watch: Tap | None = None, progress: Callable[[int], None] | None = None
    ) -> tuple[EventLog, Detection, LineTexts] | None:
        """The merged parse (`stat` filled in; the source's bytes and line count set), or None when a check at a
        cut failed or a worker could not go on for another reason than a cap (then parse it in one process).
        `watch` (tap.Tap: server starts, clues, profile) is given each range's events as it is merged: its
        fact partials where the range has them (`feed`), else its events decoded; after None, start afresh.

        Each range is merged as soon as the ones before it are in, so what waits here is only the compressed
        results of ranges that came in early. `progress` is told the bytes of the ranges parsed so far, four times
        a second (a progress bar's; logdoctor/app/progress.py)."""
        from multiprocessing.connection import Connection, wait

        merged = _Merged(self.source, stat, watch)
        received: dict[int, memoryview] = {}
        done_bytes = 0
        finished = False
        try:
            waiting = list(self._conns)
            while merged.ranges < len(self._ranges):
                if not waiting:
                    return None  # every worker is done and a range is missing: one died
                for conn in wait(waiting, timeout=None if progress is None else PROGRESS_SECONDS):
                    assert isinstance(conn, Connection)
                    try:
                        message = memoryview(conn.recv_bytes())
                    except (EOFError, OSError):  # done, or died (killed, out of memory)
                        waiting.remove(conn)
                        continue
                    index = int.from_bytes(message[:4], "little")
                    received[index] = message[4:]
                    if index < len(self._ranges):
                        done_bytes += self._ranges[index][1] - self._ranges[index][0]
                if progress is not None:
                    progress(done_bytes)
                if _FAILED in received:
                    failed: RangeParse = pickle.loads(received[_FAILED])  # noqa: S301 - our own forked worker's
                    if failed.error is not None:
                        raise InputError(failed.error)  # a cap (--max-seconds): a one-process read's one-line error
                    return None  # anything else: parsed in one process, which reports it if it is the file's fault
                while merged.ranges in received:  # the ranges in order, each as soon as the ones before it are in
                    part: RangeParse = pickle.loads(received.pop(merged.ranges))  # noqa: S301 - our own worker's
                    if not merged.add(part):
                        return None  # the guess at the state of a range's start was wrong: parse it as one
            finished = True
            return merged.done(sum(self._shared.counts))
        finally:
            self.cancel(finished=finished)


def start_in_ranges(source: LocalSource, keywords: Sequence[str], engine: str | None) -> RangeWork | None:
    """The workers of a big local file, started now (a few byte ranges each), or None where it is parsed in one process: too small, not a plain file,
    one CPU, or workers not allowed (`workers_allowed`)."""
    ranges = source.parallel_ranges()
    if ranges is None or not workers_allowed():
        return None
    return RangeWork(source, ranges, keywords, engine)


def parse_in_ranges(
    source: LocalSource,
    keywords: Sequence[str],
    engine: str | None,
    stat: SourceStats,
    watch: Tap | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[EventLog, Detection, LineTexts] | None:
    """The parse of a big local file in worker processes, a few byte ranges each, as `EventStream` over the
    whole file gives it: the events, the detection and the evidence texts, with `stat` filled in (and the
    source's bytes and line count set, as its one-process read sets them).
    None where the file is parsed in one process: too small, not a plain file, one CPU, workers not allowed, or
    a check at a cut failed."""
    work = start_in_ranges(source, keywords, engine)
    return work.collect(stat, watch, progress) if work is not None else None


class _Merged:
    """The ranges' parses joined in file order, checked at each cut (`add`), into one source's parse (`done`)."""

    def __init__(self, source: LocalSource, stat: SourceStats, watch: Tap | None = None) -> None:
        self.source = source
        self.stat = stat
        self.watch = watch
        self.absorbing = watch is not None and watch.profiling.absorbs()
        self.events = EventLog()
        self.texts = LineTexts()
        self.detection: Detection | None = None
        self.unrecognised = array("q")
        self.ranges = 0
        self._last: RangeParse | None = None

    def add(self, part: RangeParse) -> bool:
        """Join the next range; False when the state it started from is not the one the range before ended with,
        or that range left something open at the cut (the merged parse would not be the one-process one)."""
        last = self._last
        if last is not None and (not last.clean or part.start_state != last.end_state):
            return False
        before = self.detection if self.detection is not None else Detection(forced=part.detection.forced)
        if any(seen.after(before).engine != engine for seen, engine in part.engines_guessed):
            return False  # a line's engine was decided from a wrong guess at the detection before the range
        self._last = part
        self.ranges += 1
        for blob, count in part.events:
            self.events.adopt(blob, count)
        if self.watch is not None:
            feed(self.watch, part, absorbing=self.absorbing)
        for blob, span in part.texts:
            self.texts.adopt(blob, span)
        stat, s = self.stat, part.stats
        stat.lines += s.lines
        stat.candidates += s.candidates
        stat.events += s.events
        stat.unrecognised += s.unrecognised
        room = UNPARSED_SAMPLE_SIZE - len(stat.unrecognised_samples)
        if room > 0:
            stat.unrecognised_samples.extend(s.unrecognised_samples[:room])
        self.unrecognised.extend(s.unrecognised_lines)
        if self.detection is None:
            self.detection = Detection(forced=part.detection.forced)
        self.detection.merge(part.detection)
        return True

    def done(self, total_lines: int) -> tuple[EventLog, Detection, LineTexts]:
        assert self.detection is not None, "no range was merged"
        self.stat.unrecognised_lines.extend(self.unrecognised)
        source = self.source
        source.bytes_read = source.size
        source.prefiltered = True
        source.total_lines = total_lines  # the ranges' newlines: what `wc -l` of the file counts
        return self.events, self.detection, self.texts


def feed(watch: Tap, part: RangeParse, *, absorbing: bool = True) -> None:
    """A range's events given to `watch` as the one-process parse gives them (tap.Tap.tap): from its fact
    partials, each stretch of periodic events merged at once and every other event offered whole, where it has
    them and the combiners can absorb them; else decoded from its batches, one by one."""
    segments = part.facts if absorbing else None
    if segments is None:
        events = EventLog()
        for blob, count in part.events:
            events.adopt(blob, count)
        for _ in watch.tap(events):
            pass
        return
    starts, clues, profiling = watch.starts, watch.clues, watch.profiling
    for segment in segments:
        if isinstance(segment, Stretch):
            starts.add(segment.first)  # every periodic event is served traffic to RunStarts: one says it all
            _clues(clues, segment)
            profiling.absorb(segment)
        else:
            starts.add(segment)
            clues.add(segment)
            profiling.add(segment)


def _clues(clues: Clues, stretch: Stretch) -> None:
    """A stretch into tap.Clues, as `Clues.add` of each of its events: the serving engines' votes and the first host
    a process header names (no periodic event names a model or a node rank)."""
    votes, serving = clues.votes, clues.serving
    for engine, count in stretch.engines.items():
        if engine in serving:
            votes[engine] = votes.get(engine, 0) + count
    if clues.host is None and stretch.host:
        clues.host = stretch.host
