"""Bytes into numbered lines, bounded: buffered files, chunked pipes and stdin, gzip streams, CR-only line ends,
and lines over `MAX_LINE_BYTES` skipped in bounded memory."""

from __future__ import annotations

import os
import select
import sys
import zlib
from collections.abc import Callable, Iterator
from typing import IO, Protocol

from logdoctor.errors import InputError

MAX_LINE_BYTES = 1024 * 1024  # longer lines are cut here (the rest of the line is skipped)
_CHECK_EVERY = 1024 * 1024  # bytes between checks of the time and ratio caps
_CHUNK = 64 * 1024
# For the gzip ratio a line weighs at least this many bytes: a gzip of empty lines (1000:1) costs the parser per
# line, not per byte, so it must trip the cap long before its bytes do.
_LINE_WEIGHT = 64


class _Readable(Protocol):
    def readline(self, size: int = -1, /) -> bytes: ...


def decode(raw: bytes) -> str:
    return (
        raw.decode("utf-8", "replace").rstrip("\r\n")
        if raw.endswith((b"\n", b"\r"))
        else raw.decode("utf-8", "replace")
    )


def iter_binary_lines(
    stream: _Readable,
    counter: list[int] | None = None,
    on_long: Callable[[int, int], None] | None = None,
    check: Callable[[int], None] | None = None,
) -> Iterator[tuple[int, str]]:
    """Number and decode the lines of a binary stream; lines over MAX_LINE_BYTES are cut.

    `on_long(number, length)` hears of each cut line once it has been skipped; `check(weight)` runs every
    `_CHECK_EVERY` bytes or so (the caps of `ReadLimits`: it raises to stop), `weight` being the bytes read
    with each line counted as at least `_LINE_WEIGHT` bytes."""
    number = 0
    checked = 0
    total = 0
    while True:
        raw = stream.readline(MAX_LINE_BYTES)
        if not raw:
            return
        total += len(raw)
        if counter is not None:
            counter[0] += len(raw)
        if not raw.endswith(b"\n") and len(raw) >= MAX_LINE_BYTES:
            # Skip the rest of an over-long line without holding it in memory (holes of a sparse file: at once).
            length = len(raw)
            while True:
                skipped = _skip_hole(stream)
                rest = stream.readline(MAX_LINE_BYTES)
                length += skipped + len(rest)
                total += skipped + len(rest)
                if counter is not None:
                    counter[0] += skipped + len(rest)
                if check is not None and total - checked >= _CHECK_EVERY:
                    checked = total
                    check(total + _LINE_WEIGHT * number)
                if not rest or rest.endswith(b"\n"):
                    break
            if on_long is not None:
                on_long(number + 1, length)
        number += 1
        if check is not None and total + _LINE_WEIGHT * number - checked >= _CHECK_EVERY:
            checked = total + _LINE_WEIGHT * number
            check(checked)
        yield number, decode(raw)


def _skip_hole(stream: _Readable) -> int:
    """Seek a plain file past the hole it is in (a copytruncate'd log's NULs hold no newline); bytes skipped."""
    if not isinstance(stream, BufferedFile):
        return 0
    return stream.skip_hole()


class BufferedFile:
    """A plain file read with `readline`, that can jump over the holes of a sparse file (SEEK_DATA)."""

    def __init__(self, handle: IO[bytes]) -> None:
        self._handle = handle

    def readline(self, size: int = -1, /) -> bytes:
        return self._handle.readline(size)

    def skip_hole(self) -> int:
        try:
            here = self._handle.tell()
            fd = self._handle.fileno()
            try:
                data = os.lseek(fd, here, os.SEEK_DATA)
            except OSError:  # ENXIO: only a hole (or nothing) up to the end
                data = os.fstat(fd).st_size
            if data <= here:
                return 0
            self._handle.seek(data)
            return data - here
        except (OSError, ValueError, AttributeError):
            return 0


class ChunkReader:
    """`readline` over a function that returns the next chunk (b"" at the end); with `translate_cr`, a lone CR
    ends a line too (CR-only files: `clean_physical` would otherwise keep only the last of their lines)."""

    def __init__(self, read_chunk: Callable[[], bytes], *, translate_cr: bool = False, first: bytes = b"") -> None:
        self._read_chunk = read_chunk
        self._cr = translate_cr
        self._buf = self._translate(first)
        self._pos = 0
        self._eof = False

    def _translate(self, chunk: bytes) -> bytes:
        return chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n") if self._cr else chunk

    def readline(self, size: int = -1, /) -> bytes:
        limit = size if size > 0 else sys.maxsize
        while True:
            end = self._buf.find(b"\n", self._pos, self._pos + limit)
            if end >= 0:
                line = self._buf[self._pos : end + 1]
                self._pos = end + 1
                return line
            if len(self._buf) - self._pos >= limit:
                line = self._buf[self._pos : self._pos + limit]
                self._pos += limit
                return line
            if self._eof:
                line = self._buf[self._pos :]
                self._buf, self._pos = b"", 0
                return line
            chunk = self._read_chunk()
            if not chunk:
                self._eof = True
                continue
            self._buf = self._buf[self._pos :] + self._translate(chunk)
            self._pos = 0


class _Inflater:
    """Chunks of a gzip stream read chunk by chunk (members one after another, like `gzip -dc`), at most
    1 MiB out a call so a bomb is checked before it grows."""

    def __init__(self, read_chunk: Callable[[], bytes], first: bytes) -> None:
        self._read_chunk = read_chunk
        self._z = zlib.decompressobj(wbits=31)
        self._pending = first
        self._packed = len(first)
        self._ended = False

    def consumed(self) -> int:
        return self._packed

    def read(self) -> bytes:
        while True:
            if not self._pending and not self._z.unconsumed_tail:
                if self._ended:
                    return b""
                chunk = self._read_chunk()
                if not chunk:
                    self._ended = True
                    if not self._z.eof and self._packed:
                        raise EOFError("the compressed stream ended before its end")
                    return self._z.flush()
                self._packed += len(chunk)
                self._pending = chunk
            data = self._z.unconsumed_tail + self._pending
            self._pending = b""
            out = self._z.decompress(data, 1 << 20)
            if self._z.eof and self._z.unused_data:  # the next member of a concatenated gzip
                rest = self._z.unused_data
                self._z = zlib.decompressobj(wbits=31)
                self._pending = rest
            if out:
                return out


class CrFile(ChunkReader):
    """`readline` of a plain (or gzip) file whose lines end with CR alone."""

    def __init__(self, handle: IO[bytes]) -> None:
        super().__init__(lambda: handle.read(_CHUNK), translate_cr=True)


def polling_reader(fd: int, name: str, idle: float) -> Callable[[], bytes]:
    """`os.read` of a pipe or FIFO that waits at most `idle` seconds (0: forever) for each chunk."""

    def read_chunk() -> bytes:
        while True:
            poller = select.poll()
            poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
            if not poller.poll(idle * 1000 if idle > 0 else None):
                raise InputError(
                    f"{name}: nothing arrived for {idle:g} s (a pipe or FIFO with no writer?); "
                    "--input-timeout SECONDS waits longer, 0 for ever"
                )
            try:
                return os.read(fd, _CHUNK)
            except BlockingIOError:
                continue

    return read_chunk


def _cr_only(head: bytes) -> bool:
    """Whether the first bytes of an input end their lines with CR alone (old Mac, some serial consoles)."""
    return b"\n" not in head and head.count(b"\r") >= 2
