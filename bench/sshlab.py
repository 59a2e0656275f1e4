"""Throw-away OpenSSH servers on loopback addresses, for the SSH benchmark (bench/bench_ssh.py).

    with ssh_lab(hosts=20) as lab:        # sshd on 127.0.0.2 ... 127.0.0.21, one free port each
        subprocess.run(["ssh", "-F", str(lab.ssh_config), "h1", "true"])

Everything lives in one temporary directory (host keys, the user key, sshd configs and logs, a
known_hosts listing every server, an ssh config with the aliases h1 ... hN), removed at the end.
Each sshd runs in its own session (`start_new_session`), dies with this process (PR_SET_PDEATHSIG),
and is stopped at the end with its process group and any connection processes still under it.
The same approach as the SSH tests' fixture (tests/sources/conftest.py), without pytest.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

SSHD = "/usr/sbin/sshd"
FIRST_ADDRESS = 2  # 127.0.0.2; 127.0.0.1 is left to whatever else listens on the machine
MAX_HOSTS = 200

SSHD_CONFIG = """\
ListenAddress {address}:{port}
HostKey {host_key}
PidFile {pidfile}
AuthorizedKeysFile {authorized}
StrictModes no
UsePAM no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
PrintMotd no
LogLevel ERROR
MaxStartups 100
MaxSessions 50
"""

CLIENT_BLOCK = """\
Host {alias}
    HostName {address}
    Port {port}
    User root
    IdentityFile {key}
    IdentitiesOnly yes
    UserKnownHostsFile {known_hosts}
    GlobalKnownHostsFile /dev/null
    StrictHostKeyChecking yes
    BatchMode yes
    ConnectTimeout 10

"""


class LabError(RuntimeError):
    """The lab could not be set up (no sshd, not root, a server that does not answer)."""


def die_with_parent() -> None:
    """preexec_fn: SIGTERM the child when the benchmark dies (a killed run leaves no sshd behind)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _keygen(path: Path) -> Path:
    proc = subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"logdoctor-bench-{path.name}", "-f", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise LabError(f"ssh-keygen failed: {proc.stderr.strip()}")
    return path


