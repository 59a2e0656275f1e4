"""known_hosts matching against the real OpenSSH client: for each file, `ssh -o StrictHostKeyChecking=yes
-o UserKnownHostsFile=FILE -o BatchMode=yes` and logdoctor talk to the same loopback sshd and must reach
the same outcome (connect or refuse); the expected outcome is also written down, so both being wrong fails."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from logdoctor.errors import HostKeyError
from logdoctor.sources.knownhosts import KnownHosts, host_matches
from logdoctor.sources.remote import Connection, ConnectSettings
from logdoctor.sources.ssh import collect_host, parse_target
from logdoctor.sources.sshconfig import load_ssh_config, resolve
from tests.sources.conftest import (
    KEYWORDS,
    SSHD,
    SSHD_CONFIG,
    SshLab,
    SshServer,
    _wait_for_banner,
    die_with_parent,
    keygen,
)


def hashed(name: str) -> str:
    salt = secrets.token_bytes(20)
    digest = hmac.new(salt, name.encode(), hashlib.sha1).digest()
    return f"|1|{base64.b64encode(salt).decode()}|{base64.b64encode(digest).decode()}"


def pub(path: Path) -> str:
    kind, blob = Path(f"{path}.pub").read_text().split()[:2]
    return f"{kind} {blob}"


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Other keys to write into known_hosts: a wrong ed25519 key, an RSA key, a CA key."""
    root = tmp_path_factory.mktemp("hostkeys")
    return {
        "impostor": pub(keygen(root / "impostor")),
        "rsa": pub(keygen(root / "other_rsa", "rsa")),
        "ca": pub(keygen(root / "ca")),
    }


@pytest.fixture(scope="module")
def port22(ssh_lab: SshLab) -> Iterator[SshServer]:
    """An sshd on port 22 of a free loopback address: port-less known_hosts entries apply to it."""
    host_key = ssh_lab.root / "port22_host_ed25519"
    if not host_key.exists():
        keygen(host_key)
    for last in range(40, 90):
        address = f"127.0.0.{last}"
        with socket.socket() as s:
            try:
                s.bind((address, 22))
            except OSError:
                continue
        name = f"p22-{last}"
        config = ssh_lab.root / f"{name}_sshd_config"
        log = ssh_lab.root / f"{name}_sshd.log"
        config.write_text(
            SSHD_CONFIG.format(
                address=address,
                port=22,
                host_key=host_key,
                pidfile=ssh_lab.root / f"{name}.pid",
                authorized=ssh_lab.authorized,
                extra="",
            )
        )
        with open(log, "wb") as fh:
            process = subprocess.Popen(
                [SSHD, "-D", "-e", "-f", str(config)], stdout=fh, stderr=subprocess.STDOUT, preexec_fn=die_with_parent
            )
        server = SshServer(name, address, 22, host_key, config, log, process)
        if _wait_for_banner(server, time.monotonic() + 10) is None:
            try:
                yield server
            finally:
                process.terminate()
                process.wait()
            return
        process.kill()
        process.wait()
    pytest.fail("no loopback address with port 22 free for the port-22 sshd")


