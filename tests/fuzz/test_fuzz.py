"""The fuzz harness: mutated corpus logs through every output, generated rule and suppression files.

Each input must give a documented outcome (a report, or an input/rule/config error: exit 2), never another
exception or a traceback, within a time bound, with no raw control character and no planted secret in any output.
A mutated log goes through every format of `diagnose` and `parse` in process (one in ten through `diff` too), and
through one command of the CLI (they take turns: `diagnose` in five formats, `parse --show-unparsed`,
`parse --format jsonl`, `diff` in two), whose exit code must be 0, 1 or 2.

The inputs are split into `FUZZ_SHARDS` tests, each with a seed of its own drawn from `FUZZ_SEED`, so that `-n N`
runs them in N processes and the same settings run the same inputs. `make test` runs a few; `make fuzz` runs
`FUZZ_EXAMPLES` (default 25000) mutated logs, and the run's summary counts the inputs:

    FUZZ_EXAMPLES=25000 FUZZ_SHARDS=256 FUZZ_SEED=0 .venv/bin/pytest tests/fuzz -n 16 -p no:cacheprovider
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib
import io
import os
import pkgutil
import re
import resource
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, seed, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

import logdoctor
from logdoctor.app.cli import main
from logdoctor.app.diffs import diff_parsed
from logdoctor.engine.rules import load_rules
from logdoctor.engine.suppress import load_suppressions
from logdoctor.errors import ConfigError, InputError, RuleError
from logdoctor.pipeline.run import diagnose_parsed, local_line_sources, parse_sources
from logdoctor.registry import REGISTRY
from logdoctor.report.diff_markdown import render_diff_markdown
from logdoctor.report.events import event_json, event_table, say
from logdoctor.report.formats import observed_of, render_diff_page, render_one
from logdoctor.report.json import render_json
from logdoctor.report.markdown import render_markdown
from logdoctor.report.observed import Observed
from logdoctor.report.terminal import render_terminal
from tests.fuzz.strategies import GLUED, ROOT, SECRETS, log_inputs, rule_files, suppression_files

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "40"))
SHARDS = int(os.environ.get("FUZZ_SHARDS", "2"))  # the inputs are split into this many tests (for `-n`)
SEED = int(os.environ.get("FUZZ_SEED", "0"))
# A hang guard (a runaway parse), not a speed measure: far above any input's time, on a machine shared or not.
SECONDS_PER_INPUT = float(os.environ.get("FUZZ_SECONDS", "120"))
KEEP_SLOWEST = os.environ.get("FUZZ_KEEP_SLOWEST", "")  # a directory: each shard writes its slowest input there
MAX_RSS_MIB = 2048
RULES = load_rules()
WORK = Path(tempfile.mkdtemp(prefix="logdoctor-fuzz-"))
STORY = ROOT / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"
_ALL_SECRETS = [secret for _, secret in SECRETS] + GLUED
STORY_PARSED = parse_sources(local_line_sources([str(STORY)]))
# The CLI command each mutated log also goes through, in turn (a path, or the story log and the path for `diff`).
COMMANDS = [
    ["diagnose", "--format", "json"],
    ["diagnose"],
    ["diagnose", "--format", "markdown"],
    ["diagnose", "--format", "github"],
    ["diagnose", "--format", "html"],
    ["parse", "--show-unparsed"],
    ["parse", "--format", "jsonl"],
    ["diff", "--format", "html"],
    ["diff", "--format", "json"],
]
PACKAGE = Path(logdoctor.__file__).parent
DOCUMENTED_EXIT_CODES = (0, 1, 2)  # no finding, findings, an input error (docs/cli.md); 4 is a bug


def _share(total: int, shard: int) -> int:
    """The examples of one shard: the shards' shares add up to `total` exactly."""
    return total // SHARDS + (1 if shard < total % SHARDS else 0)


class InputTooSlow(AssertionError):
    """One input ran past SECONDS_PER_INPUT."""


