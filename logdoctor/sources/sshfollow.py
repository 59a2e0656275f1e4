"""Follow one log on a host over SSH (`logdoctor watch HOST`): `tail -F` on the host, candidate lines only.

    follow = HostFollow(parse_target("root@kpro5"), SshOptions(), keywords, path=None, say=print)
    follow.run(on_line, on_rotate, stop)    # on_line(number, text, bytes_read) until `stop` is set

It connects as `diagnose HOST` does (the same ssh config, keys and host-key checks, logdoctor/sources/remote.py),
finds the log as `diagnose HOST` finds it (the running server's output file first; or the `--log` path, or
the path of `user@host:/path/log`), and runs `FOLLOW_SCRIPT`: `tail -F` of the file from the byte after the
last one read, through an awk filter that keeps the lines with a keyword (the lines `grep -n` would keep,
numbered as in the file) so only candidate lines cross the wire, as in a collection. It runs in the
connection's shared `sh -s` under `ld_run` (setsid and a watcher on the session's stdin), so when the
connection is closed or cut, the `tail` is killed on the host. When the connection drops, it connects again
with backoff (1 s, 2 s, 4 s ... 30 s), saying so, and goes on from the same line and byte; a file replaced
or truncated meanwhile is read from its start (`on_rotate`). Host-key and authentication failures, and a
path that is not a readable regular file, end it (CollectionError, exit 3): retrying cannot fix those.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from logdoctor.errors import CollectionError, HostKeyError, InputError, LogdoctorError
from logdoctor.sources.discovery import parse_discovery, parse_probe, plan_sources, records, surrogate_safe
from logdoctor.sources.hostscripts import DISCOVERY_SCRIPT, FILE_CHECKS, LIST_SCRIPT, PROBE_SCRIPT, remote_command
from logdoctor.sources.local import MAX_LINE_BYTES, decode, ere_alternation
from logdoctor.sources.remote import Connection, RemoteFailure, connect_timeout
from logdoctor.sources.ssh import SshOptions
from logdoctor.sources.sshconfig import ResolvedHost, SshConfig, load_ssh_config, resolve
from logdoctor.sources.target import Target, parse_target

FOLLOW_SCRIPT = (
    r"""# logdoctor follow: $1 = path, $2 = lines already read, $3 = bytes already read, $4 = the file's inode
# when they were read (empty: unknown), $5 = the keywords as one ERE. Prints N:BYTES:LINE for each line
# with a keyword (BYTES: the file's bytes up to the end of that line), for as long as it runs, and
# #logdoctor-caught-up once it has read as far as the file reached when it started.
f=$1
n=$2
off=$3
ino=$4
LD_RE=$5
LD_FILE=$f
export LD_RE LD_FILE
"""
    + FILE_CHECKS
    + r"""command -v tail >/dev/null 2>&1 || { echo '#logdoctor-error no-tail'; exit 0; }
now=$(ls -di -- "$f" 2>/dev/null | awk '{ print $1 }')
size=$(wc -c < "$f" | tr -d ' ')
if [ -n "$ino" ] && [ "$now" != "$ino" ]; then
  echo '#logdoctor-rotated replaced while the connection was down'; n=0; off=0
elif [ "$size" -lt "$off" ]; then
  echo '#logdoctor-rotated truncated while the connection was down'; n=0; off=0
