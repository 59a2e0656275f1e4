"""Fact partials: what one byte range of a log gives the facts, summed up by the parse worker that read it, so the
parent merges a few numbers and lists a range instead of decoding and combining every event again.

A long serving log is almost all periodic lines: the stats line and the spec-decode line of every interval
(75,994 of the 1 GiB bench log's 75,994 events but 94). A range's events are cut into segments, in order:

    [StartupConfig] [KVCache] ... [Stretch: 612 stats and spec-decode lines] [PerfWarning] [Stretch: 1,301] ...

A `Stretch` is a run of periodic events (`SchedulerStats`, and `SpecDecodeStats` of one interval) summed up as the
worker parses them: counts, value lists in order, the first and last events where a combiner keeps one. Every other
event is kept whole and replayed in the parent through the combiners, as a one-process parse offers it. `absorb`
merges a stretch into the combiners that read periodic events, leaving each exactly as offering it the stretch's
events one at a time would:

- sums are summed in the parent, in order, from the value lists (a float sum depends on its order: a range's
  sum added to the one before it would differ in the last bits);
- series are appended in order, so their bounded samples (facts/series.py) are those of one process;
- what a combiner keeps from the first events it meets (the first stats line of a process, the held warm-up
  intervals, the first three Decode batch lines without graphs, the first line of each source) travels as those
  events, which the parent offers to the combiner's own `add`, and so does the last line with preemptions.

`supported` says whether every combiner that reads periodic events has an absorber here; where one does not (a new
combiner), the parent decodes and combines every event as before. tests/pipeline/test_parallel_facts.py compares the
diagnosis of every fixture log parsed by workers with its one-process one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import reduce
from math import isfinite
from operator import add
from typing import TYPE_CHECKING, Any

from logdoctor.events import EventBase, SchedulerStats, SpecDecodeStats
from logdoctor.facts.combiners.cuda_graphs import CudaGraphs
from logdoctor.facts.combiners.derived import Derived, Draining, queue_entry
from logdoctor.facts.combiners.failures import Failures
from logdoctor.facts.combiners.identity import Identity
from logdoctor.facts.combiners.scheduling import Scheduling
from logdoctor.facts.combiners.speculative import Speculation, interval_reading
from logdoctor.facts.combiners.stats import Stats, _append_steady
from logdoctor.facts.combiners.stats import _Process as StatsProcess
from logdoctor.facts.profile import ProfileBuilder
from logdoctor.facts.series import SERIES_CAP
from logdoctor.facts.values import Ref, ref

if TYPE_CHECKING:
    from logdoctor.facts.combiner import Combining

ProcessKey = tuple[str, int | None]

# A range keeps at most this many whole events and listed values for the parent; past either, it gives up its
# partials (the parent then combines its events one at a time, as before): a worker's memory stays bounded.
MAX_KEPT_EVENTS = 1024  # a few MB of event objects
# ~32 MB of listed floats at most. An event-dense 16 MiB range (55,000 stats and spec-decode lines) lists ~280,000:
# under a lower cap such ranges gave up their partials and the parent decoded and combined every event itself.
MAX_VALUES = 1 << 20
_STEADY_HEAD = 4  # the steady-throughput warm-up rule looks at a process's first four active intervals
_PER_REQUEST_REFS = 7  # refs of the first one-request intervals: up to four may be held or dropped, three kept


def periodic(event: EventBase) -> bool:
    """A stats line or an interval's spec-decode line: summed up in a stretch rather than kept whole."""
    kind = type(event)
    return kind is SchedulerStats or (kind is SpecDecodeStats and event.interval)  # type: ignore[attr-defined]


