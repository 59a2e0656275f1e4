"""The terminal report: the verdict first, then one box a likely problem, then what was noted, ruled out and not checked.

    logdoctor vllm 0.20.1  vllm-dflash-tp2-a6000.log
    PROBLEMS  2 likely problem(s); top: speculation (score 82) - Speculative decoding costs more than it gives
      top        speculation: mean acceptance length 1.29 with k=15 speculative tokens (dflash) ...
    ╭─ 1. speculation  score 82 high  Speculative decoding costs more than it gives
    │ spec-net-loss [82] mean acceptance length 1.29 with k=15 ...   rule below-break-even
    │ spec-low-acceptance [59] mean acceptance length 1.29 (draft acceptance 1.9%) ...   rule low-acceptance
    │ effect: a speculative step costs ~4.05 plain decode steps for 1.29 tokens: ... 0.32x of plain decode ...
    │ evidence
    │   vllm-dflash-tp2-a6000.log:62  …SpecDecoding metrics: Mean acceptance length: 1.29, Accepted thro…
    │ fix
    │   drop --speculative-config: per-position acceptance gives no k that beats plain decode
    ╰─

A box holds every finding of one problem (engine/problems.py: findings that share one mechanism) that reached the
verdict's threshold, so "N likely problems" is N boxes. With the GPU known, a box's actions are the model's:
the recommended one with its expected tok/s first, then the alternatives with theirs. Evidence is a window of the
line centred on the values the finding read (Evidence.spans), never its prefix. Fix lines are printed as one line
each, never wrapped by rich (`soft_wrap`): a terminal that folds them still copies them whole. The score's working
is shown with `--explain` only.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Literal, cast

from logdoctor.engine.problems import problem_id
from logdoctor.engine.result import Action, Diagnosis, Evidence, Finding, Problem, RuleOutcome
from logdoctor.engine.verdict import MATERIAL_SCORE
from logdoctor.report.performance import render_performance_terminal
from logdoctor.report.plain import PlainConsole, Text
from logdoctor.sanitize import clean

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text as RichText

ColorChoice = Literal["auto", "always", "never"]
EVIDENCE_SHOWN = 4
# Piped with no COLUMNS there is no width to fit: lines run as long as they are, and an evidence excerpt is
# this many characters around its values (a 2,000-character config dump is not read whole on a terminal).
UNLIMITED_WIDTH = 100_000
PIPED_EXCERPT = 200
# Display only: drop a `(Proc pid=N) LEVEL MM-DD HH:MM:SS [file.py:N] ` header so the message fits one line.
_HEADER_RE = re.compile(
    r"^(?:\([^()]*pid=\d+[^()]*\)\s*)*(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d \[?[^\]\s]+\] )?"
)
_SEVERITY_STYLE = {"high": "bold red", "medium": "yellow", "low": "cyan", "info": "dim"}
_VERDICT_STYLE = {"healthy": "bold green", "problems": "bold red", "inconclusive": "bold yellow", "not-a-log": "bold"}
_VALUE_STYLE = "bold underline"
_BAR = "│ "


# --- the console -------------------------------------------------------------------------------------------


def output_width(stream: IO[str], environ: dict[str, str] | None = None) -> int | None:
    """The terminal's width on a tty (None: rich asks the terminal), else COLUMNS, else no limit."""
    env = os.environ if environ is None else environ
    if stream.isatty():
        return None
    columns = env.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else UNLIMITED_WIDTH


def colour_wanted(choice: ColorChoice, stream: IO[str], environ: dict[str, str] | None = None) -> bool:
    """`always`/`never` win; `auto`: NO_COLOR (any value) turns colour off, FORCE_COLOR on, else a tty has it."""
    env = os.environ if environ is None else environ
    if choice != "auto":
        return choice == "always"
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    return stream.isatty()


def make_console(color: ColorChoice = "auto", *, stderr: bool = False) -> Console:
    """A rich Console for the stream; piped with no colour and no COLUMNS, a PlainConsole that writes what it
    would and imports rich only for what the report's own text is not (report/plain.py)."""
    stream = sys.stderr if stderr else sys.stdout
    colour = colour_wanted(color, stream)
    width = output_width(stream)

    def rich_console() -> Console:
        from rich.console import Console

        return Console(
            file=stream,
            width=width,
            force_terminal=colour,
            no_color=not colour,
            color_system="auto" if colour else None,
            highlight=False,
            soft_wrap=False,
        )

    if colour or width != UNLIMITED_WIDTH:
        return rich_console()
    return cast("Console", PlainConsole(stream, width, rich_console))  # a Console to its callers: it hands on the rest


