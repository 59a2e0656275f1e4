"""The SSH collector against real OpenSSH servers on 127.0.0.2/127.0.0.3 (see conftest.py)."""

from __future__ import annotations

import gzip
import json
import os
import secrets
import shlex
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from logdoctor.app.cli import main
from logdoctor.errors import CollectionError, ExitStatus, HostKeyError
from logdoctor.parse.pipeline import EventStream
from logdoctor.sources.local import open_local
from logdoctor.sources.remote import ChangedHostKeyError, Connection, ConnectSettings, UnknownHostKeyError
from logdoctor.sources.ssh import (
    HostCollection,
    RemoteSource,
    collect_host,
    collect_hosts,
    manifest,
    parse_target,
    save_collection,
)
from logdoctor.sources.sshconfig import load_ssh_config, resolve
from tests.sources.conftest import (
    KERNEL_LOG,
    KEYWORDS,
    SGLANG_LINES,
    VLLM_LINES,
    FakeServer,
    LabUsers,
    SilentListener,
    SshLab,
    free_port,
    vllm_log_lines,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "logs"
THROUGHPUT = VLLM_LINES[1]
SPEC = VLLM_LINES[4]


def source(col: HostCollection, path: str) -> RemoteSource:
    matches = [s for s in col.sources if s.path == path]
    assert matches, f"no source {path!r}; have {[s.path for s in col.sources]}; notes {col.notes}"
    return matches[0]


def expected_lines(lines: list[str], keywords: list[str] = KEYWORDS) -> list[tuple[int, str]]:
    return [(n, text) for n, text in enumerate(lines, start=1) if any(k in text for k in keywords)]


def write_log(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


# --- discovery -------------------------------------------------------------------------------------


def test_alias_from_included_config_and_running_server_discovery(ssh_lab: SshLab, fake_vllm_server: FakeServer) -> None:
    col = collect_host(parse_target("root@kpro5"), ssh_lab.options(), KEYWORDS)

    assert col.error is None
    assert col.address == f"root@127.0.0.2:{ssh_lab.servers['kpro5'].port}"
    log = source(col, str(fake_vllm_server.log))
    assert log.origin == "process"
    assert log.kind == "ssh" and log.host == "root@kpro5"
    assert log.lines == expected_lines(vllm_log_lines())
    assert log.bytes_read == fake_vllm_server.log.stat().st_size
    assert log.name == "server-output.log"
    # the rotated sibling of the file the server writes to
    rotated = source(col, f"{fake_vllm_server.log}.1")
    assert rotated.origin == "rotated" and rotated.lines == [(1, THROUGHPUT)]
    # the server's command line is kept as configuration evidence, with its API key masked
    cmdline = source(col, f"/proc/{fake_vllm_server.pid}/cmdline")
    assert cmdline.origin == "cmdline"
    assert "--tensor-parallel-size 2" in cmdline.lines[0][1]
    assert "sk-secret-123" not in cmdline.lines[0][1] and "--api-key ***" in cmdline.lines[0][1]
    assert "sk-secret-123" not in " ".join(col.found + col.notes)
    assert any(f"process {fake_vllm_server.pid}" in f for f in col.found)
    assert any(s.startswith("running processes") for s in col.searched)
    assert any(s.startswith("/var/log") for s in col.searched)
    assert any("server-output.log" in c for c in col.commands)


def test_gpu_host_facts_containers_and_journald(ssh_lab: SshLab) -> None:
    keywords = [*KEYWORDS, "server_args="]
    col = collect_host(parse_target("node2"), ssh_lab.options(facts=True), keywords)

    assert col.error is None, col.error
    topo = source(col, "nvidia-smi topo -m")
    assert topo.origin == "command" and topo.filtered is False
    assert any("NV18" in text for _, text in topo.lines)
    assert [n for n, _ in topo.lines] == list(range(1, len(topo.lines) + 1))
    query = source(col, "nvidia-smi --query-gpu=index,name,pci.bus_id,memory.total,driver_version --format=csv")
    assert query.lines[0][1] == f"==> {query.path} <=="
    assert query.lines[1][1].startswith("index, name, pci.bus_id")
    p2p = source(col, "nvidia-smi topo -p2p r")
    # the host grammars read the facts as collected (the title line names the -p2p mode)
    events = [e for s in (topo, p2p, query) for e in EventStream(s.name, s.lines)]
    assert {e.type for e in events} >= {"gpu_topology", "gpu_p2p", "gpu_info"}
    assert any(s.name == "container.log" for s in col.sources)
    # docker: only the vLLM container (not redis), its --timestamps lines with their own numbers
    docker = source(col, "docker:vllm-qwen")
    assert docker.origin == "docker"
    assert [n for n, _ in docker.lines] == [n for n, _ in expected_lines(vllm_log_lines())]
    assert docker.lines[0][1].startswith("2025-05-08T16:25:0") and docker.lines[0][1].endswith(THROUGHPUT[-30:])
    assert not any("redis" in s.path or "cache" in s.path for s in col.sources)
    assert docker.bytes_read > docker.bytes_transferred > 0
    # journald: the SGLang unit, its api_key masked
    journal = source(col, "journald:sglang-router.service")
    assert [n for n, _ in journal.lines] == [3]
    assert "api_key='***'" in journal.lines[0][1] and "sk-live-123" not in journal.lines[0][1]
    assert "nvidia-smi" not in " ".join(col.notes)


def test_gpu_state_processes_and_kernel_log_are_collected(ssh_lab: SshLab) -> None:
    """The GPU state, compute processes, `nvidia-smi -q` and the kernel log's NVRM lines, each its own fact (the
    lab's nvidia-smi is a script printing real captures of an H200 under load; its journalctl -k prints the lab's
    kernel.log, here the dmesg of NVIDIA/NVSentinel#155)."""
    kernel_log = ssh_lab.root / KERNEL_LOG
    kernel_log.write_bytes((FIXTURES / "inputs" / "nvsentinel-155-fallen-off-bus.log").read_bytes())
    try:
        col = collect_host(parse_target("node2"), ssh_lab.options(facts=True), KEYWORDS)
    finally:
        kernel_log.write_text("")

    assert col.error is None, col.error
    state = source(col, "nvidia-smi --query-gpu=<GPU state> --format=csv")
    assert state.lines[1][1].startswith("index, name, pci.bus_id, driver_version, pstate, utilization.gpu [%]")
    apps = source(col, "nvidia-smi --query-compute-apps=pid,process_name,gpu_bus_id,used_gpu_memory --format=csv")
    smi = source(col, "nvidia-smi -q -d PERFORMANCE")
    kernel = source(col, "kernel log NVRM lines (journalctl -k / dmesg)")
    assert [text for _, text in kernel.lines[1:]] == [
        "               NVRM: fallen off the bus and is not responding to commands."
    ]
    events = [e for s in (state, apps, smi, kernel) for e in EventStream(s.name, s.lines)]
    busy = [e for e in events if e.type == "gpu_info" and getattr(e, "utilization_pct", None) == 100]
    assert len(busy) == 1  # the CSV row (the PERFORMANCE display has no utilisation)
    gpus = [e for e in events if e.type == "gpu_info"]
    assert [getattr(e, "clock_events", None) for e in gpus] == [["power-cap"], ["power-cap"]]  # the CSV, the -q
    assert {getattr(e, "pid", None) for e in events if e.type == "gpu_process"} == {616}
    assert [e.type for e in events if e.type == "gpu_xid"] == ["gpu_xid"]


# --- --log -----------------------------------------------------------------------------------------


def test_log_globs_gzip_and_line_numbers(ssh_lab: SshLab, tmp_path: Path) -> None:
    d = Path(ssh_lab.root) / f"glob-{secrets.token_hex(3)}"
    lines = [f"noise {i}" for i in range(1, 1001)]
    lines[6] = THROUGHPUT  # line 7
    lines[499] = SPEC  # line 500
    lines[999] = THROUGHPUT  # line 1000
    write_log(d / "vllm-a.log", lines)
    with gzip.open(d / "vllm-b.log.2.gz", "wt") as gz:
        gz.write("\n".join(["x", "y", SPEC, "z"]) + "\n")
    write_log(d / "other.txt", [THROUGHPUT])

    col = collect_host(parse_target("kpro5"), ssh_lab.options(logs=(f"{d}/vllm-*", "/nonexistent/x.log")), KEYWORDS)

    plain = source(col, f"{d}/vllm-a.log")
    assert plain.lines == [(7, THROUGHPUT), (500, SPEC), (1000, THROUGHPUT)]
    assert plain.origin == "log" and plain.gzipped is False
    gz_source = source(col, f"{d}/vllm-b.log.2.gz")
    assert gz_source.gzipped is True
    assert gz_source.lines == [(3, SPEC)]
    assert gz_source.bytes_read == (d / "vllm-b.log.2.gz").stat().st_size
    assert gz_source.name == "vllm-b.log.2.log"
    assert not any(s.path.endswith("other.txt") for s in col.sources)
    assert any("/nonexistent/x.log: no such file" in n for n in col.notes)
    assert col.searched == [f"--log {d}/vllm-*", "--log /nonexistent/x.log"]
    # --log skips discovery: no process scan, no find
    assert not any("logdoctor-discovery" in c for c in col.commands)


def test_transfers_only_candidate_lines(ssh_lab: SshLab) -> None:
    path = Path(ssh_lab.root) / f"big-{secrets.token_hex(3)}.log"
    noise = "(APIServer pid=7) INFO 04-09 11:27:10 [loggers.py:259] GET /metrics HTTP/1.1 200 OK " + "x" * 60
    with open(path, "w") as fh:
        for i in range(1, 200_001):
            fh.write((THROUGHPUT if i % 20_000 == 0 else noise) + "\n")
    size = path.stat().st_size
    assert size > 20_000_000

    col = collect_host(parse_target("kpro5"), ssh_lab.options(logs=(str(path),)), KEYWORDS)

    src = source(col, str(path))
    assert src.bytes_read == size
    assert [n for n, _ in src.lines] == list(range(20_000, 200_001, 20_000))
    assert src.bytes_transferred < size / 1000
    assert col.bytes_transferred < size / 500  # every command of the run, probe included


def test_lines_reach_a_reader_while_the_host_is_still_sending(ssh_lab: SshLab) -> None:
    """`diagnose` parses from `collection.feed` while the read goes on (not after the last line)."""
    path = Path(ssh_lab.root) / f"stream-{secrets.token_hex(3)}.log"
    with open(path, "w") as fh:
        for i in range(120_000):  # ~20 MB of candidate lines: the read takes a while
            fh.write(f"{THROUGHPUT} #{i}\n")
    seen: dict[str, object] = {}
    drained: list[tuple[int, str]] = []
    readers: list[threading.Thread] = []

    def consume(col: HostCollection) -> None:
        for src in col.feed:
            for item in src.feed:
                if src.path == str(path) and "open" not in seen:
                    seen["open"] = not src.feed.closed
                    seen["read_logged"] = any(r.purpose.startswith("read ") for r in list(col.command_log))
                if src.path == str(path):
                    drained.append(item)

    def started(col: HostCollection) -> None:
        reader = threading.Thread(target=consume, args=(col,))
        reader.start()
        readers.append(reader)

    col = collect_host(parse_target("kpro5"), ssh_lab.options(logs=(str(path),)), KEYWORDS, on_started=started)
    readers[0].join(30)

    assert not readers[0].is_alive(), "the reader still waits after the host was collected"
    assert seen == {"open": True, "read_logged": False}  # the first line came while the read was running
    src = source(col, str(path))
    assert drained == src.lines and len(drained) == 120_000
    assert src.bytes_read == path.stat().st_size and src.feed.closed


def test_feeds_close_when_a_host_fails(ssh_lab: SshLab) -> None:
    down_port = free_port("127.0.0.6")
    finished = threading.Event()

    def drain(col: HostCollection) -> None:
        list(col.feed)
        finished.set()

    def started(index: int, col: HostCollection) -> None:
        threading.Thread(target=drain, args=(col,)).start()

    (result,) = collect_hosts(
        [parse_target(f"root@127.0.0.6:{down_port}")], ssh_lab.options(logs=("/x",)), KEYWORDS, on_started=started
    )
    assert result.error_kind == "unreachable"
    assert finished.wait(10), "a reader of a failed host's feed was left waiting"


def test_max_bytes_keeps_head_and_tail(ssh_lab: SshLab) -> None:
    path = Path(ssh_lab.root) / f"cap-{secrets.token_hex(3)}.log"
    lines = [f"{THROUGHPUT} #{i}" for i in range(1, 5001)]
    write_log(path, lines)
    second = write_log(Path(ssh_lab.root) / f"cap2-{secrets.token_hex(3)}.log", [THROUGHPUT])
    budget = 50_000

    col = collect_host(
        parse_target("kpro5"), ssh_lab.options(logs=(str(path), str(second)), max_bytes=budget), KEYWORDS
    )

    src = source(col, str(path))
    assert src.bytes_transferred <= budget + 200
    numbers = [n for n, _ in src.lines]
    assert numbers[0] == 1 and numbers[-1] == 5000  # the start (configuration) and the end (latest state)
    assert numbers == sorted(numbers)
    assert src.skipped_lines == 5000 - len(numbers) > 0
    assert all(text == lines[n - 1] for n, text in src.lines)
    assert any("skipped to stay under --max-bytes" in n for n in col.notes)
    # the budget is per host: the second file gets what is left, here nothing
    assert any(f"{second}: not read (--max-bytes" in n for n in col.notes)


# --- host keys --------------------------------------------------------------------------------------


def test_unknown_host_key_refused_with_fingerprint(ssh_lab: SshLab, tmp_path: Path) -> None:
    known = tmp_path / "known_hosts"
    known.write_text("")
    with pytest.raises(UnknownHostKeyError) as info:
        collect_host(parse_target("kpro5"), ssh_lab.options(known_hosts=str(known), logs=("/x",)), KEYWORDS)
    message = str(info.value)
    assert isinstance(info.value, HostKeyError) and info.value.exit_status == ExitStatus.COLLECTION
    assert ssh_lab.servers["kpro5"].fingerprint() in message
    assert "--accept-new" in message and "\n" not in message
    assert message.startswith("kpro5: unknown host key for [127.0.0.2]:")
    assert known.read_text() == ""


def test_accept_new_records_the_key(ssh_lab: SshLab, tmp_path: Path) -> None:
    known = tmp_path / "sub" / "known_hosts"  # a missing file (and directory) is created
    log = write_log(Path(ssh_lab.root) / f"acc-{secrets.token_hex(3)}.log", [THROUGHPUT])
    options = ssh_lab.options(known_hosts=str(known), logs=(str(log),), accept_new=True)

    col = collect_host(parse_target("kpro5"), options, KEYWORDS)

    server = ssh_lab.servers["kpro5"]
    assert col.error is None
    assert known.read_text().split() == server.known_hosts_line().split()
    assert stat.S_IMODE(known.stat().st_mode) == 0o600
    assert any("--accept-new" in n and server.fingerprint() in n for n in col.notes)
    # next time the key is known: no --accept-new needed, nothing appended
    again = collect_host(parse_target("kpro5"), ssh_lab.options(known_hosts=str(known), logs=(str(log),)), KEYWORDS)
    assert again.error is None
    assert len(known.read_text().splitlines()) == 1


@pytest.mark.parametrize("accept_new", [False, True])
def test_changed_host_key_always_refused(ssh_lab: SshLab, tmp_path: Path, accept_new: bool) -> None:
    server = ssh_lab.servers["kpro5"]
    impostor = tmp_path / "old_host_key"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(impostor)], check=True)
    kind, blob = Path(f"{impostor}.pub").read_text().split()[:2]
    known = tmp_path / "known_hosts"
    known.write_text(f"{server.known_name} {kind} {blob}\n")

    with pytest.raises(ChangedHostKeyError) as info:
        collect_host(
            parse_target("kpro5"),
            ssh_lab.options(known_hosts=str(known), logs=("/x",), accept_new=accept_new),
            KEYWORDS,
        )
    message = str(info.value)
    assert "HOST KEY CHANGED" in message and "man-in-the-middle" in message
    assert server.fingerprint() in message
    assert f"ssh-keygen -R '{server.known_name}' -f {known}" in message
    assert known.read_text() == f"{server.known_name} {kind} {blob}\n"  # never rewritten


