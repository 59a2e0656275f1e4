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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from logdoctor import __version__
from logdoctor.errors import CollectionError, InputError, LogdoctorError, UsageError

if TYPE_CHECKING:
    # Imported where used: the rule engine and the SSH collector (paramiko) cost start-up time.
    from concurrent.futures import Executor, Future

    from rich.console import Console

    from logdoctor.app.progress import HostProgress
    from logdoctor.engine.result import Diagnosis
    from logdoctor.engine.rules import LoadedRule
    from logdoctor.engine.suppress import Suppressions
    from logdoctor.events import EventBase
    from logdoctor.perf.options import PerfOptions
    from logdoctor.pipeline.run import LineSource
    from logdoctor.sources.local import ReadLimits
    from logdoctor.sources.ssh import HostCollection, SshOptions

T = TypeVar("T")
PARSING_THREADS = 2  # hosts parsed at once in this process (one host, or no worker processes)
WORKERS_VARIABLE = "LOGDOCTOR_WORKERS"  # worker processes of a fleet: a number, 0 = parse in this process


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
    progress: HostProgress | None = None,
) -> list[HostCollection]:
    """Collect every host (what was found and notes on `err`; each host's step on a terminal's status line,
    logdoctor/app/progress.py); `--save` each one.

    `on_started` runs for each host before it is contacted (see `collect_hosts`). `progress`: the caller's
    status line, kept up after the collection (diagnose shows `parsing` on it); else one of its own."""
    from logdoctor.app.progress import HostProgress
    from logdoctor.parse.keywords import candidate_keywords
    from logdoctor.report.events import say
    from logdoctor.sources.ssh import collect_hosts, parse_target, prepare_save_dir, save_collection

    if options.save is not None:
        prepare_save_dir(options.save)  # new or empty, before any host is contacted
    shown = progress if progress is not None else HostProgress(err)

    def started(index: int, col: HostCollection) -> None:
        shown.started(col)
        if on_started is not None:
            on_started(index, col)

    targets = [parse_target(h) for h in hosts]
    try:
        collections = collect_hosts(
            targets,
            options.ssh_options(),
            candidate_keywords(),
            jobs=options.jobs,
            progress=shown.say,
            on_started=started,
        )
    finally:
        if progress is None:
            shown.stop()
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
    from logdoctor.pipeline.run import local_line_sources, remote_line_sources

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


def parsing_processes(jobs: int, hosts: int) -> int:
    """How many worker processes parse and diagnose a fleet's hosts: 0 (this process, in threads) for one
    host or one CPU, else one a host collected at once (--jobs, at most the number of hosts): a host's
    lines stream to its worker while they arrive, so a worker mostly waits for them (`LOGDOCTOR_WORKERS`
    caps the number; 0 turns the workers off). docs/ssh.md, *Many hosts*."""
    if hosts < 2:
        return 0
    given = os.environ.get(WORKERS_VARIABLE, "").strip()
    if given:
        try:
            cpus = max(int(given), 0)
        except ValueError:
            raise UsageError(f"{WORKERS_VARIABLE}={given!r}: not a number of worker processes") from None
    else:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        if cpus < 2:
            return 0
        cpus = jobs
    return min(cpus, jobs, hosts)


# In a worker process: the rules, loaded once when the worker starts (while the hosts are being contacted),
# or the exception that loading them raised (raised again by each host's task).
_worker_rules: list[LoadedRule] | Exception | None = None


def _start_worker(load_rules: Callable[[], list[LoadedRule]]) -> None:
    import gc
    import signal

    global _worker_rules
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle
    # Forked: what the parent held (the parser, the collector's models) is never traversed by this worker's
    # collections, which would also copy the pages it shares with the parent (as logdoctor.pipeline.parallel's).
    gc.freeze()
    try:
        _worker_rules = load_rules()
    except Exception as exc:  # handed to every task, which raises it
        _worker_rules = exc
    try:  # the grammars' keyword index, built before the first host arrives
        from logdoctor.parse.keywords import candidate_keywords

        candidate_keywords()
    except Exception:  # noqa: S110 - built again (and any error raised) by the first host's parse
        pass


def _source_fields(source: Any, *, lines: bool = True) -> dict[str, Any]:
    """A RemoteSource as the keyword arguments that rebuild it (its feed, a lock, is rebuilt closed); without
    `lines`, with none (they went to the worker as they arrived)."""
    import dataclasses

    fields = {f.name: getattr(source, f.name) for f in dataclasses.fields(source) if f.init}
    if not lines:
        fields["lines"] = []
    return fields


class _Abandoned(Exception):
    """The worker stopped reading a host's stream (it failed, or the pool broke)."""