@dataclass
class _Process:
    """One process's stats lines of a stretch (combiners/stats.py `_Process`)."""

    intervals: int = 0
    first_decode: SchedulerStats | None = None
    steady: list[float] = field(default_factory=list)  # generation tok/s of the intervals that generated
    steady_batch: list[float] = field(default_factory=list)  # each of those: its running requests (0: none or unsaid)
    one_request: list[bool] = field(default_factory=list)  # each of those: one request running, none waiting
    steady_head: list[SchedulerStats] = field(default_factory=list)  # the first _STEADY_HEAD of them
    one_request_refs: list[tuple[int, Ref]] = field(default_factory=list)  # (index in `steady`, line), the first few
    active: list[float] = field(default_factory=list)  # generation tok/s of the decode intervals that name one
    series: dict[str, tuple[list[float], list[Ref]]] = field(default_factory=dict)  # values, their first 3 lines


@dataclass
class _Spec:
    """The interval spec-decode lines of a stretch (combiners/speculative.py), read as the combiner reads them
    (`interval_reading`): the first k a line's rate implied, the acceptance series as columns (values in order, the
    first three lines; the combiner's series take them as its `append` of each would), the origin."""

    first: SpecDecodeStats
    last: SpecDecodeStats
    k_from_rate: tuple[float, SpecDecodeStats, str] | None = None
    interval: dict[str, tuple[list[float], list[Ref], str]] = field(default_factory=dict)
    first_k: SpecDecodeStats | None = None  # the first that names the number of speculative tokens
    positions: list[list[float]] = field(default_factory=list)  # per position, the rates in order


@dataclass
class Stretch:
    """A run of periodic events summed up (see the module docstring)."""

    first: EventBase
    events: int = 0
    engines: dict[str, int] = field(default_factory=dict)  # events naming each engine, in order of first mention
    host: str | None = None  # the first host a process header names
    last: dict[str, EventBase] = field(default_factory=dict)  # each source's last event (by line)
    sources: dict[str, None] = field(default_factory=dict)  # sources with stats or spec-decode lines
    first_stats: dict[str, SchedulerStats] = field(default_factory=dict)  # each source's first stats line
    processes: dict[ProcessKey, _Process] = field(default_factory=dict)
    spec_processes: dict[ProcessKey, None] = field(default_factory=dict)
    prompt: list[float] = field(default_factory=list)  # vLLM's prompt and generation tok/s, paired
    generated: list[float] = field(default_factory=list)
    decode_lines: int = 0  # SGLang Decode batch lines, those without CUDA graphs, and the first three of those
    eager_lines: int = 0
    eager_first: list[SchedulerStats] = field(default_factory=list)
    preemptions: int = 0
    last_preempted: SchedulerStats | None = None
    running: list[float] = field(default_factory=list)  # combiners/derived.py `Served`
    peak_running: int = 0
    slots: list[float] = field(default_factory=list)
    first_slots: SchedulerStats | None = None
    counted: int = 0  # stats lines that give both the running and the waiting count
    waiting_by_running: dict[int, tuple[int, SchedulerStats]] = field(default_factory=dict)  # of those that wait
    queue_shares: list[float] = field(default_factory=list)  # waiting / (running + waiting) of those that wait
    first_queue: SchedulerStats | None = None
    queue: Draining = field(default_factory=Draining)  # sched.queue_draining
    spec: _Spec | None = None
    values: int = 0  # values listed, for the cap


