"""The diagnosis pipeline as one function: numbered lines of one deployment in, a Diagnosis out.

Used by `logdoctor diagnose`, `logdoctor diff`, `logdoctor test` and `logdoctor.testing`, so every
entry point runs exactly the same stages:

    lines -> parse.EventStream -> facts.build_profile -> engine.evaluate -> engine.result.Diagnosis

Every input reaches it as a `LineSource`: `local_line_sources` opens files and stdin, `remote_line_sources`
gives what the SSH collector brought back, so `diagnose FILE`, `diagnose HOST` and `diff` parse alike.

A source holding several server starts (a restart appended to one log) is split by `split_runs` once it is read,
from its events' line numbers: `parse_sources` keeps the last start of each source, `parse_each(all_runs=True)`
gives every one (docs/cli.md, "Deployments and runs").
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import TYPE_CHECKING, Any, Literal

from logdoctor import __version__
from logdoctor.engine.advisories import LoadedAdvisory, active_advisories, match_advisories
from logdoctor.engine.deadline import Deadline
from logdoctor.engine.evaluate import evaluate
from logdoctor.engine.result import Diagnosis, EngineReport, Finding, RuleOutcome, SourceReport
from logdoctor.engine.rules import LoadedRule
from logdoctor.engine.suppress import Suppressions
from logdoctor.engine.verdict import decide
from logdoctor.eventlog import EventLog, LineTexts
from logdoctor.events import BenchmarkResult
from logdoctor.facts import Profile, ProfileStream, build_profile
from logdoctor.facts.series import Series
from logdoctor.parse.detect import Detection
from logdoctor.parse.keywords import candidate_keywords
from logdoctor.parse.pipeline import EventStream, SourceStats
from logdoctor.pipeline.pasted import MAX_PASTED_EVENTS, compare_runs, merge_findings
from logdoctor.pipeline.tap import Clues, Run, Tap, banner_key, run_starts
from logdoctor.registry import REGISTRY
from logdoctor.sources.limits import DEFAULT_MAX_SECONDS
from logdoctor.sources.local import LocalSource, ReadLimits, open_local

if TYPE_CHECKING:
    from logdoctor.perf.options import PerfOptions
    from logdoctor.pipeline.parallel import RangeWork

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
    # A local file, which a big one may be parsed from in worker processes instead (logdoctor.pipeline.parallel),
    # and those workers when they were started with the sources (`local_line_sources(..., engine=)`).
    local: LocalSource | None = None
    apart: RangeWork | None = None
    # Told the bytes parsed so far where the lines are not read here (a big file's workers): a progress bar's.
    progress: Callable[[int], None] | None = None


def local_line_sources(
    paths: Sequence[str], limits: ReadLimits | None = None, *, engine: str | Literal[False] | None = False
) -> list[LineSource]:
    """Open local paths (or `-`) under the read caps (docs/security.md); every path is checked before anything
    is read. Given the `engine` they will be parsed for, the first big file's worker processes start at once
    (logdoctor.pipeline.parallel: they parse while the caller loads its rules)."""
    opened = [open_local(p, limits) for p in paths]
    keywords = candidate_keywords()
    out: list[LineSource] = []
    started = False  # engine False: none started here, each when parse_each reaches it
    for source in opened:
        apart = None
        if engine is not False and not started and source.parallel_ranges() is not None:
            from logdoctor.pipeline.parallel import start_in_ranges

            apart = start_in_ranges(source, keywords, engine)
            started = True

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
                local=source,
                apart=apart,
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
    """Everything parsed from the sources of one deployment. The events and line texts are held compressed
    (`EventLog`, `LineTexts`): iterating `events` decodes them again, so a consumer makes one pass where it can."""

    events: EventLog
    stats: list[SourceStats]
    detections: list[Detection]
    texts: dict[str, LineTexts] = field(default_factory=dict)
    # What the report should say about how these lines were chosen (a log split per server start, a side file
    # joined to a deployment): the diagnosis's first warnings.
    notes: list[str] = field(default_factory=list)
    run: Run | None = None  # the server start this is, when its one source holds several
    # What its events say about which deployment it is, gathered as they were read (one source or one run; None
    # once several sources are merged, or where nobody gathered them: `clues_of(events)` then).
    clues: Clues | None = None
    # Its profile, combined as its events were parsed (one source, one server start): `profile_of` finishes it once
    # instead of decoding every event again. None where the events were split or merged, or once used.
    profiling: ProfileStream | None = None
    # The whole source's events, where this is one server start of a short input that holds several (benchmark runs
    # pasted one after another, each an offline `LLM()` start): its pasted runs are compared across the starts.
    pasted_events: EventLog | None = None

    def lookup(self, source: str, line: int) -> str | None:
        texts = self.texts.get(source)
        return None if texts is None else texts.get(line)

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


def _run_of(firsts: Sequence[int], line: int) -> int:
    """The 1-based run a line falls in (`firsts`: each run's first line, ascending, the first being 1)."""
    return max(1, bisect_right(firsts, line))


def _run_parsed(part: Parsed, events: EventLog, run: Run) -> Parsed:
    """One run of a one-source parse: its events, its own counts and its detection (the versions in its lines;
    the header shapes of the engines its events name)."""
    first, last = run.first, run.last
    stat = part.stats[0]
    run_stat = replace(
        stat,
        lines=last - first + 1,
        events=len(events),
        unrecognised=sum(1 for n in stat.unrecognised_lines if first <= n <= last),
        unrecognised_samples=[(n, t) for n, t in stat.unrecognised_samples if first <= n <= last],
        notes=list(stat.notes),
    )
    detection = part.detections[0]
    engines = {e.engine for e in events}
    serving = set(REGISTRY.names("serving"))
    headers = {
        header: count
        for header, count in detection.header_counts.items()
        if (owner := REGISTRY.header_engine(header)) is None or owner not in serving or owner in engines
    }
    run_detection = Detection(
        forced=detection.forced,
        header_counts=headers,
        process_names=dict(detection.process_names),
        first_line={h: n for h, n in detection.first_line.items() if h in headers},
        versions=[v for v in detection.versions if first <= v[2] <= last],
    )
    # The texts are shared, not copied per run: evidence is looked up only for lines of the run's own events.
    return Parsed(events, [run_stat], [run_detection], dict(part.texts), run=run)


def split_runs(
    part: Parsed, *, all_runs: bool = False, starts: list[tuple[int, int | None]] | None = None
) -> list[Parsed]:
    """A one-source parse per server start: every run (`all_runs`) or the last one that got past its start-up
    lines, each with a note that says so. One start: the parse as it is. The runs not asked for are dropped, so
    their events are not kept. `starts`: `run_starts` of its events, where the parse gathered them already."""
    if starts is None:
        starts = run_starts(part.events)
    if len(starts) == 1:
        return [part]
    stat = part.stats[0]
    total = max(stat.lines, max((e.end_line or e.line for e in part.events), default=0))
    firsts = [first for first, _ in starts]
    runs = [
        Run(i + 1, len(starts), first, (firsts[i + 1] - 1) if i + 1 < len(starts) else total, banner)
        for i, (first, banner) in enumerate(starts)
    ]
    if all_runs:
        wanted, skipped = runs, []
    else:
        # A start the log ends right after (its version line, its dump, nothing else yet) has nothing to diagnose:
        # the last start that printed more is the one a user asks about.
        serving = frozenset(REGISTRY.names("serving"))
        got_further = {_run_of(firsts, e.line) for e in part.events if banner_key(e, serving) is None}
        chosen = next((run for run in reversed(runs) if run.index in got_further), runs[-1])
        wanted, skipped = [chosen], runs[chosen.index :]
    buckets: dict[int, tuple[EventLog, Clues]] = {run.index: (EventLog(), Clues()) for run in wanted}
    for event in part.events:
        bucket = buckets.get(_run_of(firsts, event.line))
        if bucket is not None:
            bucket[0].append(event)
            bucket[1].add(event)
    out = []
    whole = part.events if not all_runs and len(part.events) <= MAX_PASTED_EVENTS else None
    for run in wanted:
        events, clues = buckets.pop(run.index)
        parsed = _run_parsed(part, events, run)
        parsed.clues = clues
        parsed.pasted_events = whole
        parsed.notes.append(run_note(stat.name, run, all_runs=all_runs, skipped=skipped))
        out.append(parsed)
    return out


def run_note(name: str, run: Run, *, all_runs: bool, skipped: Sequence[Run] = ()) -> str:
    if all_runs:
        head = " (the log begins inside a start that is not in it)" if run.banner is None else ""
        return f"{name}: server start {run.index} of {run.count}, {run.span()}{head}"
    if not skipped:
        return f"{run.count} server starts in {name}; diagnosed the last ({run.span()}); --all-runs diagnoses every one"
    later = ", ".join(r.span() for r in skipped)
    return (
        f"{run.count} server starts in {name}; diagnosed start {run.index} ({run.span()}): the later one(s) "
        f"({later}) printed only start-up lines; --all-runs diagnoses every one"
    )


# --- parsing ------------------------------------------------------------------------------------------------


def parse_each(sources: Iterable[LineSource], engine: str | None = None, *, all_runs: bool = False) -> Iterator[Parsed]:
    """Parse each source in turn and give it once it is read, split per server start (`split_runs`: the last
    start, or each with `all_runs`); `sources` (and each source's lines) may still be arriving."""
    for source in sources:
        stat = SourceStats(name=source.name, kind=source.kind, host=source.host, path=source.path)
        watch = Tap()  # the server starts and the clues, seen as the events go by: no pass over them later
        apart = _parse_apart(source, engine, stat, watch)  # feeds `watch` from the workers' partials
        if apart is not None:
            events, detection, texts = apart
        else:
            watch = Tap()
            stat = SourceStats(name=source.name, kind=source.kind, host=source.host, path=source.path)
            stream = EventStream(source.name, source.lines, engine=engine, stats=stat, keep_text=True)
            events = EventLog(watch.tap(stream))
            detection = stream.detection
            texts = stream.texts if stream.texts is not None else LineTexts()
        if source.finish is not None:
            source.finish(stat)
        part = Parsed(events, [stat], [detection], {source.name: texts}, clues=watch.clues, profiling=watch.profiling)
        yield from split_runs(part, all_runs=all_runs, starts=watch.starts.starts())


def _parse_apart(
    source: LineSource, engine: str | None, stat: SourceStats, watch: Tap | None = None
) -> tuple[EventLog, Detection, LineTexts] | None:
    """A big local file parsed in worker processes, one byte range each (logdoctor.pipeline.parallel); None where it
    is parsed here, from `source.lines`."""
    if source.apart is not None:
        if source.apart.engine == engine:
            return source.apart.collect(stat, watch, source.progress)
        source.apart.cancel()  # started for another engine: its parse would not be this one
    if source.local is None or source.local.parallel_ranges() is None:
        return None
    from logdoctor.pipeline.parallel import parse_in_ranges

    return parse_in_ranges(source.local, candidate_keywords(), engine, stat, watch, source.progress)


def merge_parsed(parts: Iterable[Parsed]) -> Parsed:
    """Several sources' parses as one deployment's, in the order given."""
    merged: Parsed | None = None
    for part in parts:
        if merged is None:
            merged = part  # the first part's lists grow: one source is never copied
            continue
        merged.events.extend(part.events)
        merged.stats.extend(part.stats)
        merged.detections.extend(part.detections)
        merged.texts.update(part.texts)
        merged.notes.extend(part.notes)
        merged.run = None  # several sources: no one run
        merged.clues = None  # and no one source's clues
        merged.profiling = None  # nor its profile: the deployment's is combined from all their events
    return merged if merged is not None else Parsed(EventLog(), [], [], {})


def parse_sources(sources: Iterable[LineSource], engine: str | None = None) -> Parsed:
    """Parse each source in turn into one deployment; `sources` (and each source's lines) may still be arriving.
    A source holding several server starts gives its last one (`split_runs`)."""
    return merge_parsed(parse_each(sources, engine))


def profile_of(parsed: Parsed, engine: str | None = None) -> Profile:
    forced = engine if engine not in (None, "auto") else None
    profiling, parsed.profiling = parsed.profiling, None  # a profile is finished once; another call combines again
    if profiling is not None:
        return profiling.profile(engine=forced or parsed.engine, version=parsed.version)
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
        if isinstance(value, list):
            count = value.seen if isinstance(value, Series) else len(value)  # a sampled series kept fewer
            value = [*value[:50], f"... {count - 50} more"] if count > 50 else list(value)
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
    advisories: Sequence[LoadedAdvisory] | None = None,
    max_seconds: float = DEFAULT_MAX_SECONDS,
) -> tuple[Diagnosis, Profile]:
    """`advisories`: the known issues to match (None: the built-in set and `--advisories DIR`; docs/advisories.md).
    `max_seconds` (--max-seconds; 0: no limit): past it, the diagnosis stops with InputError (exit 2)."""
    from logdoctor.engine.problems import ROOTS, root_first
    from logdoctor.engine.problems import group as group_problems
    from logdoctor.perf.gate import assess  # the model itself only when a GPU is known

    deadline = Deadline(max_seconds, ", ".join(s.name for s in parsed.stats) or "the input")
    profile = profile_of(parsed, engine)
    findings, outcomes, warnings = evaluate(rules, profile, parsed.lookup, suppressions, today, deadline=deadline)
    deadline.check("matching known issues")
    known, known_issues = match_advisories(
        active_advisories() if advisories is None else advisories, profile, suppressions
    )
    if known:  # ranked with the rules' findings by score (an advisory's: its stated slowdown)
        findings = sorted([*findings, *known], key=lambda f: (-f.score, f.cause, f.rule))
    deadline.check("the expected-performance model")
    findings, performance = assess(findings, profile, rules, perf, engine=profile.engine)  # --gpu, effects
    deadline.check("comparing pasted runs")
    # Several runs pasted into one input (two commands and their benchmark results or stats lines): their controlled
    # pair, compared. Only an input that measured something, and a short one: the events are decoded again to split
    # them.
    pasted: list[Finding] = []
    pasted_notes: list[str] = []
    measured = profile.has("bench.output_throughput") or profile.has("throughput.generation")
    paste = parsed.pasted_events if parsed.pasted_events is not None else parsed.events
    if len(paste) <= MAX_PASTED_EVENTS and (
        measured or any(isinstance(e, BenchmarkResult) for e in paste)  # a latency alone measures too
    ):
        focus = (parsed.run.first, parsed.run.last) if parsed.pasted_events is not None and parsed.run else None
        pasted, pasted_notes = compare_runs(
            paste, profile.engine, profile.version, rules, parsed.lookup, suppressions, today, focus
        )
        findings = merge_findings(findings, pasted) if pasted else findings
    # a problem's root cause ahead of its consequence (low acceptance is why speculation loses, or the cost of k is)
    roots = {fact: (bool(profile.value(fact)), profile.facts[fact].origin) for fact in ROOTS if profile.has(fact)}
    findings = root_first(findings, roots)
    findings, problems = group_problems(findings)  # rule hits that share one mechanism are one problem

    def pick(kind: str) -> list[RuleOutcome]:
        return [o for o in outcomes if o.outcome == kind]

    detection: list[str] = []
    for stat, det in zip(parsed.stats, parsed.detections, strict=True):
        detection.extend(f"{stat.name}: {reason}" for reason in det.reasons())
    reports = [source_report(s) for s in parsed.stats]
    facts = _fact_values(profile)
    warnings = [
        *parsed.notes,
        *pasted_notes,
        *(f"{stat.name}: {note}" for stat in parsed.stats for note in stat.notes),
        *warnings,
    ]
    diagnosis = Diagnosis(
        tool={"name": "logdoctor", "version": __version__},
        sources=reports,
        engine=EngineReport(name=profile.engine, version=profile.version, detection=detection),
        verdict=decide(findings, outcomes, reports, profile.engine, facts, performance=performance),
        findings=findings,
        problems=problems,
        ruled_out=pick("ruled_out"),
        insufficient_data=pick("insufficient_data"),
        not_applicable=pick("not_applicable"),
        suppressed=pick("suppressed"),
        warnings=warnings,
        warnings_not_understood=[str(w) for w in profile.value("warnings.not_understood") or []],
        facts=facts,
        performance=performance,
        known_issues=known_issues,
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
