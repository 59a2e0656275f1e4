"""Diagnosing logs kept in a log store (ClickHouse): one diagnosis a deployment, read as the rows arrive.

`logdoctor diagnose clickhouse://HOST:8123/otel_logs --where "ServiceName = 'vllm'" --since 1h` comes here; the
CLI parses the options (`store_options`, one `StoreOptions` bundle) and renders what comes back with the
multi-host path, one report a deployment and the fleet table:

    result = diagnose_stores(["clickhouse://127.0.0.1:8123/otel_logs"], options, load_rules, engine="auto",
                             suppressions=None, err=console)

`sources/clickhouse.py` reads the table (it knows no log format); this module parses and diagnoses, which a
source may not (the layer contracts in pyproject.toml). A table that cannot be read is reported and the other
tables' deployments are kept (exit 3); a deployment cut short says so and is never called healthy.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import click

from logdoctor.app.options import option_bundle
from logdoctor.errors import CollectionError, InputError, LogdoctorError, UsageError
from logdoctor.sources.limits import DEFAULT_MAX_ROWS

if TYPE_CHECKING:
    from rich.console import Console

    from logdoctor.app.fleet import HostOptions
    from logdoctor.engine.result import Diagnosis
    from logdoctor.engine.rules import LoadedRule
    from logdoctor.engine.suppress import Suppressions
    from logdoctor.events import EventBase
    from logdoctor.parse.pipeline import SourceStats
    from logdoctor.pipeline.run import LineSource
    from logdoctor.sources.clickhouse import ClickHouseOptions, ClickHouseTarget, Deployment
    from logdoctor.sources.limits import ReadLimits
    from logdoctor.sources.urls import UrlOptions

T = TypeVar("T")
DEFAULT_SINCE = "1h"
PASSWORD_ENV = "CLICKHOUSE_PASSWORD"  # noqa: S105 (the variable's name, as clickhouse-client reads it)
USER_ENV = "CLICKHOUSE_USER"


def is_store_target(target: str) -> bool:
    if not target.lower().startswith("clickhouse"):  # every scheme of sources.clickhouse.SCHEMES does
        return False  # (told without importing the reader: `diagnose FILE` never needs it)
    from logdoctor.sources.clickhouse import is_clickhouse_url

    return is_clickhouse_url(target)


@dataclass(frozen=True)
class StoreOptions:
    """The log-store options of `diagnose` as given on the command line (docs/sources.md)."""

    where: str | None = None
    since: str | None = None
    until: str | None = None
    time_column: str = "Timestamp"
    body_column: str = "Body"
    service_column: str = "ServiceName"
    attributes_column: str = "ResourceAttributes"
    identity_attributes: tuple[str, ...] = ()
    clickhouse_user: str | None = None
    clickhouse_password_file: str | None = None
    max_rows: int = DEFAULT_MAX_ROWS
    clickhouse_ca_file: str | None = None

    def given(self) -> list[str]:
        """The options given, as the user spelled them (they only apply to a log-store target)."""
        defaults = StoreOptions()
        names = {
            "where": "--where",  # (--since is shared with prometheus:// targets: not counted here)
            "until": "--until",
            "time_column": "--time-column",
            "body_column": "--body-column",
            "service_column": "--service-column",
            "attributes_column": "--attributes-column",
            "identity_attributes": "--identity-attribute",
            "clickhouse_user": "--clickhouse-user",
            "clickhouse_password_file": "--clickhouse-password-file",
            "max_rows": "--max-rows",
            "clickhouse_ca_file": "--clickhouse-ca-file",
        }
        return [flag for attr, flag in names.items() if getattr(self, attr) != getattr(defaults, attr)]

    def clickhouse(
        self, timeout: float | None, read_timeout: float | None = None, now: float | None = None
    ) -> ClickHouseOptions:
        """The reader's options: times resolved, the password read from its file or CLICKHOUSE_PASSWORD."""
        from logdoctor.sources.clickhouse import (
            DEFAULT_IDENTITY,
            DEFAULT_READ_TIMEOUT,
            DEFAULT_TIMEOUT,
            ClickHouseOptions,
            check_ca_file,
            parse_time,
        )

        since = parse_time(self.since if self.since is not None else DEFAULT_SINCE, now)
        until = parse_time(self.until, now) if self.until is not None else None
        if since is not None and until is not None and until <= since:
            raise UsageError(f"--until ({self.until}) is not after --since ({self.since or DEFAULT_SINCE})")
        if self.clickhouse_ca_file is not None:
            check_ca_file(self.clickhouse_ca_file)
        return ClickHouseOptions(
            where=self.where.strip() or None if self.where is not None else None,
            since=since,
            until=until,
            time_column=self.time_column,
            body_column=self.body_column,
            service_column=self.service_column,
            attributes_column=self.attributes_column,
            identity_attributes=tuple(a for a in self.identity_attributes if a) or DEFAULT_IDENTITY,
            user=self.clickhouse_user or None,
            default_user=os.environ.get(USER_ENV) or None,
            password=self.password(),
            timeout=timeout or DEFAULT_TIMEOUT,
            read_timeout=read_timeout or DEFAULT_READ_TIMEOUT,
            max_rows=self.max_rows,
            ca_file=self.clickhouse_ca_file,
        )

    def password(self) -> str | None:
        if self.clickhouse_password_file is not None:
            path = Path(self.clickhouse_password_file)
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
                raise InputError(f"--clickhouse-password-file {path}: cannot read it ({reason})") from None
            return text.rstrip("\r\n")
        return os.environ.get(PASSWORD_ENV)


