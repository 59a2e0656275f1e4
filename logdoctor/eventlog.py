"""Where a deployment's events and evidence lines are kept while it is diagnosed: `EventLog` and `LineTexts`,
compressed batches in memory and, past a budget, in an unlinked temporary file, so memory stays flat however long
the log.
"""

from __future__ import annotations

import os
import pickle
import tempfile
import zlib
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, Any, overload

from logdoctor.events import EventBase

# --- storage ------------------------------------------------------------------------------------
# A pydantic event costs about 4 KiB of memory (the instance, its __dict__, its fields-set, its ProcessInfo);
# a log of a million stats lines would hold 4 GB. `EventLog` keeps a deployment's events pickled and
# zlib-compressed in batches (10-80 bytes an event: consecutive stats lines differ in a few digits) and
# gives them back, in order, each time it is iterated; `LineTexts` does the same for the evidence lines.
# docs/benchmarks.md ("Memory") has the measurements.

_BATCH = 1024  # events (or lines) a compressed batch: big enough to compress well, small enough to decode


# Compressed bytes a store keeps in memory; past that its batches go to an unlinked temporary file (`_Spool`),
# so memory stays flat however long the log: ~80,000 events, or as many lines' texts, fit in memory.
MEMORY_BUDGET = 4 << 20


class _OnDisk:
    """A batch written to a store's temporary file."""

    __slots__ = ("length", "offset", "spool")

    def __init__(self, spool: _Spool, offset: int, length: int) -> None:
        self.spool, self.offset, self.length = spool, offset, length

    def read(self) -> bytes:
        return self.spool.read(self.offset, self.length)


_Batch = bytes | _OnDisk


class _Spool:
    """Where a store's compressed batches live: in memory up to MEMORY_BUDGET, then in a temporary file that no
    other process can open (created unlinked, mode 0600, under $TMPDIR; gone when the store is). A file that cannot
    be created leaves the batches in memory."""

    __slots__ = ("_file", "_in_memory", "_no_file", "_size")

    def __init__(self) -> None:
        self._file: IO[bytes] | None = None
        self._no_file = False  # the temporary file could not be created: memory it is
        self._in_memory = 0
        self._size = 0

    def keep(self, blob: bytes) -> _Batch:
        if self._in_memory + len(blob) <= MEMORY_BUDGET or not self._open():
            self._in_memory += len(blob)
            return blob
        assert self._file is not None
        offset = self._size
        view = memoryview(blob)
        while view:
            view = view[os.write(self._file.fileno(), view) :]
        self._size += len(blob)
        return _OnDisk(self, offset, len(blob))

    def _open(self) -> bool:
        if self._file is None and not self._no_file:
            try:
                # It lives as long as the store: closed (and its space freed) when the store is collected.
                self._file = tempfile.TemporaryFile(prefix="logdoctor-", buffering=0)  # noqa: SIM115
            except OSError:
                self._no_file = True
        return self._file is not None

    def read(self, offset: int, length: int) -> bytes:
        assert self._file is not None
        return os.pread(self._file.fileno(), length, offset)


def _pack(items: object, spool: _Spool) -> _Batch:
    return spool.keep(zlib.compress(pickle.dumps(items, pickle.HIGHEST_PROTOCOL), 1))  # level 1: the fastest


def _blob(batch: _Batch) -> bytes:
    return batch if isinstance(batch, bytes) else batch.read()


def _unpack(batch: _Batch) -> Any:
    data = _blob(batch)
    # Only bytes `_pack` made in this process (or in its forked parse workers, `adopt`) are unpickled: input never
    # reaches here as a pickle.
    return pickle.loads(zlib.decompress(data))  # noqa: S301


def _stored(batches: Sequence[_Batch]) -> tuple[int, int]:
    """(bytes in memory, bytes on disk) of some batches."""
    disk = sum(b.length for b in batches if isinstance(b, _OnDisk))
    return sum(len(b) for b in batches if isinstance(b, bytes)), disk


