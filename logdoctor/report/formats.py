"""The CLI's entry to the HTML and GitHub formats and to `-o/--output` (docs/reports.md).

logdoctor diagnose vllm.log --format html -o report.html
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from logdoctor.errors import InputError, UsageError
from logdoctor.sanitize import clean, clean_text

if TYPE_CHECKING:  # the page formats' models are imported when a page is drawn (docs/benchmarks.md, *Start-up*)
    from logdoctor.engine.diffresult import DiffReport
    from logdoctor.engine.result import Diagnosis
    from logdoctor.events import EventBase
    from logdoctor.report.observed import Observed

PAGE_FORMATS = ("html", "github")  # the formats that show more than the diagnosis (see observed_of)


def observed_of(fmt: str, events: Sequence[EventBase]) -> Observed:
    """The time series and launch settings, for the formats that show them; nothing for the others."""
    from logdoctor.report.observed import Observed
    from logdoctor.report.observed import observed_of as _observed_of

    return _observed_of(events) if fmt in PAGE_FORMATS else Observed()


def check_output(fmt: str, output: Path | None) -> None:
    """An HTML page is not for a terminal: it needs -o FILE or a redirect."""
    if fmt == "html" and output is None and sys.stdout.isatty():
        raise UsageError("--format html writes a page: give -o FILE (or redirect stdout)")


@contextlib.contextmanager
def written_to(output: Path | None) -> Iterator[None]:
    """Send what the renderers print (click.echo, rich) to `output` instead of stdout."""
    if output is None:
        yield
        return
    try:
        handle = output.open("w", encoding="utf-8")
    except OSError as exc:
        raise InputError(f"-o {output}: cannot write it ({exc.strerror or exc})") from exc
    with handle, contextlib.redirect_stdout(handle):
        yield


# The output border of the page formats (docs/security.md): the models are cleaned before they are drawn (so a
# log's ESC is the text `\x1b` inside the page's JSON, not a byte JSON.parse would refuse), and the page once more
# after, so no renderer's own text can carry a control byte out either.


def render_one(fmt: str, diagnosis: Diagnosis, observed: Observed | None) -> str:
    from logdoctor.report.observed import Observed

    diagnosis, shown = clean(diagnosis), clean(observed or Observed())
    if fmt == "html":
        from logdoctor.report.html import render_html

        return clean_text(render_html(diagnosis, shown))
    from logdoctor.report.github import render_github

    return clean_text(render_github(diagnosis, shown))


def render_fleet_page(
    fmt: str, hosts: Sequence[str], diagnoses: Sequence[Diagnosis], observed: Sequence[Observed]
) -> str:
    hosts, diagnoses, observed = clean(list(hosts)), clean(list(diagnoses)), clean(list(observed))
    if fmt == "html":
        from logdoctor.report.html import render_fleet_html

        return clean_text(render_fleet_html(hosts, diagnoses, observed))
    from logdoctor.report.github import render_github_fleet

    return clean_text(render_github_fleet(hosts, diagnoses, observed))


def render_diff_page(report: DiffReport, baseline: Observed, candidate: Observed) -> str:
    from logdoctor.report.html import render_diff_html

    return clean_text(render_diff_html(clean(report), clean(baseline), clean(candidate)))
