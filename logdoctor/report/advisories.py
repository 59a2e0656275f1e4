"""The known issues of the engine releases a deployment runs (docs/advisories.md), for the HTML and GitHub
reports: those that apply (also ranked among the findings) and those that may, with the versions they apply to.

Everything here comes from advisory files, not from the log, but is escaped all the same (a team's own
advisories are user-written text)."""

from __future__ import annotations

import html
import re

from logdoctor.engine.result import Diagnosis, KnownIssue

_LINK = re.compile(r"^https://[^\s\"'<>]+$")  # only https addresses become links (the loader accepts no other)


def _status(issue: KnownIssue) -> str:
    fixed = f"fixed in {issue.fixed_in}" if issue.fixed_in else "no fixed release yet"
    return f"{'applies' if issue.status == 'applies' else 'may apply'} ({fixed})"


def known_issues_html(d: Diagnosis) -> str:
    """A collapsed section listing every known issue that applies or may; empty when there is none."""
    if not d.known_issues:
        return ""
    e = html.escape
    items = []
    for issue in d.known_issues:
        refs = " ".join(f"<code>{e(ref)}</code>" for ref in issue.references)  # the page links to nothing
        items.append(
            f"<li><strong>{e(issue.title)}</strong> <code>{e(issue.id)}</code>: {e(_status(issue))}; "
            f"{e(issue.reason)}. <em>Effect:</em> {e(issue.effect)}. {refs}</li>"
        )
    applies = sum(1 for i in d.known_issues if i.status == "applies")
    summary = f"Known issues of this release ({applies} apply, {len(d.known_issues) - applies} may)"
    return f'<details class="known-issues"><summary>{e(summary)}</summary><ul>{"".join(items)}</ul></details>'


def known_issues_markdown(d: Diagnosis, prose: object, inline_code: object) -> list[str]:
    """The same as Markdown lines for `--format github` (a bold line, not a heading: the issue body keeps its
    sections); `prose` and `inline_code` are that report's escapers."""
    if not d.known_issues:
        return []
    assert callable(prose) and callable(inline_code)
    lines = ["**Known issues of this release**", ""]
    for issue in d.known_issues:
        refs = ", ".join(f"<{ref}>" for ref in issue.references if _LINK.match(ref))
        lines.append(
            f"- **{prose(issue.title)}** ({inline_code(issue.id)}): {prose(_status(issue))}; {prose(issue.reason)}. "
            f"Effect: {prose(issue.effect)}. {refs}".rstrip()
        )
    return [*lines, ""]
