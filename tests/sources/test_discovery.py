"""The remote scripts, run here with the local sh and awk, and the reading of their answers."""

from __future__ import annotations

import gzip
import secrets
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from logdoctor.sources import discovery, hostscripts
from logdoctor.sources.discovery import (
    ServerProcess,
    parse_discovery,
    plan_sources,
    python_candidates,
    records,
    rotation_key,
)
from logdoctor.sources.hostscripts import LIST_SCRIPT, READ_FILE_SCRIPT, READ_STREAM_SCRIPT, remote_command
from logdoctor.sources.local import ere_alternation
from logdoctor.sources.remote import CommandResult
from logdoctor.sources.ssh import _LineReader

SHELLS = [s for s in ("dash", "bash") if shutil.which(s)]
KW = ["Avg prompt throughput:", "SpecDecoding metrics:"]
HIT = "(APIServer pid=1) INFO 04-09 11:27:10 [loggers.py:259] Engine 000: Avg prompt throughput: 967.2 tokens/s"


def run_script(shell: str, script: str, *args: str, cwd: Path | None = None) -> bytes:
    proc = subprocess.run([shell, "-c", script, "sh", *args], capture_output=True, check=False, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def read(shell: str, path: Path, budget: int, keywords: list[str] = KW) -> _LineReader:
    reader = _LineReader(numbered=True)
    reader.feed(run_script(shell, READ_FILE_SCRIPT, str(path), str(budget), ere_alternation(keywords)))
    reader.close(cut=False)
    return reader


@pytest.mark.parametrize("shell", SHELLS)
def test_read_file_keeps_numbers_and_counts_bytes(shell: str, tmp_path: Path) -> None:
    lines = ["noise"] * 50
    lines[9] = HIT
    lines[49] = "SpecDecoding metrics: Mean acceptance length: 1.97"
    path = tmp_path / "x.log"
    path.write_text("\n".join(lines) + "\n")
    reader = read(shell, path, 1 << 20)
    assert reader.lines == [(10, HIT), (50, lines[49])]
    assert reader.size == path.stat().st_size and reader.error is None and not reader.gzipped


@pytest.mark.parametrize("shell", SHELLS)
def test_read_file_gzip_by_content_not_name(shell: str, tmp_path: Path) -> None:
    path = tmp_path / "rotated.1"  # no .gz suffix: detected by its magic bytes
    with gzip.open(path, "wt") as fh:
        fh.write("a\nb\n" + HIT + "\n")
    reader = read(shell, path, 1 << 20)
    assert reader.gzipped and reader.lines == [(3, HIT)]
    assert reader.size == path.stat().st_size


@pytest.mark.parametrize("shell", SHELLS)
def test_read_file_budget_keeps_head_and_tail(shell: str, tmp_path: Path) -> None:
    lines = [f"{HIT} #{i:04d}" for i in range(1, 1001)]
    path = tmp_path / "x.log"
    path.write_text("\n".join(lines) + "\n")
    line_bytes = len(f"1000:{lines[-1]}\n")
    budget = 40 * line_bytes
    out = run_script(shell, READ_FILE_SCRIPT, str(path), str(budget), ere_alternation(KW))
    reader = _LineReader(numbered=True)
    reader.feed(out)
    reader.close(cut=False)
    payload = sum(len(f"{n}:{t}\n") for n, t in reader.lines)
    assert payload <= budget
    numbers = [n for n, _ in reader.lines]
    assert numbers[:3] == [1, 2, 3] and numbers[-1] == 1000
    assert reader.skipped_lines == 1000 - len(numbers)
    assert reader.skipped_bytes > 0
    # the head is written as it arrives; the skipped marker and the tail come at the end
    marker = out.index(b"#logdoctor-skipped")
    assert out[marker:].count(b"\n") == 2 + sum(1 for n in numbers if n > 500)  # + the `#logdoctor-sent` line
    assert reader.sent == len(numbers)


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize(("setup", "error"), [("missing", "not-found"), ("dir", "directory")])
def test_read_file_errors(shell: str, setup: str, error: str, tmp_path: Path) -> None:
    # (permission denied needs a non-root user: tests/sources/test_ssh.py covers it over SSH)
    path = tmp_path / "target"
    if setup == "dir":
        path.mkdir()
    assert read(shell, path, 1000).error == error


@pytest.mark.parametrize("shell", SHELLS)
def test_hostile_names_and_keywords_are_data(shell: str, tmp_path: Path) -> None:
    marker = tmp_path / f"pwned-{secrets.token_hex(3)}"
    name = f"$(touch {marker.name}); `touch {marker.name}` 'q\" \n-x.log"
    path = tmp_path / name
    path.write_text(f"a\n{HIT}\nweird $(touch {marker.name}) keyword\nalpha beta x\n")  # line 4: only a regex matches
    keywords = [*KW, f"$(touch {marker.name})", "-e", "'", "a.*b", "[x]"]  # ERE characters are matched as text
    reader = _LineReader(numbered=True)
    reader.feed(run_script(shell, READ_FILE_SCRIPT, str(path), "10000", ere_alternation(keywords), cwd=tmp_path))
    reader.close(cut=False)
    assert reader.lines == [(2, HIT), (3, f"weird $(touch {marker.name}) keyword")]
    assert not marker.exists()


@pytest.mark.parametrize("shell", SHELLS)
def test_list_expands_globs_and_tilde_without_running_names(shell: str, tmp_path: Path) -> None:
    marker = tmp_path / f"pwned-{secrets.token_hex(3)}"
    (tmp_path / "a.log").write_text("")
    (tmp_path / "b.log").write_text("")
    (tmp_path / "sp ace.log").write_text("")
    patterns = [f"{tmp_path}/*.log", f"{tmp_path}/$(touch {marker})", f"{tmp_path}/none-*", "~/x"]
    env_home = tmp_path / "home"
    env_home.mkdir()
    (env_home / "x").write_text("")
    proc = subprocess.run(
        [shell, "-c", LIST_SCRIPT, "sh", *patterns],
        capture_output=True,
        check=True,
        cwd=tmp_path,
        env={"HOME": str(env_home), "PATH": "/usr/bin:/bin"},
    )
    got = records(proc.stdout)
    assert ("match", f"1:{tmp_path}/a.log") in got and ("match", f"1:{tmp_path}/sp ace.log") in got
    assert ("nomatch", "2:not-found") in got  # the literal name does not exist; nothing ran
    assert ("nomatch", "3:not-found") in got
    assert ("match", f"4:{env_home}/x") in got
    assert not marker.exists()


def test_stream_read_counts_bytes_and_numbers_lines(tmp_path: Path) -> None:
    body = ["-- Boot 1 --", HIT, "x" * 100, "SpecDecoding metrics: ok", "tail"]
    fakebin = tmp_path / "bin"
    fakebin.mkdir()
    (tmp_path / "body").write_text("\n".join(body) + "\n")
    journalctl = fakebin / "journalctl"
    journalctl.write_text(f'#!/bin/sh\n[ "$2" = my.service ] || exit 1\ncat {tmp_path / "body"}\n')
    journalctl.chmod(0o755)
    proc = subprocess.run(
        ["sh", "-c", READ_STREAM_SCRIPT, "sh", "journald", "my.service", "100000", ere_alternation(KW)],
        capture_output=True,
        check=True,
        env={"PATH": f"{fakebin}:/usr/bin:/bin"},
    )
    reader = _LineReader(numbered=True)
    reader.feed(proc.stdout)
    reader.close(cut=False)
    assert reader.lines == [(2, HIT), (4, "SpecDecoding metrics: ok")]
    assert reader.size == sum(len(b) + 1 for b in body)


def test_read_command_filters_with_exactly_the_keywords() -> None:
    plan = discovery.SourcePlan("file", "/var/log/x.log", "/var/log/x.log", "log", "", "x.log")
    argv = shlex.split(plan.command(1000, ["SpecDecoding metrics:", "a.b (c)"], sudo=False))
    assert argv[-4:] == ["/var/log/x.log", "1000", r"SpecDecoding metrics:|a\.b \(c\)", ""]
    argv = shlex.split(plan.command(1000, ["x"], sudo=False, compress=True))
    assert argv[-1] == "gzip"


def test_remote_command_quotes_each_value_once() -> None:
    args = ["/var/log/$(reboot)", "a b", "it's", "-n", "new\nline"]
    command = remote_command(READ_FILE_SCRIPT, args, sudo=True)
    assert shlex.split(command) == ["sudo", "-n", "--", "sh", "-c", READ_FILE_SCRIPT, "sh", *args]
    assert "$(reboot)" not in READ_FILE_SCRIPT  # the script is constant text


def test_records_ignore_login_noise() -> None:
    data = b"Welcome to kpro5!\n\0file:/var/log/vllm.log\0file:/x\ny.log\0garbage-without-colon\0"
    assert records(data) == [("file", "/var/log/vllm.log"), ("file", "/x\ny.log")]


def _nul(*items: str) -> bytes:
    return b"\0" + b"".join(i.encode() + b"\0" for i in items)


def test_plan_follows_files_containers_units_and_rotation() -> None:
    cid = "a" * 64
    data = _nul(
        "searched:processes",
        "proc:100:python3 -m vllm.entrypoints.openai.api_server --model m",
        "ppid:100:1",
        "argv0:100:/opt/venv/bin/python3",
        "exe:100:/usr/bin/python3.11",
        "fd:100:1:/srv/vllm/out.log",
        "fd:100:2:/srv/vllm/out.log",
        "rotated:/srv/vllm/out.log.2.gz",
        "rotated:/srv/vllm/out.log.1",
        "proc:101:python3 -m vllm.entrypoints.openai.api_server --model m",  # a forked worker
        "ppid:101:100",
        "fd:101:1:/srv/vllm/out.log",
        "proc:200:/opt/sgl/bin/python -m sglang.launch_server --model-path m",
        "argv0:200:/opt/sgl/bin/python",
        "cgroup:200:0::/system.slice/docker-" + cid + ".scope ",
        "fd:200:1:pipe:[1234]",
        "proc:300:vllm serve m",
        "cgroup:300:0::/system.slice/vllm@gpu0.service ",
        "fd:300:1:socket:[99]",
        "proc:400:vllm serve other",
        "fd:400:1:/dev/pts/3",
        "proc:500:vllm serve deleted",
        "fd:500:1:/tmp/old.log (deleted)",
        "proc:600:vllm serve hidden",
        "fddenied:600:1",
        "fddenied:600:2",
        "file:/var/log/vllm/api.log",
        "file:/var/log/vllm/api.log-20250102",
        "file:/var/log/vllm/api.log-20250103.gz",
        "file:/srv/vllm/out.log",
        "containers:docker:"
        + cid
        + '|lmsysorg/sglang:latest|sgl|"python3 -m sglang.launch_server"\n'
        + "b" * 64
        + '|postgres:16|db|"postgres"',
        "units:vllm-api.service loaded active running vLLM OpenAI server\nssh.service loaded active running OpenSSH",
    )
    found = parse_discovery(data)
    plans, found_lines, notes = plan_sources(found)
    paths = [p.path for p in plans]
    assert paths == [
        "/srv/vllm/out.log",
        "docker:sgl",
        "journald:vllm@gpu0.service",
        "/proc/500/fd/1",
        "journald:vllm-api.service",
        "/var/log/vllm/api.log",
        "/srv/vllm/out.log.1",
        "/srv/vllm/out.log.2.gz",
        "/var/log/vllm/api.log-20250103.gz",
        "/var/log/vllm/api.log-20250102",
    ]
    assert plans[0].description == "fd 1, fd 2 of process 100"
    assert not any("101" in line for line in found_lines)  # the forked worker is folded into 100
    assert any("terminal /dev/pts/3" in n for n in notes)
    assert any("process 600" in n and "--sudo" in n for n in notes)
    assert any("deleted file /tmp/old.log" in p.description for p in plans)
    assert python_candidates(found.processes)[:3] == [
        "/opt/venv/bin/python3",
        "/usr/bin/python3.11",
        "/opt/sgl/bin/python",
    ]


def test_rotation_order() -> None:
    names = ["x.log.10", "x.log.2.gz", "x.log.1", "x.log-20240101", "x.log-20240301.gz"]
    assert sorted(names, key=rotation_key) == [
        "x.log.1",
        "x.log.2.gz",
        "x.log.10",
        "x.log-20240301.gz",
        "x.log-20240101",
    ]


def test_python_candidates_for_console_scripts() -> None:
    proc = ServerProcess(pid=1, cmdline="/opt/venv/bin/vllm serve m", argv0="/opt/venv/bin/vllm")
    assert python_candidates([proc]) == ["/opt/venv/bin/python3", "/opt/venv/bin/python", "python3", "python"]


def fake_python(path: Path, *, check: str | None, pip: str) -> str:
    """A python whose importlib.metadata check prints `check` (None: it cannot run it, like Python 2)
    and whose `-m pip show` prints `pip`."""
    on_check = "exit 1" if check is None else f"printf '%s' {shlex.quote(check)}"
    path.write_text(f"#!/bin/sh\ncase \"$1\" in\n  -c) {on_check} ;;\n  -m) printf '%s' {shlex.quote(pip)} ;;\nesac\n")
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize("shell", SHELLS)
def test_versions_ask_pip_only_where_importlib_cannot_run(shell: str, tmp_path: Path) -> None:
    empty = fake_python(tmp_path / "py-empty", check="", pip="Name: vllm\nVersion: 0.1")
    old = fake_python(tmp_path / "py-old", check=None, pip="Name: vllm\nVersion: 0.2")
    found = fake_python(tmp_path / "py-found", check="Name: vllm\nVersion: 0.20.1", pip="")
    missing = str(tmp_path / "no-such-python")

    def versions(*pythons: str) -> tuple[int, str]:
        proc = subprocess.run(
            [shell, "-c", hostscripts.VERSIONS_SCRIPT, "sh", *pythons], capture_output=True, text=True
        )
        return proc.returncode, proc.stdout

    assert versions(missing, empty, found, old) == (0, f"Python: {found}\nName: vllm\nVersion: 0.20.1\n")
    # importlib first on every interpreter; then pip, only on the one that could not run the check
    assert versions(empty, old) == (0, f"Python: {old}\nName: vllm\nVersion: 0.2\n")
    assert versions(missing, empty) == (3, "")


def test_server_patterns_are_in_the_discovery_script() -> None:
    for pattern in hostscripts.SERVER_PATTERNS:
        assert shlex.quote(pattern) in hostscripts.DISCOVERY_SCRIPT


def test_docs_show_the_exact_scripts() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "ssh.md").read_text(encoding="utf-8")
    for name in (
        "PROBE_SCRIPT",
        "DISCOVERY_SCRIPT",
        "LIST_SCRIPT",
        "READ_FILE_SCRIPT",
        "READ_STREAM_SCRIPT",
        "FACT_SCRIPT",
        "VERSIONS_SCRIPT",
        "CONTAINER_SCRIPT",
    ):
        assert f"```sh\n{getattr(hostscripts, name)}```" in doc, f"docs/ssh.md is out of date for {name}"


