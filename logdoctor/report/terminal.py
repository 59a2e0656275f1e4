"""The rich terminal report: ranked findings with evidence and fixes, then ruled out and could-not-check."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from logdoctor.engine.result import Diagnosis, Finding, RuleOutcome
from logdoctor.report.performance import render_performance_terminal
from logdoctor.sanitize import clean

EVIDENCE_SHOWN = 4
# Display only: drop a `(Proc pid=N) LEVEL MM-DD HH:MM:SS [file.py:N] ` header so the message fits one line.
_HEADER_RE = re.compile(
    r"^(?:\([^()]*pid=\d+[^()]*\)\s*)*(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d \[?[^\]\s]+\] )?"
)


def _short(source: str) -> str:
    return source.rsplit("/", 1)[-1]


_SEVERITY_STYLE = {"high": "bold red", "medium": "yellow", "low": "cyan", "info": "dim"}


def finding_panel(index: int, f: Finding) -> Panel:
    parts: list[Text | Table] = []
    # Text, never markup: log values (`/models/[/x]`, `[link=...]`) are shown as they are.
    parts.append(Text(f.explanation, style="bold"))
    if f.estimate:
        parts.append(Text.assemble(("estimated effect:", "italic"), f" {f.estimate}"))
    if f.evidence:
        ev = Table.grid(padding=(0, 1))
        labels = [f"{_short(e.source)}:{e.line}" for e in f.evidence[:EVIDENCE_SHOWN]]
        ev.add_column(style="cyan", no_wrap=True, min_width=max(len(label) for label in labels))
        ev.add_column(no_wrap=True, overflow="ellipsis")
        for label, e in zip(labels, f.evidence, strict=False):
            ev.add_row(Text(label), Text(_HEADER_RE.sub("", e.text, count=1)))
        if len(f.evidence) > EVIDENCE_SHOWN:
            ev.add_row("", Text(f"... {len(f.evidence) - EVIDENCE_SHOWN} more (--format json)", style="dim"))
        parts.append(Text("evidence", style="dim"))
        parts.append(ev)
    if f.fix:
        parts.append(Text("fix", style="dim"))
        for step in f.fix:
            parts.append(Text(f"  {step}", style="green"))
    parts.append(Text(f.working, style="dim"))
    title = Text.assemble(
        (f"{index}. ", "bold"),
        (f"[{f.score:3d}] ", _SEVERITY_STYLE[f.severity]),
        (f"{f.cause}", "bold"),
        (f"  {f.title}", ""),
    )
    return Panel(Group(*parts), title=title, title_align="left", border_style=_SEVERITY_STYLE[f.severity])


def render_insufficient(console: Console, outcomes: Sequence[RuleOutcome], *, verbose: bool) -> None:
    """The "could not check" section: the first eight, or all with their hints under --verbose."""
    if not outcomes:
        return
    console.print(Text(f"Could not check ({len(outcomes)}):", style="bold"))
    shown = outcomes if verbose else outcomes[:8]
    for o in shown:
        hint = f" ({o.hints[0]})" if o.hints and verbose else ""
        console.print(Text(f"  {o.cause} [{o.rule}]: {o.reason}{hint}", style="dim"))
    if len(shown) < len(outcomes):
        console.print(Text(f"  ... {len(outcomes) - len(shown)} more (--verbose)", style="dim"))


def render_terminal(d: Diagnosis, console: Console, *, verbose: bool = False) -> None:
    d = clean(d)
    version = f" {d.engine.version}" if d.engine.version else ""
    names = ", ".join(s.name for s in d.sources)
    console.print(Text.assemble(("logdoctor ", "bold"), (f"{d.engine.name}{version}", "bold cyan"), f"  {names}"))
    style = "bold green" if d.verdict.healthy else "bold red"
    console.print(Text(d.verdict.summary, style=style))
    console.print()
    for index, finding in enumerate(d.findings, start=1):
        console.print(finding_panel(index, finding))
    render_performance_terminal(d, console, verbose=verbose)
    if d.ruled_out:
        console.print(Text(f"Ruled out ({len(d.ruled_out)}):", style="bold"))
        console.print(Text("  " + ", ".join(sorted({o.cause for o in d.ruled_out})), style="dim"))
    render_insufficient(console, d.insufficient_data, verbose=verbose)
    if d.suppressed:
        console.print(
            Text(f"Suppressed ({len(d.suppressed)}): " + ", ".join(o.rule for o in d.suppressed), style="dim")
        )
    for warning in d.warnings:
        console.print(Text(f"warning: {warning}", style="yellow"))
    for error in d.errors:
        console.print(Text(f"error: {error.get('host', '')}: {error.get('error', '')}", style="red"))