class RangeFacts:
    """A worker's partials of its range: `tap` its events on their way into its EventLog, then `segments()`."""

    def __init__(self) -> None:
        self._segments: list[Stretch | EventBase] = []
        self._stretch: Stretch | None = None
        self._kept = 0
        self._values = 0
        self._failed = False

    def tap(self, events: Iterable[EventBase]) -> Iterator[EventBase]:
        for event in events:
            if not self._failed:
                self.add(event)
            yield event

    def add(self, event: EventBase) -> None:
        kind = type(event)  # `periodic`, inline: every event of a range comes here
        if kind is SchedulerStats or (kind is SpecDecodeStats and event.interval):  # type: ignore[attr-defined]
            stretch = self._stretch
            if stretch is None:
                stretch = self._stretch = Stretch(first=event)
                self._segments.append(stretch)
            _summarise(stretch, event)
            if stretch.events % 1024 == 0 and self._values + stretch.values > MAX_VALUES:
                self._give_up()
            return
        if self._stretch is not None:
            self._values += self._stretch.values
        self._stretch = None
        self._kept += 1
        self._segments.append(event)
        if self._kept > MAX_KEPT_EVENTS:
            self._give_up()

    def _give_up(self) -> None:
        self._failed = True
        self._segments = []
        self._stretch = None

    def segments(self) -> list[Stretch | EventBase] | None:
        """The range's segments in order, or None where it gave up (too many kept events or listed values, or a
        series past its cap within the range)."""
        if self._failed:
            return None
        values = 0
        for segment in self._segments:
            if isinstance(segment, Stretch):
                values += segment.values
                spec = segment.spec
                if spec is not None and any(len(column) >= SERIES_CAP for column, _, _ in spec.interval.values()):
                    return None  # a series past its cap within the range: the parent samples it
        return None if values > MAX_VALUES else self._segments


def _series(series: dict[str, tuple[list[float], list[Ref]]], name: str, event: EventBase) -> list[float]:
    """A process's series `name` (its values, to append to), with `event` among its first three lines."""
    listed = series.get(name)
    if listed is None:  # not setdefault: it would build two lists on every call
        listed = series[name] = ([], [])
    if len(listed[1]) < 3:
        listed[1].append(ref(event))
    return listed[0]


def _summarise(stretch: Stretch, ev: EventBase) -> None:
    """One periodic event into its stretch: what each combiner's `add` reads of it (see the absorbers below)."""
    stretch.events += 1
    engine = ev.engine
    engines = stretch.engines
    engines[engine] = engines.get(engine, 0) + 1
    process = ev.process
    if process is not None and stretch.host is None and process.host:
        stretch.host = process.host
    source = ev.source
    lasts = stretch.last
    last = lasts.get(source)
    if last is None or ev.line >= last.line:
        lasts[source] = ev
    stretch.sources[source] = None
    key = (source, process.pid if process is not None else None)
    if type(ev) is SpecDecodeStats:  # a periodic event is of exactly one of the two types
        stretch.spec_processes[key] = None
        _spec(stretch, ev)
        return
    assert isinstance(ev, SchedulerStats)
    _stats(stretch, ev, source, key)