@pytest.mark.parametrize("chunk", [1, 7, 4096, 1 << 20])
def test_compressed_read_gives_the_same_lines_and_fewer_bytes(tmp_path: Path, chunk: int) -> None:
    log = tmp_path / "vllm.log"
    log.write_text("".join(f"noise {i}\n{HIT} #{i}\n" for i in range(2000)))

    def read(z: str) -> tuple[_LineReader, int]:
        out = subprocess.run(
            ["sh", "-c", READ_FILE_SCRIPT, "sh", str(log), "10000000", ere_alternation(KW), z],
            capture_output=True,
            check=True,
        ).stdout
        reader = _LineReader(numbered=True)
        data = b"Welcome to kpro5!\n" + out  # a login script's banner comes before the stream
        for i in range(0, len(data), chunk):
            reader.feed(data[i : i + chunk])
        reader.close(cut=False)
        return reader, len(out)

    plain, plain_bytes = read("")
    packed, packed_bytes = read("gzip")
    assert packed.lines == plain.lines and len(plain.lines) == 2000
    assert packed.size == plain.size == log.stat().st_size
    assert packed.payload >= plain_bytes  # the budget counts the lines, not the compressed bytes
    assert packed_bytes < plain_bytes / 10


def test_damaged_compressed_stream_is_an_error_not_a_crash() -> None:
    reader = _LineReader(numbered=True)
    reader.feed(b"#logdoctor-gzip-stream\n\x1f\x8b\x08\x00garbage-that-is-not-deflate" * 3)
    reader.close(cut=False)
    assert reader.error is not None and "damaged" in reader.error
    assert reader.lines == []


