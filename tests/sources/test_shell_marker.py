"""The end marker that splits one shared `sh -s` session's output into commands."""

from __future__ import annotations

import pytest

from logdoctor.sources.remote import _EndMarker

NONCE = b"0123abcd"
STREAM = b"line 1\nline 2 \0logdoctor-end-other:5\0 no trailing newline"
ENDED = STREAM + b"\0logdoctor-end-" + NONCE + b":17\0"


@pytest.mark.parametrize("size", [1, 2, 3, 7, 16, 1000])
def test_marker_is_found_whatever_the_chunks(size: int) -> None:
    marker = _EndMarker(NONCE)
    out = b"".join(marker.feed(ENDED[i : i + size]) for i in range(0, len(ENDED), size))
    assert out == STREAM  # a look-alike marker with another nonce is data
    assert marker.done and marker.status == 17
    assert marker.feed(b"late") == b""


def test_stream_without_marker_is_passed_on_by_flush() -> None:
    marker = _EndMarker(NONCE)
    out = marker.feed(STREAM) + marker.flush()
    assert out == STREAM and not marker.done
    marker.reset()
    assert marker.feed(b"x\0logdoctor-end-" + NONCE + b":oops\0") == b"x"
    assert marker.done and marker.status is None


def test_docs_show_the_exact_shell_prelude() -> None:
    from pathlib import Path

    from logdoctor.sources.remote import SHELL_PRELUDE

    doc = (Path(__file__).resolve().parents[2] / "docs" / "ssh.md").read_text(encoding="utf-8")
    assert f"```sh\n{SHELL_PRELUDE}```" in doc, "docs/ssh.md is out of date for SHELL_PRELUDE"


def test_frame_payload_carries_status_and_byte_count() -> None:
    from logdoctor.sources.remote import _frame_payload

    assert _frame_payload(b"7") == (7, None)
    gnu = b"2+1 records in\n2+1 records out\n131234 bytes (131 kB, 128 KiB) copied, 0.001 s, 99 MB/s\ns 0"
    assert _frame_payload(gnu) == (0, 131234)
    busybox = b"s 137\n0+0 records in\n0+0 records out\n0 bytes (0B) copied"
    assert _frame_payload(busybox) == (137, 0)
    assert _frame_payload(b"garbage") == (None, None)
