"""`--save DIR` writes only files it creates (never through a planted symlink), marks an unfinished
save as partial, survives non-UTF-8 names; remote discovery does not follow symlinks out of a log's
directory (also under --sudo)."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from logdoctor.app.cli import main
from logdoctor.errors import ExitStatus, InputError
from logdoctor.sources.ssh import (
    HostCollection,
    RemoteSource,
    _SafeDir,
    collect_host,
    parse_target,
    prepare_save_dir,
    save_collection,
)
from tests.sources.conftest import KEYWORDS, VLLM_LINES, LabUsers, SshLab, die_with_parent

THROUGHPUT = VLLM_LINES[1]
SPEC = VLLM_LINES[4]


def collection(*sources: tuple[str, list[tuple[int, str]]]) -> HostCollection:
    col = HostCollection(host="root@gpu-7", started=time.time(), finished=time.time())
    for name, lines in sources:
        col.sources.append(RemoteSource(name=name, host=col.host, path=f"/var/log/{name}", lines=lines))
    return col


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.rglob(".*"))


def ssh_args(ssh_lab: SshLab) -> list[str]:
    return ["--ssh-config", str(ssh_lab.ssh_config), "--known-hosts", str(ssh_lab.known_hosts)]


# --- the directory --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["non-empty", "symlink", "file"])
def test_save_dir_must_be_new_or_empty_checked_before_any_host(ssh_lab: SshLab, tmp_path: Path, kind: str) -> None:
    target = tmp_path / "bundle"
    if kind == "non-empty":
        target.mkdir()
        (target / "old.log").write_text("keep me\n")
    elif kind == "symlink":
        (tmp_path / "elsewhere").mkdir()
        target.symlink_to(tmp_path / "elsewhere")
    else:
        target.write_text("a file\n")
    server = ssh_lab.servers["kpro5"]
    logins = server.accepted_logins()
    result = CliRunner().invoke(main, ["diagnose", "kpro5", *ssh_args(ssh_lab), "--log", "/x", "--save", str(target)])
    assert result.exit_code == ExitStatus.USAGE, result.output
    if kind == "file":  # click's own check of the option (a usage error)
        assert "is a file" in result.output
    else:
        (line,) = result.output.strip().splitlines()
        assert line.startswith(f"logdoctor: error: --save {target}: ")
    assert server.accepted_logins() == logins  # no host was contacted
    if kind == "non-empty":
        assert (target / "old.log").read_text() == "keep me\n"
    if kind == "symlink":
        assert list((tmp_path / "elsewhere").iterdir()) == []


def test_prepare_save_dir_creates_or_accepts_empty(tmp_path: Path) -> None:
    fresh = prepare_save_dir(tmp_path / "a" / "b")
    assert fresh.is_dir() and (fresh.stat().st_mode & 0o777) == 0o700
    (tmp_path / "empty").mkdir()
    assert prepare_save_dir(tmp_path / "empty") == tmp_path / "empty"
    with pytest.raises(InputError):
        prepare_save_dir(tmp_path / "a")  # holds b now


def test_planted_symlinks_are_never_followed(tmp_path: Path) -> None:
    victim_dir = tmp_path / "victim"
    victim_dir.mkdir()
    victim = tmp_path / "shadow"
    victim.write_text("root:secret\n")
    base = tmp_path / "bundle"
    base.mkdir()
    (base / "root@gpu-7").symlink_to(victim_dir)  # the host's directory name, planted as a link
    col = collection(("vllm.log", [(1, THROUGHPUT)]))

    host_dir = save_collection(col, base)

    assert host_dir == base / "root@gpu-7-2" and not host_dir.is_symlink()
    assert list(victim_dir.iterdir()) == []
    # inside a directory: a planted file name that is a symlink is replaced, its target untouched
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "vllm.log").symlink_to(victim)
    (inner / "manifest.json.tmp").symlink_to(victim)  # the old fixed temporary name
    out = _SafeDir(inner)
    try:
        out.write("vllm.log", [b"1:host-controlled\n"])
        out.write("manifest.json", [b"{}\n"])
    finally:
        out.close()
    assert victim.read_text() == "root:secret\n"
    assert not (inner / "vllm.log").is_symlink() and (inner / "vllm.log").read_text() == "1:host-controlled\n"
    assert leftovers(inner) == []


# --- interrupted saves -------------------------------------------------------------------------------


class Exploding(list[tuple[int, str]]):
    """Lines whose iteration is interrupted half-way (Ctrl-C during --save)."""

    def __iter__(self) -> Iterator[tuple[int, str]]:
        for index, item in enumerate(super().__iter__()):
            if index == len(self) // 2:
                raise KeyboardInterrupt
            yield item


def test_interrupted_save_is_a_partial_bundle_offline(tmp_path: Path) -> None:
    lines = [(n, THROUGHPUT) for n in range(1, 2001)]
    col = collection(("vllm.log", [(7, SPEC)]), ("vllm-2.log", Exploding(lines)))
    with pytest.raises(KeyboardInterrupt):
        save_collection(col, tmp_path / "bundle")
    host_dir = tmp_path / "bundle" / "root@gpu-7"
    data = json.loads((host_dir / "manifest.json").read_text())
    assert data["complete"] is False and "the save did not finish" in data["incomplete"]
    assert not (host_dir / "vllm-2.log").exists() and leftovers(host_dir) == []
    result = CliRunner().invoke(main, ["diagnose", str(host_dir / "vllm.log")])
    assert result.exit_code == ExitStatus.COLLECTION, result.output
    assert "partial bundle" in result.output and "the save did not finish" in result.output


SAVE_SCRIPT = """
import sys, time
from logdoctor.sources.ssh import HostCollection, RemoteSource, save_collection
col = HostCollection(host="root@gpu-7", started=time.time(), finished=time.time())
line = "x" * 200
col.sources.append(RemoteSource(name="vllm.log", host=col.host, path="/v", lines=[(n, line) for n in range(3_000_000)]))
save_collection(col, sys.argv[1])
"""


def test_sigterm_mid_save_leaves_a_marked_bundle_and_no_temp_file(tmp_path: Path) -> None:
    base = tmp_path / "bundle"
    proc = subprocess.Popen(
        [sys.executable, "-c", SAVE_SCRIPT, str(base)], stderr=subprocess.PIPE, preexec_fn=die_with_parent
    )
    host_dir = base / "root@gpu-7"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(
        p.name.startswith(".vllm.log.tmp") for p in leftovers_paths(host_dir)
    ):
        time.sleep(0.005)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0, err
    data = json.loads((host_dir / "manifest.json").read_text())
    assert data["complete"] is False
    assert leftovers(host_dir) == [] and not (host_dir / "vllm.log").exists()


def leftovers_paths(directory: Path) -> list[Path]:
    with contextlib.suppress(OSError):
        return list(directory.iterdir())
    return []


# --- non-UTF-8 names ---------------------------------------------------------------------------------


def test_non_utf8_log_path_still_saves(ssh_lab: SshLab, tmp_path: Path) -> None:
    d = ssh_lab.root / f"latin1-save-{secrets.token_hex(3)}"
    d.mkdir()
    raw = os.fsencode(d) + b"/vllm-caf\xe9.log"
    with open(raw, "w") as fh:
        fh.write(f"x\n{SPEC}\n")
    save = tmp_path / "bundle"
    logdoctor = Path(sys.executable).with_name("logdoctor")
    args: list[bytes | Path] = [
        logdoctor,
        b"diagnose",
        b"kpro5",
        *(a.encode() for a in ssh_args(ssh_lab)),
        b"--log",
        raw,
        b"--save",
        save,
    ]
    proc = subprocess.run(args, capture_output=True, timeout=120, check=False)
    assert proc.returncode in (0, 1), proc.stderr.decode(errors="replace")
    assert b"Traceback" not in proc.stderr
    assert proc.stdout.strip(), "no report"
    (host_dir,) = save.iterdir()
    data = json.loads((host_dir / "manifest.json").read_text(encoding="utf-8"))
    assert data["complete"] is True
    assert any("\ufffd" in s for s in data["searched"])
    assert leftovers(host_dir) == []
    (saved,) = [p for p in host_dir.glob("*.log") if "caf" in p.name]
    assert saved.read_text().splitlines()[1:] == [f"2:{SPEC}"]


# --- discovery and symlinks --------------------------------------------------------------------------


@pytest.fixture
def server_with_symlinked_rotation(ssh_lab: SshLab, discovery_lock: None) -> Iterator[tuple[Path, Path]]:
    """A `vllm serve` process writing to DIR/server-output.log, whose rotated `.1` is a symlink to a
    root-only secret outside DIR and whose `.2` is a symlink to a file inside DIR."""
    workdir = Path(ssh_lab.root) / f"rot-{secrets.token_hex(3)}"
    workdir.mkdir()
    log = workdir / "server-output.log"
    log.write_text(THROUGHPUT + "\n")
    secret = Path(ssh_lab.root) / f"shadow-{secrets.token_hex(3)}"
    secret.write_text(f"{SPEC} root:$6$secret-hash\n")
    secret.chmod(0o600)
    (workdir / "server-output.log.1").symlink_to(secret)
    (workdir / "old-rotation").write_text(f"{SPEC} inside\n")
    (workdir / "server-output.log.2").symlink_to(workdir / "old-rotation")
    cmdline = "python -m vllm serve Qwen/Qwen3-8B"
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
        yield log, secret
    finally:
        process.kill()
        process.wait()


@pytest.mark.parametrize("who", ["root", "sudo"])
def test_discovery_does_not_follow_a_rotated_symlink_out_of_the_log_dir(
    ssh_lab: SshLab, ssh_users: LabUsers, server_with_symlinked_rotation: tuple[Path, Path], who: str
) -> None:
    log, secret = server_with_symlinked_rotation
    target = "root@kpro5" if who == "root" else f"{ssh_users.sudoer}@kpro5"
    col = collect_host(parse_target(target), ssh_lab.options(sudo=who == "sudo"), KEYWORDS)
    assert col.error is None, col.error
    paths = {s.path for s in col.sources}
    assert str(log) in paths and f"{log}.2" in paths  # a link inside the directory is read
    assert f"{log}.1" not in paths and str(secret) not in paths
    assert "secret-hash" not in json.dumps([s.lines for s in col.sources])
    assert any(f"{log}.1: skipped, a symbolic link out of its log's directory" in n for n in col.notes), col.notes


def test_log_glob_skips_a_symlink_out_of_its_dir_but_a_named_link_is_read(
    ssh_lab: SshLab, server_with_symlinked_rotation: tuple[Path, Path]
) -> None:
    log, _ = server_with_symlinked_rotation
    col = collect_host(parse_target("kpro5"), ssh_lab.options(logs=(f"{log.parent}/server-output.log*",)), KEYWORDS)
    paths = {s.path for s in col.sources}
    assert paths == {str(log), f"{log}.2"}
    assert any("skipped" in n and f"{log}.1" in n for n in col.notes), col.notes
    named = collect_host(parse_target("kpro5"), ssh_lab.options(logs=(f"{log}.1",)), KEYWORDS)
    assert {s.path for s in named.sources} == {f"{log}.1"}  # named explicitly: the user's choice
