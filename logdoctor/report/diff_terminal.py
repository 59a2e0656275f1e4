"""The rich terminal report of `logdoctor diff`: the gap, one table of both deployments, the flags to
port, why the rows matter, then the findings.

    candidate is 4.0x slower per request (18.2 vs 73.5 tok/s)
      plausibly: spec-net-loss ~2.1x, spec-low-acceptance ~1.9x (score share, docs/diff.md)
    ! speculative_method    mtp                       dflash
                            --speculative-algorithm   --speculative-config
    to set the baseline's values on vllm 0.20.1:
      speculative_method, num_speculative_tokens, draft_model, mean_acceptance_length
          --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}'
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from logdoctor.engine.diffresult import Difference, DiffReport, DiffSide, engine_label, format_value
from logdoctor.report.performance import render_diff_performance_terminal
from logdoctor.report.terminal import finding_panel, render_insufficient
from logdoctor.sanitize import clean

_MARK = {"matters": ("!", "bold red"), "differs": ("≠", "yellow"), "unknown": ("?", "dim"), "equal": ("=", "dim")}


def _side_line(label: str, side: DiffSide) -> Text:
    names = ", ".join(s.name for s in side.sources) or "-"
    return Text.assemble((f"  {label:<10}", "bold"), (f"{engine_label(side):<16}", "bold cyan"), f" {names}")


def _value(row: Difference, baseline: bool) -> Text:
    value = row.baseline if baseline else row.candidate
    detail = row.baseline_detail if baseline else row.candidate_detail
    text = Text(format_value(row.key, value, detail), style="dim" if value is None else "")
    spelled = (row.baseline_flag or row.baseline_key) if baseline else (row.candidate_flag or row.candidate_key)
    if spelled:
        text.append(f"\n{spelled}", style="dim")
    return text


def _table(report: DiffReport) -> Table:
    table = Table(show_lines=False, expand=False, pad_edge=False)
    table.add_column("", no_wrap=True)
    table.add_column("setting / measurement", no_wrap=True)
    table.add_column(Text(f"baseline ({engine_label(report.baseline)})"), overflow="fold")
    table.add_column(Text(f"candidate ({engine_label(report.candidate)})"), overflow="fold")
    for row in report.differences:
        mark, style = _MARK["matters" if row.matters else row.state]
        name = Text(row.key, style="bold" if row.matters else "")
        table.add_row(Text(mark, style=style), name, _value(row, True), _value(row, False))
    return table


def _ports(report: DiffReport, verbose: bool) -> dict[str, list[Difference]]:
    """The flags that set the baseline's values on the candidate's engine, each flag once."""
    ports: dict[str, list[Difference]] = {}
    for row in report.differences:
        if row.port and (row.matters or verbose):
            ports.setdefault(row.port, []).append(row)
    return ports


def render_diff_terminal(report: DiffReport, console: Console, *, verbose: bool = False) -> None:
    report = clean(report)
    console.print(Text("logdoctor diff", style="bold"))
    console.print(_side_line("baseline", report.baseline))
    console.print(_side_line("candidate", report.candidate))
    console.print()
    gap = report.gap
    if gap is not None:
        console.print(Text(f"candidate is {gap.summary}", style="bold red" if gap.ratio >= 1.05 else "bold green"))
        if gap.attribution:
            shares = ", ".join(f"{s.cause} ~{s.factor:.1f}x" for s in gap.attribution)
            rest = f"; unexplained ~{gap.ratio**gap.unexplained_share:.1f}x" if gap.unexplained_share >= 0.05 else ""
            console.print(Text(f"  plausibly: {shares}{rest} (score share, docs/diff.md)", style="dim"))
        elif gap.ratio >= 1.05:
            console.print(Text("  no finding explains it (see could-not-check below)", style="dim"))
        elif gap.ratio <= 1 / 1.05:
            console.print(Text("  the baseline is the slower one: give the fast deployment first", style="dim"))
    else:
        console.print(Text("no throughput both logs show: the gap cannot be measured", style="dim"))
    render_diff_performance_terminal(report, console)
    if report.differences:
        console.print(_table(report))
    if report.folded:
        console.print(Text(f"{report.folded} equal or unknown rows folded (--all shows them)", style="dim"))
    ports = _ports(report, verbose)
    if ports:
        console.print(Text(f"to set the baseline's values on {engine_label(report.candidate)}:", style="bold"))
        for flag, owners in ports.items():
            matters = any(row.matters for row in owners)
            console.print(Text("  " + ", ".join(row.key for row in owners), style="" if matters else "dim"))
            console.print(Text(f"      {flag}", style="green" if matters else "dim"), soft_wrap=True)
    explained = [row for row in report.differences if row.matters or (verbose and row.state != "equal")]
    if explained:
        console.print(Text("why they matter:", style="bold"))
        why = Table.grid(padding=(0, 1))
        why.add_column(no_wrap=True)
        why.add_column(style="dim")
        for row in explained:
            why.add_row(Text(f"  {row.key}", style="bold" if row.matters else ""), Text(row.why))
        console.print(why)
    console.print()
    style = "bold green" if report.verdict.healthy else "bold red"
    console.print(Text(report.verdict.summary, style=style))
    in_baseline = set(report.baseline.findings)
    for index, finding in enumerate(report.findings, start=1):
        panel = finding_panel(index, finding)
        if finding.rule in in_baseline:
            panel.subtitle = "also in the baseline: explains none of the gap"
            panel.subtitle_align = "right"
        console.print(panel)
    render_insufficient(console, report.insufficient_data, verbose=verbose)
    for warning in report.warnings:
        console.print(Text(f"warning: {warning}", style="yellow"))
