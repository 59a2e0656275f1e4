"""A new engine is one package plus one registry line: a small engine built in a temporary directory,
registered, and seen detected, parsed, diagnosed and diffed without a change to any core module."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from logdoctor.app.diffs import diff_parsed
from logdoctor.engine.rules import load_rules
from logdoctor.pipeline.run import LineSource, diagnose_parsed, parse_sources
from logdoctor.registry import REGISTRY, engine_choices, register_module
from logdoctor.testing.linetypes import case_failures, coverage_gaps

TOY_ENGINE = '''
"""ToyServe: one line type, one configuration mapping."""

import re

from logdoctor.events import EngineVersion, StartupConfig
from logdoctor.parse.grammar import Grammar, case
from logdoctor.registry import EngineSpec, Spelling

_START_RE = re.compile(r"toyserve (?P<version>\\d+\\.\\d+) starting: tp=(?P<tp>\\d+) eager=(?P<eager>true|false)")


def parse_start(line, ctx):
    m = _START_RE.search(line.message)
    if m is None:
        return None
    base = ctx.base(line, "toy")
    config = {"tp": int(m["tp"]), "eager": m["eager"] == "true"}
    return [
        EngineVersion(**base, version=m["version"], origin="version line"),
        StartupConfig(**base, origin="engine init", config=config),
    ]


def apply_config(b, cfg, event):
    if cfg.get("eager") is True:
        b.set("cuda_graphs.enabled", False, event, "toy start: eager=true")


SPEC = EngineSpec(
    name="toy",
    label="ToyServe",
    kind="serving",
    grammars=(
        Grammar(
            "toy.start",
            "toy",
            ("toyserve ",),
            parse_start,
            (
                case(
                    "start",
                    "toyserve 1.2 starting: tp=2 eager=true",
                    ("engine_version", {"version": "1.2", "engine": "toy"}),
                    ("startup_config", {"config": {"tp": 2, "eager": True}}),
                    exact=True,
                ),
            ),
        ),
    ),
    apply_config=apply_config,
    config_facts=("cuda_graphs.enabled",),
    flags={"tensor_parallel_size": Spelling("--toy-tp", config_keys=("tp",))},
)
'''


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / "toyengine").mkdir()
    (tmp_path / "toyengine" / "__init__.py").write_text(textwrap.dedent(TOY_ENGINE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    register_module("toyengine")
    try:
        yield "toy"
    finally:
        REGISTRY.unregister("toy")
        sys.modules.pop("toyengine", None)


def test_registered_engine_is_parsed_and_detected(toy: str) -> None:
    spec = REGISTRY.get(toy)
    assert spec is not None and toy in engine_choices()
    assert all(not case_failures(c) for g in spec.grammars for c in g.cases)
    assert coverage_gaps(spec.grammars) == []
    parsed = parse_sources([LineSource(name="toy.log", lines=[(1, "toyserve 1.2 starting: tp=2 eager=true")])])
    assert parsed.engine == "toy" and parsed.version == "1.2"
    assert [e.type for e in parsed.events] == ["engine_version", "startup_config"]


def test_registered_engine_is_diagnosed_with_its_config_mapping(toy: str) -> None:
    parsed = parse_sources([LineSource(name="toy.log", lines=[(1, "toyserve 1.2 starting: tp=2 eager=true")])])
    diagnosis, profile = diagnose_parsed(parsed, load_rules())
    assert diagnosis.engine.name == "toy"
    assert profile.value("parallel.tp") == 2  # the plain setting, through the spec's Spelling
    assert profile.value("cuda_graphs.enabled") is False  # what apply_config wrote
    assert diagnosis.verdict.kind in ("problems", "inconclusive")  # eager, and no throughput read: never healthy


def test_registered_engine_is_diffed_with_its_flag(toy: str) -> None:
    base = parse_sources([LineSource(name="a.log", lines=[(1, "toyserve 1.2 starting: tp=4 eager=false")])])
    cand = parse_sources([LineSource(name="b.log", lines=[(1, "toyserve 1.2 starting: tp=2 eager=true")])])
    report = diff_parsed(base, cand, load_rules())
    rows = {row.key: row for row in report.differences}
    tp = rows["tensor_parallel_size"]
    assert (tp.baseline, tp.candidate) == (4, 2)
    assert tp.candidate_flag == "--toy-tp"
