"""Diagnosing hosts over SSH: which targets are hosts, collecting them, parsing while lines arrive.

`logdoctor diagnose HOST...` and each host side of `logdoctor diff` come here; the CLI only parses the
options (one `HostOptions` bundle for both commands) and renders what comes back:

    paths, hosts = split_targets(["kpro5", "node2"], options.ssh_config)
    collections, diagnoses, _ = diagnose_hosts(
        hosts, options, load_rules, check_rules_first=False, engine="auto", suppressions=None, err=console, debug=False
    )

Progress, what was found and notes go to `err` (the CLI's stderr console); results are returned.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from logdoctor import __version__
from logdoctor.errors import CollectionError, InputError, LogdoctorError, UsageError

if TYPE_CHECKING:
    # Imported where used: the rule engine and the SSH collector (paramiko) cost start-up time.
    from concurrent.futures import Future

    from rich.console import Console

    from logdoctor.engine.result import Diagnosis
    from logdoctor.engine.rules import LoadedRule
    from logdoctor.engine.suppress import Suppressions
    from logdoctor.events import EventBase
    from logdoctor.perf.assess import PerfOptions
    from logdoctor.run import LineSource
    from logdoctor.sources.local import ReadLimits
    from logdoctor.sources.ssh import HostCollection, SshOptions

T = TypeVar("T")
PARSING_THREADS = 2  # hosts parsed at once by `diagnose HOST...` (see diagnose_hosts)


@dataclass(frozen=True)
class HostOptions:
    """The SSH options of `diagnose HOST...` and `diff` as given on the command line (docs/ssh.md)."""

    ssh_config: str | None
    identities: tuple[str, ...]
    known_hosts: str | None
    timeout: float | None
    read_timeout: float
    logs: tuple[str, ...]
    sudo: bool
    save: str | None
    max_bytes: int
    accept_new: bool
    jobs: int

    def host_only_given(self) -> list[str]:
        """The options given that only apply to host targets, as the user spelled them."""
        host_only = {
            "--log": self.logs,
            "--sudo": self.sudo,
            "--save": self.save,
            "--accept-new": self.accept_new,
            "-i": self.identities,
        }
        return [name for name, value in host_only.items() if value]

    def ssh_options(self) -> SshOptions:
        """The collector's options: built here only."""
        from logdoctor.sources.ssh import SshOptions

        return SshOptions(
            ssh_config=self.ssh_config,
            identity_files=self.identities,
            known_hosts=self.known_hosts,
            timeout=self.timeout,
            logs=self.logs,
            sudo=self.sudo,
            max_bytes=self.max_bytes,
            accept_new=self.accept_new,
            command_timeout=self.read_timeout,
        )


# --- which targets are hosts ----------------------------------------------------------------------


def read_hosts_file(path: str) -> list[str]:
    """`--hosts FILE`: one target a line (`user@host`, `host:port`, `ssh://...`, an ssh-config alias);
    blank lines and `#` comments are skipped; a malformed target is an error naming FILE:LINE."""
    from logdoctor.sources.target import parse_target

    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(f"--hosts {path}: cannot read it ({reason})") from exc
    hosts: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        target = line.split("#", 1)[0].strip()
        if not target:
            continue
        try:
            parse_target(target)
        except InputError as exc:
            raise InputError(f"{path}:{number}: {exc}") from exc
        hosts.append(target)
    if not hosts:
        raise InputError(f"--hosts {path}: no hosts in it (one target a line, `#` comments)")
    return hosts


def split_targets(targets: Sequence[str], ssh_config: str | None) -> tuple[list[str], list[str]]:
    """(local paths, hosts): an existing path is a file; anything else that looks like a host is one."""
    if all(t == "-" or os.path.exists(t) for t in targets):
        return list(targets), []
    from logdoctor.sources.ssh import looks_like_host
    from logdoctor.sources.sshconfig import load_ssh_config

    aliases = load_ssh_config(ssh_config).aliases()
    hosts = [t for t in targets if looks_like_host(t, aliases=aliases)]
    return [t for t in targets if t not in hosts], hosts


