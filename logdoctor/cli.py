"""The `logdoctor` command: parse arguments, run the stages, choose the renderer.

Exit codes (docs/cli.md): 0 ok, 1 findings at or above --fail-on (or failing tests),
2 usage or input error, 3 collection error, 4 internal error (a bug).
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from logdoctor import __version__
from logdoctor.errors import (
    CollectionError,
    ExitStatus,
    InputError,
    LogdoctorError,
    RuleError,
    UsageError,
    internal_error_line,
)
from logdoctor.options import read_limit_options
from logdoctor.parse.pipeline import EventStream, SourceStats, candidate_keywords
from logdoctor.report.events import event_json, event_table, say
from logdoctor.sanitize import clean_text, one_line
from logdoctor.sources.local import LocalSource, ReadLimits, open_local, raise_on_termination

if TYPE_CHECKING:
    # Imported where used: the rule engine, `diff` and the SSH collector (paramiko) cost start-up
    # time that `parse` (and `diagnose FILE`, for the SSH part) should not pay.
    from concurrent.futures import Future

    from logdoctor.diff import DiffReport
    from logdoctor.engine.result import Diagnosis
    from logdoctor.engine.rules import LoadedRule
    from logdoctor.run import LineSource
    from logdoctor.sources.ssh import HostCollection, RemoteSource, SshOptions

# Defaults of the SSH options (logdoctor.sources.ssh checks they agree).
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_JOBS = 8
PARSING_THREADS = 2  # hosts parsed at once by `diagnose HOST...` (see there)

F = TypeVar("F", bound=Callable[..., Any])


def stdout_console() -> Console:
    return Console(no_color=bool(os.environ.get("NO_COLOR")) or None, soft_wrap=False)


def stderr_console() -> Console:
    return Console(stderr=True, no_color=bool(os.environ.get("NO_COLOR")) or None)


def handle_errors(func: F) -> F:
    """Turn every LogdoctorError into one line on stderr and its exit code; --debug shows the traceback."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        debug = bool(ctx.find_root().params.get("debug"))
        try:
            return func(*args, **kwargs)
        except LogdoctorError as exc:
            if debug:
                raise
            click.echo(f"logdoctor: error: {clean_text(str(exc))}", err=True)
            ctx.exit(int(exc.exit_status))
        except BrokenPipeError:
            # `logdoctor parse big.log | head`: stop quietly.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(0)
        except KeyboardInterrupt:
            click.echo("logdoctor: interrupted", err=True)
            ctx.exit(130)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except Exception as exc:  # a bug of ours: exit 4, never 1 (= findings)
            if debug:
                raise
            click.echo(f"logdoctor: {internal_error_line(exc)}", err=True)
            ctx.exit(int(ExitStatus.INTERNAL))

    return wrapper  # type: ignore[return-value]


def engine_option(func: F) -> F:
    return click.option(
        "--engine",
        type=click.Choice(["auto", "vllm", "sglang"]),
        default="auto",
        show_default=True,
        help="Force the engine instead of detecting it from the log.",
    )(func)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="logdoctor")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
def main(debug: bool) -> None:
    """Diagnose slow vLLM and SGLang deployments from their logs."""


# --- parse ---------------------------------------------------------------------------------------


def iter_sources(
    paths: tuple[str, ...], engine: str, limits: ReadLimits | None = None
) -> Iterator[tuple[EventStream, Callable[[], SourceStats]]]:
    """Open each path and give its event stream; missing paths fail before anything is read."""
    sources = [open_local(p, limits) for p in paths]
    keywords = candidate_keywords()
    for source in sources:
        stats = SourceStats(name=source.name, kind=source.kind, path=None if source.kind == "stdin" else source.path)
        stream = EventStream(source.name, source.lines(keywords), engine=engine, stats=stats)

        def finish(source: Any = source, stats: SourceStats = stats) -> SourceStats:
            stats.bytes_read = source.bytes_read
            stats.prefiltered = source.prefiltered
            stats.notes = list(source.notes)
            if source.prefiltered and source.total_lines is not None:
                stats.lines = source.total_lines
            return stats

        yield stream, finish


