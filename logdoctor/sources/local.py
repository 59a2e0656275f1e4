"""Local files (plain or gzip) and stdin as numbered text lines.

Small inputs are read line by line in Python, so every line reaches the parser (terminal-wrapped
pastes can be rejoined, unrecognised lines counted). Files of `PREFILTER_MIN_BYTES` or more are
prefiltered by `LC_ALL=C grep -n -E` on the caller's keywords (one escaped alternation, see
`ere_alternation`): it selects the lines the SSH collector's remote grep selects on a host, and
it is the reason `logdoctor parse` keeps pace with grep on gigabyte logs.

Every read is bounded (`ReadLimits`, docs/security.md): a line longer than `MAX_LINE_BYTES` is skipped
in bounded memory with a note (grep runs under a memory limit; when a line breaks it, the file is read
again in Python), a gzip may not decompress past `--max-read` nor beyond `--max-gzip-ratio` times its
size, and a pipe, FIFO or stdin that sends nothing for `--input-timeout` seconds, or an input still
being read after `--max-seconds`, stops with a one-line error. CR-only line endings are lines.

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
import resource
import shutil
import signal
import stat as stat_module
import subprocess
import sys
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from logdoctor.errors import InputError
from logdoctor.sources.encoding import Utf16File, utf16_bom

# Re-exported: the caps live apart so that the CLI's flags import no reader.
from logdoctor.sources.limits import DEFAULT_MAX_GZIP_RATIO as DEFAULT_MAX_GZIP_RATIO
from logdoctor.sources.limits import DEFAULT_MAX_READ as DEFAULT_MAX_READ
from logdoctor.sources.limits import DEFAULT_MAX_SECONDS as DEFAULT_MAX_SECONDS
from logdoctor.sources.limits import DEFAULT_READ_TIMEOUT as DEFAULT_READ_TIMEOUT
from logdoctor.sources.limits import ReadLimits as ReadLimits
from logdoctor.sources.limits import raise_on_termination as raise_on_termination
from logdoctor.sources.readers import (
    _CHUNK,
    _LINE_WEIGHT,
    BufferedFile,
    ChunkReader,
    CrFile,
    _cr_only,
    _Inflater,
    _Readable,
    iter_binary_lines,
    polling_reader,
)
from logdoctor.sources.readers import MAX_LINE_BYTES as MAX_LINE_BYTES
from logdoctor.sources.readers import decode as decode

PREFILTER_MIN_BYTES = 32 * 1024 * 1024
PREFILTER_PART_BYTES = 16 * 1024 * 1024  # the prefilter is split over the CPUs in ranges of at least this
# Four greps already outrun the parser behind them (docs/benchmarks.md, *Parallel prefilter*), and each range
# adds a grep (8 MiB for the keyword DFA), two `head` and a `wc`: more would only add memory.
PREFILTER_MAX_PARTS = 4
# A file parsed in worker processes (logdoctor.pipeline.parallel) is cut in ranges of at most PARSE_RANGE_BYTES, at
# most PARSE_MAX_PARTS of them (a worker that finishes early takes the next). Small ranges matter for an event-dense
# file (every line a stats line): a range's periodic series are summed up in its worker only while each stays under
# the series cap (65,536 values; 2 MiB is at most ~16,000 lines of 128 bytes), else the parent decodes every event
# itself, and the parent merges the ranges that are in while the workers parse the rest (docs/benchmarks.md, *Parse
# ranges*).
PARSE_MAX_PARTS = 64
PARSE_RANGE_BYTES = 2 * 1024 * 1024
PARTS_VARIABLE = "LOGDOCTOR_PREFILTER_PARTS"  # a number of ranges in place of the CPU count (1: one grep)
_ERE_SPECIAL = re.compile(r"([.\[\]()*+?{}|^$\\])")
_GZIP_MAGIC = b"\x1f\x8b"
NUMBERED_HEADER = b"#logdoctor-numbered-lines v1"
GZIP_RATIO_FLOOR = 4 * 1024 * 1024  # the ratio is checked once this much has been decompressed
GREP_MEMORY_LIMIT = 256 * 1024 * 1024  # address space of the prefilter's grep (a NUL hole is one huge line)
_NOTES_SHOWN = 5  # over-long lines noted one by one; the rest are counted


class Along(str):
    """A keyword that selects a line only where the line also holds `companion` (an SGLang warning word, `slow`,
    counts only on a line with a date `[20...`): a `grep -F` of the plain keywords still selects every such line,
    and `ere_alternation` leaves out the ones without the companion (a prompt that says "slow")."""

    companion: str

    def __new__(cls, keyword: str, companion: str) -> Along:
        along = super().__new__(cls, keyword)
        along.companion = companion
        return along

    def __reduce__(self) -> tuple[type[Along], tuple[str, str]]:
        return (Along, (str(self), self.companion))


def _ere_escape(text: str) -> str:
    return _ERE_SPECIAL.sub(r"\\\1", text)


def ere_alternation(keywords: Sequence[str]) -> str:
    """The keywords as one POSIX ERE, `kw1|kw2|...`, special characters escaped: the prefilter's pattern.

    It selects exactly the lines `grep -F -f KEYWORDS` selects, several times faster once there are
    hundreds of keywords: GNU grep runs a single alternation through its DFA at a steady speed, while
    many `-F` patterns (or `-E` patterns one a line) go to a keyword-set search that slows down as
    the set grows (measured in docs/benchmarks.md). A newline separates patterns for `grep -f`, so it
    separates alternatives here too. An `Along` keyword selects a line only together with its companion
    (`C.*(a|b)|(a|b).*C`), so it selects fewer lines than `grep -F` does, never more.
    """
    plain = [piece for keyword in keywords if not isinstance(keyword, Along) for piece in keyword.split("\n")]
    along: dict[str, list[str]] = {}
    for keyword in keywords:
        if isinstance(keyword, Along):
            along.setdefault(keyword.companion, []).extend(keyword.split("\n"))
    pieces = [_ere_escape(piece) for piece in plain]
    for companion, words in along.items():
        either = "(" + "|".join(_ere_escape(word) for word in words) + ")"
        pieces += [f"{_ere_escape(companion)}.*{either}", f"{either}.*{_ere_escape(companion)}"]
    return "|".join(pieces)


def _grep_preexec() -> None:
    """In the prefilter's grep: a memory cap (a 4 GiB NUL hole is one line grep would hold whole)."""
    resource.setrlimit(resource.RLIMIT_AS, (GREP_MEMORY_LIMIT, GREP_MEMORY_LIMIT))