def _store_options(values: dict[str, Any]) -> StoreOptions:
    return StoreOptions(**values)


# The options of `diagnose clickhouse://...`, given to the command as one `store: StoreOptions`. --since is shared
# with prometheus:// targets: read here and left for urltargets.url_options, applied inside this one, to pop.
store_options = option_bundle(
    "store",
    [
        click.option(
            "--where",
            metavar="SQL",
            help="clickhouse://: a SQL condition on the table's rows, run with your credentials "
            "(e.g. \"ServiceName = 'vllm'\").",
        ),
        click.option(
            "--since",
            metavar="TIME",
            help="URL targets: read this far back. prometheus://: a duration (30m, 1h, 2d) [default: 30m]; "
            "clickhouse://: a duration, 2026-12-01T10:00:00Z, or `all` [default: 1h].",
        ),
        click.option("--until", metavar="TIME", help="clickhouse://: rows up to this time (same forms as --since)."),
        click.option("--time-column", default="Timestamp", show_default=True, help="clickhouse://: the time column."),
        click.option("--body-column", default="Body", show_default=True, help="clickhouse://: the log line column."),
        click.option(
            "--service-column", default="ServiceName", show_default=True, help="clickhouse://: the service column."
        ),
        click.option(
            "--attributes-column",
            default="ResourceAttributes",
            show_default=True,
            help="clickhouse://: the resource attributes (a Map, .key/.value arrays or a JSON String; '' for none).",
        ),
        click.option(
            "--identity-attribute",
            "identity_attributes",
            multiple=True,
            metavar="KEY",
            help="clickhouse://: an attribute that tells deployments apart (repeatable; default host.name, "
            "k8s.pod.name, k8s.container.name; the service always counts).",
        ),
        click.option(
            "--clickhouse-user", metavar="USER", help=f"clickhouse://: the user (default: the URL's, else ${USER_ENV})."
        ),
        click.option(
            "--clickhouse-password-file",
            type=click.Path(dir_okay=False),
            metavar="FILE",
            help=f"clickhouse://: read the password from FILE (default ${PASSWORD_ENV}); never printed or saved.",
        ),
        click.option(
            "--max-rows",
            type=click.IntRange(min=1),
            default=DEFAULT_MAX_ROWS,
            show_default=True,
            help="clickhouse://: most matching rows to read a deployment (the earliest; the rest is reported cut).",
        ),
        click.option(
            "--clickhouse-ca-file",
            type=click.Path(dir_okay=False),
            metavar="FILE",
            help="clickhouses://: check the server's certificate against the CA certificates in FILE (PEM) "
            "instead of the system's store.",
        ),
    ],
    _store_options,
    keep=("since",),
)


@dataclass
class StoreResults(Generic[T]):
    """One entry a deployment (or a table that could not be read), in the order they were read."""

    names: list[str] = field(default_factory=list)
    diagnoses: list[Diagnosis] = field(default_factory=list)
    observed: list[T | None] = field(default_factory=list)
    failed: bool = False  # a table could not be read or a deployment was cut: exit 3

    def shown(self, empty: Callable[[Sequence[EventBase]], T]) -> list[T]:
        """What the page formats draw for each entry (a table not read draws nothing)."""
        return [o if o is not None else empty(()) for o in self.observed]


