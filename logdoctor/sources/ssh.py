"""Collect the lines that matter from vLLM/SGLang hosts over SSH.

    keywords = candidate_keywords()                    # the parsers' literal keywords
    col = collect_host(parse_target("root@kpro5"), SshOptions(), keywords)
    for src in col.sources:                            # RemoteSource: (line number, text) pairs
        stream = EventStream(src.name, src.lines, ...)  # the same parsers as for local files

On each host: connect (ssh config, agent, keys, OpenSSH-like host-key policy), find the logs
(running server processes and where their stdout/stderr go, well-known files, containers, journald
units; or exactly the `--log` paths/globs), run `grep -n` on the host with the keywords so only
candidate lines cross the wire, keep their original line numbers, and stop at `--max-bytes`.
Host facts (`nvidia-smi topo -m`, ..., engine versions, container detection) come along as sources.

Failures are one line (`CollectionError`/`HostKeyError`, exit 3). `collect_hosts` runs many hosts in a
bounded pool and records each host's failure in its `HostCollection.error` instead of raising.
docs/ssh.md lists every remote command and the choices made.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from logdoctor.errors import InputError, LogdoctorError
from logdoctor.redact import redact
from logdoctor.sources.bundle import MANIFEST_LIMIT as MANIFEST_LIMIT
from logdoctor.sources.bundle import saved_bundle_problems as saved_bundle_problems
from logdoctor.sources.collection import _SAFE_NAME_RE, HostCollection, ProgressCallback, RemoteSource, SshOptions
from logdoctor.sources.discovery import (
    Discovery,
    SourcePlan,
    parse_discovery,
    parse_probe,
    plan_sources,
    python_candidates,
    records,
    surrogate_safe,
)
from logdoctor.sources.feed import Feed
from logdoctor.sources.hostscripts import (
    CONTAINER_SCRIPT,
    CPU_SCRIPT,
    CPU_TITLE,
    DISCOVERY_SCRIPT,
    FACT_LIMIT,
    FACTS,
    KERNEL_FACT,
    LIST_SCRIPT,
    PROBE_SCRIPT,
    SUDO_PROBE,
    VERSIONS_SCRIPT,
    remote_command,
)
from logdoctor.sources.limits import DEFAULT_JOBS, DEFAULT_MAX_BYTES
from logdoctor.sources.remote import (
    CommandResult,
    Connection,
    RemoteFailure,
    connect_timeout,
    failure_kind,
)
from logdoctor.sources.scrape import TIME_LIMIT as METRICS_TIME_LIMIT
from logdoctor.sources.scrape import metrics_commands
from logdoctor.sources.sshconfig import SshConfig, load_ssh_config, resolve
from logdoctor.sources.sshlines import _LineReader as _LineReader
from logdoctor.sources.sshsave import _SafeDir as _SafeDir
from logdoctor.sources.sshsave import host_dir_name as host_dir_name
from logdoctor.sources.sshsave import manifest as manifest
from logdoctor.sources.sshsave import prepare_save_dir as prepare_save_dir
from logdoctor.sources.sshsave import save_collection as save_collection
from logdoctor.sources.target import Target, looks_like_host, parse_target

__all__ = [
    "DEFAULT_JOBS",
    "DEFAULT_MAX_BYTES",
    "HostCollection",
    "RemoteSource",
    "SshOptions",
    "Target",
    "collect_host",
    "collect_hosts",
    "looks_like_host",
    "parse_target",
    "prepare_save_dir",
    "save_collection",
    "saved_bundle_problems",
]

_MARKER_SLACK = 4096  # room for the `#logdoctor-...` lines the remote scripts add to the data
_MIN_READ_BUDGET = 4096  # below this, the rest of the budget is not worth another remote scan
_SMALL_OUTPUT = 8 * 1024 * 1024  # probe, discovery, listing

# --- one host -------------------------------------------------------------------------------------


class _HostRun:
    def __init__(
        self,
        collection: HostCollection,
        target: Target,
        options: SshOptions,
        keywords: Sequence[str],
        config: SshConfig,
        progress: ProgressCallback | None,
    ) -> None:
        self.col = collection
        self.target = target
        self.options = options
        self.keywords = list(keywords)
        self.config = config
        self.progress = progress
        self.remaining = options.max_bytes
        self.compress = False  # the host has gzip: reads send their lines compressed
        self.used_names: set[str] = set()
        self.denied: list[str] = []
        self.short_limit = options.command_timeout

    def say(self, message: str) -> None:
        if self.progress is not None:
            self.progress(self.col.host, message)

    def _run(
        self,
        conn: Connection,
        command: str,
        purpose: str,
        on_stdout: Callable[[bytes], None],
        limit: int,
        time_limit: float,
    ) -> CommandResult:
        self.col.commands.append(surrogate_safe(command))  # recorded before it runs: also when it fails
        result = conn.run(command, purpose=purpose, time_limit=time_limit, stdout_limit=limit, on_stdout=on_stdout)
        self.col.command_log.append(result)
        return result

    def _capture(self, conn: Connection, command: str, purpose: str) -> tuple[bytes, CommandResult]:
        out = bytearray()
        result = self._run(conn, command, purpose, out.extend, _SMALL_OUTPUT, self.short_limit)
        if result.timed_out:
            raise RemoteFailure(
                f"timeout: {purpose} did not finish within {self.short_limit:g}s (--timeout)", "timeout"
            )
        if result.capped:
            raise RemoteFailure(f"{purpose}: more than {_SMALL_OUTPUT >> 20} MiB of output (cut)", "partial")
        if not result.complete:
            raise RemoteFailure(f"{purpose}: incomplete: {result.incomplete_reason}", "partial")
        return bytes(out), result

    def unique_name(self, base: str) -> str:
        base = base.removesuffix(".gz")
        stem = _SAFE_NAME_RE.sub("_", base).lstrip(".-") or "source"
        stem = stem[:100]
        if not stem.endswith(".log"):
            stem += ".log"
        name, n = stem, 1
        while name in self.used_names:
            n += 1
            name = f"{stem[:-4]}-{n}.log"
        self.used_names.add(name)
        return name

    def run(self) -> None:
        col, options = self.col, self.options
        alias = self.target.host
        resolved = resolve(
            alias, self.config, user=self.target.user, port=self.target.port, identity_files=options.identity_files
        )
        col.address = resolved.address
        # every command that is not a log read (probe, sudo check, listing, discovery, host facts) has
        # --timeout (else the config's ConnectTimeout, else 10 s), as connecting has; a read has --read-timeout
        self.short_limit = min(connect_timeout(resolved, options.connect_settings()), self.options.command_timeout)
        self.say(f"connecting to {resolved.address}")
        with Connection.open(resolved, options.connect_settings(), self.config) as conn:
            col.notes.extend(conn.notes)
            seen_notes = len(conn.notes)
            conn.shared_shell = options.shared_shell
            data, _ = self._capture(conn, remote_command(PROBE_SCRIPT), "probe")
            probe = parse_probe(data)
            missing = [t for t in ("grep", "awk", "od", "tr", "wc") if t not in probe.tools]
            if missing and probe.tools:
                raise RemoteFailure(f"the host lacks {', '.join(missing)} (needed to filter logs on the host)", "tools")
            self.compress = options.compress and "gzip" in probe.tools
            if options.sudo:
                self._check_sudo(conn, probe.user or resolved.user)
            if options.logs:
                plans = self._list_logs(conn)
                discovery = Discovery()
            else:
                self.say("looking for vLLM/SGLang logs")
                data, _ = self._capture(
                    conn, remote_command(DISCOVERY_SCRIPT, [probe.home], sudo=options.sudo), "discovery"
                )
                discovery = parse_discovery(data)
                col.searched.extend(discovery.searched)
                col.notes.extend(discovery.notes)
                plans, found_lines, plan_notes = plan_sources(discovery)
                col.found.extend(found_lines)
                col.notes.extend(plan_notes)
                self._command_lines(discovery)
            if options.facts:
                self._facts(conn, probe.tools, discovery)
            for index, plan in enumerate(plans):
                try:
                    if conn.alive:
                        self._read(conn, plan)
                except RemoteFailure:
                    if conn.alive:
                        raise
                if not conn.alive:
                    unread = [p.path for p in plans[index + 1 :]]
                    col.incomplete.append(
                        "the connection was lost"
                        + (f"; not read: {', '.join(unread)}" if unread else f" while reading {plan.path}")
                    )
                    break
            col.notes.extend(conn.notes[seen_notes:])  # e.g. the shared shell could not start
        self._check_found()

    # -- steps ----------------------------------------------------------------------------------------
    def _check_sudo(self, conn: Connection, user: str) -> None:
        _, result = self._capture(conn, SUDO_PROBE, "sudo -n check")
        if result.exit_status == 0:
            return
        err = result.stderr_first_line()
        if result.exit_status == 127 or "not found" in err:
            raise RemoteFailure("--sudo: sudo is not installed on the host", "sudo")
        if "password" in err.lower():
            raise RemoteFailure(
                f"--sudo: sudo on the host asks {user} for a password, and logdoctor never types one "
                f"(sudo -n: {err}); allow passwordless sudo (NOPASSWD) for {user}, or connect as root",
                "sudo",
            )
        raise RemoteFailure(f"--sudo: sudo -n failed for {user}: {err or f'exit {result.exit_status}'}", "sudo")

    def _list_logs(self, conn: Connection) -> list[SourcePlan]:
        patterns = list(self.options.logs)
        for p in patterns:
            if "\0" in p:
                raise InputError(f"--log {p!r}: contains a NUL byte")
        self.col.searched.extend(f"--log {p}" for p in patterns)
        data, _ = self._capture(conn, remote_command(LIST_SCRIPT, patterns, sudo=self.options.sudo), "expand --log")
        plans: list[SourcePlan] = []
        seen: set[str] = set()
        for kind, value in records(data):
            index_text, _, rest = value.partition(":")
            if not index_text.isdigit() or not 0 < int(index_text) <= len(patterns):
                continue
            pattern = patterns[int(index_text) - 1]
            if kind == "match" and rest not in seen:
                seen.add(rest)
                plans.append(
                    SourcePlan("file", rest, surrogate_safe(rest), "log", f"--log {pattern}", os.path.basename(rest))
                )
            elif kind == "symlink-out":
                self.col.notes.append(
                    f"--log {pattern}: skipped {surrogate_safe(rest)}, a symbolic link out of its directory "
                    "(name it with --log to read it)"
                )
            elif kind == "nomatch":
                if rest == "permission":
                    self.denied.append(pattern)
                    self.col.notes.append(
                        f"--log {pattern}: permission denied" + ("" if self.options.sudo else " (try --sudo)")
                    )
                else:
                    self.col.notes.append(f"--log {pattern}: no such file on the host")
        return plans

    def _command_lines(self, discovery: Discovery) -> None:
        """Each server's command line is evidence of its configuration: one source per process."""
        by_pid = {p.pid: p for p in discovery.processes}
        for proc in discovery.processes:
            parent = by_pid.get(proc.ppid or -1)
            if parent is not None and parent.cmdline == proc.cmdline:
                continue
            text = redact(proc.cmdline)
            size = len(text.encode())
            self.col.publish(
                RemoteSource(
                    name=self.unique_name(f"cmdline-{proc.pid}"),
                    host=self.col.host,
                    path=f"/proc/{proc.pid}/cmdline",
                    bytes_read=size,
                    bytes_transferred=size,
                    lines=[(1, text)],
                    origin="cmdline",
                    description=f"command line of process {proc.pid}",
                    filtered=False,
                )
            )

    def _facts(self, conn: Connection, tools: set[str], discovery: Discovery) -> None:
        self.say("collecting host facts")
        if "nvidia-smi" in tools:
            for fact in FACTS:
                self._fact(conn, fact.name, fact.path, remote_command(fact.script, fact.argv))
        else:
            self.col.notes.append("nvidia-smi not found on the host: GPU topology facts skipped")
        self._fact(conn, KERNEL_FACT.name, KERNEL_FACT.path, remote_command(KERNEL_FACT.script, KERNEL_FACT.argv))
        pids = [str(proc.pid) for proc in discovery.processes]
        self._fact(conn, "cpu", CPU_TITLE, remote_command(CPU_SCRIPT, pids))
        pythons = python_candidates(discovery.processes)
        self._fact(conn, "engine-versions", "pip show vllm sglang", remote_command(VERSIONS_SCRIPT, pythons))
        self._fact(conn, "container", "container detection", remote_command(CONTAINER_SCRIPT))
        for port, command in metrics_commands(discovery.processes):  # logdoctor/sources/scrape.py
            self._fact(conn, f"metrics-{port}", f"GET http://127.0.0.1:{port}/metrics", command, METRICS_TIME_LIMIT)

    def _fact(self, conn: Connection, name: str, path: str, command: str, time_limit: float | None = None) -> None:
        limit = min(FACT_LIMIT, self.remaining)
        if limit <= 0:
            self.col.notes.append(f"{path}: skipped (--max-bytes spent)")
            return
        reader = _LineReader(numbered=False)
        result = self._run(conn, command, path, reader.feed, limit, time_limit or self.short_limit)
        reader.close(cut=result.capped or result.timed_out)
        self.remaining -= result.bytes_transferred
        if result.exit_status == 127:
            self.col.notes.append(f"{path}: tool not found on the host (skipped)")
            return
        if name == "engine-versions" and result.exit_status == 3:
            self.col.notes.append(
                "engine versions: no python on the host reports vllm or sglang (not looked for inside containers)"
            )
            return
        if result.exit_status not in (0, None) or result.timed_out:
            why = "timed out" if result.timed_out else f"exit {result.exit_status}"
            self.col.notes.append(f"{path}: {why}: {result.stderr_first_line() or 'no message'}")
        if not reader.lines:
            return
        # A title line first, as `head -v` prints it: the parsers learn which command produced the
        # table (the `topo -p2p` mode is not in its output), and the saved file says what it is.
        lines = [(1, f"==> {path} <=="), *((n + 1, text) for n, text in reader.lines)]
        self.col.publish(
            RemoteSource(
                name=self.unique_name(name),
                host=self.col.host,
                path=path,
                bytes_read=result.stdout_bytes,
                bytes_transferred=result.bytes_transferred,
                lines=lines,
                origin="command",
                description="host fact",
                command=result.command,
                filtered=False,
                truncated=not result.complete,
                partial="" if result.complete else f"partial: {len(reader.lines)} lines ({result.incomplete_reason})",
            )
        )

    def _read(self, conn: Connection, plan: SourcePlan) -> None:
        col = self.col
        if self.remaining < min(_MIN_READ_BUDGET, self.options.max_bytes):
            col.notes.append(f"{plan.path}: not read (--max-bytes {self.options.max_bytes} spent)")
            col.incomplete.append(f"{plan.path}: not read (--max-bytes {self.options.max_bytes} spent)")
            return
        self.say(f"reading {plan.path}")
        command = plan.command(self.remaining, self.keywords, sudo=self.options.sudo, compress=self.compress)
        source: RemoteSource | None = None

        def arrived() -> None:
            # The source is published with its first line (a read that fails sends no line), so
            # `diagnose` parses while the host's grep is still running; the rest of its fields
            # are filled in before its feed closes.
            nonlocal source
            if source is None:
                source = self._publish(plan, reader, live=True)
            else:
                source.feed.notify()

        reader = _LineReader(numbered=True, on_lines=arrived)
        try:
            try:
                result = self._run(
                    conn,
                    command,
                    f"read {plan.path}",
                    reader.feed,
                    self.remaining + _MARKER_SLACK,
                    self.options.command_timeout,
                )
            except RemoteFailure as exc:  # the connection broke mid-read: what arrived is kept, marked partial
                reader.close(cut=True)
                if source is not None:
                    source.truncated = True
                    source.partial = f"partial: {len(reader.lines)} of ? lines ({exc})"
                    self.col.incomplete.append(f"{plan.path}: {source.partial}")
                raise
            self._finish_read(plan, reader, result, source)
        finally:
            if source is not None:
                source.feed.close()

    def _publish(self, plan: SourcePlan, reader: _LineReader, *, live: bool) -> RemoteSource:
        source = RemoteSource(
            name=self.unique_name(plan.base_name),
            host=self.col.host,
            path=plan.path,
            lines=reader.lines,
            origin=plan.origin,
            description=plan.description,
        )
        if live:
            source.feed = Feed(reader.lines)
        self.col.publish(source)
        return source

    def _finish_read(
        self, plan: SourcePlan, reader: _LineReader, result: CommandResult, source: RemoteSource | None
    ) -> None:
        col = self.col
        cut = result.capped or result.timed_out
        reader.close(cut=cut)
        # The budget counts the lines as the host's filter kept them: compressed, fewer bytes cross.
        self.remaining -= max(result.bytes_transferred, reader.payload)
        if reader.error is not None and source is None:
            self._source_error(plan, reader.error)
            return
        why = reader.incomplete(result, result.stderr)
        if result.timed_out:
            why = f"stopped after {self.options.command_timeout:g}s (the read's time limit)"
        elif result.capped:
            why = "cut at the --max-bytes budget"
        err = result.stderr_first_line()
        if err and (result.exit_status not in (0, None) or not reader.lines):
            col.notes.append(f"{plan.path}: {err}")
            if "permission denied" in err.lower() and not reader.lines:
                self.denied.append(plan.path)
                return
        if reader.skipped_lines:
            col.notes.append(
                f"{plan.path}: {reader.skipped_lines} candidate lines ({reader.skipped_bytes} bytes) in the middle "
                f"skipped to stay under --max-bytes (kept the first and the last)"
            )
        if source is None:  # no line at all: published now
            source = self._publish(plan, reader, live=False)
        source.bytes_read = reader.size or 0
        source.bytes_transferred = result.bytes_transferred
        source.command = result.command
        source.gzipped = reader.gzipped
        source.skipped_lines = reader.skipped_lines
        source.skipped_bytes = reader.skipped_bytes
        got = len(reader.lines)
        if not why and reader.skipped_lines:
            why = f"{reader.skipped_lines} lines in the middle skipped to stay under --max-bytes"
        if why:
            # Known totals: what the host sent plus what its cap stage skipped; unknown when the
            # host's count never arrived (a cut, a timeout).
            total = None if reader.sent is None or not reader.stages_ok else reader.sent + reader.skipped_lines
            source.partial = f"partial: {got} of {total if total is not None else '?'} lines ({why})"
            source.lines_expected = total
            col.incomplete.append(f"{plan.path}: {source.partial}")
        source.truncated = cut or bool(why)
        col.found.append(f"{plan.path} ({plan.description}): {got} lines kept of {_size(source.bytes_read)}")

    def _source_error(self, plan: SourcePlan, error: str) -> None:
        if error == "permission":
            self.denied.append(plan.path)
            self.col.notes.append(f"{plan.path}: permission denied" + ("" if self.options.sudo else " (try --sudo)"))
        elif error == "not-found":
            self.col.notes.append(f"{plan.path}: vanished before it could be read")
        elif error == "not-regular":
            self.col.notes.append(
                f"{plan.path}: not a regular file (a FIFO, a device or a socket): not read, it could block for ever"
            )
        elif error == "directory":
            self.col.notes.append(
                f"{plan.path}: is a directory (give a file or a glob such as {plan.path.rstrip('/')}/*.log)"
            )
        else:
            self.col.notes.append(f"{plan.path}: {error.removeprefix('command ')}")

    def _check_found(self) -> None:
        if any(s.is_log for s in self.col.sources):
            return
        if self.col.incomplete:
            raise RemoteFailure(f"no log was read: {'; '.join(self.col.incomplete)}", "partial")
        if self.denied:
            hint = "" if self.options.sudo else "; try --sudo"
            raise RemoteFailure(f"permission denied reading {', '.join(self.denied)}{hint}", "permission")
        searched = "; ".join(self.col.searched) or "nothing"
        extra = f" ({self.col.notes[-1]})" if self.col.notes else ""
        raise RemoteFailure(f"nothing found: searched {searched}{extra}; give the log's path with --log", "not-found")


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB"):
        value /= 1024
        if value < 1024 or unit == "GiB":
            break
    return f"{value:.1f} {unit}"


