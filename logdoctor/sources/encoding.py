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
    """Whether a file's first bytes are a UTF-16 byte-order mark (UTF-32's starts the same way: not that)."""
    return head[:2] in UTF16_BOMS and head[:4] not in (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)


class Utf16File:
    """`readline` over a UTF-16 binary stream that returns UTF-8 bytes (undecodable units become U+FFFD)."""

    def __init__(self, handle: IO[bytes]) -> None:
        # newline="": line ends are kept as written (CRLF from Windows), the caller strips them.
        self._text = io.TextIOWrapper(handle, encoding="utf-16", errors="replace", newline="")

    def readline(self, size: int = -1, /) -> bytes:
        return self._text.readline(size).encode("utf-8")
