"""`logdoctor diff`: what the fast deployment had that the slow one lacks.

logdoctor diff sglang.log vllm.log
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from logdoctor.app.cli import LogdoctorCommand, examples
from logdoctor.app.commands.common import (
    EngineChoice,
    advisories_option,
    exit_code_for,
    explain_wanted,
    handle_errors,
    load_rule_set,
    perf_option_declarations,
    report_options,
    rules_options,
    ssh_options,
    stderr_console,
    stdout_console,
)
from logdoctor.app.options import read_limit_options
from logdoctor.app.stores import store_options
from logdoctor.app.urltargets import url_options
from logdoctor.errors import UsageError

if TYPE_CHECKING:
    from logdoctor.app.fleet import HostOptions
    from logdoctor.app.stores import StoreOptions
    from logdoctor.diff import DiffReport
    from logdoctor.report.observed import Observed
    from logdoctor.sources.limits import ReadLimits
    from logdoctor.sources.urls import UrlOptions


def diff_sides(
    targets: Sequence[str], baseline: Sequence[str], candidate: Sequence[str]
) -> tuple[list[str], list[str]]:
    """`BASELINE CANDIDATE`, or `--baseline`/`--candidate` (each repeatable), or one option with the other
    side given positionally."""
    if baseline and candidate:
        if targets:
            raise UsageError("give the sides as BASELINE CANDIDATE or with --baseline/--candidate, not both")
        sides = (list(baseline), list(candidate))
    elif baseline or candidate:
        if not targets:
            missing = "candidate" if baseline else "baseline"
            raise UsageError(f"no {missing}: give its logs as arguments or with --{missing}")
        sides = (list(baseline), list(targets)) if baseline else (list(targets), list(candidate))
    elif len(targets) == 2:
        sides = ([targets[0]], [targets[1]])
    else:
        raise UsageError(
            "diff compares two deployments: BASELINE CANDIDATE, or --baseline PATH --candidate PATH "
            "(each repeatable, for several files of one deployment)"
        )
    if [*sides[0], *sides[1]].count("-") > 1:
        raise UsageError("only one side can be read from stdin (-)")
    return sides


def emit_diff(report: DiffReport, fmt: str, verbose: bool, observed: Sequence[Observed] = ()) -> None:
    from logdoctor.report.diff_markdown import render_diff_markdown
    from logdoctor.report.diff_terminal import render_diff_terminal
    from logdoctor.report.json import render_json

    if fmt == "html":
        from logdoctor.report.formats import render_diff_page

        click.echo(render_diff_page(report, *observed), nl=False)
    elif fmt == "json":
        click.echo(render_json(report))
    elif fmt == "markdown":
        click.echo(render_diff_markdown(report), nl=False)
    else:
        render_diff_terminal(report, stdout_console(), verbose=verbose, explain=explain_wanted())


_SIDE_ENGINE = EngineChoice()


@click.command(
    cls=LogdoctorCommand,
    epilog=examples(
        "logdoctor diff sglang.log vllm.log",
        "logdoctor diff --baseline fast.log --candidate slow.log --candidate nccl.log",
        "logdoctor diff root@fast-host root@slow-host --format json",
        "logdoctor diff 'clickhouse://ch:8123/otel_logs#pod=vllm-0' 'clickhouse://ch:8123/otel_logs#pod=vllm-1'",
    ),
)
@click.argument("targets", nargs=-1, metavar="[BASELINE CANDIDATE]")
@click.option(
    "--baseline", "baseline_targets", multiple=True, metavar="PATH", help="A log of the fast deployment (repeatable)."
)
@click.option(
    "--candidate", "candidate_targets", multiple=True, metavar="PATH", help="A log of the slow deployment (repeatable)."
)
@click.option(
    "--baseline-engine", type=_SIDE_ENGINE, default="auto", show_default=True, help="Force the baseline's engine."
)
@click.option(
    "--candidate-engine", type=_SIDE_ENGINE, default="auto", show_default=True, help="Force the candidate's engine."
)
@click.option("--all", "show_all", is_flag=True, help="Also show equal rows and rows neither log shows.")
@click.option(
    "--runs",
    "compare_runs",
    is_flag=True,
    help="Compare the last two server starts of one LOG: the one before the last is the baseline (docs/cli.md).",
)
@rules_options
@advisories_option
@report_options
@ssh_options
@store_options
@perf_option_declarations
@read_limit_options
@url_options
@handle_errors
def diff(
    targets: tuple[str, ...],
    baseline_targets: tuple[str, ...],
    candidate_targets: tuple[str, ...],
    baseline_engine: str,
    candidate_engine: str,
    show_all: bool,
    compare_runs: bool,
    rule_dirs: tuple[Path, ...],
    no_builtin_rules: bool,
    fmt: str,
    output: Path | None,
    fail_on: str,
    verbose: bool,
    config_path: Path | None,
    limits: ReadLimits,
    ssh: HostOptions,
    store: StoreOptions,
    gpu: str | None,
    hardware_files: tuple[str, ...],
    urls: UrlOptions,
) -> None:
    """What the fast deployment (BASELINE) had that the slow one (CANDIDATE) lacks.

    Each side is what `diagnose` accepts: a file, `-`, several files of one deployment (with
    --baseline/--candidate), or hosts; the two may run different engines. Shows one table of
    settings and measurements in engine-neutral names with each engine's flag, the flag that ports
    the baseline's value to the candidate, the throughput gap, and the candidate's findings,
    regression rules included (docs/diff.md)."""
    from logdoctor.app.diffs import diff_parsed
    from logdoctor.engine.suppress import load_suppressions
    from logdoctor.perf.options import perf_options
    from logdoctor.pipeline.run import parse_sources
    from logdoctor.report.formats import check_output, observed_of, written_to

    if fmt == "github":
        raise UsageError("--format github describes one deployment: run `logdoctor diagnose` on the slow one")
    check_output(fmt, output)
    perf = perf_options(gpu, hardware_files)
    rules = load_rule_set(rule_dirs, no_builtin_rules)
    suppressions = load_suppressions(config_path)
    if compare_runs:  # two server starts of one log (logdoctor/app/deployments.py)
        from logdoctor.app.deployments import last_two_runs

        if len(targets) != 1 or baseline_targets or candidate_targets:
            raise UsageError("diff --runs takes one LOG: its last server start is compared with the one before")
        forced = candidate_engine if candidate_engine != "auto" else baseline_engine
        base_parsed, cand_parsed = last_two_runs(targets[0], limits, forced)
    else:
        from logdoctor.app.progress import ReadProgress
        from logdoctor.app.stores import diff_side_sources  # files, hosts, or clickhouse:// / prometheus:// URLs

        sides = diff_sides(targets, baseline_targets, candidate_targets)
        base_sources, cand_sources = diff_side_sources(sides, store, urls, ssh, stderr_console(), limits)
        with ReadProgress(stderr_console()) as progress:  # a spinner on a terminal's stderr, else nothing
            base_parsed = parse_sources(progress.sources(base_sources), baseline_engine)
            cand_parsed = parse_sources(progress.sources(cand_sources), candidate_engine)
    report = diff_parsed(
        base_parsed,
        cand_parsed,
        rules,
        baseline_engine=baseline_engine,
        candidate_engine=candidate_engine,
        suppressions=suppressions,
        show_all=show_all,
        perf=perf,
        max_seconds=limits.max_seconds,
    )
    with written_to(output):
        emit_diff(report, fmt, verbose, [observed_of(fmt, p.events) for p in (base_parsed, cand_parsed)])
    click.get_current_context().exit(exit_code_for([report], fail_on))
