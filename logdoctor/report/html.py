"""`--format html`: one self-contained page (no network) with the verdict, the findings and timelines.

    <section class="deployment" id="d0"> <p class="verdict bad">2 likely problem(s); top: speculation ...</p>
      <figure class="chart" id="d0-decode" data-points="30"> ... </figure> ... </section>
    <script type="application/json" id="logdoctor-data">{"charts": [{"id": "d0-decode", ...}]}</script>

Every value taken from a log (evidence, messages, paths, names) is escaped with `html.escape`; the
chart data is JSON with `<`, `>` and `&` written as `\\u003c`..., read by the page with `JSON.parse`,
and the page's script only ever sets text (`textContent`), never markup. The charts are drawn by
uPlot (vendored in report/assets, MIT; docs/reports.md says why), inlined with the page's own script.
A Content-Security-Policy forbids the page any request, so it shows the same offline.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from logdoctor.engine.result import Diagnosis, Finding, RuleOutcome
from logdoctor.report.advisories import known_issues_html
from logdoctor.report.observed import Observed, environment_rows
from logdoctor.report.performance import attribution_line, performance_html
from logdoctor.report.terminal import CauseGroup, cause_groups, ruled_out_causes
from logdoctor.report.timeline import Marker, Timeline, gaps

if TYPE_CHECKING:
    from logdoctor.diff import Difference, DiffReport, DiffSide

# (chart id, title, unit, [(series, label, axis)]): every series of a chart on its one y axis, from zero. The
# aggregate and the per-request decode rates are charts of their own: on two axes of one chart, the per-request
# line (the aggregate over 48 running requests) was drawn at the aggregate's height, and read as its size.
CHARTS: tuple[tuple[str, str, str, tuple[tuple[str, str, str], ...]], ...] = (
    ("decode", "Decode throughput, all requests", "tok/s", (("decode_tok_s", "aggregate", "y"),)),
    (
        "per-request",
        "Decode throughput per running request",
        "tok/s",
        (("decode_tok_s_per_request", "per request", "y"),),
    ),
    ("acceptance", "Acceptance length", "tokens a step", (("acceptance_length", "mean acceptance length", "y"),)),
    ("kv", "KV cache usage", "%", (("kv_usage_percent", "KV usage", "y"),)),
    ("queue", "Running and waiting requests", "requests", (("running", "running", "y"), ("waiting", "waiting", "y"))),
)
LONG_LINE = 400
FOLDED_START = 240
_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _asset(name: str) -> str:
    return (files("logdoctor.report") / "assets" / name).read_text(encoding="utf-8")


def _script_json(data: Any) -> str:
    """JSON that cannot end the `<script>` element it sits in, whatever strings it holds."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _short(source: str) -> str:
    return source.rsplit("/", 1)[-1]


def _with_gaps(points: Sequence[tuple[float, float]]) -> list[list[float | None]]:
    """The points as `[t, value]`, with `[t, null]` where the line breaks (timeline.gaps): uPlot leaves a gap at a
    null and joins across what is merely absent (another series' x)."""
    breaks = gaps(points)
    out: list[list[float | None]] = []
    at = 0
    for t, v in points:
        while at < len(breaks) and breaks[at] < t:
            out.append([breaks[at], None])
            at += 1
        out.append([t, v])
    return out


