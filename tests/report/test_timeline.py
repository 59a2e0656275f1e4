"""report.timeline: series and markers from events (constructed here, field by field)."""

from __future__ import annotations

from pathlib import Path

from logdoctor.events import EngineVersion, EventBase, PerfWarning, Preemption, SchedulerStats, SpecDecodeStats
from logdoctor.parse.pipeline import EventStream
from logdoctor.report.timeline import parse_timestamp, timeline_of


def stats(line: int, ts: str | None, tok_s: float, running: int, preemptions: int | None = None) -> SchedulerStats:
    return SchedulerStats(
        source="x.log",
        line=line,
        timestamp=ts,
        format="vllm-v1",
        generation_throughput=tok_s,
        running=running,
        waiting=0,
        kv_cache_usage=0.25,
        preemptions=preemptions,
    )


def start(line: int, ts: str) -> EngineVersion:
    return EngineVersion(source="x.log", line=line, timestamp=ts, origin="version line", version="0.20.1")


def test_series_start_at_the_first_throughput_line() -> None:
    events: list[EventBase] = [
        start(1, "05-08 14:02:00"),
        stats(2, "05-08 14:02:10", 40.0, 2),
        SpecDecodeStats(
            source="x.log", line=3, timestamp="05-08 14:02:10", format="vllm-v1-0.11", mean_acceptance_length=2.5
        ),
        stats(4, "05-08 14:02:20", 30.0, 0),
    ]
    timeline = timeline_of(events)
    assert timeline.series["decode_tok_s"] == [(0.0, 40.0), (10.0, 30.0)]
    assert timeline.series["decode_tok_s_per_request"] == [(0.0, 20.0)]  # no request running: no per-request point
    assert timeline.series["acceptance_length"] == [(0.0, 2.5)]
    assert timeline.series["kv_usage_percent"] == [(0.0, 25.0), (10.0, 25.0)]
    assert timeline.markers == []  # the first start is no restart


def test_restart_preemption_and_warning_markers() -> None:
    events: list[EventBase] = [
        start(1, "05-08 14:00:00"),
        stats(2, "05-08 14:00:10", 40.0, 2, preemptions=0),
        stats(3, "05-08 14:00:20", 40.0, 2, preemptions=3),
        PerfWarning(
            source="x.log", line=4, timestamp="05-08 14:00:25", level="WARNING", topic="env-unknown", message="slow <b>"
        ),
        PerfWarning(
            source="x.log", line=5, timestamp="05-08 14:00:25", level="WARNING", topic="env-unknown", message="slow <b>"
        ),
        start(6, "05-08 14:01:00"),
        start(7, "05-08 14:01:00"),  # the same start's second banner line
        Preemption(source="x.log", line=8, timestamp="05-08 14:01:30", mode="retract", message="KV cache pool is full"),
        stats(9, "05-08 14:01:40", 40.0, 2),
    ]
    timeline = timeline_of(events)
    assert [(m.t, m.kind, m.label, m.line) for m in timeline.markers] == [
        (10.0, "preemption", "3 preemption(s)", 3),
        (15.0, "warning", "slow <b>", 4),  # once, though two ranks printed it
        (50.0, "restart", "engine started again", 6),
        (80.0, "preemption", "KV cache pool is full", 8),
    ]


def test_lines_of_one_second_keep_their_points_and_order() -> None:
    events: list[EventBase] = [stats(1, "2026-05-07 09:16:41", 70.0, 1), stats(2, "2026-05-07 09:16:41", 72.0, 1)]
    assert timeline_of(events).series["decode_tok_s"] == [(0.0, 70.0), (0.001, 72.0)]


def test_events_without_a_time_are_counted_not_placed() -> None:
    timeline = timeline_of([stats(1, None, 40.0, 1), stats(2, "05-08 14:00:00", 41.0, 1)])
    assert timeline.points("decode_tok_s") == 1 and timeline.unplaced == 1


def test_timestamps() -> None:
    leap = parse_timestamp("02-29 23:59:59")
    assert leap is not None and (leap.month, leap.day) == (2, 29)
    assert parse_timestamp("2026-05-07 09:16:41") is not None
    assert parse_timestamp("yesterday") is None


def test_gaps_break_a_series_at_several_of_its_usual_intervals() -> None:
    from logdoctor.report.timeline import gaps

    every_ten = [(float(t), 1.0) for t in range(0, 61, 10)]
    assert gaps(every_ten) == []
    idle = [*every_ten, *[(14400.0 + t, 1.0) for t in range(0, 61, 10)]]
    assert gaps(idle) == [(60 + 14400) / 2]  # one break, in the idle stretch
    assert gaps([(0.0, 1.0), (25.0, 1.0), (30.0, 1.0), (40.0, 1.0)]) == []  # 25 s: under 3 x 10 s
    assert gaps([(0.0, 1.0), (0.001, 1.0), (0.002, 1.0)]) == []  # lines of one second are never a gap


def test_the_origin_is_the_logs_clock_at_the_first_throughput_line() -> None:
    from logdoctor.report.timeline import timeline_of

    story = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"
    lines = list(enumerate(story.read_text(encoding="utf-8").splitlines(), start=1))
    timeline = timeline_of(list(EventStream(story.name, lines)))
    assert timeline.origin is not None and timeline.origin.startswith("2000-05-")  # vLLM prints no year
    assert not timeline.dated