fi
echo "#logdoctor-follow $now"
# mawk reads a pipe in blocks and would hold the last lines until more come: -W interactive reads it a line at a time
aw=awk
if awk -W version 2>/dev/null | grep -q mawk; then aw='awk -W interactive'; fi
tail -F -c "+$((off + 1))" -- "$f" 2>&1 | $aw -v n="$n" -v b="$off" -v end="$size" 'BEGIN { re = ENVIRON["LD_RE"]; f = ENVIRON["LD_FILE"]; if (b >= end) { up = 1; print "#logdoctor-caught-up"; fflush() } }
index($0, "tail: ") == 1 && index($0, f) > 0 && /(has been replaced|has appeared|file truncated)/ { print "#logdoctor-rotated " $0; n = 0; b = 0; fflush(); next }
index($0, "tail: ") == 1 && index($0, f) > 0 { print "#logdoctor-note " $0; fflush(); next }
{ n++; b += length($0) + 1; if ($0 ~ re) { print n ":" b ":" $0; fflush() } }
!up && b >= end { up = 1; print "#logdoctor-caught-up"; fflush() }'
"""
)

FOREVER = 10.0**9  # seconds: a follow has no time limit (Ctrl-C ends it)
NO_LIMIT = 1 << 62  # bytes: nor a byte cap (only candidate lines cross, and they are not kept beyond the watch)
BACKOFF = (1.0, 2.0, 4.0, 8.0, 15.0, 30.0)  # seconds before each reconnection attempt; the last repeats
KEEPALIVE = 10  # seconds between SSH keepalives: a dead connection is noticed while the log is quiet

LineCallback = Callable[[int, str, int], None]  # (line number, text, bytes read up to the end of the line)

_ERRORS = {
    "directory": "is a directory (give the log file: --log PATH or HOST:/path/to/log)",
    "not-regular": "is not a regular file (a FIFO, a device or a socket): not followed",
    "permission": "permission denied",
    "not-found": "no such file on the host",
    "no-tail": "the host has no `tail`",
}


def split_follow_target(target: str) -> tuple[str, str | None]:
    """`user@host:/var/log/vllm.log` -> (`user@host`, `/var/log/vllm.log`); `~/x.log` and relative paths too.

    A `:` followed by digits only is a port (`host:2222`), and an `ssh://` target carries no path."""
    if target.startswith("ssh://") or target.startswith("["):
        head, sep, rest = target.partition("]:") if target.startswith("[") else (target, "", "")
        if sep and rest and not rest.isdigit():
            return head + "]", rest
        return target, None
    host, sep, path = target.partition(":")
    if not sep or not path or path.isdigit():
        return target, None
    return host, path


@dataclass
class _Position:
    """Where the follow is in the file: the next command starts after line `lines` / byte `bytes`."""

    lines: int = 0
    bytes: int = 0
    inode: str = ""


class _FollowReader:
    """Splits the follow command's output into lines and markers as it arrives."""

    def __init__(
        self,
        position: _Position,
        on_line: LineCallback,
        on_rotate: Callable[[str], None],
        say: Callable[[str], None],
        on_caught_up: Callable[[], None] = lambda: None,
    ) -> None:
        self.on_caught_up = on_caught_up
        self.position = position
        self.on_line = on_line
        self.on_rotate = on_rotate
        self.say = say
        self.error: str | None = None
        self.started = False
        self._partial = bytearray()

    def feed(self, data: bytes) -> None:
        start = 0
        while True:
            nl = data.find(b"\n", start)
            if nl < 0:
                room = MAX_LINE_BYTES + 64 - len(self._partial)
                self._partial += data[start : start + max(room, 0)]
                return
            self._partial += data[start:nl]
            start = nl + 1
            line = bytes(self._partial)
            self._partial.clear()
            self._line(line)

    def _line(self, raw: bytes) -> None:
        if raw.startswith(b"#logdoctor-"):
            word, _, rest = raw.decode("utf-8", "replace").partition(" ")
            if word == "#logdoctor-error":
                self.error = rest.strip()
            elif word == "#logdoctor-follow":
                self.started = True
                self.position.inode = rest.strip()
            elif word == "#logdoctor-rotated":
                self.position.lines = self.position.bytes = 0
                if self.started:
                    self.position.inode = ""  # tail switched files: the new inode is not known here
                self.on_rotate(_rotation_words(rest))
            elif word == "#logdoctor-note":
                self.say(rest.strip())
            elif word == "#logdoctor-caught-up":
                self.on_caught_up()
            return
        number, sep, after = raw.partition(b":")
        size, sep2, text = after.partition(b":")
        if not (sep and sep2 and number.isdigit() and size.isdigit()):
            return  # a login banner a startup file printed
        self.position.lines, self.position.bytes = int(number), int(size)
        self.on_line(int(number), decode(text[:MAX_LINE_BYTES]), int(size))