class _Page:
    """Collects the charts of every section so one JSON block and one script draw them all."""

    def __init__(self) -> None:
        self.charts: list[dict[str, Any]] = []

    def charts_html(self, prefix: str, sides: Sequence[tuple[str, Timeline]]) -> str:
        """The four timeline charts of one deployment (one side) or of several overlaid (diff)."""
        out = ['<div class="charts">']
        for chart_id, title, unit, series in CHARTS:
            element_id = f"{prefix}-{chart_id}"
            spec_series: list[dict[str, Any]] = []
            counts: list[int] = []
            for side_index, (side_label, timeline) in enumerate(sides):
                for name, label, axis in series:
                    points = timeline.series.get(name, [])
                    counts.append(len(points))
                    spec_series.append(
                        {
                            "label": f"{side_label}: {label}" if side_label else label,
                            "side": side_index,
                            "scale": axis,
                            "points": _with_gaps(points),
                        }
                    )
            markers = [
                {"t": m.t, "kind": m.kind, "side": i} for i, (_, timeline) in enumerate(sides) for m in timeline.markers
            ]
            total = sum(counts)
            out.append(
                f'<figure class="chart" id="{element_id}" data-points="{total}" '
                f'data-series-points="{",".join(map(str, counts))}">'
                f"<figcaption>{_e(title)} <span class=unit>({_e(unit)})</span></figcaption>"
            )
            if total:
                # one deployment: the axis is the log's clock; several overlaid: seconds since each began serving
                clock = sides[0][1] if len(sides) == 1 and sides[0][1].origin else None
                self.charts.append(
                    {
                        "id": element_id,
                        "unit": unit,
                        "series": spec_series,
                        "markers": markers,
                        "origin": clock.origin if clock else None,
                        "dated": clock.dated if clock else False,
                    }
                )
                out.append('<div class="plot"></div>')
            else:
                out.append('<p class="empty">the log has no line with these numbers</p>')
            out.append("</figure>")
        out.append("</div>")
        return "\n".join(out)

    def document(self, title: str, body: str) -> str:
        data = _script_json({"charts": self.charts})
        return "\n".join(
            [
                "<!DOCTYPE html>",
                '<html lang="en"><head><meta charset="utf-8">',
                f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
                '<meta name="viewport" content="width=device-width, initial-scale=1">',
                f"<title>{_e(title)}</title>",
                f"<style>{_asset('uPlot.min.css')}\n{_asset('report.css')}</style>",
                "</head><body>",
                body,
                f'<script type="application/json" id="logdoctor-data">{data}</script>',
                f"<script>{_asset('uPlot.iife.min.js')}</script>",
                f"<script>{_asset('report.js')}</script>",
                "</body></html>",
                "",
            ]
        )


def _header(tool: dict[str, str]) -> str:
    version = tool.get("version", "")
    return f'<header><h1>logdoctor report</h1><p class="tool">logdoctor {_e(version)}</p></header>'


def _engine(name: str, version: str | None) -> str:
    return name + (f" {version}" if version else "")


def _verdict(healthy: bool, summary: str) -> str:
    return f'<p class="verdict {"good" if healthy else "bad"}">{_e(summary)}</p>'


def _environment(facts: dict[str, Any]) -> str:
    rows = environment_rows(facts)
    if not rows:
        return ""
    cells = "".join(f"<div><dt>{_e(label)}</dt><dd>{_e(value)}</dd></div>" for label, value in rows)
    return f'<dl class="environment">{cells}</dl>'


def _evidence_text(text: str) -> str:
    """A line in full; a very long one (a configuration dump) folded after its start, a click away."""
    if len(text) <= LONG_LINE:
        return f"<pre>{_e(text)}</pre>"
    return (
        f'<details class="long"><summary><pre>{_e(text[:FOLDED_START])} … '
        f"({len(text)} characters)</pre></summary><pre>{_e(text)}</pre></details>"
    )


def finding_html(prefix: str, index: int, f: Finding, note: str = "") -> str:
    parts = [
        f'<article class="finding sev-{_e(f.severity)}" id="{prefix}-finding-{index}">',
        f'<h4><span class="score">{f.score}</span> <span class="cause">{_e(f.cause)}</span> {_e(f.title)}</h4>',
        f'<p class="meta">{_e(f.severity)} · rule <code>{_e(f.rule)}</code>{_e(note)}</p>',
        f'<p class="explanation">{_e(f.explanation)}</p>',
    ]
    if f.estimate:
        parts.append(f'<p class="estimate"><em>Estimated effect:</em> {_e(f.estimate)}</p>')
    if f.evidence:
        rows = "".join(
            f'<tr><td class="loc">{_e(_short(e.source))}:{e.line}</td><td>{_evidence_text(e.text)}</td></tr>'
            for e in f.evidence
        )
        parts.append(f'<h5>Evidence</h5><table class="evidence">{rows}</table>')
    if f.fix:
        steps = "".join(f"<li><code>{_e(step)}</code></li>" for step in f.fix)
        parts.append(f'<h5>Fix</h5><ul class="fix">{steps}</ul>')
    parts.append(f"<details><summary>How the score was computed</summary><p>{_e(f.working)}</p></details>")
    parts.append("</article>")
    return "\n".join(parts)


