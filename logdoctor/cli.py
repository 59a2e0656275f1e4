"""The `logdoctor` command: parse arguments, run the stages, choose the renderer.

Exit codes (docs/cli.md): 0 ok, 1 findings at or above --fail-on (or failing tests),
2 usage or input error, 3 collection error, 4 internal error (a bug).
"""

from __future__ import annotations

import functools
import gc
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from logdoctor import __version__
from logdoctor.errors import ExitStatus, InputError, LogdoctorError, RuleError, UsageError, internal_error_line
from logdoctor.options import option_bundle, read_limit_options
from logdoctor.sources.limits import DEFAULT_JOBS, DEFAULT_MAX_BYTES, DEFAULT_READ_TIMEOUT
from logdoctor.stores import store_options
from logdoctor.urltargets import split_url_targets, url_options

if TYPE_CHECKING:
    # Imported where used (docs/benchmarks.md, *Start-up*): `logdoctor --version` and `--help` import
    # click and nothing heavy; rich, the parser (pydantic events, every engine's grammars), the rule engine,
    # `diff` and the SSH collector (paramiko) are imported by the commands that use them.
    from rich.console import Console

    from logdoctor.diff import DiffReport
    from logdoctor.engine.result import Diagnosis
    from logdoctor.engine.rules import LoadedRule
    from logdoctor.fleet import HostOptions
    from logdoctor.parse.pipeline import EventStream, SourceStats
    from logdoctor.report.observed import Observed
    from logdoctor.report.terminal import ColorChoice
    from logdoctor.sources.limits import ReadLimits
    from logdoctor.sources.urls import UrlOptions
    from logdoctor.stores import StoreOptions


F = TypeVar("F", bound=Callable[..., Any])


def color_choice() -> ColorChoice:
    """`--color` of this run (given before or after the subcommand); `auto` outside a command."""
    ctx = click.get_current_context(silent=True)
    value = ctx.find_root().params.get("color") if ctx is not None else None
    return value if value in ("always", "never") else "auto"


def stdout_console() -> Console:
    """Full width when piped (COLUMNS, else no limit), the terminal's width on a tty (docs/cli.md)."""
    from logdoctor.report.terminal import make_console

    return make_console(color_choice())


def stderr_console() -> Console:
    from logdoctor.report.terminal import make_console

    return make_console(color_choice(), stderr=True)


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
            from logdoctor.sanitize import clean_text

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


class EngineChoice(click.Choice[str]):
    """`auto` and every registered serving engine (`registry.engine_choices()`), looked up when the option
    is first used: the registry imports every engine package, which `logdoctor --version` need not pay."""

    def __init__(self) -> None:
        super().__init__(())

    @property  # type: ignore[override]
    def choices(self) -> Sequence[str]:
        from logdoctor.registry import engine_choices

        return tuple(engine_choices())

    @choices.setter
    def choices(self, value: Sequence[str]) -> None:
        pass  # click.Choice sets the choices it was given (none): they are always the registry's


def engine_option(func: F) -> F:
    return click.option(
        "--engine",
        type=EngineChoice(),
        default="auto",
        show_default=True,
        help="Force the engine instead of detecting it from the log.",
    )(func)


# Options of the group that may also be written after the subcommand (`logdoctor diagnose x.log --debug`).
_GLOBAL_FLAGS = ("--debug", "--version")
_GLOBAL_VALUED = ("--color",)


def hoist_global_options(args: Sequence[str], commands: Sequence[str]) -> list[str]:
    """Move the group's options written after the subcommand to before it; `--` ends the options."""
    args = list(args)
    position = next((i for i, arg in enumerate(args) if arg in commands), None)
    if position is None:
        return args
    head, tail = args[:position], args[position:]
    kept: list[str] = []
    moved: list[str] = []
    index = 0
    while index < len(tail):
        arg = tail[index]
        if arg == "--":
            kept += tail[index:]
            break
        if arg in _GLOBAL_FLAGS:
            moved.append(arg)
        elif arg in _GLOBAL_VALUED and index + 1 < len(tail):
            moved += [arg, tail[index + 1]]
            index += 1
        elif arg.split("=", 1)[0] in _GLOBAL_VALUED and "=" in arg:
            moved.append(arg)
        else:
            kept.append(arg)
        index += 1
    return [*head, *moved, *kept]


