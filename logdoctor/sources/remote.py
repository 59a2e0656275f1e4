"""One SSH connection to one host: OpenSSH-like host-key checks, ProxyJump, and commands whose
stdout and stderr are read together (never one after the other: a full stderr window would stall a
remote writer while we wait on stdout, paramiko #1778) and cut at a byte limit.

    conn = Connection.open(resolve("kpro5", config), ConnectSettings(timeout=10))
    result = conn.run("sh -c 'grep -n ...' sh /root/vllm-serve.log", on_stdout=sink.feed,
                      time_limit=300, stdout_limit=64 << 20, purpose="read /root/vllm-serve.log")

Every failure becomes a `RemoteFailure` (or `HostKeyError`) with one line of text and a `kind`
(host-key, auth, unreachable, timeout, ...); paramiko's exceptions never leave this module.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import logging
import os
import re
import secrets
import select
import shlex
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import paramiko

from logdoctor.errors import CollectionError, ConfigError, HostKeyError
from logdoctor.sources.knownhosts import Entry, KnownHosts, blob_key_type
from logdoctor.sources.sshconfig import ResolvedHost, SshConfig, resolve
from logdoctor.sources.target import parse_target

# paramiko logs handshake failures with their tracebacks at ERROR; without a handler, Python's
# last-resort handler would print them on stderr. Errors reach the user as one line instead.
logging.getLogger("paramiko").addHandler(logging.NullHandler())
logging.getLogger("paramiko").propagate = False

DEFAULT_TIMEOUT = 10.0
MAX_JUMP_DEPTH = 8
MAX_STDERR_BYTES = 64 * 1024
SHELL_READY_SECONDS = 20.0  # how long the login shell may take to start the shared `sh -s`
_READ_CHUNK = 256 * 1024
_known_hosts_lock = threading.Lock()


class RemoteFailure(CollectionError):
    """A collection failure with a machine-readable `kind` (auth, unreachable, timeout, ...)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class UnknownHostKeyError(HostKeyError):
    kind = "host-key-unknown"


class ChangedHostKeyError(HostKeyError):
    kind = "host-key-changed"


def failure_kind(exc: BaseException) -> str:
    kind = getattr(exc, "kind", None)
    if isinstance(kind, str):
        return kind
    if isinstance(exc, HostKeyError):
        return "host-key"
    if isinstance(exc, ConfigError):
        return "config"
    return "collection"


@dataclass(frozen=True)
class ConnectSettings:
    """The connection-related part of `SshOptions`."""

    timeout: float | None = None  # None: the config's ConnectTimeout, else DEFAULT_TIMEOUT
    known_hosts: str | None = None  # replaces UserKnownHostsFile and GlobalKnownHostsFile
    accept_new: bool = False
    identity_files: tuple[str, ...] = ()
    use_agent: bool = True
    use_default_keys: bool = True


@dataclass
class CommandResult:
    """What one remote command did; the manifest keeps one of these per command."""

    command: str
    purpose: str
    exit_status: int | None = None
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    stderr: str = ""
    timed_out: bool = False
    capped: bool = False
    started: float = 0.0
    seconds: float = 0.0
    sent_bytes: int | None = None  # stdout bytes the host says the command wrote (the shared shell's frame)
    ended: bool = False  # the end of the command's output was seen (its frame, or the session's EOF and status)

    @property
    def complete(self) -> bool:
        """Everything the command wrote arrived: it ended, was neither capped nor timed out, its exit
        status is known and, where the host counted them, as many bytes arrived as it wrote."""
        if self.capped or self.timed_out or not self.ended or self.exit_status is None:
            return False
        return self.sent_bytes is None or self.sent_bytes == self.stdout_bytes

    @property
    def incomplete_reason(self) -> str:
        if self.timed_out:
            return f"stopped after {self.seconds:.0f}s (time limit)"
        if self.capped:
            return "cut at the byte limit"
        if not self.ended or self.exit_status is None:
            return "the connection or the remote shell ended before the command's end frame arrived"
        if self.sent_bytes is not None and self.sent_bytes != self.stdout_bytes:
            return f"{self.stdout_bytes} of the {self.sent_bytes} bytes the host wrote arrived"
        return ""

    @property
    def bytes_transferred(self) -> int:
        return self.stdout_bytes + self.stderr_bytes

    def stderr_first_line(self) -> str:
        for line in self.stderr.splitlines():
            if line.strip() and not line.startswith("#logdoctor-status "):  # the read scripts' stage statuses
                return line.strip()[:300]
        return ""