# --- evidence excerpts ------------------------------------------------------------------------------------


def _windows(length: int, spans: Sequence[tuple[int, int]], width: int) -> list[list[tuple[int, int]]]:
    """Windows of a line `length` long, as lines of windows each at most `width` wide (separators included),
    covering every span with as much context around each as fits."""
    if length <= width:
        return [[(0, length)]]
    clusters: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        end = min(end, start + width - 2)  # one value longer than the line: its start
        if clusters and start - clusters[-1][1] <= 12:
            clusters[-1] = (clusters[-1][0], max(clusters[-1][1], end))
        else:
            clusters.append((start, end))
    if not clusters:
        return [[(0, width - 1)]]
    rows: list[list[tuple[int, int]]] = [[]]
    used = 0
    for cluster in clusters:
        need = (cluster[1] - cluster[0]) + 2 + (3 if rows[-1] else 0)
        if rows[-1] and used + need > width:
            rows.append([])
            used = 0
            need -= 3
        rows[-1].append(cluster)
        used += need
    out: list[list[tuple[int, int]]] = []
    for row in rows:
        taken = sum(end - start for start, end in row) + 2 * len(row) + 3 * (len(row) - 1)
        pad = max(0, width - taken) // (2 * len(row))
        windows: list[tuple[int, int]] = []
        for start, end in row:
            window = (max(0, start - pad), min(length, end + pad))
            if windows and window[0] <= windows[-1][1]:
                windows[-1] = (windows[-1][0], window[1])
            else:
                windows.append(window)
        # what one end could not use (the line's start or end) goes to the other
        first, last = windows[0], windows[-1]
        spare = width - (sum(e - s for s, e in windows) + 2 * len(windows) + 3 * (len(windows) - 1))
        if spare > 0 and first[0] == 0:
            windows[-1] = (last[0], min(length, last[1] + spare))
        elif spare > 0 and last[1] == length:
            windows[0] = (max(0, first[0] - spare), first[1])
        out.append(windows)
    return out


def excerpt(text: str, spans: Sequence[tuple[int, int]], width: int) -> list[Text]:
    """The line as one or more rows of windows at most `width` wide, centred on `spans`, the values emphasised;
    `…` marks what was left out."""
    header = _HEADER_RE.match(text)
    cut = header.end() if header and all(start >= header.end() for start, _ in spans) else 0
    body = text[cut:]
    shifted = [(max(0, s - cut), max(0, e - cut)) for s, e in spans if e > cut]
    rows: list[Text] = []
    for row in _windows(len(body), shifted, max(width, 16)):
        line = Text()
        for index, (start, end) in enumerate(row):
            if index:
                line.append(" … ", style="dim")
            elif start > 0:
                line.append("…", style="dim")
            piece = Text(body[start:end])
            for s, e in shifted:
                if e > start and s < end:
                    piece.stylize(_VALUE_STYLE, max(s, start) - start, min(e, end) - start)
            line.append_text(piece)
        if row[-1][1] < len(body):
            line.append("…", style="dim")
        rows.append(line)
    return rows


# --- findings grouped by cause ----------------------------------------------------------------------------


@dataclass
class CauseGroup:
    """Every finding of one problem (engine/problems.py: findings that share one mechanism), best first: one box,
    counted once. `cause` is the problem's id (a cause id where the problem is one cause)."""

    cause: str
    findings: list[Finding] = field(default_factory=list)
    problem: Problem | None = None

    @property
    def top(self) -> Finding:
        return self.findings[0]

    @property
    def title(self) -> str:
        return self.problem.title if self.problem is not None else self.top.title

    @property
    def evidence(self) -> list[Evidence]:
        seen: dict[tuple[str, int], Evidence] = {}
        for f in self.findings:
            for e in f.evidence:
                seen.setdefault((e.source, e.line), e)
        return list(seen.values())

    @property
    def actions(self) -> list[Action]:
        if self.problem is not None and self.problem.actions:
            return list(self.problem.actions)
        return [Action(text=step) for step in dict.fromkeys(step for f in self.findings for step in f.fix)]

    @property
    def fixes(self) -> list[str]:
        return [a.text for a in self.actions]

    @property
    def statement(self) -> str | None:
        """The problem's effect in words (the model's), else its best finding's estimate."""
        if self.problem is not None and self.problem.effect is not None and self.problem.effect.statement:
            return self.problem.effect.statement
        return next((f.estimate for f in self.findings if f.estimate), None)


