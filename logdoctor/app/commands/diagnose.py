"""`logdoctor diagnose`: the ranked causes of a slow deployment, from files, stdin, hosts or URLs.

logdoctor diagnose vllm-serve.log --format json
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from logdoctor.app.cli import LogdoctorCommand, examples
from logdoctor.app.commands.common import (
    advisories_option,
    emit_many,
    engine_option,
    exit_code_for,
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
from logdoctor.app.urltargets import split_url_targets, url_options
from logdoctor.errors import ExitStatus, InputError, UsageError

if TYPE_CHECKING:
    from logdoctor.app.fleet import HostOptions
    from logdoctor.app.stores import StoreOptions
    from logdoctor.sources.limits import ReadLimits
    from logdoctor.sources.urls import UrlOptions


@click.command(
    cls=LogdoctorCommand,
    epilog=examples(
        "logdoctor diagnose vllm-serve.log",
        "logdoctor diagnose vllm-serve.log nccl.log bench.txt   # one deployment",
        "logdoctor diagnose root@gpu-host --format json -o report.json",
        "logdoctor diagnose --hosts fleet.txt",
        "logdoctor diagnose prometheus://127.0.0.1:9090 --selector '{job=\"vllm\"}' --since 30m",
        "logdoctor diagnose vllm-serve.log --format html -o report.html",
        "logdoctor diagnose vllm-serve.log --explain -v   # the score working, every check",
    ),
)
@click.argument("targets", nargs=-1, metavar="[PATH... | - | HOST... | URL...]")
@engine_option
@rules_options
@advisories_option
@report_options
@ssh_options
@store_options
@click.option(
    "--hosts",
    "hosts_file",
    type=click.Path(dir_okay=False, allow_dash=True),
    metavar="FILE",
    help="Also diagnose the hosts in FILE: one target a line, `#` comments; `-` reads them from stdin.",
)
@click.option("--all-runs", is_flag=True, help="Diagnose every server start in a log, not only the last (docs/cli.md).")
@perf_option_declarations
@read_limit_options
@url_options
@handle_errors
def diagnose(
    targets: tuple[str, ...],
    engine: str,
    rule_dirs: tuple[Path, ...],
    no_builtin_rules: bool,
    fmt: str,
    output: Path | None,
    fail_on: str,
    verbose: bool,
    config_path: Path | None,
    ssh: HostOptions,
    store: StoreOptions,
    hosts_file: str | None,
    all_runs: bool,
    gpu: str | None,
    hardware_files: tuple[str, ...],
    limits: ReadLimits,
    urls: UrlOptions,
) -> None:
    """Rank the likely causes of a slow deployment from its logs.

    Files of one deployment are diagnosed together (a server log, its NCCL log, a pasted benchmark
    table, a saved /metrics scrape); files of different deployments (engine, version, model, host) get a
    report each. A log holding several server starts is diagnosed for the last one (--all-runs: each one).
    A URL (prometheus://HOST:9090) is every instance a Prometheus server scrapes.
    With no target, reads a pasted log from stdin (end it with Ctrl-D)."""
    from logdoctor.app.deployments import diagnose_deployments, parse_deployments
    from logdoctor.app.fleet import diagnose_hosts, mark_partial, read_hosts_file, split_targets
    from logdoctor.app.progress import ReadProgress
    from logdoctor.app.stores import check_store_targets, diagnose_stores
    from logdoctor.app.urltargets import diagnose_url_targets, emit_outliers
    from logdoctor.engine.suppress import load_suppressions
    from logdoctor.perf.options import perf_options
    from logdoctor.pipeline.run import local_line_sources
    from logdoctor.report.formats import PAGE_FORMATS, check_output, observed_of, written_to

    check_output(fmt, output)
    perf = perf_options(gpu, hardware_files)
    suppressions = load_suppressions(config_path)
    listed = read_hosts_file(hosts_file) if hosts_file is not None else []
    url_targets, rest = split_url_targets(targets)
    if url_targets:  # prometheus://... (logdoctor/app/urltargets.py)
        if rest or listed:
            raise UsageError(f"give URL targets alone, not with paths or hosts ({', '.join(rest or listed)})")
        result = diagnose_url_targets(
            url_targets,
            urls,
            load_rule_set(rule_dirs, no_builtin_rules),
            engine=engine,
            suppressions=suppressions,
            err=stderr_console(),
            observe=functools.partial(observed_of, fmt),
        )
        with written_to(output):
            emit_many(result.diagnoses, result.names, fmt, verbose, result.observed, outliers=result.outliers)
            emit_outliers(result, fmt, stdout_console())
        click.get_current_context().exit(
            int(ExitStatus.COLLECTION) if result.failed else exit_code_for(result.diagnoses, fail_on)
        )
    if not targets and not listed:
        targets = ("-",)
    if "-" in targets and hosts_file != "-" and sys.stdin.isatty():
        stderr_console().print("Paste the log, then press Ctrl-D on an empty line:", highlight=False)
    ctx = click.get_current_context()
    if check_store_targets(targets, store, listed, ssh.host_only_given()):  # clickhouse:// (docs/sources.md)
        found = diagnose_stores(
            targets,
            store,
            functools.partial(load_rule_set, rule_dirs, no_builtin_rules),
            engine=engine,
            suppressions=suppressions,
            err=stderr_console(),
            timeout=ssh.timeout,
            read_timeout=ssh.read_timeout,
            observe=functools.partial(observed_of, fmt),
        )
        with written_to(output):
            emit_many(
                found.diagnoses,
                found.names,
                fmt,
                verbose,
                found.shown(functools.partial(observed_of, fmt)),
                noun="deployments",
            )
        ctx.exit(int(ExitStatus.COLLECTION) if found.failed else exit_code_for(found.diagnoses, fail_on))
    paths, hosts = split_targets(targets, ssh.ssh_config) if targets else ([], [])
    if listed and "-" in paths and hosts_file == "-":
        raise UsageError("`-` and `--hosts -` both want stdin: give the hosts in a file")
    hosts = list(dict.fromkeys([*hosts, *listed]))  # the order given, each host once
    if hosts and paths:
        raise UsageError(f"give local paths or hosts, not both (paths: {', '.join(paths)}; hosts: {', '.join(hosts)})")
    if hosts and all_runs:
        raise UsageError("--all-runs applies to local logs: a host's log is diagnosed for its last server start")
    if not hosts:
        given = ssh.host_only_given()
        if given:
            raise UsageError(f"{', '.join(given)} only apply to host targets (user@host)")
        sources = local_line_sources(targets, limits, engine=engine)  # a big file's parse starts (pipeline/parallel.py)
        rules = load_rule_set(rule_dirs, no_builtin_rules)
        # Several deployments (or server starts of one log) are reported one by one (docs/cli.md).
        with ReadProgress(stderr_console()) as progress:  # a spinner on a terminal's stderr, else nothing
            deployments = parse_deployments(progress.sources(sources), engine, all_runs=all_runs)
        diagnoses = diagnose_deployments(
            deployments, rules, engine=engine, suppressions=suppressions, perf=perf, max_seconds=limits.max_seconds
        )
        from logdoctor.sources.bundle import saved_bundle_problems

        partial = saved_bundle_problems(targets)  # a --save bundle whose manifest says it is partial
        diagnoses = [mark_partial(d, "saved bundle", partial) for d in diagnoses]
        if (
            all(d.verdict.kind == "not-a-log" for d in diagnoses) and not partial
        ):  # nothing to diagnose: an input error, not a healthy verdict
            names = ", ".join(s.name for d in diagnoses for s in d.sources) or "the input"
            raise InputError(
                f"{names}: not a log: no line of a vLLM, SGLang or NCCL format (logdoctor parse shows why)"
            )
        with written_to(output):
            emit_many(
                diagnoses,
                [d.label for d in deployments],
                fmt,
                verbose,
                [observed_of(fmt, d.parsed.events) for d in deployments] if fmt in PAGE_FORMATS else [],
                noun="deployments",
            )
        ctx.exit(int(ExitStatus.COLLECTION) if partial else exit_code_for(diagnoses, fail_on))
    from logdoctor.app.progress import HostProgress

    with HostProgress(stderr_console()) as host_progress:  # each host's step on a terminal's stderr, else nothing
        collections, diagnoses, observed = diagnose_hosts(
            hosts,
            ssh,
            functools.partial(load_rule_set, rule_dirs, no_builtin_rules),
            check_rules_first=bool(rule_dirs or no_builtin_rules),
            engine=engine,
            suppressions=suppressions,
            err=stderr_console(),
            debug=bool(ctx.find_root().params.get("debug")),
            observe=functools.partial(observed_of, fmt),
            perf=perf,
            progress=host_progress,
        )
    shown = [observed.get(index) or observed_of(fmt, ()) for index in range(len(collections))]
    host_names = [c.host for c in collections]
    from logdoctor.app.peers import host_outliers, outlier_lines
    from logdoctor.report.outliers import Outlier

    differing = host_outliers(host_names, diagnoses) if len(diagnoses) > 1 else []
    # JSON carries the hosts whose speed is known beside the fleet's; the text reports name every one
    timed = [
        Outlier(name=o.host, per_request=o.per_request, median=o.median, reason=o.reason)
        for o in differing
        if o.per_request is not None and o.median
    ]
    with written_to(output):
        emit_many(diagnoses, host_names, fmt, verbose, shown, outliers=timed)
        state_lines = outlier_lines(differing, len(diagnoses))
        if state_lines and fmt == "markdown":
            from logdoctor.report.mdtext import text

            items = "\n".join(f"- {text(line.strip())}" for line in state_lines[1:])
            click.echo(f"\n## Host-state outliers\n\n{text(state_lines[0])}\n\n{items}\n")
        elif state_lines and fmt == "text":
            click.echo("\n".join(state_lines))
    failed = any(not c.complete for c in collections)
    ctx.exit(int(ExitStatus.COLLECTION) if failed else exit_code_for(diagnoses, fail_on))
