"""The rich terminal report of `logdoctor diff`: the gap, one table of both deployments, the flags to
port, why the rows matter, then the findings.

    candidate is 4.0x slower per request (18.2 vs 73.5 tok/s)
      by the model: speculation 2.76x of 4.04x; the other 1.46x the model does not explain (each problem's recommended action, the numbers diagnose gives)
    ! speculative_method    mtp                       dflash
                            --speculative-algorithm   --speculative-config
    to set the baseline's values on vllm 0.20.1:
      speculative_method, num_speculative_tokens, draft_model, mean_acceptance_length
          --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}'
"""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from logdoctor.engine.diffresult import Difference, DiffReport, DiffSide, engine_label, format_value
from logdoctor.engine.problems import group
from logdoctor.report.performance import attribution_line, render_diff_performance_terminal
from logdoctor.report.terminal import CauseGroup, print_fix, print_wrapped, render_findings, render_insufficient
from logdoctor.sanitize import clean

_MARK = {"matters": ("!", "bold red"), "differs": ("≠", "yellow"), "unknown": ("?", "dim"), "equal": ("=", "dim")}
LEGEND = "! differs and bears on the gap   ≠ differs   ? one log does not show it   = equal"
TABLE_MIN_WIDTH = 110  # narrower: one row a block (the flags would be cut inside table cells)


def _side_line(label: str, side: DiffSide) -> Text:
    names = ", ".join(s.name for s in side.sources) or "-"
    return Text.assemble((f"  {label:<10}", "bold"), (f"{engine_label(side):<16}", "bold cyan"), f" {names}")


def _spelled(row: Difference, baseline: bool) -> str | None:
    return (row.baseline_flag or row.baseline_key) if baseline else (row.candidate_flag or row.candidate_key)


def _value(row: Difference, baseline: bool) -> Text:
    value = row.baseline if baseline else row.candidate
    detail = row.baseline_detail if baseline else row.candidate_detail
    text = Text(format_value(row.key, value, detail), style="dim" if value is None else "")
    spelled = _spelled(row, baseline)
    if spelled:
        # the flag on a line of its own, never folded mid-word
        text.append("\n")
        text.append(spelled, style="dim")
    return text


def _table(report: DiffReport) -> Table:
    table = Table(show_lines=False, expand=False, pad_edge=False, box=box.SIMPLE_HEAD)
    table.add_column("", no_wrap=True)
    table.add_column("setting / measurement", no_wrap=True)
    table.add_column(Text(f"baseline ({engine_label(report.baseline)})"), overflow="fold")
    table.add_column(Text(f"candidate ({engine_label(report.candidate)})"), overflow="fold")
    for row in report.differences:
        mark, style = _MARK["matters" if row.matters else row.state]
        name = Text(row.key, style="bold" if row.matters else "")
        table.add_row(Text(mark, style=style), name, _value(row, True), _value(row, False))
    return table


def _stacked(report: DiffReport, console: Console) -> None:
    """The table for a narrow terminal: a row's values on one line, the flags that set them on the next."""
    for row in report.differences:
        mark, style = _MARK["matters" if row.matters else row.state]
        base = format_value(row.key, row.baseline, row.baseline_detail)
        cand = format_value(row.key, row.candidate, row.candidate_detail)
        line = Text.assemble((mark, style), " ", (row.key, "bold" if row.matters else ""), ": ", base, " → ", cand)
        print_wrapped(console, line, "")
        if row.baseline_flag or row.candidate_flag:
            flags = f"    {row.baseline_flag or '-'} → {row.candidate_flag or '-'}"
            console.print(Text(flags, style="dim"), soft_wrap=True)


def _ports(report: DiffReport, verbose: bool) -> dict[str, list[Difference]]:
    """The flags that set the baseline's values on the candidate's engine, each flag once."""
    ports: dict[str, list[Difference]] = {}
    for row in report.differences:
        if row.port and (row.matters or verbose):
            ports.setdefault(row.port, []).append(row)
    return ports


def render_diff_terminal(report: DiffReport, console: Console, *, verbose: bool = False, explain: bool = False) -> None:
    report = clean(report)
    console.print(Text("logdoctor diff", style="bold"))
    console.print(_side_line("baseline", report.baseline), soft_wrap=True)
    console.print(_side_line("candidate", report.candidate), soft_wrap=True)
    console.print()
    gap = report.gap
    if gap is not None:
        console.print(Text(f"candidate is {gap.summary}", style="bold red" if gap.ratio >= 1.05 else "bold green"))
        if gap.attribution:
            print_wrapped(console, Text(f"  {attribution_line(gap)}", style="dim"), "")
        elif gap.ratio >= 1.05:
            console.print(Text("  no finding explains it (see could-not-check below)", style="dim"))
        elif gap.ratio <= 1 / 1.05:
            console.print(Text("  the baseline is the slower one: give the fast deployment first", style="dim"))
    else:
        console.print(Text("no throughput both logs show: the gap cannot be measured", style="dim"))
    render_diff_performance_terminal(report, console)
    if report.differences:
        console.print(Text(LEGEND, style="dim"), soft_wrap=True)
        if console.width >= TABLE_MIN_WIDTH:
            console.print(_table(report))
        else:
            _stacked(report, console)
    if report.folded:
        console.print(Text(f"{report.folded} equal or unknown rows folded (--all shows them)", style="dim"))
    ports = _ports(report, verbose)
    if ports:
        console.print(Text(f"to set the baseline's values on {engine_label(report.candidate)}:", style="bold"))
        for flag, owners in ports.items():
            matters = any(row.matters for row in owners)
            keys = Text("  " + ", ".join(row.key for row in owners), style="" if matters else "dim")
            print_wrapped(console, keys, "")
            print_fix(console, flag, prefix="    ")
    explained = [row for row in report.differences if row.matters or (verbose and row.state != "equal")]
    if explained and (explain or verbose):
        console.print(Text("why they matter:", style="bold"))
        for row in explained:
            why = Text.assemble((row.key, "bold" if row.matters else ""), ": ", (row.why, "dim"))
            print_wrapped(console, why, "  ")
    elif explained:
        console.print(Text("(--explain says why each ! row matters)", style="dim"))
    console.print()
    style = "bold green" if report.verdict.healthy else "bold red"
    print_wrapped(console, Text(report.verdict.summary, style=style), "")
    # A finding the baseline has too explains none of the gap: its box says so.
    in_baseline = set(report.baseline.findings)

    def note(group: CauseGroup) -> str | None:
        shared = [f.rule for f in group.findings if f.rule in in_baseline]
        return f"also in the baseline ({', '.join(shared)}): explains none of the gap" if shared else None

    # one box a problem, with the problem's actions (the model's, with their expected tok/s), as diagnose shows them
    _, problems = group(report.findings)
    render_findings(report.findings, console, verbose=verbose, explain=explain, note=note, problems=problems)
    render_insufficient(console, report.insufficient_data, verbose=verbose)
    for warning in report.warnings:
        print_wrapped(console, Text(f"warning: {warning}", style="yellow"), "")