@main.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH... | -")
@click.option("--format", "fmt", type=click.Choice(["table", "jsonl"]), default="table", show_default=True)
@engine_option
@click.option("--explain-detection", is_flag=True, help="Say why each source's engine and version were chosen.")
@click.option("--show-unparsed", is_flag=True, help="Show a sample of candidate lines no grammar recognised.")
@read_limit_options
@handle_errors
def parse(
    paths: tuple[str, ...], fmt: str, engine: str, explain_detection: bool, show_unparsed: bool, limits: ReadLimits
) -> None:
    """Print the typed events found in logs (plain, .gz, or - for stdin)."""
    out = stdout_console()
    err = stderr_console()
    for stream, finish in iter_sources(paths, engine, limits):
        if fmt == "jsonl":
            write = sys.stdout.write
            chunk: list[str] = []
            for event in stream:
                chunk.append(event_json(event))
                if len(chunk) >= 512:
                    write("\n".join(chunk) + "\n")
                    chunk.clear()
            if chunk:
                write("\n".join(chunk) + "\n")
        else:
            out.print(event_table(stream.source, stream))
        stats = finish()
        detection = stream.detection
        say(
            err,
            f"{one_line(stats.name)}: {stats.lines} lines, {stats.candidates} candidates, {stats.events} events, "
            f"{stats.unrecognised} unrecognised; engine {detection.engine}"
            + (f" {detection.version}" if detection.version else "")
            + ("; prefiltered by grep" if stats.prefiltered else ""),
            "dim",
        )
        for note in stats.notes:
            say(err, f"{one_line(stats.name)}: note: {note}", "dim")
        if explain_detection:
            for reason in detection.reasons():
                say(err, f"  {reason}")
        if show_unparsed:
            for number, text in stats.unrecognised_samples:
                say(err, f"  unparsed {one_line(stats.name)}:{number}: {text}")
    sys.stdout.flush()


# --- diagnose ------------------------------------------------------------------------------------

FAIL_ON = ("high", "medium", "low", "info", "never")


def rules_options(func: F) -> F:
    func = click.option("--no-builtin-rules", is_flag=True, help="Use only the rules given with --rules.")(func)
    func = click.option(
        "--rules",
        "rule_dirs",
        multiple=True,
        type=click.Path(file_okay=False, path_type=Path),
        help="Add a directory of rule files (repeatable).",
    )(func)
    return func


def report_options(func: F) -> F:
    func = click.option(
        "--format",
        "fmt",
        type=click.Choice(["text", "json", "markdown"]),
        default="text",
        show_default=True,
        help="Report format.",
    )(func)
    func = click.option(
        "--fail-on",
        type=click.Choice(FAIL_ON),
        default="high",
        show_default=True,
        help="Exit 1 when a finding reaches this severity.",
    )(func)
    func = click.option("--verbose", "-v", is_flag=True, help="Show every could-not-check item with its hint.")(func)
    func = click.option(
        "--config",
        "config_path",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Suppressions file (default: ./.logdoctor.yaml when present).",
    )(func)
    return func


def load_rule_set(rule_dirs: tuple[Path, ...], no_builtin_rules: bool) -> list[LoadedRule]:
    from logdoctor.engine.rules import load_rules

    if no_builtin_rules and not rule_dirs:
        raise UsageError("--no-builtin-rules needs at least one --rules DIR")
    return load_rules(rule_dirs, builtin=not no_builtin_rules)


def local_line_sources(paths: Sequence[str], limits: ReadLimits | None = None) -> list[LineSource]:
    """Open local paths (or `-`); every path is checked before anything is read."""
    from logdoctor.run import LineSource

    opened = [open_local(p, limits) for p in paths]
    keywords = candidate_keywords()
    out: list[LineSource] = []
    for source in opened:

        def finish(stat: SourceStats, source: LocalSource = source) -> None:
            stat.bytes_read = source.bytes_read
            stat.prefiltered = source.prefiltered
            stat.notes = list(source.notes)
            if source.prefiltered and source.total_lines is not None:
                stat.lines = source.total_lines

        out.append(
            LineSource(
                name=source.name,
                lines=source.lines(keywords),
                kind=source.kind,
                path=None if source.kind == "stdin" else source.path,
                finish=finish,
            )
        )
    return out


