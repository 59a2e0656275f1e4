"""logdoctor/sources/scrape.py: the remote `/metrics` read, run for real (sh, python3 or curl) against a
loopback exporter, locally and over SSH (tests/sources/conftest.py's lab), and parsed into rates."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from threading import Thread

import pytest

from logdoctor.events import SchedulerStats, SpecDecodeStats
from logdoctor.parse.pipeline import EventStream
from logdoctor.sources.discovery import ServerProcess
from logdoctor.sources.scrape import METRICS_SCRIPT, metrics_commands, server_ports
from logdoctor.sources.ssh import collect_host, parse_target
from tests.sources.conftest import KEYWORDS, SshLab, die_with_parent
from tests.sources.prometheus_lab import healthy_recording
from tests.sources.quiet_http import QuietHTTPServer


@pytest.fixture
def exporter() -> Iterator[int]:
    started = time.time() - 600
    recording = healthy_recording()  # the Prometheus lab's recorded live vLLM scrape, counters advancing

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = (recording.text(time.time() - started) + "process_open_fds 45.0\n").encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = QuietHTTPServer(("127.0.0.1", 0), Handler)
    Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def rates(text: str) -> tuple[list[SchedulerStats], list[SpecDecodeStats]]:
    events = list(EventStream("metrics", enumerate(text.splitlines(), start=1)))
    stats = [e for e in events if isinstance(e, SchedulerStats)]
    spec = [e for e in events if isinstance(e, SpecDecodeStats)]
    return stats, spec


def test_ports_from_command_lines() -> None:
    procs = [
        ServerProcess(1, "python -m vllm serve m --port 8001 --tensor-parallel-size 2"),
        ServerProcess(2, "python -m sglang.launch_server --model-path m --port=30005"),
        ServerProcess(3, "python -m sglang.launch_server --model-path m"),
        ServerProcess(4, "vllm serve m"),
        ServerProcess(5, "vllm serve m --port 8001"),
    ]
    assert server_ports(procs) == [8001, 30005, 30000, 8000]
    (command,) = [c for p, c in metrics_commands([ServerProcess(9, "vllm serve m --port 8123")]) if p == 8123]
    assert command.startswith("sh -c ") and command.endswith(" sh 5 5 8123")


def _run(port: int, path: str | None = None) -> str:
    env = {**os.environ, "PATH": path} if path else None
    done = subprocess.run(
        ["sh", "-c", METRICS_SCRIPT, "sh", "1", "3", str(port)], capture_output=True, text=True, env=env, timeout=30
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("tool", ["python3", "curl"])
def test_two_reads_with_timestamps_become_rates(exporter: int, tool: str) -> None:
    path = None
    if tool == "curl":  # a host without python3: only the tools the curl branch needs
        bindir = Path(tempfile.mkdtemp(prefix="logdoctor-nopython-"))
        for name in ("sh", "curl", "awk", "date", "sleep", "printf", "cat"):
            found = shutil.which(name)
            if found:
                (bindir / name).symlink_to(found)
        path = str(bindir)
    text = _run(exporter, path)
    assert "process_open_fds" not in text
    assert text.count("vllm:num_requests_running{") == 2
    stats, spec = rates(text)
    measured = [s.generation_throughput for s in stats if s.generation_throughput and s.running]
    # the recording's 152 tokens in 15 s for its one running request; 110 accepted of 41 drafts
    assert measured and abs(measured[-1] - 152 / 15) < 0.25 * 152 / 15
    assert spec and spec[-1].mean_acceptance_length == pytest.approx(1 + 110 / 41, abs=0.05)


def test_nothing_listening_is_one_quick_empty_read() -> None:
    from tests.sources.conftest import free_port

    # No wait for a second read of nothing: with a day between the reads, the script returns at all only if it
    # never sleeps (no wall-time bound: a 1 s one failed under load; the subprocess timeout catches a sleep).
    port = free_port("127.0.0.1")
    done = subprocess.run(
        ["sh", "-c", METRICS_SCRIPT, "sh", "86400", "3", str(port)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout == "", done.stderr


def test_metrics_over_ssh(ssh_lab: SshLab, exporter: int, discovery_lock: None) -> None:
    cmdline = f"python -m vllm serve Qwen/Qwen3-8B --port {exporter}"
    process = subprocess.Popen(
        ["bash", "-c", f'exec -a "{cmdline}" sleep 120'], stdout=subprocess.DEVNULL, preexec_fn=die_with_parent
    )
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not Path(f"/proc/{process.pid}/cmdline").read_bytes().startswith(
            b"python"
        ):
            time.sleep(0.02)
        col = collect_host(parse_target("kpro5"), ssh_lab.options(facts=True), KEYWORDS)
    finally:
        process.kill()
        process.wait()
    assert col.error is None, col.error
    path = f"GET http://127.0.0.1:{exporter}/metrics"
    found = [s for s in col.sources if s.path == path]
    assert len(found) == 1, ([s.path for s in col.sources], col.notes)
    metrics = found[0]
    assert metrics.lines[0][1] == f"==> {path} <=="
    stats, spec = rates("\n".join(text for _, text in metrics.lines))
    assert any(s.generation_throughput for s in stats)
    assert spec and spec[-1].num_speculative_tokens == 5  # the recording's MTP k=5 (positions 0-4)


def test_docs_show_the_script_exactly() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "ssh.md").read_text(encoding="utf-8")
    assert f"```sh\n{METRICS_SCRIPT}```" in doc, "docs/ssh.md is out of date for METRICS_SCRIPT"


def test_a_date_without_nanoseconds_stamps_whole_seconds(exporter: int) -> None:
    """busybox date prints no %N: the curl branch falls back to whole seconds (ms = seconds * 1000)."""
    bindir = Path(tempfile.mkdtemp(prefix="logdoctor-busybox-"))
    for name in ("sh", "curl", "awk", "sleep", "printf", "cat"):
        found = shutil.which(name)
        if found:
            (bindir / name).symlink_to(found)
    real_date = shutil.which("date")
    (bindir / "date").write_text(
        f'#!/bin/sh\n[ "$1" = "+%s%N" ] && {{ echo "$({real_date} +%s)N"; exit 0; }}\nexec {real_date} "$@"\n'
    )
    (bindir / "date").chmod(0o755)
    text = _run(exporter, str(bindir))
    stamps = {line.rsplit(" ", 1)[1] for line in text.splitlines() if line.startswith("vllm:")}
    assert len(stamps) == 2 and all(s.isdigit() and s.endswith("000") for s in stamps)
