"""The one result model every renderer (terminal, JSON, Markdown) draws from. JSON schema: docs/json.md."""

from __future__ import annotations

from typing import Any, Literal

from logdoctor.records import Record, field

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


class _Model(Record):
    """Frozen, unknown fields refused (logdoctor.records.Record); report/json.py makes pydantic twins for the schema."""


class Evidence(_Model):
    source: str
    line: int
    end_line: int | None = None
    text: str
    # [start, end) of the values the finding reads, in `text` (engine/spans.py): excerpts centre on them
    spans: list[tuple[int, int]] = field(default_factory=list)


class Action(_Model):
    """One way to fix a problem, with what the expected-performance model gives for it on this hardware."""

    text: str  # the flag or step, ready to copy
    expected_tok_s: float | None = None  # once applied, on `basis` (the model's expected, overheads included)
    speedup: float | None = None  # expected_tok_s / expected as deployed, same basis
    basis: Literal["per request", "aggregate"] = "per request"
    note: str = (
        ""  # why it applies here ("the model's own MTP head: its architecture Qwen3_5ForConditionalGeneration ...")
    )
    source: str = ""  # where an input that is not this log's comes from (a published acceptance length)


class FindingEffect(_Model):
    """What fixing a finding would buy on this hardware, from the expected-performance model (logdoctor/perf)."""

    kind: str  # the rule's `effect:` (custom-allreduce, p2p, cuda-graphs, spec-k, kv-concurrency)
    speedup: float  # decode tok/s fixed / as deployed, by the model
    basis: Literal["per request", "aggregate"] = "per request"
    expected_now_tok_s: float  # the model's bound as deployed
    expected_fixed_tok_s: float  # the model's bound once fixed
    tok_s_recovered: float  # measured x (speedup - 1) where measured, else on the bound
    formula: str
    working: list[str] = field(default_factory=list)
    firm: bool = True  # False: an input was assumed (draft cost, link), so the effect may only raise the score
    rule_score: int  # the rule's own score before the effect (docs/expected-performance.md, ranking)
    note: str = ""
    # the fix's choices computed by the model, best first; `speedup` is the first one's (speculation: another k,
    # no speculation, the model's own MTP head); empty where the fix is one change (custom all-reduce on)
    actions: list[Action] = field(default_factory=list)
    statement: str = ""  # the effect in words, a loss read as a loss ("speculation as deployed runs at 0.82x ...")


class Finding(_Model):
    cause: str
    rule: str
    title: str
    score: int
    severity: Severity
    explanation: str
    working: str  # how the score was computed, with the numbers
    estimate: str | None = None
    evidence: list[Evidence] = field(default_factory=list)
    fix: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    status: str = "test"
    effect: FindingEffect | None = None  # where the rule names an effect and the model could run
    kind: Literal["rule", "advisory"] = "rule"  # advisory: a known issue of the engine's release (`rule` is its id)
    problem: str = ""  # the id of the problem it belongs to (Diagnosis.problems; engine/problems.py)


class Problem(_Model):
    """Findings that share one mechanism (speculation too costly; the TP link) are one problem: counted once,
    ranked by the problem's effect, with one recommended action (`actions[0]`) and the alternatives after it."""

    id: str  # "speculation", "tp-link", else the cause id
    title: str
    score: int
    severity: Severity
    causes: list[str]  # docs/causes.md ids of its findings, best first
    rules: list[str]  # the rules whose findings it groups, best first
    effect: FindingEffect | None = None  # the model's effect of the recommended action
    actions: list[Action] = field(default_factory=list)  # recommended first; fix lines where the model gave none


class KnownIssue(_Model):
    """A known performance issue of a release (advisories/, docs/advisories.md) that applies to this deployment,
    or may: its version could not be read, or a fact its condition needs is missing."""

    id: str
    engine: str
    title: str
    cause: str
    status: Literal["applies", "may-apply"]
    version: str | None = None  # the engine's version as seen (None: not in the input)
    affected: str  # the affected ranges, PEP 440
    fixed_in: str | None = None
    reason: str  # why it applies, or what would decide it
    effect: str  # as the source states it
    slowdown: float | None = None  # throughput fixed / affected, from the source (None: it states no size)
    workaround: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)


class RuleOutcome(_Model):
    rule: str
    cause: str
    title: str
    outcome: Literal["fired", "ruled_out", "insufficient_data", "not_applicable", "suppressed"]
    reason: str
    missing: list[str] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)


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
    detection: list[str] = field(default_factory=list)


VerdictKind = Literal["healthy", "problems", "inconclusive", "not-a-log"]


