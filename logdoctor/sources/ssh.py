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

import contextlib
import json
import os
import re
import secrets
import signal
import stat
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from logdoctor import __version__
from logdoctor.errors import CollectionError, InputError, LogdoctorError
from logdoctor.redact import Redactor, redact
from logdoctor.sources.bundle import MANIFEST_LIMIT as MANIFEST_LIMIT
from logdoctor.sources.bundle import saved_bundle_problems as saved_bundle_problems
from logdoctor.sources.discovery import (
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
    Discovery,
    SourcePlan,
    parse_discovery,
    parse_probe,
    plan_sources,
    python_candidates,
    records,
    remote_command,
    surrogate_safe,
)
from logdoctor.sources.feed import Feed
from logdoctor.sources.limits import DEFAULT_JOBS, DEFAULT_MAX_BYTES, DEFAULT_READ_TIMEOUT
from logdoctor.sources.local import MAX_LINE_BYTES, NUMBERED_HEADER, decode
from logdoctor.sources.remote import (
    CommandResult,
    Connection,
    ConnectSettings,
    RemoteFailure,
    connect_timeout,
    failure_kind,
)
from logdoctor.sources.scrape import TIME_LIMIT as METRICS_TIME_LIMIT
from logdoctor.sources.scrape import metrics_commands
from logdoctor.sources.sshconfig import SshConfig, load_ssh_config, resolve
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
_SAFE_NAME_RE = re.compile(r"[^A-Za-z0-9._@+-]+")
GZIP_STREAM_MARKER = b"#logdoctor-gzip-stream"  # the read scripts' output after this line is gzip

ProgressCallback = Callable[[str, str], None]
"""`progress(host, message)`: called from the worker threads (make it thread-safe)."""


@dataclass(frozen=True)
class SshOptions:
    """How to reach hosts and what to take from them (the `diagnose` SSH options)."""

    ssh_config: str | None = None  # --ssh-config; default ~/.ssh/config over /etc/ssh/ssh_config
    identity_files: tuple[str, ...] = ()  # -i/--identity, tried before the config's IdentityFile
    known_hosts: str | None = None  # --known-hosts; default the config's UserKnownHostsFile/Global...
    timeout: float | None = None  # --timeout: TCP connect, SSH banner, auth; None: ConnectTimeout or 10 s
    logs: tuple[str, ...] = ()  # --log: remote paths or globs; skips discovery
    sudo: bool = False  # --sudo: read with `sudo -n`
    max_bytes: int = DEFAULT_MAX_BYTES  # --max-bytes: per host, for all sources together
    accept_new: bool = False  # --accept-new: trust and record an unknown host key
    use_agent: bool = True
    use_default_keys: bool = True  # ~/.ssh/id_{rsa,ecdsa,ed25519}
    command_timeout: float = DEFAULT_READ_TIMEOUT  # --read-timeout: one log read (what arrived is kept, partial)
    facts: bool = True  # nvidia-smi, engine versions, container detection
    compress: bool = True  # reads gzip their lines on the host when it has gzip (`gzip -1`)
    shared_shell: bool = True  # every command in one `sh -s` session: one login shell a host, not one a command

    def connect_settings(self) -> ConnectSettings:
        return ConnectSettings(
            timeout=self.timeout,
            known_hosts=self.known_hosts,
            accept_new=self.accept_new,
            identity_files=self.identity_files,
            use_agent=self.use_agent,
            use_default_keys=self.use_default_keys,
        )


