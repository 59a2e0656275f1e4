"""`logdoctor diff --format markdown`: the comparison, ready to paste into an issue thread.

| | setting | baseline (sglang) | candidate (vllm 0.20.1) | port to vllm | why |
|---|---|---|---|---|---|
| ❗ | `num_speculative_tokens` | 3 · `--speculative-num-draft-tokens` | 15 · `--speculative-config` | `...` | k: ... |
"""

from __future__ import annotations

from logdoctor.engine.diffresult import Difference, DiffReport, engine_label, format_value
from logdoctor.engine.problems import group
from logdoctor.report.markdown import insufficient_lines, minor_lines, problem_lines
from logdoctor.report.mdtext import code, text
from logdoctor.report.performance import attribution_line, diff_performance_lines
from logdoctor.report.terminal import cause_groups
from logdoctor.sanitize import clean

_MARK = {"matters": "❗", "differs": "≠", "unknown": "?", "equal": "="}


def _cell(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ")


def _value(row: Difference, baseline: bool) -> str:
    value = row.baseline if baseline else row.candidate
    detail = row.baseline_detail if baseline else row.candidate_detail
    shown = text(format_value(row.key, value, detail))
    flag = row.baseline_flag if baseline else row.candidate_flag
    return f"{shown} · `{_cell(code(flag))}`" if flag else shown


def render_diff_markdown(report: DiffReport) -> str:
    report = clean(report)
    base, cand = text(engine_label(report.baseline)), text(engine_label(report.candidate))
    lines = ["## logdoctor diff", ""]
    if report.gap is not None:
        lines.append(f"**Candidate is {text(report.gap.summary)}**")
        if report.gap.attribution:
            lines += ["", text(attribution_line(report.gap))]
        lines += ["", *(f"- {text(line)}" for line in diff_performance_lines(report))]
        lines.append("")
    for label, side, engine in (("Baseline", report.baseline, base), ("Candidate", report.candidate, cand)):
        sources = ", ".join(f"`{_cell(code(s.name))}`" for s in side.sources)
        lines.append(f"{label}: {engine} · {sources}  ")
    lines += [
        "",
        f"| | setting | baseline ({base}) | candidate ({cand}) | port to {text(report.candidate.engine.name)} | why |",
        "|---|---|---|---|---|---|",
    ]
    for row in report.differences:
        mark = _MARK["matters" if row.matters else row.state]
        port = f"`{_cell(code(row.port))}`" if row.port else ""
        why = text(row.why) if row.matters else ""
        lines.append(f"| {mark} | `{code(row.key)}` | {_value(row, True)} | {_value(row, False)} | {port} | {why} |")
    lines.append("")
    if report.folded:
        lines += [f"<sub>{report.folded} equal or unknown rows folded (`--all` shows them)</sub>", ""]
    lines += [f"**{text(report.verdict.summary)}**", ""]
    in_baseline = set(report.baseline.findings)
    quoted: set[tuple[str, int]] = set()
    # one heading a problem with its actions (the model's, with their expected tok/s), as diagnose and the terminal
    _, problems = group(report.findings)
    likely, minor = cause_groups(report.findings, problems)
    for index, problem in enumerate(likely, start=1):
        block = problem_lines(index, problem, quoted)
        shared = [f.rule for f in problem.findings if f.rule in in_baseline]
        if shared:
            block[0] += f" *(also in the baseline: {', '.join(shared)})*"
        lines += block
    lines += minor_lines(minor)
    lines += insufficient_lines(report.insufficient_data)
    for warning in report.warnings:
        lines.append(f"> warning: {text(warning)}")
    return "\n".join(lines).rstrip() + "\n"
