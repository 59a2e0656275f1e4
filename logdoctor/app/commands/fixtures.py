"""`logdoctor test`: rules tested against fixture logs, golden event files and their own samples.

logdoctor test fixtures/logs/story --format junit -o junit.xml
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from logdoctor.app.cli import LogdoctorCommand, examples
from logdoctor.app.commands.common import handle_errors, load_rule_set, quiet_wanted, rules_options


@click.command(
    "test",
    cls=LogdoctorCommand,
    epilog=examples("logdoctor test", "logdoctor test fixtures/logs/story --format junit -o junit.xml"),
)
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path), metavar="[PATH...]")
@rules_options
@click.option("--format", "fmt", type=click.Choice(["text", "junit"]), default="text", show_default=True)
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write the report to FILE, not stdout."
)
@click.option("--update", is_flag=True, help="Rewrite the golden event files (never the expectations).")
@click.option("--samples/--no-samples", default=True, show_default=True, help="Also run every rule's own samples.")
@handle_errors
def fixture_tests(
    paths: tuple[Path, ...],
    rule_dirs: tuple[Path, ...],
    no_builtin_rules: bool,
    fmt: str,
    output: Path | None,
    update: bool,
    samples: bool,
) -> None:
    """Test rules against fixture logs, golden event files and the rules' own samples.

    Runs every case (`<case>.log`, `.log.gz` or folder, with `<case>.expect.yaml`) under the PATHs
    (default: fixtures/logs of this directory or the nearest parent). Exit 0 when everything passed,
    1 when a case, golden file or sample failed, 2 for a bad test file. See docs/testing.md."""
    from logdoctor.testing.cases import default_fixture_dir, run_suite
    from logdoctor.testing.junit import render_junit
    from logdoctor.testing.report import render_text, summary_line

    rules = load_rule_set(rule_dirs, no_builtin_rules)
    debug = bool(click.get_current_context().find_root().params.get("debug"))
    suite = run_suite(
        list(paths) or [default_fixture_dir()], rules, update_golden=update, samples=samples, raise_errors=debug
    )
    if fmt == "junit":
        report = render_junit(suite)
    else:
        colour = output is None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        report = render_text(suite, colour=colour)
    if output is None:
        click.echo(report, nl=False)
    else:
        output.write_text(report, encoding="utf-8")
        if not quiet_wanted():
            click.echo(f"{output}: {summary_line(suite)}", err=True)
    click.get_current_context().exit(int(suite.exit_status))
