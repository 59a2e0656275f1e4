"""What an SSH collection is made of: the options, the lines of each remote source, and each host's result
(the report's 'found' and 'searched' lines)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from logdoctor.sources.feed import Feed
from logdoctor.sources.limits import DEFAULT_MAX_BYTES, DEFAULT_READ_TIMEOUT
from logdoctor.sources.remote import (
    CommandResult,
    ConnectSettings,
)

_SAFE_NAME_RE = re.compile(r"[^A-Za-z0-9._@+-]+")
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
