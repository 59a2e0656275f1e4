"""The outliers that end a fleet run over a metrics store: the instances slower than their peers, and why.

outliers: 1 of 20 instances decode well below the fleet median (36.1 tok/s per running request)
instance         tok/s per request   vs median   why (top finding)
127.0.0.1:41913               9.4        0.26x   spec-low-acceptance (score 59): mean acceptance length 1.30 ...
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table
from rich.text import Text

from logdoctor.report.mdtext import text
from logdoctor.sanitize import clean_text


@dataclass(frozen=True)
class Outlier:
    """One instance far below the fleet: its speed, the fleet median, and its top finding (or none)."""

    name: str
    per_request: float  # generated tok/s per running request (median over the range)
    median: float  # the same, fleet median
    reason: str


def _rows(outliers: Sequence[Outlier]) -> list[tuple[str, str, str, str]]:
    return [
        (clean_text(o.name), f"{o.per_request:.1f}", f"{o.per_request / o.median:.2f}x", clean_text(o.reason))
        for o in outliers
    ]


def headline(outliers: Sequence[Outlier], instances: int) -> str:
    if not outliers:
        return f"outliers: none of {instances} instances decodes well below the fleet median"
    return (
        f"outliers: {len(outliers)} of {instances} instances decode well below the fleet median "
        f"({outliers[0].median:.1f} tok/s per running request)"
    )


def render_outliers(console: Console, outliers: Sequence[Outlier], instances: int) -> None:
    console.print(Text(headline(outliers, instances)), highlight=False)
    if not outliers:
        return
    table = Table(show_lines=False)
    for column in ("instance", "tok/s per request", "vs median", "why (top finding)"):
        table.add_column(
            column, no_wrap=column != "why (top finding)", justify="left" if column[0] in "iw" else "right"
        )
    for row in _rows(outliers):
        table.add_row(*(Text(cell) for cell in row))
    console.print(table)


def outliers_markdown(outliers: Sequence[Outlier], instances: int) -> str:
    lines = ["## Outliers", "", text(headline(outliers, instances)), ""]
    if outliers:
        lines += ["| instance | tok/s per request | vs median | why (top finding) |", "|---|---:|---:|---|"]
        lines += [f"| {' | '.join(text(cell).replace('|', '/') for cell in row)} |" for row in _rows(outliers)]
    return "\n".join(lines) + "\n"
