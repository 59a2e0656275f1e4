"""`--format markdown`: a report ready to paste into an issue thread.

Text that can hold log values (explanations carry a drafter path, reasons a file name) is escaped with
`text` so that nothing in it renders as a link, an image, an autolink or HTML once pasted; evidence
lines sit in a fence longer than any backtick run inside them, code spans have no backtick.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from logdoctor.engine.result import Diagnosis, Finding, RuleOutcome
from logdoctor.sanitize import clean

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|<>~&])")
_AUTOLINK = re.compile(r"(?i)(https?|ftp|www|mailto)(:|\.)")
_BACKTICKS = re.compile(r"`+")


def code(text: str) -> str:
    """Text for inside a code span: no backtick can close it early, no newline can end it."""
    return text.replace("`", "'").replace("\n", " ")


def text(value: str) -> str:
    """Markdown-escaped text: renders as the characters themselves (no link, image, HTML, emphasis, autolink)."""
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", value).replace("\n", " ")
    return _AUTOLINK.sub(r"\1\\\2", escaped)  # `https\://`, `www\.`: GitHub autolinks neither


def fence(lines: Sequence[str]) -> str:
    """A code fence longer than any run of backticks in `lines`, so none of them can close it."""
    longest = max((len(run) for line in lines for run in _BACKTICKS.findall(line)), default=0)
    return "`" * max(3, longest + 1)


def finding_lines(index: int, f: Finding) -> list[str]:
    lines = [
        f"### {index}. {text(f.title)}",
        "",
        f"**{f.severity}** · score **{f.score}** · cause `{code(f.cause)}` · rule `{code(f.rule)}`",
        "",
        text(f.explanation),
        "",
    ]
    if f.estimate:
        lines += [f"*Estimated effect:* {text(f.estimate)}", ""]
    if f.evidence:
        evidence = [f"{e.source}:{e.line}: {e.text}".replace("\n", " ") for e in f.evidence]
        marker = fence(evidence)
        lines += ["Evidence:", "", marker, *evidence, marker, ""]
    if f.fix:
        lines += ["Fix:", ""]
        lines += [f"- `{code(step)}`" if step.startswith("-") or " --" in step else f"- {text(step)}" for step in f.fix]
        lines += [""]
    lines += [f"<sub>{text(f.working)}</sub>", ""]
    return lines


def insufficient_lines(outcomes: Sequence[RuleOutcome]) -> list[str]:
    """The folded "could not check" section, each rule with the first hint on how to get its data."""
    if not outcomes:
        return []
    lines = [f"<details><summary>Could not check ({len(outcomes)})</summary>", ""]
    for o in outcomes:
        hint = f" — {text(o.hints[0])}" if o.hints else ""
        lines.append(f"- `{code(o.cause)}` ({text(o.rule)}): {text(o.reason)}{hint}")
    return [*lines, "", "</details>", ""]


def render_markdown(d: Diagnosis) -> str:
    d = clean(d)
    version = f" {d.engine.version}" if d.engine.version else ""
    sources = ", ".join(f"`{code(s.name)}`" for s in d.sources)
    lines = [
        "## logdoctor diagnosis",
        "",
        f"**{text(d.verdict.summary)}**",
        "",
        f"Engine: {text(d.engine.name + version)} · sources: {sources}",
        "",
    ]
    for index, finding in enumerate(d.findings, start=1):
        lines += finding_lines(index, finding)
    if d.ruled_out:
        lines += [f"<details><summary>Ruled out ({len(d.ruled_out)})</summary>", ""]
        lines += [f"- `{code(o.cause)}` ({text(o.rule)}): {text(o.title)}" for o in d.ruled_out]
        lines += ["", "</details>", ""]
    lines += insufficient_lines(d.insufficient_data)
    for warning in d.warnings:
        lines.append(f"> warning: {text(warning)}")
    for error in d.errors:
        lines.append(f"> error: {text(error.get('host', ''))}: {text(error.get('error', ''))}")
    return "\n".join(lines).rstrip() + "\n"
