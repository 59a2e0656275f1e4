"""Transfers that cannot lie, against the real sshd: a connection cut mid-transfer, a remote command
killed, a time limit and a byte cap are reported as partial (never `truncated: false` with fewer
lines, never exit 0), FIFOs and devices end at once, and nothing of ours keeps running on the host."""

from __future__ import annotations

import json
import os
import secrets
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from logdoctor.app.cli import main
from logdoctor.errors import ExitStatus
from logdoctor.sources.remote import Connection, ConnectSettings, RemoteFailure
from logdoctor.sources.ssh import HostCollection, collect_host, manifest, parse_target
from logdoctor.sources.sshconfig import load_ssh_config, resolve
from tests.sources.conftest import KEYWORDS, VLLM_LINES, LabUsers, SshLab, SshServer

THROUGHPUT = VLLM_LINES[1]
BIG_LINES = 300_000


def uid_of(user: str) -> int:
    import pwd

    return pwd.getpwnam(user).pw_uid


def processes_of(uid: int) -> list[tuple[int, str, str]]:
    """(pid, comm, cmdline) of every process owned by `uid` (real uid)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
            comm = Path(f"/proc/{entry}/comm").read_text().strip()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        uid_line = next((line for line in status.splitlines() if line.startswith("Uid:")), "")
        if uid_line.split()[1:2] == [str(uid)]:
            out.append((int(entry), comm, cmdline[:120]))
    return out


def wait_for_no_processes(uid: int, seconds: float = 8.0) -> list[tuple[int, str, str]]:
    deadline = time.monotonic() + seconds
    while True:
        left = processes_of(uid)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def cut_connections(server: SshServer) -> int:
    """Kill the sshd processes serving `server`'s connections (not the listener, not the user's commands):
    what a dropped network or a rebooted host looks like from the client."""
    killed = 0
    for pid in descendants(server.process.pid):
        try:
            if Path(f"/proc/{pid}/comm").read_text().strip() == "sshd":
                os.kill(pid, signal.SIGKILL)
                killed += 1
        except OSError:
            pass
    return killed


# The grep that reads the log (logdoctor/sources/hostscripts.py: `capped_grep`, and the stream readers' grep), not
# the host-fact script's own greps (the process search, `grep '^PPid:'`): a cut while one of those runs comes before
# any log line, so it would test another fault than the one meant.
_LOG_GREP = ("grep -a -n -E ", "grep -a -E -e ")


def signal_user_grep(uid: int, sig: signal.Signals) -> bool:
    for pid, comm, cmdline in processes_of(uid):
        if comm == "grep" and cmdline.startswith(_LOG_GREP):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:  # it finished between the listing and the signal: look again
                continue
            return True
    return False


@pytest.fixture(scope="module")
def big_log(ssh_lab: SshLab) -> tuple[Path, int]:
    """A readable log of many candidate lines, each different (so the transfer takes a while)."""
    path = ssh_lab.root / f"big-{secrets.token_hex(3)}.log"
    with open(path, "w") as fh:
        for i in range(BIG_LINES):
            fh.write(f"{THROUGHPUT} #{i} {secrets.token_hex(8)}\n")
    path.chmod(0o644)
    return path, BIG_LINES


def connect_as(ssh_lab: SshLab, user: str) -> Connection:
    config = load_ssh_config(str(ssh_lab.ssh_config))
    settings = ConnectSettings(known_hosts=str(ssh_lab.known_hosts), use_agent=False, use_default_keys=False)
    conn = Connection.open(resolve("kpro5", config, user=user), settings, config)
    conn.shared_shell = True
    return conn


@pytest.mark.parametrize("how", ["time limit", "byte cap", "connection cut"])
def test_nothing_of_ours_keeps_running_after_a_stop(ssh_lab: SshLab, ssh_users: LabUsers, how: str) -> None:
    uid = uid_of(ssh_users.plain)
    assert wait_for_no_processes(uid) == []
    server = ssh_lab.servers["kpro5"]
    with connect_as(ssh_lab, ssh_users.plain) as conn:
        if how == "time limit":  # a command that never writes and never ends (`wc -c < FIFO`, grep on a NUL hole)
            result = conn.run(
                "sh -c 'sleep 1000 & sleep 1001; wait'",
                purpose="t",
                time_limit=1.5,
                stdout_limit=100,
                on_stdout=lambda b: None,
            )
            assert result.timed_out and not result.complete
        elif how == "byte cap":
            result = conn.run(
                "sh -c 'sleep 1002 & yes'", purpose="t", time_limit=30, stdout_limit=100_000, on_stdout=lambda b: None
            )
            assert result.capped and not result.complete
        else:

            def cut() -> None:
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline:
                    if any("sleep 1003" in cmdline for _, _, cmdline in processes_of(uid)):
                        assert cut_connections(server) > 0
                        return
                    time.sleep(0.02)

            cutter = threading.Thread(target=cut, daemon=True)
            cutter.start()
            t0 = time.monotonic()
            try:
                result = conn.run(
                    "sh -c 'sleep 1003 & echo started; wait'",
                    purpose="t",
                    time_limit=30,
                    stdout_limit=100,
                    on_stdout=lambda b: None,
                )
                assert not result.complete and "end frame" in result.incomplete_reason
            except RemoteFailure:
                pass  # paramiko may notice the dead connection as an error: a failure, never a result
            cutter.join()
            assert time.monotonic() - t0 < 20
    left = wait_for_no_processes(uid)
    assert left == [], f"still running on the host after the {how}: {left}"


def read_with_trigger(
    ssh_lab: SshLab, user: str, log: Path, after_lines: int, action: Callable[[], object], **options: object
) -> HostCollection:
    """Collect `log` as `user`; once `after_lines` lines have arrived, run `action` (from the reading thread)."""

    def started(col: HostCollection) -> None:
        def watch() -> None:
            # polls the collector's own list (a feed reader could lag behind the transfer)
            while col.finished == 0.0:
                if col.sources and len(col.sources[0].lines) >= after_lines:
                    action()
                    return
                time.sleep(0.002)

        threading.Thread(target=watch, daemon=True).start()

    # A budget over the log's size: the read is one grep, not the head-and-tail split of an over-budget log.
    settings = ssh_lab.options(logs=(str(log),), **{"max_bytes": 1 << 30, **options})
    for _attempt in range(3):
        col = collect_host(parse_target(f"{user}@kpro5"), settings, KEYWORDS, raise_errors=False, on_started=started)
        if not col.complete:
            return col
        # every line had arrived before the action landed: the fault did not happen mid-transfer; try again
    pytest.skip("the whole transfer finished before the fault could land, three times (a machine too fast for it)")


def assert_partial(col: HostCollection, log: Path, total: int) -> str:
    assert not col.complete and col.incomplete, (col.error, col.notes)
    data = manifest(col)
    assert data["complete"] is False
    sources = [s for s in col.sources if s.path == str(log)]
    if sources:
        (src,) = sources
        assert len(src.lines) < total
        assert src.truncated and src.partial.startswith(f"partial: {len(src.lines)} of ")
        (entry,) = [e for e in data["sources"] if e["path"] == str(log)]
        assert entry["truncated"] is True and entry["complete"] is False and entry["partial"] == src.partial
        return src.partial
    return "; ".join(col.incomplete)


@pytest.mark.parametrize("after_lines", [1, 5_000, 50_000])
@pytest.mark.parametrize("compress", [True, False])
def test_connection_cut_mid_read_is_partial(
    ssh_lab: SshLab, ssh_users: LabUsers, big_log: tuple[Path, int], after_lines: int, compress: bool
) -> None:
    log, total = big_log
    uid = uid_of(ssh_users.plain)
    server = ssh_lab.servers["kpro5"]

    def cut() -> None:
        signal_user_grep(uid, signal.SIGSTOP)  # the host stops sending: the cut lands mid-transfer
        cut_connections(server)

    col = read_with_trigger(ssh_lab, ssh_users.plain, log, after_lines, cut, compress=compress)
    why = assert_partial(col, log, total)
    assert "of ? lines" in why or "connection" in why  # the host's count never arrived
    # the collection says the connection died: lost between commands, or failed inside the read itself
    assert any("connection was lost" in line or "connection failed" in line for line in col.incomplete), col.incomplete
    assert wait_for_no_processes(uid) == [], "a process of ours survived the cut"


def test_killed_remote_grep_is_partial(ssh_lab: SshLab, ssh_users: LabUsers, big_log: tuple[Path, int]) -> None:
    log, total = big_log
    uid = uid_of(ssh_users.plain)

    def kill_grep() -> None:
        assert signal_user_grep(uid, signal.SIGSTOP)
        signal_user_grep(uid, signal.SIGKILL)

    col = read_with_trigger(ssh_lab, ssh_users.plain, log, 1000, kill_grep)
    why = assert_partial(col, log, total)
    assert "grep on the host exited with status 137" in why and " of ? lines" in why
    assert col.error is None  # the host answered; its data is partial, and says so


def test_time_limit_mid_read_is_partial(ssh_lab: SshLab, ssh_users: LabUsers, big_log: tuple[Path, int]) -> None:
    log, total = big_log
    uid = uid_of(ssh_users.plain)
    col = read_with_trigger(
        ssh_lab, ssh_users.plain, log, 1, lambda: signal_user_grep(uid, signal.SIGSTOP), command_timeout=2.0
    )
    why = assert_partial(col, log, total)
    assert "stopped after 2s" in why
    assert wait_for_no_processes(uid) == []


def test_cli_cut_is_exit_3_partial_in_report_and_manifest(
    ssh_lab: SshLab, ssh_users: LabUsers, big_log: tuple[Path, int], tmp_path: Path
) -> None:
    log, _ = big_log
    uid = uid_of(ssh_users.plain)
    server = ssh_lab.servers["kpro5"]
    stop = threading.Event()

    def killer() -> None:
        while not stop.is_set():
            if signal_user_grep(uid, signal.SIGSTOP):
                time.sleep(0.3)
                cut_connections(server)
                return
            time.sleep(0.01)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    save = tmp_path / "bundle"
    try:
        result = CliRunner().invoke(
            main,
            [
                "diagnose",
                f"{ssh_users.plain}@kpro5",
                "--ssh-config",
                str(ssh_lab.ssh_config),
                "--known-hosts",
                str(ssh_lab.known_hosts),
                "--log",
                str(log),
                "--save",
                str(save),
                "--format",
                "json",
            ],
        )
    finally:
        stop.set()
        thread.join()
    assert result.exit_code == ExitStatus.COLLECTION, result.output
    report = json.loads(result.stdout)
    assert report["verdict"]["healthy"] is False
    assert any("partial: " in e["error"] for e in report["errors"]), report["errors"]
    (host_dir,) = save.iterdir()
    data = json.loads((host_dir / "manifest.json").read_text())
    assert data["complete"] is False and data["incomplete"]
    (entry,) = [e for e in data["sources"] if e["path"] == str(log)]
    assert entry["truncated"] is True and entry["partial"].startswith("partial: ")
    # offline, the bundle says it is partial
    offline = CliRunner().invoke(main, ["diagnose", *map(str, host_dir.glob("*.log"))])
    assert offline.exit_code == ExitStatus.COLLECTION, offline.output
    assert "partial bundle" in offline.output
    assert wait_for_no_processes(uid) == []


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "/dev/urandom"])
def test_fifo_and_devices_end_at_once_never_healthy(
    ssh_lab: SshLab, ssh_users: LabUsers, tmp_path: Path, kind: str
) -> None:
    if kind == "fifo":
        path = ssh_lab.root / f"fifo-{secrets.token_hex(3)}.log"
        os.mkfifo(path)
        path.chmod(0o666)
        target = str(path)
    else:
        target = kind
    # "At once": refused as not a regular file before any read, not stopped by the (long) --timeout; no test
    # asserts a time (a loaded machine is slow), the message says which of the two ended it.
    result = CliRunner().invoke(
        main,
        [
            "diagnose",
            f"{ssh_users.plain}@kpro5",
            "--ssh-config",
            str(ssh_lab.ssh_config),
            "--known-hosts",
            str(ssh_lab.known_hosts),
            "--timeout",
            "120",
            "--log",
            target,
        ],
    )
    assert "timed out" not in result.output and "time limit" not in result.output
    assert result.exit_code == ExitStatus.COLLECTION, result.output
    assert "not a regular file" in result.output and "healthy" not in result.output.lower()
    error_lines = [line for line in result.output.splitlines() if line.startswith("logdoctor: error:")]
    assert len(error_lines) == 1
    assert wait_for_no_processes(uid_of(ssh_users.plain)) == []