def exit_code_for(diagnoses: Sequence[Diagnosis | DiffReport], fail_on: str) -> int:
    from logdoctor.engine.result import SEVERITY_ORDER

    if fail_on == "never":
        return 0
    threshold = SEVERITY_ORDER[fail_on]
    for d in diagnoses:
        if any(SEVERITY_ORDER[f.severity] >= threshold for f in d.findings):
            return int(ExitStatus.FINDINGS)
    return int(ExitStatus.OK)


def emit_many(diagnoses: Sequence[Diagnosis], hosts: Sequence[str], fmt: str, verbose: bool) -> None:
    """One report per host: a JSON array when there are several, headed sections otherwise."""
    from logdoctor.report.json import render_json

    if len(diagnoses) == 1:
        emit(diagnoses[0], fmt, verbose)
    elif fmt == "json":
        click.echo(render_json(list(diagnoses)))
    else:
        from logdoctor.report.fleet import fleet_markdown, render_fleet

        for host, diagnosis in zip(hosts, diagnoses, strict=True):
            if fmt == "markdown":
                click.echo(f"# {host}\n")
            else:
                stdout_console().rule(host)
            emit(diagnosis, fmt, verbose)
        if fmt == "markdown":
            click.echo(fleet_markdown(hosts, diagnoses), nl=False)
        else:
            render_fleet(stdout_console(), hosts, diagnoses)


def emit(diagnosis: Diagnosis, fmt: str, verbose: bool) -> None:
    from logdoctor.report.json import render_json
    from logdoctor.report.markdown import render_markdown
    from logdoctor.report.terminal import render_terminal

    if fmt == "json":
        click.echo(render_json(diagnosis))
    elif fmt == "markdown":
        click.echo(render_markdown(diagnosis), nl=False)
    else:
        render_terminal(diagnosis, stdout_console(), verbose=verbose)


_SIZE_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


def parse_size(ctx: click.Context, param: click.Parameter, value: str | int) -> int:
    """`65536`, `512K`, `64M`, `1G` (powers of 1024) for --max-bytes."""
    if isinstance(value, int):
        return value
    text = value.strip().upper().removesuffix("B").removesuffix("I")
    unit = text[-1:] if text[-1:] in _SIZE_UNITS else ""
    try:
        size = int(float(text[: len(text) - len(unit)]) * _SIZE_UNITS[unit])
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a size such as 65536, 512K, 64M or 1G") from None
    if size < 1024:
        raise click.BadParameter(f"{value!r}: at least 1K")
    return size


