"""CLI polish: examples in every --help, --color, global options after the subcommand,
one-line usage errors, shell completion, progress on stderr only for a terminal."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from rich.console import Console

from logdoctor.app import progress
from logdoctor.app.cli import hoist_global_options, main
from logdoctor.app.progress import ReadProgress

ROOT = Path(__file__).resolve().parents[1]
STORY = ROOT / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"
LOGDOCTOR = [sys.executable, "-m", "logdoctor.app.cli"]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR", "FORCE_COLOR")}
    env.update(extra)
    return env


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = [prefix]
    ctx = click.Context(group)
    for name in group.list_commands(ctx):  # the root group loads each command's module when asked for it
        command = group.get_command(ctx, name)
        assert command is not None
        if isinstance(command, click.Group):
            out += _commands(command, (*prefix, name))
        else:
            out.append((*prefix, name))
    return out


@pytest.mark.parametrize("path", _commands(main), ids=lambda p: " ".join(p) or "logdoctor")
def test_every_help_has_examples(path: tuple[str, ...]) -> None:
    result = CliRunner().invoke(main, [*path, "--help"])
    assert result.exit_code == 0
    assert "Examples:" in result.output or "Example:" in result.output
    example = result.output.split("Example")[1]
    assert "logdoctor " in example


def test_global_options_after_the_subcommand() -> None:
    assert hoist_global_options(["diagnose", "x.log", "--debug", "--color", "never"], ["diagnose"]) == [
        "--debug",
        "--color",
        "never",
        "diagnose",
        "x.log",
    ]
    assert hoist_global_options(["diagnose", "--", "--debug"], ["diagnose"]) == ["diagnose", "--", "--debug"]
    result = CliRunner().invoke(main, ["parse", str(STORY), "--version"])
    assert result.exit_code == 0 and "logdoctor, version" in result.output
    result = CliRunner().invoke(main, ["diagnose", str(STORY), "--format", "json", "--debug", "--color=never"])
    assert result.exit_code == 1 and '"findings"' in result.stdout


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["diagnose", "--bogus"], "No such option"),
        (["frobnicate"], "No such command"),
        (["diagnose", str(STORY), "--format", "yaml"], "Invalid value for '--format'"),
        (["rules", "show"], "Missing argument"),
        (["--color", "purple", "diagnose"], "Invalid value for '--color'"),
    ],
)
def test_usage_errors_are_one_line(args: list[str], words: str) -> None:
    result = subprocess.run([*LOGDOCTOR, *args], capture_output=True, text=True, env=_env(), cwd=ROOT)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert words in lines[0] and "error:" in lines[0] and "--help" in lines[0]
    assert "Usage:" not in result.stderr


def test_colour_follows_the_choice_and_the_environment() -> None:
    def ansi(*args: str, **env: str) -> bool:
        out = subprocess.run(
            [*LOGDOCTOR, *args, "diagnose", str(STORY)], capture_output=True, text=True, env=_env(**env)
        ).stdout
        return "\x1b[" in out

    assert not ansi()  # piped: no colour
    assert ansi(FORCE_COLOR="1")
    assert ansi("--color", "always")
    assert not ansi("--color", "never", FORCE_COLOR="1")
    assert not ansi(NO_COLOR="1", FORCE_COLOR="")


def test_shell_completion_script() -> None:
    out = subprocess.run(
        [*LOGDOCTOR], capture_output=True, text=True, env=_env(_LOGDOCTOR_COMPLETE="bash_source"), cwd=ROOT
    )
    assert out.returncode == 0
    assert "_logdoctor_completion" in out.stdout and "complete " in out.stdout


def test_progress_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "SHOW_AFTER", 0.0)
    monkeypatch.setattr(progress, "UPDATE_EVERY", 10)
    monkeypatch.delenv("LOGDOCTOR_NO_PROGRESS", raising=False)
    lines = [(n, f"line {n}") for n in range(1, 101)]
    shown = io.StringIO()
    terminal = Console(file=shown, force_terminal=True, width=100)
    with ReadProgress(terminal) as bar:
        assert list(bar.wrap("big.log", None, iter(lines))) == lines
    assert "reading big.log" in shown.getvalue()
    piped = io.StringIO()
    with ReadProgress(Console(file=piped, force_terminal=False)) as bar:
        assert list(bar.wrap("big.log", None, iter(lines))) == lines
    assert piped.getvalue() == ""


def test_nothing_on_a_piped_stderr(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    big.write_text(STORY.read_text(encoding="utf-8") * 200, encoding="utf-8")
    result = subprocess.run(
        [*LOGDOCTOR, "diagnose", str(big), "--format", "json", "-o", str(tmp_path / "r.json")],
        capture_output=True,
        text=True,
        env=_env(),
    )
    assert result.returncode == 1 and result.stderr == ""


def test_each_command_summary_is_the_first_paragraph_of_its_help() -> None:
    """`logdoctor --help` lists the commands from cli.COMMANDS without importing them: each summary there must
    be what click would shorten from the command's own help."""
    from logdoctor.app.cli import COMMANDS

    ctx = click.Context(main)
    for name, (_, _, summary) in COMMANDS.items():
        command = main.get_command(ctx, name)
        assert command is not None and command.help is not None
        assert command.help.partition("\n\n")[0].split() == summary.split(), name
        assert command.name == name