def _size(n: float) -> str:
    for unit, scale in (("G", 1024**3), ("M", 1024**2), ("K", 1024)):
        if n >= scale:
            return f"{n / scale:.1f}{unit}"
    return f"{int(n)}"


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
    pipe: bool = False  # a FIFO: read without sniffing, with the read timeout
    cr_only: bool = False  # lines end with CR alone
    utf16: bool = False  # a UTF-16 file (BOM first): read through sources/encoding.Utf16File, no grep prefilter
    limits: ReadLimits = field(default_factory=ReadLimits)
    notes: list[str] = field(default_factory=list)  # what was skipped (over-long lines), for the report
    _long_lines: int = 0
    _started: float = 0.0

    @property
    def name(self) -> str:
        return "<stdin>" if self.kind == "stdin" else self.path

    def lines(
        self, keywords: Sequence[str] | None = None, *, prefilter: bool | None = None
    ) -> Iterator[tuple[int, str]]:
        self._started = time.monotonic()
        if self.kind == "stdin":
            reader, compressed = self._stdin_reader()
            try:
                yield from self._python_lines(reader, compressed)
            except (OSError, EOFError, zlib.error) as exc:
                raise InputError(f"<stdin>: read failed after {self.bytes_read} bytes: damaged gzip: {exc}") from exc
            return
        if self.pipe:
            fd = self._open_fd(os.O_RDONLY | os.O_NONBLOCK)
            try:
                yield from self._python_lines(ChunkReader(polling_reader(fd, self.path, self.limits.read_timeout)))
            finally:
                os.close(fd)
            return
        if not self.gzipped and self.size > self.limits.max_bytes:
            raise InputError(
                f"{self.path}: {_size(self.size)}, over --max-read {_size(self.limits.max_bytes)} "
                "(raise --max-read to read it)"
            )
        use_grep = (
            keywords
            and not self.cr_only
            and not self.utf16
            and shutil.which("grep") is not None
            and (prefilter if prefilter is not None else self.size >= PREFILTER_MIN_BYTES)
        )
        if use_grep and keywords:
            yield from self._grep_or_python(keywords)
            return
        yield from self._file_lines()

    def _open_fd(self, flags: int) -> int:
        try:
            return os.open(self.path, flags)
        except OSError as exc:
            raise InputError(f"{self.path}: cannot read: {exc.strerror or exc}") from exc

    def _file_lines(self, after: int = 0) -> Iterator[tuple[int, str]]:
        """The whole file read in Python (lines numbered `after` or lower skipped: the grep fallback's restart)."""
        try:
            raw = open(self.path, "rb")  # noqa: SIM115 - closed below, after the gzip reader on top of it
        except OSError as exc:
            raise InputError(f"{self.path}: cannot read: {exc.strerror or exc}") from exc
        with raw:
            handle: IO[bytes] = gzip.GzipFile(fileobj=raw, mode="rb") if self.gzipped else raw  # type: ignore[assignment]
            stream: _Readable = (
                Utf16File(handle) if self.utf16 else CrFile(handle) if self.cr_only else BufferedFile(handle)
            )
            compressed = raw.tell if self.gzipped else None  # compressed bytes consumed (a little read ahead)
            try:
                for item in self._python_lines(stream, compressed):
                    if item[0] > after:
                        yield item
            except (OSError, EOFError, zlib.error) as exc:
                what = "damaged gzip: " if self.gzipped else ""
                raise InputError(f"{self.path}: read failed after {self.bytes_read} bytes: {what}{exc}") from exc
            finally:
                if handle is not raw:
                    handle.close()

    def _stdin_reader(self) -> tuple[_Readable, Callable[[], int] | None]:
        """The reader of stdin, and for a gzip stream (`zcat`-less `cat vllm.log.gz | logdoctor diagnose -`)
        the count of compressed bytes consumed, for the `--max-gzip-ratio` check."""
        stdin = sys.stdin.buffer
        try:
            mode = os.fstat(stdin.fileno()).st_mode
            if stdin.isatty():
                return stdin, None  # a paste: no timeout, ends with Ctrl-D
        except (OSError, ValueError, AttributeError):
            return stdin, None  # not a real file (a test harness's stdin)
        if stat_module.S_ISREG(mode):
            peek = getattr(stdin, "peek", None)
            head = peek(_CHUNK)[:_CHUNK] if peek is not None else b""
            if head[:2] == _GZIP_MAGIC:
                self.gzipped = True
                return BufferedFile(gzip.GzipFile(fileobj=stdin, mode="rb")), stdin.tell  # type: ignore[arg-type]
            self.cr_only = _cr_only(head)
            return (CrFile(stdin) if self.cr_only else BufferedFile(stdin)), None
        read_chunk = polling_reader(stdin.fileno(), "<stdin>", self.limits.read_timeout)
        first = read_chunk()
        if first[:2] == _GZIP_MAGIC:
            self.gzipped = True
            inflate = _Inflater(read_chunk, first)
            return ChunkReader(inflate.read), inflate.consumed
        self.cr_only = _cr_only(first)
        return ChunkReader(read_chunk, translate_cr=self.cr_only, first=first), None

    def _check(self, counter: list[int], compressed: Callable[[], int] | None, weight: int = 0) -> None:
        """The caps, every MiB or so read: total bytes, time, and a gzip's decompression ratio (of `weight`)."""
        limits = self.limits
        if counter[0] > limits.max_bytes:
            raise InputError(
                f"{self.name}: stopped after {_size(counter[0])} read: over --max-read {_size(limits.max_bytes)} "
                "(raise --max-read to read more)"
            )
        if limits.max_seconds > 0 and time.monotonic() - self._started > limits.max_seconds:
            raise InputError(
                f"{self.name}: stopped after {limits.max_seconds:g} s reading ({_size(counter[0])}): over "
                "--max-seconds (raise it to read longer)"
            )
        if compressed is not None and weight > GZIP_RATIO_FLOOR:
            packed = max(compressed(), 1)
            if weight > limits.max_gzip_ratio * packed:
                lines = (weight - counter[0]) // _LINE_WEIGHT
                raise InputError(
                    f"{self.name}: stopped: {_size(packed)} of gzip decompressed to {_size(counter[0])} in {lines:,} "
                    f"lines so far, over --max-gzip-ratio {limits.max_gzip_ratio:g} (each line counts as at least "
                    f"{_LINE_WEIGHT} bytes; a gzip bomb? raise it to read on)"
                )

    def _note_long(self, number: int, length: int) -> None:
        self._long_lines += 1
        if self._long_lines <= _NOTES_SHOWN:
            self.notes.append(
                f"line {number}: {_size(length)} long, over the {_size(MAX_LINE_BYTES)} line cap: "
                "only its first 1.0M was read"
            )
        elif self._long_lines == _NOTES_SHOWN + 1:
            self.notes.append("more over-long lines: only the first 1.0M of each was read")

    def _python_lines(
        self, stream: _Readable, compressed: Callable[[], int] | None = None
    ) -> Iterator[tuple[int, str]]:
        counter = [0]

        def check(weight: int) -> None:
            self._check(counter, compressed, weight)

        try:
            items = iter_binary_lines(stream, counter, self._note_long, check)
            for item in renumber(items) if self.numbered else items:
                self.bytes_read = counter[0]
                yield item
        finally:
            self.bytes_read = counter[0]

    def _grep_or_python(self, keywords: Sequence[str]) -> Iterator[tuple[int, str]]:
        """The grep prefilter; when a line is too long for grep's memory cap, the rest is read in Python."""
        last = 0
        grep_ok = False
        for item in self._grep_lines(keywords):
            if item[0] < 0:  # grep ran out of memory: the marker
                break
            last = item[0]
            yield item
        else:
            grep_ok = True
        if grep_ok:
            return
        self.prefiltered = False
        self.total_lines = None
        self.notes.append(
            f"a line too long for the prefilter (over {_size(GREP_MEMORY_LIMIT)}): the file was read without it"
        )
        yield from self._file_lines(after=last)

    def _grep_lines(self, keywords: Sequence[str]) -> Iterator[tuple[int, str]]:
        """`grep -n -E -e ALTERNATION` (through `gzip -dc | head -c CAP` for .gz); yields the matching lines with their
        numbers, then `(-1, "")` if grep ran out of memory (a line longer than its cap).

        The pattern is an argument, not a file: nothing is left behind when logdoctor is killed."""
        self.prefiltered = True
        # A numbered file already carries the original numbers: grep without -n, take them from the text.
        number_flag = [] if self.numbered else ["-n"]
        pattern = ere_alternation(keywords)
        env = {**os.environ, "LC_ALL": "C"}
        grep_args = ["grep", "-a", *number_flag, "-E", "-e", pattern]
        if not self.gzipped and not self.numbered:
            ranges = split_at_lines(self.path, self.size, prefilter_parts(self.size))
            if len(ranges) > 1:
                yield from self._grep_ranges(grep_args, env, ranges)
                return
        procs: list[subprocess.Popen[bytes]] = []
        cap = min(self.limits.max_bytes, max(GZIP_RATIO_FLOOR, int(self.limits.max_gzip_ratio * self.size)))
        try:
            # Count the physical lines on the other core while grep filters.
            wc = (
                None
                if self.gzipped or self.numbered
                else subprocess.Popen(["wc", "-l", "--", self.path], stdout=subprocess.PIPE, env=env)
            )
            if wc is not None:
                procs.append(wc)
            unzip = head = None
            if self.gzipped:
                unzip = subprocess.Popen(
                    ["gzip", "-dc", "--", self.path], stdout=subprocess.PIPE, stderr=subprocess.PIPE
                )
                procs.append(unzip)
                head = subprocess.Popen(["head", "-c", str(cap)], stdin=unzip.stdout, stdout=subprocess.PIPE)
                procs.append(head)
                assert unzip.stdout is not None
                unzip.stdout.close()
                grep = subprocess.Popen(
                    grep_args,
                    stdin=head.stdout,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=env,
                    preexec_fn=_grep_preexec,  # setrlimit only: takes no lock
                )
                assert head.stdout is not None
                head.stdout.close()
            else:
                grep = subprocess.Popen(
                    [*grep_args, "--", self.path],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=env,
                    preexec_fn=_grep_preexec,  # setrlimit only: takes no lock
                )
            procs.append(grep)
            assert grep.stdout is not None
            yield from self._matches(grep.stdout)
            exhausted, problem = _grep_ended(grep)
            if exhausted:
                yield -1, ""
                return
            if unzip is not None:
                unzip.wait()
                assert unzip.stderr is not None
                unzip_problem = unzip.stderr.read().decode("utf-8", "replace").strip()
                if unzip.returncode == -signal.SIGPIPE:
                    raise InputError(
                        f"{self.path}: stopped after {_size(cap)} decompressed: over --max-read "
                        f"{_size(self.limits.max_bytes)} or --max-gzip-ratio {self.limits.max_gzip_ratio:g} "
                        "(a gzip bomb? raise them to read on)"
                    )
                if unzip.returncode != 0:
                    raise InputError(
                        f"{self.path}: damaged gzip: {unzip_problem.splitlines()[-1:] or unzip.returncode}"
                    )
            self._check_grep(grep, problem)
            self.bytes_read = self.size
            if wc is not None:
                out, _ = wc.communicate()
                first = out.split()[:1]
                self.total_lines = int(first[0]) if first and first[0].isdigit() else None
        finally:
            _reap(procs)

    def _grep_ranges(
        self, grep_args: list[str], env: dict[str, str], ranges: list[tuple[int, int]]
    ) -> Iterator[tuple[int, str]]:
        """The prefilter split over the CPUs: one `head -c LEN | grep -n` a byte range (ranges cut at line
        ends, `split_at_lines`), and one `head -c LEN | wc -l` a range but the last, for the line numbers
        the range starts at. The first range's matches are read as grep writes them (parsing starts at
        once); the others' go to unlinked temporary files, read back in order once the range before is
        done, so the lines come out in file order and numbered as one grep numbers them. Yields what
        `_grep_lines` yields, the out-of-memory marker included (a range whose line is too long for grep)."""
        import tempfile

        procs: list[subprocess.Popen[bytes]] = []
        outputs: list[IO[bytes]] = []  # the spilled matches of ranges 1, 2, ...
        fds: list[int] = []

        def from_offset(start: int) -> int:
            fd = self._open_fd(os.O_RDONLY)
            fds.append(fd)
            os.lseek(fd, start, os.SEEK_SET)
            return fd

        def head(start: int, length: int) -> subprocess.Popen[bytes]:
            proc = subprocess.Popen(["head", "-c", str(length)], stdin=from_offset(start), stdout=subprocess.PIPE)
            procs.append(proc)
            return proc

        try:
            greps: list[subprocess.Popen[bytes]] = []
            counts: list[subprocess.Popen[bytes]] = []
            last = len(ranges) - 1
            for index, (start, end) in enumerate(ranges):
                # The last range runs to the end of the file: grep reads it straight, with no head.
                feeder = head(start, end - start) if index < last else None
                stdin = feeder.stdout if feeder is not None else from_offset(start)
                if index == 0:
                    stdout: IO[bytes] | int = subprocess.PIPE
                else:
                    spill = tempfile.TemporaryFile(prefix="logdoctor-prefilter-")  # noqa: SIM115 - closed below
                    outputs.append(spill)
                    stdout = spill
                grep = subprocess.Popen(
                    grep_args,
                    stdin=stdin,
                    stdout=stdout,
                    stderr=subprocess.PIPE,
                    env=env,
                    preexec_fn=_grep_preexec,  # setrlimit only: takes no lock
                )
                procs.append(grep)
                greps.append(grep)
                if feeder is not None and feeder.stdout is not None:
                    feeder.stdout.close()
                counter = head(start, end - start) if index < last else None
                wc = subprocess.Popen(
                    ["wc", "-l"],
                    stdin=counter.stdout if counter is not None else from_offset(start),
                    stdout=subprocess.PIPE,
                    env=env,
                )
                procs.append(wc)
                counts.append(wc)
                if counter is not None and counter.stdout is not None:
                    counter.stdout.close()
            for fd in fds:
                os.close(fd)
            fds.clear()
            offset = 0
            for index, grep in enumerate(greps):
                if index == 0:
                    assert grep.stdout is not None
                    stream: _Readable = grep.stdout
                else:
                    grep.wait()
                    outputs[index - 1].seek(0)
                    stream = BufferedFile(outputs[index - 1])
                yield from self._matches(stream, offset)
                exhausted, problem = _grep_ended(grep)
                if exhausted:
                    yield -1, ""
                    return
                self._check_grep(grep, problem)
                out, _ = counts[index].communicate()
                first = out.split()[:1]
                if not (first and first[0].isdigit()):
                    raise InputError(f"{self.path}: the prefilter's line count failed ({out[:80]!r})")
                offset += int(first[0])
            self.bytes_read = self.size
            self.total_lines = offset  # the sum of the ranges' `wc -l`: the file's
        finally:
            for fd in fds:
                os.close(fd)
            _reap(procs)
            for output in outputs:
                output.close()

    def _matches(self, stream: _Readable, offset: Callable[[], int] | int = 0) -> Iterator[tuple[int, str]]:
        """A prefilter grep's `-n` output as (its line number + `offset`, text), --max-seconds checked every 1024
        lines. A callable `offset` is asked once, when the first line arrives (grep may start before it is known)."""
        first = offset if isinstance(offset, int) else None
        for seen, (_, raw) in enumerate(iter_binary_lines(stream), start=1):
            if first is None:
                assert callable(offset)
                first = offset()
            number, sep, text = raw.partition(":")
            if sep and number.isdigit():
                yield first + int(number), text
            if seen % 1024 == 0 and self.limits.max_seconds > 0:
                self._check([0], None)

    def _check_grep(self, grep: subprocess.Popen[bytes], problem: str) -> None:
        if grep.returncode not in (0, 1):
            raise InputError(f"{self.path}: grep prefilter failed (exit {grep.returncode}: {problem[:200]})")

    # -- the prefilter of one byte range, for a parse in worker processes (logdoctor.pipeline.parallel) -------------

    def parallel_ranges(self, parts: int | None = None) -> list[tuple[int, int]] | None:
        """The byte ranges (cut at line ends) in which this file can be prefiltered and parsed apart, a few a CPU
        (`parts`, or `LOGDOCTOR_PREFILTER_PARTS`, in place of the count), or None where it is read as a whole: stdin, a FIFO, gzip, a `--save`
        file, CR-only lines, no grep, under PREFILTER_MIN_BYTES, over --max-read, or one range."""
        if self.kind == "stdin" or self.pipe or self.gzipped or self.numbered or self.cr_only:
            return None
        if self.size < PREFILTER_MIN_BYTES or self.size > self.limits.max_bytes or shutil.which("grep") is None:
            return None
        if parts is None:
            given = os.environ.get(PARTS_VARIABLE, "").strip()
            parts = prefilter_parts(self.size) if given.isdigit() else parse_parts(self.size)
        ranges = split_at_lines(self.path, self.size, parts)
        return ranges if len(ranges) > 1 else None

    def count_range_lines(self, start: int, end: int) -> int:
        """Newlines in the bytes [start, end) (a range's line count: the line number the next one starts after)."""
        fd = self._open_fd(os.O_RDONLY)
        buffer = bytearray(4 << 20)  # read into one buffer: no new bytes object a block
        try:
            count = 0
            at = start
            while at < end:
                got = os.preadv(fd, [buffer], at)
                if got <= 0:
                    break
                got = min(got, end - at)
                count += buffer.count(10) if got == len(buffer) else buffer[:got].count(10)
                at += got
            return count
        finally:
            os.close(fd)

    def range_lines(
        self, keywords: Sequence[str], start: int, end: int, offset: Callable[[], int] | int = 0
    ) -> Iterator[tuple[int, str]]:
        """The prefilter of the bytes [start, end) of a plain file (cut at line ends): `head -c LEN | grep -a -n -E
        -e ALTERNATION`, grep reading straight from `start` when the range runs to the end. Each line is numbered
        as one grep over the whole file numbers it: its number in the range plus `offset` (the lines before the
        range; a function is called once, before the first line is given, so grep can start before it is known).
        Raises `PrefilterOverflow` when a line is too long for grep's memory cap; honours --max-seconds."""
        env = {**os.environ, "LC_ALL": "C"}
        grep_args = ["grep", "-a", "-n", "-E", "-e", ere_alternation(keywords)]
        procs: list[subprocess.Popen[bytes]] = []
        fd = self._open_fd(os.O_RDONLY)
        try:
            os.lseek(fd, start, os.SEEK_SET)
            stdin: int | IO[bytes] = fd
            if end < self.size:
                feeder = subprocess.Popen(["head", "-c", str(end - start)], stdin=fd, stdout=subprocess.PIPE)
                procs.append(feeder)
                assert feeder.stdout is not None
                stdin = feeder.stdout
            grep = subprocess.Popen(
                grep_args,
                stdin=stdin,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                preexec_fn=_grep_preexec,  # setrlimit only: takes no lock
            )
            procs.append(grep)
            os.close(fd)
            fd = -1
            if procs[0] is not grep and procs[0].stdout is not None:
                procs[0].stdout.close()
            assert grep.stdout is not None
            yield from self._matches(grep.stdout, offset)
            exhausted, problem = _grep_ended(grep)
            if exhausted:
                raise PrefilterOverflow(f"{self.path}: a line too long for the prefilter in bytes {start}-{end}")
            self._check_grep(grep, problem)
        finally:
            if fd >= 0:
                os.close(fd)
            _reap(procs)


