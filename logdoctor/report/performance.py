"""Expected vs measured throughput and the gap attributed to findings, for every renderer.

    Expected performance (upper bound: roofline, docs/expected-performance.md)
      18.2 tok/s per request, expected <= 27 on 2x RTX A6000 (68%, at k=2 for this drafter; as deployed <= 22, 83%): ...
      bound as deployed: 22.0 tok/s per request, 22.0 aggregate at batch 1 (memory-bound; 1.29 tokens, 58.9 ms a step)
      this hardware for this model, tok/s per request: <= 22.0 as deployed at 1.29 tokens a step (83%); <= 24.7 ...
      explains 2.31x of 2.79x (18.2 measured -> 50.7 tok/s per request expected with every problem's recommended
        action): speculation 2.256x (+22.9 tok/s) x tp-link 1.024x (+0.4 tok/s) (...)

`performance_lines` gives the plain lines; `render_performance_terminal`, `performance_markdown` and
`performance_html` dress them for each format (the GitHub body uses the Markdown); the Markdown and HTML
pass every line through `logdoctor.sanitize.clean_text` and their format's escaping (the terminal report
cleans the whole diagnosis first).
from a `Diagnosis` that the caller has passed through `logdoctor.sanitize.clean`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from logdoctor.engine.result import Diagnosis, Finding, Performance
from logdoctor.report.plain import Text
from logdoctor.sanitize import clean_text

if TYPE_CHECKING:
    from rich.console import Console

    from logdoctor.engine.diffresult import DiffReport, Gap

TITLE = "Expected performance (upper bound: roofline, docs/expected-performance.md)"
HEALTHY_BAND = "50-90%"


@dataclass
class PerformanceLines:
    """The section as plain text: a headline, detail lines, the model's working and what was not known."""

    headline: str
    details: list[str] = field(default_factory=list)
    working: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    style: str = "dim"  # ok / warn / dim, for formats that colour


def _tok(x: float) -> str:
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}"


def _band(p: Performance) -> tuple[str, str]:
    if p.band == "healthy":
        if p.ratio is not None and p.ratio > 0.9:
            return f"at the bound (healthy runs reach {HEALTHY_BAND})", "ok"
        return f"within the {HEALTHY_BAND} healthy runs reach", "ok"
    if p.band == "below":
        return f"far below the {HEALTHY_BAND} healthy runs reach", "warn"
    if p.band == "above-bound":
        return (
            "above the bound: an input of the model is off (the weights a step reads, the GPU, or what the "
            "log's throughput counts)",
            "warn",
        )
    return "nothing measured to compare (the stats lines give it)", "dim"


def _shares(p: Performance, findings: Sequence[Finding]) -> str:
    """One factor a problem, the same number its box and the JSON carry: `speculation 2.24x (+22.5 tok/s)`."""
    by_rule = {f.rule: f for f in findings}
    parts = []
    for share in p.shares:
        f = by_rule.get(share.rule)
        recovered = f" (+{f.effect.tok_s_recovered:.1f} tok/s)" if f is not None and f.effect else ""
        parts.append(f"{share.problem or share.cause} {share.speedup:.3f}x{recovered}")
    return " x ".join(parts)


def hardware_line(p: Performance) -> str:
    """What this hardware could do for the model, for a deployment with speculation: without it, with the method at
    a published typical acceptance, and as deployed, each with measured / that bound."""
    if p.expected_no_spec_tok_s is None:
        return ""
    measured = p.measured_per_request_tok_s if p.basis == "per request" else p.measured_aggregate_tok_s
    unit = "tok/s aggregate" if p.basis == "aggregate" else "tok/s per request"

    def share(bound: float | None) -> str:
        return f" ({measured / bound:.0%})" if measured is not None and bound else ""

    parts = []
    if measured is not None and p.ratio_as_deployed:
        parts.append(
            f"<= {_tok(measured / p.ratio_as_deployed)} as deployed at {p.tokens_per_step:.2f} tokens a step "
            f"({p.ratio_as_deployed:.0%})"
        )
    parts.append(f"<= {_tok(p.expected_no_spec_tok_s)} without speculation{share(p.expected_no_spec_tok_s)}")
    deployed = measured / p.ratio_as_deployed if measured is not None and p.ratio_as_deployed else None
    if p.best_k and p.expected_hardware_tok_s is not None and p.expected_hardware_tok_s > (deployed or 0.0) * 1.005:
        parts.append(
            f"<= {_tok(p.expected_hardware_tok_s)} at k={p.best_k} for this drafter{share(p.expected_hardware_tok_s)}"
        )
    if p.expected_typical_spec_tok_s is not None:
        parts.append(
            f"<= {_tok(p.expected_typical_spec_tok_s)} with another drafter of this method at its published typical "
            f"acceptance length {p.typical_acceptance:g} (best k={p.typical_k}; not this deployment's drafter)"
        )
    line = f"this hardware for this model, {unit}: " + "; ".join(parts)
    if p.typical_source:
        line += f" [typical acceptance: {p.typical_source}]"
    return line


