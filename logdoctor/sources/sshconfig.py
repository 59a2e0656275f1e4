"""The user's OpenSSH client configuration, read the way `ssh` reads it, for the SSH collector.

paramiko's `SSHConfig` does the Host/Match lookup and token expansion but ignores `Include`, so the
files are expanded here first (globs, `~`, paths relative to ~/.ssh or /etc/ssh, a depth limit like
OpenSSH's 16) and then handed to paramiko as one text. A target such as `root@kpro5` resolves to:

    Host kpro5                 ->  ResolvedHost(alias="kpro5", hostname="127.0.0.2", port=2222,
        HostName 127.0.0.2              user="root", identity_files=("/home/me/.ssh/gpu",), ...)
        Port 2222
        IdentityFile ~/.ssh/gpu

Precedence, as with `ssh`: command-line options, then the target string (`user@`, `:port`), then the
user's config, then the system config (/etc/ssh/ssh_config, only when no --ssh-config was given).
"""

from __future__ import annotations

import getpass
import glob
import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import paramiko

from logdoctor.errors import ConfigError

MAX_INCLUDE_DEPTH = 16  # OpenSSH's READCONF_MAX_DEPTH
SYSTEM_CONFIG = "/etc/ssh/ssh_config"
_INCLUDE_RE = re.compile(r"^\s*include(?:\s*=\s*|\s+)(?P<args>.+?)\s*$", re.IGNORECASE)
_BLOCK_RE = re.compile(r"^\s*(?:host|match)(?:\s*=\s*|\s+)", re.IGNORECASE)


def expand_includes(path: str | os.PathLike[str], *, relative_to: str | None = None) -> str:
    """The text of an ssh config file with every `Include` replaced by the files it names.

    `relative_to` is where relative Include paths point (OpenSSH: ~/.ssh for a user's config,
    /etc/ssh for the system one). After an included file, the including block's `Host`/`Match`
    line is repeated, because OpenSSH restores the outer block's state when an Include ends.
    """
    base = relative_to if relative_to is not None else str(Path.home() / ".ssh")
    return _expand(Path(path), base, depth=0, stack=())


def _expand(path: Path, base: str, depth: int, stack: tuple[str, ...]) -> str:
    real = os.path.realpath(path)
    if real in stack:
        raise ConfigError(f"{path}: Include loop ({' -> '.join([*stack, real])})")
    if depth > MAX_INCLUDE_DEPTH:
        raise ConfigError(f"{path}: Include nested more than {MAX_INCLUDE_DEPTH} levels deep")
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ssh config: {exc.strerror or exc}") from exc
    out: list[str] = []
    block_header = "Host *"
    for line in text.splitlines():
        if _BLOCK_RE.match(line):
            block_header = line.strip()
            out.append(line)
            continue
        m = _INCLUDE_RE.match(line)
        if m is None:
            out.append(line)
            continue
        try:
            patterns = shlex.split(m.group("args"), comments=True)
        except ValueError as exc:
            raise ConfigError(f"{path}: bad Include line {line.strip()!r}: {exc}") from exc
        out.append(f"# Include {m.group('args')}")
        for pattern in patterns:
            pattern = os.path.expanduser(pattern)
            if not os.path.isabs(pattern):
                pattern = os.path.join(base, pattern)
            for included in sorted(glob.glob(pattern)):
                if os.path.isdir(included):
                    continue
                out.append(_expand(Path(included), base, depth + 1, (*stack, real)))
                # OpenSSH restores the including block once the included file ends.
                out.append(block_header)
    return "\n".join(out) + "\n"


@dataclass(frozen=True)
class SshConfig:
    """The user's config and (when no explicit file was given) the system config, lookups merged."""

    user: paramiko.SSHConfig
    system: paramiko.SSHConfig | None
    path: str | None

    def lookup(self, alias: str) -> dict[str, object]:
        try:
            merged: dict[str, object] = dict(self.user.lookup(alias))
            if self.system is not None:
                for key, value in self.system.lookup(alias).items():
                    # `hostname` is always present (paramiko fills in the alias): the user's wins.
                    if key == "identityfile" and "identityfile" in merged:
                        continue
                    merged.setdefault(key, value)
        except paramiko.SSHException as exc:
            raise ConfigError(f"{self.path or 'ssh config'}: {exc}") from exc
        return merged

    def aliases(self) -> set[str]:
        """Explicit (non-wildcard) Host names: what `looks_like_host` accepts without a dot or @."""
        names: set[str] = set()
        for cfg in (self.user, self.system):
            if cfg is None:
                continue
            for name in cfg.get_hostnames():
                if not any(ch in name for ch in "*?!") and name:
                    names.add(name)
        return names