class OneLineUsageError(click.UsageError):
    """click's usage, hint and error (three lines) as one: `logdoctor diagnose: error: <problem> (--help ...)`."""

    def show(self, file: Any = None) -> None:
        command = self.ctx.command_path if self.ctx is not None else "logdoctor"
        message = " ".join(self.format_message().split())
        click.echo(f"{command}: error: {message} (see `{command} --help`)", err=True)


def terminal_columns() -> int:
    """What shutil.get_terminal_size() says (COLUMNS, else stdout's terminal, else 80), asked without importing
    shutil: click imports it (with bz2, lzma and zlib) only for this, ~6 ms of every `--help`."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 80
    return columns


class LogdoctorContext(click.Context):
    def make_formatter(self) -> click.HelpFormatter:
        """click's formatter at the width click would choose (FORCED_WIDTH, else the terminal's up to 80)."""
        from click import formatting

        width = self.terminal_width or formatting.FORCED_WIDTH
        if width is None:
            width = max(min(terminal_columns(), self.max_content_width or 80) - 2, 50)
        return self.formatter_class(width=width, max_width=self.max_content_width)


class LogdoctorCommand(click.Command):
    context_class = LogdoctorContext


# The cyclic garbage collector runs a young collection every 700 allocations, and importing the parser, the rule
# engine and the reports allocates some 10^6 objects that all live on: a run spent 3% of a 10-line diagnose's
# instructions on collections that found nothing (docs/benchmarks.md, *Start-up*). Until the rules are loaded,
# collections run at most every START_GC_THRESHOLD allocations; then at Python's thresholds again.
START_GC_THRESHOLD = 100_000
_python_gc_thresholds: list[tuple[int, int, int]] = []  # Python's, while the start-up's are in force


def end_start_up() -> None:
    """The start-up is over (the rules are loaded): Python's own collection thresholds again."""
    if _python_gc_thresholds:
        gc.set_threshold(*_python_gc_thresholds.pop())


class LogdoctorGroup(click.Group):
    context_class = LogdoctorContext
    command_class = LogdoctorCommand

    def main(self, *args: Any, **kwargs: Any) -> Any:
        thresholds = gc.get_threshold()
        if not _python_gc_thresholds and 0 < thresholds[0] < START_GC_THRESHOLD:
            _python_gc_thresholds.append(thresholds)
            gc.set_threshold(START_GC_THRESHOLD, *thresholds[1:])
        try:
            return super().main(*args, **kwargs)
        finally:
            end_start_up()

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, hoist_global_options(args, list(self.commands)))
        except click.UsageError as exc:
            if isinstance(exc, OneLineUsageError):
                raise
            raise OneLineUsageError(exc.format_message(), exc.ctx or ctx) from exc

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:  # a subcommand's (or a sub-group's) arguments
            if isinstance(exc, OneLineUsageError):
                raise
            raise OneLineUsageError(exc.format_message(), exc.ctx or ctx) from exc


def examples(*lines: str) -> str:
    """A command's help epilog: its examples, kept as written (`\\b` stops click rewrapping them)."""
    return "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)


MAIN_EPILOG = """\b
Examples:
  logdoctor diagnose vllm-serve.log
  logdoctor diagnose root@gpu-host --format json -o report.json
  logdoctor diff sglang.log vllm.log
  logdoctor watch vllm-serve.log
  logdoctor --color never diagnose - < pasted.log

Global options may also follow the command (`logdoctor diagnose x.log --debug`).
Shell completion: eval "$(_LOGDOCTOR_COMPLETE=bash_source logdoctor)" (docs/cli.md)."""


@click.group(cls=LogdoctorGroup, context_settings={"help_option_names": ["-h", "--help"]}, epilog=MAIN_EPILOG)
@click.version_option(__version__, prog_name="logdoctor")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour: auto follows the terminal, NO_COLOR and FORCE_COLOR.",
)
def main(debug: bool, color: str) -> None:
    """Diagnose slow vLLM and SGLang deployments from their logs."""


# --- parse ---------------------------------------------------------------------------------------


def iter_sources(
    paths: tuple[str, ...], engine: str, limits: ReadLimits | None = None
) -> Iterator[tuple[EventStream, Callable[[], SourceStats]]]:
    """Open each path and give its event stream; missing paths fail before anything is read."""
    from logdoctor.parse.pipeline import EventStream, SourceStats, candidate_keywords
    from logdoctor.sources.local import open_local

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


