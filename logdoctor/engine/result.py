"""The one result model every renderer (terminal, JSON, Markdown) draws from. JSON schema: docs/json.md."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1

Severity = Literal["high", "medium", "low", "info"]
SEVERITY_ORDER: dict[str, int] = {"info": 0, "low": 1, "medium": 2, "high": 3}


def severity_for(score: int) -> Severity:
    if score >= 75:
        return "high"
    if score >= 50:
        return "medium"
    if score >= 25:
        return "low"
    return "info"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Evidence(_Model):
    source: str
    line: int
    end_line: int | None = None
    text: str
    # [start, end) of the values the finding reads, in `text` (engine/spans.py): excerpts centre on them
    spans: list[tuple[int, int]] = Field(default_factory=list)


class Finding(_Model):
    cause: str
    rule: str
    title: str
    score: int
    severity: Severity
    explanation: str
    working: str  # how the score was computed, with the numbers
    estimate: str | None = None
    evidence: list[Evidence] = Field(default_factory=list)
    fix: list[str] = Field(default_factory=list)
    references: list[str] = Field(default_factory=list)
    status: str = "test"


class RuleOutcome(_Model):
    rule: str
    cause: str
    title: str
    outcome: Literal["fired", "ruled_out", "insufficient_data", "not_applicable", "suppressed"]
    reason: str
    missing: list[str] = Field(default_factory=list)
    hints: list[str] = Field(default_factory=list)


class SourceReport(_Model):
    name: str
    kind: str
    bytes_read: int
    lines: int
    events: int
    unrecognised: int = 0
    prefiltered: bool = False
    host: str | None = None
    path: str | None = None
    bytes_transferred: int | None = None


class EngineReport(_Model):
    name: str
    version: str | None = None
    detection: list[str] = Field(default_factory=list)


VerdictKind = Literal["healthy", "problems", "inconclusive", "not-a-log"]


class Verdict(_Model):
    """logdoctor/engine/verdict.py decides it; `healthy` is kept for readers of schema 1."""

    healthy: bool
    summary: str
    kind: VerdictKind = "problems"
    missing: list[str] = Field(default_factory=list)  # inconclusive: what is missing and how to get it
    not_understood: int = 0  # candidate lines (with a known keyword) that no line type understood


class Diagnosis(_Model):
    schema_version: int = SCHEMA_VERSION
    tool: dict[str, str] = Field(default_factory=dict)
    sources: list[SourceReport]
    engine: EngineReport
    verdict: Verdict
    findings: list[Finding]
    ruled_out: list[RuleOutcome]
    insufficient_data: list[RuleOutcome]
    not_applicable: list[RuleOutcome] = Field(default_factory=list)
    suppressed: list[RuleOutcome] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    facts: dict[str, Any] = Field(default_factory=dict)
    errors: list[dict[str, str]] = Field(default_factory=list)  # per-host collection errors
