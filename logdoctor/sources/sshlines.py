"""The numbered lines the SSH read scripts send: split, inflated when gzip'd, and their status markers read."""

from __future__ import annotations

import zlib
from collections.abc import Callable

from logdoctor.redact import Redactor
from logdoctor.sources.local import MAX_LINE_BYTES, decode
from logdoctor.sources.remote import CommandResult

GZIP_STREAM_MARKER = b"#logdoctor-gzip-stream"  # the read scripts' output after this line is gzip
# --- the numbered lines the read scripts send --------------------------------------------------------


class _LineReader:
    """Splits a byte stream into lines as it arrives (over-long lines are cut at MAX_LINE_BYTES).

    numbered=True: `N:text` lines from grep -n / awk, plus `#logdoctor-...` markers.
    numbered=False: plain output, numbered here from 1.
    """

    def __init__(self, numbered: bool, on_lines: Callable[[], None] | None = None) -> None:
        self.numbered = numbered
        self.on_lines = on_lines  # called after a chunk that completed at least one line
        self.lines: list[tuple[int, str]] = []
        self.size: int | None = None
        self.gzipped = False
        self.skipped_lines = 0
        self.skipped_bytes = 0
        self.error: str | None = None
        self.unexpected = 0
        self._partial = bytearray()
        self._overlong = False
        self._count = 0
        self._inflate: zlib._Decompress | None = None  # once the host said it sends gzip
        self.payload = 0  # bytes of (decompressed) output: what the --max-bytes budget counts
        self.sent: int | None = None  # lines the host's cap stage says it sent (`#logdoctor-sent N`)
        self.statuses: dict[str, int] = {}  # exit status of each stage of the host's pipeline
        self.stream_ended = True  # False: a gzip stream from the host stopped before its end
        self._redact = Redactor()  # also masks the body lines of a PEM private key, line by line
        self._last = 0  # number of the last line kept: a gap (grep skipped lines) ends a key's body

    def feed(self, data: bytes) -> None:
        before = len(self.lines)
        if self._inflate is not None:
            data = self._inflated(data)
        self._split(data)
        if self.on_lines is not None and len(self.lines) > before:
            self.on_lines()

    def _split(self, data: bytes) -> None:
        self.payload += len(data)
        start = 0
        while True:
            nl = data.find(b"\n", start)
            if nl < 0:
                self._append_partial(data[start:])
                return
            self._append_partial(data[start:nl])
            line = bytes(self._partial)
            self._partial.clear()
            self._overlong = False
            start = nl + 1
            if line == GZIP_STREAM_MARKER and self._inflate is None and self.numbered:
                # Everything after this line is one gzip stream (the host compresses what it sends).
                self._inflate = zlib.decompressobj(wbits=31)
                self._split(self._inflated(data[start:]))
                return
            self._emit(line)

    def _inflated(self, data: bytes | None) -> bytes:
        """`data` decompressed (None: what the decompressor still holds at the end); nothing once
        the stream proved damaged."""
        assert self._inflate is not None
        if self.error is not None:
            return b""
        try:
            return self._inflate.flush() if data is None else self._inflate.decompress(data)
        except zlib.error as exc:
            self.error = f"the compressed stream is damaged ({exc})"
            return b""

    def _append_partial(self, chunk: bytes) -> None:
        if self._overlong:
            return
        room = MAX_LINE_BYTES - len(self._partial)
        if len(chunk) > room:
            chunk = chunk[:room]
            self._overlong = True
        self._partial += chunk

    def close(self, cut: bool) -> None:
        """End of data; a last line without newline is kept unless the stream was cut mid-line."""
        if self._inflate is not None and not cut:
            self._split(self._inflated(None))
        if self._inflate is not None and not self._inflate.eof:
            self.stream_ended = False
        if self._partial and not cut:
            self._emit(bytes(self._partial))
        self._partial.clear()

    def _emit(self, raw: bytes) -> None:
        if not self.numbered:
            self._count += 1
            self.lines.append((self._count, self._redact(decode(raw))))
            return
        if raw.startswith(b"#logdoctor-"):
            self._marker(raw.decode("utf-8", "replace").strip())
            return
        number, sep, text = raw.partition(b":")
        if sep and number.isdigit():
            line_number = int(number)
            if line_number != self._last + 1:
                self._redact = Redactor()
            self._last = line_number
            self.lines.append((line_number, self._redact(decode(text))))
        else:
            self.unexpected += 1  # e.g. a login banner printed by the user's shell startup files

    def _marker(self, text: str) -> None:
        word, _, rest = text.partition(" ")
        if word == "#logdoctor-size":
            digits = rest.strip()
            self.size = int(digits) if digits.isdigit() else None
        elif word == "#logdoctor-gzip":
            self.gzipped = True
        elif word == "#logdoctor-skipped":
            parts = rest.split()
            if len(parts) == 2 and all(p.isdigit() for p in parts):
                self.skipped_lines, self.skipped_bytes = int(parts[0]), int(parts[1])
        elif word == "#logdoctor-error":
            self.error = rest.strip() or "error"
        elif word == "#logdoctor-sent":
            digits = rest.strip()
            self.sent = int(digits) if digits.isdigit() else None
        elif word == "#logdoctor-status":
            self.status_marker(rest)

    def status_marker(self, rest: str) -> None:
        """`#logdoctor-status STAGE N`: on stdout (grep) or on stderr (gzip -dc, docker logs, journalctl)."""
        stage, _, digits = rest.strip().partition(" ")
        if stage and digits.isdigit():
            self.statuses[stage] = int(digits)

    @property
    def stages_ok(self) -> bool:
        """Every stage of the host's pipeline that reported a status succeeded (grep: 1 = no match)."""
        return all(status == 0 or (stage == "grep" and status == 1) for stage, status in self.statuses.items())

    def incomplete(self, result: CommandResult, stderr: str) -> str:
        """Why the lines that arrived are not all the host's filter kept ("" when they are)."""
        if not result.complete:
            return result.incomplete_reason
        for line in stderr.splitlines():
            if line.startswith("#logdoctor-status "):
                self.status_marker(line.removeprefix("#logdoctor-status "))
        if self.error is not None:
            return self.error
        if not self.stream_ended:
            return "the compressed stream from the host stopped before its end"
        for stage, status in self.statuses.items():
            if status != 0 and not (stage == "grep" and status == 1):  # grep: 1 = no line matched
                why = " (out of memory on a line over 1 GiB, or an unreadable file)" if stage == "grep" else ""
                return f"{stage} on the host exited with status {status}{why}"
        if self.sent is None:
            return "the host's count of the lines it sent never arrived"
        if self.sent != len(self.lines):
            return f"the host sent {self.sent} lines, {len(self.lines)} arrived"
        return ""
