"""One answer on every fixture whose GPU is known: findings grouped into problems with their evidence, the gap's
"explains" the product of the problems' effects, no two fixes of a problem that contradict, and no placeholder
where the log holds the value. The GPU is the one the log names (host facts), else the one its label names
(`hardware:` in the fixture's expectation file, matched against the hardware table), and the story's RTX A6000."""

from __future__ import annotations

import io
import math
import re
from functools import cache
from pathlib import Path

import pytest
import yaml
from rich.console import Console

from logdoctor.engine.problems import FAMILIES, problem_id
from logdoctor.engine.result import Diagnosis
from logdoctor.engine.rules import LoadedRule, load_rules
from logdoctor.perf.hardware import load_hardware
from logdoctor.perf.options import perf_options
from logdoctor.pipeline.run import LineSource, diagnose_parsed, parse_sources
from logdoctor.report.terminal import render_terminal

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "logs"
# the held-out sets are measured, never tested against
HELD_OUT = (
    "realworld6",
    "realworld7",
    "realworld8",
    "realworld9",
    "realworld10",
    "realworld11",
    "realworld12",
    "realworld13",
    "realworld14",
)
LOGS = sorted(p for p in ROOT.rglob("*.log") if not set(HELD_OUT) & set(p.parts))
STORY_GPU = "RTX A6000"  # the story's two RTX A6000 (fixtures/logs/story/*.expect.yaml)

# A placeholder in a fix and the fact that holds its value: where the log has the fact, the fix must say it.
PLACEHOLDERS = (
    (re.compile(r"--(?:data-parallel|dp)-size N\b"), "parallel.tp"),
    (re.compile(r"<larger>"), "sched.max_batched_tokens"),
    (re.compile(r'"method": "\.\.\."'), "spec.method"),
)
_K = re.compile(r'"method": "([^"]+)", "num_speculative_tokens": (\d+)')


@cache
def _rules() -> tuple[LoadedRule, ...]:
    return tuple(load_rules([], builtin=True))


@cache
def _names() -> tuple[tuple[str, str], ...]:
    """(a name or alias, the GPU's table name), longest first, for matching a label's free text."""
    pairs = [(alias, gpu.name) for gpu in load_hardware().gpus for alias in (gpu.name, *gpu.aliases)]
    return tuple(sorted(pairs, key=lambda p: -len(p[0])))


def _label_gpu(log: Path) -> str | None:
    stem = log.name.removesuffix(".log")
    text = ""
    for label in (log.with_name(stem + ".yaml"), log.with_name(stem + ".expect.yaml")):
        if label.exists():
            data = yaml.safe_load(label.read_text(encoding="utf-8")) or {}
            text += " " + str(data.get("hardware") or "") if isinstance(data, dict) else ""
    for alias, name in _names():
        if len(alias) >= 4 and re.search(rf"(?<![\w-]){re.escape(alias)}(?![\w-])", text, flags=re.I):
            return name
    return None