def fingerprint(key: paramiko.PKey) -> str:
    return f"{key.get_name()} {key.fingerprint}"


class RevokedHostKeyError(HostKeyError):
    kind = "host-key-revoked"


class _HostKeyPolicy(paramiko.MissingHostKeyPolicy):
    """OpenSSH's StrictHostKeyChecking=yes, or =accept-new with `accept_new`, decided by our own
    known_hosts matcher (`knownhosts.py`): paramiko is given no host keys, so it asks this policy
    about every key, and a changed or revoked key never passes."""

    def __init__(
        self,
        host: ResolvedHost,
        files: tuple[str, ...],
        accept_new: bool,
        record_to: str | None,
        notes: list[str],
    ) -> None:
        self.host = host
        self.files = files
        self.accept_new = accept_new
        self.record_to = record_to
        self.notes = notes
        self.accepted: str | None = None

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        blob = key.asbytes()
        key_type = blob_key_type(blob) or key.get_name()
        book = KnownHosts.load(self.files)
        self.notes.extend(book.notes)
        verdict = book.check(hostname, key_type, blob)
        if verdict.status == "new" and self.host.port != 22:
            # OpenSSH then looks the key up under the port-less name too ("found matching key w/out
            # port"): only a match there counts, a different key under it leaves the key unknown.
            bare = book.check(self.host.hostname, key_type, blob)
            if bare.status == "ok":
                verdict = bare
        self.notes.extend(verdict.notes)
        if verdict.status == "ok":
            return
        if verdict.status == "revoked":
            assert verdict.entry is not None
            raise RevokedHostKeyError(
                f"REVOKED HOST KEY for {hostname}: the host presents {fingerprint(key)}, which "
                f"{verdict.entry.where} marks @revoked; refused (--accept-new never overrides this)"
            )
        if verdict.status == "changed":
            assert verdict.entry is not None
            holder = verdict.entry.path
            raise ChangedHostKeyError(
                f"HOST KEY CHANGED for {hostname}: the host now presents {fingerprint(key)}, "
                f"but {verdict.entry.where} has {_entry_fingerprint(verdict.entry)}. Someone may be intercepting "
                f"the connection (man-in-the-middle), or the host was reinstalled; refused (--accept-new never "
                f"overrides this). If the change is expected, remove the old key: ssh-keygen -R '{hostname}' -f {holder}"
            )
        where = ", ".join(self.files) or "no known_hosts file"
        if verdict.other_types:
            # OpenSSH would treat this as a new key; logdoctor refuses it even with --accept-new
            # (a host that suddenly offers another key type is worth a look).
            raise ChangedHostKeyError(
                f"host key type changed for {hostname}: the host presents {fingerprint(key)}, but {where} "
                f"knows it only with {', '.join(verdict.other_types)} keys; refused (--accept-new never "
                f"accepts this). Check the fingerprint with the host's owner, then add the key to known_hosts"
            )
        if not self.accept_new or self.record_to is None:
            raise UnknownHostKeyError(
                f"unknown host key for {hostname}: {fingerprint(key)} (not in {where}); refused. "
                f"Check the fingerprint with the host's owner (on the host: ssh-keygen -lf "
                f"/etc/ssh/ssh_host_{_key_file_stem(key)}_key.pub), then rerun with --accept-new to trust and record it"
            )
        name = paramiko.HostKeys.hash_host(hostname) if self.host.hash_known_hosts else hostname
        line = f"{name} {key.get_name()} {key.get_base64()}\n"
        path = self.record_to
        try:
            with _known_hosts_lock:
                # another host of this run (an alias of the same address) may have recorded it meanwhile
                if KnownHosts.load([path]).check(hostname, key_type, blob).status == "ok":
                    return
                os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
                fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                with os.fdopen(fd, "a", encoding="ascii") as fh:
                    fh.write(line)
        except OSError as exc:
            raise RemoteFailure(
                f"--accept-new: cannot record the host key of {hostname} in {path}: {exc.strerror or exc}", "config"
            ) from exc
        self.accepted = f"new host key {fingerprint(key)} for {hostname} trusted and added to {path} (--accept-new)"


