"""UTF-16 logs (Windows PowerShell's `>`) are read as the same lines a UTF-8 copy gives."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from logdoctor.sources.encoding import utf16_bom
from logdoctor.sources.local import open_local

LINES = [
    "(EngineCore pid=208) INFO 06-17 11:30:47 [gpu_worker.py:480] Available KV cache memory: -2.14 GiB",
    "(EngineCore pid=208) ERROR 06-17 11:30:47 [core.py:1195] EngineCore failed to start.",
    "naïve ünïcode ✓ line",
]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
@pytest.mark.parametrize("newline", ["\r\n", "\n"])
def test_a_utf16_file_reads_as_its_text(tmp_path: Path, encoding: str, newline: str) -> None:
    path = tmp_path / "vllm_log.txt"
    body = newline.join(LINES) + newline
    data = body.encode(encoding) if encoding == "utf-16" else b"\xfe\xff" + body.encode(encoding)
    path.write_bytes(data)
    source = open_local(str(path))
    assert source.utf16 and not source.cr_only
    assert [text for _, text in source.lines()] == LINES
    # the keyword prefilter (grep) cannot read UTF-16, so it is not used even when asked for
    assert [text for _, text in open_local(str(path)).lines(["EngineCore"], prefilter=True)] == LINES


def test_a_gzipped_utf16_file(tmp_path: Path) -> None:
    path = tmp_path / "vllm_log.txt.gz"
    path.write_bytes(gzip.compress("\r\n".join(LINES).encode("utf-16")))
    assert [text for _, text in open_local(str(path)).lines()] == LINES


def test_utf8_and_utf32_are_not_taken_for_utf16() -> None:
    assert not utf16_bom(b"INFO 06-17")
    assert not utf16_bom("\ufeffINFO".encode("utf-8"))
    assert not utf16_bom("INFO".encode("utf-32"))
    assert utf16_bom("INFO".encode("utf-16"))
    # two stray bytes that happen to be a BOM, then an ordinary UTF-8 log line
    assert not utf16_bom(b"\xff\xfe(APIServer pid=1) INFO 05-08 16:25:09 [loggers.py:271] Engine 000")