class _StreamWriter:
    """A host's messages to its worker down a pipe, each a pickle after its length; never blocks for good: while
    the pipe is full it checks that the task is still running."""

    def __init__(self, fd: int, task: Future[Any]) -> None:
        self._fd = fd
        self._task = task
        os.set_blocking(fd, False)

    def put(self, message: tuple[str, Any]) -> None:
        import pickle
        import select
        import struct

        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(struct.pack("!Q", len(data)) + data)
        while view:
            try:
                view = view[os.write(self._fd, view) :]
            except BlockingIOError:
                if self._task.done():
                    raise _Abandoned from None
                select.select([], [self._fd], [], 0.2)
            except OSError as exc:  # EPIPE: the worker closed its end
                raise _Abandoned from exc


def _stream_messages(fd: int) -> Iterator[tuple[str, Any]]:
    """The worker's side of `_StreamWriter`."""
    import pickle
    import struct

    with os.fdopen(fd, "rb") as stream:
        while True:
            head = stream.read(8)
            if len(head) < 8:
                raise EOFError("the host's stream ended early")
            (size,) = struct.unpack("!Q", head)
            yield pickle.loads(stream.read(size))  # noqa: S301 - this logdoctor's own parent process


def _diagnose_streamed(
    host: str,
    handle: Any,
    engine: str,
    suppressions: Suppressions | None,
    observe: Callable[[Sequence[EventBase]], T] | None,
    perf: PerfOptions | None = None,
) -> tuple[Diagnosis, T | None]:
    """A worker's task: one host's sources parsed while they arrive (`handle`: the pipe they come down, passed
    by the multiprocessing resource sharer), then diagnosed exactly as `diagnose HOST` does in one process
    (`run.remote_line_sources`, `parse_sources`, `diagnose_parsed`)."""
    from logdoctor.pipeline import run
    from logdoctor.sources.ssh import HostCollection, RemoteSource

    messages = _stream_messages(handle.detach())
    rules = _worker_rules
    if isinstance(rules, BaseException):
        raise rules
    assert rules is not None, "the worker was started without its rules"

    def sources() -> Iterator[run.LineSource]:
        for kind, first in messages:
            if kind == "end":
                return
            final: dict[str, Any] = {}

            def lines(final: dict[str, Any] = final) -> Iterator[tuple[int, str]]:
                for what, payload in messages:
                    if what == "done":
                        final.update(payload)
                        return
                    yield from payload

            def finish(stat: Any, final: dict[str, Any] = final) -> None:
                rebuilt = HostCollection(host=host, sources=[RemoteSource(**final)])
                for done in run.remote_line_sources(rebuilt):  # its finish, as one process runs it
                    if done.finish is not None:
                        done.finish(stat)

            yield run.LineSource(
                name=first["name"], lines=lines(), kind=first["kind"], host=host, path=first["path"], finish=finish
            )

    parsed = run.parse_sources(sources(), engine)
    observed = observe(parsed.events) if observe is not None else None
    return run.diagnose_parsed(parsed, rules, engine=engine, suppressions=suppressions, perf=perf)[0], observed


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
    progress: HostProgress | None = None,
) -> tuple[list[HostCollection], list[Diagnosis], dict[int, T]]:
    """Collect and diagnose each host: one diagnosis a host, a failed host's saying why.

    `load_rules` runs while the first host is contacted; with `check_rules_first` (a user's rule options)
    it is waited for before any host is (a mistake in them should not cost a fleet's collection). One host
    that could not be collected raises its error. `observe` (the HTML/GitHub reports) sees each host's events,
    by host index; a diagnosis of partial data is marked so (`mark_partial`)."""
    from concurrent.futures import ThreadPoolExecutor

    from logdoctor.pipeline import run

    # One host (or no worker processes): each host's lines are parsed in this process while they arrive (a
    # parsing thread a host, fed by its collector), so its diagnosis is ready soon after its last line. At
    # most PARSING_THREADS hosts are parsed at once: parsing holds the GIL, so more threads would not finish
    # sooner, and each host being parsed holds all its events (a 1 GiB log's run peaks at 326 MiB).
    #
    # A fleet: this process only collects (SSH is mostly waiting) and each collected host is parsed and
    # diagnosed in a worker process, one a CPU, so twenty hosts use the CPUs twenty hosts have. A host's
    # lines are handed over once its collection is done (a thread a host waits for them); each worker
    # loaded the rules when it started, while the hosts were being contacted. A host's report is the
    # one-host run's: the same functions on the same lines, and a fresh copy of the suppressions each.
    processes = parsing_processes(options.jobs, len(hosts))
    workers: Executor | None = None
    if processes:
        workers = _process_pool(processes, load_rules, (observe, suppressions))
    threads = min(options.jobs, len(hosts)) if workers is not None else min(options.jobs, PARSING_THREADS)
    with ThreadPoolExecutor(max_workers=threads + 1, thread_name_prefix="logdoctor-diagnose") as pool:
        rules_ready: Future[list[LoadedRule]] | None = None
        if workers is None or check_rules_first:
            rules_ready = pool.submit(load_rules)
        if check_rules_first and rules_ready is not None:
            rules_ready.result()
        diagnosing: dict[int, Future[Diagnosis]] = {}
        observed: dict[int, T] = {}

        rules_lock = threading.Lock()

        def rules_here() -> list[LoadedRule]:
            nonlocal rules_ready
            with rules_lock:
                if rules_ready is None:  # workers that broke: the rules are loaded here after all
                    rules_ready = pool.submit(load_rules)
                ready = rules_ready
            return ready.result()

        def diagnose_live(index: int, col: HostCollection) -> Diagnosis:
            parsed = run.parse_sources(run.remote_line_sources(col, live=True), engine)
            if observe is not None:
                observed[index] = observe(parsed.events)
            return run.diagnose_parsed(parsed, rules_here(), engine=engine, suppressions=suppressions, perf=perf)[0]

        def diagnose_in_worker(index: int, col: HostCollection) -> Diagnosis:
            from concurrent.futures.process import BrokenProcessPool
            from multiprocessing import reduction

            assert workers is not None
            try:
                read_end, write_end = os.pipe()
                try:
                    handle = reduction.DupFd(read_end)  # the resource sharer holds a copy until the worker takes it
                finally:
                    os.close(read_end)
                task = workers.submit(_diagnose_streamed, col.host, handle, engine, suppressions, observe, perf)
                try:
                    writer = _StreamWriter(write_end, task)
                    for source in col.feed:  # each source as it starts to arrive; ends when the host is done
                        writer.put(("source", {"name": source.name, "kind": source.kind, "path": source.path}))
                        for chunk in source.feed.chunks():  # its lines as they arrive
                            writer.put(("lines", chunk))
                        writer.put(("done", _source_fields(source, lines=False)))
                    writer.put(("end", None))
                except _Abandoned:
                    pass  # the task's own exception says why
                finally:
                    os.close(write_end)
                diagnosis, seen = task.result()
            except (BrokenProcessPool, OSError):  # the workers could not start, or one died: parse it here
                return diagnose_live(index, col)
            if observe is not None:
                observed[index] = seen  # type: ignore[assignment]
            return diagnosis

        def start_host(index: int, col: HostCollection) -> None:
            diagnosing[index] = pool.submit(diagnose_in_worker if workers is not None else diagnose_live, index, col)

        try:
            collections = collect_for_diagnosis(hosts, options, err, on_started=start_host, progress=progress)
        except BaseException:
            if workers is not None:
                workers.shutdown(wait=False, cancel_futures=True)
            raise
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
    if workers is not None:
        workers.shutdown(wait=True)
    return collections, diagnoses, observed


