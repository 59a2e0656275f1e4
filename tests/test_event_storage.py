"""events.EventLog and events.LineTexts: what is stored compressed comes back equal, in order, every time."""

from __future__ import annotations

import pytest

from logdoctor import eventlog as events_module
from logdoctor.eventlog import EventLog, LineTexts
from logdoctor.events import EngineVersion, SchedulerStats


def _events(n: int) -> list[SchedulerStats]:
    return [
        SchedulerStats(source="a.log", line=i + 1, format="vllm-v1", generation_throughput=float(i), running=i % 3)
        for i in range(n)
    ]


def test_an_event_log_gives_back_equal_events_in_order_on_every_pass() -> None:
    events = _events(2500)  # two sealed batches and some pending
    log = EventLog(events)
    assert len(log) == 2500
    assert list(log) == events
    assert list(log) == events  # a second pass decodes again
    assert log[0] == events[0]
    assert log[1500] == events[1500]
    assert log[-1] == events[-1]
    assert log[10:13] == events[10:13]
    with pytest.raises(IndexError):
        log[2500]


def test_extending_with_another_log_shares_its_batches_and_keeps_order() -> None:
    first, second = _events(1500), _events(1100)
    log = EventLog(first)
    log.append(EngineVersion(source="b.log", line=1, origin="version line", version="0.20.1"))
    log.extend(EventLog(second))
    assert list(log) == [*first, log[1500], *second]
    assert log[1501] == second[0]
    assert not EventLog()
    assert len(EventLog()) == 0


def test_line_texts_answer_by_number_across_batches_and_a_rewritten_line() -> None:
    texts = LineTexts()
    for n in range(1, 3001):
        texts[n] = f"line {n}"
    texts[1024] = "line 1024 rejoined"  # a line stored again after its batch was sealed (a terminal wrap)
    assert texts.get(1) == "line 1"
    assert texts.get(2048) == "line 2048"
    assert texts.get(3000) == "line 3000"
    assert texts.get(1024) == "line 1024 rejoined"
    assert texts.get(5000) is None
    assert 17 in texts
    assert 0 not in texts


def test_past_the_memory_budget_batches_go_to_a_temporary_file_and_come_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(events_module, "MEMORY_BUDGET", 1)  # every batch to disk
    events = _events(3000)
    log = EventLog(events)
    texts = LineTexts()
    for n in range(1, 2100):
        texts[n] = f"line {n}"
    assert "0 bytes in memory" in repr(log)
    assert "0 bytes in memory" in repr(texts)
    assert list(log) == events
    assert log[1234] == events[1234]
    assert texts.get(5) == "line 5"
    assert texts.get(2000) == "line 2000"
    joined = EventLog(_events(10))
    joined.extend(log)  # batches on another store's file
    assert list(joined)[10:] == events


def test_an_event_log_on_disk_pickles_as_its_events(monkeypatch: pytest.MonkeyPatch) -> None:
    import pickle

    monkeypatch.setattr(events_module, "MEMORY_BUDGET", 1)
    events = _events(1100)
    back = pickle.loads(pickle.dumps(EventLog(events)))  # noqa: S301 (our own bytes)
    assert isinstance(back, EventLog)
    assert list(back) == events