# --- collecting -----------------------------------------------------------------------------------


def collect_for_diagnosis(
    hosts: Sequence[str],
    options: HostOptions,
    err: Console,
    on_started: Callable[[int, HostCollection], None] | None = None,
) -> list[HostCollection]:
    """Collect every host (progress, what was found and notes on `err`); `--save` each one.

    `on_started` runs for each host before it is contacted (see `collect_hosts`)."""
    from logdoctor.parse.pipeline import candidate_keywords
    from logdoctor.report.events import say
    from logdoctor.sources.ssh import collect_hosts, parse_target, prepare_save_dir, save_collection

    if options.save is not None:
        prepare_save_dir(options.save)  # new or empty, before any host is contacted
    lock = threading.Lock()

    def progress(host: str, message: str) -> None:
        with lock:
            say(err, f"{host}: {message}", "dim")

    targets = [parse_target(h) for h in hosts]
    collections = collect_hosts(
        targets,
        options.ssh_options(),
        candidate_keywords(),
        jobs=options.jobs,
        progress=progress,
        on_started=on_started,
    )
    for col in collections:
        for line in col.found:
            say(err, f"{col.host}: found {line}", "dim")
        for note in col.notes:
            say(err, f"{col.host}: note: {note}", "dim")
        for line in col.incomplete:
            say(err, f"{col.host}: incomplete: {line}", "yellow")
        if options.save is not None:
            where = save_collection(col, options.save)
            say(err, f"{col.host}: saved to {where}/ (rerun offline: logdoctor diagnose {where}/*.log)")
    if len(collections) > 1:
        ok = sum(1 for c in collections if c.ok)
        err.print(f"collected {ok} of {len(collections)} hosts", highlight=False)
    return collections


def side_line_sources(
    side: str, targets: Sequence[str], options: HostOptions, err: Console, limits: ReadLimits | None = None
) -> list[LineSource]:
    """One side of `diff` as line sources: files and `-` as `diagnose` reads them, or hosts collected
    over SSH as `diagnose HOST` collects them (several hosts on one side are one deployment)."""
    from logdoctor.run import local_line_sources, remote_line_sources

    paths, hosts = split_targets(targets, options.ssh_config)
    if hosts and paths:
        raise UsageError(f"{side}: give local paths or hosts, not both")
    if not hosts:
        return local_line_sources(paths, limits)
    collections = collect_for_diagnosis(hosts, options, err)
    for collection in collections:
        if collection.error is not None:
            raise CollectionError(f"{side}: {collection.error}")
        if collection.incomplete:  # a diff of partial data would invent differences
            raise CollectionError(f"{side}: {collection.host}: {'; '.join(collection.incomplete)}")
    return [source for collection in collections for source in remote_line_sources(collection)]


# --- diagnosing -----------------------------------------------------------------------------------


def failed_host_diagnosis(collection: HostCollection) -> Diagnosis:
    from logdoctor.engine.result import Diagnosis, EngineReport, Verdict

    error = collection.error or f"{collection.host}: not collected"
    return Diagnosis(
        tool={"name": "logdoctor", "version": __version__},
        sources=[],
        engine=EngineReport(name="unknown"),
        verdict=Verdict(healthy=False, kind="inconclusive", summary=f"not collected: {error}", missing=[error]),
        findings=[],
        ruled_out=[],
        insufficient_data=[],
        errors=[{"host": collection.host, "error": error}],
    )


def mark_partial(d: Diagnosis, where: str, problems: Sequence[str]) -> Diagnosis:
    """A diagnosis of partial data (a cut, a time limit, a cap, an unfinished --save) says so, and is never healthy."""
    from logdoctor.engine.result import Verdict

    if not problems:
        return d
    errors = [*d.errors, *({"host": where, "error": p} for p in problems)]
    verdict = d.verdict
    if verdict.healthy:
        verdict = Verdict(
            healthy=False, kind="inconclusive", summary=f"not called healthy: partial data ({problems[0]})"
        )
    return d.model_copy(update={"errors": errors, "verdict": verdict})