@dataclass
class RemoteSource:
    """Lines taken from one remote source, numbered as on the host (`lines` holds only the candidates)."""

    name: str  # unique per host, ends in .log: the file name under `--save DIR/<host>/`
    host: str
    path: str  # remote path, `docker:NAME`, `journald:UNIT`, or the fact command
    kind: str = "ssh"
    bytes_read: int = 0  # size of the remote data scanned (a .gz: its compressed size)
    bytes_transferred: int = 0  # bytes that crossed the wire for this source (stdout + stderr payload)
    lines: list[tuple[int, str]] = field(default_factory=list)
    origin: str = "file"  # process | file | rotated | log | docker | journald | command | cmdline
    description: str = ""
    command: str = ""  # the exact remote command ("" for a command line read during discovery)
    filtered: bool = True  # False: the whole output was kept (host facts, command lines)
    gzipped: bool = False
    skipped_lines: int = 0  # candidate lines dropped in the middle to stay under --max-bytes
    skipped_bytes: int = 0
    truncated: bool = False  # not every candidate line is here: see `partial`
    partial: str = ""  # "partial: N of M lines (why)": a cut, a time limit, a byte cap; "" when complete
    lines_expected: int | None = None  # M above, when the host's count arrived
    # `lines` as they arrive: open while the host is still sending them (a log being read), closed
    # once every field above is final. `diagnose` parses from it while the read goes on.
    feed: Feed[tuple[int, str]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.feed = Feed(self.lines, closed=True)

    @property
    def is_log(self) -> bool:
        return self.origin not in ("command", "cmdline")


@dataclass
class HostCollection:
    """Everything collected from one host, and how (the report's 'found' and 'searched' lines)."""

    host: str
    sources: list[RemoteSource] = field(default_factory=list)
    found: list[str] = field(default_factory=list)
    searched: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    error: str | None = None
    error_kind: str | None = None  # host-key-unknown, host-key-changed, auth, unreachable, timeout, ...
    notes: list[str] = field(default_factory=list)
    address: str = ""  # user@hostname:port after ssh config
    keywords: list[str] = field(default_factory=list)
    command_log: list[CommandResult] = field(default_factory=list)
    started: float = 0.0
    finished: float = 0.0
    exception: BaseException | None = field(default=None, repr=False)  # for `--debug`
    # one line for each source that is not whole, or not read at all (a cut, a time limit, a cap):
    # the host then exits 3 and its report says so, even when its diagnosis came out
    incomplete: list[str] = field(default_factory=list)
    # `sources` as each one starts to arrive; closed when the host is done (or failed).
    feed: Feed[RemoteSource] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.feed = Feed(self.sources)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def complete(self) -> bool:
        return self.error is None and not self.incomplete

    def publish(self, source: RemoteSource) -> None:
        self.feed.append(source)

    def close_feeds(self) -> None:
        """End every feed, also after a failure: a reader must never wait for lines that cannot come."""
        for source in self.sources:
            source.feed.close()
        self.feed.close()

    @property
    def bytes_transferred(self) -> int:
        return sum(r.bytes_transferred for r in self.command_log)


# --- the numbered lines the read scripts send --------------------------------------------------------


class _LineReader:
    """Splits a byte stream into lines as it arrives (over-long lines are cut at MAX_LINE_BYTES).

    numbered=True: `N:text` lines from grep -n / awk, plus `#logdoctor-...` markers.
    numbered=False: plain output, numbered here from 1.
    """

    def __init__(self, numbered: bool, on_lines: Callable[[], None] | None = None) -> None:
        self.numbered = numbered
        self.on_lines = on_lines  # called after a chunk that completed at least one line
        self.lines: list[tuple[int, str]] = []
        self.size: int | None = None
        self.gzipped = False
        self.skipped_lines = 0
        self.skipped_bytes = 0
        self.error: str | None = None
        self.unexpected = 0
        self._partial = bytearray()
        self._overlong = False
        self._count = 0
        self._inflate: zlib._Decompress | None = None  # once the host said it sends gzip
        self.payload = 0  # bytes of (decompressed) output: what the --max-bytes budget counts
        self.sent: int | None = None  # lines the host's cap stage says it sent (`#logdoctor-sent N`)
        self.statuses: dict[str, int] = {}  # exit status of each stage of the host's pipeline
        self.stream_ended = True  # False: a gzip stream from the host stopped before its end
        self._redact = Redactor()  # also masks the body lines of a PEM private key, line by line
        self._last = 0  # number of the last line kept: a gap (grep skipped lines) ends a key's body

    def feed(self, data: bytes) -> None:
        before = len(self.lines)
        if self._inflate is not None:
            data = self._inflated(data)
        self._split(data)
        if self.on_lines is not None and len(self.lines) > before:
            self.on_lines()

    def _split(self, data: bytes) -> None:
        self.payload += len(data)
        start = 0
        while True:
            nl = data.find(b"\n", start)
            if nl < 0:
                self._append_partial(data[start:])
                return
            self._append_partial(data[start:nl])
            line = bytes(self._partial)
            self._partial.clear()
            self._overlong = False
            start = nl + 1
            if line == GZIP_STREAM_MARKER and self._inflate is None and self.numbered:
                # Everything after this line is one gzip stream (the host compresses what it sends).
                self._inflate = zlib.decompressobj(wbits=31)
                self._split(self._inflated(data[start:]))
                return
            self._emit(line)

    def _inflated(self, data: bytes | None) -> bytes:
        """`data` decompressed (None: what the decompressor still holds at the end); nothing once
        the stream proved damaged."""
        assert self._inflate is not None
        if self.error is not None:
            return b""
        try:
            return self._inflate.flush() if data is None else self._inflate.decompress(data)
        except zlib.error as exc:
            self.error = f"the compressed stream is damaged ({exc})"
            return b""

    def _append_partial(self, chunk: bytes) -> None:
        if self._overlong:
            return
        room = MAX_LINE_BYTES - len(self._partial)
        if len(chunk) > room:
            chunk = chunk[:room]
            self._overlong = True
        self._partial += chunk

    def close(self, cut: bool) -> None:
        """End of data; a last line without newline is kept unless the stream was cut mid-line."""
        if self._inflate is not None and not cut:
            self._split(self._inflated(None))
        if self._inflate is not None and not self._inflate.eof:
            self.stream_ended = False
        if self._partial and not cut:
            self._emit(bytes(self._partial))
        self._partial.clear()

    def _emit(self, raw: bytes) -> None:
        if not self.numbered:
            self._count += 1
            self.lines.append((self._count, self._redact(decode(raw))))
            return
        if raw.startswith(b"#logdoctor-"):
            self._marker(raw.decode("utf-8", "replace").strip())
            return
        number, sep, text = raw.partition(b":")
        if sep and number.isdigit():
            line_number = int(number)
            if line_number != self._last + 1:
                self._redact = Redactor()
            self._last = line_number
            self.lines.append((line_number, self._redact(decode(text))))
        else:
            self.unexpected += 1  # e.g. a login banner printed by the user's shell startup files

    def _marker(self, text: str) -> None:
        word, _, rest = text.partition(" ")
        if word == "#logdoctor-size":
            digits = rest.strip()
            self.size = int(digits) if digits.isdigit() else None
        elif word == "#logdoctor-gzip":
            self.gzipped = True
        elif word == "#logdoctor-skipped":
            parts = rest.split()
            if len(parts) == 2 and all(p.isdigit() for p in parts):
                self.skipped_lines, self.skipped_bytes = int(parts[0]), int(parts[1])
        elif word == "#logdoctor-error":
            self.error = rest.strip() or "error"
        elif word == "#logdoctor-sent":
            digits = rest.strip()
            self.sent = int(digits) if digits.isdigit() else None
        elif word == "#logdoctor-status":
            self.status_marker(rest)

    def status_marker(self, rest: str) -> None:
        """`#logdoctor-status STAGE N`: on stdout (grep) or on stderr (gzip -dc, docker logs, journalctl)."""
        stage, _, digits = rest.strip().partition(" ")
        if stage and digits.isdigit():
            self.statuses[stage] = int(digits)

    @property
    def stages_ok(self) -> bool:
        """Every stage of the host's pipeline that reported a status succeeded (grep: 1 = no match)."""
        return all(status == 0 or (stage == "grep" and status == 1) for stage, status in self.statuses.items())

    def incomplete(self, result: CommandResult, stderr: str) -> str:
        """Why the lines that arrived are not all the host's filter kept ("" when they are)."""
        if not result.complete:
            return result.incomplete_reason
        for line in stderr.splitlines():
            if line.startswith("#logdoctor-status "):
                self.status_marker(line.removeprefix("#logdoctor-status "))
        if self.error is not None:
            return self.error
        if not self.stream_ended:
            return "the compressed stream from the host stopped before its end"
        for stage, status in self.statuses.items():
            if status != 0 and not (stage == "grep" and status == 1):  # grep: 1 = no line matched
                why = " (out of memory on a line over 1 GiB, or an unreadable file)" if stage == "grep" else ""
                return f"{stage} on the host exited with status {status}{why}"
        if self.sent is None:
            return "the host's count of the lines it sent never arrived"
        if self.sent != len(self.lines):
            return f"the host sent {self.sent} lines, {len(self.lines)} arrived"
        return ""


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


# --- --save -------------------------------------------------------------------------------------------

_save_lock = threading.Lock()


def host_dir_name(host: str) -> str:
    return _SAFE_NAME_RE.sub("_", host).strip("._-") or "host"


def _iso(ts: float) -> str | None:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds") if ts else None


def manifest(collection: HostCollection) -> dict[str, Any]:
    """The `manifest.json` of a saved collection (also usable as the JSON report's per-host block)."""
    return {
        "logdoctor": __version__,
        "format": 2,
        "host": collection.host,
        "address": collection.address,
        "started": _iso(collection.started),
        "finished": _iso(collection.finished),
        "complete": collection.complete,
        "incomplete": collection.incomplete,
        "error": collection.error,
        "error_kind": collection.error_kind,
        "keywords": collection.keywords,
        "found": collection.found,
        "searched": collection.searched,
        "notes": collection.notes,
        "bytes_transferred": collection.bytes_transferred,
        "sources": [
            {
                "file": s.name,
                "kind": s.kind,
                "host": s.host,
                "path": s.path,
                "origin": s.origin,
                "description": s.description,
                "bytes_read": s.bytes_read,
                "bytes_transferred": s.bytes_transferred,
                "lines": len(s.lines),
                "filtered": s.filtered,
                "gzipped": s.gzipped,
                "skipped_lines": s.skipped_lines,
                "skipped_bytes": s.skipped_bytes,
                "truncated": s.truncated,
                "complete": not s.truncated,
                "partial": s.partial or None,
                "lines_expected": len(s.lines) if not s.truncated else s.lines_expected,
                "command": s.command,
            }
            for s in collection.sources
        ],
        "commands": [
            {
                "command": r.command,
                "purpose": r.purpose,
                "started": _iso(r.started),
                "seconds": round(r.seconds, 3),
                "exit_status": r.exit_status,
                "stdout_bytes": r.stdout_bytes,
                "stderr_bytes": r.stderr_bytes,
                "timed_out": r.timed_out,
                "capped": r.capped,
            }
            for r in collection.command_log
        ],
    }


def _scrub(value: Any) -> Any:
    """JSON-ready copy where every str encodes as UTF-8 (a non-UTF-8 remote or --log name shows U+FFFD)."""
    if isinstance(value, str):
        return surrogate_safe(value)
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub(v) for v in value]
    return value