# --- authentication, reachability -----------------------------------------------------------------


def test_wrong_key_is_an_auth_failure(ssh_lab: SshLab) -> None:
    port = ssh_lab.servers["kpro5"].port
    options = ssh_lab.options(identity_files=(str(ssh_lab.wrong_key),), logs=("/x",))
    with pytest.raises(CollectionError) as info:
        collect_host(parse_target(f"root@127.0.0.2:{port}"), options, KEYWORDS)
    message = str(info.value)
    assert info.value.exit_status == ExitStatus.COLLECTION
    assert f"authentication failed for root@127.0.0.2:{port}" in message
    assert str(ssh_lab.wrong_key) in message
    assert "Traceback" not in message and "\n" not in message


def test_one_host_down_among_several(ssh_lab: SshLab) -> None:
    log = write_log(Path(ssh_lab.root) / f"multi-{secrets.token_hex(3)}.log", [THROUGHPUT, SPEC])
    down_port = free_port("127.0.0.6")
    targets = [parse_target(t) for t in ("kpro5", f"root@127.0.0.6:{down_port}", "node2")]
    seen: list[tuple[str, str]] = []

    results = collect_hosts(
        targets,
        ssh_lab.options(logs=(str(log),)),
        KEYWORDS,
        jobs=2,
        progress=lambda host, message: seen.append((host, message)),
    )

    assert [r.host for r in results] == ["kpro5", f"root@127.0.0.6:{down_port}", "node2"]
    ok = [r for r in results if r.ok]
    assert len(ok) == 2
    for r in ok:
        assert source(r, str(log)).lines == [(1, THROUGHPUT), (2, SPEC)]
    down = results[1]
    assert down.error_kind == "unreachable"
    assert down.error is not None and "connection refused" in down.error
    assert down.error.startswith(f"root@127.0.0.6:{down_port}: ")
    assert (f"root@127.0.0.6:{down_port}", f"failed: {down.error}") in seen
    assert ("kpro5", "done: 1 sources") in seen


