"""Facts merged from parse workers' partials (logdoctor/facts/partial.py) equal the one-process facts exactly.

One fixture log of each kind (each fixture folder and each engine its golden events name: vLLM, SGLang, NCCL, the
input kinds, none) is diagnosed twice in this process, `diagnose --format json`: once in one process
(`LOGDOCTOR_PARSE_WORKERS=0`), once forced into worker processes (the size thresholds that keep small files in one
process lowered, as tests/pipeline/test_parallel.py lowers them, and `LOGDOCTOR_PREFILTER_PARTS` ranges), and the
two reports must be the same bytes. The profiles themselves are compared too (every fact's value, series summary,
lines and origin). A fixture whose cut fails a parse check is parsed in one process by both runs, which proves
nothing: the test counts the fixtures whose ranges were merged from partials and requires most of them to be.
A generated 64 MiB log (bench/gen_log.py) is compared the same way, with its real thresholds.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from logdoctor.app.cli import main
from logdoctor.facts.series import Series
from tests.generated import generated_log

ROOT = Path(__file__).resolve().parents[2]
ALL_FIXTURE_LOGS = sorted((ROOT / "fixtures" / "logs").rglob("*.log"))


def _kind(log: Path) -> tuple[str, str]:
    """(its fixture folder, the engine most of its golden events name, or "none")."""
    golden = log.with_name(log.name.removesuffix(".log") + ".events.jsonl")
    engines: Counter[str] = Counter()
    if golden.exists():
        with golden.open(encoding="utf-8") as fh:
            for line in itertools.islice(fh, 400):
                engine = json.loads(line).get("engine")
                if engine:
                    engines[engine] += 1
    return log.relative_to(ROOT / "fixtures" / "logs").parts[0], engines.most_common(1)[0][0] if engines else "none"


def representative(logs: list[Path], cap: int = 1024 * 1024) -> list[Path]:
    """One log of each kind: the largest under `cap` bytes (the most ranges to cut and facts to merge), else the
    smallest; every story log besides."""
    kinds: dict[tuple[str, str], list[Path]] = defaultdict(list)
    for log in logs:
        kinds[_kind(log)].append(log)
    chosen = {log for log in logs if log.parent.name == "story"}
    for group in kinds.values():
        fits = [log for log in group if log.stat().st_size <= cap]
        chosen.add(max(fits, key=lambda p: p.stat().st_size) if fits else min(group, key=lambda p: p.stat().st_size))
    return sorted(chosen)


# Logs that hold a case no kind's representative does, each beside why.
CASES = {
    # Warnings no line type reads, in c10d's `[rank3]:[E ...]` header, which names no engine: the engine they are
    # reported under is the one the lines before them detected, past a range's start.
    "realworld/nccl-r001.log": "a warning whose engine the lines before it decide",
}
FIXTURE_LOGS = sorted(set(representative(ALL_FIXTURE_LOGS)) | {ROOT / "fixtures" / "logs" / name for name in CASES})


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many ranges were merged from their partials, and how many stretches those held."""
    from logdoctor.facts.partial import Stretch
    from logdoctor.pipeline import parallel

    seen = {"ranges": 0, "stretches": 0, "decoded": 0}
    real = parallel.feed

    def feed(watch: Any, part: Any, *, absorbing: bool = True) -> None:
        if absorbing and part.facts is not None:
            seen["ranges"] += 1
            seen["stretches"] += sum(isinstance(s, Stretch) for s in part.facts)
        else:
            seen["decoded"] += 1
        real(watch, part, absorbing=absorbing)

    monkeypatch.setattr(parallel, "feed", feed)
    return seen


