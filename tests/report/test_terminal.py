"""The terminal report in a real pseudo-terminal at 60, 80 and 200 columns, and piped, on the story fixtures.

The CLI runs in a subprocess whose stdin, stdout and stderr are a pty of the given size (TIOCSWINSZ), as a
user's terminal would be; what it writes is read back raw. A line the terminal folds is still one line in
that stream, so "never wrapped" is checked where it matters: no newline inside a fix or an evidence value.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

import pytest

from logdoctor.engine.result import Evidence
from logdoctor.report.terminal import colour_wanted, excerpt, output_width

ROOT = Path(__file__).resolve().parents[2]
STORY_DIR = ROOT / "fixtures" / "logs" / "story"
STORIES = sorted(p.name for p in STORY_DIR.glob("*.log"))
DFLASH = STORY_DIR / "vllm-dflash-tp2-a6000.log"
SGLANG = STORY_DIR / "sglang-mtp-tp2-a6000.log"
LOGDOCTOR = [sys.executable, "-m", "logdoctor.app.cli"]
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR")}
    env.update(TERM="xterm-256color", LOGDOCTOR_NO_PROGRESS="1", **extra)
    return env


def in_pty(args: list[str], columns: int, *, send: bytes | None = None, timeout: float = 120) -> tuple[int, str]:
    """Run logdoctor with a pty `columns` wide as its terminal; (exit code, everything it wrote, ANSI kept)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    proc = subprocess.Popen(
        [*LOGDOCTOR, *args], stdin=slave, stdout=slave, stderr=slave, env=_env(), cwd=ROOT, close_fds=True
    )
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    sent = send is None
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
            if not sent and b"Ctrl-D" in b"".join(chunks) and send is not None:
                os.write(master, send)
                sent = True
            if proc.poll() is not None and not ready:
                break
    finally:
        os.close(master)
        code = proc.wait(timeout=30)
    return code, b"".join(chunks).decode("utf-8", errors="replace").replace("\r\n", "\n")


def plain(text: str) -> str:
    return _ANSI.sub("", text)


def report_json(path: Path) -> dict[str, Any]:
    out = subprocess.run(
        [*LOGDOCTOR, "diagnose", str(path), "--format", "json"], capture_output=True, text=True, env=_env()
    )
    data: dict[str, Any] = json.loads(out.stdout)
    return data


def _likely_count(summary: str) -> int | None:
    match = re.search(r"(\d+) likely problem", summary)
    return int(match.group(1)) if match else None


@pytest.mark.parametrize("columns", [60, 80, 200])
@pytest.mark.parametrize("story", STORIES)
def test_report_in_a_terminal(story: str, columns: int) -> None:
    path = STORY_DIR / story
    data = report_json(path)
    code, raw = in_pty(["diagnose", str(path)], columns)
    assert code in (0, 1), raw
    assert "\x1b[" in raw  # a terminal gets colour
    text = plain(raw)
    lines = text.splitlines()
    assert "Traceback" not in text
    # the verdict comes first: the line after the header (which names the files and is never folded)
    assert lines[0].startswith("logdoctor ") and str(path) in lines[0]
    assert lines[1].startswith(data["verdict"]["kind"].upper())
    # counts agree: N likely problems, N boxes, each problem once
    boxes = [line for line in lines if line.startswith("╭─ ")]
    likely = _likely_count(data["verdict"]["summary"])
    assert len(boxes) == (likely or 0)
    boxed = [re.match(r"╭─ \d+\. (\S+)", b).group(1) for b in boxes]  # type: ignore[union-attr]
    assert len(set(boxed)) == len(boxed)
    found = {f["cause"] for f in data["findings"]}
    ruled = next((line for line in lines if line.startswith("Ruled out")), "")
    # "ruled out" never lists a cause that is also a finding (the line may fold: read it up to the next section)
    ruled_block = text[text.index(ruled) :].split("Could not check")[0] if ruled else ""
    assert not {c for c in found if re.search(rf"\b{re.escape(c)}\b", ruled_block)}
    if ruled:
        listed = int(re.match(r"Ruled out \((\d+)\)", ruled).group(1))  # type: ignore[union-attr]
        assert listed == len({o["cause"] for o in data["ruled_out"]} - found)
    # every fix of every finding is on one line, whole
    for finding in data["findings"]:
        assert finding["rule"] in text  # the rule id, to write a suppression from
        for fix in finding["fix"]:
            assert any(fix in line for line in lines), (fix, columns)
    # the values the evidence is about are shown (in the boxes: the first four lines of each cause)
    for finding in data["findings"]:
        if finding["cause"] not in boxed:
            continue
        for evidence in finding["evidence"][:2]:
            for start, end in evidence["spans"]:
                value = evidence["text"][start:end]
                if len(value) < columns - 10:
                    assert value in text, (value, columns)
    # no question marks for unknown values, no working without --explain
    assert ": ?" not in text and " ? " not in text.replace(" ? one log", "")
    assert "x strength" not in text and "impact " not in text
    # could-not-check is one line
    assert sum(1 for line in lines if "could not check" in line.lower()) <= 1
    # nothing but a fix line (or the header's file names) outgrows the terminal
    fixes = [fix for f in data["findings"] for fix in f["fix"]]
    for line in lines[1:]:
        if len(line) > columns:
            assert any(fix in line for fix in fixes), (columns, line)