def test_silent_server_times_out(ssh_lab: SshLab, silent_listener: SilentListener) -> None:
    target = parse_target(f"root@{silent_listener.address}:{silent_listener.port}")
    t0 = time.monotonic()
    (result,) = collect_hosts([target], ssh_lab.options(timeout=1.0, logs=("/x",)), KEYWORDS)
    assert time.monotonic() - t0 < 6
    assert result.error_kind == "timeout"
    assert result.error is not None and "no SSH banner within 1s" in result.error


def test_proxy_jump(ssh_lab: SshLab) -> None:
    log = write_log(Path(ssh_lab.root) / f"jump-{secrets.token_hex(3)}.log", [SPEC])
    jump, target = ssh_lab.servers["node2"], ssh_lab.servers["kpro5"]
    jump_before, target_before = jump.accepted_logins(), target.accepted_logins()

    col = collect_host(parse_target("behind-jump"), ssh_lab.options(logs=(str(log),)), KEYWORDS)

    assert source(col, str(log)).lines == [(1, SPEC)]
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and jump.accepted_logins() == jump_before:
        time.sleep(0.05)
    assert jump.accepted_logins() == jump_before + 1
    assert target.accepted_logins() == target_before + 1


# --- security: names are data, never code ------------------------------------------------------------


def test_hostile_paths_are_read_as_names(ssh_lab: SshLab, ssh_users: LabUsers) -> None:
    d = Path(ssh_lab.root) / f"hostile-{secrets.token_hex(3)}"
    markers = [Path(f"/tmp/logdoctor-pwned-{secrets.token_hex(4)}") for _ in range(3)]
    names = [
        f"$(touch {markers[0]})",
        f"`touch {markers[1]}`.log",
        f"a; touch {markers[2]}; b.log",
        'it\'s "quoted" & spaced.log',
        "new\nline.log",
        "$HOME.log",
        "-n.log",
    ]
    paths = [write_log(d / name, [f"line for {name!r}", SPEC]) for name in names]

    col = collect_host(parse_target("kpro5"), ssh_lab.options(logs=tuple(str(p) for p in paths)), KEYWORDS)

    for p in paths:
        assert source(col, str(p)).lines == [(2, SPEC)]
    for marker in markers:
        assert not marker.exists(), f"{marker} was created: a path was executed"
    for p in paths:  # every value is quoted once, as a separate argument
        assert any(shlex.quote(str(p)) in c for c in col.commands)

    # a relative path starting with '-', `~/`, and a hostile glob, as a user whose home holds them
    user = ssh_users.plain
    home = ssh_users.homes[user]
    marker = Path(f"/tmp/logdoctor-pwned-{secrets.token_hex(4)}")
    for name in ("-rf.log", "--help.log", f"vllm $(touch {marker.name}).log"):
        write_log(home / name, [SPEC]).chmod(0o644)
    port = ssh_lab.servers["kpro5"].port
    col = collect_host(
        parse_target(f"{user}@127.0.0.2:{port}"),
        ssh_lab.options(identity_files=(str(ssh_lab.user_key),), logs=("-rf.log", "~/--help.log", "~/vllm $(*")),
        KEYWORDS,
    )
    assert source(col, "-rf.log").lines == [(1, SPEC)]
    assert source(col, f"{home}/--help.log").lines == [(1, SPEC)]
    assert source(col, f"{home}/vllm $(touch {marker.name}).log").lines == [(1, SPEC)]
    assert not marker.exists() and not (home / marker.name).exists()


