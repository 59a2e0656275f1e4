"""Feed: a list one thread fills while another iterates it."""

from __future__ import annotations

import threading

from logdoctor.sources.feed import Feed


def test_reader_gets_items_before_the_feed_closes() -> None:
    feed: Feed[int] = Feed()
    first_seen = threading.Event()
    got: list[int] = []

    def read() -> None:
        for item in feed:
            got.append(item)
            first_seen.set()

    reader = threading.Thread(target=read)
    reader.start()
    feed.extend([1, 2])
    assert first_seen.wait(10), "the reader saw nothing while the feed was open"
    assert not feed.closed and reader.is_alive()  # still waiting for more
    feed.items.append(3)  # the collector's hot path: append, then one wake-up per chunk
    feed.notify()
    feed.append(4)
    feed.close()
    reader.join(10)
    assert not reader.is_alive()
    assert got == [1, 2, 3, 4]


def test_closed_feed_iterates_like_its_list_and_can_be_read_twice() -> None:
    items = [(1, "a"), (2, "b")]
    feed = Feed(items, closed=True)
    assert list(feed) == items
    assert list(feed) == items
    assert list(Feed[int](closed=True)) == []


def test_items_added_just_before_close_are_not_lost() -> None:
    for _ in range(200):
        feed: Feed[int] = Feed()
        out: list[int] = []
        reader = threading.Thread(target=lambda f=feed, o=out: o.extend(f))
        reader.start()
        feed.extend(range(50))
        feed.items.extend(range(50, 60))  # appended without a wake-up: close() must still deliver them
        feed.close()
        reader.join(10)
        assert out == list(range(60))
