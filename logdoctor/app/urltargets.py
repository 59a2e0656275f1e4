"""`logdoctor diagnose URL...`: read a service that holds a fleet's data, diagnose each deployment, name outliers.

    logdoctor diagnose prometheus://127.0.0.1:9090 --selector '{job="vllm"}' --since 30m

The URL's scheme picks the reader (logdoctor.sources.urls); each deployment it returns (a Prometheus
instance) is parsed and diagnosed like a file, the reports and the fleet table are printed as for several SSH
hosts, ranked slowest first, and the instances whose generated tok/s per running request is below
`OUTLIER_RATIO` of the fleet median are named with their top finding. A target that cannot be read is one
line (exit 3); the others' results are kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import click

from logdoctor.app.options import option_bundle
from logdoctor.errors import CollectionError, UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from logdoctor.engine.result import Diagnosis
    from logdoctor.engine.rules import LoadedRule
    from logdoctor.engine.suppress import Suppressions
    from logdoctor.events import EventBase
    from logdoctor.report.outliers import Outlier
    from logdoctor.sources.urls import UrlOptions

# An instance decoding below this share of the fleet median (tok/s per running request) is an outlier: at
# half speed it serves each user half as fast, far outside the spread of identical replicas under one load.
OUTLIER_RATIO = 0.5
MIN_PEERS = 3  # a median of fewer instances says nothing about "peers"

__all__ = ["OUTLIER_RATIO", "UrlResult", "diagnose_url_targets", "split_url_targets", "url_options"]


def split_url_targets(targets: Sequence[str]) -> tuple[list[str], list[str]]:
    """`sources.urls.split_url_targets`, imported when a command runs (not on every start: `--version`)."""
    from logdoctor.sources import urls

    return urls.split_url_targets(targets)


def _url_options(values: dict[str, Any]) -> UrlOptions:
    from logdoctor.sources.urls import UrlOptions

    return UrlOptions(**{**values, "since": values["since"] or "30m"})


# Options of URL targets (docs/sources.md), given to the command as one `urls: UrlOptions`. --since is declared by
# stores.store_options (shared with clickhouse://), which must be applied outside this one and leaves it to us.
url_options = option_bundle(
    "urls",
    [
        click.option(
            "--selector",
            metavar="'{LABEL=\"VALUE\",...}'",
            help="prometheus:// targets: PromQL label matchers the engine series must have, e.g. '{job=\"vllm\"}'.",
        ),
        click.option(
            "--step",
            metavar="DURATION",
            help="prometheus:// targets: seconds between points (default: range/120, at least 15s).",
        ),
        click.option(
            "--group-by",
            default="instance",
            show_default=True,
            metavar="LABEL",
            help="prometheus:// targets: the label that tells deployments apart.",
        ),
        click.option(
            "--bearer-token-env",
            metavar="NAME",
            help="URL targets: send the bearer token held by environment variable NAME (never printed).",
        ),
        click.option(
            "--bearer-token-file",
            type=click.Path(dir_okay=False),
            metavar="FILE",
            help="URL targets: send the bearer token read from FILE (never printed).",
        ),
    ],
    _url_options,
    also=("since",),
)


@dataclass
class UrlResult:
    """What the URL targets gave: a name and a diagnosis a deployment (slowest first), the outliers, and
    whether some target or deployment could not be read (exit 3)."""

    names: list[str]
    diagnoses: list[Diagnosis]
    outliers: list[Outlier]
    failed: bool
    observed: list[Any]  # what `observe` made of each deployment's events (the HTML/GitHub reports' timelines)


def _metric_names() -> tuple[str, ...]:
    """The metric names the registered input kinds read: their line types' keywords (`vllm:...`)."""
    from logdoctor.registry import REGISTRY

    return tuple(k for g in REGISTRY.grammars() for k in g.keywords if k.startswith(("vllm:", "sglang:")))


def failed_diagnosis(name: str, error: str) -> Diagnosis:
    from logdoctor.engine.result import unread_diagnosis

    return unread_diagnosis(name, error)


def per_request_speed(events: Sequence[EventBase]) -> float | None:
    """Median generated tok/s per running request over the intervals with requests running."""
    from logdoctor.events import SchedulerStats

    speeds = [
        e.generation_throughput / e.running
        for e in events
        if isinstance(e, SchedulerStats) and e.running and e.generation_throughput
    ]
    import statistics  # here: it costs `logdoctor --version` ~5 ms (fractions, decimal)

    return statistics.median(speeds) if speeds else None