class EventLog(Sequence[EventBase]):
    """An append-only, re-iterable sequence of events held compressed: `append`/`extend` while parsing, then
    iterate as often as needed (each pass decodes the batches again, about 20 us an event). Indexing decodes the
    batch that holds the event: fine for `log[0]`, slow in a loop.

        log = EventLog(stream)           # parse once
        engines = {e.engine for e in log}
        profile = build_profile(log)     # a second pass over the same events
    """

    __slots__ = ("_batches", "_count", "_ends", "_pending", "_spool")

    def __init__(self, events: Iterable[EventBase] = ()) -> None:
        self._spool = _Spool()
        self._batches: list[_Batch] = []
        self._ends: list[int] = []  # events in the sealed batches up to and including each one
        self._pending: list[EventBase] = []
        self._count = 0
        self.extend(events)

    def append(self, event: EventBase) -> None:
        self._pending.append(event)
        self._count += 1
        if len(self._pending) >= _BATCH:
            self._seal()

    def extend(self, events: Iterable[EventBase]) -> None:
        if isinstance(events, EventLog):
            self._seal()
            events._seal()
            base = self._count
            self._batches.extend(events._batches)  # shared, not copied: a batch is never written again
            self._ends.extend(base + end for end in events._ends)
            self._count += events._count
            return
        for event in events:
            self.append(event)

    def _seal(self) -> None:
        if self._pending:
            self._batches.append(_pack(self._pending, self._spool))
            self._ends.append(self._count)
            self._pending = []

    def __iter__(self) -> Iterator[EventBase]:
        for batch in list(self._batches):
            events: list[EventBase] = _unpack(batch)
            yield from events
        yield from list(self._pending)

    @overload
    def __getitem__(self, index: int) -> EventBase: ...

    @overload
    def __getitem__(self, index: slice) -> list[EventBase]: ...

    def __getitem__(self, index: int | slice) -> EventBase | list[EventBase]:
        if isinstance(index, slice):
            return list(self)[index]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("EventLog index out of range")
        sealed = self._ends[-1] if self._ends else 0
        if index >= sealed:
            return self._pending[index - sealed]
        i = bisect_right(self._ends, index)
        start = self._ends[i - 1] if i else 0
        events: list[EventBase] = _unpack(self._batches[i])
        return events[index - start]

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    def __reduce__(self) -> tuple[object, ...]:  # to another process: the events, not this one's temporary file
        return (EventLog, (list(self),))

    def batches(self) -> list[tuple[bytes, int]]:
        """The compressed batches and the events in each, for `adopt` in another process of this logdoctor (a parse
        worker's events reach its parent without being decoded and encoded again)."""
        self._seal()
        starts = [0, *self._ends[:-1]]
        return [(_blob(b), end - start) for b, start, end in zip(self._batches, starts, self._ends, strict=True)]

    def adopt(self, blob: bytes, count: int) -> None:
        """Append a batch `batches` gave, as it is (kept in memory or spilled under this log's budget)."""
        self._seal()
        self._batches.append(self._spool.keep(blob))
        self._count += count
        self._ends.append(self._count)

    def __repr__(self) -> str:
        memory, disk = _stored(self._batches)
        return f"EventLog({self._count} events, compressed {memory} bytes in memory, {disk} on disk)"


class LineTexts:
    """The redacted text of the lines that gave events (the evidence a finding quotes), by line number, held
    compressed in batches of consecutive lines; lines are added in ascending order, as a source is read."""

    __slots__ = ("_batches", "_pending", "_ranges", "_recent", "_spool")

    def __init__(self) -> None:
        self._spool = _Spool()
        self._ranges: list[tuple[int, int]] = []  # the first and last line number of each sealed batch
        self._batches: list[_Batch] = []
        self._pending: dict[int, str] = {}
        self._recent: tuple[int, dict[int, str]] | None = None  # the batch decoded last (evidence clusters)

    def __setitem__(self, number: int, text: str) -> None:
        self._pending[number] = text
        if len(self._pending) >= _BATCH:
            self._seal()

    def _seal(self) -> None:
        if self._pending:
            self._ranges.append((min(self._pending), max(self._pending)))
            self._batches.append(_pack(self._pending, self._spool))
            self._pending = {}

    def items(self) -> Iterator[tuple[int, str]]:
        """(line number, text) in the order they were added (a worker's texts sent to the parent as a dict)."""
        for batch in self._batches:
            yield from _unpack(batch).items()
        yield from list(self._pending.items())

    def batches(self) -> list[tuple[bytes, tuple[int, int]]]:
        """The compressed batches and the first and last line number in each, for `adopt` (as EventLog.batches)."""
        self._seal()
        return [(_blob(b), span) for b, span in zip(self._batches, self._ranges, strict=True)]

    def adopt(self, blob: bytes, span: tuple[int, int]) -> None:
        """Append a batch `batches` gave, of lines after those held."""
        self._seal()
        self._ranges.append(span)
        self._batches.append(self._spool.keep(blob))

    def copy(self) -> LineTexts:
        """A twin that can go on being added to without changing this one (sealed batches are shared: they never
        change, and the spool only ever appends)."""
        twin = LineTexts.__new__(LineTexts)
        twin._spool, twin._ranges, twin._batches = self._spool, list(self._ranges), list(self._batches)
        twin._pending, twin._recent = dict(self._pending), None
        return twin

    def get(self, number: int, default: str | None = None) -> str | None:
        """The text of a line, newest first: a line rejoined after a terminal wrap is stored again under its first
        number once the next line was read, possibly in a later batch."""
        if number in self._pending:
            return self._pending[number]
        for i in range(len(self._batches) - 1, -1, -1):
            first, last = self._ranges[i]
            if not first <= number <= last:
                continue
            if self._recent is None or self._recent[0] != i:
                self._recent = (i, _unpack(self._batches[i]))
            text = self._recent[1].get(number)
            if text is not None:
                return text
        return default

    def __contains__(self, number: object) -> bool:
        return isinstance(number, int) and self.get(number) is not None

    def __len__(self) -> int:
        return len(self._pending) + len(self._batches) * _BATCH  # an upper bound once sealed: for reprs

    def __repr__(self) -> str:
        memory, disk = _stored(self._batches)
        pending = len(self._pending)
        return f"LineTexts({len(self._batches)} batches: {memory} bytes in memory, {disk} on disk; {pending} more)"