def test_non_utf8_file_name(ssh_lab: SshLab) -> None:
    d = Path(ssh_lab.root) / f"latin1-{secrets.token_hex(3)}"
    d.mkdir()
    raw = os.fsencode(d) + b"/vllm-caf\xe9.log"  # Latin-1 bytes: not UTF-8
    with open(raw, "w") as fh:
        fh.write(f"x\n{SPEC}\n")
    col = collect_host(parse_target("kpro5"), ssh_lab.options(logs=(f"{d}/vllm-*.log",)), KEYWORDS)
    src = source(col, f"{d}/vllm-caf\ufffd.log")  # shown with U+FFFD, read with the real bytes
    assert src.lines == [(2, SPEC)]
    json.dumps(manifest(col), ensure_ascii=False).encode("utf-8")  # the manifest stays valid UTF-8


def test_hostile_names_found_by_discovery(ssh_lab: SshLab, ssh_users: LabUsers, discovery_lock: None) -> None:
    user = ssh_users.plain
    home = ssh_users.homes[user]
    marker = f"pwned-{secrets.token_hex(4)}"
    well_known = write_log(home / "vllm-serve.log", vllm_log_lines())
    hostile = write_log(home / "logs" / f"sglang;touch {marker};.log", SGLANG_LINES)
    for p in (well_known, hostile, hostile.parent):
        p.chmod(0o755 if p.is_dir() else 0o644)
    port = ssh_lab.servers["kpro5"].port
    try:
        col = collect_host(
            parse_target(f"{user}@127.0.0.2:{port}"),
            ssh_lab.options(identity_files=(str(ssh_lab.user_key),)),
            [*KEYWORDS, "Decode batch"],
        )
        assert source(col, str(well_known)).lines == expected_lines(vllm_log_lines())
        assert source(col, str(hostile)).lines == [(1, SGLANG_LINES[0])]
        assert not (home / marker).exists() and not (home / "logs" / marker).exists()
        assert any(s.startswith(f"{home}:") for s in col.searched)
    finally:
        well_known.unlink()
        hostile.unlink()