@contextlib.contextmanager
def _time_bound(name: str) -> Iterator[None]:
    """SECONDS_PER_INPUT for one input: an alarm ends a hang (in the main thread, where the tests run), and the
    time is checked after it in any case."""
    started = time.monotonic()
    alarm = threading.current_thread() is threading.main_thread()
    if alarm:

        def expired(signum: int, frame: Any) -> None:
            raise InputTooSlow(f"{name}: still running after {SECONDS_PER_INPUT:g} s")

        previous = signal.signal(signal.SIGALRM, expired)
        signal.setitimer(signal.ITIMER_REAL, SECONDS_PER_INPUT)
    try:
        yield
    finally:
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    _bounded(started)


@functools.cache
def _import_everything() -> None:
    """Hypothesis draws some values from the constants of the project's modules loaded at the time, and a run loads
    more as it goes (the CLI imports each command as it runs): with every module of logdoctor imported first, a shard
    draws the same inputs alone (`-k "test_mutated_logs and 62"`) as after other shards in the same process."""
    REGISTRY.grammars()  # the engine packages as the registry imports them, their regexes compiled when first used
    for module in pkgutil.walk_packages(logdoctor.__path__, "logdoctor."):
        if not module.name.endswith("__main__"):
            with contextlib.suppress(ImportError):  # an optional extra (mcp) not installed
                importlib.import_module(module.name)


def _run_sharded(
    kind: str, shard: int, examples: int, test: Callable[..., None], record: Callable[[str, object], None]
) -> None:
    """Run the hypothesis test `test` for `examples` inputs with this shard's own seed, and record the count and the
    slowest input (its CPU time, where it is in the shard, and its name; with FUZZ_KEEP_SLOWEST=DIR, its bytes too)."""
    _import_everything()
    ran = [0]
    slowest: list[Any] = [0.0, 0, "", b""]

    @functools.wraps(test)
    def counted(**kwargs: Any) -> None:
        ran[0] += 1
        started = time.process_time()
        try:
            test(**kwargs)
        finally:
            spent = time.process_time() - started
            if spent > slowest[0]:
                name, data = _label(kwargs)
                slowest[:] = [spent, ran[0], name, data]

    if examples:
        wrapped = getattr(test, "hypothesis_strategies", None)
        assert wrapped is not None
        run = seed(f"logdoctor-fuzz {SEED} {kind} {shard}")(
            settings(max_examples=examples, database=None)(given(**wrapped)(counted))
        )
        run()
    # hypothesis also runs the shrunk failing case again; without a failure each run is one input
    record(f"fuzz {kind}", ran[0])
    seconds, index, name, data = slowest
    record("fuzz slowest", (round(seconds, 2), kind, shard, index, name))
    if KEEP_SLOWEST and data:
        Path(KEEP_SLOWEST).mkdir(parents=True, exist_ok=True)
        (Path(KEEP_SLOWEST) / f"{kind.replace(' ', '-')}-{shard}-{index}-{name}").write_bytes(data)


def _label(kwargs: dict[str, Any]) -> tuple[str, bytes]:
    """An input's name and bytes, as a shard's slowest is recorded."""
    if "case" in kwargs:
        name, data, _ = kwargs["case"]
        return name, data
    if "text" in kwargs:
        return "fuzz.yaml", str(kwargs["text"]).encode("utf-8", "surrogateescape")
    return ".logdoctor.yaml", bytes(kwargs.get("raw", b""))