@pytest.fixture
def small_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small files read as a big one is (prefiltered), so that how a file was read is the same in both runs."""
    import logdoctor.pipeline.parallel as parallel
    import logdoctor.sources.local as local

    monkeypatch.setattr(local, "PREFILTER_MIN_BYTES", 0)
    monkeypatch.setattr(local, "PREFILTER_PART_BYTES", 1)
    monkeypatch.setattr(parallel, "WARMUP_BYTES", 16 * 1024)


def _one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGDOCTOR_PARSE_WORKERS", "0")
    monkeypatch.setenv("LOGDOCTOR_PREFILTER_PARTS", "1")


def _apart(monkeypatch: pytest.MonkeyPatch, parts: int) -> None:
    monkeypatch.setenv("LOGDOCTOR_PREFILTER_PARTS", str(parts))
    monkeypatch.delenv("LOGDOCTOR_PARSE_WORKERS", raising=False)


def _plain(value: Any) -> Any:
    if isinstance(value, Series):
        return ("series", list(value), value.seen, value.total, value.low, value.high, value.latest, value.stride)
    return value


def _diagnosed(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, list[Any]]:
    """`diagnose --format json` of a file, and the profile of each deployment it diagnosed (every fact's value,
    series summary, lines and origin): what the report shows and what the rules read."""
    from logdoctor.pipeline import run

    profiles: list[Any] = []
    real = run.diagnose_parsed

    def diagnose_parsed(parsed: Any, *args: Any, **kwargs: Any) -> Any:
        diagnosis, profile = real(parsed, *args, **kwargs)
        facts = {name: (_plain(f.value), f.refs, f.origin) for name, f in profile.facts.items()}
        profiles.append((facts, profile.engine, profile.version, parsed.clues, parsed.notes))
        return diagnosis, profile

    with monkeypatch.context() as patch:
        patch.setattr(run, "diagnose_parsed", diagnose_parsed)
        result = CliRunner().invoke(main, ["diagnose", str(path), "--format", "json", "--fail-on", "never"])
    return f"exit {result.exit_code}\n{result.stdout}", profiles


@pytest.mark.usefixtures("small_files")
def test_one_fixture_of_each_kind_diagnosed_from_partials_is_the_one_process_diagnosis(
    monkeypatch: pytest.MonkeyPatch, counted: dict[str, int]
) -> None:
    assert {_kind(log)[1] for log in FIXTURE_LOGS} >= {"vllm", "sglang", "nccl", "none"}
    assert {_kind(log)[0] for log in FIXTURE_LOGS} == {_kind(log)[0] for log in ALL_FIXTURE_LOGS}
    merged: list[str] = []
    for path in FIXTURE_LOGS:
        _one_process(monkeypatch)
        one = _diagnosed(path, monkeypatch)
        with monkeypatch.context() as patch:
            _apart(patch, 3)
            before = counted["ranges"]
            apart = _diagnosed(path, patch)
            if counted["ranges"] > before:
                merged.append(path.name)
        assert apart[0] == one[0], path
        assert apart[1] == one[1], path
    # Most fixtures hold one start, so their cuts pass the parse checks and the partials are what was merged.
    assert len(merged) >= len(FIXTURE_LOGS) // 2, (len(merged), len(FIXTURE_LOGS))
    assert counted["stretches"] > 0


@pytest.mark.usefixtures("small_files")
@pytest.mark.parametrize("parts", [2, 3])
def test_a_story_log_cut_anywhere_gives_the_one_process_facts(
    monkeypatch: pytest.MonkeyPatch, counted: dict[str, int], parts: int
) -> None:
    """The story fixture (a vLLM DFlash serving log) cut into two and three ranges: stretches
    begin and end mid-serving, inside the warm-up intervals, and between a process's first lines."""
    path = ROOT / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"
    _one_process(monkeypatch)
    one = _diagnosed(path, monkeypatch)
    _apart(monkeypatch, parts)
    assert _diagnosed(path, monkeypatch) == one
    assert counted["ranges"] >= 2


@pytest.fixture(scope="module")
def log_64m(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("facts") / "serve-64M.log"
    generated_log(path, "64M")
    return path


def test_a_generated_64_mib_log_from_partials_is_the_one_process_diagnosis(
    log_64m: Path, monkeypatch: pytest.MonkeyPatch, counted: dict[str, int]
) -> None:
    _one_process(monkeypatch)
    one = _diagnosed(log_64m, monkeypatch)
    _apart(monkeypatch, 4)  # 64 MiB in ranges of at least 16 MiB (sources/local.py PREFILTER_PART_BYTES)
    assert _diagnosed(log_64m, monkeypatch) == one
    assert counted["ranges"] == 4 and counted["decoded"] == 0 and counted["stretches"] >= 4