def openssh_connects(ssh_lab: SshLab, server: SshServer, known: Path) -> bool:
    before = known.read_bytes()
    proc = subprocess.run(
        [
            "ssh",
            "-F",
            "/dev/null",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            f"UserKnownHostsFile={known}",
            "-o",
            "GlobalKnownHostsFile=/dev/null",
            "-o",
            "BatchMode=yes",
            "-o",
            "UpdateHostKeys=no",
            "-o",
            "CheckHostIP=no",
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "ConnectTimeout=5",
            "-i",
            str(ssh_lab.user_key),
            "-p",
            str(server.port),
            f"root@{server.address}",
            "true",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert known.read_bytes() == before  # OpenSSH did not touch the file
    if proc.returncode == 0:
        return True
    assert proc.returncode == 255, proc.stderr
    assert "Host key verification failed" in proc.stderr or "REVOKED" in proc.stderr, proc.stderr
    return False


def logdoctor_connects(ssh_lab: SshLab, server: SshServer, known: Path, accept_new: bool = False) -> bool:
    config = load_ssh_config("/dev/null")
    host = resolve(server.address, config, user="root", port=server.port, identity_files=(str(ssh_lab.user_key),))
    settings = ConnectSettings(
        known_hosts=str(known), use_agent=False, use_default_keys=False, timeout=5, accept_new=accept_new
    )
    try:
        with Connection.open(host, settings, config) as conn:
            out = bytearray()
            result = conn.run("true", purpose="t", time_limit=10, stdout_limit=10, on_stdout=out.extend)
            assert result.exit_status == 0
            return True
    except HostKeyError as exc:
        assert "\n" not in str(exc)
        return False


# (case, lines with {name} = the lookup name, {addr}, {port}, {key} = the server's key, ...; expected)
CASES = [
    ("exact [host]:port", ["{name} {key}"], True),
    ("hashed [host]:port", ["{hashed} {key}"], True),
    ("hashed, another name", ["{hashed_other} {key}"], False),
    # OpenSSH looks a host on another port up under its port-less name too, when [host]:port is unknown
    ("port-less address, server not on 22", ["{addr} {key}"], True),
    ("port-less wrong key, server not on 22", ["{addr} {impostor}"], False),
    ("port-less wrong key, right key with the port", ["{addr} {impostor}", "{name} {key}"], True),
    ("wrong key with the port, right key port-less", ["{name} {impostor}", "{addr} {key}"], False),
    ("hashed port-less address, server not on 22", ["{hashed_bare} {key}"], True),
    ("wildcard [127.0.0.*]:port", ["[127.0.0.*]:{port} {key}"], True),
    ("wildcard ? in the address", ["[127.0.0.?]:{port} {key}"], True),
    ("wildcard *", ["* {key}"], True),
    ("wildcard over the port", ["[{addr}]:* {key}"], True),
    ("comma list", ["gpu-7.example,{name} {key}"], True),
    ("negated host wins over *", ["*,!{name},!{addr} {key}"], False),
    ("negated [host]:port, * matches the port-less name", ["*,!{name} {key}"], True),
    ("negated host wins over a pattern", ["[127.0.0.*]:*,!{name} {key}"], False),
    ("negation of another host", ["*,!gpu-7.example {key}"], True),
    ("another host only", ["[127.0.0.99]:{port} {key}"], False),
    ("wrong key first, right key second", ["{name} {impostor}", "{name} {key}"], True),
    ("right key first, wrong key second", ["{name} {key}", "{name} {impostor}"], True),
    ("wrong key only (changed)", ["{name} {impostor}"], False),
    ("wrong key by pattern, right key exact", ["* {impostor}", "{name} {key}"], True),
    ("other key type only", ["{name} {rsa}"], False),
    ("other key type and the right key", ["{name} {rsa}", "{name} {key}"], True),
    ("@revoked beats an accepting line", ["{name} {key}", "@revoked * {key}"], False),
    ("@revoked before the accepting line", ["@revoked {name} {key}", "{name} {key}"], False),
    ("@revoked for another host", ["{name} {key}", "@revoked [127.0.0.99]:{port} {key}"], True),
    ("@revoked other key", ["@revoked * {impostor}", "{name} {key}"], True),
    ("@cert-authority line and the right key", ["@cert-authority * {ca}", "{name} {key}"], True),
    ("@cert-authority only (no certificate offered)", ["@cert-authority * {ca}"], False),
    (
        "garbage and comments around the key",
        ["# comment", "", "garbage", "{name} ssh-ed25519 !!!", "{name} {key}"],
        True,
    ),
    ("unknown marker line is ignored", ["@bogus {name} {impostor}", "{name} {key}"], True),
    ("key type field not matching the blob", ["{name} ssh-rsa {key_blob}"], False),
    ("empty file", [], False),
]


def write_known(path: Path, server: SshServer, lines: list[str], keys: dict[str, str]) -> Path:
    values = {
        "name": server.known_name if server.port != 22 else server.address,
        "addr": server.address,
        "port": str(server.port),
        "key": pub(server.host_key),
        "key_blob": pub(server.host_key).split()[1],
        "hashed": hashed(server.known_name if server.port != 22 else server.address),
        "hashed_bare": hashed(server.address),
        "hashed_other": hashed(f"[127.0.0.99]:{server.port}"),
        **keys,
    }
    path.write_text("".join(line.format(**values) + "\n" for line in lines))
    return path


@pytest.mark.parametrize(("case", "lines", "expected"), CASES, ids=[c[0] for c in CASES])
def test_same_outcome_as_openssh(
    ssh_lab: SshLab, keys: dict[str, str], tmp_path: Path, case: str, lines: list[str], expected: bool
) -> None:
    server = ssh_lab.servers["kpro5"]
    known = write_known(tmp_path / "known_hosts", server, lines, keys)
    assert openssh_connects(ssh_lab, server, known) is expected, f"OpenSSH: {case}"
    assert logdoctor_connects(ssh_lab, server, known) is expected, f"logdoctor: {case}"


PORT22_CASES = [
    ("port-less address", ["{addr} {key}"], True),
    ("[address]:22 is not the name looked up", ["[{addr}]:22 {key}"], False),
    ("hashed port-less address", ["{hashed} {key}"], True),
    ("wildcard address", ["127.0.0.* {key}"], True),
    ("[127.0.0.*]:* does not match a port-less name", ["[127.0.0.*]:* {key}"], False),
    ("negated address", ["127.0.0.*,!{addr} {key}"], False),
]


@pytest.mark.parametrize(("case", "lines", "expected"), PORT22_CASES, ids=[c[0] for c in PORT22_CASES])
def test_port_22_names_as_openssh(
    ssh_lab: SshLab,
    port22: SshServer,
    keys: dict[str, str],
    tmp_path: Path,
    case: str,
    lines: list[str],
    expected: bool,
) -> None:
    known = write_known(tmp_path / "known_hosts", port22, lines, keys)
    assert openssh_connects(ssh_lab, port22, known) is expected, f"OpenSSH: {case}"
    assert logdoctor_connects(ssh_lab, port22, known) is expected, f"logdoctor: {case}"


def test_cert_authority_line_is_noted_not_fatal(ssh_lab: SshLab, keys: dict[str, str], tmp_path: Path) -> None:
    server = ssh_lab.servers["kpro5"]
    log = ssh_lab.root / f"ca-{secrets.token_hex(3)}.log"
    log.write_text("x\n")
    known = write_known(tmp_path / "known_hosts", server, ["@cert-authority * {ca}", "{name} {key}"], keys)
    col = collect_host(parse_target("kpro5"), ssh_lab.options(known_hosts=str(known), logs=(str(log),)), KEYWORDS)
    assert col.error is None
    assert any("@cert-authority line skipped" in n and f"{known}:1" in n for n in col.notes), col.notes


@pytest.mark.parametrize(
    "lines",
    [
        ["[127.0.0.*]:{port} {key}"],  # matched by a pattern
        ["{hashed} {key}"],  # matched by a hashed name
        ["{addr} {key}"],  # matched by the port-less name
        ["{name} {impostor}", "{name} {key}"],  # matched by the second line
    ],
)
def test_accept_new_never_appends_for_a_host_that_matches(
    ssh_lab: SshLab, keys: dict[str, str], tmp_path: Path, lines: list[str]
) -> None:
    server = ssh_lab.servers["kpro5"]
    known = write_known(tmp_path / "known_hosts", server, lines, keys)
    before = known.read_bytes()
    assert logdoctor_connects(ssh_lab, server, known, accept_new=True)
    assert known.read_bytes() == before


@pytest.mark.parametrize(
    "lines",
    [
        ["{name} {impostor}"],  # changed
        ["{name} {rsa}"],  # known with another key type only
        ["@revoked * {key}"],  # revoked, nothing else
        ["{name} {key}", "@revoked {name} {key}"],  # revoked beside an accepting line
    ],
)
def test_accept_new_never_accepts_a_changed_or_revoked_key(
    ssh_lab: SshLab, keys: dict[str, str], tmp_path: Path, lines: list[str]
) -> None:
    server = ssh_lab.servers["kpro5"]
    known = write_known(tmp_path / "known_hosts", server, lines, keys)
    before = known.read_bytes()
    assert not logdoctor_connects(ssh_lab, server, known, accept_new=True)
    assert known.read_bytes() == before


def test_accept_new_appends_once_then_openssh_accepts_it(ssh_lab: SshLab, keys: dict[str, str], tmp_path: Path) -> None:
    server = ssh_lab.servers["kpro5"]
    known = write_known(tmp_path / "known_hosts", server, ["[127.0.0.99]:{port} {impostor}"], keys)
    assert not openssh_connects(ssh_lab, server, known)
    assert logdoctor_connects(ssh_lab, server, known, accept_new=True)
    assert logdoctor_connects(ssh_lab, server, known, accept_new=True)
    lines = known.read_text().splitlines()
    assert len(lines) == 2 and lines[1].split() == server.known_hosts_line().split()
    assert openssh_connects(ssh_lab, server, known)


def test_revoked_message(ssh_lab: SshLab, keys: dict[str, str], tmp_path: Path) -> None:
    server = ssh_lab.servers["kpro5"]
    known = write_known(tmp_path / "known_hosts", server, ["{name} {key}", "@revoked * {key}"], keys)
    with pytest.raises(HostKeyError) as info:
        collect_host(parse_target("kpro5"), ssh_lab.options(known_hosts=str(known), logs=("/x",)), KEYWORDS)
    message = str(info.value)
    assert "REVOKED HOST KEY" in message and f"{known}:2" in message and server.fingerprint() in message


def test_pattern_matching_units() -> None:
    assert host_matches("[127.0.0.*]:2222", "[127.0.0.2]:2222")
    assert not host_matches("[127.0.0.*]:2222", "[127.0.0.2]:22222")
    assert host_matches("GPU-?.Example", "gpu-7.example")
    assert not host_matches("gpu-*,!gpu-7", "gpu-7")
    assert host_matches("!gpu-7,gpu-*", "gpu-8")
    assert not host_matches("!gpu-7", "gpu-8")  # a negation alone never accepts
    assert not host_matches("|1|bm90|YmFk", "gpu-7")
    book = KnownHosts.load([os.devnull])
    assert book.entries == [] and book.check("x", "ssh-ed25519", b"").status == "new"
