"""Exit codes: an internal error (a bug: any uncaught exception) exits 4 with one line and a --debug hint, never 1;
`--debug` adds the traceback and keeps every documented code; Ctrl-C is 130; a group named alone prints its help."""

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


def test_debug_shows_the_traceback_and_keeps_exit_4(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> object:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(run_module, "diagnose_parsed", broken)
    result = CliRunner().invoke(main, ["--debug", "diagnose", str(STORY)])
    assert result.exit_code == int(ExitStatus.INTERNAL)
    assert "Traceback (most recent call last)" in result.stderr
    assert "ZeroDivisionError: boom" in result.stderr


@pytest.mark.parametrize("debug", [[], ["--debug"]], ids=["plain", "debug"])
@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("missing", ExitStatus.USAGE),
        ("empty", ExitStatus.USAGE),
        ("directory", ExitStatus.USAGE),
        ("bad-rule", ExitStatus.USAGE),
        ("findings", ExitStatus.FINDINGS),
        ("prometheus-down", ExitStatus.COLLECTION),
    ],
)
def test_debug_keeps_every_documented_exit_code(
    tmp_path: Path, case: str, expected: ExitStatus, debug: list[str]
) -> None:
    (tmp_path / "empty.log").write_text("")
    rule_dir = tmp_path / "rules" / "kv-cache-pressure"
    rule_dir.mkdir(parents=True)
    (rule_dir / "bad.yaml").write_text('title: t\nengines: [vllm]\nwhen: "x <== 1"\nimpact: 5\n')
    args = {
        "missing": ["diagnose", str(tmp_path / "missing.log")],
        "empty": ["diagnose", str(tmp_path / "empty.log")],
        "directory": ["parse", str(tmp_path)],
        "bad-rule": ["rules", "check", str(tmp_path / "rules")],
        "findings": ["diagnose", str(STORY)],
        "prometheus-down": ["diagnose", "prometheus://127.0.0.1:9", "--timeout", "2"],
    }[case]
    result = CliRunner().invoke(main, [*debug, *args])
    assert result.exit_code == int(expected), result.stderr
    if expected != ExitStatus.FINDINGS:
        assert ("Traceback (most recent call last)" in result.stderr) == bool(debug)
        assert "logdoctor: error: " in result.stderr


def test_interrupt_is_exit_130(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: object, **kwargs: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(run_module, "diagnose_parsed", interrupted)
    for debug in ([], ["--debug"]):
        result = CliRunner().invoke(main, [*debug, "diagnose", str(STORY)])
        assert result.exit_code == int(ExitStatus.INTERRUPTED) == 130
        assert result.stderr.strip() == "logdoctor: interrupted"


@pytest.mark.parametrize("args", [[], ["rules"]])
def test_a_group_alone_prints_its_help_and_exits_0(args: list[str]) -> None:
    result = CliRunner().invoke(main, args, prog_name="logdoctor")
    assert result.exit_code == 0
    assert result.stdout.startswith(f"Usage: {' '.join(['logdoctor', *args])} [OPTIONS] COMMAND")
    assert "Commands:" in result.stdout
    assert "error" not in result.stderr


def test_findings_stay_exit_1_and_usage_exit_2(tmp_path: Path) -> None:
    assert CliRunner().invoke(main, ["diagnose", str(STORY)]).exit_code == 1
    assert CliRunner().invoke(main, ["diagnose", str(tmp_path / "missing.log")]).exit_code == 2