def _stats(stretch: Stretch, ev: SchedulerStats, source: str, key: ProcessKey) -> None:
    # Every field read once, and the series appended in place: the stats line of a busy server comes every few
    # decode steps, so what this costs is most of what summing a range's facts costs.
    stretch.first_stats.setdefault(source, ev)
    part = stretch.processes.get(key)
    if part is None:
        part = stretch.processes[key] = _Process()
    part.intervals += 1
    fmt = ev.format
    decode = fmt != "sglang-prefill"
    gen, running, usage = ev.generation_throughput, ev.running, ev.kv_cache_usage
    waiting = ev.waiting
    if waiting is None:
        waiting = ev.queue
    added = 0
    if decode:
        part.first_decode = part.first_decode or ev
        if (gen or 0) > 0:
            assert gen is not None
            index = len(part.steady)
            part.steady.append(gen)
            part.steady_batch.append(float(running or 0))
            one = running == 1 and (ev.waiting or 0) == 0
            part.one_request.append(one)
            if len(part.steady_head) < _STEADY_HEAD:
                part.steady_head.append(ev)
            if one and len(part.one_request_refs) < _PER_REQUEST_REFS:
                part.one_request_refs.append((index, ref(ev)))
            added += 3
        if gen:
            part.active.append(gen)
            added += 1
    series = part.series
    if usage is not None:
        _series(series, "kv.usage", ev).append(usage)
        added += 1
    cpu_usage = ev.cpu_kv_cache_usage
    if cpu_usage is not None:
        _series(series, "kv.cpu_usage", ev).append(cpu_usage)
        added += 1
    if running is not None and decode:
        _series(series, "sched.running", ev).append(float(running))
        added += 1
    if waiting is not None:
        _series(series, "sched.waiting", ev).append(float(waiting))
        added += 1
    swapped = ev.swapped
    if swapped is not None:
        _series(series, "sched.swapped", ev).append(float(swapped))
        added += 1
    if ev.prompt_throughput is not None and gen is not None and fmt.startswith("vllm"):
        stretch.prompt.append(ev.prompt_throughput)
        stretch.generated.append(gen)
        added += 2
    if fmt == "sglang-decode":
        stretch.decode_lines += 1
        if ev.cuda_graph is False:
            stretch.eager_lines += 1
            if len(stretch.eager_first) < 3:
                stretch.eager_first.append(ev)
    preemptions = ev.preemptions
    if preemptions:
        stretch.preemptions += preemptions
        stretch.last_preempted = ev
    if running is not None and waiting:
        stretch.queue_shares.append(waiting / (running + waiting))
        stretch.first_queue = stretch.first_queue or ev
        stretch.queue.add(queue_entry(ev, running, waiting))
        added += 1
    if running is not None and waiting is not None:
        stretch.counted += 1
        if waiting > 0:
            seen = stretch.waiting_by_running.get(running)
            stretch.waiting_by_running[running] = (seen[0] + 1, seen[1]) if seen else (1, ev)
    if running:
        stretch.running.append(float(running))
        if running > stretch.peak_running:
            stretch.peak_running = running
        added += 1
    if waiting and running and usage and usage > 0:
        stretch.slots.append((1.0 - min(usage, 1.0)) * running / usage)
        stretch.first_slots = stretch.first_slots or ev
        added += 1
    stretch.values += added


def _column(spec: _Spec, name: str, value: float, ev: SpecDecodeStats) -> None:
    column = spec.interval.get(name)
    if column is None:
        column = spec.interval[name] = ([], [], "spec-decode metrics")
    column[0].append(value)
    if len(column[1]) < 3:
        column[1].append(ref(ev))


def _spec(stretch: Stretch, ev: SpecDecodeStats) -> None:
    spec = stretch.spec
    if spec is None:
        spec = stretch.spec = _Spec(first=ev, last=ev)
    length, rate, k = interval_reading(ev)  # the combiner's own reading (SGLang's rate recomputed, k from the rate)
    if k is not None and spec.k_from_rate is None:
        spec.k_from_rate = (k[0], ev, k[1])
    # What the combiner's ProfileBuilder.append keeps of each: no None, no NaN or infinity.
    if length is not None and (type(length) is not float or isfinite(length)):
        _column(spec, "spec.acceptance_length", length, ev)
    if rate is not None and (type(rate) is not float or isfinite(rate)):
        _column(spec, "spec.acceptance_rate", rate, ev)
    spec.last = ev
    if ev.num_speculative_tokens and spec.first_k is None:
        spec.first_k = ev
    stretch.values += 2
    positions = ev.per_position_acceptance
    if positions:
        lists = spec.positions
        while len(lists) < len(positions):
            lists.append([])
        for i, rate in enumerate(positions):
            lists[i].append(rate)
        stretch.values += len(positions)


# --- the parent: a stretch merged into the combiners ------------------------------------------------------------


def supported(combiners: Sequence[Combining]) -> bool:
    """Whether `absorb` can stand for offering a stretch's events one by one: every combiner that reads a periodic
    event type has an absorber here, and keeps no state its absorber does not know (`_KNOWN`)."""
    return all(_known(c) if type(c) in _ABSORBERS else not _reads_periodic(c) for c in combiners)


