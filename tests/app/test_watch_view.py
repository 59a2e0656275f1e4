"""`logdoctor watch` on a terminal: a real pseudo-terminal of a given size, its bytes fed to a terminal emulator
(pyte), and the screen read as a user sees it. The view must fit (the header stays on the top row: nothing
scrolled), show every cause's line, and, across a rotation to a new server start, show the new run alone, as
`diagnose` of the new file reports it."""

from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path

import pytest

pyte = pytest.importorskip("pyte")

ROOT = Path(__file__).resolve().parents[2]
STORY = ROOT / "fixtures" / "logs" / "story"
SLOW = STORY / "vllm-dflash-tp2-a6000.log"  # two likely problems, five in all
HEALTHY = STORY / "vllm-mtp-tp2-a6000-healthy.log"  # another server start: healthy
WAIT = 120.0  # seconds for a view on a loaded two-core machine


def diagnosed(path: Path) -> dict[str, object]:
    result = subprocess.run(
        [sys.executable, "-m", "logdoctor.app.cli", "diagnose", str(path), "--format", "json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    report: dict[str, object] = json.loads(result.stdout)
    return report


def causes_of(report: dict[str, object]) -> list[str]:
    """The problems of the report, as the view numbers them (findings that share one mechanism are one)."""
    findings = report["findings"]
    assert isinstance(findings, list)
    return list(dict.fromkeys(f["problem"] for f in findings))


class Terminal:
    """`logdoctor watch PATH` on a pty of `columns` x `rows`, drawn on a pyte screen."""

    def __init__(self, path: Path, columns: int, rows: int) -> None:
        import pty

        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "logdoctor.app.cli", "watch", str(path), "--interval", "0.2"],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env={**env, "TERM": "xterm-256color"},
            cwd=ROOT,
        )
        os.close(slave)
        self.master = master
        self.screen = pyte.Screen(columns, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.raw = b""

    def _read(self, timeout: float) -> bool:
        if not select.select([self.master], [], [], timeout)[0]:
            return False
        try:
            data = os.read(self.master, 65536)
        except OSError:
            return False
        self.raw += data
        self.stream.feed(data)
        return bool(data)

    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]

    def wait_for(self, ready: Callable[[list[str]], bool], what: str) -> list[str]:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            self._read(0.3)
            if ready(self.lines()):
                # the redraw may come in several writes: read what follows at once, then look again
                while self._read(0.3):
                    pass
                if ready(self.lines()):
                    return self.lines()
        raise AssertionError(f"no {what} on the screen:\n" + "\n".join(self.lines()))

    def end(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        deadline = time.monotonic() + WAIT
        while self.proc.poll() is None and time.monotonic() < deadline:
            self._read(0.2)  # a pty nobody reads would block the last redraw, and the exit
        code = self.proc.wait(timeout=10)
        os.close(self.master)
        return code


def numbered(lines: list[str], cause: str) -> bool:
    return any(line.lstrip()[:1].isdigit() and f". {cause}  score" in line for line in lines)


@pytest.mark.parametrize(("columns", "rows"), [(80, 24), (120, 30)], ids=["80x24", "120x30"])
def test_the_live_view_fits_the_terminal_with_every_cause_on_a_line(columns: int, rows: int) -> None:
    causes = causes_of(diagnosed(SLOW))
    assert len(causes) >= 5
    terminal = Terminal(SLOW, columns, rows)
    try:
        lines = terminal.wait_for(lambda ls: all(numbered(ls, c) for c in causes), "line for every cause")
    finally:
        code = terminal.end()
    assert lines[0].startswith("watching ")  # the top row is the header: nothing scrolled off
    assert lines[1].startswith("PROBLEMS ")
    assert all(len(line) <= columns for line in lines)
    assert code == 0 and b"Traceback" not in terminal.raw


def test_a_rotation_to_a_new_server_start_shows_the_new_run_alone(tmp_path: Path) -> None:
    log = tmp_path / "grow.log"
    log.write_bytes(SLOW.read_bytes())
    expected = diagnosed(HEALTHY)["verdict"]
    assert isinstance(expected, dict) and expected["kind"] == "healthy"
    terminal = Terminal(log, 120, 30)
    try:
        terminal.wait_for(lambda ls: any(line.startswith("PROBLEMS ") for line in ls), "PROBLEMS verdict")
        log.rename(tmp_path / "grow.log.1")  # logrotate, then the restarted server writes a new log
        log.write_bytes(HEALTHY.read_bytes())
        lines = terminal.wait_for(
            lambda ls: any(line.startswith("HEALTHY ") for line in ls) and any("earlier run" in x for x in ls),
            "HEALTHY verdict of the new run",
        )
    finally:
        code = terminal.end()
    verdict = next(line for line in lines if line.startswith("HEALTHY "))
    assert verdict == f"HEALTHY  {expected['summary']}"[:120].rstrip()
    assert not numbered(lines, "custom-allreduce-disabled")  # the old run's causes are not in this view
    assert not numbered(lines, "spec-net-loss")
    earlier = next(line for line in lines if "earlier run" in line)
    assert "grow.log@1" in earlier and "PROBLEMS" in earlier  # the old run: one line
    assert code == 0


def test_an_empty_log_waits_instead_of_calling_it_not_a_log(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    log.write_bytes(b"")
    terminal = Terminal(log, 80, 24)
    try:
        lines = terminal.wait_for(lambda ls: any(x.startswith("waiting for lines of") for x in ls), "waiting line")
        assert not any("NOT-A-LOG" in line or "Ruled out" in line for line in lines)
        log.write_bytes(SLOW.read_bytes())
        terminal.wait_for(lambda ls: any(x.startswith("PROBLEMS ") for x in ls), "the diagnosis once lines came")
    finally:
        assert terminal.end() == 0
