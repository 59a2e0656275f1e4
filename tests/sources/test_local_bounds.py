"""Bounded local input: damaged and bomb gzips, NUL holes and huge lines, devices, FIFOs with no
writer, stdin that never ends, CR-only line endings, and nothing left behind on SIGTERM/SIGHUP."""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from logdoctor.app.cli import main
from logdoctor.errors import InputError
from logdoctor.parse.pipeline import EventStream
from logdoctor.sources.local import MAX_LINE_BYTES, PREFILTER_MIN_BYTES, ReadLimits, open_local

ROOT = Path(__file__).resolve().parents[2]
STORY = ROOT / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"
VERSION = "(APIServer pid=1) INFO 05-08 14:02:11 [api_server.py:1] vLLM API server version 0.20.1\n"
STATS = (
    "(APIServer pid=1) INFO 05-08 16:25:09 [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
    "Avg generation throughput: 18.2 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.4%, "
    "Prefix cache hit rate: 0.0%\n"
)


def run(*args: str, input: str | bytes | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=input)
    return result.exit_code, result.stdout, result.stderr


def logdoctor(*args: str, stdin: int | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "logdoctor", *args],
        stdin=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("logdoctor: error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_the_61_byte_corrupt_gzip_is_one_line_exit_2(tmp_path: Path) -> None:
    # printf 'hello\n%.0s' {1..2000} | gzip -9 | ... d[12]^=0x55 ... > c.gz
    data = bytearray(gzip.compress(b"hello\n" * 2000, compresslevel=9, mtime=0))
    data[12] ^= 0x55
    path = tmp_path / "c.gz"
    path.write_bytes(bytes(data))
    for command in ("parse", "diagnose"):
        code, _, err = run(command, str(path))
        assert code == 2
        assert "c.gz" in _one_error_line(err)


def test_a_gzip_truncated_mid_stream_in_the_prefilter_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "cut.log.gz"
    path.write_bytes(gzip.compress((STATS * 20000).encode())[:-4000])
    source = open_local(str(path))
    with pytest.raises(InputError, match="damaged gzip"):
        list(source.lines(["Avg prompt throughput"], prefilter=True))


def test_a_gzip_of_empty_lines_stops_at_the_ratio_cap_quickly(tmp_path: Path) -> None:
    path = tmp_path / "empty.log.gz"
    path.write_bytes(gzip.compress(b"\n" * (64 * 1024 * 1024), compresslevel=9))
    assert path.stat().st_size < 100_000
    code, _, err = run("parse", str(path))  # stops at the cap (a read past it would take the whole 64 MiB)
    assert code == 2
    assert "--max-gzip-ratio" in _one_error_line(err)
    code, _, _ = run("parse", str(path), "--max-gzip-ratio", "100000", "--max-read", "1M")
    assert code == 2  # then the byte cap


def test_a_gzip_of_stats_lines_stops_at_the_ratio_cap_in_the_prefilter_too(tmp_path: Path) -> None:
    path = tmp_path / "stats.log.gz"
    path.write_bytes(gzip.compress(STATS.encode() * 100_000, compresslevel=6))
    source = open_local(str(path))
    with pytest.raises(InputError, match="gzip bomb"):
        list(source.lines(["Avg prompt throughput"], prefilter=True))
    relaxed = open_local(str(path), ReadLimits(max_gzip_ratio=1e6))
    assert len(list(relaxed.lines(["Avg prompt throughput"], prefilter=True))) == 100_000


def _parse_past_a_hole(path: Path, hole: int) -> int:
    """`parse --format jsonl` of a file that starts with a NUL hole of `hole` bytes (what copytruncate leaves: a sparse
    run of NULs, no newline, before the lines written afterwards): its checks, and the peak RSS in MiB."""
    with open(path, "wb") as fh:
        fh.truncate(hole)
        fh.seek(hole)
        fh.write(("\n" + VERSION + STATS).encode())
    assert path.stat().st_size >= PREFILTER_MIN_BYTES  # the grep prefilter's path first
    # Measured in a process of its own: RUSAGE_CHILDREN of this worker holds every child it ever waited for.
    measure = (
        "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
        "sys.stdout.write(r.stdout); sys.stderr.write(r.stderr); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(r.returncode)"
    )
    result = subprocess.run(
        [sys.executable, "-c", measure, sys.executable, "-m", "logdoctor", "parse", "--format", "jsonl", str(path)],
        capture_output=True,
        text=True,
        timeout=900,  # a stop for a hang, not a speed check: 20 GiB of NULs skipped at load 20 took over 120 s
    )
    assert result.returncode == 0, result.stderr
    assert '"type":"engine_version"' in result.stdout or "0.20.1" in result.stdout
    assert "scheduler_stats" in result.stdout
    assert "over the 1.0M line cap" in result.stderr and "read without it" in result.stderr
    return int(result.stderr.strip().splitlines()[-1]) // 1024  # logdoctor and its grep, nothing else


def test_a_nul_hole_is_skipped_in_bounded_memory_with_a_note(tmp_path: Path) -> None:
    """A 1 GiB hole and a 5 GiB one (offsets past 4 GiB): each read under 400 MiB RSS, and five times the hole
    costs no more memory (what a buffer growing with the hole would show), with the note each time."""
    small = _parse_past_a_hole(tmp_path / "small.log", 1024**3)
    large = _parse_past_a_hole(tmp_path / "large.log", 5 * 1024**3)
    assert small < 400 and large < 400, (small, large)
    assert large < small + 64, (small, large)


def test_a_long_line_is_noted_in_the_diagnosis(tmp_path: Path) -> None:
    path = tmp_path / "long.log"
    path.write_bytes(VERSION.encode() + b"x" * (3 * MAX_LINE_BYTES) + b"\n" + STATS.encode())
    code, out, err = run("diagnose", str(path), "--format", "json")
    assert code in (0, 1), err
    assert "line 2: 3.0M long, over the 1.0M line cap" in out


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_is_refused_by_name_and_capped_on_stdin(device: str) -> None:
    code, _, err = run("diagnose", device)
    assert code == 2 and "is a device" in _one_error_line(err)
    with open(device, "rb") as stdin:
        result = logdoctor("diagnose", "-", "--max-read", "8M", stdin=stdin.fileno(), timeout=60)
    assert result.returncode == 2
    assert "over --max-read 8.0M" in _one_error_line(result.stderr)


def test_a_fifo_with_no_writer_stops_at_the_read_timeout(tmp_path: Path) -> None:
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    # No wall-time assertion (tests never depend on speed): a read that ignored the timeout would hang until the
    # child's own timeout and fail there.
    result = logdoctor("parse", str(fifo), "--input-timeout", "1", timeout=120)
    assert result.returncode == 2
    assert "nothing arrived for 1 s" in _one_error_line(result.stderr)


def test_the_read_timeout_hint_names_the_local_flag(tmp_path: Path) -> None:
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    result = logdoctor("diagnose", str(fifo), "--input-timeout", "0.5", timeout=30)
    line = _one_error_line(result.stderr)
    assert result.returncode == 2
    assert "--input-timeout SECONDS waits longer" in line and "--read-timeout" not in line


@pytest.mark.parametrize("command", ["parse", "diagnose"])
def test_a_fifo_that_never_ends_stops_at_max_read(tmp_path: Path, command: str) -> None:
    """A writer that never stops (`yes` of a log line) into a FIFO: the read stops at --max-read with one
    line and exit 2, and the writer is left to die of SIGPIPE."""
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", 'exec yes "$1" > "$2"', "sh", STATS.rstrip("\n"), str(fifo)])
    try:
        result = logdoctor(command, str(fifo), "--max-read", "4M", timeout=120)
    finally:
        writer.kill()
        writer.wait(timeout=30)
    assert result.returncode == 2, result.stderr
    assert "over --max-read 4.0M" in _one_error_line(result.stderr)


def test_an_endless_line_on_stdin_stops_at_max_read_in_parse_too() -> None:
    """One line that never ends (NUL bytes from /dev/zero, no newline): skipped in bounded memory, then
    stopped at --max-read with one line and exit 2 (`diagnose`: test_a_device_is_refused_by_name...)."""
    with open("/dev/zero", "rb") as stdin:
        result = logdoctor("parse", "-", "--max-read", "6M", stdin=stdin.fileno(), timeout=120)
    assert result.returncode == 2
    assert "over --max-read 6.0M" in _one_error_line(result.stderr)


def test_a_fifo_with_a_writer_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", 'cat "$1" > "$2"', "sh", str(STORY), str(fifo)])
    try:
        result = logdoctor("parse", "--format", "jsonl", str(fifo), timeout=60)
    finally:
        writer.wait(timeout=30)
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 108


def test_a_stdin_that_never_sends_stops_at_the_read_timeout() -> None:
    sleeper = subprocess.Popen(["sleep", "30"], stdout=subprocess.PIPE)
    try:
        assert sleeper.stdout is not None
        result = logdoctor("diagnose", "-", "--input-timeout", "1", stdin=sleeper.stdout.fileno(), timeout=30)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert result.returncode == 2
    assert "nothing arrived" in _one_error_line(result.stderr)


def test_max_seconds_stops_a_slow_input(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    path.write_bytes(STATS.encode() * 100_000)
    source = open_local(str(path), ReadLimits(max_seconds=1e-9))
    with pytest.raises(InputError, match="--max-seconds"):
        list(EventStream(source.name, source.lines()))


@pytest.mark.parametrize("how", ["file", "gzip", "stdin-pipe", "stdin-file"])
def test_cr_only_line_endings_keep_every_event(tmp_path: Path, how: str) -> None:
    cr = STORY.read_bytes().replace(b"\n", b"\r")
    path = tmp_path / "cr.log"
    if how == "gzip":
        path.write_bytes(gzip.compress(cr))
    else:
        path.write_bytes(cr)
    if how.startswith("stdin"):
        if how == "stdin-pipe":
            cat = subprocess.Popen(["cat", str(path)], stdout=subprocess.PIPE)
            assert cat.stdout is not None
            result = logdoctor("parse", "--format", "jsonl", "-", stdin=cat.stdout.fileno())
            cat.wait()
        else:
            with open(path, "rb") as fh:
                result = logdoctor("parse", "--format", "jsonl", "-", stdin=fh.fileno())
        assert result.returncode == 0, result.stderr
        assert len(result.stdout.splitlines()) == 108
        return
    source = open_local(str(path))
    assert source.cr_only
    assert len(list(EventStream(source.name, source.lines()))) == 108


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_during_the_prefilter_leaves_no_temp_file_or_child(tmp_path: Path, signum: int) -> None:
    if signal.getsignal(signum) == signal.SIG_IGN:
        pytest.skip("the signal is ignored here (nohup): logdoctor keeps an inherited ignore, as it should")
    path = tmp_path / "big.log"
    with open(path, "wb") as fh:
        for _ in range(PREFILTER_MIN_BYTES // len(STATS) + 1000):
            fh.write(STATS.encode())
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "logdoctor", "parse", "--format", "jsonl", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(tmp)},
    )
    assert proc.stdout is not None
    proc.stdout.read(4096)  # grep is running and its lines are arriving
    proc.send_signal(signum)
    proc.communicate(timeout=30)  # drain, so the exit is the signal's, not a closed pipe's (which exits 0)
    assert proc.returncode != 0
    assert list(tmp.iterdir()) == []
    assert list(tmp_path.glob("*.keywords")) == []
    time.sleep(0.2)
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            assert str(path).encode() not in cmdline, f"left running: {cmdline!r}"