def failed_store_diagnosis(name: str, error: str) -> Diagnosis:
    from logdoctor.engine.result import unread_diagnosis

    return unread_diagnosis(name, error)


def diagnose_stores(
    targets: Sequence[str],
    store: StoreOptions,
    load_rules: Callable[[], list[LoadedRule]],
    *,
    engine: str,
    suppressions: Suppressions | None,
    err: Console,
    timeout: float | None = None,
    read_timeout: float | None = None,
    observe: Callable[[Sequence[EventBase]], T] | None = None,
) -> StoreResults[T]:
    """Read and diagnose each table: one diagnosis a deployment. Every URL and option is checked before any
    server is asked; one table alone that cannot be read raises its error (one line, exit 3)."""
    from logdoctor.app.fleet import mark_partial
    from logdoctor.parse.keywords import candidate_keywords
    from logdoctor.report.events import say
    from logdoctor.sanitize import one_line
    from logdoctor.sources.clickhouse import parse_clickhouse_url, read_clickhouse

    parsed_targets = [parse_clickhouse_url(t) for t in targets]
    if store.clickhouse_ca_file is not None and not any(t.tls for t in parsed_targets):
        raise UsageError("--clickhouse-ca-file applies to HTTPS targets (clickhouses://HOST:8443/TABLE)")
    options = store.clickhouse(timeout, read_timeout)
    rules = load_rules()
    keywords = candidate_keywords()
    results: StoreResults[T] = StoreResults()
    understood = 0
    for target in parsed_targets:
        where = target.display

        def progress(message: str, where: str = where) -> None:
            say(err, f"{where}: {message}", "dim")

        try:
            read = read_clickhouse(target, options, keywords, progress)
        except CollectionError as exc:
            if len(parsed_targets) == 1:
                raise
            say(err, f"{where}: error: {one_line(str(exc).removeprefix(where + ': '))}", "yellow")
            results.names.append(where)
            results.diagnoses.append(failed_store_diagnosis(where, str(exc)))
            results.observed.append(None)
            results.failed = True
            continue
        broken: list[str] = []
        for deployment in read.deployments:
            heading = deployment.label if len(parsed_targets) == 1 else f"{where} {deployment.label}"
            if broken:  # the answer broke off in an earlier deployment: this one was never received
                results.names.append(heading)
                results.diagnoses.append(failed_store_diagnosis(heading, f"not received: {broken[0]}"))
                results.observed.append(None)
                continue
            diagnosis, observed = _diagnose_deployment(target, deployment, rules, engine, suppressions, observe, broken)
            problems = [*broken]
            if deployment.cut:
                problems.append(f"more than --max-rows {options.max_rows} matching rows: read the earliest")
            if problems:
                results.failed = True
                diagnosis = mark_partial(diagnosis, heading, problems)
                for problem in problems:
                    say(err, f"{where}: {deployment.label}: incomplete: {one_line(problem)}", "yellow")
            if diagnosis.verdict.kind == "not-a-log" and not problems:
                count = f"{deployment.stored} rows" if deployment.stored is not None else "its rows"
                diagnosis = diagnosis.model_copy(
                    update={"errors": [{"host": heading, "error": f"{count}, none of a vLLM, SGLang or NCCL format"}]}
                )
            else:
                understood += 1
            progress(
                f"{deployment.label}: {deployment.rows} matching rows of "
                f"{deployment.stored if deployment.stored is not None else '?'} read"
            )
            results.names.append(heading)
            results.diagnoses.append(diagnosis)
            results.observed.append(observed)
    if not understood and not results.failed:
        raise CollectionError(
            f"{', '.join(t.display for t in parsed_targets)}: no rows of a vLLM, SGLang or NCCL format "
            f"in {len(results.names)} deployment(s) (check --where, --since and --body-column)"
        )
    return results


def diagnose_clickhouse(
    url: str, store: StoreOptions, load_rules: Callable[[], list[LoadedRule]], **kwargs: Any
) -> StoreResults[Any]:
    """One `clickhouse://` URL: the handler a URL-scheme dispatch registers (`diagnose_stores` takes several)."""
    return diagnose_stores([url], store, load_rules, **kwargs)