def _diagnose(log: Path) -> Diagnosis | None:
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    parsed = parse_sources([LineSource(log.name, list(enumerate(lines, 1)))])
    d = diagnose_parsed(parsed, _rules())[0]
    if d.performance is not None and d.performance.known:
        return d
    gpu = STORY_GPU if log.parent.name == "story" else _label_gpu(log)
    if gpu is None:
        return None
    d = diagnose_parsed(parsed, _rules(), perf=perf_options(gpu))[0]
    return d if d.performance is not None and d.performance.known else None


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(ROOT)))
def test_one_answer(log: Path) -> None:
    d = _diagnose(log)
    if d is None:
        pytest.skip("no GPU known for this fixture")
    # problems: every finding in exactly one, findings of one mechanism together, counted once
    ids = [p.id for p in d.problems]
    assert len(ids) == len(set(ids))
    grouped = [rule for p in d.problems for rule in p.rules]
    assert sorted(grouped) == sorted(f.rule for f in d.findings)
    for f in d.findings:
        assert f.problem == problem_id(f.cause) and f.problem in ids
    families = {FAMILIES[f.cause][0] for f in d.findings if f.cause in FAMILIES}
    assert all(ids.count(family) == 1 for family in families)
    likely = {problem_id(f.cause) for f in d.findings if f.score >= 50}
    if d.verdict.kind == "problems":
        assert d.verdict.summary.startswith(f"{len(likely)} likely problem(s); top: ")
    # effects: one a problem, the gap's "explains" their product, on the basis of the gap
    p = d.performance
    assert p is not None
    by_id = {pr.id: pr for pr in d.problems}
    assert len({s.problem for s in p.shares}) == len(p.shares)
    for share in p.shares:
        effect = by_id[share.problem].effect
        assert effect is not None and effect.speedup == share.speedup
    if p.shares:
        assert p.explained == pytest.approx(math.prod(s.speedup for s in p.shares), rel=2e-3)
        if p.gap is not None and p.explained is not None and p.ratio_as_deployed:
            assert p.gap == pytest.approx(p.explained / p.ratio_as_deployed, rel=1e-2)
    # the fixes of a problem: one k per method, never the k or method already set, no advice for another
    # method, the model's actions faster than as deployed and best first
    method = str(d.facts.get("spec.method") or "")
    k_now = d.facts.get("spec.num_tokens")
    for pr in d.problems:
        texts = [a.text for a in pr.actions]
        ks: dict[str, set[int]] = {}
        for text in texts:
            for m, k in _K.findall(text):
                ks.setdefault(m, set()).add(int(k))
        assert all(len(v) == 1 for v in ks.values()), texts
        if method and isinstance(k_now, int | float):
            assert int(k_now) not in ks.get(method, set()), texts
        if method == "mtp":
            assert "mtp" not in ks, texts
        if method and method != "dflash":
            assert not any("dflash" in t.lower() for t in texts), texts
        modelled = [a for a in pr.actions if a.expected_tok_s is not None]
        assert all((a.speedup or 0) > 1 for a in modelled), texts
        assert [a.expected_tok_s for a in modelled] == sorted((a.expected_tok_s or 0 for a in modelled), reverse=True)
        if pr.effect is not None and modelled:
            assert pr.effect.speedup == pytest.approx(modelled[0].speedup or 0, rel=1e-3)
        for text in texts:
            for pattern, fact in PLACEHOLDERS:
                assert not (pattern.search(text) and fact in d.facts), (text, fact)
        # the effect in words says the recommended action's number, the one the gap multiplies
        if pr.effect is not None and modelled and pr.id == "speculation":
            assert f"({modelled[0].expected_tok_s:.1f} tok/s" in pr.effect.statement or (
                f"({modelled[0].expected_tok_s:.0f} tok/s" in pr.effect.statement
            ), pr.effect.statement
        # the TP link: a recommended action with its number wherever the engines would bring custom all-reduce
        # back (two GPUs, or turned off by the user); never the rule's line saying the same beside it
        if pr.id == "tp-link" and pr.effect is not None and pr.effect.speedup > 1.001:
            reason = str(d.facts.get("allreduce.reason") or "")
            tp = d.facts.get("parallel.tp")
            if reason not in ("spans-nodes", "pcie-more-than-two") and (reason == "user" or tp == 2):
                assert modelled and modelled[0].speedup == pytest.approx(pr.effect.speedup, rel=1e-3), texts
            if modelled:
                assert not any(t.startswith("enable PCIe P2P") for t in texts), texts
        # CUDA graphs: the line that turns them on carries the model's number
        if pr.id == "cuda-graphs-disabled" and pr.effect is not None and pr.effect.speedup > 1.001:
            assert modelled and modelled[0].speedup == pytest.approx(pr.effect.speedup, rel=1e-3), texts
    # what the terminal shows: "N likely problem(s)" boxes, and "Also noted (N" lines, one a problem
    text = _terminal(d)
    likely_boxes = len(re.findall(r"^╭─ \d+\. ", text, flags=re.M))
    if d.verdict.kind == "problems":
        assert likely_boxes == len(likely)
    noted = re.search(
        r"^Also noted \((\d+), each below score \d+\):\n((?:(?!Ruled out|Could not check).*\n)*)", text, re.M
    )
    if noted:
        heads = [line for line in noted.group(2).splitlines() if re.match(r"^  \[ ?\d+\] ", line)]
        assert len(heads) == int(noted.group(1)), noted.group(0)


def _terminal(d: Diagnosis) -> str:
    buffer = io.StringIO()
    render_terminal(d, Console(file=buffer, width=400, color_system=None), verbose=False)
    return buffer.getvalue()
