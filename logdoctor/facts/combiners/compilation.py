"""torch.compile, engine init and warm-up: how long start-up took and whether compiled graphs were cached.

CompileTime(kind="torch_compile", seconds=82.29)  -> compile.torch_seconds = 82.29
CompileTime(kind="cache_load", seconds=4.43)      -> compile.torch_seconds = 4.43 when no total was printed
CompileTime(kind="kernel_build") x 8              -> compile.kernel_builds = 8
first and last compile/warm-up line of a process  -> compile.phase_seconds (the longest process)
"""

from __future__ import annotations

from logdoctor.events import CompileTime, EventBase
from logdoctor.facts.combiner import Combiner
from logdoctor.facts.profile import ProfileBuilder
from logdoctor.facts.values import Fact


def _seconds(timestamp: str | None) -> float | None:
    """Seconds within a year from `MM-DD HH:MM:SS` or `YYYY-MM-DD HH:MM:SS` (only differences are used)."""
    if not timestamp:
        return None
    try:
        date_part, time_part = timestamp.rsplit(" ", 1)
        month, day = (int(x) for x in date_part.split("-")[-2:])
        hh, mm, ss = (int(float(x)) for x in time_part.split(":"))
    except ValueError:
        return None
    return (((month * 31 + day) * 24 + hh) * 60 + mm) * 60 + ss


# compile.startup_wait_seconds comes from failures.py: the engine core waiting on workers that compile before serving.
_DURATIONS = (
    "compile.torch_seconds",
    "compile.init_seconds",
    "compile.graph_capture_seconds",
    "compile.phase_seconds",
    "compile.startup_wait_seconds",
)


class Compilation(Combiner):
    reads = (CompileTime,)
    produces = (
        "model.weights_gib",
        "compile.torch_seconds",
        "compile.init_seconds",
        "compile.disabled",
        "compile.cache_hit",
        "compile.phase_seconds",
        "compile.startup_seconds",
        "compile.kernel_builds",
    )

    def __init__(self, b: ProfileBuilder) -> None:
        super().__init__(b)
        self.times: list[tuple[float, CompileTime]] = []
        self.cache_load: CompileTime | None = None
        self.kernel_builds: list[CompileTime] = []

    def add(self, ev: EventBase) -> None:
        if not isinstance(ev, CompileTime):
            return
        b = self.b
        if ev.kind in ("model_load", "weights_load") and ev.memory_gib:
            b.set("model.weights_gib", ev.memory_gib, ev, ev.message, keep_first=True)
        if ev.kind == "torch_compile" and ev.seconds is not None:
            b.set("compile.torch_seconds", ev.seconds, ev, ev.message, keep_first=True)
        elif ev.kind == "init_engine" and ev.seconds is not None:
            b.set("compile.init_seconds", ev.seconds, ev, ev.message, keep_first=True)
        elif ev.kind == "compile_disabled":
            b.set("compile.disabled", True, ev, ev.message)
        elif ev.kind == "cache_load" and ev.seconds is not None:
            self.cache_load = self.cache_load or ev
        elif ev.kind == "kernel_build":
            self.kernel_builds.append(ev)
        if ev.cache_hit is not None:
            b.set("compile.cache_hit", ev.cache_hit, ev, ev.message, keep_first=True)
        if ev.kind == "cache_load" and "-th graph for " in ev.message:
            # One piecewise graph loaded (vLLM's per-graph DEBUG line): a cache hit, not the bound of a phase; the
            # line that ends the load carries its time. Two runs pasted without process ids stay two phases.
            return
        stamp = _seconds(ev.timestamp)
        if stamp is not None:
            self.times.append((stamp, ev))

    def finish(self) -> None:
        """The longest compile phase of one process (two server runs in one paste are two phases), and the
        longest of the start-up durations."""
        b = self.b
        by_process: dict[tuple[str, int | None], list[tuple[float, CompileTime]]] = {}
        for stamp, event in self.times:
            pid = event.process.pid if event.process is not None else None
            by_process.setdefault((event.source, pid), []).append((stamp, event))
        best: tuple[float, CompileTime, CompileTime] | None = None
        for group in by_process.values():
            if len(group) < 2:
                continue
            group.sort(key=lambda t: t[0])
            span = group[-1][0] - group[0][0]
            if 0 < span < 3 * 3600 and (best is None or span > best[0]):
                best = (span, group[0][1], group[-1][1])
        if best is not None:
            b.set("compile.phase_seconds", float(best[0]), best[2], "compile/warm-up line timestamps")
            b.add_ref("compile.phase_seconds", best[1])
        if self.kernel_builds:
            builds = self.kernel_builds
            b.set("compile.kernel_builds", float(len(builds)), builds[0], "kernel build lines")
            for ev in builds[1:3]:
                b.add_ref("compile.kernel_builds", ev)
        if self.cache_load is not None and b.value("compile.torch_seconds") is None:
            # A warm start whose `torch.compile takes X s in total` is not in the log: the load is its compile time.
            b.set("compile.torch_seconds", self.cache_load.seconds, self.cache_load, self.cache_load.message)
        candidates = [name for name in _DURATIONS if isinstance(b.value(name), float | int)]
        if candidates:
            longest = max(candidates, key=lambda n: float(b.value(n)))
            fact = b.facts[longest]
            b.put("compile.startup_seconds", Fact(value=float(fact.value), refs=list(fact.refs), origin=longest))