@main.command(
    epilog=examples(
        "logdoctor parse vllm-serve.log",
        "logdoctor parse --format jsonl server.log.gz | jq .type",
        "kubectl logs pod/vllm-0 | logdoctor parse -",
    )
)
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
    from logdoctor.report.events import event_json, event_table, say
    from logdoctor.sanitize import one_line

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


def _remember_explain(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    ctx.meta["logdoctor.explain"] = value


def explain_wanted() -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get("logdoctor.explain"))


def report_options(func: F) -> F:
    func = click.option(
        "--format",
        "fmt",
        type=click.Choice(["text", "json", "markdown", "html", "github"]),
        default="text",
        show_default=True,
        help="Report format (html: one offline page with timelines; github: an issue body, docs/reports.md).",
    )(func)
    func = click.option(
        "--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write the report to FILE, not stdout."
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
        "--explain",
        is_flag=True,
        expose_value=False,
        callback=_remember_explain,
        help="Show how each score was computed (impact x strength = score) and why diff rows matter.",
    )(func)
    func = click.option(
        "--config",
        "config_path",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        help="Suppressions file (default: ./.logdoctor.yaml when present).",
    )(func)
    return func


def perf_option_declarations(func: F) -> F:
    """--gpu and --hardware (expected performance, docs/expected-performance.md); the command turns them into
    `PerfOptions` with `logdoctor.perf.assess.perf_options`."""
    func = click.option(
        "--hardware",
        "hardware_files",
        multiple=True,
        type=click.Path(dir_okay=False),
        metavar="FILE",
        help="Extra hardware YAML (GPUs, model shapes, constants; repeatable), read after the built-in table.",
    )(func)
    func = click.option(
        "--gpu",
        metavar="NAME",
        help='The GPU the deployment runs on, e.g. --gpu "RTX A6000" (default: from host facts in the input).',
    )(func)
    return func


def load_rule_set(rule_dirs: tuple[Path, ...], no_builtin_rules: bool) -> list[LoadedRule]:
    from logdoctor.engine.rules import load_rules

    if no_builtin_rules and not rule_dirs:
        raise UsageError("--no-builtin-rules needs at least one --rules DIR")
    rules = load_rules(rule_dirs, builtin=not no_builtin_rules)
    end_start_up()
    return rules


def exit_code_for(diagnoses: Sequence[Diagnosis | DiffReport], fail_on: str) -> int:
    from logdoctor.engine.result import SEVERITY_ORDER

    if fail_on == "never":
        return 0
    threshold = SEVERITY_ORDER[fail_on]
    for d in diagnoses:
        if any(SEVERITY_ORDER[f.severity] >= threshold for f in d.findings):
            return int(ExitStatus.FINDINGS)
    return int(ExitStatus.OK)


def emit_many(
    diagnoses: Sequence[Diagnosis],
    hosts: Sequence[str],
    fmt: str,
    verbose: bool,
    observed: Sequence[Observed] = (),
    noun: str = "hosts",
    outliers: Sequence[Any] = (),
) -> None:
    """One report per host (or deployment: `noun`): one JSON object with them inside (docs/json.md), headed
    sections otherwise."""
    if len(diagnoses) == 1:
        emit(diagnoses[0], fmt, verbose, observed[0] if observed else None)
    elif fmt == "json":
        from logdoctor.report.json import fleet_report, render_json

        click.echo(render_json(fleet_report(hosts, diagnoses, noun, outliers)))
    elif fmt in ("html", "github"):
        from logdoctor.report.formats import render_fleet_page

        click.echo(render_fleet_page(fmt, hosts, diagnoses, observed), nl=False)
    else:
        from rich.text import Text

        from logdoctor.report.fleet import fleet_markdown, render_fleet

        for host, diagnosis in zip(hosts, diagnoses, strict=True):
            if fmt == "markdown":
                click.echo(f"# {host}\n")
            else:
                stdout_console().print(Text(f"== {host} ==", style="bold"), soft_wrap=True)
            emit(diagnosis, fmt, verbose)
        if fmt == "markdown":
            click.echo(fleet_markdown(hosts, diagnoses, noun=noun), nl=False)
        else:
            render_fleet(stdout_console(), hosts, diagnoses, noun=noun)