def cause_groups(
    findings: Sequence[Finding], problems: Sequence[Problem] = ()
) -> tuple[list[CauseGroup], list[CauseGroup]]:
    """(likely, minor) problems: likely when one of its findings reaches the verdict's MATERIAL_SCORE."""
    by_id = {p.id: p for p in problems}
    groups: dict[str, CauseGroup] = {}
    for f in findings:
        pid = f.problem or problem_id(f.cause)
        groups.setdefault(pid, CauseGroup(pid, problem=by_id.get(pid))).findings.append(f)
    ordered = sorted(groups.values(), key=lambda g: -g.top.score)
    likely = [g for g in ordered if g.top.score >= MATERIAL_SCORE]
    minor = [g for g in ordered if g.top.score < MATERIAL_SCORE]
    return likely, minor


def ruled_out_causes(d: Diagnosis) -> list[str]:
    """Causes a rule ruled out and no rule found: a cause that is also a finding is never listed."""
    found = {f.cause for f in d.findings}
    return sorted({o.cause for o in d.ruled_out} - found)


# --- rendering --------------------------------------------------------------------------------------------


def print_wrapped(console: Console, text: Text | RichText, prefix: str = _BAR, indent: str = "") -> None:
    """Wrap `text` to the console's width under a left bar (rich would wrap the bar away)."""
    room = max(20, console.width - len(prefix) - len(indent))
    for line in Text.of(text).wrap(console, room):
        console.print(Text.assemble((prefix, "dim"), indent, line), soft_wrap=True)


def print_fix(console: Console, step: str, prefix: str = _BAR) -> None:
    # One line whatever its length: never wrapped mid-flag by rich, so it copies whole.
    console.print(Text.assemble((prefix, "dim"), "  ", (step, "green")), soft_wrap=True)


def _print_evidence(console: Console, evidence: Sequence[Evidence], prefix: str = _BAR) -> None:
    shown = list(evidence[:EVIDENCE_SHOWN])
    labels = [f"{e.source.rsplit('/', 1)[-1]}:{e.line}" for e in shown]
    label_width = max((len(label) for label in labels), default=0)
    room = console.width - len(prefix) - 2
    budget = PIPED_EXCERPT if console.width >= UNLIMITED_WIDTH else room - label_width - 2
    stacked = budget < 40  # narrow: the excerpt under its label, the whole width for it
    if stacked:
        budget = room - 2
    for label, e in zip(labels, shown, strict=True):
        rows = excerpt(e.text, e.spans, budget)
        if stacked:
            console.print(Text.assemble((prefix, "dim"), "  ", (label, "cyan")), soft_wrap=True)
            for row in rows:
                console.print(Text.assemble((prefix, "dim"), "    ", row), soft_wrap=True)
            continue
        for index, row in enumerate(rows):
            head = label.ljust(label_width) if index == 0 else " " * label_width
            console.print(Text.assemble((prefix, "dim"), "  ", (head, "cyan"), "  ", row), soft_wrap=True)
    if len(evidence) > EVIDENCE_SHOWN:
        more = f"  ... {len(evidence) - EVIDENCE_SHOWN} more line(s) (--format json)"
        console.print(Text.assemble((prefix, "dim"), (more, "dim")), soft_wrap=True)


def action_line(action: Action) -> str:
    """`FLAG  -> 49 tok/s per request expected (2.24x)`: the expected result beside the flag, which stays whole."""
    if action.expected_tok_s is None:
        return action.text
    gain = f" ({action.speedup:.2f}x)" if action.speedup is not None else ""
    return f"{action.text}  -> {action.expected_tok_s:.1f} tok/s {action.basis} expected{gain}"


