"""Local files: the numbered format written by `diagnose --save` reads back with the remote numbers."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from logdoctor.sources.local import NUMBERED_HEADER, open_local

HIT = "(APIServer pid=1) INFO 04-09 11:27:10 [loggers.py:259] Engine 000: Avg prompt throughput: 1.0 tokens/s"
KW = ["Avg prompt throughput:"]


def numbered_text() -> str:
    return f"{NUMBERED_HEADER.decode()}\n#logdoctor-skipped 3 300\n17:{HIT}\n9000:{HIT}: with: colons\n"


@pytest.mark.parametrize("prefilter", [False, True])
def test_numbered_file(tmp_path: Path, prefilter: bool) -> None:
    path = tmp_path / "saved.log"
    path.write_text(numbered_text())
    source = open_local(str(path))
    assert source.numbered
    assert list(source.lines(KW, prefilter=prefilter)) == [(17, HIT), (9000, f"{HIT}: with: colons")]


def test_numbered_gzip_file(tmp_path: Path) -> None:
    path = tmp_path / "saved.log.gz"
    with gzip.open(path, "wt") as fh:
        fh.write(numbered_text())
    source = open_local(str(path))
    assert source.numbered and source.gzipped
    assert [n for n, _ in source.lines(KW)] == [17, 9000]


def test_a_plain_log_is_not_numbered(tmp_path: Path) -> None:
    path = tmp_path / "plain.log"
    path.write_text(f"#logdoctor-numbered-lines v1 is just text here\n12:{HIT}\n")
    source = open_local(str(path))
    assert not source.numbered
    assert list(source.lines(KW))[1] == (2, f"12:{HIT}")