def _free_port(address: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((address, 0))
        port: int = s.getsockname()[1]
        return port


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid` (children first), from /proc/PID/task/*/children."""
    out: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children") as fh:
                    kids = [int(k) for k in fh.read().split()]
            except OSError:
                continue
            out.extend(kids)
            todo.extend(kids)
    return out


def children_cpu_seconds(pid: int) -> float:
    """CPU (user + sys) of the waited-for children of `pid` (cutime + cstime of /proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rpartition(")")[2].split()
    # fields[0] is field 3 (state) of proc(5); cutime and cstime are fields 16 and 17
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def loopback_bytes() -> int:
    """Bytes received so far on the loopback interface: what crossed the "wire" between client and servers."""
    with open("/proc/net/dev") as fh:
        for line in fh:
            name, _, counters = line.partition(":")
            if name.strip() == "lo":
                return int(counters.split()[0])
    return 0


@dataclass
class Sshd:
    alias: str
    address: str
    port: int
    host_key: Path
    process: subprocess.Popen[bytes]

    def known_hosts_line(self) -> str:
        kind, blob = Path(f"{self.host_key}.pub").read_text().split()[:2]
        return f"[{self.address}]:{self.port} {kind} {blob}\n"


@dataclass
class Lab:
    root: Path
    user_key: Path
    known_hosts: Path
    ssh_config: Path
    servers: list[Sshd] = field(default_factory=list)

    @property
    def aliases(self) -> list[str]:
        return [s.alias for s in self.servers]

    def remote_cpu_seconds(self) -> float:
        """CPU used so far by the finished SSH sessions of every server (sshd, sh, grep, awk, ...)."""
        return sum(children_cpu_seconds(s.process.pid) for s in self.servers)

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Wait until every session process has exited and been reaped (so its CPU is counted)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not any(descendants(s.process.pid) for s in self.servers):
                return True
            time.sleep(0.02)
        return False


def _wait_for_banner(server: Sshd, log: Path, deadline: float) -> None:
    last = "no answer"
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise LabError(f"sshd on {server.address} exited: {log.read_text(errors='replace').strip()[-500:]}")
        try:
            with socket.create_connection((server.address, server.port), timeout=1) as s:
                if s.recv(64).startswith(b"SSH-2.0-"):
                    return
        except OSError as exc:
            last = str(exc)
        time.sleep(0.05)
    raise LabError(f"sshd on {server.address}:{server.port} sent no SSH banner within 10 s ({last})")


def _start_sshd(root: Path, index: int, authorized: Path) -> Sshd:
    alias = f"h{index}"
    address = f"127.0.0.{FIRST_ADDRESS + index - 1}"
    host_key = _keygen(root / f"{alias}_host_ed25519")
    port = _free_port(address)
    config = root / f"{alias}_sshd_config"
    config.write_text(
        SSHD_CONFIG.format(
            address=address, port=port, host_key=host_key, pidfile=root / f"{alias}.pid", authorized=authorized
        )
    )
    log = root / f"{alias}_sshd.log"
    with open(log, "wb") as log_fh:
        process = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=log_fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=die_with_parent,
        )
    return Sshd(alias, address, port, host_key, process)


def stop(servers: list[Sshd]) -> None:
    """SIGTERM each sshd's process group and whatever session processes are still under it; SIGKILL after 5 s."""
    doomed: list[int] = []
    for server in servers:
        if server.process.poll() is None:
            doomed.extend(descendants(server.process.pid))  # session processes live in sessions of their own
            with suppress(ProcessLookupError):
                os.killpg(server.process.pid, signal.SIGTERM)
    for pid in doomed:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    for server in servers:
        try:
            server.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(server.process.pid, signal.SIGKILL)
            server.process.wait()


@contextmanager
def ssh_lab(hosts: int) -> Iterator[Lab]:
    """`hosts` sshd servers h1 ... hN on 127.0.0.2 ... ; stopped and their directory removed at the end."""
    if not 1 <= hosts <= MAX_HOSTS:
        raise LabError(f"between 1 and {MAX_HOSTS} hosts, not {hosts}")
    if not os.access(SSHD, os.X_OK):
        raise LabError(f"{SSHD} is missing: run `make sshd` (Debian's openssh-server)")
    for tool in ("ssh", "ssh-keygen"):
        if shutil.which(tool) is None:
            raise LabError(f"{tool} is missing: apt-get install openssh-client")
    if os.geteuid() != 0:
        raise LabError("the SSH benchmark starts sshd and logs in as root: run it as root")
    root = Path(tempfile.mkdtemp(prefix="logdoctor-bench-ssh-"))
    servers: list[Sshd] = []
    try:
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege-separation directory
        user_key = _keygen(root / "id_user")
        authorized = root / "authorized_keys"
        authorized.write_text(Path(f"{user_key}.pub").read_text())
        lab = Lab(root=root, user_key=user_key, known_hosts=root / "known_hosts", ssh_config=root / "ssh_config")
        for index in range(1, hosts + 1):
            servers.append(_start_sshd(root, index, authorized))
        deadline = time.monotonic() + 10
        for server in servers:
            _wait_for_banner(server, root / f"{server.alias}_sshd.log", deadline)
        lab.servers = servers
        lab.known_hosts.write_text("".join(s.known_hosts_line() for s in servers))
        lab.ssh_config.write_text(
            "".join(
                CLIENT_BLOCK.format(
                    alias=s.alias, address=s.address, port=s.port, key=user_key, known_hosts=lab.known_hosts
                )
                for s in servers
            )
        )
        yield lab
    finally:
        stop(servers)
        shutil.rmtree(root, ignore_errors=True)
