"""Progress of `diagnose HOST` and `diff` on stderr: on a terminal only, never on stdout or in a pipe.

The pty test runs the real CLI with stderr on a pseudo-terminal and stdout on a pipe (`--format json | jq`),
and keeps reading both while the child runs (a pty nobody reads fills and blocks the child).
"""

from __future__ import annotations

import io
import json
import os
import pty
import secrets
import select
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console

from logdoctor.app.progress import HostProgress
from logdoctor.sources.ssh import HostCollection, RemoteSource
from tests.sources.conftest import SshLab

ROOT = Path(__file__).resolve().parents[2]
STORY = ROOT / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"
WAIT = 180.0


def remote_story(lab: SshLab) -> Path:
    path = lab.root / f"progress-{secrets.token_hex(3)}.log"
    path.write_text(STORY.read_text(encoding="utf-8"), encoding="utf-8")
    return path


def test_host_progress_counts_the_lines_of_the_read_under_way() -> None:
    screen = io.StringIO()
    progress = HostProgress(Console(file=screen, force_terminal=True, width=200), enabled=True)
    collection = HostCollection(host="kpro5")
    progress.started(collection)
    progress.say("kpro5", "connecting to root@127.0.0.2:22")
    assert progress.line().startswith("kpro5: connecting to root@127.0.0.2:22, ")
    source = RemoteSource(name="serve.log", host="kpro5", path="/var/log/serve.log", lines=[(7, "x" * 999)] * 3)
    collection.sources.append(source)
    progress.say("kpro5", "reading /var/log/serve.log")
    assert "kpro5: reading /var/log/serve.log: 3 lines, 0.0 MB" in progress.line()
    source.lines.extend([(9, "y" * 999_999)] * 2)
    assert ": 5 lines, 2.0 MB" in progress.line()  # only the new lines are measured
    progress.say("kpro5", "done: 1 sources")
    assert "kpro5: parsing and diagnosing" in progress.line()
    progress.stop()
    assert "kpro5" in screen.getvalue()


def test_host_progress_off_a_terminal_writes_nothing() -> None:
    screen = io.StringIO()
    progress = HostProgress(Console(file=screen, force_terminal=False))
    progress.say("kpro5", "connecting to root@127.0.0.2:22")
    progress.stop()
    assert screen.getvalue() == "" and progress.line() == ""


def _read_all(fds: dict[int, bytearray], proc: subprocess.Popen[bytes]) -> None:
    """Read the child's stdout pipe and the pty until it exits and both are drained."""
    deadline = time.monotonic() + WAIT
    while fds and time.monotonic() < deadline:
        ready, _, _ = select.select(list(fds), [], [], 0.2)
        for fd in ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the pty's other side closed
                chunk = b""
            if chunk:
                fds[fd] += chunk
            else:
                del fds[fd]
        if not ready and proc.poll() is not None:
            break


def _diagnose_kpro5(ssh_lab: SshLab, log: Path) -> list[str]:
    """`logdoctor diagnose kpro5 --log LOG --format json` in a child, through the lab's config and known hosts."""
    return [
        sys.executable,
        "-m",
        "logdoctor.app.cli",
        "diagnose",
        "kpro5",
        "--ssh-config",
        str(ssh_lab.ssh_config),
        "--known-hosts",
        str(ssh_lab.known_hosts),
        "--log",
        str(log),
        "--format",
        "json",
    ]


def test_diagnose_host_shows_progress_on_a_terminal_stderr_and_keeps_stdout_clean(ssh_lab: SshLab) -> None:
    log = remote_story(ssh_lab)
    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "LOGDOCTOR_NO_PROGRESS")}
    proc = subprocess.Popen(
        _diagnose_kpro5(ssh_lab, log),
        stdout=subprocess.PIPE,
        stderr=slave,
        env={**env, "TERM": "xterm-256color"},
    )
    os.close(slave)
    assert proc.stdout is not None
    out, err = bytearray(), bytearray()
    try:
        _read_all({proc.stdout.fileno(): out, master: err}, proc)
        code = proc.wait(timeout=WAIT)
    finally:
        os.close(master)
    terminal = err.decode("utf-8", "replace")
    assert code == 1, terminal  # the story's findings reach --fail-on high
    assert "kpro5: connecting to" in terminal or "kpro5: reading" in terminal, terminal
    report = json.loads(out.decode())  # stdout holds the report alone: no spinner, no escape codes
    assert b"\x1b" not in out and report["findings"]


def test_diagnose_host_piped_prints_no_progress(ssh_lab: SshLab) -> None:
    log = remote_story(ssh_lab)
    env = {k: v for k, v in os.environ.items() if k != "LOGDOCTOR_NO_PROGRESS"}
    result = subprocess.run(
        _diagnose_kpro5(ssh_lab, log),
        capture_output=True,
        text=True,
        timeout=WAIT,
        env=env,
    )
    assert result.returncode == 1, result.stderr
    assert "connecting to" not in result.stderr and "\x1b" not in result.stderr
    assert "kpro5: found" in result.stderr  # what was found is still said, as a line
    json.loads(result.stdout)
