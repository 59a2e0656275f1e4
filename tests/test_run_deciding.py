"""`run.Deciding`: the few events a parse in worker processes sends along so that the parent finds a log's server
starts (`run_starts`) and its deployment's identity without decoding every event twice more. On every fixture
log, and with the stretches cut anywhere (a byte range's start), they must decide exactly what all the events
decide."""

from __future__ import annotations

import random
from dataclasses import astuple
from pathlib import Path

import pytest

from logdoctor.deployments import Unit, _identify
from logdoctor.events import EventBase, EventLog
from logdoctor.parse.detect import Detection
from logdoctor.parse.pipeline import EventStream, SourceStats, candidate_keywords
from logdoctor.run import Deciding, Parsed, run_starts
from logdoctor.sources.local import open_local

ROOT = Path(__file__).resolve().parents[1]
LOGS = sorted(p for p in (ROOT / "fixtures" / "logs").rglob("*") if p.suffix in (".log", ".txt") and p.is_file())


def _parse(path: Path) -> tuple[list[EventBase], Parsed]:
    source = open_local(str(path))
    stat = SourceStats(name=source.name)
    stream = EventStream(source.name, source.lines(candidate_keywords()), stats=stat)
    events = list(stream)
    return events, Parsed(EventLog(events), [stat], [stream.detection], {})


def _kept(events: list[EventBase], cuts: set[int]) -> list[EventBase]:
    deciding = Deciding()
    for index, event in enumerate(events):
        if index in cuts:
            deciding.begin()  # a new byte range: its first stretch starts afresh
        deciding.add(event)
    kept = deciding.kept()
    assert kept is not None
    return kept


def _identity(parsed: Parsed) -> tuple[object, ...]:
    unit = _identify(Unit(parsed, None, 0))
    return astuple(unit)[3:]  # engine, serving, version, model, host, node ranks


def test_the_fixture_logs_are_found() -> None:
    assert len(LOGS) > 50


@pytest.mark.parametrize("path", LOGS, ids=lambda p: str(p.relative_to(ROOT / "fixtures" / "logs")))
def test_the_deciding_events_decide_what_all_the_events_decide(path: Path) -> None:
    events, parsed = _parse(path)
    rng = random.Random(path.name)  # noqa: S311 - reproducible cuts, not secrets
    for cuts in (set(), set(rng.sample(range(len(events)), min(len(events), 3)))):
        kept = _kept(events, cuts)
        assert run_starts(kept) == run_starts(events)
        decided = Parsed(parsed.events, parsed.stats, parsed.detections, {}, deciding=kept)
        assert decided.deciding_events() is kept
        assert _identity(decided) == _identity(parsed)


def test_a_serving_log_keeps_few_events_and_a_long_one_gives_up(monkeypatch: pytest.MonkeyPatch) -> None:
    story = ROOT / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"
    events, _ = _parse(story)
    kept = _kept(events, set())
    served = [e for e in events if e.type in ("scheduler_stats", "spec_decode_stats")]
    kept_served = [e for e in kept if e.type in ("scheduler_stats", "spec_decode_stats")]
    assert len(served) >= 10 and len(kept_served) <= len(served) // 2  # one a stretch, not one a line
    monkeypatch.setattr(Deciding, "LIMIT", 3)
    deciding = Deciding()
    for event in events:
        deciding.add(event)
    assert deciding.kept() is None  # then every event is read


def test_random_mixes_of_start_up_runtime_and_other_lines_decide_alike() -> None:
    """Logs with restarts, crash loops and configuration lines before a banner are few among the fixtures: mixes
    of real events drawn from several of them (start-up lines of two versions, stats lines, a preemption,
    platform lines), renumbered in order, are, and all their stretches must be decided alike."""
    pool: list[EventBase] = []
    for name in (
        "story/vllm-dflash-tp2-a6000.log",
        "story/sglang-mtp-tp2-a6000.log",
        "realworld2/vllm-r003.log",
        "realworld3/vllm-r007.log",  # a preemption: a runtime line that is not served traffic
        "realworld/vllm-r005.log",  # engine failures, model lines
    ):
        pool.extend(_parse(ROOT / "fixtures" / "logs" / name)[0])
    kinds = {e.type for e in pool}
    assert {"engine_version", "startup_config", "scheduler_stats", "preemption", "model_info"} <= kinds
    by_kind = {kind: [e for e in pool if e.type == kind] for kind in sorted(kinds)}
    rng = random.Random(15)  # noqa: S311 - reproducible mixes, not secrets
    restarts = 0
    for _ in range(400):
        drawn = [rng.choice(by_kind[rng.choice(sorted(kinds))]) for _ in range(rng.randint(1, 40))]  # rare kinds too
        events = [e.model_copy(update={"line": i + 1, "end_line": None}) for i, e in enumerate(drawn)]
        cuts = set(rng.sample(range(len(events)), rng.randint(0, min(3, len(events)))))
        starts = run_starts(events)
        restarts += len(starts) > 1
        kept = _kept(events, cuts)
        assert run_starts(kept) == starts
        parsed = Parsed(EventLog(events), [SourceStats(name="mix")], [Detection()], {})
        decided = Parsed(parsed.events, parsed.stats, parsed.detections, {}, deciding=kept)
        assert _identity(decided) == _identity(parsed)
    assert restarts > 50  # the mixes do hold several starts