def _entry_fingerprint(entry: Entry) -> str:
    digest = base64.b64encode(hashlib.sha256(entry.blob).digest()).decode().rstrip("=")
    return f"{entry.key_type} SHA256:{digest}"


def _key_file_stem(key: paramiko.PKey) -> str:
    name = key.get_name()
    if "ed25519" in name:
        return "ed25519"
    if "ecdsa" in name:
        return "ecdsa"
    return "rsa"


class Connection:
    """An authenticated SSH session (plus the jump hosts it goes through), closed by `close()`."""

    def __init__(self, host: ResolvedHost, client: paramiko.SSHClient, gateways: list[paramiko.SSHClient]) -> None:
        self.host = host
        self.client = client
        self.gateways = gateways
        self.notes: list[str] = []
        self.shared_shell = False  # run commands in one `sh -s` session (see `run`)
        self._shell: _Shell | None = None

    @classmethod
    def open(cls, host: ResolvedHost, settings: ConnectSettings, config: SshConfig) -> Connection:
        gateways: list[paramiko.SSHClient] = []
        notes: list[str] = []
        try:
            client = _connect(host, settings, config, gateways, notes, depth=0)
        except BaseException:
            for gw in reversed(gateways):
                gw.close()
            raise
        conn = cls(host, client, gateways)
        conn.notes = notes
        return conn

    @property
    def alive(self) -> bool:
        transport = self.client.get_transport()
        return transport is not None and transport.is_active()

    def close(self) -> None:
        if self._shell is not None:
            self._shell.close()
        self.client.close()
        for gw in reversed(self.gateways):
            gw.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(
        self,
        command: str,
        *,
        purpose: str,
        time_limit: float,
        stdout_limit: int,
        on_stdout: Callable[[bytes], None],
    ) -> CommandResult:
        """Run `command`, hand stdout to `on_stdout` as it arrives, keep the first 64 KiB of stderr.

        Stops (and closes the channel, so the remote side gets SIGPIPE) once `stdout_limit` bytes have
        arrived or `time_limit` seconds have passed; the result says which.

        With `shared_shell` on, the command runs in this connection's one `sh -s` session (see
        `_Shell`) instead of a session of its own: the host starts the user's login shell once for
        the whole collection, not once a command.
        """
        # The record shows undecodable bytes of a remote name as U+FFFD; the host gets the bytes themselves.
        shown = command.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        result = CommandResult(command=shown, purpose=purpose, started=time.time())
        t0 = time.monotonic()
        deadline = t0 + time_limit
        stderr = bytearray()
        shell: _Shell | None = None
        chan: paramiko.Channel | None = None
        try:
            if self.shared_shell and (self._shell is None or not self._shell.usable):
                self._shell = _Shell(self._open_channel(time_limit))
                if not self._shell.begin(min(time_limit, SHELL_READY_SECONDS)):
                    self._shell.close()
                    self._shell = None
                    self.shared_shell = False
                    self.notes.append(
                        f"the login shell did not start `sh -s` within {min(time_limit, SHELL_READY_SECONDS):g}s "
                        "(a startup file waiting for input?): one SSH session a command instead"
                    )
            if self.shared_shell and self._shell is not None:
                shell = self._shell
                chan = shell.start(command.encode("utf-8", "surrogateescape"))
            else:
                chan = self._open_channel(time_limit)
                chan.exec_command(command.encode("utf-8", "surrogateescape"))
                chan.shutdown_write()  # nothing on stdin: a command that reads it sees EOF, never waits
            _pump(chan, shell, result, stderr, deadline, stdout_limit, on_stdout)
            if shell is not None:
                result.exit_status = shell.status
                result.sent_bytes = shell.stdout.sent_bytes
                result.ended = shell.finished
            else:
                if not (result.capped or result.timed_out):
                    # the status usually follows the EOF at once
                    chan.status_event.wait(max(0.0, min(deadline - time.monotonic(), 10.0)))
                if chan.exit_status_ready():
                    result.exit_status = chan.recv_exit_status()
                    result.ended = not (result.capped or result.timed_out)
        except (paramiko.SSHException, EOFError, OSError) as exc:
            if shell is not None:
                shell.close()
            raise RemoteFailure(
                f"{self.host.address}: {purpose}: connection failed: {_describe(exc)}", "protocol"
            ) from exc
        finally:
            if shell is None:
                if chan is not None:
                    close_channel(chan)
            elif result.capped or result.timed_out or not shell.finished:
                shell.close()  # the command may still run: end the session (a new one serves the next)
            result.stderr = bytes(stderr).decode("utf-8", "replace")
            result.seconds = time.monotonic() - t0
        return result

    def _open_channel(self, time_limit: float) -> paramiko.Channel:
        transport = self.client.get_transport()
        if transport is None or not transport.is_active():
            raise RemoteFailure(f"connection to {self.host.address} was lost", "unreachable")
        try:
            return transport.open_session(timeout=max(5.0, min(time_limit, 30.0)))
        except (paramiko.SSHException, EOFError, OSError) as exc:
            raise RemoteFailure(f"cannot open a session on {self.host.address}: {_describe(exc)}", "protocol") from exc


