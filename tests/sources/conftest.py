"""Real OpenSSH servers on loopback addresses for the SSH collector tests.

`ssh_lab` (one per test session and xdist worker) starts `/usr/sbin/sshd -D -e -f CONFIG` twice:

    kpro5  127.0.0.2:<free port>   a plain host
    node2  127.0.0.3:<free port>   a "GPU host" whose PATH starts with fake nvidia-smi, docker,
                                   systemctl and journalctl; also the ProxyJump host of `behind-jump`

with host keys and a user key made by ssh-keygen, `StrictModes no`, `UsePAM no`, a PidFile and logs in
a temporary directory, a known_hosts for both, and an ssh config whose Include'd file defines the
aliases kpro5, node2 and behind-jump. Tests connect as root (CI runs as root) with the generated key;
`ssh_users` adds two throw-away users (one with passwordless sudo, one without).

Nothing is skipped: without sshd, or not running as root, the tests fail and say how to fix it
(`make sshd` installs Debian's openssh-server). Only 127.0.0.0/8 addresses are ever contacted.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from logdoctor.sources.ssh import SshOptions

SSHD = "/usr/sbin/sshd"
CORPUS = Path("/work/shared/corpus")
REPO_FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
# Real vLLM lines (corpus realworld/vllm-001.log), also inlined so the tests run where the corpus is absent.
VLLM_LINES = [
    "without mtp",
    "(APIServer pid=1422509) INFO 04-09 11:27:10 [loggers.py:259] Engine 000: Avg prompt throughput: 967.2 tokens/s, "
    "Avg generation throughput: 342.2 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.1%, "
    "Prefix cache hit rate: 44.5%, MM cache hit rate: 16.7%",
    "with mtp",
    "(APIServer pid=1409788) INFO 04-09 11:17:53 [loggers.py:259] Engine 000: Avg prompt throughput: 1357.9 tokens/s, "
    "Avg generation throughput: 128.3 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.2%, "
    "Prefix cache hit rate: 22.3%, MM cache hit rate: 6.5%",
    "(APIServer pid=1409788) INFO 04-09 11:17:53 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 1.97, "
    "Accepted throughput: 63.00 tokens/s, Drafted throughput: 65.20 tokens/s, Accepted: 630 tokens, Drafted: 652 tokens, "
    "Per-position acceptance rate: 0.966, Avg Draft acceptance rate: 96.6%",
]
KEYWORDS = ["Avg prompt throughput:", "SpecDecoding metrics:", "non-default args:", "LLM engine (v"]
DISCOVERY_LOCK = Path(tempfile.gettempdir()) / "logdoctor-sshtest-discovery.lock"


def vllm_log_lines() -> list[str]:
    path = CORPUS / "realworld" / "vllm-001.log"
    if path.is_file():
        return path.read_text(encoding="utf-8").splitlines()
    return list(VLLM_LINES)


def die_with_parent() -> None:
    """preexec_fn: SIGTERM this child when pytest dies (a killed test run leaves no sshd behind)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _fail(message: str) -> None:
    pytest.fail(f"SSH test setup: {message}", pytrace=False)


def _run(*argv: str) -> None:
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        _fail(f"{' '.join(argv)} failed (exit {proc.returncode}): {proc.stderr.strip()}")


def keygen(path: Path, kind: str = "ed25519") -> Path:
    _run("ssh-keygen", "-q", "-t", kind, "-N", "", "-C", f"logdoctor-test-{path.name}", "-f", str(path))
    return path