# --- permissions and sudo ------------------------------------------------------------------------------


@pytest.fixture
def root_only_log(ssh_lab: SshLab) -> Path:
    path = write_log(Path(ssh_lab.root) / f"root-only-{secrets.token_hex(3)}.log", [THROUGHPUT])
    path.chmod(0o600)
    return path


def test_permission_denied_hints_sudo(ssh_lab: SshLab, ssh_users: LabUsers, root_only_log: Path) -> None:
    port = ssh_lab.servers["kpro5"].port
    options = ssh_lab.options(identity_files=(str(ssh_lab.user_key),), logs=(str(root_only_log),))
    with pytest.raises(CollectionError) as info:
        collect_host(parse_target(f"{ssh_users.plain}@127.0.0.2:{port}"), options, KEYWORDS)
    assert f"permission denied reading {root_only_log}; try --sudo" in str(info.value)


def test_sudo_reads_root_only_logs(ssh_lab: SshLab, ssh_users: LabUsers, root_only_log: Path) -> None:
    port = ssh_lab.servers["kpro5"].port
    options = ssh_lab.options(identity_files=(str(ssh_lab.user_key),), logs=(str(root_only_log),), sudo=True)
    col = collect_host(parse_target(f"{ssh_users.sudoer}@127.0.0.2:{port}"), options, KEYWORDS)
    assert source(col, str(root_only_log)).lines == [(1, THROUGHPUT)]
    assert "sudo -n true" in col.commands
    assert all(c.startswith("sudo -n -- sh -c") for c in col.commands if "read-file" in c)


