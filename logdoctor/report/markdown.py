"""`--format markdown`: a report ready to paste into an issue thread."""

from __future__ import annotations

from collections.abc import Sequence

from logdoctor.engine.result import Diagnosis, Finding, RuleOutcome


def code(text: str) -> str:
    return text.replace("`", "'")


def finding_lines(index: int, f: Finding) -> list[str]:
    lines = [
        f"### {index}. {f.title}",
        "",
        f"**{f.severity}** · score **{f.score}** · cause `{f.cause}` · rule `{f.rule}`",
        "",
        f.explanation,
        "",
    ]
    if f.estimate:
        lines += [f"*Estimated effect:* {f.estimate}", ""]
    if f.evidence:
        lines += ["Evidence:", "", "```"]
        lines += [f"{e.source}:{e.line}: {e.text}" for e in f.evidence]
        lines += ["```", ""]
    if f.fix:
        lines += ["Fix:", ""]
        lines += [f"- `{code(step)}`" if step.startswith("-") or " --" in step else f"- {step}" for step in f.fix]
        lines += [""]
    lines += [f"<sub>{f.working}</sub>", ""]
    return lines


def insufficient_lines(outcomes: Sequence[RuleOutcome]) -> list[str]:
    """The folded "could not check" section, each rule with the first hint on how to get its data."""
    if not outcomes:
        return []
    lines = [f"<details><summary>Could not check ({len(outcomes)})</summary>", ""]
    for o in outcomes:
        hint = f" — {o.hints[0]}" if o.hints else ""
        lines.append(f"- `{o.cause}` ({o.rule}): {o.reason}{hint}")
    return [*lines, "", "</details>", ""]


def render_markdown(d: Diagnosis) -> str:
    version = f" {d.engine.version}" if d.engine.version else ""
    sources = ", ".join(f"`{s.name}`" for s in d.sources)
    lines = [
        "## logdoctor diagnosis",
        "",
        f"**{d.verdict.summary}**",
        "",
        f"Engine: {d.engine.name}{version} · sources: {sources}",
        "",
    ]
    for index, finding in enumerate(d.findings, start=1):
        lines += finding_lines(index, finding)
    if d.ruled_out:
        lines += [f"<details><summary>Ruled out ({len(d.ruled_out)})</summary>", ""]
        lines += [f"- `{o.cause}` ({o.rule}): {o.title}" for o in d.ruled_out]
        lines += ["", "</details>", ""]
    lines += insufficient_lines(d.insufficient_data)
    for warning in d.warnings:
        lines.append(f"> warning: {warning}")
    for error in d.errors:
        lines.append(f"> error: {error.get('host', '')}: {error.get('error', '')}")
    return "\n".join(lines).rstrip() + "\n"
