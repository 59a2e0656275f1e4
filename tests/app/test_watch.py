"""`logdoctor watch`: a real subprocess following a real file while the test writes to it.

Piped, watch prints one line for its first diagnosis and one for each change; the tests wait for a line
(never for a fixed time) before they write the next part of the log.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from logdoctor.app.watch import FileFollower, Watcher
from logdoctor.engine.result import Diagnosis

ROOT = Path(__file__).resolve().parents[2]
STORY = ROOT / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"
LINES = STORY.read_text(encoding="utf-8").splitlines(keepends=True)
HEAD = "".join(LINES[:30])  # start-up and configuration: two likely problems
REST = "".join(LINES[30:])  # the stats under load: the speculative-decoding causes appear
WAIT = 120.0  # seconds for one diagnosis on a loaded two-core machine


class Watch:
    """`logdoctor watch TARGET` piped, its stdout and stderr read by threads for as long as it runs."""

    def __init__(self, target: Path | str, *args: str) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "logdoctor.app.cli", "watch", str(target), "--interval", "0.2", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.err: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.err.extend(self.proc.stderr or []), daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def next_line(self, containing: str = "") -> str:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.5)
            except queue.Empty:
                if self.proc.poll() is not None:
                    break
                continue
            if containing in line:
                return line
        raise AssertionError(f"no line with {containing!r}; stderr: {''.join(self.err)}")

    def wait_err(self, containing: str, count: int = 1) -> None:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline and sum(containing in line for line in self.err) < count:
            if self.proc.poll() is not None:
                time.sleep(0.5)  # the reader thread may still be draining
                break
            time.sleep(0.1)
        assert sum(containing in line for line in self.err) >= count, self.err

    def end(self, signum: int = signal.SIGINT) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signum)
        return self.proc.wait(timeout=WAIT)


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "vllm.log"
    path.write_text(HEAD, encoding="utf-8")
    return path


def test_appended_lines_change_the_diagnosis(log: Path) -> None:
    watch = Watch(log)
    try:
        first = watch.next_line("likely problem")
        assert "speculation" not in first  # no stats line yet
        with log.open("a", encoding="utf-8") as handle:
            handle.write(REST)
        # the appended lines may be read in parts, each redrawing the view: wait for the whole
        changed = watch.next_line("| speculation 82")
        assert "top: speculation" in changed
    finally:
        code = watch.end(signal.SIGINT)
    assert code == 0
    assert "Traceback" not in "".join(watch.err)


def test_rotation_rename_then_a_new_file(log: Path) -> None:
    watch = Watch(log)
    try:
        watch.next_line("likely problem")
        log.rename(log.with_name("vllm.log.1"))  # logrotate: the file moves away...
        log.write_text(REST, encoding="utf-8")  # ...and the server writes a new one under the name
        changed = watch.next_line("top: speculation")  # a view drawn from part of the lines may come first
        # the old file's start-up lines are still this deployment's configuration
        assert "tp-link" in changed
    finally:
        code = watch.end(signal.SIGTERM)
    assert code == 0
    assert any("renamed" in line for line in watch.err)


def test_rotation_by_truncation(log: Path) -> None:
    watch = Watch(log)
    try:
        watch.next_line("likely problem")
        with log.open("r+", encoding="utf-8") as handle:  # copytruncate
            handle.truncate(0)
        watch.wait_err("truncated")  # seen before the new content comes (else it is only a longer file)
        log.write_text(HEAD + REST, encoding="utf-8")
        watch.next_line("speculation")
    finally:
        code = watch.end()
    assert code == 0
    assert any("truncated" in line for line in watch.err)


def test_ctrl_c_before_the_first_diagnosis_exits_zero(log: Path) -> None:
    watch = Watch(log)
    watch.next_line("likely problem")
    assert watch.end(signal.SIGINT) == 0
    assert "Traceback" not in "".join(watch.err)


def test_stdin_is_followed_until_it_ends() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "logdoctor.app.cli", "watch", "-"], input=HEAD + REST, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert "top: speculation" in result.stdout.splitlines()[-1]


def test_a_missing_file_is_waited_for_like_tail_f(tmp_path: Path) -> None:
    log = tmp_path / "later.log"
    watch = Watch(log)
    try:
        waiting = watch.next_line("waiting")
        assert f"waiting for {log} to appear" in waiting
        log.write_text(HEAD + REST, encoding="utf-8")
        watch.next_line("top: speculation")  # a view drawn from part of the lines may come first
    finally:
        code = watch.end()
    assert code == 0
    assert any("appeared" in line for line in watch.err)


def test_a_restart_appended_to_the_log_is_a_new_run(log: Path) -> None:
    """A second server start in the same file: the view is the new run's alone, and a line says a run began."""
    healthy = (ROOT / "fixtures" / "logs" / "story" / "vllm-mtp-tp2-a6000-healthy.log").read_text(encoding="utf-8")
    log.write_text(HEAD + REST, encoding="utf-8")
    watch = Watch(log)
    try:
        watch.next_line("speculation")
        with log.open("a", encoding="utf-8") as handle:
            handle.write(healthy)
        assert "new run: " in watch.next_line("new run")
        assert watch.next_line("healthy").split()[1] == "healthy"
    finally:
        assert watch.end() == 0