class Verdict(_Model):
    """logdoctor/engine/verdict.py decides it; `healthy` is kept for readers of schema 1."""

    healthy: bool
    summary: str
    kind: VerdictKind = "problems"
    missing: list[str] = field(default_factory=list)  # inconclusive: what is missing and how to get it
    not_understood: int = 0  # candidate lines (with a known keyword) that no line type understood


class Missing(_Model):
    what: str
    how: str  # the flag, command or line that would give it


class GapShare(_Model):
    """One finding's part of the gap: its fix's speedup by the model."""

    rule: str
    cause: str
    speedup: float
    problem: str = ""  # the problem it stands for (one share a problem: its best finding with an effect)


class Performance(_Model):
    """Expected vs measured decode throughput on this hardware (logdoctor/perf; docs/expected-performance.md).

    `expected_*` are upper bounds from the roofline model at the measured batch; `ratio` is measured / expected
    (per request where the log gives it, else aggregate); `band` places it against what healthy runs reach."""

    known: bool  # False: the bound could not be computed (`unknown` says what is missing and how to get it)
    gpu: str | None = None
    gpus: int | None = None
    tp: int | None = None
    batch: int | None = None
    bound: Literal["memory", "compute", "launch"] | None = None
    expected_per_request_tok_s: float | None = None  # at the measured batch
    expected_aggregate_tok_s: float | None = None
    expected_single_request_tok_s: float | None = None  # at batch 1 (what per-request intervals are compared with)
    tokens_per_step: float | None = None
    step_ms: float | None = None
    measured_per_request_tok_s: float | None = None
    measured_aggregate_tok_s: float | None = None
    ratio: float | None = None
    basis: Literal["per request", "aggregate"] | None = None
    band: Literal["healthy", "below", "above-bound"] | None = None
    working: list[str] = field(default_factory=list)  # the model's steps, one short line each
    derived: list[str] = field(default_factory=list)  # how each input was read from the log
    unknown: list[Missing] = field(default_factory=list)
    gap: float | None = None  # expected once every finding with an effect is fixed / measured
    explained: float | None = None  # the part of `gap` the findings' fixes account for (their combined speedup)
    shares: list[GapShare] = field(default_factory=list)
    summary: str = ""  # "202 tok/s aggregate at batch 26, expected <= 363 on L4 (56%)"
    # What this hardware could do for the model, beside the bound as deployed (logdoctor/perf/bound.py): without
    # speculation, at the best k for this drafter, and (never the headline) the method in use at a published typical
    # acceptance; `ratio` is measured / the best of as deployed, without speculation and the best k,
    # `ratio_as_deployed` measured / the bound as deployed. Same basis as `ratio` (per request, or aggregate at the
    # measured batch). With speculation the bound counts the engine's per-step overhead of the drafted tokens.
    expected_no_spec_tok_s: float | None = None
    expected_typical_spec_tok_s: float | None = None
    typical_acceptance: float | None = None  # the published mean acceptance length used
    typical_k: int | None = None  # the best k at that acceptance
    typical_source: str | None = None
    expected_hardware_tok_s: float | None = None  # the best of as deployed, without speculation, the best k
    best_k: int | None = None  # the k this drafter does best at by the model (0: without speculation)
    ratio_as_deployed: float | None = None


class Diagnosis(_Model):
    schema_version: int = SCHEMA_VERSION
    tool: dict[str, str] = field(default_factory=dict)
    sources: list[SourceReport]
    engine: EngineReport
    verdict: Verdict
    findings: list[Finding]
    ruled_out: list[RuleOutcome]
    problems: list[Problem] = field(default_factory=list)  # the findings grouped (engine/problems.py), best first
    insufficient_data: list[RuleOutcome]
    not_applicable: list[RuleOutcome] = field(default_factory=list)
    suppressed: list[RuleOutcome] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # WARNING / ERROR lines that no line type and no word of the warning vocabulary understood (docs/warnings.md):
    # `line N: vLLM WARNING: message`, the first 20
    warnings_not_understood: list[str] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    errors: list[dict[str, str]] = field(default_factory=list)  # per-host collection errors
    performance: Performance | None = None  # expected vs measured throughput; None where not assessed
    known_issues: list[KnownIssue] = field(default_factory=list)  # advisories that apply or may (docs/advisories.md)


def unread_diagnosis(name: str, error: str) -> Diagnosis:
    """The report of a source that could not be read (a Prometheus instance, a ClickHouse table): inconclusive,
    nothing found, the error kept under `errors` with the source's `name`."""
    from logdoctor import __version__

    return Diagnosis(
        tool={"name": "logdoctor", "version": __version__},
        sources=[],
        engine=EngineReport(name="unknown"),
        verdict=Verdict(healthy=False, kind="inconclusive", summary=f"not read: {error}", missing=[error]),
        findings=[],
        ruled_out=[],
        insufficient_data=[],
        errors=[{"host": name, "error": error}],
    )
