"""The profile of one deployment, and the builder the combiners write it with.

    b.set("parallel.tp", 2.0, event, "non-default args")       # a later set wins ...
    b.set("cuda_graphs.enabled", True, event, keep_first=True)  # ... unless keep_first
    b.append("kv.usage", 0.41, event, "stats lines")            # series grow one interval at a time

Every write goes through one of the builder's methods (set, append, add_ref, replace, put), so a test
can check that each combiner writes only the facts it declares.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from logdoctor.events import EventBase
from logdoctor.facts.declarations import BASELINE_PREFIX, FACTS, fact_spec
from logdoctor.facts.series import Series
from logdoctor.facts.values import Fact, Ref, ref


def _not_finite(value: Any) -> bool:
    """NaN and infinity are no measurement (a `nan` or `1e999` in a log): the fact stays unknown, so no rule, effect
    or renderer has to take them (`int(nan)` raises)."""
    return type(value) is float and not math.isfinite(value)


def _all_finite(values: Sequence[Any]) -> bool:
    """No value is `_not_finite`: at C speed for numbers, one by one for anything else."""
    try:
        return all(map(math.isfinite, values))
    except (TypeError, OverflowError):  # text, or an int too big for a float
        return not any(_not_finite(v) for v in values)


class ProfileBuilder:
    """Accumulates facts; a later `set` of the same fact wins unless `keep_first`.

    `engine` and `version` are what the caller already knows (`--engine`, a detected version): the
    identity combiner prefers them to what the events say."""

    def __init__(self, engine: str | None = None, version: str | None = None) -> None:
        self.facts: dict[str, Fact] = {}
        self.engine = engine
        self.version = version

    def set(
        self, name: str, value: Any, event: EventBase | None = None, origin: str = "", *, keep_first: bool = False
    ) -> None:
        if value is None or _not_finite(value):
            return
        assert name in FACTS, name
        if keep_first and name in self.facts:
            return
        refs = [ref(event)] if event is not None else []
        self.facts[name] = Fact(value=value, refs=refs, origin=origin)

    def value(self, name: str) -> Any:
        fact = self.facts.get(name)
        return None if fact is None else fact.value

    def add_ref(self, name: str, event: EventBase) -> None:
        fact = self.facts.get(name)
        if fact is not None and len(fact.refs) < 5:
            line = ref(event)
            if line not in fact.refs:
                fact.refs.append(line)

    def append(self, name: str, value: Any, event: EventBase, origin: str = "") -> None:
        if value is None or _not_finite(value):
            return
        fact = self.facts.get(name)
        if fact is None:  # not setdefault: it would build a Fact on every call
            # A series fact is bounded (facts/series.py): a million stats lines keep a sample, not a million floats.
            values: list[Any] = Series() if FACTS[name].kind == "series" else []
            fact = self.facts[name] = Fact(value=values, origin=origin)
        fact.value.append(value)
        if len(fact.refs) < 3:
            fact.refs.append(ref(event))

    def extend(self, name: str, values: Sequence[Any], refs: Sequence[Ref], origin: str = "") -> None:
        """`append` of each value in turn, given the lines of the first few (a parse worker's range of a series:
        facts/partial.py); the values hold no None."""
        if not _all_finite(values):
            values = [v for v in values if not _not_finite(v)]
        if not values:
            return
        fact = self.facts.get(name)
        if fact is None:
            kept: list[Any] = Series() if FACTS[name].kind == "series" else []
            fact = self.facts[name] = Fact(value=kept, origin=origin)
        fact.value.extend(values)
        room = 3 - len(fact.refs)
        if room > 0:
            fact.refs.extend(refs[:room])

    def replace(self, name: str, value: Any) -> None:
        """A new value for a fact that is set, keeping its lines and origin (a running count)."""
        self.facts[name].value = value

    def put(self, name: str, fact: Fact) -> None:
        """A fact built whole (a value derived from other facts, with their lines)."""
        assert name in FACTS, name
        self.facts[name] = fact

    def profile(self) -> Profile:
        return Profile(facts=self.facts, engine=self.value("engine") or "unknown", version=self.value("engine.version"))


@dataclass
class Profile:
    """The facts of one deployment (all sources given together)."""

    facts: dict[str, Fact]
    engine: str
    version: str | None = None

    def value(self, name: str) -> Any:
        fact = self.facts.get(name)
        return None if fact is None else fact.value

    def has(self, name: str) -> bool:
        fact = self.facts.get(name)
        if fact is None:
            return False
        spec = fact_spec(name)
        return not (isinstance(fact.value, list) and spec is not None and spec.kind == "series" and not fact.value)


def with_baseline(candidate: Profile, baseline: Profile) -> Profile:
    """The candidate's facts plus the baseline's under `baseline.<name>`: what diff-mode rules read."""
    facts = dict(candidate.facts)
    facts.update({BASELINE_PREFIX + name: fact for name, fact in baseline.facts.items()})
    return Profile(facts=facts, engine=candidate.engine, version=candidate.version)
