"""`logdoctor watch HOST`: a real `logdoctor watch` following a log on the suite's OpenSSH server on loopback.

The test appends to the remote log (a file of this machine, which the server on 127.0.0.2 serves) and waits
for the line that says the view changed; the connection is cut by killing the sshd processes serving it
(test_faults.py), and the watch must say so, connect again and go on. Every wait reads the child's pipes
(threads) and has a generous deadline; nothing is timed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from logdoctor.sources.sshfollow import split_follow_target
from tests.app.test_watch import Watch as WatchProcess
from tests.sources.conftest import SshLab
from tests.sources.test_faults import cut_connections

ROOT = Path(__file__).resolve().parents[2]
STORY = ROOT / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"
LINES = STORY.read_text(encoding="utf-8").splitlines(keepends=True)
HEAD = "".join(LINES[:30])  # start-up and configuration: two likely problems
REST = "".join(LINES[30:])  # the stats under load: the speculative-decoding causes appear
WAIT = 120.0


class Watch(WatchProcess):
    """`logdoctor watch HOST...` against the loopback sshd of the lab, piped (tests/app/test_watch.py's reader)."""

    def __init__(self, lab: SshLab, target: str, *args: str) -> None:
        super().__init__(target, "--ssh-config", str(lab.ssh_config), "--known-hosts", str(lab.known_hosts), *args)


def tails_of(log: Path) -> list[str]:
    """Command lines of the `tail -F` processes that follow `log` (the sshd runs them as root, on this machine)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if cmdline.startswith("tail -F") and str(log) in cmdline:
            found.append(cmdline)
    return found


def no_tails_left(log: Path) -> list[str]:
    deadline = time.monotonic() + 30  # the host's watcher sends TERM, then KILL a second later
    while time.monotonic() < deadline and tails_of(log):
        time.sleep(0.1)
    return tails_of(log)


@pytest.fixture
def remote_log(ssh_lab: SshLab) -> Path:
    directory = Path(ssh_lab.root) / f"watch-{os.getpid()}-{time.monotonic_ns()}"
    directory.mkdir()
    path = directory / "vllm serve.log"  # a space: the path is one quoted argument on the host
    path.write_text(HEAD, encoding="utf-8")
    return path


def test_appended_lines_change_the_view(ssh_lab: SshLab, remote_log: Path) -> None:
    watch = Watch(ssh_lab, f"kpro5:{remote_log}")
    try:
        first = watch.next_line("likely problem")
        assert "tp-link" in first and "speculation" not in first
        with remote_log.open("a", encoding="utf-8") as handle:
            handle.write(REST)
        # the follow may deliver the appended lines in parts, each redrawing the view: wait for the whole
        changed = watch.next_line("| speculation 82")
        assert "top: speculation" in changed
    finally:
        code = watch.end(signal.SIGINT)
    assert code == 0, watch.err
    assert "Traceback" not in "".join(watch.err)
    assert no_tails_left(remote_log) == [], "the remote tail outlived the watch"


def test_a_dropped_connection_is_reconnected_and_the_follow_goes_on(ssh_lab: SshLab, remote_log: Path) -> None:
    watch = Watch(ssh_lab, "kpro5", "--log", str(remote_log))
    try:
        watch.next_line("likely problem")
        watch.wait_err("connecting to")
        assert cut_connections(ssh_lab.servers["kpro5"]) > 0
        watch.wait_err("connection lost")
        watch.wait_err("reconnecting in")
        watch.wait_err("connecting to", count=2)
        with remote_log.open("a", encoding="utf-8") as handle:
            handle.write(REST)
        watch.next_line("top: speculation")  # a view drawn from part of the lines may come first
    finally:
        code = watch.end(signal.SIGTERM)
    assert code == 0, watch.err
    assert no_tails_left(remote_log) == []


def test_rotation_on_the_host_starts_a_new_segment(ssh_lab: SshLab, remote_log: Path) -> None:
    watch = Watch(ssh_lab, f"root@kpro5:{remote_log}")
    try:
        watch.next_line("likely problem")
        remote_log.rename(remote_log.with_name("vllm serve.log.1"))
        remote_log.write_text(REST, encoding="utf-8")
        changed = watch.next_line("top: speculation")  # a view drawn from part of the lines may come first
        assert "tp-link" in changed  # the old file's start-up lines still count
    finally:
        code = watch.end()
    assert code == 0
    assert any("replaced" in line or "appeared" in line for line in watch.err), watch.err


def test_an_unknown_host_key_and_a_missing_remote_file_are_one_line_errors(
    ssh_lab: SshLab, remote_log: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    cases: tuple[tuple[list[str], str, str], ...] = (
        (["--known-hosts", str(empty)], f"kpro5:{remote_log}", "host key"),
        ([], f"kpro5:{remote_log.with_name('nope.log')}", "no such file"),
    )
    for extra, target, words in cases:
        result = subprocess.run(
            [sys.executable, "-m", "logdoctor.app.cli", "watch", target, "--ssh-config", str(ssh_lab.ssh_config)]
            + (extra or ["--known-hosts", str(ssh_lab.known_hosts)]),
            capture_output=True,
            text=True,
            timeout=WAIT,
        )
        assert result.returncode == 3, result.stderr
        errors = [line for line in result.stderr.splitlines() if not line.startswith("kpro5: ")]
        assert len(errors) == 1 and words in errors[0].lower(), result.stderr


def test_watch_does_not_offer_options_it_cannot_honour(ssh_lab: SshLab, remote_log: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "logdoctor.app.cli", "watch", f"kpro5:{remote_log}", "--save", "/tmp/x"],
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert result.returncode == 2 and "--save" in result.stderr


def test_follow_targets_split_host_and_path() -> None:
    assert split_follow_target("root@kpro5:/var/log/vllm.log") == ("root@kpro5", "/var/log/vllm.log")
    assert split_follow_target("kpro5:~/logs/serve.log") == ("kpro5", "~/logs/serve.log")
    assert split_follow_target("kpro5:2222") == ("kpro5:2222", None)  # a port, not a path
    assert split_follow_target("kpro5") == ("kpro5", None)
    assert split_follow_target("[::1]:/x.log") == ("[::1]", "/x.log")
    assert split_follow_target("ssh://root@kpro5:2222") == ("ssh://root@kpro5:2222", None)


def test_docs_show_the_exact_follow_script() -> None:
    from logdoctor.sources.sshfollow import FOLLOW_SCRIPT

    doc = (ROOT / "docs" / "ssh.md").read_text(encoding="utf-8")
    assert f"```sh\n{FOLLOW_SCRIPT}```" in doc, "docs/ssh.md is out of date for FOLLOW_SCRIPT"
