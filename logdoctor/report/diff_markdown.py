"""`logdoctor diff --format markdown`: the comparison, ready to paste into an issue thread.

| | setting | baseline (sglang) | candidate (vllm 0.20.1) | port to vllm | why |
|---|---|---|---|---|---|
| ❗ | `num_speculative_tokens` | 3 · `--speculative-num-draft-tokens` | 15 · `--speculative-config` | `...` | k: ... |
"""

from __future__ import annotations

from logdoctor.diff import Difference, DiffReport, engine_label, format_value
from logdoctor.report.markdown import code, finding_lines, insufficient_lines

_MARK = {"matters": "❗", "differs": "≠", "unknown": "?", "equal": "="}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _value(row: Difference, baseline: bool) -> str:
    value = row.baseline if baseline else row.candidate
    detail = row.baseline_detail if baseline else row.candidate_detail
    text = _cell(format_value(row.key, value, detail))
    flag = row.baseline_flag if baseline else row.candidate_flag
    return f"{text} · `{_cell(code(flag))}`" if flag else text


def render_diff_markdown(report: DiffReport) -> str:
    base, cand = engine_label(report.baseline), engine_label(report.candidate)
    lines = ["## logdoctor diff", ""]
    if report.gap is not None:
        lines.append(f"**Candidate is {report.gap.summary}**")
        if report.gap.attribution:
            shares = ", ".join(f"`{s.cause}` ~{s.factor:.1f}x" for s in report.gap.attribution)
            lines += ["", f"Plausibly: {shares} (score share, see docs/diff.md)."]
        lines.append("")
    for label, side, engine in (("Baseline", report.baseline, base), ("Candidate", report.candidate, cand)):
        sources = ", ".join(f"`{s.name}`" for s in side.sources)
        lines.append(f"{label}: {engine} · {sources}  ")
    lines += [
        "",
        f"| | setting | baseline ({base}) | candidate ({cand}) | port to {report.candidate.engine.name} | why |",
        "|---|---|---|---|---|---|",
    ]
    for row in report.differences:
        mark = _MARK["matters" if row.matters else row.state]
        port = f"`{_cell(code(row.port))}`" if row.port else ""
        why = _cell(row.why) if row.matters else ""
        lines.append(f"| {mark} | `{row.key}` | {_value(row, True)} | {_value(row, False)} | {port} | {why} |")
    lines.append("")
    if report.folded:
        lines += [f"<sub>{report.folded} equal or unknown rows folded (`--all` shows them)</sub>", ""]
    lines += [f"**{report.verdict.summary}**", ""]
    in_baseline = set(report.baseline.findings)
    quoted: set[tuple[str, int]] = set()
    for index, finding in enumerate(report.findings, start=1):
        block = finding_lines(index, finding, quoted)
        if finding.rule in in_baseline:
            block[0] += " *(also in the baseline)*"
        lines += block
    lines += insufficient_lines(report.insufficient_data)
    for warning in report.warnings:
        lines.append(f"> warning: {warning}")
    return "\n".join(lines).rstrip() + "\n"