def _limited(shell: str, script: str, args: list[str], limit: int) -> subprocess.CompletedProcess[bytes]:
    """Run a remote script with an address-space limit on the whole shell (every stage inherits it)."""
    import resource

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return subprocess.run([shell, "-c", script, "sh", *args], capture_output=True, check=False, preexec_fn=cap)


@pytest.mark.parametrize("shell", SHELLS)
def test_read_file_reads_past_a_nul_hole_in_bounded_memory(shell: str, tmp_path: Path) -> None:
    # copytruncate leaves a sparse run of NULs with no newline: grep alone holds it as one 4 GiB line.
    path = tmp_path / "rotated.log"
    with open(path, "wb") as fh:
        fh.truncate(4 * 1024**3)
        fh.seek(4 * 1024**3)
        fh.write(("\n" + HIT + "\n").encode())
    proc = _limited(shell, READ_FILE_SCRIPT, [str(path), "100000", ere_alternation(KW)], 1536 * 1024**2)
    reader = _LineReader(numbered=True)
    reader.feed(proc.stdout)
    reader.close(cut=False)
    reader.incomplete(CommandResult(command="read", purpose="test", exit_status=0, ended=True), proc.stderr.decode())
    assert reader.lines == [(2, HIT)]
    assert reader.stages_ok, proc.stderr


@pytest.mark.parametrize("numbered", [False, True])
def test_line_reader_masks_a_private_key_body(numbered: bool) -> None:
    # What reaches --save and the parser: a key pasted into a log is masked from BEGIN to END, line by line.
    body = [
        "-----BEGIN RSA PRIVATE KEY-----",
        "MIIEowIBAAKCAQEA1234abcdEFGH",
        "abcdEFGH1234+/==",
        "-----END RSA PRIVATE KEY-----",
    ]
    raw = [f"{n}:{text}" if numbered else text for n, text in enumerate(body, start=1)]
    reader = _LineReader(numbered=numbered)
    reader.feed(("\n".join(raw) + "\n").encode())
    reader.close(cut=False)
    texts = [text for _, text in reader.lines]
    assert texts[1] == texts[2] == "***"
    assert not any("MIIEow" in t or "abcdEFGH" in t for t in texts)
