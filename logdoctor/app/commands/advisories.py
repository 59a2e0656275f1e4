"""`logdoctor advisories`: the known performance issues of engine releases, and which apply to a version.

logdoctor advisories --engine vllm --version 0.20.1
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from logdoctor.app.cli import examples
from logdoctor.app.commands.common import advisories_option, handle_errors, stdout_console
from logdoctor.errors import ExitStatus, UsageError

if TYPE_CHECKING:
    from logdoctor.engine.advisories import LoadedAdvisory


@click.command(
    epilog=examples(
        "logdoctor advisories",
        "logdoctor advisories --engine vllm --version 0.20.1",
        "logdoctor advisories --advisories team-advisories/ --test",
        "logdoctor advisories --engine nccl --format json",
    )
)
@click.option("--engine", metavar="NAME", help="Only this engine's advisories (vllm, sglang, nccl, torch, driver).")
@click.option("--version", "version", metavar="VERSION", help="Only the advisories whose ranges include VERSION.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--test", "run_tests_too", is_flag=True, help="Run each advisory's tests; exit 1 if one fails.")
@advisories_option
@handle_errors
def advisories(engine: str | None, version: str | None, fmt: str, run_tests_too: bool) -> None:
    """List known performance issues of engine releases (all, or those that apply to --version)."""
    from logdoctor.engine.advisories import ADVISORY_ENGINES, active_advisories, advisories_for, run_tests, score_for
    from logdoctor.engine.versions import parse_version

    if engine is not None and engine not in ADVISORY_ENGINES:
        raise UsageError(f"unknown engine '{engine}' for --engine (one of {', '.join(ADVISORY_ENGINES)})")
    if version is not None and parse_version(version) is None:
        raise UsageError(f"--version {version!r} is not a PEP 440 version (e.g. 0.20.1)")
    if version is not None and engine is None:
        raise UsageError("--version needs --engine (a version number means nothing without its engine)")
    loaded = list(active_advisories())
    listed = advisories_for(loaded, engine, version)
    if run_tests_too:
        problems = [p for item, _ in listed for p in run_tests(item)]
        for problem in problems:
            click.echo(f"FAIL  {problem}")
        click.echo(
            f"{len(listed)} advisories, {sum(len(i.advisory.tests) for i, _ in listed)} tests, {len(problems)} failed"
        )
        if problems:
            raise SystemExit(ExitStatus.FINDINGS)
        return
    if fmt == "json":
        rows = [
            {
                "id": item.id,
                "engine": item.advisory.engine,
                "title": item.advisory.title,
                "cause": item.advisory.cause,
                "affected": item.affected_text,
                "fixed_in": item.advisory.fixed_in,
                "applies": affects,
                "condition": item.advisory.when,
                "effect": item.advisory.effect.statement,
                "slowdown": item.advisory.effect.slowdown,
                "score": score_for(item.advisory.effect.slowdown),
                "workaround": list(item.advisory.workaround),
                "references": list(item.advisory.references),
                "path": item.path,
            }
            for item, affects in listed
        ]
        click.echo(json.dumps({"engine": engine, "version": version, "advisories": rows}, indent=2))
        return
    _table(listed, engine, version)


def _table(listed: list[tuple[LoadedAdvisory, bool | None]], engine: str | None, version: str | None) -> None:
    from rich.table import Table
    from rich.text import Text

    from logdoctor.engine.advisories import ENGINE_LABELS
    from logdoctor.sanitize import clean_text

    console = stdout_console()
    if version is not None:
        label = ENGINE_LABELS.get(engine or "", engine or "")
        head = f"{len(listed)} known issue(s) apply to {label} {version}"
        console.print(Text(head + (" (each only where its condition holds)" if listed else "")))
    table = Table(show_lines=False)
    for column in ("id", "engine", "affected", "fixed in", "condition", "title"):
        table.add_column(column, no_wrap=column in ("id", "engine", "fixed in"), overflow="fold")
    for item, _ in sorted(listed, key=lambda pair: (pair[0].advisory.engine, pair[0].id)):
        adv = item.advisory
        cells = (item.id, adv.engine, item.affected_text, adv.fixed_in or "not yet", adv.when or "-", adv.title)
        table.add_row(*(Text(clean_text(cell)) for cell in cells))
    console.print(table)