def test_help_and_version_import_no_command() -> None:
    """The group's help lists every command and imports none of their modules (nor rich, nor pydantic)."""
    probe = (
        "import sys\n"
        "from logdoctor.app.cli import main\n"
        "for args in (['--help'], ['--version']):\n"
        "    try:\n"
        "        main(args)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "loaded = [m for m in sys.modules if m.startswith(('logdoctor.app.commands', 'rich', 'pydantic'))]\n"
        "print('LOADED', loaded)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=_env())
    assert done.returncode == 0, done.stderr
    assert "LOADED []" in done.stdout
    for name in ("diagnose", "diff", "parse", "rules", "test", "watch"):
        assert f"\n  {name} " in done.stdout


def test_a_mistyped_command_suggests_among_commands_not_yet_loaded() -> None:
    done = subprocess.run([*LOGDOCTOR, "diagnos", "x.log"], capture_output=True, text=True, timeout=120, env=_env())
    assert done.returncode == 2
    assert "No such command 'diagnos'. Did you mean 'diagnose'?" in done.stderr


def test_the_console_script_answers_version_as_click_does_without_click() -> None:
    by_click = CliRunner().invoke(main, ["--version"])
    probe = (
        "import sys\n"
        "sys.argv = ['logdoctor', '--version']\n"
        "from logdoctor.app.entry import main\n"
        "main()\n"
        "print('CLICK' if 'click' in sys.modules else 'NO CLICK', file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, env=_env())
    assert done.returncode == by_click.exit_code == 0
    assert done.stdout == by_click.output
    assert done.stderr.strip() == "NO CLICK"


def test_rules_show_a_cause_lists_its_rules_and_a_typo_gets_a_suggestion() -> None:
    result = CliRunner().invoke(main, ["rules", "show", "spec-low-acceptance"])
    assert result.exit_code == 0
    assert result.stdout.startswith("spec-low-acceptance is a cause; its rules")
    assert "  low-acceptance " in result.stdout
    shown = CliRunner().invoke(main, ["rules", "show", "low-acceptance"])
    assert shown.exit_code == 0
    assert shown.stdout.startswith("# ") and "low-acceptance.yaml" in shown.stdout.splitlines()[0]
    typo = CliRunner().invoke(main, ["rules", "show", "spec-low-aceptance"])
    assert typo.exit_code == 2
    assert "did you mean spec-low-acceptance" in typo.stderr


def test_rules_list_at_80_columns_keeps_every_id_whole() -> None:
    from logdoctor.engine.rules import load_rules

    result = subprocess.run(
        [*LOGDOCTOR, "rules", "list"], capture_output=True, text=True, env=_env(COLUMNS="80"), cwd=ROOT
    )
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines)
    assert "…" not in result.stdout
    shown = {line.split()[0] for line in lines if line.startswith("  ") and line.strip()}
    rules = load_rules()
    assert {r.id for r in rules} <= shown
    assert {r.rule.cause for r in rules} <= {line.split()[0] for line in lines if line and not line.startswith(" ")}
