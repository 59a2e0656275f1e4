"""Deployments kept apart: `diagnose`'s local inputs grouped into deployments, and a log split per server start.

    logdoctor diagnose sglang.log vllm.log           -> 2 deployments (other engine): one report each
    logdoctor diagnose vllm.log nccl.log bench.txt   -> 1 deployment: the side files join the server log
    logdoctor diagnose vllm.log                      -> 3 server starts in it: the last one, and the report says so
    logdoctor diagnose --all-runs vllm.log           -> each server start as its own deployment

The split is decided from the parsed events, after each source is read: a source is parsed once, its events
are kept once (the runs not diagnosed are dropped), and a run is a range of line numbers. docs/cli.md
("Deployments and runs") has the rules in a user's words; this module is their one implementation.
"""

from __future__ import annotations

import shlex
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from logdoctor.errors import UsageError
from logdoctor.pipeline import run as pipeline
from logdoctor.pipeline.run import LineSource, Parsed, merge_parsed, parse_each
from logdoctor.pipeline.tap import Run, clues_of
from logdoctor.registry import REGISTRY
from logdoctor.sources.limits import DEFAULT_MAX_SECONDS
from logdoctor.sources.local import ReadLimits

if TYPE_CHECKING:
    from logdoctor.engine.result import Diagnosis
    from logdoctor.engine.rules import LoadedRule
    from logdoctor.engine.suppress import Suppressions
    from logdoctor.perf.options import PerfOptions


@dataclass
class Unit:
    """One source, or one run of a source, with what identifies its deployment."""

    parsed: Parsed
    run: Run | None
    order: int  # the source's place on the command line
    engine: str = "unknown"
    serving: bool = False
    version: str | None = None
    model: str | None = None
    host: str | None = None
    node_ranks: set[Any] = field(default_factory=set)  # `node_rank` of its dumps: a node of a multi-node deployment

    @property
    def name(self) -> str:
        return self.parsed.stats[0].name

    def label(self) -> str:
        if self.run is None or self.run.count == 1:
            return self.name
        return f"{self.name} run {self.run.index}/{self.run.count}"  # its lines: in the run's note


@dataclass
class Deployment:
    """The sources (or runs) diagnosed as one deployment, and what the report says about how they were chosen."""

    units: list[Unit]
    parsed: Parsed
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return " + ".join(u.label() for u in self.units)


# --- several sources, several deployments ----------------------------------------------------------------------


def _identify(unit: Unit) -> Unit:
    parsed = unit.parsed
    serving = set(REGISTRY.names("serving"))
    detection = parsed.detections[0]
    engine = parsed.engine
    # What the events say (gathered as they were parsed: tap.Clues), read once more only where nobody gathered it.
    clues = parsed.clues if parsed.clues is not None else clues_of(parsed.events)
    if detection.forced is not None:
        # With --engine every source "is" that engine: the grammars that read its lines tell a side file (an NCCL
        # log, a benchmark table) and another engine's log apart.
        votes = clues.votes
        engine = max(votes, key=lambda name: votes[name]) if votes else "unknown"
    unit.engine = engine
    unit.serving = engine in serving
    unit.version = next((v for e, v, _ in detection.versions if e == engine), None)
    unit.host = parsed.stats[0].host
    if unit.host is None:
        unit.host = clues.host
    unit.model = clues.model
    unit.node_ranks.update(clues.node_ranks)
    return unit