def problem_html(prefix: str, index: int, group: CauseGroup) -> str:
    """One problem (findings that share one mechanism): its effect, the recommended action with its expected result,
    the alternatives with theirs, then each of its findings."""
    top = group.top
    parts = [
        f'<article class="problem sev-{_e(top.severity)}" id="{prefix}-problem-{index}">',
        f'<h4><span class="score">{top.score}</span> <span class="cause">{_e(group.cause)}</span> {_e(group.title)}</h4>',
    ]
    if group.statement:
        parts.append(f'<p class="estimate"><em>Effect:</em> {_e(group.statement)}</p>')
    modelled = [a for a in group.actions if a.expected_tok_s is not None]
    if modelled:
        items = []
        for a in modelled:
            label = "recommended" if a is modelled[0] else "alternative"
            extra = "".join(f" · {_e(x)}" for x in (a.note, f"source: {a.source}" if a.source else "") if x)
            items.append(
                f"<li>{label}: <code>{_e(a.text)}</code> → {a.expected_tok_s:.1f} tok/s {_e(a.basis)} expected "
                f"({a.speedup or 0:.2f}x){extra}</li>"
            )
        parts.append(f'<h5>Actions</h5><ul class="fix">{"".join(items)}</ul>')
    parts += [finding_html(f"{prefix}-p{index}", i, f) for i, f in enumerate(group.findings, start=1)]
    parts.append("</article>")
    return "\n".join(parts)


def _ruled_out(d: Diagnosis) -> str:
    """Causes ruled out and not found, counted as the terminal counts them, each with the rules that ruled it out."""
    causes = ruled_out_causes(d)
    if not causes:
        return ""
    items = "".join(
        f"<li><code>{_e(c)}</code>: "
        + "; ".join(f"{_e(o.rule)}: {_e(o.reason or o.title)}" for o in d.ruled_out if o.cause == c)
        + "</li>"
        for c in causes
    )
    return f"<details><summary>Ruled out ({len(causes)})</summary><ul>{items}</ul></details>"


def _outcomes(title: str, outcomes: Sequence[RuleOutcome]) -> str:
    if not outcomes:
        return ""
    items = "".join(f"<li><code>{_e(o.cause)}</code> ({_e(o.rule)}): {_e(o.reason or o.title)}</li>" for o in outcomes)
    return f"<details><summary>{_e(title)} ({len(outcomes)})</summary><ul>{items}</ul></details>"


def _markers(markers: Sequence[Marker], label: str = "") -> str:
    if not markers:
        return ""
    rows = "".join(
        f'<tr class="marker-{_e(m.kind)}"><td class="num">{m.t:g}</td><td>{_e(m.kind)}</td>'
        f'<td class="loc">{_e(_short(m.source))}:{m.line}</td><td>{_e(m.label)}</td></tr>'
        for m in markers
    )
    caption = f"Markers{': ' + _e(label) if label else ''} ({len(markers)})"
    return (
        f'<details class="markers"><summary>{caption}</summary><table>'
        f"<tr><th>t (s)</th><th>kind</th><th>line</th><th>message</th></tr>{rows}</table></details>"
    )


def _warmup_note(timeline: Timeline, side: str = "") -> str:
    if not timeline.warmup:
        return ""
    whose = f"{side}: " if side else ""
    return f"; {whose}{timeline.warmup} start-up point(s) before the first throughput line are not drawn"


def _axis_note(timeline: Timeline) -> str:
    if timeline.origin is None:
        return "seconds since the first throughput line"
    return "the log's clock as printed (no time zone applied)"


