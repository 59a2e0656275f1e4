"""What a combiner is, and the dispatch that feeds it: events in, facts out, one topic at a time.

A combiner (logdoctor/facts/combiners/) declares the event types it `reads` and the facts it `produces`;
`combine` offers each event to the combiners that read its type, in the order they are listed, then
lets each `finish` (facts that need every event: series, shares, the longest phase):

    class KvCache(Combiner):
        reads = (KVCache,)
        produces = ("kv.tokens", "kv.max_concurrency")

        def add(self, ev: EventBase) -> None:
            if isinstance(ev, KVCache) and ev.kv_tokens:
                self.b.set("kv.tokens", float(ev.kv_tokens), ev, "KV cache size line", keep_first=True)

Combiners share one ProfileBuilder: a later line overrides an earlier one whichever combiner wrote it
(a runtime downgrade wins over the startup config), and a combiner may read what another wrote.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from logdoctor.events import EventBase
from logdoctor.facts.profile import Profile, ProfileBuilder


class Combiner:
    """One topic's facts. A fresh instance per profile, so per-deployment state lives on `self`."""

    reads: tuple[type[EventBase], ...] = ()  # the event types `add` is offered (subclasses included)
    produces: tuple[str, ...] = ()  # every fact this combiner may write (a test holds it to that)

    def __init__(self, b: ProfileBuilder) -> None:
        self.b = b

    def add(self, ev: EventBase) -> None:
        """One event of a type in `reads`, in the order the deployment's sources gave them."""

    def finish(self) -> None:
        """After the last event."""


class Combining(Protocol):
    """What `combine` needs of a combiner (a test wraps them to watch what each one writes)."""

    @property
    def reads(self) -> tuple[type[EventBase], ...]: ...

    def add(self, ev: EventBase) -> None: ...

    def finish(self) -> None: ...


class Combine:
    """`combine` one event at a time, as a parse gives them: `add` each in order, then `finish` once."""

    def __init__(self, b: ProfileBuilder, combiners: Sequence[Combining]) -> None:
        self.b = b
        self.combiners = combiners
        self._table: dict[type[EventBase], tuple[Callable[[EventBase], None], ...]] = {}

    def add(self, ev: EventBase) -> None:
        """Offer the event to the combiners that read its type (or a base of it)."""
        handlers = self._table.get(type(ev))
        if handlers is None:
            kind = type(ev)
            handlers = self._table[kind] = tuple(c.add for c in self.combiners if issubclass(kind, c.reads))
        for handler in handlers:
            handler(ev)

    def finish(self) -> Profile:
        for combiner in self.combiners:
            combiner.finish()
        return self.b.profile()


def combine(events: Iterable[EventBase], b: ProfileBuilder, combiners: Sequence[Combining]) -> Profile:
    """Offer each event to the combiners that read its type (or a base of it), then finish them in order."""
    combining = Combine(b, combiners)
    add = combining.add
    for ev in events:
        add(ev)
    return combining.finish()