def _pump(
    chan: paramiko.Channel,
    shell: _Shell | None,
    result: CommandResult,
    stderr: bytearray,
    deadline: float,
    stdout_limit: int,
    on_stdout: Callable[[bytes], None],
) -> None:
    """Read stdout and stderr together until the command is done, capped or out of time."""

    def out(data: bytes) -> None:
        room = stdout_limit - result.stdout_bytes
        if len(data) > room:
            data = data[: max(room, 0)]
            result.capped = True
        result.stdout_bytes += len(data)
        if data:
            on_stdout(data)

    def err(data: bytes) -> None:
        result.stderr_bytes += len(data)
        if len(stderr) < MAX_STDERR_BYTES:
            stderr.extend(data[: MAX_STDERR_BYTES - len(stderr)])

    while True:
        progressed = False
        while chan.recv_ready():
            data = chan.recv(_READ_CHUNK)
            if not data:
                break
            progressed = True
            out(shell.stdout.feed(data) if shell is not None else data)
            if result.capped:
                return
        while chan.recv_stderr_ready():
            data = chan.recv_stderr(_READ_CHUNK)
            if not data:
                break
            progressed = True
            err(shell.stderr.feed(data) if shell is not None else data)
        if shell is not None and shell.finished:
            return
        idle = not chan.recv_ready() and not chan.recv_stderr_ready()
        # Done at the remote EOF, not at the exit status: OpenSSH may send the status while
        # output is still draining from the command's pipes.
        if idle and (chan.eof_received or chan.closed):
            if shell is not None:  # the shell itself ended (killed, or `exit` in a startup file)
                out(shell.stdout.flush())
                err(shell.stderr.flush())
                shell.dead = True
            return
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            result.timed_out = True
            return
        if not progressed:
            select.select([chan], [], [], min(remaining, 0.5))