def _deployment_section(page: _Page, prefix: str, d: Diagnosis, observed: Observed, heading: str) -> str:
    sources = ", ".join(_short(s.name) for s in d.sources) or "-"
    parts = [
        f'<section class="deployment" id="{prefix}">',
        f"<h2>{_e(heading)}</h2>",
        f'<p class="sources">{_e(_engine(d.engine.name, d.engine.version))} · {_e(sources)}</p>',
        _verdict(d.verdict.healthy, d.verdict.summary),
        _environment(d.facts),
        performance_html(d),
        "<h3>Timelines</h3>",
        f'<p class="axis-note">{_axis_note(observed.timeline)}; lines break where no stats line came for '
        "several intervals; vertical marks: "
        '<span class="k-restart">restart</span>, <span class="k-preemption">preemption</span>, '
        '<span class="k-warning">warning</span>, <span class="k-failure">failure</span>'
        f"{_warmup_note(observed.timeline)}</p>",
        page.charts_html(prefix, [("", observed.timeline)]),
        _markers(observed.timeline.markers),
    ]
    likely, minor = cause_groups(d.findings, d.problems)
    parts.append(f"<h3>Problems ({len(likely)})</h3>")  # as the verdict and the terminal count them
    parts += [problem_html(prefix, i, g) for i, g in enumerate(likely, start=1)]
    if minor:
        parts.append(f"<h3>Also noted ({len(minor)}, each below score 50)</h3>")
        parts += [problem_html(prefix, i, g) for i, g in enumerate(minor, start=len(likely) + 1)]
    if not d.findings:
        parts.append('<p class="none">no finding</p>')
    parts.append(_ruled_out(d))
    parts.append(_outcomes("Could not check", d.insufficient_data))
    parts.append(_outcomes("Suppressed", d.suppressed))
    parts.append(known_issues_html(d))
    parts += [f'<p class="warning">warning: {_e(w)}</p>' for w in d.warnings]
    parts += [f'<p class="error">error: {_e(e.get("host", ""))}: {_e(e.get("error", ""))}</p>' for e in d.errors]
    parts.append("</section>")
    return "\n".join(p for p in parts if p)


def render_html(diagnosis: Diagnosis, observed: Observed) -> str:
    page = _Page()
    heading = ", ".join(_short(s.name) for s in diagnosis.sources) or "diagnosis"
    body = (
        "<main>" + _header(diagnosis.tool) + _deployment_section(page, "d0", diagnosis, observed, heading) + "</main>"
    )
    return page.document(f"logdoctor: {heading}", body)


def render_fleet_html(hosts: Sequence[str], diagnoses: Sequence[Diagnosis], observed: Sequence[Observed]) -> str:
    """A table of the hosts, each row linking to its host's section below."""
    page = _Page()
    rows = []
    for index, (host, d) in enumerate(zip(hosts, diagnoses, strict=True)):
        top = d.findings[0] if d.findings else None
        engine = "-" if d.errors else _engine(d.engine.name, d.engine.version)
        rows.append(
            f'<tr class="{"good" if d.verdict.healthy else "bad"}"><td><a href="#d{index}">{_e(host)}</a></td>'
            f"<td>{_e(engine)}</td><td>{_e(top.cause if top else '-')}</td>"
            f'<td class="num">{top.score if top else "-"}</td><td>{_e(d.verdict.summary)}</td></tr>'
        )
    table = (
        f'<section class="fleet"><h2>Fleet: {len(hosts)} hosts</h2><table class="fleet-table">'
        "<tr><th>host</th><th>engine</th><th>top cause</th><th>score</th><th>verdict</th></tr>"
        + "".join(rows)
        + "</table></section>"
    )
    sections = [
        _deployment_section(page, f"d{i}", d, obs, host)
        for i, (host, d, obs) in enumerate(zip(hosts, diagnoses, observed, strict=True))
    ]
    body = "<main>" + _header(diagnoses[0].tool if diagnoses else {}) + table + "\n".join(sections) + "</main>"
    return page.document(f"logdoctor: {len(hosts)} hosts", body)


# --- diff ----------------------------------------------------------------------------------------

_MARK = {"matters": "!", "differs": "≠", "unknown": "?", "equal": "="}
_MARK_MEANING = {
    "!": "differs and matters for speed",
    "≠": "differs",
    "?": "one log does not show it",
    "=": "equal",
}


def _diff_value(report: DiffReport, row: Difference, baseline: bool) -> str:
    from logdoctor.engine.diffresult import format_value

    value = row.baseline if baseline else row.candidate
    detail = row.baseline_detail if baseline else row.candidate_detail
    spelled = (row.baseline_flag or row.baseline_key) if baseline else (row.candidate_flag or row.candidate_key)
    text = _e(format_value(row.key, value, detail))
    if value is None:
        text = f'<span class="unknown">{text}</span>'
    return text + (f"<br><code>{_e(spelled)}</code>" if spelled else "")


