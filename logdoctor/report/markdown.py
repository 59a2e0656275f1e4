"""`--format markdown`: a short report ready to paste into an issue thread (docs/reports.md).

    ### 2. `custom-allreduce-disabled` 60, rule `custom-allreduce-off`
    custom all-reduce is disabled (reason: no-p2p); TP=2 all-reduces fall back to NCCL (lines 20, 15)

    - fix: `drop --disable-custom-all-reduce if it was set`

Short on purpose (at most a third of what it was on the story fixtures): findings below 50 share
one line; a finding quotes one evidence line not quoted before in the report (a configuration dump
only when all its evidence is), cut after EVIDENCE_CHARS without its `(Proc pid=N) LEVEL date
[file.py:N]` header, and names its other lines by number, so the engine-init dump that four findings
cite is not printed four times; ruled out and could-not-check are one line each. The whole story is
in `--format json` and `--format html`.

Text that can hold log values (explanations carry a drafter path, reasons a file name) is escaped with
`mdtext.text` so that nothing in it renders as a link, an image, an autolink or HTML once pasted; evidence
lines sit in a fence longer than any backtick run inside them, code spans have no backtick. The whole
diagnosis passes `logdoctor.sanitize.clean` first (no terminal escape survives).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from logdoctor.engine.result import Diagnosis, RuleOutcome
from logdoctor.report.mdtext import code, fence, text
from logdoctor.report.performance import performance_markdown
from logdoctor.report.terminal import CauseGroup, cause_groups, ruled_out_causes
from logdoctor.sanitize import clean

LIKELY = 50  # a finding scoring less gets one line (the verdict's "likely" threshold)
EVIDENCE_LINES = 1  # quoted a finding
EVIDENCE_REFS = 6  # named by number a finding
DUMP_CHARS = 400  # a longer line is a configuration dump: quoted only when a finding has nothing else
EVIDENCE_CHARS = 140
_HEADER_RE = re.compile(
    r"^(?:\([^()]*pid=\d+[^()]*\)\s*)*(?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d \[?[^\]\s]+\] )?"
    r"(?:\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?: [A-Z0-9 ]+)?\] )?"
)


def _short(source: str) -> str:
    return source.rsplit("/", 1)[-1]


def _excerpt(text: str) -> str:
    text = _HEADER_RE.sub("", text, count=1)
    return text if len(text) <= EVIDENCE_CHARS else text[:EVIDENCE_CHARS].rstrip() + " …"


def _fix(step: str) -> str:
    return f"`{code(step)}`" if step.startswith("-") or " --" in step else text(step)


def problem_lines(
    index: int, group: CauseGroup, shown: set[tuple[str, int]] | None = None, *, one_source: bool = False
) -> list[str]:
    """A problem (findings that share one mechanism): its findings one line each, its effect, the recommended action
    with its expected result and the alternatives with theirs, and one quoted evidence line."""
    seen = set() if shown is None else shown

    def where(source: str, line: int) -> str:
        return str(line) if one_source else f"{_short(source)}:{line}"

    top = group.top
    lines = [f"### {index}. `{code(group.cause)}` {top.score}: {text(group.title)}", ""]
    for f in group.findings:
        lines.append(f"- `{code(f.cause)}` {f.score} (rule `{code(f.rule)}`): {text(f.explanation)}")
    if group.statement:
        lines.append(f"- effect: {text(group.statement)}")
    modelled = [a for a in group.actions if a.expected_tok_s is not None]
    for a in group.actions:
        label = "recommended" if modelled and a is modelled[0] else ("alternative" if a in modelled else "fix")
        result = f" -> {a.expected_tok_s:.1f} tok/s {a.basis} expected ({a.speedup:.2f}x)" if a in modelled else ""
        why = f"; {text(a.note)}" if a.note else ""
        source = f" (source: {text(a.source)})" if a.source else ""
        lines.append(f"- {label}: {_fix(a.text)}{text(result)}{why}{source}")
    lines.append("")
    evidence = group.evidence
    dumps_only = all(len(e.text) > DUMP_CHARS for e in evidence)
    fresh = [e for e in evidence if (e.source, e.line) not in seen and (dumps_only or len(e.text) <= DUMP_CHARS)]
    quoted = fresh[:EVIDENCE_LINES]
    seen.update((e.source, e.line) for e in quoted)
    named = [e for e in evidence if e not in quoted][:EVIDENCE_REFS]
    if quoted:
        excerpts = [f"{where(e.source, e.line)}: {_excerpt(e.text)}".replace("\n", " ") for e in quoted]
        marker = fence(excerpts)
        lines += [marker, *excerpts, marker]
    if named:
        lines.append(
            ("also lines " if len(named) > 1 else "also line ") + ", ".join(where(e.source, e.line) for e in named)
        )
    if quoted or named:
        lines.append("")
    return lines


def minor_lines(groups: Sequence[CauseGroup]) -> list[str]:
    """The problems below the verdict's threshold, one each (counted as the terminal's "Also noted"), with the
    recommended action where the model has one."""
    if not groups:
        return []
    items = []
    for g in groups:
        rules = ", ".join(f"`{code(f.rule)}`" for f in g.findings)
        modelled = next((a for a in g.actions if a.expected_tok_s is not None), None)
        action = (
            f"; recommended: {_fix(modelled.text)} -> {modelled.expected_tok_s:.1f} tok/s {modelled.basis} expected "
            f"({modelled.speedup or 0:.2f}x)"
            if modelled is not None
            else ""
        )
        items.append(f"`{code(g.cause)}` {g.top.score} (rule{'s' if len(g.findings) > 1 else ''} {rules}{action})")
    return [f"Minor ({len(groups)}): " + ", ".join(items), ""]


def insufficient_lines(outcomes: Sequence[RuleOutcome]) -> list[str]:
    """The could-not-check rules as one line (the list and the hints: `--format json` or `-v`)."""
    if not outcomes:
        return []
    return [f"Could not check {len(outcomes)} rule(s): no data (see `--format json`).", ""]


def render_markdown(d: Diagnosis) -> str:
    d = clean(d)
    version = f" {text(d.engine.version)}" if d.engine.version else ""
    sources = ", ".join(f"`{code(_short(s.name))}`" for s in d.sources)
    lines = [
        "## logdoctor diagnosis",
        "",
        f"**{text(d.verdict.summary)}**",
        "",
        f"{text(d.engine.name)}{version} · {sources}",
        "",
    ]
    lines += performance_markdown(d)
    likely, minor_groups = cause_groups(d.findings, d.problems)  # one heading a problem, as the terminal's boxes
    one_source = len(d.sources) == 1
    shown: set[tuple[str, int]] = set()
    for index, group in enumerate(likely, start=1):
        lines += problem_lines(index, group, shown, one_source=one_source)
    lines += minor_lines(minor_groups)
    ruled_out = ruled_out_causes(d)
    if ruled_out:
        lines += ["Ruled out: " + ", ".join(f"`{c}`" for c in ruled_out), ""]
    lines += insufficient_lines(d.insufficient_data)
    for warning in d.warnings:
        lines.append(f"> warning: {text(warning)}")
    for error in d.errors:
        lines.append(f"> error: {text(error.get('host', ''))}: {text(error.get('error', ''))}")
    return "\n".join(lines).rstrip() + "\n"
