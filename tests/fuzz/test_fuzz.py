"""The fuzz harness: mutated corpus logs through every output, generated rule and suppression files.

Each input must give a documented outcome (a report, or an input/rule/config error: exit 2), never another
exception, within a time bound, with no raw control character and no planted secret in any output format.
`make test` runs a few examples of each; `make fuzz` runs `FUZZ_EXAMPLES` (default 25000) mutated logs:

    FUZZ_EXAMPLES=25000 FUZZ_SHARDS=2 .venv/bin/pytest tests/fuzz -n 2 --hypothesis-show-statistics
"""

from __future__ import annotations

import dataclasses
import io
import os
import resource
import tempfile
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from logdoctor.app.cli import main
from logdoctor.app.diffs import diff_parsed
from logdoctor.engine.rules import load_rules
from logdoctor.engine.suppress import load_suppressions
from logdoctor.errors import ConfigError, InputError, RuleError
from logdoctor.pipeline.run import diagnose_parsed, local_line_sources, parse_sources
from logdoctor.report.diff_markdown import render_diff_markdown
from logdoctor.report.events import event_json, event_table, say
from logdoctor.report.formats import observed_of, render_diff_page, render_one
from logdoctor.report.json import render_json
from logdoctor.report.markdown import render_markdown
from logdoctor.report.observed import Observed
from logdoctor.report.terminal import render_terminal
from tests.fuzz.strategies import GLUED, ROOT, SECRETS, log_inputs, rule_files, suppression_files

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "40"))
SHARDS = int(os.environ.get("FUZZ_SHARDS", "2"))  # the mutated logs are split into this many tests (for `-n`)
SECONDS_PER_INPUT = 120.0  # a hang guard (a runaway parse), not a speed measure: far above any input's time
MAX_RSS_MIB = 2048
RULES = load_rules()
WORK = Path(tempfile.mkdtemp(prefix="logdoctor-fuzz-"))
STORY = ROOT / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"
_ALL_SECRETS = [secret for _, secret in SECRETS] + GLUED
STORY_PARSED = parse_sources(local_line_sources([str(STORY)]))


def _unsafe(output: str) -> list[str]:
    return [c for c in output if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F or c == "\u202e"]


def _check_output(output: str, planted: list[str]) -> None:
    assert _unsafe(output) == [], sorted(set(_unsafe(output)))
    for secret in planted:
        assert secret not in output, secret


def _bounded(started: float) -> None:
    assert time.monotonic() - started < SECONDS_PER_INPUT
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 < MAX_RSS_MIB


def _all_outputs(path: Path, diff: bool = False) -> list[str]:
    """Every output format of `diagnose` and `parse` for one file, rendered in process (rules loaded once); with
    `diff`, also `diff` of the story log against it (JSON, Markdown, HTML)."""
    parsed = parse_sources(local_line_sources([str(path)]))
    events = list(parsed.events)
    diffs: list[str] = []
    if diff:
        report = diff_parsed(dataclasses.replace(STORY_PARSED, profiling=None), parsed, RULES)
        diffs = [render_json(report), render_diff_markdown(report), render_diff_page(report, Observed(), Observed())]
        parsed = parse_sources(local_line_sources([str(path)]))  # diff_parsed used its profile
    diagnosis, _ = diagnose_parsed(parsed, RULES)
    pages = [render_one(fmt, diagnosis, observed_of(fmt, events)) for fmt in ("github", "html")]
    console_file = io.StringIO()
    console = Console(file=console_file, width=160, color_system=None, force_terminal=False)
    render_terminal(diagnosis, console, verbose=True)
    # The parse table's cells as printed (rendering a few hundred rows through rich costs more than the rest).
    table = event_table(path.name, parsed.events)
    cells = "\n".join(cell.plain for column in table.columns for cell in column.cells if isinstance(cell, Text))
    for stats in parsed.stats:  # what `parse --show-unparsed` prints
        for number, text in stats.unrecognised_samples:
            say(console, f"  unparsed {stats.name}:{number}: {text}")
    jsonl = "\n".join(event_json(e) for e in parsed.events)
    return [render_json(diagnosis), render_markdown(diagnosis), console_file.getvalue(), jsonl, cells, *pages, *diffs]