def host_diagnosis(col: HostCollection, diagnosing: Future[Diagnosis] | None, *, alone: bool, debug: bool) -> Diagnosis:
    """A collected host's diagnosis; in a fleet, a bug that breaks one host's diagnosis fails that host
    (reported, exit 3) instead of the whole run. Errors of ours (the rules) still stop everything."""
    if col.error is None and diagnosing is not None:
        try:
            return diagnosing.result()
        except LogdoctorError:
            raise
        except Exception as exc:
            if alone or debug:
                raise
            col.error = f"{col.host}: internal error while diagnosing: {type(exc).__name__}: {exc}"
            col.error_kind = "internal"
    return failed_host_diagnosis(col)


def diagnose_hosts(
    hosts: Sequence[str],
    options: HostOptions,
    load_rules: Callable[[], list[LoadedRule]],
    *,
    check_rules_first: bool,
    engine: str,
    suppressions: Suppressions | None,
    err: Console,
    debug: bool,
    observe: Callable[[Sequence[EventBase]], T] | None = None,
    perf: PerfOptions | None = None,
) -> tuple[list[HostCollection], list[Diagnosis], dict[int, T]]:
    """Collect and diagnose each host: one diagnosis a host, a failed host's saying why.

    `load_rules` runs while the first host is contacted; with `check_rules_first` (a user's rule options)
    it is waited for before any host is (a mistake in them should not cost a fleet's collection). One host
    that could not be collected raises its error. `observe` (the HTML/GitHub reports) sees each host's events,
    by host index; a diagnosis of partial data is marked so (`mark_partial`)."""
    from concurrent.futures import ThreadPoolExecutor

    from logdoctor import run

    # Each host's lines are parsed while they arrive (a parsing thread a host, fed by its collector),
    # so a host's diagnosis is ready soon after its last line, while the rest of the fleet is still read.
    # At most PARSING_THREADS hosts are parsed at once: parsing holds the GIL, so more threads would not
    # finish sooner, and each host being parsed holds all its events (a 1 GiB log's run peaks at 326 MiB); the lines
    # of the hosts that wait are kept as they arrive and parsed when a thread is free.
    parsers = min(options.jobs, PARSING_THREADS)
    with ThreadPoolExecutor(max_workers=parsers + 1, thread_name_prefix="logdoctor-diagnose") as pool:
        rules_ready: Future[list[LoadedRule]] = pool.submit(load_rules)
        if check_rules_first:
            rules_ready.result()
        diagnosing: dict[int, Future[Diagnosis]] = {}
        observed: dict[int, T] = {}

        def diagnose_live(index: int, col: HostCollection) -> Diagnosis:
            parsed = run.parse_sources(run.remote_line_sources(col, live=True), engine)
            if observe is not None:
                observed[index] = observe(parsed.events)
            return run.diagnose_parsed(
                parsed, rules_ready.result(), engine=engine, suppressions=suppressions, perf=perf
            )[0]

        def start_host(index: int, col: HostCollection) -> None:
            diagnosing[index] = pool.submit(diagnose_live, index, col)

        collections = collect_for_diagnosis(hosts, options, err, on_started=start_host)
        if len(collections) == 1 and collections[0].error is not None:
            failure = collections[0].exception
            if isinstance(failure, LogdoctorError) or (failure is not None and debug):
                raise failure
            raise CollectionError(collections[0].error)
        diagnoses = [
            mark_partial(
                host_diagnosis(col, diagnosing.get(index), alone=len(collections) == 1, debug=debug),
                col.host,
                col.incomplete if col.error is None else [],  # a failed host's error says it all
            )
            for index, col in enumerate(collections)
        ]
    return collections, diagnoses, observed