def performance_lines(d: Diagnosis) -> PerformanceLines | None:
    """The section for one diagnosis; None where it was not assessed."""
    p = d.performance
    if p is None:
        return None
    if not p.known:
        gpu = next((u for u in p.unknown if u.what == "GPU"), None)
        if gpu is not None:
            return PerformanceLines(f"expected throughput unknown: GPU unknown; {gpu.how}")
        first = p.unknown[0] if p.unknown else None
        why = f"{first.what}: {first.how}" if first else "the model could not run"
        return PerformanceLines(
            f"expected throughput unknown: {why}", unknown=[f"{u.what}: {u.how}" for u in p.unknown]
        )
    band, style = _band(p)
    out = PerformanceLines(f"{p.summary}: {band}", style=style)
    out.details.append(
        f"bound as deployed: {_tok(p.expected_per_request_tok_s or 0.0)} tok/s per request, "
        f"{_tok(p.expected_aggregate_tok_s or 0.0)} aggregate at batch {p.batch} ({p.bound}-bound; "
        f"{p.tokens_per_step:.2f} tokens, {p.step_ms:.1f} ms a step)"
    )
    hardware = hardware_line(p)
    if hardware:
        out.details.append(hardware)
    if p.batch != 1 and p.expected_single_request_tok_s is not None and p.basis == "per request":
        out.details.append(
            f"per-request intervals (one running request) are compared with the bound at batch 1: "
            f"{_tok(p.expected_single_request_tok_s)} tok/s"
        )
    measured = []
    if p.measured_per_request_tok_s is not None:
        measured.append(f"{p.measured_per_request_tok_s:.1f} tok/s per request")
    if p.measured_aggregate_tok_s is not None:
        measured.append(f"{p.measured_aggregate_tok_s:.1f} aggregate")
    if measured:
        out.details.append("measured (median of the stats intervals): " + ", ".join(measured))
    if p.explained is not None:
        shares = _shares(p, d.findings)
        if p.gap is not None and p.gap >= 1.0:
            rest = p.gap / p.explained
            # the two ends of the gap in tok/s, so "of 2.79x" reads as from what to what
            ends = ""
            if p.measured_per_request_tok_s is not None:
                ends = (
                    f" ({p.measured_per_request_tok_s:.1f} measured -> {p.measured_per_request_tok_s * p.gap:.1f} tok/s"
                    " per request expected with every problem's recommended action)"
                )
            out.details.append(
                f"explains {p.explained:.2f}x of {p.gap:.2f}x{ends}: {shares} (each problem's recommended action, by "
                f"the model; tok/s added at the measured rate); the other {rest:.2f}x is between the measurement and "
                "the bound as deployed (healthy runs: 1.1-2x), which no problem accounts for"
            )
        else:
            out.details.append(f"the findings' fixes raise the bound {p.explained:.2f}x: {shares}")
    out.working = list(p.working)
    out.unknown = [f"{u.what}: {u.how}" if u.how != u.what else u.what for u in p.unknown]
    return out


_TERMINAL_STYLE = {"ok": "green", "warn": "yellow", "dim": "dim"}


def render_performance_terminal(d: Diagnosis, console: Console, *, verbose: bool = False) -> None:
    """The section in the terminal report: the headline and details; the working and unknowns with --verbose."""
    lines = performance_lines(d)
    if lines is None:
        return
    console.print(Text(TITLE, style="bold"))
    console.print(Text(f"  {lines.headline}", style=_TERMINAL_STYLE[lines.style]))
    for line in lines.details:
        console.print(Text(f"  {line}"))
    if verbose:
        for i, step in enumerate(lines.working, 1):
            console.print(Text(f"    {i}. {step}", style="dim"))
        for item in lines.unknown:
            console.print(Text(f"  unknown (the bound may be optimistic): {item}", style="dim"))
    elif lines.working or lines.unknown:
        console.print(
            Text(f"  working: {len(lines.working)} steps, {len(lines.unknown)} unknown (--verbose)", style="dim")
        )
    console.print()


