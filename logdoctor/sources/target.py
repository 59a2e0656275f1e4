"""Host targets on the command line: `[user@]host[:port]`, `ssh://user@host:port`, or an ssh-config alias.

    parse_target("root@kpro5")            -> Target(host="kpro5", user="root", port=None)
    parse_target("ssh://ops@10.0.0.7:2222") -> Target(host="10.0.0.7", user="ops", port=2222)
    parse_target("[fe80::1]:22")          -> Target(host="fe80::1", user=None, port=22)

`looks_like_host` decides whether a `logdoctor diagnose` argument is a host or a file: a local path
that exists always wins; a name ending in a log-file suffix (`.log`, `.gz`, ...) is a path.
"""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from logdoctor.errors import InputError

LOG_SUFFIXES = (".log", ".gz", ".txt", ".out", ".err", ".json", ".jsonl", ".csv", ".xz", ".zst", ".bz2")
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME_RE = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*\.?$")
_USER_RE = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_.@-]*\$?$")


@dataclass(frozen=True)
class Target:
    """A host to collect from, as the user wrote it (`label`), not yet resolved through ssh config."""

    host: str
    user: str | None = None
    port: int | None = None
    label: str = ""

    def __str__(self) -> str:
        return self.label or self.host


def _port(text: str, arg: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise InputError(f"{arg}: bad port {text!r} (expected 1-65535)")
    return int(text)


def _check_host(host: str, arg: str) -> str:
    if not host:
        raise InputError(f"{arg}: no host name")
    if host.startswith("-") or any(ch.isspace() or ch in "/\\'\"`$;&|<>(){}*?!" for ch in host):
        raise InputError(f"{arg}: {host!r} is not a host name")
    return host


def _check_user(user: str, arg: str) -> str:
    if not _USER_RE.match(user):
        raise InputError(f"{arg}: {user!r} is not a user name")
    return user


def parse_target(arg: str) -> Target:
    """Split a target into user, host and port; raise InputError (exit 2) on a malformed one."""
    text = arg.strip()
    if text.startswith("ssh://"):
        parts = urlsplit(text)
        if parts.path not in ("", "/") or parts.query or parts.fragment:
            raise InputError(f"{arg}: an ssh:// target is ssh://[user@]host[:port] (no path)")
        try:
            url_port = parts.port
        except ValueError as exc:
            raise InputError(f"{arg}: bad port") from exc
        # urlsplit lower-cases hostnames; keep the user's spelling (aliases are case-sensitive).
        netloc_host = parts.netloc.rpartition("@")[2]
        netloc_host = (
            netloc_host[1:].partition("]")[0] if netloc_host.startswith("[") else netloc_host.partition(":")[0]
        )
        url_user = unquote(parts.username) if parts.username else None
        return Target(
            host=_check_host(netloc_host or parts.hostname or "", arg),
            user=_check_user(url_user, arg) if url_user else None,
            port=url_port,
            label=text.removeprefix("ssh://").rstrip("/"),
        )
    user: str | None = None
    rest = text
    if "@" in text:
        user, _, rest = text.rpartition("@")
        if not user:
            raise InputError(f"{arg}: empty user name before '@'")
        _check_user(user, arg)
    port: int | None = None
    if rest.startswith("["):
        host, sep, after = rest[1:].partition("]")
        if not sep:
            raise InputError(f"{arg}: missing ']' after an IPv6 address")
        if after:
            if not after.startswith(":"):
                raise InputError(f"{arg}: unexpected {after!r} after ']'")
            port = _port(after[1:], arg)
    elif rest.count(":") == 1:
        host, _, port_text = rest.partition(":")
        port = _port(port_text, arg)
    else:
        host = rest  # a name, or a bare IPv6 address (several colons, no port)
        if host.count(":") > 1:
            try:
                ipaddress.IPv6Address(host)
            except ValueError as exc:
                raise InputError(f"{arg}: {host!r} is not a host name or IPv6 address") from exc
    return Target(host=_check_host(host, arg), user=user, port=port, label=text)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def looks_like_host(arg: str, *, aliases: frozenset[str] | set[str] = frozenset()) -> bool:
    """True when `arg` should be collected over SSH rather than opened as a local file.

    An existing local path (or `-`) is never a host. `aliases` are the explicit Host names of the
    user's ssh config (`SshConfig.aliases()`): a bare alias such as `kpro5` is a host even though it
    looks like a file name.
    """
    if arg in ("", "-") or os.path.exists(arg):
        return False
    if arg.startswith("ssh://"):
        return True
    if "/" in arg or "\\" in arg:
        return False
    try:
        target = parse_target(arg)
    except InputError:
        return False
    if target.host in aliases:
        return True
    if target.user is not None or target.port is not None or _is_ip(target.host):
        return True
    if target.host.lower().endswith(LOG_SUFFIXES):
        return False
    return bool(_HOSTNAME_RE.match(target.host))
