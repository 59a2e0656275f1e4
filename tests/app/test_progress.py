"""Progress on stderr for every way a local input is read: bytes done of the total, the percentage, the rate and
the time left; the worker path (a big file parsed in byte ranges by forked processes) included. Nothing when
stderr is not a terminal or with --quiet."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console
from rich.text import Text

from logdoctor.app import progress
from logdoctor.app.progress import ReadProgress
from logdoctor.pipeline.run import local_line_sources, parse_each
from tests.generated import generated_log

ROOT = Path(__file__).resolve().parents[2]
STORY = ROOT / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("progress") / "serve.log"
    generated_log(path, "3M")
    return path


def _recorded(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int | None]]:
    """Every (bytes done, total) the bar is moved to."""
    seen: list[tuple[int, int | None]] = []
    update = ReadProgress._update

    def record(self: ReadProgress, item: progress._Input, done: int, *, final: bool = False) -> None:
        seen.append((done, item.total))
        update(self, item, done, final=final)

    monkeypatch.setattr(ReadProgress, "_update", record)
    monkeypatch.setattr(progress, "SHOW_AFTER", 0.0)
    monkeypatch.delenv("LOGDOCTOR_NO_PROGRESS", raising=False)
    return seen


def _terminal() -> tuple[Console, io.StringIO]:
    shown = io.StringIO()
    return Console(file=shown, force_terminal=True, width=120), shown


def test_the_worker_path_shows_bytes_percentage_rate_and_time_left(
    served: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import logdoctor.sources.local as local

    monkeypatch.setattr(local, "PREFILTER_MIN_BYTES", 0)  # a few-MB file split as a gigabyte one is
    monkeypatch.setattr(local, "PREFILTER_PART_BYTES", 1)
    monkeypatch.setenv("LOGDOCTOR_PREFILTER_PARTS", "6")
    monkeypatch.delenv("LOGDOCTOR_PARSE_WORKERS", raising=False)
    seen = _recorded(monkeypatch)
    size = served.stat().st_size
    console, shown = _terminal()
    sources = local_line_sources([str(served)], engine="auto")
    assert sources[0].apart is not None  # the workers are parsing it
    with ReadProgress(console) as bar:
        parsed = list(parse_each(bar.sources(sources), "auto"))
    assert parsed and sum(1 for _ in parsed[0].events) > 0
    done = [d for d, _ in seen]
    assert all(total == size for _, total in seen)
    assert done == sorted(done) and done[-1] == size  # forward only, to the whole file
    assert any(0 < d < size for d in done)  # a range at a time, not only the end
    text = Text.from_ansi(shown.getvalue()).plain
    assert re.search(r"reading \S*serve\.log .*\d\.\d/\d\.\d MB +\d+% +\d+\.\d MB/s +\d:\d\d:\d\d", text), text


@pytest.mark.parametrize("prefilter", [False, True], ids=["read-here", "grep-prefilter"])
def test_one_process_reads_move_the_bar_through_the_file(
    served: Path, monkeypatch: pytest.MonkeyPatch, prefilter: bool
) -> None:
    import logdoctor.sources.local as local

    monkeypatch.setattr(progress, "UPDATE_EVERY", 16)
    monkeypatch.setattr(progress, "UPDATE_SECONDS", 0.0)
    monkeypatch.setenv("LOGDOCTOR_PARSE_WORKERS", "0")
    monkeypatch.setattr(local, "PREFILTER_MIN_BYTES", 0 if prefilter else 1 << 40)
    seen = _recorded(monkeypatch)
    size = served.stat().st_size
    console, shown = _terminal()
    with ReadProgress(console) as bar:
        list(parse_each(bar.sources(local_line_sources([str(served)])), "auto"))
    done = [d for d, _ in seen]
    assert len(done) >= 3 and done == sorted(done) and all(d <= size for d in done)
    assert done[-2] > size // 2  # most of the way before the end (the grep path estimates from line numbers)
    assert "serve.log" in shown.getvalue()


def test_quiet_and_a_piped_stderr_show_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _recorded(monkeypatch)
    lines = [(n, f"line {n}") for n in range(1, 10_000)]
    piped = io.StringIO()
    with ReadProgress(Console(file=piped, force_terminal=False)) as bar:
        assert list(bar.wrap("x.log", None, iter(lines))) == lines
    quiet = io.StringIO()
    with ReadProgress(Console(file=quiet, force_terminal=True, quiet=True)) as bar:
        assert list(bar.wrap("x.log", None, iter(lines))) == lines
    assert piped.getvalue() == quiet.getvalue() == "" and seen == []


def test_quiet_silences_notes_but_not_results_or_errors(tmp_path: Path) -> None:
    from logdoctor.app.cli import main

    loud = CliRunner().invoke(main, ["parse", str(STORY)])
    quiet = CliRunner().invoke(main, ["--quiet", "parse", str(STORY)])
    assert "candidates" in loud.stderr and quiet.stderr == ""
    assert quiet.stdout == loud.stdout and quiet.exit_code == 0
    missing = CliRunner().invoke(main, ["parse", str(tmp_path / "nope.log"), "-q"])
    assert missing.exit_code == 2 and "logdoctor: error:" in missing.stderr
