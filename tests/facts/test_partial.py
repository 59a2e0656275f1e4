"""Fact partials (logdoctor/facts/partial.py) merged at any cut give the facts of offering every event in turn.

The events are the real events of the fixture logs (parsed once, in one process), cut into "ranges" at random
places, each summed up by `RangeFacts` as a parse worker does, sent through pickle, and fed to a `tap.Tap` by
`parallel.feed` as the parent does; the server starts, the clues and every fact (value, series summary, lines,
origin) must be those of the same events tapped one by one. Random cuts reach what byte ranges of a real file
rarely do: a cut inside a process's warm-up intervals, between two processes' first stats lines, right after a
preemption or an eager Decode batch line. Fixtures are also joined two by two (two sources, two engines).
"""

from __future__ import annotations

import pickle
import random
from pathlib import Path
from typing import Any

import pytest

from logdoctor.eventlog import EventLog
from logdoctor.events import EngineFailure, EventBase, SchedulerStats
from logdoctor.facts import partial
from logdoctor.facts.series import Series
from logdoctor.parse.pipeline import EventStream, SourceStats
from logdoctor.pipeline.parallel import RangeParse, feed
from logdoctor.pipeline.tap import Tap
from logdoctor.sources.local import open_local

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_LOGS = sorted((ROOT / "fixtures" / "logs").rglob("*.log"))


def _events(path: Path) -> list[EventBase]:
    source = open_local(str(path))
    return list(EventStream(source.name, source.lines([], prefilter=False)))


@pytest.fixture(scope="module")
def served() -> list[list[EventBase]]:
    """The fixtures' events, those with periodic events (stats or spec-decode lines) only."""
    out = []
    for path in FIXTURE_LOGS:
        events = _events(path)
        if sum(partial.periodic(e) for e in events) >= 4:
            out.append(events)
    assert len(out) >= 40
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, Series):
        summary = (value.seen, value.total, value.low, value.high, value.latest, value.stride)
        return ("series", [repr(v) for v in value], [repr(v) for v in summary])
    return repr(value)


_STATE = ("votes", "position_sums", "position_counts", "preemptions", "decode_lines", "eager_decode_lines")


def _finished(watch: Tap) -> tuple[Any, ...]:
    """What the watch holds once finished, and the combiners' running sums and counts that a fact shows only
    rounded (or not at all when another line decides it): those must be the same bits too."""
    state: list[tuple[str, ...]] = []
    for combiner in watch.profiling._combine.combiners:
        state.extend((type(combiner).__name__, a, repr(getattr(combiner, a))) for a in _STATE if hasattr(combiner, a))
        served = getattr(combiner, "served", None)
        if served is not None:
            state.extend((k, repr(sorted(v) if isinstance(v, set) else v)) for k, v in vars(served).items())
        ratio = getattr(combiner, "ratio", None)
        if ratio is not None:
            state.append(("ratio", repr((ratio.pairs, ratio.prompt, ratio.generated))))
    profile = watch.profiling.profile(engine=None, version=None)
    facts = {name: (_plain(f.value), f.refs, f.origin) for name, f in profile.facts.items()}
    return facts, profile.engine, watch.starts.starts(), watch.clues, state


def _one_by_one(events: list[EventBase]) -> tuple[Any, ...]:
    watch = Tap()
    for _ in watch.tap(events):
        pass
    return _finished(watch)


def _from_partials(events: list[EventBase], cuts: list[int]) -> tuple[tuple[Any, ...], int]:
    watch = Tap()
    stretches = 0
    for start, end in zip([0, *cuts], [*cuts, len(events)], strict=True):
        facts = partial.RangeFacts()
        log = EventLog(facts.tap(events[start:end]))
        part = RangeParse(log.batches(), SourceStats(name="x"), None, [], None, "", True)  # type: ignore[arg-type]
        part.facts = pickle.loads(pickle.dumps(facts.segments(), protocol=pickle.HIGHEST_PROTOCOL))  # noqa: S301
        stretches += sum(isinstance(s, partial.Stretch) for s in part.facts or ())
        feed(watch, part)
    return _finished(watch), stretches