def find_outliers(
    names: Sequence[str], diagnoses: Sequence[Diagnosis], speeds: Sequence[float | None]
) -> list[Outlier]:
    from logdoctor.report.outliers import Outlier

    known = [s for s in speeds if s is not None]
    if len(known) < MIN_PEERS:
        return []
    import statistics

    median = statistics.median(known)
    out: list[Outlier] = []
    for name, diagnosis, speed in zip(names, diagnoses, speeds, strict=True):
        if speed is None or median <= 0 or speed >= OUTLIER_RATIO * median:
            continue
        top = diagnosis.findings[0] if diagnosis.findings else None
        reason = f"{top.cause} (score {top.score}): {top.explanation}" if top else "no finding explains it"
        out.append(Outlier(name=name, per_request=speed, median=median, reason=reason))
    # an instance whose GPUs differ from its peers' (clocks, link, faults: logdoctor/app/peers.py) is named too,
    # its differences beside its top finding
    from logdoctor.app.peers import host_outliers

    by_name = {o.name: o for o in out}
    for diff in host_outliers(names, diagnoses):
        speed = dict(zip(names, speeds, strict=True)).get(diff.host)
        slow = by_name.get(diff.host)
        if slow is not None:
            by_name[diff.host] = Outlier(
                slow.name, slow.per_request, slow.median, f"{slow.reason}; host: {diff.reason}"
            )
        elif speed is not None:
            by_name[diff.host] = Outlier(diff.host, speed, median, f"host: {diff.reason}")
    return sorted(by_name.values(), key=lambda o: o.per_request)


def diagnose_url_targets(
    targets: Sequence[str],
    options: UrlOptions,
    rules: list[LoadedRule],
    *,
    engine: str,
    suppressions: Suppressions | None,
    err: Console,
    observe: Callable[[Sequence[EventBase]], Any] = lambda events: None,
) -> UrlResult:
    """Read each URL target and diagnose every deployment it holds (see the module docstring)."""
    from logdoctor.pipeline.run import LineSource, diagnose_parsed, parse_sources
    from logdoctor.report.events import say
    from logdoctor.sources import urls

    if not targets:
        raise UsageError("no URL target given")
    collections = urls.collect(targets, replace(options, metric_names=_metric_names()))
    if len(collections) == 1 and collections[0].error is not None:
        raise CollectionError(collections[0].error)
    rows: list[tuple[str, Diagnosis, float | None]] = []
    seen: dict[str, Any] = {}
    failed: list[tuple[str, Diagnosis]] = []
    for collection in collections:
        for note in collection.notes:
            say(err, f"{collection.target}: note: {note}", "dim")
        if collection.error is not None:
            say(err, f"{collection.target}: {collection.error}", "yellow")
            failed.append((collection.target, failed_diagnosis(collection.target, collection.error)))
            continue
        say(err, f"{collection.target}: {len(collection.deployments)} deployment(s)", "dim")
        for deployment in collection.deployments:
            source = LineSource(name=deployment.name, lines=deployment.lines, kind="prometheus")
            parsed = parse_sources([source], engine)
            diagnosis, _ = diagnose_parsed(parsed, rules, engine=engine, suppressions=suppressions)
            rows.append((deployment.name, diagnosis, per_request_speed(parsed.events)))
            seen[deployment.name] = observe(parsed.events)
        for name, error in collection.failures.items():
            say(err, f"{collection.target}: {error}", "yellow")
            failed.append((name, failed_diagnosis(name, error)))
    names = [name for name, _, _ in rows]
    outliers = find_outliers(names, [d for _, d, _ in rows], [s for _, _, s in rows])
    rank = {o.name: i for i, o in enumerate(outliers)}

    def order(row: tuple[str, Diagnosis, float | None]) -> tuple[int, float, int, str]:
        name, diagnosis, speed = row
        top = diagnosis.findings[0].score if diagnosis.findings else 0
        return (rank.get(name, len(rank)), speed if speed is not None else float("inf"), -top, name)

    rows.sort(key=order)
    return UrlResult(
        names=[name for name, _, _ in rows] + [name for name, _ in failed],
        diagnoses=[d for _, d, _ in rows] + [d for _, d in failed],
        outliers=outliers,
        failed=bool(failed),
        observed=[seen[name] for name, _, _ in rows] + [observe(()) for _ in failed],
    )


def emit_outliers(result: UrlResult, fmt: str, console: Console) -> None:
    """The outliers after the fleet table (terminal and Markdown; JSON keeps one report a deployment)."""
    if len(result.diagnoses) < 2 or fmt not in ("text", "markdown"):
        return
    from logdoctor.report.outliers import outliers_markdown, render_outliers

    instances = len(result.diagnoses)
    if fmt == "markdown":
        click.echo(outliers_markdown(result.outliers, instances), nl=False)
    else:
        render_outliers(console, result.outliers, instances)
