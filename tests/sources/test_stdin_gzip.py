"""A gzip on stdin (`cat vllm.log.gz | logdoctor diagnose -`) is read like a gzip file, with the same caps."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

STORY = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"


def diagnose(stdin: bytes | Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    command = [sys.executable, "-m", "logdoctor", "diagnose", "-", *args]
    if isinstance(stdin, Path):
        with open(stdin, "rb") as fh:
            return subprocess.run(command, stdin=fh, capture_output=True, timeout=120)
    return subprocess.run(command, input=stdin, capture_output=True, timeout=120)


def findings(out: bytes) -> list[str]:
    return [f["rule"] for f in json.loads(out)["findings"]]


@pytest.mark.parametrize("how", ["pipe", "file", "two members"])
def test_gzip_on_stdin_diagnoses_like_the_plain_log(tmp_path: Path, how: str) -> None:
    plain = diagnose(STORY.read_bytes(), "--format", "json")
    packed = gzip.compress(STORY.read_bytes())
    if how == "two members":  # `cat a.gz b.gz`: gzip -dc reads both; here the log split in two members
        data = STORY.read_bytes()
        packed = gzip.compress(data[: len(data) // 2]) + gzip.compress(data[len(data) // 2 :])
    if how == "file":
        path = tmp_path / "story.log.gz"
        path.write_bytes(packed)
        result = diagnose(path, "--format", "json")
    else:
        result = diagnose(packed, "--format", "json")
    assert result.returncode == plain.returncode == 1, result.stderr
    assert findings(result.stdout) == findings(plain.stdout) != []


def test_damaged_and_bomb_gzip_on_stdin_are_one_line_errors() -> None:
    cut = gzip.compress(STORY.read_bytes())[:2000]
    result = diagnose(cut)
    assert result.returncode == 2
    assert result.stderr.decode().strip().count("\n") == 0 and "damaged gzip" in result.stderr.decode()
    bomb = gzip.compress(b"\n" * 50_000_000, compresslevel=9)
    result = diagnose(bomb)
    assert result.returncode == 2 and "--max-gzip-ratio" in result.stderr.decode()