def _print_actions(console: Console, group: CauseGroup, prefix: str = _BAR) -> None:
    actions = group.actions
    modelled = [a for a in actions if a.expected_tok_s is not None]
    if modelled:
        console.print(Text.assemble((prefix, "dim"), ("recommended", "dim")), soft_wrap=True)
        print_fix(console, action_line(modelled[0]), prefix)
        for why in (modelled[0].note, f"source: {modelled[0].source}" if modelled[0].source else ""):
            if why:
                print_wrapped(console, Text(f"    {why}", style="dim"), prefix=prefix)
        rest = [a for a in actions if a is not modelled[0]]
        if rest:
            console.print(Text.assemble((prefix, "dim"), ("alternatives and checks", "dim")), soft_wrap=True)
        for a in rest:
            print_fix(console, action_line(a), prefix)
            if a.source:
                print_wrapped(console, Text(f"    source: {a.source}", style="dim"), prefix=prefix)
        return
    if actions:
        console.print(Text.assemble((prefix, "dim"), ("fix", "dim")), soft_wrap=True)
        for a in actions:
            print_fix(console, a.text, prefix)


def _box(console: Console, index: int, group: CauseGroup, *, explain: bool, note: str | None = None) -> None:
    top = group.top
    head = Text.assemble(
        ("╭─ ", "dim"),
        (f"{index}. ", "bold"),
        (group.cause, "bold"),
        ("  score ", "dim"),
        (f"{top.score} {top.severity}", _SEVERITY_STYLE[top.severity]),
        "  ",
        group.title,
    )
    print_wrapped(console, head, prefix="")
    if note:
        print_wrapped(console, Text(note, style="italic"))
    for f in group.findings:
        line = Text.assemble((f.explanation, "bold" if f is top else ""), ("  rule ", "dim"), (f.rule, "cyan"))
        if len(group.findings) > 1:
            line = Text.assemble((f"{f.cause} [{f.score}] ", "dim"), line)
        print_wrapped(console, line)
        if explain:
            print_wrapped(console, Text(f"score: {f.working}", style="dim"))
    if group.statement:
        print_wrapped(console, Text.assemble(("effect: ", "italic"), group.statement))
    if group.evidence:
        console.print(Text.assemble((_BAR, "dim"), ("evidence", "dim")), soft_wrap=True)
        _print_evidence(console, group.evidence)
    _print_actions(console, group)
    console.print(Text("╰─", style="dim"), soft_wrap=True)


def _minor(console: Console, groups: Sequence[CauseGroup], *, verbose: bool, explain: bool) -> None:
    if not groups:
        return
    console.print(Text(f"Also noted ({len(groups)}, each below score {MATERIAL_SCORE}):", style="bold"))
    for group in groups:
        several = len(group.findings) > 1
        if several:  # one problem, one line, its findings under it: the count above is of these lines
            head = Text.assemble(f"  [{group.top.score:2d}] ", (group.cause, "bold"), "  ", group.title)
            print_wrapped(console, head, prefix="", indent="")
        for f in group.findings:
            lead = Text.assemble("       ", (f.cause, "dim"), f" [{f.score}] ") if several else None
            line = lead or Text.assemble(f"  [{f.score:2d}] ", (f.cause, "bold"), "  ")
            line.append(f.explanation)
            line.append("  rule ", style="dim")
            line.append(f.rule, style="cyan")
            print_wrapped(console, line, prefix="", indent="")
            if explain:
                print_wrapped(console, Text(f"score: {f.working}", style="dim"), prefix="", indent="       ")
        if group.problem is not None and group.problem.effect is not None and group.problem.effect.statement:
            effect = Text.assemble(("       effect: ", "italic"), group.problem.effect.statement)
            print_wrapped(console, effect, prefix="", indent="")
        for action in group.actions:
            print_fix(console, action_line(action), prefix="     ")
        if verbose and group.evidence:
            _print_evidence(console, group.evidence, prefix="     ")


