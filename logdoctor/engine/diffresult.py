"""The result model of `logdoctor diff`, beside engine/result.py: what the renderers draw (JSON schema: docs/diff.md).

    Difference(key="tensor_parallel_size", state="equal", baseline=2.0, candidate=2.0, ...)

The terminal and Markdown renderers import only this module (and engine/result.py), never the diff
logic; `format_value` writes a row's value the way both show it.
"""

from __future__ import annotations

from typing import Any, Literal

from logdoctor.engine.result import EngineReport, Finding, Performance, RuleOutcome, SourceReport, Verdict
from logdoctor.records import Record, field
from logdoctor.vocabulary import SETTINGS

DIFF_SCHEMA_VERSION = 1

State = Literal["differs", "equal", "unknown"]


class _Model(Record):
    """Frozen, unknown fields refused (logdoctor.records.Record); report/json.py makes pydantic twins for the schema."""


class Difference(_Model):
    """One row: the same setting or measurement on both deployments."""

    key: str
    group: str
    state: State  # equal, differs, or unknown (a side's log cannot show it)
    baseline: Any = None  # null when unknown
    candidate: Any = None
    baseline_detail: str | None = None  # e.g. the cudagraph mode, why custom all-reduce is off
    candidate_detail: str | None = None
    matters: bool = False
    why: str
    port: str | None = None  # the candidate engine's flag that reproduces the baseline's value
    baseline_flag: str | None = None
    candidate_flag: str | None = None
    baseline_key: str | None = None  # where the baseline's engine prints it (startup-dump key or log field)
    candidate_key: str | None = None
    findings: list[str] = field(default_factory=list)  # fired rules that read this row's fact


class CauseShare(_Model):
    """How much of the gap one cause explains: by the model (`Gap.method` "model": a problem of the candidate, its
    recommended action's effect) or plausibly by score (docs/diff.md: score share)."""

    cause: str  # the cause id of the problem's best finding
    rules: list[str]
    score: int
    share: float  # fraction of the gap on a log scale
    factor: float  # gap ** share: "explains about 1.7x"; with the model, the effect itself
    problem: str = ""  # the problem it stands for (speculation, tp-link, or the cause id): one share a problem


class Gap(_Model):
    key: str  # the row measured: decode_tok_s_per_request or generation_throughput
    baseline: float
    candidate: float
    ratio: float  # baseline / candidate: above 1 the candidate is slower
    summary: str
    method: str = "score-share"  # or "model": the candidate's problems' effects (the GPU known)
    attribution: list[CauseShare] = field(default_factory=list)
    unexplained_share: float = 0.0
    left_out: dict[str, str] = field(default_factory=dict)  # rule -> why it explains none of the gap
    # by the expected-performance model (both sides' GPU known): baseline bound / candidate bound, the part of
    # `ratio` the deployments' settings account for on their hardware (docs/expected-performance.md)
    expected_ratio: float | None = None
    expected_summary: str = ""


class DiffSide(_Model):
    sources: list[SourceReport]
    engine: EngineReport
    verdict: Verdict
    findings: list[str] = field(default_factory=list)  # rules that fire on this deployment alone
    performance: Performance | None = None  # expected vs measured on this side's hardware


class DiffReport(_Model):
    schema_version: int = DIFF_SCHEMA_VERSION
    report: Literal["diff"] = "diff"
    tool: dict[str, str] = field(default_factory=dict)
    baseline: DiffSide
    candidate: DiffSide
    gap: Gap | None = None
    differences: list[Difference]
    folded: int = 0  # equal rows and rows neither log shows, left out (`--all` shows them)
    verdict: Verdict
    findings: list[Finding]
    ruled_out: list[RuleOutcome] = field(default_factory=list)
    insufficient_data: list[RuleOutcome] = field(default_factory=list)
    suppressed: list[RuleOutcome] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# --- shared by the renderers ---------------------------------------------------------------------


def plain_number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def format_value(key: str, value: Any, detail: str | None = None) -> str:
    """A row's value as the reports show it: `on (FULL_AND_PIECEWISE)`, `262,144`, `3.08`, `unknown`."""
    if value is None:
        return "unknown"
    entry = SETTINGS[key]
    if isinstance(value, bool):
        text = "on" if value else "off"
    elif isinstance(value, int | float) and entry.fmt:
        text = format(value, entry.fmt)
    elif isinstance(value, float):
        text = plain_number(value) if value.is_integer() else f"{value:.4g}"
    else:
        text = str(value)
    if detail and detail.upper() != text.upper():
        text += f" ({detail})"
    return text


def engine_label(side: DiffSide) -> str:
    return side.engine.name + (f" {side.engine.version}" if side.engine.version else "")