def load_ssh_config(path: str | None = None) -> SshConfig:
    """`--ssh-config PATH` alone, else ~/.ssh/config (if present) layered over /etc/ssh/ssh_config."""
    if path is not None:
        if not os.path.exists(path) or os.path.isdir(path):  # `-F /dev/null` style is fine
            raise ConfigError(f"{path}: ssh config not found")
        return SshConfig(user=_parse(path, relative_to=None), system=None, path=path)
    user_path = Path.home() / ".ssh" / "config"
    user = _parse(str(user_path), relative_to=None) if user_path.is_file() else paramiko.SSHConfig()
    system = _parse(SYSTEM_CONFIG, relative_to="/etc/ssh") if os.path.isfile(SYSTEM_CONFIG) else None
    return SshConfig(user=user, system=system, path=str(user_path) if user_path.is_file() else None)


def _parse(path: str, relative_to: str | None) -> paramiko.SSHConfig:
    text = expand_includes(path, relative_to=relative_to)
    try:
        return paramiko.SSHConfig.from_text(text)
    except paramiko.SSHException as exc:
        raise ConfigError(f"{path}: {exc}") from exc


@dataclass(frozen=True)
class ResolvedHost:
    """Everything needed to open one SSH connection (a target or a ProxyJump hop)."""

    alias: str
    hostname: str
    port: int
    user: str
    identity_files: tuple[str, ...] = ()
    identities_only: bool = False
    use_agent: bool = True
    proxy_jump: tuple[str, ...] = ()
    proxy_command: str | None = None
    user_known_hosts: tuple[str, ...] = ()
    global_known_hosts: tuple[str, ...] = ()
    hash_known_hosts: bool = False
    compression: bool = False
    connect_timeout: float | None = None

    @property
    def address(self) -> str:
        return f"{self.user}@{self.hostname}:{self.port}"

    @property
    def known_hosts_name(self) -> str:
        """The name OpenSSH and paramiko file this host's key under in known_hosts."""
        return self.hostname if self.port == 22 else f"[{self.hostname}]:{self.port}"


def _as_bool(value: object) -> bool:
    return str(value).strip().lower() in ("yes", "true", "on")


def _paths(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    items = value if isinstance(value, list) else str(value).split()
    return tuple(os.path.expanduser(str(v)) for v in items if str(v).lower() != "none")


def resolve(
    alias: str,
    config: SshConfig,
    *,
    user: str | None = None,
    port: int | None = None,
    identity_files: Sequence[str] = (),
) -> ResolvedHost:
    """Apply ssh config to a host alias; explicit `user`/`port`/`identity_files` win over the config."""
    entry = config.lookup(alias)
    hostname = str(entry.get("hostname") or alias)
    try:
        cfg_port = int(str(entry["port"])) if "port" in entry else 22
    except ValueError as exc:
        raise ConfigError(f"{config.path or 'ssh config'}: bad Port for {alias}: {entry['port']!r}") from exc
    agent_setting = str(entry.get("identityagent", "")).lower()
    jump = str(entry.get("proxyjump") or "")
    proxy_command = entry.get("proxycommand")
    config_identities = _paths(entry.get("identityfile"))
    return ResolvedHost(
        alias=alias,
        hostname=hostname,
        port=port if port is not None else cfg_port,
        user=user or str(entry.get("user") or "") or getpass.getuser(),
        identity_files=tuple(os.path.expanduser(p) for p in identity_files) + config_identities,
        identities_only=_as_bool(entry.get("identitiesonly", "no")),
        use_agent=agent_setting != "none",
        proxy_jump=tuple(h.strip() for h in jump.split(",") if h.strip()) if jump.lower() != "none" else (),
        proxy_command=str(proxy_command) if proxy_command else None,
        user_known_hosts=_paths(entry.get("userknownhostsfile"))
        or (os.path.expanduser("~/.ssh/known_hosts"), os.path.expanduser("~/.ssh/known_hosts2")),
        global_known_hosts=_paths(entry.get("globalknownhostsfile"))
        or ("/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"),
        hash_known_hosts=_as_bool(entry.get("hashknownhosts", "no")),
        compression=_as_bool(entry.get("compression", "no")),
        connect_timeout=float(str(entry["connecttimeout"])) if "connecttimeout" in entry else None,
    )