class _EndMarker:
    """Passes a stream on up to `\\0logdoctor-end-NONCE:STATUS\\0`, the line `_Shell` prints after each command.

    The nonce is random per session, so no log line can end a command early; a marker split between
    two reads is found because the last bytes that could start one are held back: only a tail that is the
    start of the marker (from a NUL on), so a stream that pauses (`watch HOST` following a quiet log) passes
    on everything it has sent."""

    def __init__(self, nonce: bytes) -> None:
        self.prefix = b"\0logdoctor-end-" + nonce + b":"
        self.reset()

    def reset(self) -> None:
        self.pending = b""
        self.done = False
        self.status: int | None = None
        self.sent_bytes: int | None = None

    def feed(self, data: bytes) -> bytes:
        if self.done:
            return b""
        buf = self.pending + data if self.pending else data
        at = buf.find(self.prefix)
        if at < 0:
            keep = 0
            nul = buf.find(b"\0", max(0, len(buf) - len(self.prefix) + 1))
            while nul >= 0:
                if self.prefix.startswith(buf[nul:]):
                    keep = len(buf) - nul
                    break
                nul = buf.find(b"\0", nul + 1)
            self.pending = buf[len(buf) - keep :] if keep else b""
            return buf[: len(buf) - keep]
        end = buf.find(b"\0", at + len(self.prefix))
        if end < 0:  # the status has not arrived yet
            self.pending = buf[at:]
            return buf[:at]
        self.status, self.sent_bytes = _frame_payload(buf[at + len(self.prefix) : end])
        self.done = True
        self.pending = b""
        return buf[:at]

    def flush(self) -> bytes:
        rest, self.pending = self.pending, b""
        return rest


_FRAME_STATUS_RE = re.compile(rb"(?:^|\n)s (\d+)(?:\n|$)")
_FRAME_BYTES_RE = re.compile(rb"(\d+) bytes")


def _frame_payload(payload: bytes) -> tuple[int | None, int | None]:
    """(exit status, stdout bytes) of an end frame: a bare status (`7`), or what `ld_run` prints:
    `s STATUS` and dd's own count (`... 1234 bytes (1.2 kB) copied ...`) in either order."""
    if payload.isdigit():
        return int(payload), None
    status = _FRAME_STATUS_RE.search(payload)
    count = _FRAME_BYTES_RE.search(payload)
    return (int(status.group(1)) if status else None), (int(count.group(1)) if count else None)


# Sent once to each shared `sh -s` (its fd 3 is the session's stdin). `ld_run COMMAND` runs COMMAND in a
# process group of its own (setsid), stdout counted by dd, while a watcher waits on the session's
# stdin: logdoctor never writes to it while a command runs, so the watcher wakes only at EOF, i.e.
# when the channel is closed (a time limit, a byte cap) or the connection is cut, and then kills the
# whole group (TERM, then KILL a second later; once woken it ignores the TERM the frame sends it when
# the command ends, so the KILL always follows), so nothing of ours keeps running on the host. Hosts
# without setsid or dd get the plain frame (exit status only).
SHELL_PRELUDE = r"""ld_kill() { kill -TERM -"$1" 2>/dev/null || kill -TERM "$1" 2>/dev/null; sleep 1; kill -KILL -"$1" 2>/dev/null; }
ld_run() {
  exec 4>&1
  ld_r=$( { { setsid sh -c "$1" </dev/null 3<&- 4>&- 5>&- & ld_p=$!
    { read -r ld_x <&3; trap '' TERM; ld_kill "$ld_p"; } </dev/null >/dev/null 2>&1 4>&- 5>&- & ld_w=$!
    wait "$ld_p"; ld_s=$?; kill -KILL -"$ld_p" 2>/dev/null
    kill "$ld_w" 2>/dev/null; wait "$ld_w" 2>/dev/null
    echo "s $ld_s" >&5; } | LC_ALL=C dd bs=65536 2>&1 >&4 4>&- 5>&-; } 5>&1 )
  exec 4>&-
}
if command -v setsid >/dev/null 2>&1 && command -v dd >/dev/null 2>&1; then ld_safe=1; else ld_safe=; fi
"""


