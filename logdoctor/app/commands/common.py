"""What the commands share: the consoles, one-line errors, the option bundles, the rule set, the renderers.

Imported by each command's module (logdoctor/app/commands/), never by `logdoctor --help` or `--version`.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from logdoctor.app.cli import end_start_up
from logdoctor.app.options import option_bundle, parse_size
from logdoctor.errors import ExitStatus, LogdoctorError, RuleError, UsageError, internal_error_line
from logdoctor.sources.limits import DEFAULT_JOBS, DEFAULT_MAX_BYTES, DEFAULT_READ_TIMEOUT

if TYPE_CHECKING:
    from rich.console import Console

    from logdoctor.diff import DiffReport
    from logdoctor.engine.result import Diagnosis
    from logdoctor.engine.rules import LoadedRule
    from logdoctor.report.observed import Observed
    from logdoctor.report.terminal import ColorChoice


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


def quiet_wanted() -> bool:
    """`--quiet` of this run: nothing on stderr but errors."""
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.find_root().params.get("quiet"))


def stderr_console() -> Console:
    """Progress, prompts and notes; a quiet console (it prints nothing) with `--quiet`."""
    if quiet_wanted():
        from rich.console import Console

        return Console(file=sys.stderr, quiet=True)
    from logdoctor.report.terminal import make_console

    return make_console(color_choice(), stderr=True)


def _print_traceback() -> None:
    """--debug: the traceback of the exception being handled, on stderr (the exit code stays the documented one)."""
    import traceback

    sys.stderr.write(traceback.format_exc())
    sys.stderr.flush()


def handle_errors(func: F) -> F:
    """Turn every LogdoctorError into one line on stderr and its exit code; --debug adds the traceback and keeps
    the code (a script that checks `$?` reads the same with and without it)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        debug = bool(ctx.find_root().params.get("debug"))
        try:
            return func(*args, **kwargs)
        except LogdoctorError as exc:
            from logdoctor.sanitize import clean_text

            if debug:
                _print_traceback()
            click.echo(f"logdoctor: error: {clean_text(str(exc))}", err=True)
            ctx.exit(int(exc.exit_status))
        except BrokenPipeError:
            # `logdoctor parse big.log | head`: stop quietly.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(0)
        except KeyboardInterrupt:
            click.echo("logdoctor: interrupted", err=True)
            ctx.exit(int(ExitStatus.INTERRUPTED))
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except Exception as exc:  # a bug of ours: exit 4, never 1 (= findings)
            if debug:
                _print_traceback()
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


def _use_advisories(ctx: click.Context, param: click.Parameter, value: tuple[Path, ...]) -> None:
    """`--advisories DIR`: checked here (one line per problem, exit 2), then named to the pipeline through the
    environment so that worker processes match them too (logdoctor/engine/advisories.py)."""
    if not value:
        return
    import os

    from logdoctor.engine.advisories import ADVISORIES_ENV, load_advisories

    try:
        load_advisories(value)
    except RuleError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None
    os.environ[ADVISORIES_ENV] = os.pathsep.join(str(p) for p in value)


def advisories_option(func: F) -> F:
    return click.option(
        "--advisories",
        multiple=True,
        type=click.Path(file_okay=False, path_type=Path),
        expose_value=False,
        callback=_use_advisories,
        metavar="DIR",
        help="Add a directory of advisory files, <DIR>/<engine>/<id>.yaml (repeatable; docs/advisories.md).",
    )(func)


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
    `PerfOptions` with `logdoctor.perf.options.perf_options`."""
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


def _host_options(values: dict[str, Any]) -> Any:
    from logdoctor.app.fleet import HostOptions

    return HostOptions(**values)


# Options of `diagnose HOST...` and `diff` (docs/ssh.md), given to the command as one `ssh: HostOptions`.
_SSH_OPTIONS = [
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
        "--jobs",
        type=click.IntRange(min=1),
        default=DEFAULT_JOBS,
        show_default="twice the CPUs, at least 8",  # the same words on every machine, as docs/cli.md has them
        help="Hosts at a time.",
    ),
]
ssh_options = option_bundle("ssh", _SSH_OPTIONS, _host_options)


def ssh_option_list(names: Sequence[str]) -> list[Callable[[Any], Any]]:
    """The SSH options whose long names are `names` (`watch` offers those a follow can honour)."""

    def long_name(option: Callable[[Any], Any]) -> str:
        def probe() -> None: ...

        option(probe)
        param = probe.__click_params__[0]  # type: ignore[attr-defined]
        return str(next(o for o in param.opts if o.startswith("--")))

    return [option for option in _SSH_OPTIONS if long_name(option) in names]


__all__ = ["FAIL_ON", "parse_size"]