def test_explain_and_verbose_show_the_working_and_every_check() -> None:
    data = report_json(DFLASH)
    _, raw = in_pty(["diagnose", str(DFLASH), "--explain", "-v"], 120)
    text = plain(raw)
    assert data["findings"][0]["working"] in text.replace("\n", " ").replace("│ ", "") or "x strength" in text
    assert f"Could not check ({len(data['insufficient_data'])})," in text
    flat = " ".join(text.split())
    for outcome in data["insufficient_data"]:
        assert outcome["rule"] in text
        # each missing input with the flag, command or lines that give it, never a bare fact name
        assert outcome["hints"] and all(" ".join(h.split()[:6]) in flat for h in outcome["hints"])
    assert "NCCL_DEBUG=INFO" in text and "nvidia-smi topo -m" in text and "--disable-log-stats" in text


def test_piped_output_is_full_width() -> None:
    """No 80-column cut when piped: the lines run as long as they are (or to COLUMNS)."""
    out = subprocess.run(
        [*LOGDOCTOR, "diagnose", str(DFLASH)], capture_output=True, text=True, env=_env(), check=False
    ).stdout
    assert "\x1b[" not in out  # no colour into a pipe
    assert max(len(line) for line in out.splitlines()) > 120
    top = report_json(DFLASH)["findings"][0]
    assert top["explanation"] in out  # not folded
    narrow = subprocess.run(
        [*LOGDOCTOR, "diagnose", str(DFLASH)], capture_output=True, text=True, env=_env(COLUMNS="100"), check=False
    ).stdout
    fixes = [fix for f in report_json(DFLASH)["findings"] for fix in f["fix"]]
    assert all(len(line) <= 100 or any(fix in line for fix in fixes) for line in narrow.splitlines())


@pytest.mark.parametrize("columns", [60, 80, 200])
def test_diff_in_a_terminal(columns: int) -> None:
    code, raw = in_pty(["diff", str(SGLANG), str(DFLASH)], columns)
    text = plain(raw)
    assert code == 1, text
    assert "! differs and bears on the gap" in text  # the markers are explained
    assert '--speculative-config \'{"method": "mtp", "num_speculative_tokens": 3}\'' in text
    assert "--speculative-num-draft-tokens" in text  # a flag is never cut inside a cell
    boxes = [line for line in text.splitlines() if line.startswith("╭─ ")]
    likely = _likely_count(text)
    assert likely is not None and len(boxes) == likely
    causes = [re.match(r"╭─ \d+\. (\S+)", b).group(1) for b in boxes]  # type: ignore[union-attr]
    assert len(causes) == len(set(causes))  # no finding repeated
    assert len(text.splitlines()) < 175  # about 150 at 60 columns with the expected-performance lines (was ~226)


def test_prompt_for_stdin_on_a_terminal() -> None:
    log = DFLASH.read_bytes()
    code, raw = in_pty(["diagnose", "-"], 100, send=log + b"\n\x04")
    text = plain(raw)
    assert "Paste the log, then press Ctrl-D" in text
    assert "spec-net-loss" in text and code == 1


# --- the pieces ---------------------------------------------------------------------------------------------


def test_excerpt_is_centred_on_the_values() -> None:
    text = "(APIServer pid=1) INFO 05-08 14:07:20 [loggers.py:1] " + "x=1, " * 60 + "Running: 7 reqs, Waiting: 3 reqs"
    start = text.index("Running: 7")
    rows = excerpt(text, [(start, start + len("Running: 7 reqs, Waiting: 3"))], 60)
    shown = "".join(r.plain for r in rows)
    assert "Running: 7 reqs, Waiting: 3" in shown and shown.startswith("…")
    assert all(len(r.plain) <= 60 for r in rows)
    # two values far apart: both shown, on one row or two
    first = text.index("x=1")
    rows = excerpt(text, [(first, first + 3), (start, start + 10)], 40)
    shown = " ".join(r.plain for r in rows)
    assert "x=1" in shown and "Running: 7" in shown and all(len(r.plain) <= 40 for r in rows)


def test_evidence_spans_point_at_the_values() -> None:
    data = report_json(DFLASH)
    by_rule = {f["rule"]: f for f in data["findings"]}
    evidence = [Evidence(**e) for e in by_rule["below-break-even"]["evidence"]]
    picked = {e.text[s:t] for e in evidence for s, t in e.spans}
    assert "num_spec_tokens=15" in picked
    assert any(p.startswith("length: 1.2") for p in picked)


def test_width_and_colour_choices() -> None:
    class Pipe:
        def isatty(self) -> bool:
            return False

    class Tty(Pipe):
        def isatty(self) -> bool:
            return True

    assert output_width(Pipe(), {}) is not None and output_width(Pipe(), {}) > 10_000  # type: ignore[arg-type,operator]
    assert output_width(Pipe(), {"COLUMNS": "132"}) == 132  # type: ignore[arg-type]
    assert output_width(Tty(), {"COLUMNS": "132"}) is None  # type: ignore[arg-type]
    assert colour_wanted("auto", Tty(), {}) and not colour_wanted("auto", Pipe(), {})  # type: ignore[arg-type]
    assert not colour_wanted("auto", Tty(), {"NO_COLOR": "1"})  # type: ignore[arg-type]
    assert colour_wanted("auto", Pipe(), {"FORCE_COLOR": "1"})  # type: ignore[arg-type]
    assert colour_wanted("always", Pipe(), {"NO_COLOR": "1"})  # type: ignore[arg-type]
    assert not colour_wanted("never", Tty(), {"FORCE_COLOR": "1"})  # type: ignore[arg-type]