def performance_markdown(d: Diagnosis, *, working: bool = False) -> list[str]:
    """The section as Markdown lines (escaped with logdoctor.report.markdown.text); `working`: the model's steps in
    a `<details>` block (the GitHub body)."""
    from logdoctor.report.mdtext import text as escape

    def text(value: str) -> str:
        return escape(clean_text(value))

    lines = performance_lines(d)
    if lines is None:
        return []
    out = [f"**Expected performance**: {text(lines.headline)}", ""]
    out += [f"- {text(line)}" for line in lines.details]
    out += [f"- unknown: {text(item)}" for item in lines.unknown]
    if lines.details or lines.unknown:
        out.append("")
    if working and lines.working:
        out += ["<details><summary>Working of the bound</summary>", ""]
        out += [f"{i}. {text(step)}" for i, step in enumerate(lines.working, 1)]
        out += ["", "</details>", ""]
    return out


def performance_html(d: Diagnosis) -> str:
    """The section as one escaped HTML block, the working in a `<details>`."""
    import html

    lines = performance_lines(d)
    if lines is None:
        return ""

    def e(value: str) -> str:
        return html.escape(clean_text(value))

    parts = ['<div class="performance">', "<h3>Expected performance</h3>"]
    parts.append(f'<p class="perf-{lines.style}"><strong>{e(lines.headline)}</strong></p>')
    if lines.details:
        parts.append("<ul>" + "".join(f"<li>{e(line)}</li>" for line in lines.details) + "</ul>")
    if lines.working or lines.unknown:
        parts.append("<details><summary>Working of the bound</summary><ol>")
        parts += [f"<li>{e(step)}</li>" for step in lines.working]
        parts.append("</ol>")
        if lines.unknown:
            parts.append(
                "<p>Unknown (the bound may be optimistic):</p><ul>"
                + "".join(f"<li>{e(u)}</li>" for u in lines.unknown)
                + "</ul>"
            )
        parts.append("</details>")
    parts.append("</div>")
    return "\n".join(parts)


def attribution_line(gap: Gap) -> str:
    """How the gap is split: by the model (the candidate's problems' effects, which multiply; the rest said as what
    the model does not explain), or plausibly by score where no GPU is known (docs/diff.md)."""
    if gap.method == "model":
        shares = " x ".join(f"{s.problem or s.cause} {s.factor:.2f}x" for s in gap.attribution)
        explained = 1.0
        for s in gap.attribution:
            explained *= s.factor
        rest = gap.ratio / explained if explained else gap.ratio
        tail = (
            f"; the other {rest:.2f}x the model does not explain" if rest >= 1.05 else "; the model explains all of it"
        )
        total = f" = {explained:.2f}x" if len(gap.attribution) > 1 else ""
        return (
            f"by the model: {shares}{total} of {gap.ratio:.2f}x{tail} (each problem's recommended action, the "
            "numbers diagnose gives)"
        )
    plausible = ", ".join(f"{s.problem or s.cause} ~{s.factor:.1f}x" for s in gap.attribution)
    left = f"; unexplained ~{gap.ratio**gap.unexplained_share:.1f}x" if gap.unexplained_share >= 0.05 else ""
    return f"plausibly: {plausible}{left} (score share, docs/diff.md; pass --gpu for the model's split)"


def diff_performance_lines(report: DiffReport) -> list[str]:
    """`logdoctor diff`: each side against its own bound, and the model's part of the gap (both GPUs known)."""
    lines = []
    for label, side in (("baseline", report.baseline), ("candidate", report.candidate)):
        p = side.performance
        if p is not None and p.known and p.summary:
            lines.append(f"{label}: {p.summary}")
    if report.gap is not None and report.gap.expected_summary:
        lines.append(report.gap.expected_summary)
    elif lines or any(s.performance is not None for s in (report.baseline, report.candidate)):
        unknown = [
            label
            for label, side in (("baseline", report.baseline), ("candidate", report.candidate))
            if side.performance is not None and not side.performance.known
        ]
        if unknown:
            lines.append(f"expected throughput unknown for the {' and the '.join(unknown)}: pass --gpu NAME")
    return lines


def render_diff_performance_terminal(report: DiffReport, console: Console) -> None:
    for line in diff_performance_lines(report):
        console.print(Text(f"  {line}", style="dim"))