def _differs(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and a != b


def _model_name(model: str | None) -> str | None:
    """`/root/models/Qwen3-8B` and `Qwen/Qwen3-8B` name one model: a local copy of a hub repository."""
    return None if model is None else model.rstrip("/").rsplit("/", 1)[-1].lower()


def same_deployment(a: Unit, b: Unit) -> bool:
    """Two serving inputs are one deployment unless their engine, version, model or host say otherwise; what one
    of them does not show agrees. The nodes of one multi-node deployment (dumps naming other `node_rank`s) run on
    other hosts. Other flags do not make another deployment: two files of one deployment started with and without
    a flag are the A/B that rules read (`throughput.with_spec` against `throughput.without_spec`, docs/rules.md)."""
    if a.engine != b.engine or _differs(a.version, b.version) or _differs(_model_name(a.model), _model_name(b.model)):
        return False
    other_nodes = bool(a.node_ranks and b.node_ranks and not a.node_ranks & b.node_ranks)
    return not (_differs(a.host, b.host) and not other_nodes)


def group_units(units: Sequence[Unit]) -> list[Deployment]:
    """Serving inputs by identity; each side file (NCCL log, benchmark table, host facts) joins the deployment it
    belongs to: the only serving one; with several, the one on its host, else the one given just before it on the
    command line (the first when it comes first). Runs of one source are always apart."""
    groups: list[list[Unit]] = []
    for unit in units:
        if not unit.serving:
            continue
        for members in groups:
            if all(m.name != unit.name and same_deployment(m, unit) for m in members):
                members.append(unit)
                break
        else:
            groups.append([unit])
    sides = [u for u in units if not u.serving]
    if not groups:
        return [_deployment(sides, [])] if sides else []
    notes: dict[int, list[str]] = {i: [] for i in range(len(groups))}
    for side in sides:
        index, note = _side_home(side, groups)
        groups[index].append(side)
        if note:
            notes[index].append(note)
    return [_deployment(sorted(members, key=_order), notes[i]) for i, members in enumerate(groups)]


def _order(unit: Unit) -> tuple[int, int]:
    return (unit.order, unit.run.index if unit.run else 0)


def _side_home(side: Unit, groups: list[list[Unit]]) -> tuple[int, str | None]:
    if len(groups) == 1:
        return 0, None
    if side.host is not None:
        on_host = [i for i, g in enumerate(groups) if any(u.host == side.host for u in g)]
        if len(on_host) == 1:
            return on_host[0], None
    before = [(i, u) for i, g in enumerate(groups) for u in g if _order(u) < _order(side)]
    index = max(before, key=lambda item: _order(item[1]))[0] if before else 0
    return index, (
        f"{side.name} joined the deployment of {groups[index][0].label()}: with {len(groups)} deployments in one "
        "command, a file that names no host of one of them goes with the server log given just before it "
        "(give each deployment's files in a command of its own to be sure)"
    )


def _deployment(units: list[Unit], notes: list[str]) -> Deployment:
    return Deployment(units, merge_parsed(u.parsed for u in units), notes)


# --- the entry point ---------------------------------------------------------------------------------------------


def parse_deployments(
    sources: Iterable[LineSource], engine: str | None = None, *, all_runs: bool = False
) -> list[Deployment]:
    """Parse `diagnose`'s local inputs and group them into deployments, each source split per server start (the
    last run, or every run with `all_runs`) as soon as it is read, so the runs not diagnosed are not kept."""
    units: list[Unit] = []
    order = -1
    for parsed in parse_each(sources, engine, all_runs=all_runs):
        if parsed.run is None or parsed.run.index == 1 or not all_runs:
            order += 1  # the next source (its runs, with all_runs, share its place)
        units.append(_identify(Unit(parsed, parsed.run, order)))
    deployments = group_units(units)
    if len(deployments) > 1:
        for index, deployment in enumerate(deployments):
            deployment.notes.append(_pointer(deployments, index))
    return deployments


def _pointer(deployments: Sequence[Deployment], index: int, speeds: Sequence[float | None] = ()) -> str:
    """`N deployments: compare them with logdoctor diff ...`, naming the files of two of them; with their measured
    speeds (`speeds`, one a deployment) the faster one first, as `diff` takes them (BASELINE = the fast one)."""
    others = [i for i in range(len(deployments)) if i != index]
    order = [index, others[0]] if index == 0 else [others[0], index]
    if len(speeds) == len(deployments):
        a, b = speeds[order[0]], speeds[order[1]]
        if a is not None and b is not None and b > a:
            order.reverse()
    pair = [deployments[i] for i in order]
    whole = all(u.run is None for d in pair for u in d.units)
    head = f"{len(deployments)} deployments in this command, reported one by one (this is {index + 1})"
    if not whole:
        names = sorted({u.name for d in pair for u in d.units if u.run is not None})
        return f"{head}: compare two server starts of one log with `logdoctor diff --runs {shlex.quote(names[0])}`"
    sides = [[u.name for u in d.units] for d in pair]
    if all(len(s) == 1 for s in sides):
        command = f"logdoctor diff {shlex.quote(sides[0][0])} {shlex.quote(sides[1][0])}"
    else:
        command = "logdoctor diff " + " ".join(
            f"--{role} {shlex.quote(name)}"
            for role, names in zip(("baseline", "candidate"), sides, strict=True)
            for name in names
        )
    return f"{head}: compare them with `{command}`"


def diagnose_deployments(
    deployments: Sequence[Deployment],
    rules: Sequence[LoadedRule],
    *,
    engine: str | None = None,
    suppressions: Suppressions | None = None,
    perf: PerfOptions | None = None,
    max_seconds: float = DEFAULT_MAX_SECONDS,
) -> list[Diagnosis]:
    """One diagnosis per deployment, each with its notes (runs, side files, the `diff` pointer) first among
    its warnings; `perf`: --gpu / --hardware (the expected performance of each); `max_seconds`: --max-seconds,
    the time each diagnosis may take."""
    out: list[Diagnosis] = []
    for deployment in deployments:
        deployment.parsed.notes.extend(deployment.notes)
        diagnosis, _ = pipeline.diagnose_parsed(
            deployment.parsed, rules, engine=engine, suppressions=suppressions, perf=perf, max_seconds=max_seconds
        )
        out.append(diagnosis)
    if len(deployments) > 1:
        # the `diff` pointer names the faster deployment first once the speeds are known
        speeds = [_speed(d) for d in out]
        for index, diagnosis in enumerate(out):
            old, new = _pointer(deployments, index), _pointer(deployments, index, speeds)
            if old != new:
                warnings = [new if w == old else w for w in diagnosis.warnings]
                out[index] = diagnosis.model_copy(update={"warnings": warnings})
    return out


def _speed(d: Diagnosis) -> float | None:
    """Measured decode speed: the median per request where the log has it, else of generation throughput."""
    for name in ("throughput.per_request", "throughput.generation"):
        values = [
            v for v in d.facts.get(name) or [] if isinstance(v, int | float) and not isinstance(v, bool) and v > 0
        ]
        if values:
            return float(statistics.median(values))
    return None


def last_two_runs(log: str, limits: ReadLimits | None = None, engine: str | None = None) -> tuple[Parsed, Parsed]:
    """`logdoctor diff --runs LOG`: the log's server start before the last (the baseline) and its last one."""
    runs = list(parse_each(pipeline.local_line_sources([log], limits), engine, all_runs=True))
    if len(runs) < 2:
        raise UsageError(
            f"{log}: one server start in it, nothing to compare (diff --runs compares two starts of one log)"
        )
    return runs[-2], runs[-1]