def free_port(address: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((address, 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class SshServer:
    name: str
    address: str
    port: int
    host_key: Path
    config: Path
    log: Path
    process: subprocess.Popen[bytes]

    @property
    def known_name(self) -> str:
        return f"[{self.address}]:{self.port}"

    def known_hosts_line(self) -> str:
        kind, blob = Path(f"{self.host_key}.pub").read_text().split()[:2]
        return f"{self.known_name} {kind} {blob}\n"

    def fingerprint(self) -> str:
        out = subprocess.run(
            ["ssh-keygen", "-l", "-E", "sha256", "-f", f"{self.host_key}.pub"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return out.split()[1]  # "256 SHA256:... comment (ED25519)"

    def accepted_logins(self) -> int:
        return self.log.read_text(errors="replace").count("Accepted publickey")


@dataclass
class SshLab:
    root: Path
    user_key: Path
    wrong_key: Path
    known_hosts: Path
    ssh_config: Path
    authorized: Path
    servers: dict[str, SshServer] = field(default_factory=dict)

    def options(self, **overrides: Any) -> SshOptions:
        base = SshOptions(
            ssh_config=str(self.ssh_config),
            known_hosts=str(self.known_hosts),
            timeout=5.0,
            use_agent=False,
            use_default_keys=False,
            facts=False,
            command_timeout=60.0,
        )
        return replace(base, **overrides)

    def authorize(self, user: str, key: Path | None = None) -> None:
        (self.authorized / user).write_text(Path(f"{key or self.user_key}.pub").read_text())


SSHD_CONFIG = """\
ListenAddress {address}:{port}
HostKey {host_key}
PidFile {pidfile}
AuthorizedKeysFile {authorized}/%u
StrictModes no
UsePAM no
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
AllowTcpForwarding yes
PrintMotd no
LogLevel VERBOSE
MaxStartups 100
MaxSessions 50
{extra}
"""


def _wait_for_banner(server: SshServer, deadline: float) -> str | None:
    """None when sshd answers with an SSH banner; else why not."""
    last = "no answer"
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            return f"sshd exited with status {server.process.returncode}"
        try:
            with socket.create_connection((server.address, server.port), timeout=1) as s:
                if s.recv(64).startswith(b"SSH-2.0-"):
                    return None
        except OSError as exc:
            last = str(exc)
        time.sleep(0.05)
    return f"no SSH banner within 10s ({last})"


def start_sshd(lab_root: Path, name: str, address: str, authorized: Path, extra: str = "") -> SshServer:
    host_key = keygen(lab_root / f"{name}_host_ed25519")
    problems: list[str] = []
    for _attempt in range(5):  # a port picked free can be taken by another xdist worker before sshd binds it
        port = free_port(address)
        config = lab_root / f"{name}_sshd_config"
        log = lab_root / f"{name}_sshd.log"
        config.write_text(
            SSHD_CONFIG.format(
                address=address,
                port=port,
                host_key=host_key,
                pidfile=lab_root / f"{name}_sshd.pid",
                authorized=authorized,
                extra=extra,
            )
        )
        with open(log, "wb") as log_fh:
            process = subprocess.Popen(
                [SSHD, "-D", "-e", "-f", str(config)],
                stdout=log_fh,
                stderr=subprocess.STDOUT,
                preexec_fn=die_with_parent,
            )
        server = SshServer(name, address, port, host_key, config, log, process)
        why = _wait_for_banner(server, time.monotonic() + 10)
        if why is None:
            return server
        process.kill()
        process.wait()
        problems.append(f"{why}; sshd said: {log.read_text(errors='replace').strip()[-500:]}")
    _fail(f"sshd for {name} on {address} did not start: " + " | ".join(problems))
    raise AssertionError("unreachable")


FAKE_NVIDIA_SMI = """#!/bin/sh
# fake nvidia-smi: prints captured output of a 2xH200 host (topology, GPU list) and, for the GPU state, the
# compute processes and -q -d PERFORMANCE, the real captures of an H200 under load in fixtures/inputs/env
case "$*" in
  "topo -m") cat {corpus}/nvidia-smi-topo-m.txt ;;
  "topo -p2p r") cat {corpus}/nvidia-smi-topo-p2p.txt ;;
  "--query-gpu=index,name,pci.bus_id,memory.total,driver_version --format=csv") cat {corpus}/nvidia-smi-query.csv ;;
  --query-gpu=*) cat {env}/query-gpu-h200-load-captured.csv ;;
  --query-compute-apps=*) cat {env}/compute-apps-h200-load-captured.csv ;;
  "-q -d PERFORMANCE") cat {env}/nvidia-smi-q-d-performance-h200-load-excerpt.txt ;;
  *) echo "fake nvidia-smi: unsupported $*" >&2; exit 2 ;;
esac
"""
ENV_CAPTURES = Path(__file__).resolve().parents[2] / "fixtures" / "inputs" / "env"
KERNEL_LOG = "kernel.log"  # in the lab's root, what the fake `journalctl -k` prints: empty unless a test fills it

FAKE_DOCKER = """#!/bin/sh
# fake docker: one running vLLM container whose logs carry docker --timestamps
cid=4f2c9a1b7d3e4f2c9a1b7d3e4f2c9a1b7d3e4f2c9a1b7d3e4f2c9a1b7d3e4f2c
case "$1" in
  ps) echo "$cid|vllm/vllm-openai:v0.11.0|vllm-qwen|\\"vllm serve Qwen/Qwen3-8B\\""
      echo "0123456789ab0123456789ab0123456789ab0123456789ab0123456789ab0123|redis:7|cache|\\"redis-server\\"" ;;
  inspect) [ "$4" = "$cid" ] || [ "$4" = vllm-qwen ] || { echo "Error: No such object: $4" >&2; exit 1; }; echo "$cid" ;;
  logs) n=0; while IFS= read -r line; do n=$((n + 1)); echo "2025-05-08T16:25:0$((n % 10)).123456789Z $line"; done < {docker_log} ;;
  *) echo "fake docker: unsupported $*" >&2; exit 1 ;;
esac
"""

FAKE_SYSTEMCTL = """#!/bin/sh
echo "sshd.service loaded active running OpenBSD Secure Shell server"
echo "sglang-router.service loaded active running SGLang server"
"""

FAKE_JOURNALCTL = """#!/bin/sh
# fake journalctl -u UNIT: journald short format; -k: the lab's kernel.log
[ "$1" = -k ] && { cat {kernel_log}; exit 0; }
[ "$2" = sglang-router.service ] || { echo "-- No entries --"; exit 0; }
while IFS= read -r line; do echo "Nov 30 10:00:00 node2 python3[4242]: $line"; done < {journal_log}
"""

SGLANG_LINES = [
    "[2025-05-09 11:14:36 TP0] Decode batch, #running-req: 4, #token: 12000, token usage: 0.05, gen throughput (token/s): 80.5, #queue-req: 0",
    "unrelated chatter",
    "[2025-05-09 11:14:36 TP0] server_args=ServerArgs(model_path='m', api_key='sk-live-123', tp_size=2)",
]


def _write_fakes(lab_root: Path) -> Path:
    fakebin = lab_root / "fakebin"
    fakebin.mkdir()
    device = CORPUS / "device"
    if not device.is_dir():  # keep the fake self-contained when the corpus is absent
        device = lab_root / "device"
        device.mkdir()
        (device / "nvidia-smi-topo-m.txt").write_text("\tGPU0\tGPU1\nGPU0\t X \tNV18\nGPU1\tNV18\t X \n")
        (device / "nvidia-smi-topo-p2p.txt").write_text("\tGPU0\tGPU1\nGPU0\tX\tOK\nGPU1\tOK\tX\n")
        (device / "nvidia-smi-query.csv").write_text(
            "index, name, pci.bus_id, memory.total [MiB], driver_version\n0, NVIDIA H200, 00000000:00:06.0, 143771 MiB, 580.159.04\n"
        )
    docker_log = lab_root / "docker-container.log"
    docker_log.write_text("\n".join(vllm_log_lines()) + "\n")
    (lab_root / KERNEL_LOG).write_text("")
    journal_log = lab_root / "journal.log"
    journal_log.write_text("\n".join(SGLANG_LINES) + "\n")
    scripts = {
        "nvidia-smi": FAKE_NVIDIA_SMI.replace("{corpus}", str(device)).replace("{env}", str(ENV_CAPTURES)),
        "docker": FAKE_DOCKER.replace("{docker_log}", str(docker_log)),
        "systemctl": FAKE_SYSTEMCTL,
        "journalctl": FAKE_JOURNALCTL.replace("{journal_log}", str(journal_log)).replace(
            "{kernel_log}", str(lab_root / KERNEL_LOG)
        ),
    }
    for name, text in scripts.items():
        path = fakebin / name
        path.write_text(text)
        path.chmod(0o755)
    return fakebin


@pytest.fixture(scope="session")
def ssh_lab() -> Iterator[SshLab]:
    if not os.access(SSHD, os.X_OK):
        _fail(f"{SSHD} is missing: run `make sshd` (or `apt-get install -y openssh-server`) before the tests")
    if shutil.which("ssh-keygen") is None:
        _fail("ssh-keygen is missing: run `make sshd` (or `apt-get install -y openssh-client`)")
    if os.geteuid() != 0:
        _fail("the SSH tests start sshd and connect as root: run them as root (CI does)")
    root = Path(tempfile.mkdtemp(prefix="logdoctor-ssh-", dir="/tmp"))
    root.chmod(0o755)  # test users' homes live below; pytest's tmp_path is 0700
    servers: list[SshServer] = []
    try:
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege-separation directory
        authorized = root / "authorized"
        authorized.mkdir()
        user_key = keygen(root / "id_user")
        wrong_key = keygen(root / "id_wrong")
        lab = SshLab(
            root=root,
            user_key=user_key,
            wrong_key=wrong_key,
            known_hosts=root / "known_hosts",
            ssh_config=root / "ssh_config",
            authorized=authorized,
        )
        lab.authorize("root")
        fakebin = _write_fakes(root)
        path = f"{fakebin}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        for name, address, extra in (
            ("kpro5", "127.0.0.2", ""),
            ("node2", "127.0.0.3", f"SetEnv PATH={path}"),
        ):
            server = start_sshd(root, name, address, authorized, extra)
            servers.append(server)
            lab.servers[name] = server
        lab.known_hosts.write_text("".join(s.known_hosts_line() for s in servers))
        kpro5, node2 = lab.servers["kpro5"], lab.servers["node2"]
        included = root / "ssh_config.d"
        included.mkdir()
        (included / "10-gpu.conf").write_text(
            f"""Host kpro5
    HostName {kpro5.address}
    Port {kpro5.port}
    User root
    IdentityFile {user_key}
    IdentitiesOnly yes

Host node2
    HostName {node2.address}
    Port {node2.port}
    User root
    IdentityFile {user_key}

Host behind-jump
    HostName {kpro5.address}
    Port {kpro5.port}
    User root
    IdentityFile {user_key}
    ProxyJump root@node2
"""
        )
        lab.ssh_config.write_text(
            f"# the aliases live in an Include'd file, which paramiko alone would ignore\nInclude {included}/*.conf\n\nHost *\n    User nobody-by-default\n    ConnectTimeout 5\n"
        )
        yield lab
    finally:
        for server in servers:
            server.process.terminate()
            try:
                server.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                server.process.kill()
                server.process.wait()
        shutil.rmtree(root, ignore_errors=True)


@dataclass
class LabUsers:
    plain: str  # no sudo rights
    sudoer: str  # passwordless sudo (sudo -n works)
    homes: dict[str, Path]


@pytest.fixture(scope="session")
def ssh_users(ssh_lab: SshLab) -> Iterator[LabUsers]:
    """Two throw-away local users the servers accept with the test key; removed at the end."""
    if shutil.which("useradd") is None or shutil.which("sudo") is None:
        _fail("useradd and sudo are needed for the --sudo tests: apt-get install -y passwd sudo")
    tag = secrets.token_hex(3)
    plain, sudoer = f"ldt{tag}p", f"ldt{tag}s"
    homes: dict[str, Path] = {}
    sudoers = Path(f"/etc/sudoers.d/logdoctor-test-{tag}")
    created: list[str] = []
    try:
        for user in (plain, sudoer):
            home = ssh_lab.root / "home" / user
            home.mkdir(parents=True)
            # `-p '*'`: no password, but not "locked" ('!'), which sshd without PAM would refuse.
            _run("useradd", "-M", "-d", str(home), "-s", "/bin/sh", "-p", "*", user)
            created.append(user)
            shutil.chown(home, user, user)
            ssh_lab.authorize(user)
            homes[user] = home
        sudoers.write_text(f"{sudoer} ALL=(ALL) NOPASSWD: ALL\n")
        sudoers.chmod(0o440)
        yield LabUsers(plain=plain, sudoer=sudoer, homes=homes)
    finally:
        sudoers.unlink(missing_ok=True)
        for user in created:
            # -f: an sshd session of the user may still be closing
            subprocess.run(["userdel", "-f", user], capture_output=True, check=False)


@pytest.fixture
def discovery_lock() -> Iterator[None]:
    """Discovery sees every process on the machine: tests that start or must not see a fake vLLM
    server take this lock, so parallel xdist workers do not see each other's."""
    with open(DISCOVERY_LOCK, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@dataclass
class FakeServer:
    pid: int
    log: Path
    cmdline: str


@pytest.fixture
def fake_vllm_server(ssh_lab: SshLab, discovery_lock: None) -> Iterator[FakeServer]:
    """A process whose command line says `vllm serve` and whose stdout/stderr go to a log file."""
    workdir = Path(tempfile.mkdtemp(prefix="fakevllm-", dir=ssh_lab.root))
    log = workdir / "server-output.log"
    log.write_text("\n".join(vllm_log_lines()) + "\n")
    (workdir / "server-output.log.1").write_text(VLLM_LINES[1] + "\n")
    cmdline = "python -m vllm serve Qwen/Qwen3-8B --api-key sk-secret-123 --tensor-parallel-size 2"
    with open(log, "ab") as out:
        process = subprocess.Popen(
            ["bash", "-c", f'exec -a "{cmdline}" sleep 300'],
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent,
        )
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                if Path(f"/proc/{process.pid}/cmdline").read_bytes().startswith(b"python -m vllm serve"):
                    break
            time.sleep(0.02)
        yield FakeServer(process.pid, log, cmdline)
    finally:
        process.kill()
        process.wait()


class SilentListener:
    """Accepts TCP connections and never says anything (an SSH server that hangs before its banner)."""

    def __init__(self, address: str) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind((address, 0))
        self.sock.listen(8)
        self.address = address
        self.port: int = self.sock.getsockname()[1]
        self.conns: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)

    def close(self) -> None:
        self.sock.close()
        for c in self.conns:
            c.close()


@pytest.fixture
def silent_listener() -> Iterator[SilentListener]:
    listener = SilentListener("127.0.0.5")
    try:
        yield listener
    finally:
        listener.close()
