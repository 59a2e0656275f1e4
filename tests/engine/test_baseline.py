"""`baseline.<fact>` in the condition language and `mode: diff` rules (logdoctor diff's regression rules)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor.engine.conditions import ConditionError, parse_condition, reads_baseline
from logdoctor.engine.evaluate import evaluate, evaluate_rule
from logdoctor.engine.rules import load_rules
from logdoctor.errors import RuleError
from logdoctor.facts import Fact, Profile, fact_spec, with_baseline
from logdoctor.testing.samples import sample_failures


def _profile(engine: str = "vllm", **values: object) -> Profile:
    facts = {k.replace("__", "."): Fact(v) for k, v in values.items()}
    return Profile(facts={"engine": Fact(engine), **facts}, engine=engine)


CANDIDATE = _profile(cuda_graphs__enabled=False, spec__acceptance_length=[1.3, 1.29], spec__num_tokens=15.0)
BASELINE = _profile("sglang", cuda_graphs__enabled=True, spec__acceptance_length=[3.08, 3.1], spec__num_tokens=3.0)


def test_baseline_names_parse_and_read_the_baseline_profile() -> None:
    node = parse_condition("baseline.cuda_graphs.enabled and not cuda_graphs.enabled")
    assert node.facts() == {"baseline.cuda_graphs.enabled", "cuda_graphs.enabled"}
    assert reads_baseline(node)
    assert not reads_baseline(parse_condition("not cuda_graphs.enabled"))
    combined = with_baseline(CANDIDATE, BASELINE)
    assert combined.engine == "vllm"
    assert node.eval(combined) is True
    drop = parse_condition("mean(spec.acceptance_length) < 0.8 * mean(baseline.spec.acceptance_length)")
    assert drop.eval(combined) is True
    assert parse_condition("baseline.spec.num_tokens != spec.num_tokens").eval(combined) is True


def test_without_a_baseline_the_names_are_missing_not_false() -> None:
    node = parse_condition("baseline.cuda_graphs.enabled and not cuda_graphs.enabled")
    assert node.eval(CANDIDATE) is None
    assert not CANDIDATE.has("baseline.cuda_graphs.enabled")
    assert with_baseline(CANDIDATE, BASELINE).has("baseline.spec.acceptance_length")


def test_baseline_names_are_checked_like_any_other() -> None:
    with pytest.raises(ConditionError, match=r"did you mean 'baseline\.spec\.acceptance_length'"):
        parse_condition("mean(baseline.spec.acceptence_length) > 2")
    with pytest.raises(ConditionError, match="time series"):
        parse_condition("baseline.spec.acceptance_length > 2")
    with pytest.raises(ConditionError, match="single value"):
        parse_condition("mean(baseline.spec.num_tokens) > 2")
    with pytest.raises(ConditionError, match=r"unknown fact 'baseline\.nope'"):
        parse_condition("exists(baseline.nope)")
    spec = fact_spec("baseline.spec.acceptance_length")
    assert spec is not None and spec.kind == "series"
    assert fact_spec("baseline.nope") is None


DIFF_RULE = """\
id: my-diff
cause: cuda-graphs-disabled
title: t
engines: [vllm, sglang]
mode: diff
requires: [cuda_graphs.enabled, baseline.cuda_graphs.enabled]
when: "baseline.cuda_graphs.enabled and not cuda_graphs.enabled"
impact: 90
explain: "baseline {baseline.engine} had graphs; the candidate ({engine}) has none"
samples:
  - baseline: "[2026-05-07 09:12:03] server_args=ServerArgs(model_path='/m', tp_size=2, disable_cuda_graph=False)"
    text: "(EngineCore pid=1) INFO 05-08 14:02:31 [core.py:109] Initializing a V1 LLM engine (v0.20.1) with config: model='/m', enforce_eager=True"
