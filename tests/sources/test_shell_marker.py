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
