"""A self-contained copy of the story fixtures and the built-in rules, so the harness is tested on
files these tests own (the live fixtures and rules keep changing under other work)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from logdoctor.engine.rules import builtin_rules_dir, load_rules
from logdoctor.testing import run_case

STORY = Path(__file__).resolve().parents[2] / "fixtures" / "logs" / "story"
DFLASH = "vllm-dflash-tp2-a6000"
HEALTHY = "vllm-mtp-tp2-a6000-healthy"

# The core of the story's expectations, pinned here: spec decoding with a DFlash drafter at k=15
# loses speed, custom all-reduce is off; the MTP twin is healthy.
DFLASH_EXPECT = """\
source: copied from fixtures/logs/story (constructed from the vLLM 0.20 formats)
constructed: true
engine: vllm
fires:
  - cause: spec-low-acceptance
    rank: 1
    min_score: 75
  - cause: custom-allreduce-disabled
    min_score: 50
  - cause: spec-net-loss
must_not_fire:
  - cause: cuda-graphs-disabled
  - cause: no-gpu-backend
ruled_out: [eager-decode]
"""

HEALTHY_EXPECT = """\
source: copied from fixtures/logs/story (constructed from the vLLM 0.20 formats)
constructed: true
engine: vllm
healthy: true
must_not_fire:
  - cause: spec-net-loss
  - cause: spec-low-acceptance
  - cause: custom-allreduce-disabled
ruled_out: [below-break-even, custom-allreduce-off, eager-decode]
"""


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    """tmp/fixtures/logs/story: the two story logs, pinned expectations and fresh golden files."""
    directory = tmp_path / "fixtures" / "logs" / "story"
    directory.mkdir(parents=True)
    for name, expect in ((DFLASH, DFLASH_EXPECT), (HEALTHY, HEALTHY_EXPECT)):
        shutil.copy(STORY / f"{name}.log", directory / f"{name}.log")
        (directory / f"{name}.expect.yaml").write_text(expect, encoding="utf-8")
    rules = load_rules()
    for name in (DFLASH, HEALTHY):
        run_case(directory / f"{name}.expect.yaml", rules=rules, update_golden=True)
    return directory


@pytest.fixture
def rules_copy(tmp_path: Path) -> Path:
    """tmp/rules: a copy of the built-in rule files, to break on purpose."""
    target = tmp_path / "rules"
    shutil.copytree(builtin_rules_dir(), target, ignore=shutil.ignore_patterns("__init__.py", "__pycache__"))
    return target


def rule_file(rules: Path, rule_id: str) -> Path:
    for path in sorted(rules.rglob("*.yaml")):
        if f"\nid: {rule_id}\n" in "\n" + path.read_text(encoding="utf-8"):
            return path
    raise AssertionError(f"no rule {rule_id} under {rules}")
