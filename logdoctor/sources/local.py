"""Local files (plain or gzip) and stdin as numbered text lines.

Small inputs are read line by line in Python, so every line reaches the parser (terminal-wrapped
pastes can be rejoined, unrecognised lines counted). Files of `PREFILTER_MIN_BYTES` or more are
prefiltered by `LC_ALL=C grep -n -E` on the caller's keywords (one escaped alternation, see
`ere_alternation`): it selects the lines the SSH collector's `grep -F` selects on a remote host, and
it is the reason `logdoctor parse` keeps pace with grep on gigabyte logs.

A file saved by `diagnose --save` (the SSH collector's output) starts with `NUMBERED_HEADER` and holds
`N:text` lines: only the candidate lines, each with its number in the original remote log. Such a file
is read back with those numbers, so an offline rerun points at the same lines:

    #logdoctor-numbered-lines v1
    1042:(APIServer pid=1) INFO 05-08 16:25:09 [loggers.py:271] Engine 000: Avg prompt throughput: ...
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from logdoctor.errors import InputError

PREFILTER_MIN_BYTES = 32 * 1024 * 1024
_ERE_SPECIAL = re.compile(r"([.\[\]()*+?{}|^$\\])")
MAX_LINE_BYTES = 1024 * 1024  # longer lines are cut here (the rest of the line is skipped)
_GZIP_MAGIC = b"\x1f\x8b"
NUMBERED_HEADER = b"#logdoctor-numbered-lines v1"


def ere_alternation(keywords: Sequence[str]) -> str:
    """The keywords as one POSIX ERE, `kw1|kw2|...`, special characters escaped: the prefilter's pattern.

    It selects exactly the lines `grep -F -f KEYWORDS` selects, several times faster once there are
    hundreds of keywords: GNU grep runs a single alternation through its DFA at a steady speed, while
    many `-F` patterns (or `-E` patterns one a line) go to a keyword-set search that slows down as
    the set grows (measured in docs/benchmarks.md). A newline separates patterns for `grep -f`, so it
    separates alternatives here too.
    """
    pieces = [piece for keyword in keywords for piece in keyword.split("\n")]
    return "|".join(_ERE_SPECIAL.sub(r"\\\1", piece) for piece in pieces)


def decode(raw: bytes) -> str:
    return (
        raw.decode("utf-8", "replace").rstrip("\r\n")
        if raw.endswith((b"\n", b"\r"))
        else raw.decode("utf-8", "replace")
    )


def iter_binary_lines(stream: IO[bytes], counter: list[int] | None = None) -> Iterator[tuple[int, str]]:
    """Number and decode the lines of a binary stream; lines over MAX_LINE_BYTES are cut."""
    number = 0
    while True:
        raw = stream.readline(MAX_LINE_BYTES)
        if not raw:
            return
        if counter is not None:
            counter[0] += len(raw)
        if not raw.endswith(b"\n") and len(raw) >= MAX_LINE_BYTES:
            # Skip the rest of an over-long line without holding it in memory.
            while True:
                rest = stream.readline(MAX_LINE_BYTES)
                if counter is not None:
                    counter[0] += len(rest)
                if not rest or rest.endswith(b"\n"):
                    break
        number += 1
        yield number, decode(raw)


@dataclass
class LocalSource:
    """A file path or `-` for stdin."""

    path: str
    kind: str = "file"
    size: int = 0
    gzipped: bool = False
    bytes_read: int = 0
    prefiltered: bool = False
    total_lines: int | None = None  # physical lines, when a prefilter hid some of them
    numbered: bool = False  # a `--save` file: `N:text` lines after NUMBERED_HEADER

    @property
    def name(self) -> str:
        return "<stdin>" if self.kind == "stdin" else self.path

    def lines(
        self, keywords: Sequence[str] | None = None, *, prefilter: bool | None = None
    ) -> Iterator[tuple[int, str]]:
        if self.kind == "stdin":
            yield from self._python_lines(sys.stdin.buffer)
            return
        use_grep = (
            keywords
            and shutil.which("grep") is not None
            and (prefilter if prefilter is not None else self.size >= PREFILTER_MIN_BYTES)
        )
        if use_grep and keywords:
            yield from self._grep_lines(keywords)
            return
        try:
            handle: IO[bytes] = gzip.open(self.path, "rb") if self.gzipped else open(self.path, "rb")  # type: ignore[assignment]  # noqa: SIM115
        except OSError as exc:
            raise InputError(f"{self.path}: cannot read: {exc.strerror or exc}") from exc
        with handle:
            try:
                yield from self._python_lines(handle)
            except (OSError, EOFError, gzip.BadGzipFile) as exc:
                raise InputError(f"{self.path}: read failed after {self.bytes_read} bytes: {exc}") from exc

    def _python_lines(self, stream: IO[bytes]) -> Iterator[tuple[int, str]]:
        counter = [0]
        try:
            items = iter_binary_lines(stream, counter)
            for item in renumber(items) if self.numbered else items:
                self.bytes_read = counter[0]
                yield item
        finally:
            self.bytes_read = counter[0]

    def _grep_lines(self, keywords: Sequence[str]) -> Iterator[tuple[int, str]]:
        """`grep -n -E -f ALTERNATION` (through `gzip -dc` for .gz); yields the matching lines with their numbers."""
        self.prefiltered = True
        # A numbered file already carries the original numbers: grep without -n, take them from the text.
        number_flag = [] if self.numbered else ["-n"]
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".keywords", delete=False) as fh:
            fh.write(ere_alternation(keywords) + "\n")
            pattern_file = fh.name
        env = {**os.environ, "LC_ALL": "C"}
        # Count the physical lines on the other core while grep filters.
        wc = (
            None
            if self.gzipped or self.numbered
            else subprocess.Popen(["wc", "-l", "--", self.path], stdout=subprocess.PIPE, env=env)
        )
        try:
            if self.gzipped:
                unzip = subprocess.Popen(["gzip", "-dc", "--", self.path], stdout=subprocess.PIPE)
                grep = subprocess.Popen(
                    ["grep", "-a", *number_flag, "-E", "-f", pattern_file],
                    stdin=unzip.stdout,
                    stdout=subprocess.PIPE,
                    env=env,
                )
                assert unzip.stdout is not None
                unzip.stdout.close()
            else:
                unzip = None
                grep = subprocess.Popen(
                    ["grep", "-a", *number_flag, "-E", "-f", pattern_file, "--", self.path],
                    stdout=subprocess.PIPE,
                    env=env,
                )
            assert grep.stdout is not None
            for _, raw in iter_binary_lines(grep.stdout):
                number, sep, text = raw.partition(":")
                if sep and number.isdigit():
                    yield int(number), text
            grep.wait()
            if unzip is not None:
                unzip.wait()
            if grep.returncode not in (0, 1):
                raise InputError(f"{self.path}: grep prefilter failed (exit {grep.returncode})")
            self.bytes_read = self.size
            if wc is not None:
                out, _ = wc.communicate()
                first = out.split()[:1]
                self.total_lines = int(first[0]) if first and first[0].isdigit() else None
        finally:
            os.unlink(pattern_file)


def renumber(items: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """`N:text` lines of a numbered file as (N, text); the header and `#` comment lines are skipped."""
    for _, raw in items:
        number, sep, text = raw.partition(":")
        if sep and number.isdigit():
            yield int(number), text


def count_lines(path: str, gzipped: bool) -> int:
    """Physical line count of a prefiltered file (one more pass, at `wc -l` speed)."""
    opener = gzip.open if gzipped else open
    count = 0
    with opener(path, "rb") as fh:
        while True:
            block = fh.read(16 * 1024 * 1024)
            if not block:
                break
            count += block.count(b"\n")
    return count


def open_local(path: str) -> LocalSource:
    """Check a path (or `-`) before any reading; raise InputError with one clear line if it is unusable."""
    if path == "-":
        return LocalSource(path="-", kind="stdin")
    p = Path(path)
    if not p.exists():
        raise InputError(f"{path}: no such file")
    if p.is_dir():
        raise InputError(f"{path}: is a directory (give the log files inside it)")
    if not os.access(p, os.R_OK):
        raise InputError(f"{path}: permission denied")
    try:
        with open(p, "rb") as fh:
            head = fh.read(len(NUMBERED_HEADER) + 1)
        gzipped = head[:2] == _GZIP_MAGIC
        if gzipped:
            with gzip.open(p, "rb") as gz:
                head = gz.read(len(NUMBERED_HEADER) + 1)
        size = p.stat().st_size
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InputError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from exc
    numbered = head.startswith(NUMBERED_HEADER) and head[len(NUMBERED_HEADER) : len(NUMBERED_HEADER) + 1] in (
        b"\n",
        b"\r",
    )
    return LocalSource(path=path, size=size, gzipped=gzipped, numbered=numbered)