def test_sudo_that_wants_a_password_fails_clearly(ssh_lab: SshLab, ssh_users: LabUsers, root_only_log: Path) -> None:
    port = ssh_lab.servers["kpro5"].port
    options = ssh_lab.options(identity_files=(str(ssh_lab.user_key),), logs=(str(root_only_log),), sudo=True)
    (result,) = collect_hosts([parse_target(f"{ssh_users.plain}@127.0.0.2:{port}")], options, KEYWORDS)
    assert result.error_kind == "sudo"
    assert result.error is not None
    assert "asks" in result.error and "password" in result.error and "NOPASSWD" in result.error
    assert "\n" not in result.error
    assert not any("read-file" in c for c in result.commands)


def test_nothing_found_lists_what_was_searched(ssh_lab: SshLab, ssh_users: LabUsers, discovery_lock: None) -> None:
    user = ssh_users.sudoer  # a home with no logs in it
    port = ssh_lab.servers["kpro5"].port
    options = ssh_lab.options(identity_files=(str(ssh_lab.user_key),))
    with pytest.raises(CollectionError) as info:
        collect_host(parse_target(f"{user}@127.0.0.2:{port}"), options, KEYWORDS)
    message = str(info.value)
    assert "nothing found: searched running processes" in message
    assert f"{ssh_users.homes[user]}: *vllm*/*sglang*" in message and "/var/log" in message
    assert "--log" in message


# --- streams, limits --------------------------------------------------------------------------------


def _connection(ssh_lab: SshLab, shared_shell: bool = False) -> Connection:
    config = load_ssh_config(str(ssh_lab.ssh_config))
    settings = ConnectSettings(known_hosts=str(ssh_lab.known_hosts), use_agent=False, use_default_keys=False)
    conn = Connection.open(resolve("kpro5", config), settings, config)
    conn.shared_shell = shared_shell
    return conn


def _run_text(conn: Connection, command: str) -> tuple[str, str, int | None]:
    out = bytearray()
    result = conn.run(command, purpose="t", time_limit=20, stdout_limit=1 << 20, on_stdout=out.extend)
    return out.decode(), result.stderr, result.exit_status


def test_shared_shell_runs_every_command_in_one_shell(ssh_lab: SshLab) -> None:
    with _connection(ssh_lab, shared_shell=True) as conn:
        # walk up from the command to the outermost `sh -s` (the session's; its forks share its command
        # line): the same one started all three
        up = (
            'sh -c \'p=$PPID; top=0; while [ "$p" -gt 1 ]; do '
            '[ "$(tr "\\000" " " < /proc/$p/cmdline)" = "sh -s " ] && top=$p; '
            'p=$(awk "/^PPid/ {print \\$2}" /proc/$p/status); done; echo $top\''
        )
        parents = {_run_text(conn, up)[0] for _ in range(3)}
        assert len(parents) == 1 and int(parents.pop()) > 1
        assert _run_text(conn, "sh -c 'echo out; echo err >&2; exit 7'") == ("out\n", "err\n", 7)
        # no trailing newline; text that looks like the end marker but lacks the session's nonce
        fake = r"printf 'a\000logdoctor-end-0000:3\000b'"
        assert _run_text(conn, fake) == ("a\0logdoctor-end-0000:3\0b", "", 0)
        assert _run_text(conn, "cat") == ("", "", 0)  # stdin is /dev/null: the next command is not eaten
        assert _run_text(conn, "true") == ("", "", 0)
        # `exit` ends the command, not the shared shell (each command runs in a process group of its own)
        assert _run_text(conn, "echo last; exit 4") == ("last\n", "", 4)
        assert _run_text(conn, "echo again") == ("again\n", "", 0)
        # a command that ends the shell itself: its output still arrives, marked incomplete; the next
        # command gets a new shell
        out = bytearray()
        killer = up.replace("echo $top", "echo last; kill -KILL $top")
        result = conn.run(killer, purpose="t", time_limit=20, stdout_limit=1 << 20, on_stdout=out.extend)
        assert out == b"last\n" and not result.complete and result.exit_status is None
        assert "end frame" in result.incomplete_reason
        assert _run_text(conn, "echo again") == ("again\n", "", 0)
    with _connection(ssh_lab) as conn:  # a session each: the command's parent is sshd (or the login shell)
        assert not _run_text(conn, "sh -c 'cat /proc/$PPID/comm'")[0].startswith("sh\n")