def test_every_combiner_that_reads_periodic_events_has_an_absorber() -> None:
    from logdoctor.facts import ProfileStream

    assert ProfileStream().absorbs()


def test_random_cuts_of_every_fixture_give_the_facts_of_one_pass(served: list[list[EventBase]]) -> None:
    rng = random.Random(20261201)  # noqa: S311 - reproducible cuts, not secrets
    stretches = 0
    for events in served:
        whole = _one_by_one(events)
        for _ in range(4):
            cuts = sorted(rng.sample(range(1, len(events)), min(len(events) - 1, rng.randint(1, 12))))
            got, seen = _from_partials(events, cuts)
            stretches += seen
            assert got == whole, (events[0].source, cuts)
    assert stretches > 1000


def test_two_fixtures_joined_give_the_facts_of_one_pass(served: list[list[EventBase]]) -> None:
    rng = random.Random(7)  # noqa: S311 - reproducible pairs
    for _ in range(30):
        first, second = rng.sample(served, 2)
        events = first + second
        cuts = sorted(rng.sample(range(1, len(events)), min(len(events) - 1, 6)))
        assert _from_partials(events, cuts)[0] == _one_by_one(events)


def test_a_cut_inside_the_warm_up_intervals_and_between_preemptions() -> None:
    """Constructed stats events (two processes, preemptions, SGLang decode lines without graphs, idle intervals,
    prompt rates whose float sum depends on its order) after a stop's wait, cut after every event in turn."""
    stop = EngineFailure(
        source="s.log", line=1, kind="shutdown", message="Waiting for connections to close. (CTRL+C to force quit)"
    )
    events: list[EventBase] = [stop]
    for i in range(1, 40):
        pid = 10 + i % 2
        events.append(
            SchedulerStats.model_validate(
                {
                    "source": "s.log",
                    "line": i + 1,
                    "engine": "sglang",
                    "format": "sglang-decode" if i % 3 else "vllm-v1",
                    "process": {"role": "Scheduler", "pid": pid},
                    "generation_throughput": [0.0, 12.5, 30.25, 18.0, 0.1][i % 5],
                    "prompt_throughput": [1e16, 1.0, -1e16, 0.3][i % 4],
                    "running": [1, 2, 0, 1][i % 4],
                    "waiting": [0, 3, 0][i % 3],
                    "kv_cache_usage": 0.1 * (i % 9),
                    "preemptions": 2 if i % 6 == 0 else None,
                    "cuda_graph": i % 4 != 1,
                }
            )
        )
    whole = _one_by_one(events)
    for cut in range(1, len(events)):
        assert _from_partials(events, [cut])[0] == whole, cut
    assert _from_partials(events, list(range(1, len(events))))[0] == whole


def test_a_range_past_the_caps_gives_up_its_partials_and_its_events_are_read_one_by_one(
    served: list[list[EventBase]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker keeps at most MAX_KEPT_EVENTS whole events and MAX_VALUES listed values a range (its memory stays
    bounded on an event-dense log); past either, the parent decodes that range's events, and the facts stay the
    same, whichever ranges gave up."""
    monkeypatch.setattr(partial, "MAX_KEPT_EVENTS", 8)
    monkeypatch.setattr(partial, "MAX_VALUES", 3000)
    gave_up = kept = 0
    for events in served[:25]:
        cuts = list(range(len(events) // 3, len(events), len(events) // 3 or 1))[:2]
        for start, end in zip([0, *cuts], [*cuts, len(events)], strict=True):
            facts = partial.RangeFacts()
            for event in events[start:end]:
                facts.add(event)
            if facts.segments() is None:
                gave_up += 1
            else:
                kept += 1
        assert _from_partials(events, cuts)[0] == _one_by_one(events)
    assert gave_up and kept
