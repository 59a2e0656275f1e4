"""Numbers that are not numbers: NaN, infinity, huge, negative and zero values in the fields rules and effects read
reach facts, rankings and every renderer (and `diff`) without an exception; a zero side of a diff is said as such."""

from __future__ import annotations

import dataclasses
import io
import math
from pathlib import Path

import pytest
from rich.console import Console

from logdoctor.app.diffs import diff_parsed
from logdoctor.diff.gap import gap_note, measure_gap
from logdoctor.engine.aggregations import aggregate
from logdoctor.engine.diffresult import Difference
from logdoctor.engine.rules import load_rules
from logdoctor.eventlog import EventLog
from logdoctor.pipeline.run import Parsed, diagnose_parsed, local_line_sources, parse_sources
from logdoctor.report.diff_markdown import render_diff_markdown
from logdoctor.report.diff_terminal import render_diff_terminal
from logdoctor.report.formats import observed_of, render_diff_page, render_one
from logdoctor.report.json import render_json
from logdoctor.report.markdown import render_markdown
from logdoctor.report.observed import Observed
from logdoctor.report.terminal import render_terminal

STORY = Path(__file__).resolve().parent.parent / "fixtures" / "logs" / "story"
RULES = load_rules()
ODD = [math.nan, math.inf, -math.inf, 1e308, -1.0, 0.0]
# The fields each value went into when it crashed: SGLang's accept length / accept rate (k = round(L / rate)), vLLM's
# mean acceptance length (a NaN score), fmean over 1e308s, and a candidate's infinite throughput (1 / ratio of 0).
FIELDS = [
    ("SpecDecodeStats", "mean_acceptance_length"),
    ("SpecDecodeStats", "acceptance_rate"),
    ("SchedulerStats", "generation_throughput"),
]


def _parsed(name: str) -> Parsed:
    return parse_sources(local_line_sources([str(STORY / name)]))


def _with(parsed: Parsed, kind: str, name: str, value: float) -> Parsed:
    events = [
        e.model_copy(update={name: value}) if type(e).__name__ == kind and getattr(e, name) is not None else e
        for e in parsed.events
    ]
    return dataclasses.replace(parsed, events=EventLog(events), profiling=None, clues=None)


@pytest.mark.parametrize("log", ["vllm-dflash-tp2-a6000.log", "sglang-mtp-tp2-a6000.log"])
@pytest.mark.parametrize(("kind", "name"), FIELDS)
def test_odd_values_reach_every_format_without_an_exception(log: str, kind: str, name: str) -> None:
    base = _parsed(log)
    for value in ODD:
        parsed = _with(base, kind, name, value)
        diagnosis, _ = diagnose_parsed(parsed, RULES)
        render_json(diagnosis)
        render_markdown(diagnosis)
        render_terminal(diagnosis, Console(file=io.StringIO(), width=120), verbose=True)
        for fmt in ("github", "html"):
            render_one(fmt, diagnosis, observed_of(fmt, list(parsed.events)))
        for baseline, candidate in ((dataclasses.replace(_parsed(log), profiling=None), parsed),):
            report = diff_parsed(baseline, candidate, RULES)
            render_json(report)
            render_diff_markdown(report)
            render_diff_terminal(report, Console(file=io.StringIO(), width=120), verbose=True)
            render_diff_page(report, Observed(), Observed())


def test_a_mean_of_huge_values_is_a_number_not_an_overflow() -> None:
    assert aggregate("mean", [1e308, 1e308], [1e308, 1e308]) == math.inf


def _row(key: str, baseline: float | None, candidate: float | None) -> Difference:
    return Difference(key=key, group="throughput", state="differs", baseline=baseline, candidate=candidate, why="")


def test_a_zero_side_of_a_diff_is_said_as_such() -> None:
    rows = [_row("generation_throughput", 0.0, 40.0)]
    assert measure_gap(rows) is None
    note = gap_note(rows, None)
    assert note is not None and "baseline's is zero" in note
    rows = [_row("generation_throughput", 40.0, math.inf)]
    assert measure_gap(rows) is None
    assert "candidate's is inf" in (gap_note(rows, None) or "")
    rows = [_row("generation_throughput", 40.0, 20.0)]
    gap = measure_gap(rows)
    assert gap is not None and gap.ratio == 2.0
    assert gap_note(rows, gap) is None
