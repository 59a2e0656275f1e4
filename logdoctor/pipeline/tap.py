"""What a source's events say as they stream by, gathered once on their way into its EventLog: the server starts
(a restart appended to one log: `RunStarts`, `run_starts`), the deployment clues (`Clues`: engine votes, host,
model, node ranks) and the profile (facts.ProfileStream). `Tap` does all three; the one-process parse (run.py)
and the parse workers' merge (parallel.py) feed it alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from logdoctor.events import EngineFailure, EngineVersion, EventBase, ModelInfo, StartupConfig
from logdoctor.facts import ProfileStream
from logdoctor.registry import REGISTRY

# --- one log, several server starts ---------------------------------------------------------------------------
# What a server prints as it starts (catalogue §2, docs/formats.md): vLLM's version line or logo, its
# `non-default args` / `args: Namespace(...)` dump and the engine-init line; SGLang's `server_args=` dump.
_BANNER_VERSIONS = frozenset({"version line", "logo", "engine init"})
BANNER_CONFIGS = frozenset({"non-default args", "namespace", "server_args", "engine init"})
# Lines of a server that is up: served traffic (the periodic stats lines), preemptions, failures. A banner after
# served traffic is a new start; the configuration lines printed just before a banner (vLLM's platform detection,
# SGLang's attention-backend notice) belong to the start that follows them, not to the traffic before.
_SERVED = frozenset({"scheduler_stats", "spec_decode_stats"})
_RUNTIME = _SERVED | {"preemption", "engine_failure"}
# Lines a start prints after its banner, on its way to serving (weights loaded, the KV cache sized, CUDA graphs
# captured) or once it has measured (an offline run's result): never the configuration of a start to come.
_PROGRESS = frozenset({"compile_time", "kv_cache", "cuda_graph", "benchmark_result"})


@dataclass(frozen=True)
class Run:
    """One server start in a source: lines `first`..`last`; `banner` is the line of its first start-up line
    (None: the source begins inside a run whose start is not in it)."""

    index: int  # 1-based
    count: int
    first: int
    last: int
    banner: int | None

    def span(self) -> str:
        return f"lines {self.first:,}-{self.last:,}"


def _ended_run(event: EventBase) -> bool:
    return isinstance(event, EngineFailure) and event.kind not in (
        "shutdown",
        "shutdown-requested",
        "shm-broadcast-wait",
        "request-error",
        "reported-hang",  # the reporter's words, wherever the prose stands: no line of a run's end
    )


def banner_key(event: EventBase, serving: frozenset[str]) -> tuple[str, str] | None:
    """Which start-up line this is: the same one twice is a second start. The engine-init line is printed by each
    data-parallel engine core, so it is told apart by process; the others are printed once a start."""
    if event.engine not in serving:
        return None
    if isinstance(event, EngineVersion) and event.origin in _BANNER_VERSIONS and event.version:
        kind = f"version {event.origin}"
    elif isinstance(event, StartupConfig) and event.origin in BANNER_CONFIGS:
        kind = f"config {event.origin}"
    else:
        return None
    proc = event.process
    if event.origin != "engine init" or proc is None:
        return (kind, "")
    return (kind, f"{proc.name or proc.role} {proc.dp_rank} {proc.pp_rank} {proc.tp_rank}")


class RunStarts:
    """`run_starts` as a source's events stream by (`add` each, in order; `starts()` at any point), so the parse
    that reads them finds the server starts without another pass over the stored events.

    A start-up line begins a new run when the run so far served traffic (a stats line) or died (a failure line),
    already printed that same start-up line (a restart that never served), or printed another version or another
    engine's start-up lines. The
    configuration lines printed between the last traffic (or the last line of a start's own progress: weights
    loaded, the KV cache sized, graphs captured, an offline run's result) and the new banner go with the new run;
    lines before the first banner stay with the first run."""

    def __init__(self) -> None:
        self._serving = frozenset(REGISTRY.names("serving"))
        self._starts: list[tuple[int, int | None]] = []
        self._keys: set[tuple[str, str]] = set()
        self._version: str | None = None
        self._banner_engine: str | None = None
        self._served = self._seen_any = False
        self._preamble: int | None = None  # first line of the configuration lines since the last runtime or banner
        self._first_banner: int | None = None

    def add(self, event: EventBase) -> None:
        key = banner_key(event, self._serving)
        if key is not None:
            new_version = (
                isinstance(event, EngineVersion) and self._version is not None and event.version != self._version
            )
            other_engine = self._banner_engine is not None and event.engine != self._banner_engine
            if self._seen_any and (self._served or key in self._keys or new_version or other_engine):
                preamble = self._preamble
                self._starts.append((event.line if preamble is None else min(preamble, event.line), event.line))
                self._keys.clear()
                self._served = False
                self._version = None
            elif self._first_banner is None and not self._starts:
                self._first_banner = event.line
            self._keys.add(key)
            self._banner_engine = event.engine
            if isinstance(event, EngineVersion):
                self._version = event.version
            self._preamble = None
        elif event.type in _RUNTIME:
            # a run that served, or died (a failure that is not a stop or a wait), is over: a banner after it is
            # a new start, also when the log begins after the dead run's own banner (a restart loop's tail)
            self._served = self._served or event.type in _SERVED or _ended_run(event)
            self._preamble = None
        elif event.type in _PROGRESS:
            self._preamble = None  # this start's own progress: the next start's configuration comes after it
        elif self._preamble is None:
            self._preamble = event.line
        self._seen_any = True

    def starts(self) -> list[tuple[int, int | None]]:
        return [(1, self._first_banner), *self._starts]


def run_starts(events: Iterable[EventBase]) -> list[tuple[int, int | None]]:
    """(first line, banner line) of each server start in one source's events, in order; one entry when it holds
    one start (the rules: `RunStarts`)."""
    watch = RunStarts()
    for event in events:
        watch.add(event)
    return watch.starts()


# Where the served model is named: the version line (EngineVersion.model), model lines, or these dump keys.
MODEL_KEYS = ("model", "model_path")


@dataclass
class Clues:
    """What the events of a source (or a run) say about which deployment it is, gathered as they stream by, so
    grouping inputs into deployments (logdoctor.app.deployments) needs no pass over the stored events: the serving
    engine each event names (counted: `--engine` makes every source "that engine", and the grammars that read its
    lines tell a side file apart), the first host a process header names, the served model, the dumps'
    `node_rank`s."""

    votes: dict[str, int] = field(default_factory=dict)
    host: str | None = None
    model: str | None = None
    node_ranks: set[str] = field(default_factory=set)
    serving: frozenset[str] = field(default_factory=lambda: frozenset(REGISTRY.names("serving")))

    def add(self, event: EventBase) -> None:
        engine = event.engine
        if engine in self.serving:
            self.votes[engine] = self.votes.get(engine, 0) + 1
        if self.host is None:
            process = event.process
            if process is not None and process.host:
                self.host = process.host
        if isinstance(event, EngineVersion | ModelInfo | StartupConfig):
            if self.model is None:
                if isinstance(event, StartupConfig):
                    self.model = next((str(event.config[k]) for k in MODEL_KEYS if event.config.get(k)), None)
                elif event.model:
                    self.model = event.model
            if isinstance(event, StartupConfig) and event.config.get("node_rank") is not None:
                self.node_ranks.add(str(event.config["node_rank"]))


def clues_of(events: Iterable[EventBase]) -> Clues:
    clues = Clues()
    for event in events:
        clues.add(event)
    return clues


class Tap:
    """A source's events on their way into its EventLog, seen once: its server starts, its clues, its profile."""

    def __init__(self) -> None:
        self.starts = RunStarts()
        self.clues = Clues()
        self.profiling = ProfileStream()

    def tap(self, events: Iterable[EventBase]) -> Iterator[EventBase]:
        starts, clues, profile = self.starts.add, self.clues.add, self.profiling.add
        for event in events:
            starts(event)
            clues(event)
            profile(event)
            yield event