def emit(diagnosis: Diagnosis, fmt: str, verbose: bool, observed: Observed | None = None) -> None:
    # Each format's renderer is imported for it alone (the JSON report's models, rich for the terminal).
    if fmt in ("html", "github"):
        from logdoctor.report.formats import render_one

        click.echo(render_one(fmt, diagnosis, observed), nl=False)
    elif fmt == "json":
        from logdoctor.report.json import render_json

        click.echo(render_json(diagnosis))
    elif fmt == "markdown":
        from logdoctor.report.markdown import render_markdown

        click.echo(render_markdown(diagnosis), nl=False)
    else:
        from logdoctor.report.terminal import render_terminal

        render_terminal(diagnosis, stdout_console(), verbose=verbose, explain=explain_wanted())


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


def _host_options(values: dict[str, Any]) -> Any:
    from logdoctor.fleet import HostOptions

    return HostOptions(**values)


# Options of `diagnose HOST...` and `diff` (docs/ssh.md), given to the command as one `ssh: HostOptions`.
ssh_options = option_bundle(
    "ssh",
    [
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
        click.option(
            "--timeout",
            type=click.FloatRange(min=0.1),
            help="Seconds to connect, log in, and run each remote command other than a log read (default 10).",
        ),
        click.option(
            "--read-timeout",
            type=click.FloatRange(min=0.1),
            default=DEFAULT_READ_TIMEOUT,
            show_default=True,
            help="Seconds one remote log read may take (what arrived is kept, marked partial).",
        ),
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
    ],
    _host_options,
)


@main.command(
    epilog=examples(
        "logdoctor diagnose vllm-serve.log",
        "logdoctor diagnose vllm-serve.log nccl.log bench.txt   # one deployment",
        "logdoctor diagnose root@gpu-host --format json -o report.json",
        "logdoctor diagnose --hosts fleet.txt",
        "logdoctor diagnose prometheus://127.0.0.1:9090 --selector '{job=\"vllm\"}' --since 30m",
        "logdoctor diagnose vllm-serve.log --format html -o report.html",
        "logdoctor diagnose vllm-serve.log --explain -v   # the score working, every check",
    )
)
@click.argument("targets", nargs=-1, metavar="[PATH... | - | HOST... | URL...]")
@engine_option
@rules_options
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
    from logdoctor.deployments import diagnose_deployments, parse_deployments
    from logdoctor.engine.suppress import load_suppressions
    from logdoctor.fleet import diagnose_hosts, mark_partial, read_hosts_file, split_targets
    from logdoctor.perf.assess import perf_options
    from logdoctor.progress import ReadProgress
    from logdoctor.report.formats import PAGE_FORMATS, check_output, observed_of, written_to
    from logdoctor.run import local_line_sources
    from logdoctor.stores import check_store_targets, diagnose_stores
    from logdoctor.urltargets import diagnose_url_targets, emit_outliers

    check_output(fmt, output)
    perf = perf_options(gpu, hardware_files)
    suppressions = load_suppressions(config_path)
    listed = read_hosts_file(hosts_file) if hosts_file is not None else []
    url_targets, rest = split_url_targets(targets)
    if url_targets:  # prometheus://... (logdoctor/urltargets.py)
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
        sources = local_line_sources(targets, limits, engine=engine)  # a big file's parse starts (parse/parallel.py)
        rules = load_rule_set(rule_dirs, no_builtin_rules)
        # Several deployments (or server starts of one log) are reported one by one (docs/cli.md).
        with ReadProgress(stderr_console()) as progress:  # a spinner on a terminal's stderr, else nothing
            deployments = parse_deployments(progress.sources(sources), engine, all_runs=all_runs)
        diagnoses = diagnose_deployments(deployments, rules, engine=engine, suppressions=suppressions, perf=perf)
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
    from logdoctor.progress import HostProgress

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
    with written_to(output):
        emit_many(diagnoses, [c.host for c in collections], fmt, verbose, shown)
    failed = any(not c.complete for c in collections)
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


