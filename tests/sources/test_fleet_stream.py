"""A host's lines streamed to its worker process (logdoctor/app/fleet.py): the writer never blocks for good."""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future

import pytest

from logdoctor.app.fleet import _Abandoned, _stream_messages, _StreamWriter
from logdoctor.sources.feed import Feed


def test_messages_arrive_in_order_whole() -> None:
    read_end, write_end = os.pipe()
    task: Future[None] = Future()
    sent = [("source", {"name": "a.log"}), ("lines", [(n, "x" * 5000) for n in range(1, 200)]), ("end", None)]
    got: list[object] = []

    def reader() -> None:
        for message in _stream_messages(read_end):
            got.append(message)
            if message[0] == "end":
                return

    thread = threading.Thread(target=reader)
    thread.start()
    writer = _StreamWriter(write_end, task)
    for message in sent:  # ~1 MB: more than a pipe holds, so the writer waits for the reader
        writer.put(message)
    os.close(write_end)
    thread.join(timeout=120)
    assert not thread.is_alive()
    assert got == sent


def test_a_full_pipe_whose_task_ended_stops_the_writer() -> None:
    """The worker died or failed before reading: the task is done, and the writer gives up instead of hanging."""
    read_end, write_end = os.pipe()
    task: Future[None] = Future()
    task.set_exception(RuntimeError("the worker failed"))
    writer = _StreamWriter(write_end, task)
    with pytest.raises(_Abandoned):
        for _ in range(100):  # 100 x 64 KiB: far more than the pipe holds
            writer.put(("lines", [(1, "y" * 65536)]))
    os.close(write_end)
    os.close(read_end)


def test_a_closed_reader_stops_the_writer() -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    writer = _StreamWriter(write_end, Future())
    with pytest.raises(_Abandoned):
        writer.put(("end", None))
    os.close(write_end)


def test_feed_chunks_are_what_arrived_since_the_last() -> None:
    feed: Feed[int] = Feed()
    feed.extend([1, 2])
    chunks = feed.chunks()
    assert next(chunks) == [1, 2]
    feed.append(3)
    feed.close()
    assert list(chunks) == [[3]]