def ssh_options(func: F) -> F:
    """Options of `diagnose HOST...` (docs/ssh.md)."""
    options = [
        click.option("--ssh-config", type=click.Path(dir_okay=False), help="ssh config file (default ~/.ssh/config)."),
        click.option(
            "-i",
            "--identity",
            "identities",
            multiple=True,
            type=click.Path(dir_okay=False),
            help="Private key (repeatable).",
        ),
        click.option(
            "--known-hosts", type=click.Path(dir_okay=False), help="known_hosts file (default ~/.ssh/known_hosts)."
        ),
        click.option("--timeout", type=click.FloatRange(min=0.1), help="Seconds to connect and log in (default 10)."),
        click.option(
            "--log",
            "logs",
            multiple=True,
            metavar="REMOTE_PATH_OR_GLOB",
            help="Read this remote log instead of discovering logs (repeatable).",
        ),
        click.option("--sudo", is_flag=True, help="Read root-only logs with `sudo -n` (never asks for a password)."),
        click.option(
            "--save", type=click.Path(file_okay=False), help="Keep what was collected in DIR/<host>/ with a manifest."
        ),
        click.option(
            "--max-bytes",
            type=str,
            metavar="SIZE",
            callback=parse_size,
            default=str(DEFAULT_MAX_BYTES),
            show_default="64M",
            help="Most bytes of log lines to transfer from one host.",
        ),
        click.option("--accept-new", is_flag=True, help="Trust and record an unknown host key (never a changed one)."),
        click.option(
            "--jobs", type=click.IntRange(min=1), default=DEFAULT_JOBS, show_default=True, help="Hosts at a time."
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def read_hosts_file(path: str) -> list[str]:
    """`--hosts FILE`: one target a line (`user@host`, `host:port`, `ssh://...`, an ssh-config alias);
    blank lines and `#` comments are skipped; a malformed target is an error naming FILE:LINE."""
    from logdoctor.sources.target import parse_target

    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(f"--hosts {path}: cannot read it ({reason})") from exc
    hosts: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        target = line.split("#", 1)[0].strip()
        if not target:
            continue
        try:
            parse_target(target)
        except InputError as exc:
            raise InputError(f"{path}:{number}: {exc}") from exc
        hosts.append(target)
    if not hosts:
        raise InputError(f"--hosts {path}: no hosts in it (one target a line, `#` comments)")
    return hosts


def split_targets(targets: Sequence[str], ssh_config: str | None) -> tuple[list[str], list[str]]:
    """(local paths, hosts): an existing path is a file; anything else that looks like a host is one."""
    if all(t == "-" or os.path.exists(t) for t in targets):
        return list(targets), []
    from logdoctor.sources.ssh import looks_like_host
    from logdoctor.sources.sshconfig import load_ssh_config

    aliases = load_ssh_config(ssh_config).aliases()
    hosts = [t for t in targets if looks_like_host(t, aliases=aliases)]
    return [t for t in targets if t not in hosts], hosts


def remote_line_sources(collection: HostCollection, *, live: bool = False) -> Iterator[LineSource]:
    """The collected sources as parser inputs; `live`: as they arrive (blocks until the host is done)."""
    from logdoctor.run import LineSource

    for source in collection.feed if live else list(collection.sources):

        def finish(stat: SourceStats, src: RemoteSource = source) -> None:
            stat.bytes_read = src.bytes_read
            stat.bytes_transferred = src.bytes_transferred
            stat.prefiltered = src.filtered

        yield LineSource(
            name=source.name,
            lines=source.feed,
            kind=source.kind,
            host=source.host,
            path=source.path,
            finish=finish,
        )


def failed_host_diagnosis(collection: HostCollection) -> Diagnosis:
    from logdoctor.engine.result import Diagnosis, EngineReport, Verdict

    error = collection.error or f"{collection.host}: not collected"
    return Diagnosis(
        tool={"name": "logdoctor", "version": __version__},
        sources=[],
        engine=EngineReport(name="unknown"),
        verdict=Verdict(healthy=False, summary=f"not collected: {error}"),
        findings=[],
        ruled_out=[],
        insufficient_data=[],
        errors=[{"host": collection.host, "error": error}],
    )


def host_diagnosis(col: HostCollection, diagnosing: Future[Diagnosis] | None, *, alone: bool, debug: bool) -> Diagnosis:
    """A collected host's diagnosis; in a fleet, a bug that breaks one host's diagnosis fails that host
    (reported, exit 3) instead of the whole run. Errors of ours (the rules) still stop everything."""
    if col.error is None and diagnosing is not None:
        try:
            return diagnosing.result()
        except LogdoctorError:
            raise
        except Exception as exc:
            if alone or debug:
                raise
            col.error = f"{col.host}: internal error while diagnosing: {type(exc).__name__}: {exc}"
            col.error_kind = "internal"
    return failed_host_diagnosis(col)


def collect_for_diagnosis(
    hosts: Sequence[str],
    options: SshOptions,
    jobs: int,
    save: str | None,
    on_started: Callable[[int, HostCollection], None] | None = None,
) -> list[HostCollection]:
    """Collect every host (progress, what was found and notes on stderr); `--save` each one.

    `on_started` runs for each host before it is contacted (see `collect_hosts`)."""
    from logdoctor.sources.ssh import collect_hosts, parse_target, save_collection

    err = stderr_console()
    lock = threading.Lock()

    def progress(host: str, message: str) -> None:
        with lock:
            say(err, f"{host}: {message}", "dim")

    targets = [parse_target(h) for h in hosts]
    collections = collect_hosts(
        targets, options, candidate_keywords(), jobs=jobs, progress=progress, on_started=on_started
    )
    for col in collections:
        for line in col.found:
            say(err, f"{col.host}: found {line}", "dim")
        for note in col.notes:
            say(err, f"{col.host}: note: {note}", "dim")
        if save is not None:
            where = save_collection(col, save)
            say(err, f"{col.host}: saved to {where}/ (rerun offline: logdoctor diagnose {where}/*.log)")
    if len(collections) > 1:
        ok = sum(1 for c in collections if c.ok)
        err.print(f"collected {ok} of {len(collections)} hosts", highlight=False)
    return collections


@main.command()
@click.argument("targets", nargs=-1, metavar="[PATH... | - | HOST...]")
@engine_option
@rules_options
@report_options
@ssh_options
@click.option(
    "--hosts",
    "hosts_file",
    type=click.Path(dir_okay=False, allow_dash=True),
    metavar="FILE",
    help="Also diagnose the hosts in FILE: one target a line, `#` comments; `-` reads them from stdin.",
)
@read_limit_options
@handle_errors
def diagnose(
    targets: tuple[str, ...],
    engine: str,
    rule_dirs: tuple[Path, ...],
    no_builtin_rules: bool,
    fmt: str,
    fail_on: str,
    verbose: bool,
    config_path: Path | None,
    ssh_config: str | None,
    identities: tuple[str, ...],
    known_hosts: str | None,
    timeout: float | None,
    logs: tuple[str, ...],
    sudo: bool,
    save: str | None,
    max_bytes: int,
    accept_new: bool,
    jobs: int,
    hosts_file: str | None,
    limits: ReadLimits,
) -> None:
    """Rank the likely causes of a slow deployment from its logs.

    Several files are one deployment (a server log, an NCCL log, a pasted benchmark table).
    With no target, reads a pasted log from stdin (end it with Ctrl-D)."""
    from logdoctor.engine.suppress import load_suppressions
    from logdoctor.run import diagnose_sources

    suppressions = load_suppressions(config_path)
    listed = read_hosts_file(hosts_file) if hosts_file is not None else []
    if not targets and not listed:
        if sys.stdin.isatty():
            stderr_console().print("Paste the log, then press Ctrl-D on an empty line:", highlight=False)
        targets = ("-",)
    ctx = click.get_current_context()
    paths, hosts = split_targets(targets, ssh_config) if targets else ([], [])
    if listed and "-" in paths and hosts_file == "-":
        raise UsageError("`-` and `--hosts -` both want stdin: give the hosts in a file")
    hosts = list(dict.fromkeys([*hosts, *listed]))  # the order given, each host once
    if hosts and paths:
        raise UsageError(f"give local paths or hosts, not both (paths: {', '.join(paths)}; hosts: {', '.join(hosts)})")
    if not hosts:
        host_only = {"--log": logs, "--sudo": sudo, "--save": save, "--accept-new": accept_new, "-i": identities}
        given = [name for name, value in host_only.items() if value]
        if given:
            raise UsageError(f"{', '.join(given)} only apply to host targets (user@host)")
        rules = load_rule_set(rule_dirs, no_builtin_rules)
        sources = local_line_sources(targets, limits)
        diagnosis = diagnose_sources(sources, rules, engine=engine, suppressions=suppressions)
        emit(diagnosis, fmt, verbose)
        ctx.exit(exit_code_for([diagnosis], fail_on))
    from logdoctor.sources.ssh import SshOptions

    options = SshOptions(
        ssh_config=ssh_config,
        identity_files=identities,
        known_hosts=known_hosts,
        timeout=timeout,
        logs=logs,
        sudo=sudo,
        max_bytes=max_bytes,
        accept_new=accept_new,
    )
    from concurrent.futures import ThreadPoolExecutor

    from logdoctor.run import diagnose_parsed, parse_sources

    # Each host's lines are parsed while they arrive (a parsing thread a host, fed by its collector),
    # so a host's diagnosis is ready soon after its last line, while the rest of the fleet is still read.
    # At most PARSING_THREADS hosts are parsed at once: parsing holds the GIL, so more threads would not
    # finish sooner, and each host being parsed holds all its events (a 1 GiB log's run peaks at 326 MiB); the lines
    # of the hosts that wait are kept as they arrive and parsed when a thread is free.
    parsers = min(jobs, PARSING_THREADS)
    with ThreadPoolExecutor(max_workers=parsers + 1, thread_name_prefix="logdoctor-diagnose") as pool:
        # The built-in rules load while the first host is contacted; a user's rule options are checked
        # before any host is (a mistake in them should not cost a fleet's collection).
        rules_ready: Future[list[LoadedRule]] = pool.submit(load_rule_set, rule_dirs, no_builtin_rules)
        if rule_dirs or no_builtin_rules:
            rules_ready.result()
        diagnosing: dict[int, Future[Diagnosis]] = {}

        def diagnose_live(col: HostCollection) -> Diagnosis:
            parsed = parse_sources(remote_line_sources(col, live=True), engine)
            return diagnose_parsed(parsed, rules_ready.result(), engine=engine, suppressions=suppressions)[0]

        def start_host(index: int, col: HostCollection) -> None:
            diagnosing[index] = pool.submit(diagnose_live, col)

        collections = collect_for_diagnosis(hosts, options, jobs, save, on_started=start_host)
        debug = bool(ctx.find_root().params.get("debug"))
        if len(collections) == 1 and collections[0].error is not None:
            failure = collections[0].exception
            if isinstance(failure, LogdoctorError) or (failure is not None and debug):
                raise failure
            raise CollectionError(collections[0].error)
        diagnoses = [
            host_diagnosis(col, diagnosing.get(index), alone=len(collections) == 1, debug=debug)
            for index, col in enumerate(collections)
        ]
    emit_many(diagnoses, [c.host for c in collections], fmt, verbose)
    failed = any(c.error is not None for c in collections)
    ctx.exit(int(ExitStatus.COLLECTION) if failed else exit_code_for(diagnoses, fail_on))


# --- diff ----------------------------------------------------------------------------------------


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


def side_line_sources(
    side: str, targets: Sequence[str], ssh: dict[str, Any], limits: ReadLimits | None = None
) -> list[LineSource]:
    """One side of `diff` as line sources: files and `-` as `diagnose` reads them, or hosts collected
    over SSH as `diagnose HOST` collects them (several hosts on one side are one deployment)."""
    paths, hosts = split_targets(targets, ssh["ssh_config"])
    if hosts and paths:
        raise UsageError(f"{side}: give local paths or hosts, not both")
    if not hosts:
        return local_line_sources(paths, limits)
    from logdoctor.sources.ssh import SshOptions

    options = SshOptions(
        ssh_config=ssh["ssh_config"],
        identity_files=ssh["identities"],
        known_hosts=ssh["known_hosts"],
        timeout=ssh["timeout"],
        logs=ssh["logs"],
        sudo=ssh["sudo"],
        max_bytes=ssh["max_bytes"],
        accept_new=ssh["accept_new"],
    )
    collections = collect_for_diagnosis(hosts, options, ssh["jobs"], ssh["save"])
    for collection in collections:
        if collection.error is not None:
            raise CollectionError(f"{side}: {collection.error}")
    return [source for collection in collections for source in remote_line_sources(collection)]


def emit_diff(report: DiffReport, fmt: str, verbose: bool) -> None:
    from logdoctor.report.diff_markdown import render_diff_markdown
    from logdoctor.report.diff_terminal import render_diff_terminal
    from logdoctor.report.json import render_json

    if fmt == "json":
        click.echo(render_json(report.model_dump(mode="json")))
    elif fmt == "markdown":
        click.echo(render_diff_markdown(report), nl=False)
    else:
        render_diff_terminal(report, stdout_console(), verbose=verbose)


_SIDE_ENGINE = click.Choice(["auto", "vllm", "sglang"])


@main.command()
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
@rules_options
@report_options
@ssh_options
@read_limit_options
@handle_errors
def diff(
    targets: tuple[str, ...],
    baseline_targets: tuple[str, ...],
    candidate_targets: tuple[str, ...],
    baseline_engine: str,
    candidate_engine: str,
    show_all: bool,
    rule_dirs: tuple[Path, ...],
    no_builtin_rules: bool,
    fmt: str,
    fail_on: str,
    verbose: bool,
    config_path: Path | None,
    limits: ReadLimits,
    **ssh: Any,
) -> None:
    """What the fast deployment (BASELINE) had that the slow one (CANDIDATE) lacks.

    Each side is what `diagnose` accepts: a file, `-`, several files of one deployment (with
    --baseline/--candidate), or hosts; the two may run different engines. Shows one table of
    settings and measurements in engine-neutral names with each engine's flag, the flag that ports
    the baseline's value to the candidate, the throughput gap, and the candidate's findings,
    regression rules included (docs/diff.md)."""
    from logdoctor.diff import diff_parsed
    from logdoctor.engine.suppress import load_suppressions
    from logdoctor.run import parse_sources

    rules = load_rule_set(rule_dirs, no_builtin_rules)
    suppressions = load_suppressions(config_path)
    base_targets, cand_targets = diff_sides(targets, baseline_targets, candidate_targets)
    base_sources = side_line_sources("baseline", base_targets, ssh, limits)
    cand_sources = side_line_sources("candidate", cand_targets, ssh, limits)
    report = diff_parsed(
        parse_sources(base_sources, baseline_engine),
        parse_sources(cand_sources, candidate_engine),
        rules,
        baseline_engine=baseline_engine,
        candidate_engine=candidate_engine,
        suppressions=suppressions,
        show_all=show_all,
    )
    emit_diff(report, fmt, verbose)
    click.get_current_context().exit(exit_code_for([report], fail_on))


# --- rules ---------------------------------------------------------------------------------------


@main.group()
def rules() -> None:
    """List, show and check rules."""


@rules.command("list")
@rules_options
@handle_errors
def rules_list(rule_dirs: tuple[Path, ...], no_builtin_rules: bool) -> None:
    """List every rule with its cause and engines."""
    loaded = load_rule_set(rule_dirs, no_builtin_rules)
    table = Table(show_lines=False)
    for column in ("id", "cause", "engines", "status", "title"):
        table.add_column(column, no_wrap=column != "title")
    for item in sorted(loaded, key=lambda r: (r.rule.cause, r.id)):
        r = item.rule
        table.add_row(*(Text(clean_text(cell)) for cell in (r.id, r.cause, ",".join(r.engines), r.status, r.title)))
    stdout_console().print(table)


@rules.command("show")
@click.argument("rule_id")
@rules_options
@handle_errors
def rules_show(rule_id: str, rule_dirs: tuple[Path, ...], no_builtin_rules: bool) -> None:
    """Print one rule's file."""
    loaded = load_rule_set(rule_dirs, no_builtin_rules)
    for item in loaded:
        if item.id == rule_id:
            click.echo(f"# {one_line(item.path)}")
            click.echo(clean_text(Path(item.path).read_text(encoding="utf-8")), nl=False)
            return
    raise UsageError(f"no rule with id '{rule_id}' (see `logdoctor rules list`)")


@rules.command("facts")
def rules_facts() -> None:
    """List every fact a rule condition may use, with its kind."""
    from logdoctor.facts import FACTS

    table = Table(show_lines=False)
    for column in ("fact", "kind", "meaning"):
        table.add_column(column, no_wrap=column != "meaning")
    for name, spec in FACTS.items():
        table.add_row(name, spec.kind, spec.description)
    stdout_console().print(table)


@rules.command("check")
@click.argument("directories", nargs=-1, type=click.Path(file_okay=False, path_type=Path))
@handle_errors
def rules_check(directories: tuple[Path, ...]) -> None:
    """Validate rule files (schema, unique ids, known causes and facts, samples fire).

    With no DIRECTORIES, checks the built-in rule set."""
    from logdoctor.engine.rules import load_rules
    from logdoctor.engine.samples import check_samples

    loaded = load_rules(directories, builtin=not directories)
    problems = check_samples(loaded)
    if problems:
        raise RuleError(f"{len(problems)} problem(s) in rule samples:\n  " + "\n  ".join(problems))
    click.echo(f"{len(loaded)} rules OK")


# --- test ----------------------------------------------------------------------------------------


@main.command("test")
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
        click.echo(f"{output}: {summary_line(suite)}", err=True)
    click.get_current_context().exit(int(suite.exit_status))


def run() -> None:
    raise_on_termination()  # SIGTERM/SIGHUP unwind like Ctrl-C: the prefilter's children are killed
    main(prog_name="logdoctor")


if __name__ == "__main__":  # pragma: no cover
    run()

__all__ = ["ExitStatus", "main"]