class PrefilterOverflow(Exception):
    """A line of a byte range too long for the prefilter's grep (the whole file is then read as one)."""


def _grep_ended(grep: subprocess.Popen[bytes]) -> tuple[bool, str]:
    """A prefilter grep waited for: (whether its memory cap stopped it on a line too long, its stderr)."""
    grep.wait()
    assert grep.stderr is not None
    problem = grep.stderr.read().decode("utf-8", "replace").strip()
    return grep.returncode == 2 and "memory exhausted" in problem, problem


def usable_cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def prefilter_parts(size: int, most: int = PREFILTER_MAX_PARTS) -> int:
    """How many byte ranges the prefilter of a `size`-byte file is split into: one a usable CPU, each at
    least PREFILTER_PART_BYTES, at most `most`; `LOGDOCTOR_PREFILTER_PARTS=N` asks for N in place of the
    CPU count (docs/benchmarks.md, *Parallel prefilter*)."""
    given = os.environ.get(PARTS_VARIABLE, "").strip()
    if given.isdigit():
        return max(1, min(int(given), PARSE_MAX_PARTS, size // PREFILTER_PART_BYTES))
    return max(1, min(usable_cpus(), most, size // PREFILTER_PART_BYTES))


def parse_parts(size: int) -> int:
    """How many byte ranges a file parsed in worker processes is cut into: ranges of PARSE_RANGE_BYTES, at most
    PARSE_MAX_PARTS (a bigger file has bigger ranges)."""
    return max(1, min(PARSE_MAX_PARTS, -(-size // PARSE_RANGE_BYTES)))


def split_at_lines(path: str, size: int, parts: int) -> list[tuple[int, int]]:
    """`parts` byte ranges [start, end) covering the file, each cut just after a newline (a range that would
    start inside a line starts after it; a line longer than a range makes fewer ranges)."""
    if parts < 2 or size <= 0:
        return [(0, size)]
    cuts = [0]
    with open(path, "rb") as fh:
        for k in range(1, parts):
            at = max(size * k // parts, cuts[-1])
            fh.seek(at)
            while True:
                block = fh.read(_CHUNK)
                if not block:
                    at = size
                    break
                found = block.find(b"\n")
                if found >= 0:
                    at += found + 1
                    break
                at += len(block)
            if at >= size:
                break
            if at > cuts[-1]:
                cuts.append(at)
    return [(start, end) for start, end in zip(cuts, [*cuts[1:], size], strict=True) if end > start]


def renumber(items: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """`N:text` lines of a numbered file as (N, text); the header and `#` comment lines are skipped."""
    for _, raw in items:
        number, sep, text = raw.partition(":")
        if sep and number.isdigit():
            yield int(number), text


def _reap(procs: Sequence[subprocess.Popen[bytes]]) -> None:
    """Kill the prefilter's processes that still run (a cap or an error stopped the read) and close their pipes."""
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()


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


def open_local(path: str, limits: ReadLimits | None = None) -> LocalSource:
    """Check a path (or `-`) before any reading; raise InputError with one clear line if it is unusable."""
    limits = limits or ReadLimits()
    if path == "-":
        return LocalSource(path="-", kind="stdin", limits=limits)
    p = Path(path)
    try:
        mode = p.stat().st_mode
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if stat_module.S_ISDIR(mode):
        raise InputError(f"{path}: is a directory (give the log files inside it)")
    if stat_module.S_ISCHR(mode) or stat_module.S_ISBLK(mode) or stat_module.S_ISSOCK(mode):
        raise InputError(f"{path}: is a device or socket, not a log file (pipe it to `logdoctor ... -` to read it)")
    if not os.access(p, os.R_OK):
        raise InputError(f"{path}: permission denied")
    if stat_module.S_ISFIFO(mode):
        return LocalSource(path=path, pipe=True, limits=limits)  # reading it to sniff would consume and may block
    try:
        with open(p, "rb") as fh:
            head = fh.read(_CHUNK)
        gzipped = head[:2] == _GZIP_MAGIC
        if gzipped:
            with gzip.open(p, "rb") as gz:
                head = gz.read(_CHUNK)
        size = p.stat().st_size
    except (OSError, EOFError, zlib.error) as exc:
        what = "damaged gzip: " if isinstance(exc, zlib.error | EOFError | gzip.BadGzipFile) else ""
        raise InputError(f"{path}: cannot read: {what}{getattr(exc, 'strerror', None) or exc}") from exc
    numbered = head.startswith(NUMBERED_HEADER) and head[len(NUMBERED_HEADER) : len(NUMBERED_HEADER) + 1] in (
        b"\n",
        b"\r",
    )
    utf16 = utf16_bom(head)
    return LocalSource(
        path=path,
        size=size,
        gzipped=gzipped,
        numbered=numbered,
        cr_only=_cr_only(head) and not utf16,
        utf16=utf16,
        limits=limits,
    )