def _run_log(name: str, data: bytes, planted: list[str], diff: bool = False) -> None:
    path = WORK / f"{os.getpid()}-{name}"
    path.write_bytes(data)
    started = time.monotonic()
    try:
        outputs = _all_outputs(path, diff)
    except InputError as exc:  # documented: exit 2 (a damaged gzip, a cap)
        _check_output(str(exc), planted)
        return
    finally:
        _bounded(started)
    names = (
        "json",
        "markdown",
        "terminal",
        "jsonl",
        "parse table",
        "github",
        "html",
        "diff json",
        "diff md",
        "diff html",
    )
    for index, output in enumerate(outputs):
        assert not _unsafe(output), names[index]
        _check_output(output, planted)


@pytest.mark.parametrize("shard", range(SHARDS))
@settings(max_examples=-(-EXAMPLES // SHARDS))
@given(case=log_inputs(), diff=st.integers(0, 9))
def test_mutated_logs(shard: int, case: tuple[str, bytes, list[str]], diff: int) -> None:
    _run_log(*case, diff=diff == 0)  # one input in ten also through `diff`


@settings(max_examples=max(EXAMPLES // 50, 10))
@given(rule_files())
def test_generated_rule_files(text: str) -> None:
    directory = WORK / f"rules-{os.getpid()}"
    directory.mkdir(exist_ok=True)
    (directory / "fuzz.yaml").write_text(text, encoding="utf-8", errors="surrogateescape")
    started = time.monotonic()
    try:
        rules = load_rules([directory], builtin=False)
    except RuleError as exc:
        _check_output(str(exc).replace("\n", " "), [])
        return
    finally:
        _bounded(started)
    parsed = parse_sources(local_line_sources([str(STORY)]))
    diagnosis, _ = diagnose_parsed(parsed, rules)
    _check_output(render_json(diagnosis) + render_markdown(diagnosis), [])
    _bounded(started)


@settings(max_examples=max(EXAMPLES // 50, 10))
@given(suppression_files())
def test_generated_suppression_files(raw: bytes) -> None:
    path = WORK / f"{os.getpid()}.logdoctor.yaml"
    path.write_bytes(raw)
    started = time.monotonic()
    try:
        suppressions = load_suppressions(path)
    except ConfigError as exc:
        _check_output(str(exc).replace("\n", " "), [])
        return
    finally:
        _bounded(started)
    parsed = parse_sources(local_line_sources([str(STORY)]))
    diagnosis, _ = diagnose_parsed(parsed, RULES, suppressions=suppressions)
    _check_output(render_json(diagnosis), [])


@settings(max_examples=max(EXAMPLES // 1000, 3))
@given(
    log_inputs(),
    st.sampled_from(
        [
            ["diagnose", "--format", "json"],
            ["diagnose"],
            ["diagnose", "--format", "github"],
            ["diagnose", "--format", "html"],
            ["parse", "--show-unparsed"],
            ["parse", "--format", "jsonl"],
            ["diff", "--format", "html"],
        ]
    ),
)
def test_the_cli_exits_with_a_documented_code(case: tuple[str, bytes, list[str]], args: list[str]) -> None:
    name, data, planted = case
    path = WORK / f"cli-{os.getpid()}-{name}"
    path.write_bytes(data)
    sides = [str(STORY), str(path)] if args[0] == "diff" else [str(path)]
    result = CliRunner().invoke(main, [*args[:1], *sides, *args[1:]])
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.stderr)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.stderr
    _check_output(result.stdout + result.stderr, planted + _ALL_SECRETS)