def _deployment_source(target: ClickHouseTarget, deployment: Deployment, broken: list[str]) -> LineSource:
    """A deployment's rows as a line source; an answer that breaks off is noted in `broken`, the rows kept."""
    from logdoctor.pipeline import run

    def lines() -> Iterator[tuple[int, str]]:
        try:
            yield from deployment.lines
        except LogdoctorError as exc:  # the answer broke off: what arrived is diagnosed, marked partial
            broken.append(str(exc).removeprefix(target.display + ": "))

    def finish(stat: SourceStats) -> None:
        stat.bytes_read = deployment.bytes_read
        stat.bytes_transferred = deployment.bytes_read
        stat.prefiltered = True
        if deployment.stored is not None:
            stat.lines = deployment.stored

    return run.LineSource(
        name=deployment.name,
        lines=lines(),
        kind="clickhouse",
        host=target.host,
        path=target.table_name,
        finish=finish,
    )


def _diagnose_deployment(
    target: ClickHouseTarget,
    deployment: Deployment,
    rules: Sequence[LoadedRule],
    engine: str,
    suppressions: Suppressions | None,
    observe: Callable[[Sequence[EventBase]], T] | None,
    broken: list[str],
) -> tuple[Diagnosis, T | None]:
    from logdoctor.pipeline import run

    parsed = run.parse_sources([_deployment_source(target, deployment, broken)], engine)
    observed = observe(parsed.events) if observe is not None else None
    diagnosis, _ = run.diagnose_parsed(parsed, rules, engine=engine, suppressions=suppressions)
    return diagnosis, observed


def check_store_targets(
    targets: Sequence[str], store: StoreOptions, hosts: Sequence[str] = (), host_options: Sequence[str] = ()
) -> bool:
    """Whether the targets are log-store URLs; store options without one, mixed targets, or options that only
    apply to SSH hosts (`--log`, `--save`, ...) with one, are usage errors."""
    urls = [t for t in targets if is_store_target(t)]
    if urls and (len(urls) != len(targets) or hosts):
        others = ", ".join([*(t for t in targets if not is_store_target(t)), *hosts])
        raise UsageError(f"give clickhouse:// targets on their own (also given: {others})")
    if urls and host_options:
        raise UsageError(f"{', '.join(host_options)} only apply to host targets (user@host), not clickhouse://")
    if not urls and store.given():
        raise UsageError(f"{', '.join(store.given())} only apply to clickhouse:// targets")
    return bool(urls)


# --- diff: a side read from a store ---------------------------------------------------------------------------


def diff_side_sources(
    sides: tuple[Sequence[str], Sequence[str]],
    store: StoreOptions,
    urls: UrlOptions,
    ssh: HostOptions,
    err: Console,
    limits: ReadLimits | None = None,
) -> tuple[list[LineSource], list[LineSource]]:
    """Both sides of `logdoctor diff` as line sources. A side given as `clickhouse://` or `prometheus://` URLs
    is one deployment of that store (`URL#KEY=VALUE,...` picks it among several: `#pod=vllm-0`,
    `#instance=10.0.0.5:8000`); other sides are files or hosts as `fleet.side_line_sources` reads them."""
    from logdoctor.app.fleet import side_line_sources
    from logdoctor.sources.urls import is_url_target

    def is_url(target: str) -> bool:
        return is_store_target(target) or is_url_target(target.partition("#")[0])

    if not any(is_url(t) for side in sides for t in side):
        if store.given():
            raise UsageError(f"{', '.join(store.given())} only apply to clickhouse:// targets")
        return side_line_sources("baseline", sides[0], ssh, err, limits), side_line_sources(
            "candidate", sides[1], ssh, err, limits
        )
    out: list[list[LineSource]] = []
    for role, targets in zip(("baseline", "candidate"), sides, strict=True):
        urls_given = [t for t in targets if is_url(t)]
        if not urls_given:
            out.append(side_line_sources(role, targets, ssh, err, limits))
            continue
        if len(urls_given) != len(targets):
            others = ", ".join(t for t in targets if not is_url(t))
            raise UsageError(f"{role}: give URL targets on their own (also given: {others})")
        out.append([_store_side_source(role, t, store, urls, ssh, err) for t in targets])
    return out[0], out[1]