def emit_diff(report: DiffReport, fmt: str, verbose: bool, observed: Sequence[Observed] = ()) -> None:
    from logdoctor.report.diff_markdown import render_diff_markdown
    from logdoctor.report.diff_terminal import render_diff_terminal
    from logdoctor.report.json import render_json

    if fmt == "html":
        from logdoctor.report.html import render_diff_html

        click.echo(render_diff_html(report, *observed), nl=False)
    elif fmt == "json":
        click.echo(render_json(report))
    elif fmt == "markdown":
        click.echo(render_diff_markdown(report), nl=False)
    else:
        render_diff_terminal(report, stdout_console(), verbose=verbose, explain=explain_wanted())


_SIDE_ENGINE = EngineChoice()


@main.command(
    epilog=examples(
        "logdoctor diff sglang.log vllm.log",
        "logdoctor diff --baseline fast.log --candidate slow.log --candidate nccl.log",
        "logdoctor diff root@fast-host root@slow-host --format json",
        "logdoctor diff 'clickhouse://ch:8123/otel_logs#pod=vllm-0' 'clickhouse://ch:8123/otel_logs#pod=vllm-1'",
    )
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
    from logdoctor.diff import diff_parsed
    from logdoctor.engine.suppress import load_suppressions
    from logdoctor.perf.assess import perf_options
    from logdoctor.report.formats import check_output, observed_of, written_to
    from logdoctor.run import parse_sources

    if fmt == "github":
        raise UsageError("--format github describes one deployment: run `logdoctor diagnose` on the slow one")
    check_output(fmt, output)
    perf = perf_options(gpu, hardware_files)
    rules = load_rule_set(rule_dirs, no_builtin_rules)
    suppressions = load_suppressions(config_path)
    if compare_runs:  # two server starts of one log (logdoctor/deployments.py)
        from logdoctor.deployments import last_two_runs

        if len(targets) != 1 or baseline_targets or candidate_targets:
            raise UsageError("diff --runs takes one LOG: its last server start is compared with the one before")
        forced = candidate_engine if candidate_engine != "auto" else baseline_engine
        base_parsed, cand_parsed = last_two_runs(targets[0], limits, forced)
    else:
        from logdoctor.progress import ReadProgress
        from logdoctor.stores import diff_side_sources  # files, hosts, or clickhouse:// / prometheus:// URLs

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
    )
    with written_to(output):
        emit_diff(report, fmt, verbose, [observed_of(fmt, p.events) for p in (base_parsed, cand_parsed)])
    click.get_current_context().exit(exit_code_for([report], fail_on))


# --- watch ---------------------------------------------------------------------------------------


@main.command(
    epilog=examples(
        "logdoctor watch vllm-serve.log",
        "logdoctor watch vllm-serve.log --interval 10 | tee changes.txt",
        "docker logs -f vllm 2>&1 | logdoctor watch -",
        "logdoctor watch root@kpro5",
        "logdoctor watch root@kpro5:/var/log/vllm/serve.log",
    )
)
@click.argument("target", metavar="PATH | HOST[:REMOTE_PATH] | -")
@click.option(
    "--interval",
    type=click.FloatRange(min=0.1),
    default=2.0,
    show_default=True,
    help="Seconds between diagnoses while new lines arrive.",
)
@engine_option
@rules_options
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), help="Suppressions file.")
@click.option("--verbose", "-v", is_flag=True, help="The live view lists every could-not-check item.")
@ssh_options
@handle_errors
def watch(
    target: str,
    interval: float,
    engine: str,
    rule_dirs: tuple[Path, ...],
    no_builtin_rules: bool,
    config_path: Path | None,
    verbose: bool,
    ssh: HostOptions,
) -> None:
    """Follow a growing log (tail -F, through rotation) and keep its diagnosis current.

    On a terminal the ranked view is redrawn in place; piped, one line is printed for each change of
    the verdict or the ranked causes. Ctrl-C or SIGTERM ends it (exit 0). A host is followed over SSH
    (`tail -F` on the host, reconnecting when the connection drops): its server's log as `diagnose HOST`
    finds it, or the path after `HOST:` or --log (docs/cli.md)."""
    from logdoctor.engine.suppress import load_suppressions
    from logdoctor.watch import run_watch

    run_watch(
        target,
        load_rule_set(rule_dirs, no_builtin_rules),
        engine=engine,
        suppressions=load_suppressions(config_path),
        interval=interval,
        console=stdout_console(),
        err=stderr_console(),
        verbose=verbose,
        ssh=ssh,
    )


