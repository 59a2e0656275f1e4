"""logdoctor/facts/combiner.py and combiners/: every declared fact has a combiner that produces it, and on
every fixture log each combiner writes only the facts it declares (the builder is watched while it runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from logdoctor.events import EVENT_TYPES, EventBase
from logdoctor.facts import COMBINERS, FACTS, Combiner, Fact, ProfileBuilder, build_profile
from logdoctor.facts.combiner import combine
from logdoctor.pipeline.run import LineSource, parse_sources

ROOT = Path(__file__).resolve().parents[2]
LOGS = sorted(p for p in (ROOT / "fixtures" / "logs").rglob("*") if p.suffix in (".log", ".txt") and p.is_file())


def _combiners(b: ProfileBuilder | None = None) -> list[Combiner]:
    builder = b or ProfileBuilder()
    return [combiner(builder) for combiner in COMBINERS]


def test_every_fact_is_produced_by_a_combiner() -> None:
    produced = {name for c in _combiners() for name in c.produces}
    assert sorted(set(FACTS) - produced) == []
    assert sorted(produced - set(FACTS)) == []


def test_every_event_type_is_read_by_a_combiner_or_deliberately_by_none() -> None:
    # The identity combiner sees every event (it counts engines) and reads EngineVersion itself (the failures
    # combiner reads it too, as a sign of a start); NcclVersion feeds no fact yet: kept in `logdoctor parse` output
    # and golden files only.
    unread = {"NcclVersion"}
    read = {
        t.__name__ for t in EVENT_TYPES if any(issubclass(t, c.reads) for c in _combiners() if c.reads != (EventBase,))
    }
    assert sorted({t.__name__ for t in EVENT_TYPES} - read) == sorted(unread)


class WatchedBuilder(ProfileBuilder):
    """A builder that fails when the combiner now running writes a fact it does not declare."""

    def __init__(self) -> None:
        super().__init__()
        self.current: Combiner | None = None
        self.written: dict[str, set[str]] = {}

    def _check(self, name: str) -> None:
        assert self.current is not None, f"{name} written outside a combiner"
        owner = type(self.current).__name__
        assert name in self.current.produces, f"{owner} writes {name}, which it does not declare in `produces`"
        self.written.setdefault(owner, set()).add(name)

    def set(
        self, name: str, value: Any, event: EventBase | None = None, origin: str = "", *, keep_first: bool = False
    ) -> None:
        if value is not None:
            self._check(name)
        super().set(name, value, event, origin, keep_first=keep_first)

    def append(self, name: str, value: Any, event: EventBase, origin: str = "") -> None:
        if value is not None:
            self._check(name)
        super().append(name, value, event, origin)

    def add_ref(self, name: str, event: EventBase) -> None:
        self._check(name)
        super().add_ref(name, event)

    def replace(self, name: str, value: Any) -> None:
        self._check(name)
        super().replace(name, value)

    def put(self, name: str, fact: Fact) -> None:
        self._check(name)
        super().put(name, fact)


class Watched:
    """A combiner that tells the builder it is running."""

    def __init__(self, combiner: Combiner, b: WatchedBuilder) -> None:
        self.combiner, self.b = combiner, b
        self.reads = combiner.reads

    def add(self, ev: EventBase) -> None:
        self.b.current = self.combiner
        self.combiner.add(ev)
        self.b.current = None

    def finish(self) -> None:
        self.b.current = self.combiner
        self.combiner.finish()
        self.b.current = None


def _events(path: Path) -> list[EventBase]:
    lines = enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), start=1)
    return list(parse_sources([LineSource(name=path.name, lines=lines)]).events)


def _watched(events: list[EventBase]) -> tuple[WatchedBuilder, dict[str, Fact]]:
    b = WatchedBuilder()
    profile = combine(events, b, [Watched(c, b) for c in _combiners(b)])
    return b, profile.facts


@pytest.mark.parametrize("path", LOGS, ids=[str(p.relative_to(ROOT / "fixtures" / "logs")) for p in LOGS])
def test_combiners_write_only_what_they_declare(path: Path) -> None:
    events = _events(path)
    b, facts = _watched(events)
    # The watched run is the real one: the same facts and values as build_profile.
    plain = build_profile(events).facts
    assert {n: f.value for n, f in facts.items()} == {n: f.value for n, f in plain.items()}
    assert b.current is None


def test_the_fixtures_exercise_most_facts() -> None:
    """Not every fact has a fixture line; this only keeps the watched test above meaningful."""
    seen: set[str] = set()
    for path in LOGS:
        b, _ = _watched(_events(path))
        seen |= {name for names in b.written.values() for name in names}
    assert len(seen) >= len(FACTS) * 3 // 4, sorted(set(FACTS) - seen)