def _picked(pick: str, identity: dict[str, str], role: str, target: str) -> bool:
    """Whether every `KEY=VALUE` of the URL's #fragment is one of the deployment's identity labels."""
    wanted: dict[str, str] = {}
    for part in (p.strip() for p in pick.split(",")):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{role}: {target}: name a deployment as #KEY=VALUE[,KEY=VALUE] (e.g. #pod=vllm-0)")
        wanted[key.strip()] = value.strip()
    return all(identity.get(k) == v for k, v in wanted.items())


def _clickhouse_identity(label: str) -> dict[str, str]:
    """`host=gpu-a pod=vllm-0 service=vllm` -> its pairs (the heading clickhouse.label_of writes)."""
    return dict(part.partition("=")[::2] for part in label.split() if "=" in part)


def _store_side_source(
    role: str, given: str, store: StoreOptions, urls: UrlOptions, ssh: HostOptions, err: Console
) -> LineSource:
    """The one deployment a URL names on a diff side, its lines read in full (a diff of a cut read would invent
    differences): several matching deployments, or none, is an input error naming them."""
    from logdoctor.report.events import say
    from logdoctor.sanitize import one_line
    from logdoctor.sources.clickhouse import parse_clickhouse_url

    url, _, pick = given.partition("#")
    shown = one_line(url)
    found: list[tuple[str, LineSource]] = []
    names: list[str] = []
    if is_store_target(url):
        from logdoctor.parse.keywords import candidate_keywords
        from logdoctor.pipeline.run import LineSource as Source
        from logdoctor.sources.clickhouse import read_clickhouse

        target = parse_clickhouse_url(url)
        if store.clickhouse_ca_file is not None and not target.tls:
            raise UsageError("--clickhouse-ca-file applies to HTTPS targets (clickhouses://HOST:8443/TABLE)")
        options = store.clickhouse(ssh.timeout, ssh.read_timeout)
        read = read_clickhouse(
            target, options, candidate_keywords(), lambda m: say(err, f"{role}: {shown}: {m}", "dim")
        )
        for deployment in read.deployments:
            names.append(deployment.label)
            broken: list[str] = []
            if pick and not _picked(pick, _clickhouse_identity(deployment.label), role, given):
                for _ in _deployment_source(target, deployment, broken).lines:  # the rows of the next come after
                    pass
                continue
            source = _deployment_source(target, deployment, broken)
            lines = list(source.lines)
            if broken or deployment.cut:
                why = broken[0] if broken else f"more than --max-rows {options.max_rows} matching rows"
                raise CollectionError(f"{role}: {shown} {deployment.label}: incomplete: {why}")
            found.append((deployment.label, Source(source.name, lines, source.kind, source.host, source.path)))
    else:
        from dataclasses import replace

        from logdoctor.pipeline.run import LineSource as Source
        from logdoctor.registry import REGISTRY
        from logdoctor.sources import urls as url_sources

        # the names the metrics input kind reads, as urltargets asks for them
        names_read = tuple(k for g in REGISTRY.grammars() for k in g.keywords if k.startswith(("vllm:", "sglang:")))
        (collection,) = url_sources.collect([url], replace(urls, metric_names=names_read))
        if collection.error is not None:
            raise CollectionError(f"{role}: {collection.error}")
        for instance in collection.deployments:
            names.append(instance.name)
            identity = {**instance.labels, "name": instance.name}
            if pick and not _picked(pick, identity, role, given):
                continue
            found.append((instance.name, Source(instance.name, instance.lines, "prometheus")))
    if len(found) == 1:
        return found[0][1]
    listed = "; ".join(names[:10]) + (f"; ... ({len(names)} in all)" if len(names) > 10 else "")
    if not found:
        what = f"no deployment matches #{pick}" if pick else "no deployment"
        raise InputError(f"{role}: {shown}: {what} (it has: {one_line(listed) or 'none'})")
    raise InputError(
        f"{role}: {shown}: {len(found)} deployments match: pick one with URL#KEY=VALUE "
        f"(e.g. #{_example_pick(found[0][0])}; it has: {one_line(listed)})"
    )


def _example_pick(label: str) -> str:
    pairs = _clickhouse_identity(label)
    if pairs:
        key, value = next(iter(pairs.items()))
        return f"{key}={value}"
    return f"instance={label}"
