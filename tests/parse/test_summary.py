"""A summary of labelled measurements (logdoctor/parse/summary.py): each line its own named run, read only beside
another line of the same kind of unit.

The first input is lines of a real pull request's summary (fixtures/logs/realworld11/vllm-c404.log); the others are
constructed, as marked."""

from __future__ import annotations

from pathlib import Path

from logdoctor.engine.rules import load_rules
from logdoctor.events import BenchmarkResult
from logdoctor.parse.pipeline import parse_text
from logdoctor.pipeline.run import LineSource, diagnose_sources

_C404 = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "realworld11" / "vllm-c404.log"


def _results(text: str) -> list[BenchmarkResult]:
    return [e for e in parse_text(text) if isinstance(e, BenchmarkResult)]


def test_two_labelled_latencies_are_two_named_runs() -> None:
    text = "\n".join(_C404.read_text().splitlines()[11:13]) + "\n"  # `Eager mode: ...`, `Compiled mode: ...`
    eager, compiled = _results(text)
    assert (eager.values["label"], eager.mean_e2e_ms) == ("Eager mode", 199.104)
    assert (compiled.values["label"], compiled.mean_e2e_ms) == ("Compiled mode", 51.841)


def test_a_line_alone_or_beside_another_kind_of_unit_is_no_summary() -> None:
    # constructed
    assert not _results("Time to load: 12.5 s\n")
    assert not _results("Baseline: 45.2 tok/s\nStartup: 30 s\n")
    assert not _results("Baseline: 45.2 tok/s\n\n\n\n\nWith EAGLE: 81.0 tok/s\n")  # too far apart
    rates = _results("- Baseline: 45.2 tok/s\n- With EAGLE (k=3): 81.0 tok/s (n=5)\n")
    assert [r.output_throughput for r in rates] == [45.2, 81.0]


def test_the_slower_named_run_is_the_finding_with_its_measured_gap() -> None:
    lines = list(enumerate(_C404.read_text().splitlines(), 1))
    diagnosis = diagnose_sources([LineSource("vllm-c404.log", lines)], load_rules())
    top = diagnosis.findings[0]
    assert top.cause == "cuda-graphs-disabled" and top.score < 50
    assert "3.84x slower" in top.explanation and "Compiled mode" in top.explanation