# The state each absorber knows of its combiner: the combiner's attributes, and those of the helpers it keeps. A
# combiner that keeps anything else (a new running count, say) may read the periodic events in a way its absorber
# does not repeat: it is not absorbed (its events are offered one by one, slower, never different) until this
# module learns it (tests/facts/test_partial.py fails until then).
_KNOWN: dict[type[Any], frozenset[str]] = {
    Identity: frozenset({"b", "serving", "voters", "votes", "versions"}),
    Speculation: frozenset(
        {"b", "first", "interval", "k_from_rate", "cumulative", "position_sums", "position_counts", "benchmarked"}
    ),
    Stats: frozenset({"b", "processes", "spec_pids", "ratio"}),
    CudaGraphs: frozenset({"b", "decode_lines", "eager_decode_lines", "eager_examples"}),
    Failures: frozenset({"b", "failures", "warnings", "serving_sources", "starting_sources"}),
    Scheduling: frozenset({"b", "preemptions"}),
    Derived: frozenset({"b", "events", "served", "last"}),
}
_KNOWN_PROCESS = frozenset({"series", "intervals", "steady", "active", "first_decode"})
_KNOWN_STEADY = frozenset({"held", "streaming"})
_KNOWN_RATIO = frozenset({"pairs", "prompt", "generated"})
_KNOWN_SERVED = frozenset({"sources", "slots", "first_slots", "running", "peak_running"})
_SERVED_WAITING = frozenset(
    {"counted", "waiting_by_running", "queue_shares", "first_queue", "queue"}
)  # present in trees that derive the cap's share and the queue's


def _known(combiner: Combining) -> bool:
    if set(vars(combiner)) != _KNOWN[type(combiner)]:
        return False
    if isinstance(combiner, Stats):
        process = StatsProcess()
        return (
            set(vars(process)) == _KNOWN_PROCESS
            and set(vars(process.steady)) == _KNOWN_STEADY
            and set(vars(combiner.ratio)) == _KNOWN_RATIO
        )
    if isinstance(combiner, Derived):
        return set(vars(combiner.served)) in (_KNOWN_SERVED, _KNOWN_SERVED | _SERVED_WAITING)
    return True


def _reads_periodic(combiner: Combining) -> bool:
    return any(issubclass(kind, combiner.reads) for kind in (SchedulerStats, SpecDecodeStats))


def absorb(combiners: Sequence[Combining], stretch: Stretch) -> None:
    """Merge a stretch into the combiners (in their order), as offering them its events in order would."""
    absorbers = _ABSORBERS
    for combiner in combiners:
        absorber = absorbers.get(type(combiner))
        if absorber is not None:
            absorber(combiner, stretch)


def _extend(b: ProfileBuilder, name: str, values: Sequence[float], refs: Sequence[Ref], origin: str) -> None:
    b.extend(name, values, refs, origin)


def _absorb_identity(c: Any, s: Stretch) -> None:
    voters, votes = c.voters, c.votes
    for engine, count in s.engines.items():
        if engine in voters:
            votes[engine] = votes.get(engine, 0) + count


def _absorb_speculation(c: Any, s: Stretch) -> None:
    spec = s.spec
    if spec is None:
        return
    c.first = c.first or spec.first
    c.k_from_rate = c.k_from_rate or spec.k_from_rate
    for name, (values, refs, origin) in spec.interval.items():
        _extend(c.interval, name, values, refs, origin)
    b = c.b
    first_k = spec.first_k
    if first_k is not None and first_k.num_speculative_tokens:
        b.set("spec.num_tokens", float(first_k.num_speculative_tokens), first_k, "spec-decode metrics", keep_first=True)
    b.set("spec.enabled", True, spec.last, "spec-decode metrics")
    sums, counts = c.position_sums, c.position_counts
    missing = len(spec.positions) - len(sums)
    if missing > 0:
        sums.extend([0.0] * missing)
        counts.extend([0] * missing)
    for i, rates in enumerate(spec.positions):
        sums[i] = reduce(add, rates, sums[i])
        counts[i] += len(rates)


