"""The fleet table that ends a run over several hosts: host, engine, top cause, score.

host    engine        top cause                   score  verdict
kpro5   vllm 0.20.1   spec-net-loss                  82  2 likely problem(s) ...
kpro6   -             -                               -  error: unreachable ...
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from logdoctor.engine.result import Diagnosis
from logdoctor.report.mdtext import text
from logdoctor.sanitize import clean


def fleet_rows(hosts: Sequence[str], diagnoses: Sequence[Diagnosis]) -> list[tuple[str, str, str, str, str]]:
    rows: list[tuple[str, str, str, str, str]] = []
    for host, d in zip(clean(list(hosts)), clean(list(diagnoses)), strict=True):
        if d.errors:
            rows.append((host, "-", "-", "-", "error: " + "; ".join(e.get("error", "") for e in d.errors)))
            continue
        engine = d.engine.name + (f" {d.engine.version}" if d.engine.version else "")
        top = d.findings[0] if d.findings else None
        rows.append((host, engine, top.cause if top else "-", str(top.score) if top else "-", d.verdict.summary))
    return rows


def render_fleet(console: Console, hosts: Sequence[str], diagnoses: Sequence[Diagnosis], noun: str = "hosts") -> None:
    """The table of hosts (or of deployments: `noun`), one row each."""
    table = Table(title=f"{len(hosts)} {noun}", show_lines=False)
    for column in (noun.removesuffix("s"), "engine", "top cause", "score", "verdict"):
        table.add_column(column, no_wrap=column != "verdict", justify="right" if column == "score" else "left")
    for row in fleet_rows(hosts, diagnoses):
        table.add_row(*(Text(cell) for cell in row))
    console.print(table)


def fleet_markdown(hosts: Sequence[str], diagnoses: Sequence[Diagnosis], noun: str = "hosts") -> str:
    heading = "Fleet" if noun == "hosts" else noun.capitalize()
    column = noun.removesuffix("s")
    lines = [f"## {heading}", "", f"| {column} | engine | top cause | score | verdict |", "|---|---|---|---:|---|"]
    lines += [f"| {' | '.join(text(cell).replace('|', '/') for cell in row)} |" for row in fleet_rows(hosts, diagnoses)]
    return "\n".join(lines) + "\n"