def _check_keywords(keywords: Sequence[str]) -> list[str]:
    out = []
    for k in keywords:
        if "\n" in k or "\0" in k:
            raise ValueError(f"keyword {k!r}: a keyword cannot contain a newline or NUL")
        if k:
            out.append(k)
    return out


def collect_host(
    target: Target,
    options: SshOptions,
    keywords: Sequence[str],
    *,
    progress: ProgressCallback | None = None,
    config: SshConfig | None = None,
    raise_errors: bool = True,
    on_started: Callable[[HostCollection], None] | None = None,
) -> HostCollection:
    """Collect one host. Raises CollectionError/HostKeyError (exit 3) unless `raise_errors` is False,
    in which case the failure is recorded in the returned collection's `error`.

    `on_started(collection)` runs before the host is contacted: a reader of `collection.feed` can
    take each source, and each source's lines, while they arrive (every feed is closed at the end,
    also when the host fails)."""
    col = HostCollection(host=target.label or target.host, keywords=_check_keywords(keywords), started=time.time())
    if on_started is not None:
        on_started(col)
    try:
        cfg = config if config is not None else load_ssh_config(options.ssh_config)
        _HostRun(col, target, options, col.keywords, cfg, progress).run()
    except LogdoctorError as exc:
        col.error = f"{col.host}: {exc}"
        col.error_kind = failure_kind(exc)
        col.exception = exc
        exc.args = (col.error,)  # the one line the CLI prints names the host
        if raise_errors:
            raise
    except Exception as exc:  # a bug: one host must never take the others down
        col.error = f"{col.host}: internal error: {type(exc).__name__}: {exc}"
        col.error_kind = "internal"
        col.exception = exc
        if raise_errors:
            raise
    finally:
        col.close_feeds()
        col.finished = time.time()
        if progress is not None:
            progress(col.host, f"failed: {col.error}" if col.error else f"done: {len(col.sources)} sources")
    return col