def test_an_unreachable_host_is_a_one_line_error(tmp_path: Path) -> None:
    # nothing listens on port 1 of this loopback address: the first connection fails, which ends the watch
    for target, code in (("root@127.0.0.9:1", 3),):
        result = subprocess.run(
            [sys.executable, "-m", "logdoctor.app.cli", "watch", target, "--ssh-config", "/dev/null"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == code, result.stderr
        errors = [line for line in result.stderr.strip().splitlines() if "connecting to" not in line]
        assert len(errors) == 1 and "Traceback" not in result.stderr, result.stderr


def test_follower_reads_through_rename_and_truncation(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_bytes(b"one\ntwo\nhalf")
    rotations: list[str] = []
    follower = FileFollower(path, rotations.append)
    assert list(follower.poll()) == [b"one", b"two"]  # a line without its newline is kept for later
    with path.open("ab") as handle:
        handle.write(b"-line\n")
    assert list(follower.poll()) == [b"half-line"]
    with path.open("ab") as handle:
        handle.write(b"last of the old file\n")
    path.rename(tmp_path / "x.log.1")
    assert list(follower.poll()) == [b"last of the old file"]  # the new file is not there yet
    path.write_bytes(b"new 1\n")
    assert list(follower.poll()) == [b"new 1"] and rotations == ["renamed: reading the new file from its start"]
    path.write_bytes(b"")
    assert list(follower.poll()) == []
    assert rotations[-1].startswith("truncated")
    follower.close()


def test_live_view_in_a_terminal(log: Path) -> None:
    """On a terminal the ranked view is redrawn in place (rich Live); Ctrl-C ends it with exit 0."""
    import fcntl
    import pty
    import select
    import struct
    import termios

    log.write_text(HEAD + REST, encoding="utf-8")
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 60, 100, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "logdoctor.app.cli", "watch", str(log)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**env, "TERM": "xterm-256color"},
    )
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + WAIT
    try:
        while time.monotonic() < deadline and b"speculation" not in seen:
            if select.select([master], [], [], 0.5)[0]:
                seen += os.read(master, 65536)
        proc.send_signal(signal.SIGINT)
        # Keep reading while it exits: the last redraw on Ctrl-C is written to the terminal, and a pty
        # nobody reads fills after a few KiB and would block that write (and the exit) forever.
        stop = time.monotonic() + WAIT
        while proc.poll() is None and time.monotonic() < stop:
            if select.select([master], [], [], 0.2)[0]:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    break
        code = proc.wait(timeout=5)
        while select.select([master], [], [], 0.2)[0]:
            try:
                seen += os.read(master, 65536)
            except OSError:
                break
    finally:
        os.close(master)
    text = seen.decode("utf-8", errors="replace")
    assert b"speculation" in seen and "watching " in text and "Ctrl-C ends" in text
    assert code == 0 and "Traceback" not in text


# --- incremental parsing: the same diagnosis as `diagnose` of the same lines ---------------------------------

INPUTS = ROOT / "fixtures" / "logs" / "inputs" / "vllm-dflash-tp2-a6000-env-bench"
SAME_AS_DIAGNOSE = [
    *sorted((ROOT / "fixtures" / "logs" / "story").glob("*.log")),
    INPUTS / "collect_env.txt",  # multi-line blocks: checkpoints fall inside them
    INPUTS / "bench-c1.json",  # a JSON document spread over lines
]


def _quiet_watcher(path: Path) -> Watcher:
    import io

    from rich.console import Console

    from logdoctor.app.commands.common import load_rule_set

    quiet = Console(file=io.StringIO())
    return Watcher(
        str(path),
        load_rule_set((), False),
        engine="auto",
        suppressions=None,
        interval=1,
        console=quiet,
        err=quiet,
        live=False,
        render=str,
    )


def _verdict(d: Diagnosis) -> dict[str, object]:
    """Everything a report says but the per-source counts (diagnose counts a file's lines, watch the ones it read)."""
    return d.model_dump(mode="json", exclude={"sources"})


@pytest.mark.parametrize("path", SAME_AS_DIAGNOSE, ids=lambda p: p.name)
def test_incremental_watch_diagnoses_what_diagnose_does_of_the_same_lines(path: Path) -> None:
    from logdoctor.pipeline.run import LineSource, diagnose_parsed, parse_sources

    watcher = _quiet_watcher(path)
    raw = path.read_bytes().split(b"\n")
    if raw and raw[-1] == b"":
        raw.pop()
    rules = watcher.rules
    for number, line in enumerate(raw, start=1):
        watcher._add(line)
        if number % 11 and number != len(raw):
            continue
        candidates = list(watcher.segments[-1].lines)
        reference = parse_sources([LineSource(name=watcher.name, lines=candidates)], "auto")
        expected = diagnose_parsed(reference, rules, engine="auto")[0]
        assert _verdict(watcher.diagnose()) == _verdict(expected), f"{path.name}: after line {number}"
    segment = watcher.segments[-1]
    if path.parent == INPUTS:  # a view fell inside a block: that view parsed the lines again, and agreed
        assert segment.reparsed > 0
    assert segment.fed == len(segment.lines)  # each candidate line went into the stream once
    assert segment.stream is not None and segment.stream.stats.lines == len(segment.lines)


def test_a_story_log_followed_diagnoses_as_diagnose_of_the_file(tmp_path: Path) -> None:
    """The story logs are all candidate lines that matter: the watch's last view is `diagnose FILE`'s report."""
    from logdoctor.pipeline.run import diagnose_sources, local_line_sources

    watcher = _quiet_watcher(STORY)
    for line in STORY.read_bytes().splitlines():
        watcher._add(line)
        if len(watcher.segments[-1].lines) % 25 == 0:
            watcher.diagnose()  # views along the way feed the stream in chunks
    expected = diagnose_sources(local_line_sources([str(STORY)]), watcher.rules, engine="auto")
    assert _verdict(watcher.diagnose()) == _verdict(expected)
    assert sum(s.reparsed for s in watcher.segments) == 0  # no block was open at a view: nothing parsed twice


def test_a_stream_fed_in_chunks_gives_the_events_of_one_pass() -> None:
    from logdoctor.events import EventBase
    from logdoctor.parse.pipeline import EventStream

    lines = list(enumerate(STORY.read_text(encoding="utf-8").splitlines(), start=1))
    whole = [e.model_dump() for e in EventStream("s", lines, keep_text=True)]
    stream = EventStream("s", (), keep_text=True)
    events: list[EventBase] = []
    for start in range(0, len(lines), 7):
        events.extend(stream.feed(lines[start : start + 7]))
        peeked = stream.peek_close()
        assert peeked is not None
    events.extend(stream.close())
    assert [e.model_dump() for e in events] == whole


def test_watch_offers_only_the_ssh_options_a_follow_honours() -> None:
    """--save, --jobs, --max-bytes and --read-timeout bound a collection that ends: `watch --help` does not offer
    them (a follow has no end), and the ones it offers reach the host reader."""
    from click.testing import CliRunner
    from rich.console import Console

    from logdoctor.app.cli import main
    from logdoctor.app.commands.watch import watch
    from logdoctor.app.watch import host_reader, watch_host_options

    offered = {opt for p in watch.params for opt in p.opts}
    assert not offered & {"--save", "--jobs", "--max-bytes", "--read-timeout"}
    assert {"--ssh-config", "--identity", "--known-hosts", "--timeout", "--log", "--sudo", "--accept-new"} <= offered
    refused = CliRunner().invoke(main, ["watch", "x.log", "--save", "dir"])
    assert refused.exit_code == 2 and "No such option" in refused.stderr
    ssh = watch_host_options(timeout=3.0, sudo=True)
    assert ssh.timeout == 3.0 and ssh.sudo and ssh.save is None
    read, label = host_reader("root@127.0.0.9:/var/log/vllm.log", ssh, Console(stderr=True))
    assert callable(read) and label == "root@127.0.0.9"


def test_a_signal_landing_inside_the_stop_wait_ends_the_watch(tmp_path: Path) -> None:
    """SIGTERM that lands while the main thread holds the stop event's own lock (inside `stop.wait`) must not hang:
    the handler takes no lock (an `Event.set()` there once hung a CI run for good). A child process, so that a
    regression fails at the timeout instead of hanging the suite."""
    log = tmp_path / "serve.log"
    log.write_text("INFO 05-05 10:00:00 [api_server.py:1] vLLM API server version 0.20.1\n", encoding="utf-8")
    code = (
        "import signal, sys\n"
        "from pathlib import Path\n"
        "from logdoctor.app.watch import stop_on_signals\n"
        "from tests.app.test_watch import _quiet_watcher\n"
        "watcher = _quiet_watcher(Path(sys.argv[1]))\n"
        "restore = stop_on_signals(watcher)\n"
        "with getattr(watcher.stop, '_cond'):\n"
        "    signal.raise_signal(signal.SIGTERM)\n"
        "watcher.run()\n"
        "restore()\n"
        "print('ended', watcher.signalled, watcher.stop.is_set())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(log)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.stdout.split() == ["ended", "True", "True"], result.stderr


def test_the_view_waits_for_lines_and_for_traffic(tmp_path: Path) -> None:
    """No line of a known format yet: `waiting for lines`, never a NOT-A-LOG verdict; start-up lines and no
    stats line yet: `waiting for traffic`, above what the start-up lines show."""
    healthy = ROOT / "fixtures" / "logs" / "story" / "vllm-mtp-tp2-a6000-healthy.log"
    watcher = _quiet_watcher(healthy)
    empty = watcher.view()
    assert empty.diagnosis is None and empty.waiting == f"waiting for lines of {healthy}"
    watcher._add(b"hello, not a log line")
    assert (
        watcher.view().waiting
        == f"waiting for lines of {healthy} (1 line(s) read, none of a vLLM, SGLang or NCCL format yet)"
    )
    for line in healthy.read_bytes().splitlines():
        if b"Avg prompt throughput" in line:
            break
        watcher._add(line)
    starting = watcher.view()
    assert starting.diagnosis is not None and starting.diagnosis.verdict.kind != "problems"
    assert starting.waiting is not None and starting.waiting.startswith("waiting for traffic")
    watcher._add(line)
    assert watcher.view().waiting is None  # the first stats line: a diagnosis like any other


def test_runs_across_rotations_are_never_mixed(tmp_path: Path) -> None:
    """A file, its logrotate continuation (stats lines, no start), then a restart's new file: the view is the
    restart's run alone, as `diagnose` of its lines says, and the two files before it are one line each."""
    from logdoctor.pipeline.run import diagnose_sources, local_line_sources

    healthy = ROOT / "fixtures" / "logs" / "story" / "vllm-mtp-tp2-a6000-healthy.log"
    watcher = _quiet_watcher(tmp_path / "grow.log")
    for chunk in (HEAD + REST, REST):
        for line in chunk.encode().splitlines():
            watcher._add(line)
        watcher.view()
        watcher._rotated("renamed: reading the new file from its start")
    continued = watcher.view()  # the new file is empty so far: the run of the files before it goes on
    assert continued.diagnosis is not None and continued.diagnosis.verdict.kind == "problems"
    for line in healthy.read_bytes().splitlines():
        watcher._add(line)
    view = watcher.view()
    expected = diagnose_sources(local_line_sources([str(healthy)]), watcher.rules, engine="auto")
    assert view.diagnosis is not None
    assert view.diagnosis.verdict == expected.verdict
    assert [f.rule for f in view.diagnosis.findings] == [f.rule for f in expected.findings]
    assert len(view.earlier) == 2
    assert view.earlier[0].startswith("earlier run ") and "@1 " in view.earlier[0] and "PROBLEMS" in view.earlier[0]
    assert "@2 " in view.earlier[1] and view.earlier[1].endswith("the run of the file before it, continued")
    assert view.key != continued.key  # a new run: piped output says so


def test_stdin_that_ends_without_a_log_line_says_so() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "logdoctor.app.cli", "watch", "-"], input="hello\n", capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    last = result.stdout.splitlines()[-1]
    assert " ended  <stdin> ended: 1 line(s) read, none of a vLLM, SGLang or NCCL format" in last
    assert "not-a-log" not in result.stdout and "healthy" not in result.stdout