"""


def _write(tmp_path: Path, body: str) -> Path:
    directory = tmp_path / "rules"
    directory.mkdir(exist_ok=True)
    (directory / "my-diff.yaml").write_text(body, encoding="utf-8")
    return directory


def test_diff_rules_load_and_their_paired_samples_fire(tmp_path: Path) -> None:
    [item] = load_rules([_write(tmp_path, DIFF_RULE)], builtin=False)
    assert item.is_diff
    assert sample_failures(item) == []
    combined = with_baseline(CANDIDATE, BASELINE)
    outcome, finding = evaluate_rule(item, combined, lambda _s, _n: None)
    assert outcome.outcome == "fired" and finding is not None
    assert finding.explanation == "baseline sglang had graphs; the candidate (vllm) has none"


def test_diagnose_skips_diff_rules_and_diff_runs_them(tmp_path: Path) -> None:
    [item] = load_rules([_write(tmp_path, DIFF_RULE)], builtin=False)
    findings, outcomes, _ = evaluate([item], CANDIDATE, lambda _s, _n: None)
    assert findings == [] and outcomes == []
    findings, outcomes, _ = evaluate([item], with_baseline(CANDIDATE, BASELINE), lambda _s, _n: None, diff=True)
    assert [f.rule for f in findings] == ["my-diff"]
    missing, outcomes, _ = evaluate([item], CANDIDATE, lambda _s, _n: None, diff=True)
    assert missing == [] and outcomes[0].outcome == "insufficient_data"
    assert outcomes[0].missing == ["baseline.cuda_graphs.enabled"]


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("mode: diff\n", "", "my-diff.yaml:6:7: when: reads baseline.* facts: add `mode: diff`"),
        (
            'when: "baseline.cuda_graphs.enabled and not cuda_graphs.enabled"',
            'when: "not cuda_graphs.enabled"',
            "my-diff.yaml:5:7: mode: a `mode: diff` rule compares with the baseline",
        ),
        (
            "  - baseline: ",
            "  - engine: sglang\n    text: ",
            "my-diff.yaml:11:5: samples.0: a diff-mode sample needs `baseline:`",
        ),
        (
            "requires: [cuda_graphs.enabled, baseline.cuda_graphs.enabled]",
            "requires: [baseline.cuda_graph.enabled]",
            "unknown fact 'baseline.cuda_graph.enabled' (did you mean 'baseline.cuda_graphs.enabled'?)",
        ),
    ],
)
def test_mode_and_baseline_facts_must_agree(tmp_path: Path, old: str, new: str, message: str) -> None:
    body = DIFF_RULE.replace(old, new)
    if new == 'when: "not cuda_graphs.enabled"':  # no baseline fact anywhere
        body = body.replace(", baseline.cuda_graphs.enabled]", "]").replace("{baseline.engine}", "x")
    if old == "  - baseline: ":  # the sample keeps only the candidate's lines
        body = body.replace('\n    text: "(EngineCore', '\n    x: "(EngineCore').replace("    x: ", "    # ")
    with pytest.raises(RuleError) as info:
        load_rules([_write(tmp_path, body)], builtin=False)
    assert message in str(info.value)


def test_a_diagnose_rule_may_not_carry_paired_samples(tmp_path: Path) -> None:
    body = DIFF_RULE.replace("mode: diff\n", "").replace(
        'when: "baseline.cuda_graphs.enabled and not cuda_graphs.enabled"', 'when: "not cuda_graphs.enabled"'
    )
    body = body.replace("requires: [cuda_graphs.enabled, baseline.cuda_graphs.enabled]", "requires: []")
    body = body.replace("{baseline.engine}", "x")
    with pytest.raises(RuleError, match=r"samples\.0: `baseline:` only applies to samples of `mode: diff` rules"):
        load_rules([_write(tmp_path, body)], builtin=False)


def test_builtin_regression_rules_are_diff_rules_with_paired_samples() -> None:
    diff_rules = [item for item in load_rules() if item.is_diff]
    assert {item.id for item in diff_rules} >= {
        "diff-eager-vs-graphs",
        "diff-acceptance-drop",
        "diff-spec-changed",
        "diff-allreduce-lost",
        "diff-slower-attention",
        "diff-smaller-kv",
        "diff-lower-concurrency",
    }
    for item in diff_rules:
        assert item.path.split("/")[-1].startswith("diff-")
        assert item.rule.samples and all(s.baseline for s in item.rule.samples), item.id
        assert any(s.fires for s in item.rule.samples) and any(not s.fires for s in item.rule.samples), item.id
        assert sample_failures(item) == [], item.id
