"""`--format github`: the body of a vLLM or SGLang GitHub issue, for `gh issue create -F -`.

    ### Environment
    - **engine**: `vllm 0.20.1`
    ...
    <details><summary>Evidence: spec-net-loss (4 lines)</summary>

    ```text
    vllm-serve.log:60: (APIServer pid=2961) INFO 05-08 14:07:10 [metrics.py:101] SpecDecoding metrics: ...
    ```

    </details>

Nothing from a log becomes markup: values are inline code, lines are fenced code (the fence longer
than any backtick run in them), prose has Markdown's punctuation backslash-escaped, and the only raw
HTML is our own `<details>`/`<summary>` with escaped text. Lines were redacted when read and are
redacted again here; no configuration dump is printed whole (launch settings: report.observed).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from typing import Any

from logdoctor.engine.result import Diagnosis, Finding
from logdoctor.redact import redact
from logdoctor.report.advisories import known_issues_markdown
from logdoctor.report.observed import Launch, Observed, environment_rows
from logdoctor.report.performance import performance_markdown
from logdoctor.report.terminal import CauseGroup, cause_groups, ruled_out_causes

EVIDENCE_CHARS = 300  # a longer line (a config dump) is cut, with the count of what was left out
EVIDENCE_LINES = 6
GPU_QUERY = "nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv"  # asked for when missing
_PROSE_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&#])")
_BACKTICKS = re.compile(r"`+")


def prose(text: str) -> str:
    """Log-derived text as plain Markdown text: every character that could start markup is escaped."""
    return _PROSE_SPECIAL.sub(r"\\\1", redact(text).replace("\n", " "))


def inline_code(text: str) -> str:
    """`text` as an inline code span whatever backticks it holds (CommonMark: a longer delimiter run)."""
    text = redact(text).replace("\n", " ")
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def fenced(lines: Sequence[str], info: str = "text") -> list[str]:
    """A fenced code block that no line inside can close (the fence outgrows every backtick run)."""
    body = [redact(line) for line in lines]
    longest = max((len(run) for line in body for run in _BACKTICKS.findall(line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{info}", *body, fence]


def _cut(text: str) -> str:
    if len(text) <= EVIDENCE_CHARS:
        return text
    return f"{text[:EVIDENCE_CHARS]} … ({len(text) - EVIDENCE_CHARS} more characters)"


def _short(source: str) -> str:
    return source.rsplit("/", 1)[-1]


def _setting(value: Any) -> str:
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def launch_lines(launch: Launch, level: str) -> list[str]:
    where = f"{_short(launch.source)}:{launch.line}"
    if launch.selected:
        what = f"the settings that bear on speed, from the configuration dump at {inline_code(where)}"
    else:
        what = f"{prose(launch.origin)}, as printed at {inline_code(where)}"
    lines = [f"{level} Launch settings", "", what + ":", ""]
    lines += fenced([f"{key}: {_setting(value)}" for key, value in launch.settings.items()])
    if launch.truncated:
        lines += ["", "The log cut this dump off: later settings are missing."]
    return [*lines, ""]


def _fix_line(step: str) -> str:
    return f"   - {inline_code(step)}" if step.startswith("-") or " --" in step else f"   - {prose(step)}"


def finding_summary(index: int, f: Finding) -> list[str]:
    lines = [
        f"{index}. **{prose(f.cause)}** (score {f.score}, {f.severity}, rule {inline_code(f.rule)}): {prose(f.title)}",
        f"   {prose(f.explanation)}",
    ]
    if f.estimate:
        lines.append(f"   *Estimated effect:* {prose(f.estimate)}")
    if f.fix:
        lines.append("   Fix:")
        lines += [_fix_line(step) for step in f.fix]
    return lines


def problem_summary(index: int, group: CauseGroup) -> list[str]:
    """A problem (findings that share one mechanism): its findings, its effect, and its actions, the model's with
    their expected tok/s, the recommended one first."""
    top = group.top
    lines = [f"{index}. **{prose(group.cause)}** (score {top.score}, {top.severity}): {prose(group.title)}"]
    for f in group.findings:
        lines.append(f"   - {prose(f.cause)} (score {f.score}, rule {inline_code(f.rule)}): {prose(f.explanation)}")
    if group.statement:
        lines.append(f"   *Effect:* {prose(group.statement)}")
    modelled = [a for a in group.actions if a.expected_tok_s is not None]
    if group.actions:
        lines.append("   Fix:")
    for a in group.actions:
        step = _fix_line(a.text)
        if a in modelled:
            label = "recommended" if a is modelled[0] else "alternative"
            step += prose(f" ({label}: {a.expected_tok_s:.1f} tok/s {a.basis} expected, {a.speedup or 0:.2f}x)")
        lines.append(step)
        if a in modelled and a.source:  # an input that is not the log's (a published acceptance): its source
            lines.append(f"     source: {prose(a.source)}")
    return lines


def evidence_block(f: Finding) -> list[str]:
    shown = f.evidence[:EVIDENCE_LINES]
    more = len(f.evidence) - len(shown)
    summary = html.escape(f"Evidence: {f.cause} ({len(f.evidence)} line{'s' if len(f.evidence) != 1 else ''})")
    lines = [f"<details><summary>{summary}</summary>", ""]
    lines += fenced([_cut(f"{_short(e.source)}:{e.line}: {e.text}") for e in shown])
    if more:
        lines += ["", f"{more} more line(s) in `logdoctor diagnose --format json`."]
    return [*lines, "", "</details>", ""]


def render_github(d: Diagnosis, observed: Observed, level: str = "###") -> str:
    lines = [f"{level} Environment", ""]
    rows = environment_rows(d.facts)
    lines += [f"- **{label}**: {inline_code(value)}" for label, value in rows] or ["- the log does not show it"]
    if not any(label == "GPU" for label, _ in rows):
        given = d.performance.gpu if d.performance is not None and d.performance.known else None
        where = f"{inline_code(given)} (given, not in the log)" if given else "not in the log"
        lines.append(f"- **GPU**: {where}; add the output of {inline_code(GPU_QUERY)}")
    sources = ", ".join(inline_code(_short(s.name)) for s in d.sources)
    if sources:
        lines.append(f"- **log**: {sources}")
    lines.append("")
    if observed.launch is not None:
        lines += launch_lines(observed.launch, level)
    tool = d.tool.get("version", "")
    lines += [f"{level} Diagnosis (logdoctor {prose(tool)})", "", f"**{prose(d.verdict.summary)}**", ""]
    lines += performance_markdown(d, working=True)
    likely, minor = cause_groups(d.findings, d.problems)  # numbered by problem, as the verdict counts them
    for index, group in enumerate([*likely, *minor], start=1):
        lines += [*problem_summary(index, group), ""]
    ruled_out = ruled_out_causes(d)  # a cause with a finding is not ruled out
    if ruled_out:
        lines += [f"Ruled out: {', '.join(inline_code(c) for c in ruled_out)}.", ""]
    if d.insufficient_data:
        lines += [f"Could not check {len(d.insufficient_data)} rule(s) for lack of data in the log.", ""]
    lines += known_issues_markdown(d, prose, inline_code)
    if d.findings:
        lines += [f"{level} Evidence", ""]
        for finding in d.findings:
            if finding.evidence:
                lines += evidence_block(finding)
    lines += [f"> error: {prose(e.get('host', ''))}: {prose(e.get('error', ''))}" for e in d.errors]
    lines += ["", "<sub>Made with `logdoctor diagnose --format github`; log lines are redacted.</sub>"]
    return "\n".join(lines).rstrip() + "\n"


def render_github_fleet(hosts: Sequence[str], diagnoses: Sequence[Diagnosis], observed: Sequence[Observed]) -> str:
    lines = ["## Fleet", ""]
    for host, d in zip(hosts, diagnoses, strict=True):
        top = d.findings[0] if d.findings else None
        cause = f"{inline_code(top.cause)} ({top.score})" if top else "no finding"
        lines.append(f"- {inline_code(host)}: {cause}: {prose(d.verdict.summary)}")
    lines.append("")
    for host, d, obs in zip(hosts, diagnoses, observed, strict=True):
        lines += [f"## {prose(host)}", "", render_github(d, obs, level="###")]
    return "\n".join(lines).rstrip() + "\n"
