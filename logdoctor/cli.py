"""The `logdoctor` command: parse arguments, run the stages, choose the renderer.

Exit codes (docs/cli.md): 0 ok, 1 findings at or above --fail-on (or failing tests),
2 usage or input error, 3 collection error.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import click
from rich.console import Console
from rich.table import Table

from logdoctor import __version__
from logdoctor.errors import ExitStatus, LogdoctorError
from logdoctor.events import EventBase
from logdoctor.parse.pipeline import EventStream, SourceStats, candidate_keywords
from logdoctor.sources.local import open_local

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
            click.echo(f"logdoctor: error: {exc}", err=True)
            ctx.exit(int(exc.exit_status))
        except BrokenPipeError:
            # `logdoctor parse big.log | head`: stop quietly.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            ctx.exit(0)
        except KeyboardInterrupt:
            click.echo("logdoctor: interrupted", err=True)
            ctx.exit(130)

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


def iter_sources(paths: tuple[str, ...], engine: str) -> Iterator[tuple[EventStream, Callable[[], SourceStats]]]:
    """Open each path and give its event stream; missing paths fail before anything is read."""
    sources = [open_local(p) for p in paths]
    keywords = candidate_keywords()
    for source in sources:
        stats = SourceStats(name=source.name, kind=source.kind, path=None if source.kind == "stdin" else source.path)
        stream = EventStream(source.name, source.lines(keywords), engine=engine, stats=stats)

        def finish(source: Any = source, stats: SourceStats = stats) -> SourceStats:
            stats.bytes_read = source.bytes_read
            stats.prefiltered = source.prefiltered
            if source.prefiltered and source.total_lines is not None:
                stats.lines = source.total_lines
            return stats

        yield stream, finish


def event_record(event: EventBase) -> dict[str, Any]:
    data = event.model_dump(mode="json", exclude_none=True)
    ordered = {"type": data.pop("type"), "source": data.pop("source"), "line": data.pop("line")}
    if "end_line" in data:
        ordered["end_line"] = data.pop("end_line")
    ordered.update(data)
    return ordered


def _event_summary(event: EventBase) -> str:
    data = event.model_dump(
        mode="json",
        exclude_none=True,
        exclude={"type", "source", "line", "end_line", "timestamp", "level", "process", "engine"},
    )
    text = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in data.items())
    return text if len(text) <= 300 else text[:297] + "..."


@main.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH... | -")
@click.option("--format", "fmt", type=click.Choice(["table", "jsonl"]), default="table", show_default=True)
@engine_option
@click.option("--explain-detection", is_flag=True, help="Say why each source's engine and version were chosen.")
@click.option("--show-unparsed", is_flag=True, help="Show a sample of candidate lines no grammar recognised.")
@handle_errors
def parse(paths: tuple[str, ...], fmt: str, engine: str, explain_detection: bool, show_unparsed: bool) -> None:
    """Print the typed events found in logs (plain, .gz, or - for stdin)."""
    out = stdout_console()
    err = stderr_console()
    for stream, finish in iter_sources(paths, engine):
        if fmt == "jsonl":
            write = sys.stdout.write
            for event in stream:
                write(json.dumps(event_record(event), ensure_ascii=False) + "\n")
        else:
            table = Table(title=stream.source, show_lines=False, expand=False)
            table.add_column("line", justify="right", style="cyan", no_wrap=True)
            table.add_column("process", no_wrap=True)
            table.add_column("event", style="bold", no_wrap=True)
            table.add_column("values")
            for event in stream:
                line = str(event.line) if event.end_line is None else f"{event.line}-{event.end_line}"
                proc = event.process.label() if event.process else ""
                table.add_row(line, proc, event.type, _event_summary(event))
            out.print(table)
        stats = finish()
        detection = stream.detection
        err.print(
            f"[dim]{stats.name}: {stats.lines} lines, {stats.candidates} candidates, {stats.events} events, "
            f"{stats.unrecognised} unrecognised; engine {detection.engine}"
            + (f" {detection.version}" if detection.version else "")
            + ("; prefiltered by grep" if stats.prefiltered else "")
            + "[/dim]",
            highlight=False,
        )
        if explain_detection:
            for reason in detection.reasons():
                err.print(f"  {reason}", highlight=False, markup=False)
        if show_unparsed:
            for number, text in stats.unrecognised_samples:
                err.print(f"  unparsed {stats.name}:{number}: {text}", highlight=False, markup=False)
    sys.stdout.flush()


def run() -> None:
    main(prog_name="logdoctor")


if __name__ == "__main__":  # pragma: no cover
    run()

__all__ = ["ExitStatus", "main"]