def _side_header(label: str, side: DiffSide) -> str:
    from logdoctor.engine.diffresult import engine_label

    sources = ", ".join(_short(s.name) for s in side.sources) or "-"
    return (
        f'<div class="side"><h3>{_e(label)}</h3><p class="sources">{_e(engine_label(side))} · {_e(sources)}</p>'
        f"{_verdict(side.verdict.healthy, side.verdict.summary)}</div>"
    )


def render_diff_html(report: DiffReport, baseline: Observed, candidate: Observed) -> str:
    """The two deployments side by side, the settings table, the timelines overlaid, the candidate's findings."""
    from logdoctor.engine.diffresult import engine_label

    page = _Page()
    parts = [_header(report.tool), '<section class="diff" id="diff"><h2>logdoctor diff</h2>']
    parts.append(
        '<div class="sides">'
        + _side_header("baseline (the fast one)", report.baseline)
        + _side_header("candidate (the slow one)", report.candidate)
        + "</div>"
    )
    gap = report.gap
    if gap is not None:
        parts.append(f'<p class="gap {"bad" if gap.ratio >= 1.05 else "good"}">candidate is {_e(gap.summary)}</p>')
        if gap.attribution:
            parts.append(f'<p class="attribution">{_e(attribution_line(gap))}</p>')
    else:
        parts.append('<p class="gap">no throughput both logs show: the gap cannot be measured</p>')
    parts.append("<h3>Timelines, overlaid</h3>")
    parts.append(
        '<p class="axis-note">seconds since each deployment\'s first throughput line; '
        "solid: baseline, dashed: candidate"
        f"{_warmup_note(baseline.timeline, 'baseline')}{_warmup_note(candidate.timeline, 'candidate')}</p>"
    )
    parts.append(page.charts_html("diff", [("baseline", baseline.timeline), ("candidate", candidate.timeline)]))
    parts.append(_markers(baseline.timeline.markers, "baseline"))
    parts.append(_markers(candidate.timeline.markers, "candidate"))
    if report.differences:
        base, cand = engine_label(report.baseline), engine_label(report.candidate)
        rows = []
        for row in report.differences:
            mark = _MARK["matters" if row.matters else row.state]
            port = f"<code>{_e(row.port)}</code>" if row.port else ""
            rows.append(
                f'<tr class="{"matters" if row.matters else row.state}">'
                f'<td title="{_e(_MARK_MEANING[mark])}">{_e(mark)}</td><td><code>{_e(row.key)}</code></td>'
                f"<td>{_diff_value(report, row, True)}</td><td>{_diff_value(report, row, False)}</td>"
                f"<td>{port}</td><td>{_e(row.why) if row.matters else ''}</td></tr>"
            )
        legend = "; ".join(f"{_e(mark)} {_e(meaning)}" for mark, meaning in _MARK_MEANING.items())
        parts.append(
            f'<h3>Settings and measurements</h3><p class="legend">{legend}</p>'
            f'<table class="differences"><tr><th></th><th>setting</th><th>baseline ({_e(base)})</th>'
            f"<th>candidate ({_e(cand)})</th><th>port to {_e(report.candidate.engine.name)}</th><th>why</th></tr>"
            + "".join(rows)
            + "</table>"
        )
        if report.folded:
            parts.append(f'<p class="folded">{report.folded} equal or unknown rows folded (--all shows them)</p>')
    parts.append(f"<h3>Candidate findings ({len(report.findings)})</h3>")
    parts.append(_verdict(report.verdict.healthy, report.verdict.summary))
    in_baseline = set(report.baseline.findings)
    for index, finding in enumerate(report.findings, start=1):
        note = " · also in the baseline: explains none of the gap" if finding.rule in in_baseline else ""
        parts.append(finding_html("diff", index, finding, note))
    parts.append(_outcomes("Could not check", report.insufficient_data))
    parts += [f'<p class="warning">warning: {_e(w)}</p>' for w in report.warnings]
    parts.append("</section>")
    body = "<main>" + "\n".join(p for p in parts if p) + "</main>"
    return page.document(f"logdoctor diff: {engine_label(report.baseline)} vs {engine_label(report.candidate)}", body)
