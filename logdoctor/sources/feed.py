"""A list that one thread fills while another reads it: how collected lines reach the parser early.

The SSH collector appends a source's lines as they arrive from the host; `diagnose` iterates the
same list from another thread and parses each line as soon as it is there, instead of waiting for
the host's grep to finish (docs/ssh.md, "Parsing while reading"). Iteration blocks until more items
arrive or the feed is closed; a closed feed iterates like the list it wraps.

    feed = Feed[str]()
    feed.extend(["a", "b"])          # reader thread
    feed.close()
    list(feed)                       # any thread: ["a", "b"]

Only the reading thread appends, and it appends to the end, so a reader that remembers how far it
got never misses an item (CPython's list append and slicing are atomic under the GIL).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Feed(Generic[T]):
    def __init__(self, items: list[T] | None = None, *, closed: bool = False) -> None:
        self.items: list[T] = items if items is not None else []
        self._ready = threading.Condition()
        self._closed = closed

    @property
    def closed(self) -> bool:
        return self._closed

    def append(self, item: T) -> None:
        with self._ready:
            self.items.append(item)
            self._ready.notify_all()

    def extend(self, items: Iterable[T]) -> None:
        with self._ready:
            self.items.extend(items)
            self._ready.notify_all()

    def notify(self) -> None:
        """Wake readers after appending to `items` directly (the hot path: one wake-up per chunk)."""
        with self._ready:
            self._ready.notify_all()

    def close(self) -> None:
        with self._ready:
            self._closed = True
            self._ready.notify_all()

    def chunks(self) -> Iterator[list[T]]:
        """The items in lists, each what arrived since the last one (a stream to another process)."""
        done = 0
        while True:
            with self._ready:
                while done >= len(self.items) and not self._closed:
                    self._ready.wait()
                end = len(self.items)
            if done >= end:
                return
            yield self.items[done:end]
            done = end

    def __iter__(self) -> Iterator[T]:
        for chunk in self.chunks():
            yield from chunk
