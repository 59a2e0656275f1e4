"""`logdoctor parse`: the typed events found in logs, as a table or JSON lines.

logdoctor parse --format jsonl vllm-serve.log
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from logdoctor.app.cli import LogdoctorCommand, examples
from logdoctor.app.commands.common import engine_option, handle_errors, stderr_console, stdout_console
from logdoctor.app.options import read_limit_options

if TYPE_CHECKING:
    from logdoctor.app.progress import ReadProgress
    from logdoctor.events import EngineWarning, EventBase
    from logdoctor.parse.pipeline import EventStream, SourceStats
    from logdoctor.sources.limits import ReadLimits


def _tap_warnings(events: Iterable[EventBase], warned: list[EngineWarning]) -> Iterator[EventBase]:
    """The events as they come, keeping the warnings the warning vocabulary read (for --show-unparsed)."""
    from logdoctor.events import EngineWarning
    from logdoctor.parse.pipeline import UNPARSED_SAMPLE_SIZE

    for event in events:
        if isinstance(event, EngineWarning) and len(warned) < UNPARSED_SAMPLE_SIZE:
            warned.append(event)
        yield event


def iter_sources(
    paths: tuple[str, ...], engine: str, limits: ReadLimits | None = None, progress: ReadProgress | None = None
) -> Iterator[tuple[EventStream, Callable[[], SourceStats]]]:
    """Open each path and give its event stream; missing paths fail before anything is read."""
    from logdoctor.parse.keywords import candidate_keywords
    from logdoctor.parse.pipeline import EventStream, SourceStats
    from logdoctor.sources.local import open_local

    sources = [open_local(p, limits) for p in paths]
    keywords = candidate_keywords()
    for source in sources:
        stats = SourceStats(name=source.name, kind=source.kind, path=None if source.kind == "stdin" else source.path)
        lines = source.lines(keywords)
        if progress is not None:
            lines = progress.wrap(source.name, source, lines)
        stream = EventStream(source.name, lines, engine=engine, stats=stats)

        def finish(source: Any = source, stats: SourceStats = stats) -> SourceStats:
            stats.bytes_read = source.bytes_read
            stats.prefiltered = source.prefiltered
            stats.notes = list(source.notes)
            if source.prefiltered and source.total_lines is not None:
                stats.lines = source.total_lines
            return stats

        yield stream, finish


@click.command(
    cls=LogdoctorCommand,
    epilog=examples(
        "logdoctor parse vllm-serve.log",
        "logdoctor parse --format jsonl server.log.gz | jq .type",
        "kubectl logs pod/vllm-0 | logdoctor parse -",
    ),
)
@click.argument("paths", nargs=-1, required=True, metavar="PATH... | -")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "jsonl"]),
    default="table",
    show_default=True,
    help="A table, or one JSON object an event (docs/cli.md).",
)
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write the events to FILE, not stdout."
)
@engine_option
@click.option("--explain-detection", is_flag=True, help="Say why each source's engine and version were chosen.")
@click.option(
    "--show-unparsed",
    is_flag=True,
    help="Show a sample of candidate lines no grammar recognised, and the warnings read by the warning vocabulary.",
)
@read_limit_options
@handle_errors
def parse(
    paths: tuple[str, ...],
    fmt: str,
    output: Path | None,
    engine: str,
    explain_detection: bool,
    show_unparsed: bool,
    limits: ReadLimits,
) -> None:
    """Print the typed events found in logs (plain, .gz, or - for stdin)."""
    from logdoctor.app.progress import ReadProgress
    from logdoctor.report.formats import written_to

    with ReadProgress(stderr_console()) as progress, written_to(output):
        _parse(paths, fmt, engine, explain_detection, show_unparsed, limits, progress)


def _parse(
    paths: tuple[str, ...],
    fmt: str,
    engine: str,
    explain_detection: bool,
    show_unparsed: bool,
    limits: ReadLimits,
    progress: ReadProgress,
) -> None:
    from logdoctor.report.events import event_json, event_table, say
    from logdoctor.sanitize import one_line

    out = stdout_console()
    err = stderr_console()
    for stream, finish in iter_sources(paths, engine, limits, progress):
        warned: list[EngineWarning] = []
        events = _tap_warnings(stream, warned) if show_unparsed else stream
        if fmt == "jsonl":
            write = sys.stdout.write
            chunk: list[str] = []
            for event in events:
                chunk.append(event_json(event))
                if len(chunk) >= 512:
                    write("\n".join(chunk) + "\n")
                    chunk.clear()
            if chunk:
                write("\n".join(chunk) + "\n")
        else:
            out.print(event_table(stream.source, events))
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
            for warning in warned:
                what = f"warned ({warning.cause})" if warning.cause else "warning not understood"
                say(err, f"  {what} {one_line(stats.name)}:{warning.line}: {one_line(warning.message)}")
    sys.stdout.flush()