def _process_pool(
    processes: int, load_rules: Callable[[], list[LoadedRule]], passed: tuple[object, ...]
) -> Executor | None:
    """Worker processes, as this process's own children, so that its CPU time (GNU time, the benchmarks)
    includes theirs; None where worker processes cannot be started.

    Forked while this process runs no other thread (before any host is contacted: a fork copies the locks
    other threads hold), with the parser and the SSH collector's models already imported, so a worker starts
    at once and pays no Python start-up; spawned (a new Python that imports logdoctor) where threads already
    run or fork is missing."""
    import multiprocessing
    import pickle
    from concurrent.futures import ProcessPoolExecutor

    try:
        pickle.dumps((load_rules, *passed))  # what a task gets goes by pickle: a closure keeps the hosts here
    except (pickle.PicklingError, TypeError, AttributeError):
        return None
    fork = threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods()
    if fork:
        import logdoctor.pipeline.run
        import logdoctor.sources.ssh  # noqa: F401 - imported once here rather than in every worker
    try:
        context = multiprocessing.get_context("fork" if fork else "spawn")
        pool = ProcessPoolExecutor(
            max_workers=processes, mp_context=context, initializer=_start_worker, initargs=(load_rules,)
        )
        # A spawned pool starts a worker only when a task finds none idle: start them all now, so that they
        # import the parser and load the rules while the hosts are contacted, not after the first is read
        # (a forked pool forks them all at its first task, before it starts its own threads).
        for _ in range(processes):
            pool.submit(_started)
        return pool
    except (OSError, ValueError, ImportError):
        return None


def _started() -> None:
    """A worker's first task: nothing (the initializer did the work)."""