def test_login_shell_that_reads_stdin_falls_back_to_a_session_a_command(
    ssh_lab: SshLab, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A startup file that waits for input would eat the shared shell's first command: logdoctor
    waits for the shell to say it started, then gives every command a session of its own."""
    monkeypatch.setattr("logdoctor.sources.remote.SHELL_READY_SECONDS", 2.0)
    user = f"ldr{secrets.token_hex(3)}"
    home = Path(ssh_lab.root) / "home" / user
    home.mkdir(parents=True)
    shell = Path(ssh_lab.root) / f"{user}-shell"
    shell.write_text('#!/bin/sh\nread greeting\nexec /bin/sh "$@"\n')  # like a bashrc that asks something
    shell.chmod(0o755)
    log = write_log(Path(ssh_lab.root) / f"{user}.log", [THROUGHPUT, SPEC])
    log.chmod(0o644)
    subprocess.run(["useradd", "-M", "-d", str(home), "-s", str(shell), "-p", "*", user], check=True)
    try:
        ssh_lab.authorize(user)
        port = ssh_lab.servers["kpro5"].port
        options = ssh_lab.options(identity_files=(str(ssh_lab.user_key),), logs=(str(log),))
        t0 = time.monotonic()
        col = collect_host(parse_target(f"{user}@127.0.0.2:{port}"), options, KEYWORDS)
        assert time.monotonic() - t0 < 20
        assert source(col, str(log)).lines == [(1, THROUGHPUT), (2, SPEC)]
        assert any("did not start `sh -s` within 2s" in n for n in col.notes)
    finally:
        subprocess.run(["userdel", "-f", user], capture_output=True, check=False)


@pytest.mark.parametrize("shared_shell", [False, True])
def test_big_stdout_and_stderr_together_do_not_deadlock(ssh_lab: SshLab, shared_shell: bool) -> None:
    # 8 MB on each stream, interleaved: reading one stream to its end first would stall the other
    # (the SSH window is 2 MB).
    script = (
        "i=0; while [ $i -lt 160 ]; do head -c 50000 /dev/zero | tr '\\000' e >&2; "
        "head -c 50000 /dev/zero | tr '\\000' o; i=$((i + 1)); done"
    )
    received = bytearray()
    with _connection(ssh_lab, shared_shell) as conn:
        result = conn.run(
            f"sh -c {shlex.quote(script)}",
            purpose="both",
            time_limit=60,
            stdout_limit=1 << 30,
            on_stdout=received.extend,
        )
    assert result.exit_status == 0 and not result.timed_out
    assert result.stdout_bytes == len(received) == 8_000_000 and set(received) == {ord("o")}
    assert result.stderr_bytes == 8_000_000
    assert len(result.stderr) == 64 * 1024  # only the start of stderr is kept


@pytest.mark.parametrize("shared_shell", [False, True])
def test_stdout_cap_stops_an_endless_command(ssh_lab: SshLab, shared_shell: bool) -> None:
    with _connection(ssh_lab, shared_shell) as conn:
        t0 = time.monotonic()
        result = conn.run(
            "yes logdoctor", purpose="endless", time_limit=30, stdout_limit=1_000_000, on_stdout=lambda b: None
        )
        assert time.monotonic() - t0 < 10
        assert result.capped and result.stdout_bytes == 1_000_000
        t0 = time.monotonic()
        slow = conn.run("sleep 30", purpose="slow", time_limit=1, stdout_limit=10, on_stdout=lambda b: None)
        assert slow.timed_out and time.monotonic() - t0 < 5
        # the connection is still usable after both
        out = bytearray()
        assert conn.run("echo ok", purpose="ok", time_limit=10, stdout_limit=10, on_stdout=out.extend).exit_status == 0
        assert out == b"ok\n"


# --- --save: the same diagnosis offline ------------------------------------------------------------------


def test_save_and_reread_offline(ssh_lab: SshLab, tmp_path: Path) -> None:
    lines = [f"noise {i}" for i in range(1, 301)]
    lines[41] = THROUGHPUT
    lines[276] = SPEC
    log = write_log(Path(ssh_lab.root) / f"save-{secrets.token_hex(3)}.log", lines)
    col = collect_host(parse_target("root@kpro5"), ssh_lab.options(logs=(str(log),)), KEYWORDS)

    host_dir = save_collection(col, tmp_path / "collected")

    assert host_dir == tmp_path / "collected" / "root@kpro5"
    saved = host_dir / source(col, str(log)).name
    data = json.loads((host_dir / "manifest.json").read_text())
    assert data["host"] == "root@kpro5"
    assert [c["command"] for c in data["commands"]] == col.commands
    assert data["keywords"] == KEYWORDS
    (entry,) = data["sources"]
    assert entry["file"] == saved.name and entry["path"] == str(log) and entry["lines"] == 2
    assert entry["bytes_read"] == log.stat().st_size and entry["kind"] == "ssh"
    # read back as a local file: the same lines, with the remote line numbers
    local = open_local(str(saved))
    assert local.numbered
    assert list(local.lines(KEYWORDS)) == [(42, THROUGHPUT), (277, SPEC)]
    assert list(local.lines(KEYWORDS, prefilter=True)) == [(42, THROUGHPUT), (277, SPEC)]
    # and `logdoctor parse` points at the remote line numbers
    result = CliRunner().invoke(main, ["parse", "--format", "jsonl", str(saved)])
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    assert events and {e["line"] for e in events} <= {42, 277}
    assert data["complete"] is True and entry["complete"] is True and entry["lines_expected"] == 2
    # saving again never writes into the earlier bundle: the host gets a new directory
    col.sources[0].name = "renamed.log"
    again = save_collection(col, tmp_path / "collected")
    assert again == tmp_path / "collected" / "root@kpro5-2"
    assert saved.exists() and (again / "renamed.log").exists() and not (host_dir / "renamed.log").exists()


def test_data_after_a_channel_is_closed_does_not_kill_the_connection(ssh_lab: SshLab) -> None:
    # paramiko closes the select pipe of a closed channel while data the host sent before it saw the close still
    # reaches the channel's buffers, which signal that pipe: a set() between the pipe's os.close and its
    # `_closed = True` writes to a closed fd (EBADF in the transport thread, connection gone; seen under load
    # after a command cut at its byte cap). The window cannot be forced, so the test checks that the buffers no
    # longer signal the pipe once the channel is closed, and that late data leaves the connection usable.
    import select

    from logdoctor.sources.remote import close_channel

    with _connection(ssh_lab) as conn:
        chan = conn._open_channel(10)
        chan.exec_command("yes logdoctor")
        select.select([chan], [], [], 5)  # makes paramiko create the channel's pipe, as the reader does
        close_channel(chan)
        assert getattr(chan.in_buffer, "_event", 1) is None and getattr(chan.in_stderr_buffer, "_event", 1) is None
        chan.in_buffer.feed(b"late data\n")  # what the transport thread does with data still in flight
        chan.in_stderr_buffer.feed(b"late data\n")
        assert _run_text(conn, "echo ok")[0] == "ok\n"


def test_the_servers_cpu_placement_is_collected(ssh_lab: SshLab, fake_vllm_server: FakeServer) -> None:
    """The CPU fact names each found server's allowed CPUs and NUMA memory nodes (the lab has no cpufreq, so no
    governor line), and the host grammars read it."""
    col = collect_host(parse_target("root@kpro5"), ssh_lab.options(facts=True), KEYWORDS)

    assert col.error is None, col.error
    cpu = source(col, "CPU governors and the servers' CPU / NUMA placement")
    assert any(text.startswith(f"cpu placement: server pid {fake_vllm_server.pid}: cpus ") for _, text in cpu.lines)
    events = list(EventStream(cpu.name, cpu.lines))
    assert [e.type for e in events] == ["host_info"] and getattr(events[0], "name", None) == "placement"


def test_docs_show_the_host_fact_scripts() -> None:
    from logdoctor.sources.hostscripts import CPU_SCRIPT, GPU_STATE_FIELDS, GPU_STATE_SCRIPT, KERNEL_XID_SCRIPT

    doc = (Path(__file__).resolve().parents[2] / "docs" / "ssh.md").read_text(encoding="utf-8")
    assert f"```sh\n{GPU_STATE_SCRIPT}```" in doc, "docs/ssh.md is out of date for GPU_STATE_SCRIPT"
    assert f"```sh\n{KERNEL_XID_SCRIPT}```" in doc, "docs/ssh.md is out of date for KERNEL_XID_SCRIPT"
    assert f"```sh\n{CPU_SCRIPT}```" in doc, "docs/ssh.md is out of date for CPU_SCRIPT"
    assert GPU_STATE_FIELDS in doc