def collect_hosts(
    targets: Sequence[Target],
    options: SshOptions,
    keywords: Sequence[str],
    *,
    jobs: int = DEFAULT_JOBS,
    progress: ProgressCallback | None = None,
    on_started: Callable[[int, HostCollection], None] | None = None,
) -> list[HostCollection]:
    """Collect many hosts, at most `jobs` at a time; results in the order of `targets`.

    `on_started(index, collection)` runs in the host's worker
    thread before the host is contacted (see `collect_host`): `diagnose` parses a host's lines from
    `collection.feed` while they arrive. A host that fails has its `error` set; the others are
    unaffected. A broken ssh config is the exception: it raises ConfigError before any host is contacted.
    """
    if jobs < 1:
        raise InputError(f"--jobs {jobs}: must be at least 1")
    config = load_ssh_config(options.ssh_config)
    if not targets:
        return []

    def start(index: int) -> Callable[[HostCollection], None] | None:
        if on_started is None:
            return None
        return lambda col: on_started(index, col)

    with ThreadPoolExecutor(max_workers=min(jobs, len(targets)), thread_name_prefix="logdoctor-ssh") as pool:
        futures = [
            pool.submit(
                collect_host,
                t,
                options,
                keywords,
                progress=progress,
                config=config,
                raise_errors=False,
                on_started=start(index),
            )
            for index, t in enumerate(targets)
        ]
        return [f.result() for f in futures]
