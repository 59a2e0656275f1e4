"""The `logdoctor` command group: global options, and each command's name and summary, its module imported
only when it runs (`logdoctor --help` and `--version` import click and nothing else of weight).

Exit codes (docs/cli.md): 0 ok, 1 findings at or above --fail-on (or failing tests),
2 usage or input error, 3 collection error, 4 internal error (a bug).
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from logdoctor import __version__
from logdoctor.errors import ExitStatus

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

# Options of the group that may also be written after the subcommand (`logdoctor diagnose x.log --debug`).
_GLOBAL_FLAGS = ("--debug", "--version", "--quiet", "-q")
_GLOBAL_VALUED = ("--color",)
# A command's own option that shares a global flag's name stays with the command (`advisories --version 0.20.1`).
_OWN_FLAGS: dict[str, tuple[str, ...]] = {"advisories": ("--version",)}


def hoist_global_options(args: Sequence[str], commands: Sequence[str]) -> list[str]:
    """Move the group's options written after the subcommand to before it; `--` ends the options."""
    args = list(args)
    position = next((i for i, arg in enumerate(args) if arg in commands), None)
    if position is None:
        return args
    head, tail = args[:position], args[position:]
    own = _OWN_FLAGS.get(tail[0], ())
    kept: list[str] = []
    moved: list[str] = []
    index = 0
    while index < len(tail):
        arg = tail[index]
        if arg == "--":
            kept += tail[index:]
            break
        if arg in _GLOBAL_FLAGS and arg not in own:
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

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Examples after the description, options in sections, exit codes at the end (logdoctor/app/helpformat.py)."""
        from logdoctor.app.helpformat import format_command_help

        format_command_help(self, ctx, formatter)


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


# Each command: (its module, the attribute that holds it, the first paragraph of its help). The group's help
# lists the commands from this table, with click's own shortening of that paragraph, so that `logdoctor --help`
# imports no command; `logdoctor CMD ...` imports CMD's module alone (click's documented lazy-group pattern).
# tests/test_cli_options.py checks each summary against the command's help.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "advisories": (
        "logdoctor.app.commands.advisories",
        "advisories",
        "List known performance issues of engine releases (all, or those that apply to --version).",
    ),
    "diagnose": (
        "logdoctor.app.commands.diagnose",
        "diagnose",
        "Rank the likely causes of a slow deployment from its logs.",
    ),
    "diff": (
        "logdoctor.app.commands.diff",
        "diff",
        "What the fast deployment (BASELINE) had that the slow one (CANDIDATE) lacks.",
    ),
    "gpus": (
        "logdoctor.app.commands.gpus",
        "gpus",
        "List the GPUs --gpu takes, with the figures the expected-performance model uses.",
    ),
    "mcp": (
        "logdoctor.app.commands.mcp",
        "mcp",
        "Serve diagnose, diff and parse to agents over the Model Context Protocol (stdio).",
    ),
    "parse": (
        "logdoctor.app.commands.parse",
        "parse",
        "Print the typed events found in logs (plain, .gz, or - for stdin).",
    ),
    "rules": ("logdoctor.app.commands.rules", "rules", "List, show and check rules."),
    "test": (
        "logdoctor.app.commands.fixtures",
        "fixture_tests",
        "Test rules against fixture logs, golden event files and the rules' own samples.",
    ),
    "watch": (
        "logdoctor.app.commands.watch",
        "watch",
        "Follow a growing log (tail -F, through rotation) and keep its diagnosis current.",
    ),
}


class LogdoctorGroup(click.Group):
    """The root group: its commands are loaded from COMMANDS when used, start-up GC thresholds, one-line usage
    errors."""

    context_class = LogdoctorContext
    command_class = LogdoctorCommand

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attribute, _ = COMMANDS[cmd_name]
            command = getattr(importlib.import_module(module), attribute)
            assert isinstance(command, click.Command), f"{module}.{attribute} is not a click command"
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)

    def summary(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """A stand-in that holds the command's summary, for the help and completion lists; the command itself
        when it is loaded already."""
        if cmd_name in self.commands or cmd_name not in COMMANDS:
            return self.get_command(ctx, cmd_name)
        return click.Command(cmd_name, help=COMMANDS[cmd_name][2])

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's listing (Group.format_commands), from the summaries."""
        commands = [
            (name, command)
            for name in self.list_commands(ctx)
            if (command := self.summary(ctx, name)) is not None and not command.hidden
        ]
        if commands:
            limit = formatter.width - 6 - max(len(name) for name, _ in commands)
            with formatter.section("Commands"):
                formatter.write_dl([(name, command.get_short_help_str(limit)) for name, command in commands])

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        """click's completion (Group.shell_complete), from the summaries: no command is imported to complete
        a command's name."""
        from click.shell_completion import CompletionItem

        results = [
            CompletionItem(name, help=command.get_short_help_str())
            for name in self.list_commands(ctx)
            if name.startswith(incomplete) and (command := self.summary(ctx, name)) is not None and not command.hidden
        ]
        results.extend(click.Command.shell_complete(self, ctx, incomplete))
        return results

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] not in COMMANDS:  # an unknown name: "Did you mean ...?" looks among every command
            for name in COMMANDS:
                self.get_command(ctx, name)
        return super().resolve_command(ctx, args)

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
            return super().parse_args(ctx, hoist_global_options(args, self.list_commands(ctx)))
        except click.UsageError as exc:
            if isinstance(exc, OneLineUsageError):
                raise
            help_and_exit(exc)
            raise OneLineUsageError(exc.format_message(), exc.ctx or ctx) from exc

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:  # a subcommand's (or a sub-group's) arguments
            if isinstance(exc, OneLineUsageError):
                raise
            help_and_exit(exc)
            raise OneLineUsageError(exc.format_message(), exc.ctx or ctx) from exc


def help_and_exit(exc: click.UsageError) -> None:
    """A group named without a command (`logdoctor`, `logdoctor rules`) asked for its help: print it, exit 0
    (click words it as a usage error, exit 2, which the one-line form would fold into one line)."""
    if isinstance(exc, click.exceptions.NoArgsIsHelpError) and exc.ctx is not None:
        click.echo(exc.ctx.get_help())
        exc.ctx.exit(0)


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
@click.option("--debug", is_flag=True, help="Add the traceback to an error (the exit code stays the same).")
@click.option("--quiet", "-q", is_flag=True, help="No progress, prompt or notes on stderr; errors and results as ever.")
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour: auto follows the terminal, NO_COLOR and FORCE_COLOR.",
)
def main(debug: bool, quiet: bool, color: str) -> None:
    """Diagnose slow vLLM and SGLang deployments from their logs."""


def run() -> None:
    from logdoctor.sources.limits import raise_on_termination

    raise_on_termination()  # SIGTERM/SIGHUP unwind like Ctrl-C: the prefilter's children are killed
    main(prog_name="logdoctor")


if __name__ == "__main__":  # pragma: no cover
    run()

__all__ = ["ExitStatus", "main"]