def _rotation_words(message: str) -> str:
    text = message.strip()
    if "truncated" in text:
        return (
            f"truncated: reading it again from its start ({text})"
            if "tail:" in text
            else f"{text}: read again from its start"
        )
    return (
        f"replaced: reading the new file from its start ({text})" if "tail:" in text else f"{text}: read from its start"
    )


class HostFollow:
    """One `logdoctor watch HOST`: connect, find the log, follow it, reconnect when the connection drops."""

    def __init__(
        self,
        target: Target,
        options: SshOptions,
        keywords: Sequence[str],
        *,
        path: str | None,
        say: Callable[[str], None],
        config: SshConfig | None = None,
        backoff: Sequence[float] = BACKOFF,
    ) -> None:
        self.target = target
        self.options = options
        self.pattern = ere_alternation([k for k in keywords if k])
        self.path = path or (options.logs[0] if options.logs else None)
        self.say = say
        self.config = config if config is not None else load_ssh_config(options.ssh_config)
        self.backoff = tuple(backoff) or BACKOFF
        self.host = target.label or target.host
        self.followed: str | None = None  # the remote path, once found
        self.connections = 0
        self._conn: Connection | None = None
        self._lock = threading.Lock()
        self._on_caught_up: Callable[[], None] = lambda: None
        self._short = 10.0

    # -- one connection -----------------------------------------------------------------------------
    def _resolved(self) -> ResolvedHost:
        return resolve(
            self.target.host,
            self.config,
            user=self.target.user,
            port=self.target.port,
            identity_files=self.options.identity_files,
        )

    def _capture(self, conn: Connection, command: str, purpose: str) -> bytes:
        out = bytearray()
        result = conn.run(command, purpose=purpose, time_limit=self._short, stdout_limit=8 << 20, on_stdout=out.extend)
        if not result.complete:
            raise RemoteFailure(f"{purpose}: {result.incomplete_reason or 'incomplete'}", "partial")
        return bytes(out)

    def _find(self, conn: Connection, home: str) -> str:
        """The remote path to follow: the one given (expanded on the host), else what discovery finds first."""
        sudo = self.options.sudo
        if self.path is not None:
            if "\0" in self.path:
                raise InputError(f"{self.path!r}: contains a NUL byte")
            found = [
                v.partition(":")[2]
                for k, v in records(
                    self._capture(conn, remote_command(LIST_SCRIPT, [self.path], sudo=sudo), "expand the path")
                )
                if k == "match"
            ]
            if not found:
                raise RemoteFailure(f"{self.path}: no such file on the host", "not-found")
            if len(found) > 1:
                self.say(f"{len(found)} files match {self.path}: following {surrogate_safe(found[0])}")
            return found[0]
        self.say("looking for vLLM/SGLang logs")
        discovery = parse_discovery(
            self._capture(conn, remote_command(DISCOVERY_SCRIPT, [home], sudo=sudo), "discovery")
        )
        plans, _found, _notes = plan_sources(discovery)
        files = [p for p in plans if p.reader == "file" and p.origin != "rotated"]
        if not files:
            others = ", ".join(p.path for p in plans) or "nothing"
            raise RemoteFailure(
                f"no log file to follow (found: {others}); give its path: watch {self.host}:/path/to/log or --log PATH",
                "not-found",
            )
        if len(files) > 1:
            rest = ", ".join(p.path for p in files[1:])
            self.say(f"following {files[0].path} ({files[0].description}); also found {rest} (--log picks another)")
        else:
            self.say(f"following {files[0].path} ({files[0].description})")
        return files[0].target

    def _session(
        self, position: _Position, on_line: LineCallback, on_rotate: Callable[[str], None], stop: threading.Event
    ) -> None:
        resolved = self._resolved()
        # as in a collection: --timeout (else the config's ConnectTimeout, else 10 s) for every command but the read
        self._short = connect_timeout(resolved, self.options.connect_settings())
        self.say(f"connecting to {resolved.address}")
        conn = Connection.open(resolved, self.options.connect_settings(), self.config)
        with self._lock:
            self._conn = conn
        try:
            if stop.is_set():
                return
            self.connections += 1
            transport = conn.client.get_transport()
            if transport is not None:
                transport.set_keepalive(KEEPALIVE)
            conn.shared_shell = True  # ld_run: the tail is killed on the host when the connection goes
            probe = parse_probe(self._capture(conn, remote_command(PROBE_SCRIPT), "probe"))
            missing = [t for t in ("awk", "tr", "wc") if probe.tools and t not in probe.tools]
            if missing:
                raise RemoteFailure(
                    f"the host lacks {', '.join(missing)} (needed to filter the log on the host)", "tools"
                )
            if self.followed is None:
                self.followed = self._find(conn, probe.home)
            reader = _FollowReader(position, on_line, on_rotate, self.say, self._on_caught_up)
            command = remote_command(
                FOLLOW_SCRIPT,
                [self.followed, str(position.lines), str(position.bytes), position.inode, self.pattern],
                sudo=self.options.sudo,
            )
            result = conn.run(
                command,
                purpose=f"follow {surrogate_safe(self.followed)}",
                time_limit=FOREVER,
                stdout_limit=NO_LIMIT,
                on_stdout=reader.feed,
            )
            if reader.error is not None:
                why = _ERRORS.get(reader.error, reader.error)
                raise CollectionError(
                    f"{surrogate_safe(self.followed)}: {why}"
                    + (" (try --sudo)" if reader.error == "permission" and not self.options.sudo else "")
                )
            if not stop.is_set() and not reader.started:
                err = result.stderr_first_line()
                raise RemoteFailure(
                    f"the follow command ended before it started{f' ({err})' if err else ''}", "protocol"
                )
        finally:
            with self._lock:
                self._conn = None
            with contextlib.suppress(Exception):
                conn.close()

    def close(self) -> None:
        """Ends the follow from another thread (Ctrl-C): the connection is closed, which ends `tail` on the host."""
        with self._lock:
            conn = self._conn
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()

    # -- the loop -----------------------------------------------------------------------------------
    def run(
        self,
        on_line: LineCallback,
        on_rotate: Callable[[str], None],
        stop: threading.Event,
        on_caught_up: Callable[[], None] = lambda: None,
    ) -> None:
        """Follow until `stop` is set. The first connection's failure raises (exit 3); later ones are retried.
        `on_caught_up` runs when the file has been read as far as it reached when the follow (re)started."""
        self._on_caught_up = on_caught_up
        position = _Position()

        def close_on_stop() -> None:
            stop.wait()
            self.close()

        threading.Thread(target=close_on_stop, daemon=True).start()
        attempt = 0
        while not stop.is_set():
            before = position.lines, self.connections
            try:
                self._session(position, on_line, on_rotate, stop)
                why = "the follow command ended (the connection or the remote shell closed)"
            except (HostKeyError, InputError):
                raise
            except LogdoctorError as exc:
                kind = getattr(exc, "kind", "")
                if (
                    self.connections == 0
                    or kind in ("auth", "host-key", "not-found", "permission", "tools", "sudo")
                    or not isinstance(exc, RemoteFailure)
                ):
                    if stop.is_set():
                        return
                    raise
                why = str(exc)
            if stop.is_set():
                return
            if self.connections > before[1]:
                attempt = 0  # it was connected: the next try starts the backoff again
            delay = self.backoff[min(attempt, len(self.backoff) - 1)]
            attempt += 1
            self.say(f"connection lost ({why}); reconnecting in {delay:g} s (line {position.lines:,} read)")
            if stop.wait(delay):
                return


def follow_target(target: str) -> tuple[Target, str | None]:
    """A watch target as (host, remote path or None)."""
    host, path = split_follow_target(target)
    return parse_target(host), path
