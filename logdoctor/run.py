"""The diagnosis pipeline as one function: numbered lines of one deployment in, a Diagnosis out.

Used by `logdoctor diagnose`, `logdoctor diff`, `logdoctor test` and `logdoctor.testing`, so every
entry point runs exactly the same stages:

    lines -> parse.EventStream -> facts.build_profile -> engine.evaluate -> engine.result.Diagnosis

Every input reaches it as a `LineSource`: `local_line_sources` opens files and stdin, `remote_line_sources`
gives what the SSH collector brought back, so `diagnose FILE`, `diagnose HOST` and `diff` parse alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from logdoctor import __version__
from logdoctor.engine.evaluate import evaluate
from logdoctor.engine.result import Diagnosis, EngineReport, RuleOutcome, SourceReport
from logdoctor.engine.rules import LoadedRule
from logdoctor.engine.suppress import Suppressions
from logdoctor.engine.verdict import decide
from logdoctor.events import EventBase
from logdoctor.facts import Profile, build_profile
from logdoctor.parse.detect import Detection
from logdoctor.parse.pipeline import EventStream, SourceStats, candidate_keywords
from logdoctor.registry import REGISTRY
from logdoctor.sources.local import LocalSource, ReadLimits, open_local

if TYPE_CHECKING:
    from logdoctor.perf.assess import PerfOptions

    # The SSH collector (paramiko) costs start-up time that `diagnose FILE` should not pay.
    from logdoctor.sources.ssh import HostCollection, RemoteSource


@dataclass
class LineSource:
    """One input of a deployment: a name and its numbered lines (already prefiltered or not)."""

    name: str
    lines: Iterable[tuple[int, str]]
    kind: str = "file"
    host: str | None = None
    path: str | None = None
    # Called after the lines are consumed, to fill in what only the reader knows (bytes, total lines).
    finish: Callable[[SourceStats], None] | None = None


def local_line_sources(paths: Sequence[str], limits: ReadLimits | None = None) -> list[LineSource]:
    """Open local paths (or `-`) under the read caps (docs/security.md); every path is checked before anything
    is read."""
    opened = [open_local(p, limits) for p in paths]
    keywords = candidate_keywords()
    out: list[LineSource] = []
    for source in opened:

        def finish(stat: SourceStats, source: LocalSource = source) -> None:
            stat.bytes_read = source.bytes_read
            stat.prefiltered = source.prefiltered
            stat.notes = list(source.notes)
            if source.prefiltered and source.total_lines is not None:
                stat.lines = source.total_lines

        out.append(
            LineSource(
                name=source.name,
                lines=source.lines(keywords),
                kind=source.kind,
                path=None if source.kind == "stdin" else source.path,
                finish=finish,
            )
        )
    return out


def remote_line_sources(collection: HostCollection, *, live: bool = False) -> Iterator[LineSource]:
    """The collected sources as parser inputs; `live`: as they arrive (blocks until the host is done)."""
    for source in collection.feed if live else list(collection.sources):

        def finish(stat: SourceStats, src: RemoteSource = source) -> None:
            stat.bytes_read = src.bytes_read
            stat.bytes_transferred = src.bytes_transferred
            stat.prefiltered = src.filtered

        yield LineSource(
            name=source.name,
            lines=source.feed,
            kind=source.kind,
            host=source.host,
            path=source.path,
            finish=finish,
        )


@dataclass
class Parsed:
    """Everything parsed from the sources of one deployment."""

    events: list[EventBase]
    stats: list[SourceStats]
    detections: list[Detection]
    texts: dict[str, dict[int, str]] = field(default_factory=dict)

    def lookup(self, source: str, line: int) -> str | None:
        return self.texts.get(source, {}).get(line)

    @property
    def engine(self) -> str:
        serving_names = REGISTRY.names("serving")
        serving = [d.engine for d in self.detections if d.engine in serving_names]
        if serving:
            return serving[0]
        others = [d.engine for d in self.detections if d.engine != "unknown"]
        return others[0] if others else "unknown"

    @property
    def version(self) -> str | None:
        for d in self.detections:
            if d.engine == self.engine and d.version:
                return d.version
        return None


def parse_sources(sources: Iterable[LineSource], engine: str | None = None) -> Parsed:
    """Parse each source in turn; `sources` (and each source's lines) may still be arriving."""
    events: list[EventBase] = []
    stats: list[SourceStats] = []
    detections: list[Detection] = []
    texts: dict[str, dict[int, str]] = {}
    for source in sources:
        stat = SourceStats(name=source.name, kind=source.kind, host=source.host, path=source.path)
        stream = EventStream(source.name, source.lines, engine=engine, stats=stat, keep_text=True)
        events.extend(stream)
        if source.finish is not None:
            source.finish(stat)
        stats.append(stat)
        detections.append(stream.detection)
        texts[source.name] = stream.texts or {}
    return Parsed(events, stats, detections, texts)


def profile_of(parsed: Parsed, engine: str | None = None) -> Profile:
    forced = engine if engine not in (None, "auto") else None
    return build_profile(parsed.events, engine=forced or parsed.engine, version=parsed.version)


def source_report(stat: SourceStats) -> SourceReport:
    return SourceReport(
        name=stat.name,
        kind=stat.kind,
        bytes_read=stat.bytes_read,
        lines=stat.lines,
        events=stat.events,
        unrecognised=stat.unrecognised,
        prefiltered=stat.prefiltered,
        host=stat.host,
        path=stat.path,
        bytes_transferred=stat.bytes_transferred,
    )


def _fact_values(profile: Profile) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in sorted(profile.facts):
        value = profile.facts[name].value
        if isinstance(value, list) and len(value) > 50:
            value = [*value[:50], f"... {len(value) - 50} more"]
        out[name] = value
    return out


def diagnose_parsed(
    parsed: Parsed,
    rules: Sequence[LoadedRule],
    *,
    engine: str | None = None,
    suppressions: Suppressions | None = None,
    today: date | None = None,
    perf: PerfOptions | None = None,
) -> tuple[Diagnosis, Profile]:
    from logdoctor.perf.assess import assess

    profile = profile_of(parsed, engine)
    findings, outcomes, warnings = evaluate(rules, profile, parsed.lookup, suppressions, today)
    findings, performance = assess(findings, profile, rules, perf, engine=profile.engine)  # --gpu, effects

    def pick(kind: str) -> list[RuleOutcome]:
        return [o for o in outcomes if o.outcome == kind]

    detection: list[str] = []
    for stat, det in zip(parsed.stats, parsed.detections, strict=True):
        detection.extend(f"{stat.name}: {reason}" for reason in det.reasons())
    reports = [source_report(s) for s in parsed.stats]
    facts = _fact_values(profile)
    warnings = [*(f"{stat.name}: {note}" for stat in parsed.stats for note in stat.notes), *warnings]
    diagnosis = Diagnosis(
        tool={"name": "logdoctor", "version": __version__},
        sources=reports,
        engine=EngineReport(name=profile.engine, version=profile.version, detection=detection),
        verdict=decide(findings, outcomes, reports, profile.engine, facts, performance=performance),
        findings=findings,
        ruled_out=pick("ruled_out"),
        insufficient_data=pick("insufficient_data"),
        not_applicable=pick("not_applicable"),
        suppressed=pick("suppressed"),
        warnings=warnings,
        facts=facts,
        performance=performance,
    )
    return diagnosis, profile


def diagnose_sources(
    sources: Iterable[LineSource],
    rules: Sequence[LoadedRule],
    *,
    engine: str | None = None,
    suppressions: Suppressions | None = None,
) -> Diagnosis:
    parsed = parse_sources(sources, engine)
    diagnosis, _ = diagnose_parsed(parsed, rules, engine=engine, suppressions=suppressions)
    return diagnosis
