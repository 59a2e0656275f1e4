"""Events -> one deployment profile, in engine-neutral names, so one rule covers vLLM and SGLang.

    StartupConfig(config={'tensor_parallel_size': 2, ...})       -> parallel.tp = 2
    ServerArgs tp_size=2                                         -> parallel.tp = 2
    SpecDecodeStats(mean_acceptance_length=1.31) x 40            -> spec.acceptance_length = [1.31, ...]
    CudaGraph(kind="mode_downgrade", mode_to="NONE") (later)     -> cuda_graphs.enabled = False (wins over config)

declarations.py  FACTS: every fact with its kind and a hint for when it is missing (the rule loader's list)
values.py        Ref and Fact (a value with the lines behind it), readers of raw config values
profile.py       ProfileBuilder (what combiners write with), Profile, with_baseline (`logdoctor diff`)
combiner.py      the Combiner base (reads, produces, add, finish) and `combine`, the dispatch
combiners/       one combiner a topic: speculative decoding, CUDA graphs, communication, ...

An engine's configuration spellings live in its package (logdoctor/engines/<name>/facts.py and
flags.py), reached through the registry; nothing here names an engine.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from logdoctor.events import EventBase
from logdoctor.facts.combiner import Combine, Combiner, combine
from logdoctor.facts.combiners import COMBINERS
from logdoctor.facts.declarations import BASELINE_PREFIX, FACTS, FactKind, FactSpec, fact_spec
from logdoctor.facts.profile import Profile, ProfileBuilder, with_baseline
from logdoctor.facts.values import Fact, Ref

if TYPE_CHECKING:
    from logdoctor.facts.partial import Stretch

__all__ = [
    "BASELINE_PREFIX",
    "COMBINERS",
    "FACTS",
    "Combiner",
    "Fact",
    "FactKind",
    "FactSpec",
    "Profile",
    "ProfileBuilder",
    "ProfileStream",
    "Ref",
    "build_profile",
    "fact_spec",
    "with_baseline",
]


def build_profile(events: Iterable[EventBase], engine: str | None = None, version: str | None = None) -> Profile:
    """Combine the events of all sources of one deployment into facts. Later runtime lines override startup config."""
    b = ProfileBuilder(engine, version)
    return combine(events, b, [combiner(b) for combiner in COMBINERS])


class ProfileStream:
    """`build_profile` begun while the events are parsed, so an event-dense log's events are combined as they go by
    instead of decoded again from their EventLog: `add` each event in order, then `profile` once, with the engine
    and version that only the end of the parse tells (the combiners read those only as they finish)."""

    def __init__(self) -> None:
        self._b = ProfileBuilder()
        self._combine = Combine(self._b, [combiner(self._b) for combiner in COMBINERS])
        self.add = self._combine.add

    def absorbs(self) -> bool:
        """Whether `absorb` can stand for `add` of a stretch's events (facts/partial.py `supported`)."""
        from logdoctor.facts import partial

        return partial.supported(self._combine.combiners)

    def absorb(self, stretch: Stretch) -> None:
        """A parse worker's stretch of periodic events, merged as if each had been `add`ed in turn."""
        from logdoctor.facts import partial

        partial.absorb(self._combine.combiners, stretch)

    def profile(self, engine: str | None = None, version: str | None = None) -> Profile:
        self._b.engine, self._b.version = engine, version
        return self._combine.finish()
