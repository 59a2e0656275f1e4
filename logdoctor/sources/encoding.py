"""Logs that are not UTF-8: a UTF-16 file (byte-order mark first) read as UTF-8 lines.

Windows PowerShell 5.1's `>` and `Out-File` write UTF-16LE with a BOM by default, so a vLLM log captured as
`docker logs vllm > vllm_log.txt` on Windows (WSL, Docker Desktop) reaches us as `FF FE` then two bytes a
character: read as UTF-8 every line is `W\x00A\x00R\x00N\x00...` and no keyword matches. The file is decoded
by its BOM and handed on as UTF-8 bytes, one line at a time, so the rest of the reader (line caps, numbering,
CR handling) is unchanged.
"""

from __future__ import annotations

import codecs
import io
from typing import IO

UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def utf16_bom(head: bytes) -> bool:
    """Whether a file's first bytes are a UTF-16 byte-order mark followed by UTF-16 text.

    `FF FE` alone is not enough: it is also two invalid UTF-8 bytes in front of an ordinary log (a damaged
    or concatenated file), and UTF-32's mark starts the same way. A log is almost all ASCII, so in UTF-16 at
    least half of its code units have a zero high byte; UTF-8 text after the mark has next to none."""
    if head[:2] not in UTF16_BOMS or head[:4] in (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE):
        return False
    body = head[2 : 2 + 4096]
    high = body[1::2] if head[:2] == codecs.BOM_UTF16_LE else body[0::2]
    return bool(high) and high.count(0) * 2 >= len(high)


class Utf16File:
    """`readline` over a UTF-16 binary stream that returns UTF-8 bytes (undecodable units become U+FFFD)."""

    def __init__(self, handle: IO[bytes]) -> None:
        # newline="": line ends are kept as written (CRLF from Windows), the caller strips them.
        self._text = io.TextIOWrapper(handle, encoding="utf-16", errors="replace", newline="")

    def readline(self, size: int = -1, /) -> bytes:
        return self._text.readline(size).encode("utf-8")