# --- rules ---------------------------------------------------------------------------------------


@main.group(
    epilog=examples("logdoctor rules list", "logdoctor rules show below-break-even", "logdoctor rules check my-rules/")
)
def rules() -> None:
    """List, show and check rules."""


@rules.command("list", epilog=examples("logdoctor rules list --rules my-rules/"))
@rules_options
@handle_errors
def rules_list(rule_dirs: tuple[Path, ...], no_builtin_rules: bool) -> None:
    """List every rule with its cause and engines."""
    from rich.table import Table
    from rich.text import Text

    from logdoctor.sanitize import clean_text

    loaded = load_rule_set(rule_dirs, no_builtin_rules)
    table = Table(show_lines=False)
    for column in ("id", "cause", "engines", "status", "title"):
        table.add_column(column, no_wrap=column != "title")
    for item in sorted(loaded, key=lambda r: (r.rule.cause, r.id)):
        r = item.rule
        table.add_row(*(Text(clean_text(cell)) for cell in (r.id, r.cause, ",".join(r.engines), r.status, r.title)))
    stdout_console().print(table)


@rules.command("show", epilog=examples("logdoctor rules show spec-low-acceptance"))
@click.argument("rule_id")
@rules_options
@handle_errors
def rules_show(rule_id: str, rule_dirs: tuple[Path, ...], no_builtin_rules: bool) -> None:
    """Print one rule's file."""
    from logdoctor.sanitize import clean_text, one_line

    loaded = load_rule_set(rule_dirs, no_builtin_rules)
    for item in loaded:
        if item.id == rule_id:
            click.echo(f"# {one_line(item.path)}")
            click.echo(clean_text(Path(item.path).read_text(encoding="utf-8")), nl=False)
            return
    raise UsageError(f"no rule with id '{rule_id}' (see `logdoctor rules list`)")


@rules.command("facts", epilog=examples("logdoctor rules facts | grep spec."))
def rules_facts() -> None:
    """List every fact a rule condition may use, with its kind."""
    from rich.table import Table

    from logdoctor.facts import FACTS

    table = Table(show_lines=False)
    for column in ("fact", "kind", "meaning"):
        table.add_column(column, no_wrap=column != "meaning")
    for name, spec in FACTS.items():
        table.add_row(name, spec.kind, spec.description)
    stdout_console().print(table)


@rules.command("check", epilog=examples("logdoctor rules check", "logdoctor rules check my-rules/ --no-builtin-rules"))
@click.argument("directories", nargs=-1, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--no-builtin-rules", is_flag=True, help="Check DIRECTORIES alone (a pack that replaces the built-in set)."
)
@handle_errors
def rules_check(directories: tuple[Path, ...], no_builtin_rules: bool) -> None:
    """Validate rule files (schema, ids and causes from the paths, unique ids, known facts, samples fire).

    With no DIRECTORIES, checks the built-in rule set; DIRECTORIES are checked against it (no id may
    repeat a built-in one) and only their own samples run."""
    from logdoctor.engine.rules import builtin_rules_dir, load_rules
    from logdoctor.testing.samples import check_samples

    builtin = builtin_rules_dir().resolve()
    against_builtin = not no_builtin_rules and all(d.resolve() != builtin for d in directories)
    loaded = load_rules(directories, builtin=not directories or against_builtin)
    checked = [item for item in loaded if not directories or not item.builtin]
    problems = check_samples(checked)
    if problems:
        raise RuleError(f"{len(problems)} problem(s) in rule samples:\n  " + "\n  ".join(problems))
    click.echo(f"{len(checked)} rules OK")


# --- test ----------------------------------------------------------------------------------------


@main.command(
    "test", epilog=examples("logdoctor test", "logdoctor test fixtures/logs/story --format junit -o junit.xml")
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
        click.echo(f"{output}: {summary_line(suite)}", err=True)
    click.get_current_context().exit(int(suite.exit_status))


def run() -> None:
    from logdoctor.sources.limits import raise_on_termination

    raise_on_termination()  # SIGTERM/SIGHUP unwind like Ctrl-C: the prefilter's children are killed
    main(prog_name="logdoctor")


if __name__ == "__main__":  # pragma: no cover
    run()

__all__ = ["ExitStatus", "main"]
