"""What `logdoctor watch` shows: the change line printed when piped, and the live view redrawn on a terminal."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console
from rich.text import Text

from logdoctor.engine.result import Diagnosis
from logdoctor.report.terminal import cause_groups, render_terminal
from logdoctor.sanitize import clean, one_line


@dataclass
class Change:
    """What the piped output reports: the verdict and the ranked causes with their top scores."""

    kind: str
    summary: str
    causes: tuple[tuple[str, int], ...]

    def line(self, stamp: str) -> str:
        ranked = ", ".join(f"{cause} {score}" for cause, score in self.causes) or "no findings"
        return f"{stamp} {self.kind}  {self.summary}  | {ranked}"


def change_of(d: Diagnosis, top: int = 5) -> Change:
    likely, minor = cause_groups(d.findings)
    causes = tuple((g.cause, g.top.score) for g in [*likely, *minor][:top])
    return Change(d.verdict.kind, d.verdict.summary, causes)


@dataclass
class View:
    """What one redraw shows: the current run's diagnosis (None while there is nothing to diagnose), why the
    view waits (no file yet, no line of a known format yet, a server still starting), which run is shown and
    one line for each earlier run."""

    diagnosis: Diagnosis | None
    waiting: str | None
    run: str
    earlier: list[str]
    key: tuple[int, int] = (0, 1)  # where the run begins (segment, line): another key is another run


_KIND_STYLE = {"problems": "bold red", "inconclusive": "bold yellow", "healthy": "bold green", "not-a-log": "bold"}


def fit_view(view: View, head: str, notice: str, details: list[Text], width: int, height: int) -> Text:
    """The live view cut to the terminal: the header, the verdict and one line per cause first (every one of them,
    as long as the terminal has the rows), the earlier runs, then the full report's lines as far as rows remain.
    Every line is cut at `width` (never wrapped), so the view is exactly the rows it says it is."""
    lines: list[Text] = [Text(head, style="dim")]
    if notice:
        lines.append(Text(notice, style="dim"))
    d = view.diagnosis
    if view.waiting is not None:
        lines.append(Text(view.waiting, style="bold yellow"))
    if d is not None:
        clean_d = clean(d)
        lines.append(
            Text.assemble(
                (clean_d.verdict.kind.upper(), _KIND_STYLE.get(clean_d.verdict.kind, "bold")),
                f"  {clean_d.verdict.summary}",
            )
        )
        likely, minor = cause_groups(clean_d.findings)
        for index, group in enumerate([*likely, *minor], start=1):
            top = group.top
            lines.append(
                Text.assemble(
                    f"  {index}. ",
                    (group.cause, "bold"),
                    f"  score {top.score} {top.severity}  ",
                    top.title,
                )
            )
        if view.earlier or view.key != (0, 1):  # a rotation or a restart: say which run this is
            lines.append(Text(f"  run: {one_line(view.run)}", style="dim"))
    shown_earlier = view.earlier[-3:]
    if len(view.earlier) > len(shown_earlier):
        lines.append(Text(f"  {len(view.earlier) - len(shown_earlier)} earlier run(s) more", style="dim"))
    lines.extend(Text(f"  {line}", style="dim") for line in shown_earlier)
    rows = max(height - 1, 1)  # the cursor's row below the view: a full screen would scroll by one
    if len(lines) > rows:  # more causes than rows: the last row says how many are cut
        cut = len(lines) - rows + 1
        lines = [*lines[: rows - 1], Text(f"  ... {cut} more line(s): make the terminal taller", style="dim")]
    elif details and len(lines) + 1 < rows:
        room = rows - len(lines) - 1
        body = details if len(details) <= room else [*details[: room - 1], Text("  ...", style="dim")]
        lines.extend([Text(""), *body])
    out = Text(no_wrap=True, overflow="ellipsis", end="")
    for index, line in enumerate(lines):
        line.truncate(width, overflow="ellipsis")
        if index:
            out.append("\n")
        out.append_text(line)
    return out


def live_view(console: Console, *, verbose: bool) -> Callable[[View, str, str], Text]:
    """The live view for rich Live at the terminal's size (read at each redraw: a resized terminal is followed),
    in the console's colours; the details are the terminal report of `diagnose` (its boxes), as rows allow."""

    def view(shown: View, head: str, notice: str) -> Text:
        width, height = console.size
        details: list[Text] = []
        if shown.diagnosis is not None:
            buffer = io.StringIO()
            offscreen = Console(
                file=buffer,
                width=width,
                force_terminal=console.is_terminal,
                color_system=console.color_system,  # type: ignore[arg-type]
                no_color=console.no_color,
                highlight=False,
                soft_wrap=False,
            )
            render_terminal(shown.diagnosis, offscreen, verbose=verbose)
            details = list(Text.from_ansi(buffer.getvalue()).split("\n"))
            # the report's header and verdict lines: the view's own verdict line said them already
            while details and details[0].plain and not details[0].plain.startswith(" "):
                details.pop(0)
        return fit_view(shown, head, notice, details, width, height)

    return view