class _Shell:
    """One `sh -s` on the host that runs the collection's commands one after another.

    Each command is written to the shell's stdin as

        COMMAND </dev/null; printf '\\000logdoctor-end-NONCE:%s\\000' "$?"; printf '...:0\\000' >&2

    and its output ends at the markers (stdout and stderr). The command text is exactly what a
    session of its own would run (the manifest records it), with stdin from /dev/null as before."""

    def __init__(self, chan: paramiko.Channel) -> None:
        self.chan = chan
        nonce = secrets.token_hex(12).encode()
        self.stdout = _EndMarker(nonce)
        self.stderr = _EndMarker(nonce)
        self.end = b"printf '\\000logdoctor-end-" + nonce + b":%s\\000' "
        self.dead = False
        self.prelude_sent = False

    def begin(self, wait: float) -> bool:
        """Start `sh -s` once the login shell's startup files have run, and wait until it says so.

        The markers are printed by the login shell just before it execs `sh -s`; whatever its startup
        files printed before them is dropped. False when they do not come within `wait` seconds (a
        startup file that reads stdin would otherwise eat the first command)."""
        self.chan.exec_command(self.end + b"0; " + self.end + b"0 >&2; exec sh -s 3<&0")
        deadline = time.monotonic() + wait
        while not self.finished:
            if self.chan.recv_ready():
                self.stdout.feed(self.chan.recv(_READ_CHUNK))
            elif self.chan.recv_stderr_ready():
                self.stderr.feed(self.chan.recv_stderr(_READ_CHUNK))
            elif self.chan.eof_received or self.chan.closed or time.monotonic() >= deadline:
                return False
            else:
                select.select([self.chan], [], [], max(0.0, min(deadline - time.monotonic(), 0.5)))
        return True

    def start(self, command: bytes) -> paramiko.Channel:
        self.stdout.reset()
        self.stderr.reset()
        prelude = b"" if self.prelude_sent else SHELL_PRELUDE.encode()
        self.prelude_sent = True
        quoted = shlex.quote(command.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
        self.chan.sendall(
            prelude
            + b'if [ -n "$ld_safe" ]; then ld_run '
            + quoted
            + b"; "
            + self.end
            + b'"$ld_r"; else '
            + command
            + b" </dev/null; "
            + self.end
            + b'"$?"; fi; '
            + self.end
            + b"0 >&2\n"
        )
        return self.chan

    @property
    def usable(self) -> bool:
        """False once the shell ended or was closed: the next command opens a new session."""
        return not (self.dead or self.chan.closed or self.chan.eof_received or self.chan.exit_status_ready())

    @property
    def finished(self) -> bool:
        return self.stdout.done and self.stderr.done

    @property
    def status(self) -> int | None:
        return self.stdout.status

    def close(self) -> None:
        self.dead = True
        # a cut connection is already gone: paramiko raises on close, and there is nothing left to close
        with contextlib.suppress(paramiko.SSHException, EOFError, OSError):
            close_channel(self.chan)


def close_channel(chan: paramiko.Channel) -> None:
    """`chan.close()`, safe while the host still sends (a command cut at its byte cap: `yes` writes on).

    paramiko's close() closes the pipe that `select` on the channel waits on, but the channel's buffers keep
    signalling it: data that arrives before the host acknowledges the close writes to a closed (or reused)
    descriptor in the transport's thread, which dies of EBADF and takes the connection with it. The buffers
    are told first that nobody waits any more (their `_event`; the attribute paramiko 2.x-4.x has)."""
    for buffer in (getattr(chan, "in_buffer", None), getattr(chan, "in_stderr_buffer", None)):
        lock = getattr(buffer, "_lock", None)
        if lock is not None and hasattr(buffer, "_event"):
            with lock:
                buffer._event = None  # type: ignore[union-attr]
    chan.close()


def connect_timeout(host: ResolvedHost, settings: ConnectSettings) -> float:
    """--timeout wins over the config's ConnectTimeout."""
    if settings.timeout is not None:
        return settings.timeout
    return host.connect_timeout or DEFAULT_TIMEOUT


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    if isinstance(exc, OSError) and exc.strerror:
        text = exc.strerror
    return text or type(exc).__name__


def _parse_hop(hop: str) -> tuple[str, str | None, int | None]:
    """`[user@]host[:port]` or `ssh://user@host:port` of a ProxyJump list entry."""
    target = parse_target(hop)
    return target.host, target.user, target.port


def _open_socket(
    host: ResolvedHost,
    settings: ConnectSettings,
    config: SshConfig,
    gateways: list[paramiko.SSHClient],
    notes: list[str],
    depth: int,
) -> socket.socket | paramiko.Channel | paramiko.ProxyCommand:
    timeout = connect_timeout(host, settings)
    if host.proxy_jump:
        hop_alias, hop_user, hop_port = _parse_hop(host.proxy_jump[-1])
        hop = resolve(hop_alias, config, user=hop_user, port=hop_port, identity_files=settings.identity_files)
        if len(host.proxy_jump) > 1:
            hop = replace(hop, proxy_jump=host.proxy_jump[:-1], proxy_command=None)
        gateway = _connect(hop, settings, config, gateways, notes, depth + 1)
        gateways.append(gateway)
        transport = gateway.get_transport()
        assert transport is not None
        try:
            return transport.open_channel("direct-tcpip", (host.hostname, host.port), ("127.0.0.1", 0), timeout=timeout)
        except (paramiko.SSHException, EOFError, OSError) as exc:
            raise RemoteFailure(
                f"unreachable: jump host {hop.address} could not open a connection to {host.hostname}:{host.port}: {_describe(exc)}",
                "unreachable",
            ) from exc
    if host.proxy_command:
        try:
            return paramiko.ProxyCommand(host.proxy_command)
        except (paramiko.SSHException, OSError) as exc:
            raise RemoteFailure(f"ProxyCommand failed to start: {_describe(exc)}", "unreachable") from exc
    try:
        return socket.create_connection((host.hostname, host.port), timeout=timeout)
    except socket.gaierror as exc:
        raise RemoteFailure(f"unreachable: cannot resolve host name {host.hostname!r}", "unreachable") from exc
    except TimeoutError as exc:
        raise RemoteFailure(
            f"timeout: no TCP connection to {host.hostname}:{host.port} within {timeout:g}s", "timeout"
        ) from exc
    except ConnectionRefusedError as exc:
        raise RemoteFailure(
            f"unreachable: connection refused by {host.hostname}:{host.port} (no SSH server on that port?)",
            "unreachable",
        ) from exc
    except OSError as exc:
        kind = "timeout" if exc.errno == errno.ETIMEDOUT else "unreachable"
        raise RemoteFailure(f"{kind}: cannot connect to {host.hostname}:{host.port}: {_describe(exc)}", kind) from exc


def _connect(
    host: ResolvedHost,
    settings: ConnectSettings,
    config: SshConfig,
    gateways: list[paramiko.SSHClient],
    notes: list[str],
    depth: int,
) -> paramiko.SSHClient:
    if depth > MAX_JUMP_DEPTH:
        raise RemoteFailure(f"ProxyJump chain deeper than {MAX_JUMP_DEPTH} hops (a loop?) at {host.alias}", "config")
    timeout = connect_timeout(host, settings)
    sock = _open_socket(host, settings, config, gateways, notes, depth)
    client = paramiko.SSHClient()
    if settings.known_hosts is not None:
        user_files: tuple[str, ...] = (os.path.expanduser(settings.known_hosts),)
        global_files: tuple[str, ...] = ()
    else:
        user_files, global_files = host.user_known_hosts, host.global_known_hosts
    # No key is handed to paramiko: it then asks the policy about every key, and the policy decides
    # with OpenSSH's matching rules (patterns, negations, several lines a host, @revoked).
    policy = _HostKeyPolicy(
        host, user_files + global_files, settings.accept_new, user_files[0] if user_files else None, notes
    )
    client.set_missing_host_key_policy(policy)

    keys = [p for p in host.identity_files if os.path.isfile(p)]
    for missing in (p for p in host.identity_files if not os.path.isfile(p)):
        notes.append(f"identity file {missing} not found (skipped)")
    use_agent = settings.use_agent and host.use_agent and not host.identities_only
    look_for_keys = settings.use_default_keys and not host.identities_only
    try:
        client.connect(
            hostname=host.hostname,
            port=host.port,
            username=host.user,
            key_filename=keys or None,  # type: ignore[arg-type]  # paramiko takes a list; the stub says str
            allow_agent=use_agent,
            look_for_keys=look_for_keys,
            # paramiko's `timeout` here bounds the whole key exchange; the banner gets `timeout` itself,
            # so a silent server is reported as such rather than as a vague negotiation failure.
            timeout=timeout * 2 + 5,
            banner_timeout=timeout,
            auth_timeout=timeout,
            channel_timeout=timeout,
            sock=sock,
            compress=host.compression,
        )
    except HostKeyError:
        client.close()
        raise
    except RemoteFailure:
        client.close()
        raise
    except paramiko.AuthenticationException as exc:
        client.close()
        if "timeout" in str(exc).lower():
            raise RemoteFailure(
                f"timeout: no answer to authentication from {host.address} within {timeout:g}s", "timeout"
            ) from exc
        offered = [*keys]
        if use_agent and os.environ.get("SSH_AUTH_SOCK"):
            offered.append("ssh-agent keys")
        if look_for_keys:
            offered.append("default keys ~/.ssh/id_*")
        allowed = ""
        if isinstance(exc, paramiko.BadAuthenticationType):
            allowed = f"; the server only accepts {', '.join(exc.allowed_types)} (logdoctor uses keys and the agent, never passwords)"
        raise RemoteFailure(
            f"authentication failed for {host.address} (offered: {', '.join(offered) or 'no keys'}){allowed}; "
            f"give the right key with -i/--identity or IdentityFile in your ssh config",
            "auth",
        ) from exc
    except paramiko.SSHException as exc:
        client.close()
        text = str(exc)
        if "no existing session" in text.lower() or "negotiation" in text.lower():
            raise RemoteFailure(
                f"timeout: SSH key exchange with {host.hostname}:{host.port} did not finish within {timeout * 2 + 5:g}s",
                "timeout",
            ) from exc
        if "banner" in text.lower():
            raise RemoteFailure(
                f"timeout: {host.hostname}:{host.port} sent no SSH banner within {timeout:g}s (not an SSH server, or overloaded)",
                "timeout",
            ) from exc
        raise RemoteFailure(f"SSH handshake with {host.address} failed: {_describe(exc)}", "protocol") from exc
    except TimeoutError as exc:
        client.close()
        raise RemoteFailure(
            f"timeout: {host.address} did not complete the SSH handshake within {timeout:g}s", "timeout"
        ) from exc
    except (EOFError, OSError) as exc:
        client.close()
        raise RemoteFailure(
            f"unreachable: {host.address} closed the connection during the handshake: {_describe(exc)}", "unreachable"
        ) from exc
    if policy.accepted:
        notes.append(policy.accepted)
    return client