def _absorb_stats(c: Any, s: Stretch) -> None:
    for key, part in s.processes.items():
        process = c.processes.get(key)
        if process is None:
            process = c.processes[key] = StatsProcess()
        process.intervals += part.intervals
        process.first_decode = process.first_decode or part.first_decode
        _steady(process, part)
        process.active.extend(part.active)
        for name, (values, refs) in part.series.items():
            _extend(process.series, name, values, refs, "stats lines")
    c.spec_pids.update(s.spec_processes)
    if s.prompt:
        ratio = c.ratio
        ratio.pairs += len(s.prompt)
        ratio.prompt = reduce(add, s.prompt, ratio.prompt)
        ratio.generated = reduce(add, s.generated, ratio.generated)


def _steady(process: Any, part: _Process) -> None:
    """The steady intervals of a stretch: the first ones through the combiner's own warm-up rule while it still
    holds intervals back, the rest appended as they were listed."""
    if not part.steady:
        return
    steady, start = process.steady, 0
    if not steady.streaming:
        head = part.steady_head[: _STEADY_HEAD - len(steady.held)]
        for event in head:
            for kept in steady.add(event):
                _append_steady(process.series, kept)
        start = len(head)
        if not steady.streaming:
            return  # every steady interval of the stretch is held
    rest = part.steady[start:]
    if not rest:
        return
    b = process.series
    head_refs = [ref(e) for e in part.steady_head[start : start + 3]]
    _extend(b, "throughput.generation", rest, head_refs, "stats lines")
    _extend(b, "throughput.batch", part.steady_batch[start:], head_refs, "stats lines")
    one = [v for v, single in zip(rest, part.one_request[start:], strict=True) if single]
    if one:
        refs = [r for i, r in part.one_request_refs if i >= start][:3]
        _extend(b, "throughput.per_request", one, refs, "stats lines with one running request")


def _absorb_cuda_graphs(c: Any, s: Stretch) -> None:
    first = s.eager_first
    c.decode_lines += s.decode_lines - len(first)
    c.eager_decode_lines += s.eager_lines - len(first)
    for event in first:  # counted again by the combiner, which keeps them as its examples
        c.add(event)


def _absorb_failures(c: Any, s: Stretch) -> None:
    for event in s.first_stats.values():  # a source's first stats line: serving began (later ones change nothing)
        c.add(event)


def _absorb_scheduling(c: Any, s: Stretch) -> None:
    last = s.last_preempted
    if last is not None:
        assert last.preemptions is not None
        c.preemptions += s.preemptions - last.preemptions
        c.add(last)  # adds its own count and sets the fact from its line, as the last such line does


def _absorb_derived(c: Any, s: Stretch) -> None:
    lasts = c.last
    for source, event in s.last.items():
        last = lasts.get(source)
        if last is None or event.line >= last.line:
            lasts[source] = event
    served = c.served
    served.sources.update(s.sources)
    served.running.extend(s.running)
    served.peak_running = max(served.peak_running, s.peak_running)
    served.slots.extend(s.slots)
    served.first_slots = served.first_slots or s.first_slots
    if hasattr(served, "counted"):  # the intervals waiting at the running cap (sched.waiting_at_cap_share)
        served.counted += s.counted
        by_running = served.waiting_by_running
        for running, (count, first) in s.waiting_by_running.items():
            seen = by_running.get(running)
            by_running[running] = (seen[0] + count, seen[1]) if seen else (count, first)
        served.queue_shares.extend(s.queue_shares)
        served.first_queue = served.first_queue or s.first_queue
        served.queue.extend(s.queue)


_ABSORBERS: dict[type[Any], Any] = {
    Identity: _absorb_identity,
    Speculation: _absorb_speculation,
    Stats: _absorb_stats,
    CudaGraphs: _absorb_cuda_graphs,
    Failures: _absorb_failures,
    Scheduling: _absorb_scheduling,
    Derived: _absorb_derived,
}