def prepare_save_dir(directory: str | os.PathLike[str]) -> Path:
    """`--save DIR`, checked before any host is contacted: DIR is created (0700), or it must be an
    empty directory that is not a symbolic link; anything else is a one-line error (exit 2)."""
    path = Path(directory)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        try:
            os.makedirs(path, mode=0o700)
        except OSError as exc:
            raise InputError(f"--save {directory}: cannot create it ({exc.strerror or exc})") from exc
        return path
    except OSError as exc:
        raise InputError(f"--save {directory}: {exc.strerror or exc}") from exc
    if stat.S_ISLNK(st.st_mode):
        raise InputError(f"--save {directory}: is a symbolic link; give a new or an empty directory")
    if not stat.S_ISDIR(st.st_mode):
        raise InputError(f"--save {directory}: exists and is not a directory; give a new or an empty directory")
    try:
        entries = os.listdir(path)
    except OSError as exc:
        raise InputError(f"--save {directory}: cannot list it ({exc.strerror or exc})") from exc
    if entries:
        raise InputError(
            f"--save {directory}: is not empty ({len(entries)} entries); give a new or an empty directory "
            "(a bundle is never written over)"
        )
    return path


class _SafeDir:
    """Files written into one directory that logdoctor created: each to a temporary name opened with
    O_CREAT|O_EXCL|O_NOFOLLOW (a planted symlink is never followed), then renamed into place."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)

    def write(self, name: str, chunks: Iterable[bytes]) -> None:
        tmp = f".{name}.tmp-{secrets.token_hex(8)}"  # unguessable: a planted name cannot be in the way
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=self.fd)
        try:
            with os.fdopen(fd, "wb") as fh:
                for chunk in chunks:
                    fh.write(chunk)
            os.rename(tmp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)  # replaces a link, never follows it
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=self.fd)
            raise

    def close(self) -> None:
        os.close(self.fd)


def _manifest_bytes(data: dict[str, Any]) -> list[bytes]:
    return [(json.dumps(_scrub(data), indent=2, ensure_ascii=False) + "\n").encode("utf-8")]


def _source_lines(source: RemoteSource) -> Iterator[bytes]:
    yield NUMBERED_HEADER + b"\n"
    batch: list[str] = []
    for number, text in source.lines:
        batch.append(f"{number}:{text}\n")
        if len(batch) >= 4096:
            yield "".join(batch).encode("utf-8", "surrogateescape")
            batch.clear()
    yield "".join(batch).encode("utf-8", "surrogateescape")


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM/SIGHUP during a save raise KeyboardInterrupt (main thread only), so the temporary file
    is removed and the bundle stays marked partial instead of the process dying mid-file."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def save_collection(collection: HostCollection, directory: str | os.PathLike[str]) -> Path:
    """Write `DIR/<host>/manifest.json` and `DIR/<host>/<source>.log` (numbered lines); return the host dir.

    `logdoctor diagnose DIR/<host>/*.log` then reads the same lines with the same line numbers. The host
    directory is always new (`<host>-2` when the name is taken); the manifest is written first with
    `"complete": false`, then the logs, then the manifest again with the collection's own `complete`,
    so a save cut anywhere (Ctrl-C, SIGTERM, a full disk) leaves a bundle an offline run calls partial.
    """
    base = Path(directory)
    name = host_dir_name(collection.host)
    with _save_lock, _sigterm_interrupts():
        try:
            base.mkdir(parents=True, exist_ok=True, mode=0o700)
            host_dir = base / name
            for n in range(2, 1000):
                try:
                    os.mkdir(host_dir, 0o700)
                    break
                except FileExistsError:
                    host_dir = base / f"{name}-{n}"
            else:
                raise CollectionError(f"--save {directory}: no free name for {name}")
            out = _SafeDir(host_dir)
            try:
                data = manifest(collection)
                final = dict(data)
                data["complete"] = False
                data["incomplete"] = ["the save did not finish", *collection.incomplete]
                out.write("manifest.json", _manifest_bytes(data))
                for source in collection.sources:
                    out.write(source.name, _source_lines(source))
                out.write("manifest.json", _manifest_bytes(final))
            finally:
                out.close()
        except OSError as exc:
            raise CollectionError(f"--save {directory}: cannot write {base / name}: {exc.strerror or exc}") from exc
    return host_dir
