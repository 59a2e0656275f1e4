"""An internal error (a bug: any uncaught exception) exits 4 with one line and a --debug hint, never 1."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from logdoctor.app.cli import main
from logdoctor.errors import ExitStatus
from logdoctor.pipeline import run as run_module

STORY = Path(__file__).resolve().parents[1] / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"


def test_internal_error_is_exit_4_with_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> object:
        raise ZeroDivisionError("boom \x1b[2J")

    monkeypatch.setattr(run_module, "diagnose_parsed", broken)
    result = CliRunner().invoke(main, ["diagnose", str(STORY)])
    assert result.exit_code == int(ExitStatus.INTERNAL)
    assert int(ExitStatus.INTERNAL) == 4
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("logdoctor: internal error: ZeroDivisionError: boom \\x1b[2J")
    assert "--debug" in lines[0]
    assert "Traceback" not in result.stderr


def test_debug_shows_the_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> object:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(run_module, "diagnose_parsed", broken)
    result = CliRunner().invoke(main, ["--debug", "diagnose", str(STORY)])
    assert isinstance(result.exception, ZeroDivisionError)


def test_findings_stay_exit_1_and_usage_exit_2(tmp_path: Path) -> None:
    assert CliRunner().invoke(main, ["diagnose", str(STORY)]).exit_code == 1
    assert CliRunner().invoke(main, ["diagnose", str(tmp_path / "missing.log")]).exit_code == 2
