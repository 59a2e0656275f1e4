"""The docs and `--help` agree: every option of every command is in docs/cli.md's option reference with the
default `--help` shows, and nothing there is not an option; a default written in docs/cli.md's prose tables is
the one `--help` shows; every field of the JSON report's schema is named in docs/json.md (the diff report's in
docs/diff.md, where docs/json.md sends its reader).

A new command is covered as soon as it is in the group: its options need rows in docs/cli.md, or in the file
DOCUMENTED_IN names for it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest

from logdoctor.app.cli import main
from logdoctor.app.clidoc import command_paths, option_rows, shown_default
from logdoctor.app.helpformat import long_name

ROOT = Path(__file__).resolve().parents[1]
CLI_MD = ROOT / "docs" / "cli.md"

# A command whose option reference lives in another file than docs/cli.md: its full name -> that file.
DOCUMENTED_IN: dict[str, Path] = {}

# Flags docs/cli.md quotes that are not logdoctor's: other programs' (vLLM's, docker's) and the mistyped one of
# the usage-error example.
FOREIGN_FLAGS = frozenset(
    {"--tail", "--disable-log-stats", "--decode-log-interval", "--log-level", "--env", "--bogus", "--enable-metrics"}
)


def _commands() -> list[tuple[str, click.Command, click.Context]]:
    root = click.Context(main, info_name="logdoctor")
    return [("logdoctor", main, root), *command_paths(main, root)]


COMMANDS = _commands()


def _reference(text: str) -> dict[str, list[tuple[str, str]]]:
    """`### \\`logdoctor CMD\\`` sections of the option reference: their `| \\`names\\` | default |` rows."""
    part = text.split("\n## Option reference\n", 1)
    assert len(part) == 2, "no '## Option reference' section"
    sections: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    for line in part[1].splitlines():
        if line.startswith("## "):
            break
        heading = re.fullmatch(r"### `(logdoctor[^`]*)`", line)
        if heading:
            current = sections.setdefault(heading.group(1), [])
            continue
        row = re.fullmatch(r"\| `([^`]+)` \| (?:`([^`]*)`|-) \|", line)
        if row and current is not None:
            current.append((row.group(1), row.group(2) or ""))
    return sections


@pytest.mark.parametrize(("path", "command", "ctx"), COMMANDS, ids=[path for path, _, _ in COMMANDS])
def test_every_option_is_in_the_reference_with_its_default(
    path: str, command: click.Command, ctx: click.Context
) -> None:
    rows = option_rows(command, ctx)
    doc = DOCUMENTED_IN.get(path, CLI_MD)
    documented = _reference(doc.read_text(encoding="utf-8"))
    if not rows:
        return
    assert path in documented, f"{doc.name} has no option reference for `{path}`; `python -m logdoctor.app.clidoc`"
    assert sorted(documented[path]) == sorted(rows), (
        f"{doc.name} and `{path} --help` disagree:\n  docs only: {sorted(set(documented[path]) - set(rows))}"
        f"\n  --help only: {sorted(set(rows) - set(documented[path]))}"
    )


def test_the_reference_names_no_command_that_is_not_there() -> None:
    documented = _reference(CLI_MD.read_text(encoding="utf-8"))
    assert set(documented) <= {path for path, _, _ in COMMANDS}


def _options() -> dict[str, list[str]]:
    """Every option name -> the defaults `--help` shows for it (one a command that has it), and its help text
    (where a default that depends on the input is written: `(default: ./.logdoctor.yaml when present)`)."""
    out: dict[str, list[str]] = {}
    for _, command, ctx in COMMANDS:
        for param in command.get_params(ctx):
            if isinstance(param, click.Option):
                for name in [*param.opts, *param.secondary_opts]:
                    out.setdefault(name, []).extend([shown_default(param, ctx), f"help: {param.help or ''}"])
    return out


def test_every_option_the_prose_names_exists() -> None:
    text = CLI_MD.read_text(encoding="utf-8").split("\n## Option reference\n", 1)[0]
    named = set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]+)", text))
    unknown = named - set(_options()) - FOREIGN_FLAGS
    assert not unknown, f"docs/cli.md names options no command has: {sorted(unknown)}"


def _same(written: str, shown: str) -> bool:
    written, shown = written.strip("` "), shown.strip("` ")
    if shown.startswith("help: "):
        return f"default: {written}" in shown or f"default {written}" in shown
    try:
        return float(written) == float(shown)
    except ValueError:
        return written.lower() == shown.lower()


def test_defaults_in_the_prose_tables_are_the_ones_help_shows() -> None:
    """A table row about one option that says `(default X)`, or a table with a default column, must say what
    `--help` says (a row once said 60 where --help said 300)."""
    options = _options()
    text = CLI_MD.read_text(encoding="utf-8").split("\n## Option reference\n", 1)[0]
    checked = 0
    default_column: int | None = None
    for line in text.splitlines():
        if not line.startswith("|"):
            default_column = None
            continue
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if "default" in cells:
            default_column = cells.index("default")
            continue
        flags = [f for f in re.findall(r"`(--[a-z][a-z0-9-]+)", cells[0]) if f in options]
        if len(flags) != 1:
            continue
        written: str | None = None
        if default_column is not None and default_column < len(cells):
            written = cells[default_column]
        elif match := re.search(r"\(default ([^),;]+)\)", line):
            written = match.group(1)
        if written is None:
            continue
        shown = [d for d in options[flags[0]] if d]
        assert shown, f"docs/cli.md gives {flags[0]} a default ({written}); --help shows none"
        assert any(_same(written, d) for d in shown), f"{flags[0]}: docs/cli.md says {written}, --help {shown}"
        checked += 1
    assert checked >= 4  # the input caps' table and the report options' rows at least


def _schema() -> dict[str, object]:
    schema: dict[str, object] = json.loads((ROOT / "docs" / "schema" / "report.schema.json").read_text())
    return schema


def _named(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    return {word for span in re.findall(r"`([^`]+)`", text) for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", span)}


def _reachable(defs: dict[str, dict[str, object]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        name = todo.pop()
        if name in seen or name not in defs:
            continue
        seen.add(name)
        todo += re.findall(r'"#/\$defs/([A-Za-z0-9_]+)"', json.dumps(defs[name]))
    return seen


def test_every_field_of_the_json_schema_is_documented() -> None:
    schema = _schema()
    defs = schema["$defs"]
    assert isinstance(defs, dict)
    in_json, in_diff = _named(ROOT / "docs" / "json.md"), _named(ROOT / "docs" / "diff.md")
    diff_only = _reachable(defs, "DiffReport") - _reachable(defs, "DeploymentsReport") - _reachable(defs, "FleetReport")
    assert "docs/diff.md" in (ROOT / "docs" / "json.md").read_text(encoding="utf-8")
    missing = [
        f"{name}.{field} ({'docs/diff.md' if name in diff_only else 'docs/json.md'})"
        for name, definition in defs.items()
        for field in definition.get("properties", {})
        if field not in (in_diff if name in diff_only else in_json)
    ]
    assert not missing, f"schema fields the docs never name: {missing}"


def test_help_groups_options_with_examples_first_and_exit_codes_last() -> None:
    from click.testing import CliRunner

    for name in ("diagnose", "diff", "parse", "watch", "test"):
        text = CliRunner().invoke(main, [name, "--help"], terminal_width=100).output
        headings = ("\nInput:", "\nOutput:", "\nRules:", "\nOther options:")
        options = min(at for heading in headings if (at := text.find(heading)) >= 0)
        examples, codes = text.find("Examples:"), text.find("Exit codes")
        assert 0 < examples < options < codes, name
        assert text.rstrip().splitlines()[-1].lstrip().startswith(("130", "4")), name  # the codes end the help
    diagnose = CliRunner().invoke(main, ["diagnose", "--help"], terminal_width=100).output
    for heading in ("Input:", "Output:", "Rules:", "SSH: host targets", "URL and log-store targets"):
        assert f"\n{heading}" in diagnose, heading
    ssh = diagnose.split("\nSSH: host targets", 1)[1].split("\n\n", 1)[0]
    assert "--known-hosts" in ssh and "--format" not in ssh


def test_every_option_has_a_section_or_is_listed_as_other() -> None:
    """An option no section names falls under "Other options": shown, never lost."""
    from logdoctor.app.helpformat import OTHER, section_of

    for _, command, ctx in COMMANDS:
        for param in command.get_params(ctx):
            if isinstance(param, click.Option) and "--help" not in param.opts:
                assert section_of(param) != OTHER or long_name(param) in ("--version", "--debug", "--quiet", "--color")