def _strategies(**strategies: st.SearchStrategy[Any]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Mark a function with the strategies its inputs are drawn from (`_run_sharded` gives them)."""

    def mark(function: Callable[..., None]) -> Callable[..., None]:
        function.hypothesis_strategies = strategies  # type: ignore[attr-defined]
        return function

    return mark


# C0 controls but tab and newline, DEL, the C1 controls, the right-to-left override (one regex: the outputs of an input
# are a few hundred kB, which a test of each character in Python took a sixth of the run to read).
_UNSAFE_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]")


def _unsafe(output: str) -> list[str]:
    return _UNSAFE_RE.findall(output)


def _check_output(output: str, planted: list[str]) -> None:
    assert _unsafe(output) == [], sorted(set(_unsafe(output)))
    for secret in planted:
        assert secret not in output, secret


def _bounded(started: float) -> None:
    assert time.monotonic() - started < SECONDS_PER_INPUT, f"{time.monotonic() - started:.1f} s"
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
        assert not _unsafe(output), (names[index], sorted(set(_unsafe(output))))
        for secret in planted:
            assert secret not in output, (names[index], secret)


def _run_cli(name: str, data: bytes, planted: list[str], command: list[str]) -> None:
    """One CLI command on the input: a documented exit code, no traceback, nothing unsafe or secret in its output."""
    path = WORK / f"cli-{os.getpid()}-{name}"
    path.write_bytes(data)
    sides = [str(STORY), str(path)] if command[0] == "diff" else [str(path)]
    result = CliRunner().invoke(main, [*command[:1], *sides, *command[1:]])
    assert result.exit_code in DOCUMENTED_EXIT_CODES, (command, result.exit_code, result.stderr)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    output = result.stdout + result.stderr
    assert f'File "{PACKAGE}' not in output, "a traceback of logdoctor's own"
    if b"Traceback" not in data:  # a log may quote its engine's traceback, as evidence
        assert "Traceback" not in output
    _check_output(output, planted + _ALL_SECRETS)


@_strategies(case=log_inputs(), diff=st.integers(0, 9), command=st.integers(0, len(COMMANDS) - 1))
def _mutated_log(case: tuple[str, bytes, list[str]], diff: int, command: int) -> None:
    name, data, planted = case
    with _time_bound(name):
        _run_log(name, data, planted, diff=diff == 0)  # one input in ten also through `diff`
        _run_cli(name, data, planted, COMMANDS[command])


@_strategies(text=rule_files())
def _rule_file(text: str) -> None:
    directory = WORK / f"rules-{os.getpid()}"
    directory.mkdir(exist_ok=True)
    (directory / "fuzz.yaml").write_text(text, encoding="utf-8", errors="surrogateescape")
    with _time_bound("fuzz.yaml"):
        try:
            rules = load_rules([directory], builtin=False)
        except RuleError as exc:
            _check_output(str(exc).replace("\n", " "), [])
            return
        parsed = parse_sources(local_line_sources([str(STORY)]))
        diagnosis, _ = diagnose_parsed(parsed, rules)
        _check_output(render_json(diagnosis) + render_markdown(diagnosis), [])


@_strategies(raw=suppression_files())
def _suppression_file(raw: bytes) -> None:
    path = WORK / f"{os.getpid()}.logdoctor.yaml"
    path.write_bytes(raw)
    with _time_bound(path.name):
        try:
            suppressions = load_suppressions(path)
        except ConfigError as exc:
            _check_output(str(exc).replace("\n", " "), [])
            return
        parsed = parse_sources(local_line_sources([str(STORY)]))
        diagnosis, _ = diagnose_parsed(parsed, RULES, suppressions=suppressions)
        _check_output(render_json(diagnosis), [])


@pytest.mark.parametrize("shard", range(SHARDS))
def test_mutated_logs(shard: int, record_property: Callable[[str, object], None]) -> None:
    _run_sharded("mutated logs", shard, _share(EXAMPLES, shard), _mutated_log, record_property)


@pytest.mark.parametrize("shard", range(SHARDS))
def test_generated_rule_files(shard: int, record_property: Callable[[str, object], None]) -> None:
    _run_sharded("rule files", shard, _share(max(EXAMPLES // 50, 10), shard), _rule_file, record_property)


@pytest.mark.parametrize("shard", range(SHARDS))
def test_generated_suppression_files(shard: int, record_property: Callable[[str, object], None]) -> None:
    _run_sharded("suppression files", shard, _share(max(EXAMPLES // 50, 10), shard), _suppression_file, record_property)


def test_the_shards_and_their_seeds_cover_every_input_once() -> None:
    assert sum(_share(EXAMPLES, shard) for shard in range(SHARDS)) == EXAMPLES
    assert len({f"logdoctor-fuzz {SEED} mutated logs {shard}" for shard in range(SHARDS)}) == SHARDS