def render_insufficient(console: Console, outcomes: Sequence[RuleOutcome], *, verbose: bool) -> None:
    """The "could not check" section: one line with the count, or every rule with its hint under --verbose."""
    if not outcomes:
        return
    causes = sorted({o.cause for o in outcomes})
    if not verbose:
        console.print(
            Text(
                f"Could not check {len(outcomes)} rule(s) of {len(causes)} cause(s) for want of lines in the log "
                "(-v lists them with the flag that prints each)",
                style="dim",
            )
        )
        return
    console.print(Text(f"Could not check ({len(outcomes)}), each with what it needs and how to get it:", style="bold"))
    for o in outcomes:
        print_wrapped(console, Text(f"  {o.cause} [{o.rule}]: {o.title}", style="dim"), prefix="")
        for hint in o.hints or [o.reason]:
            print_wrapped(console, Text(f"      needs {hint}", style="dim"), prefix="")


_WARNINGS_SHOWN = 3  # without --verbose: the first few warnings not understood, then the count


def render_warnings_not_understood(console: Console, warnings: Sequence[str], *, verbose: bool) -> None:
    """The engine's warnings no rule and no word of the warning vocabulary understood (docs/warnings.md)."""
    if not warnings:
        return
    shown = warnings if verbose else warnings[:_WARNINGS_SHOWN]
    more = f", -v lists all {len(warnings)}" if len(shown) < len(warnings) else ""
    console.print(Text(f"Warnings not understood ({len(warnings)}{more}):", style="dim"))
    for warning in shown:
        print_wrapped(console, Text(f"  {warning}", style="dim"), prefix="")


def render_verdict(d: Diagnosis, console: Console, likely: Sequence[CauseGroup]) -> None:
    version = f" {d.engine.version}" if d.engine.version else ""
    names = ", ".join(s.name for s in d.sources)
    head = Text.assemble(("logdoctor ", "bold"), (f"{d.engine.name}{version}", "bold cyan"), f"  {names}")
    console.print(head, soft_wrap=True)  # a path is never folded mid-name
    kind = d.verdict.kind
    verdict = Text.assemble((kind.upper(), _VERDICT_STYLE.get(kind, "bold")), "  ", d.verdict.summary)
    print_wrapped(console, verdict, prefix="")
    if likely:
        first = likely[0]
        print_wrapped(
            console,
            Text.assemble(("  top        ", "dim"), (first.cause, "bold"), f": {first.top.explanation}"),
            prefix="",
        )
        if first.statement:
            print_wrapped(console, Text.assemble(("  effect     ", "dim"), first.statement), prefix="")
    for missing in d.verdict.missing:
        print_wrapped(console, Text.assemble(("  missing    ", "dim"), missing), prefix="")


def render_findings(
    findings: Sequence[Finding],
    console: Console,
    *,
    verbose: bool,
    explain: bool,
    note: Callable[[CauseGroup], str | None] | None = None,
    problems: Sequence[Problem] = (),
) -> None:
    """One box a likely problem (`note` adds a line to a box), then the minor findings compactly."""
    likely, minor = cause_groups(findings, problems)
    for index, group in enumerate(likely, start=1):
        _box(console, index, group, explain=explain, note=note(group) if note else None)
    _minor(console, minor, verbose=verbose, explain=explain)


def render_terminal(d: Diagnosis, console: Console, *, verbose: bool = False, explain: bool = False) -> None:
    d = clean(d)
    likely, _ = cause_groups(d.findings, d.problems)
    render_verdict(d, console, likely)
    console.print()
    render_performance_terminal(d, console, verbose=verbose)  # expected vs measured (docs/expected-performance.md)
    render_findings(d.findings, console, verbose=verbose, explain=explain, problems=d.problems)
    ruled_out = ruled_out_causes(d)
    if ruled_out:
        print_wrapped(console, Text(f"Ruled out ({len(ruled_out)}): " + ", ".join(ruled_out), style="dim"), prefix="")
    render_insufficient(console, d.insufficient_data, verbose=verbose)
    render_warnings_not_understood(console, d.warnings_not_understood, verbose=verbose)
    if d.suppressed:
        console.print(
            Text(f"Suppressed ({len(d.suppressed)}): " + ", ".join(o.rule for o in d.suppressed), style="dim")
        )
    for warning in d.warnings:
        print_wrapped(console, Text(f"warning: {warning}", style="yellow"), prefix="")
    for error in d.errors:
        console.print(Text(f"error: {error.get('host', '')}: {error.get('error', '')}", style="red"))
