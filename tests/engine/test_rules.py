"""Rule loading: the built-in set is valid, errors carry file:line:column, scoring is continuous."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from logdoctor.engine.evaluate import UNKNOWN, render_template, strength
from logdoctor.engine.rules import (
    CAUSES,
    Fix,
    ScoreCurve,
    _compile_template,
    builtin_rules_dir,
    load_rules,
    rule_engines,
)
from logdoctor.errors import RuleError
from logdoctor.facts import ProfileBuilder

CAUSES_MD = Path(__file__).resolve().parents[2] / "docs" / "causes.md"


def test_builtin_rules_load_and_cover_every_cause() -> None:
    rules = load_rules()
    assert len(rules) >= 25
    assert {r.rule.cause for r in rules} == set(CAUSES)


def test_rule_folders_are_the_causes() -> None:
    folders = {p.name for p in builtin_rules_dir().iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders <= set(CAUSES), f"rule folders that are not causes: {sorted(folders - set(CAUSES))}"
    assert set(CAUSES) <= folders, f"causes without a rule folder: {sorted(set(CAUSES) - folders)}"


def test_builtin_rule_ids_and_causes_are_their_paths() -> None:
    for item in load_rules():
        path = Path(item.path)
        assert (path.parent.name, path.stem) == (item.rule.cause, item.id), item.path


def test_causes_match_the_public_contract() -> None:
    text = CAUSES_MD.read_text(encoding="utf-8")
    listed = re.findall(r"^\| `([a-z0-9-]+)` \|", text, flags=re.M)
    assert listed == list(CAUSES)


def _write(tmp_path: Path, name: str, body: str) -> Path:
    directory = tmp_path / "rules"
    (directory / name).parent.mkdir(parents=True, exist_ok=True)
    (directory / name).write_text(body, encoding="utf-8")
    return directory


GOOD = """\
id: my-rule
cause: kv-cache-pressure
title: t
engines: [vllm]
requires: [kv.usage]
when: "max(kv.usage) > 0.9"
impact: 50
explain: "usage {max(kv.usage) * 100:.0f}%"
"""


def test_user_rules_load_beside_builtin(tmp_path: Path) -> None:
    directory = _write(tmp_path, "my-rule.yaml", GOOD)
    rules = load_rules([directory], builtin=False)
    assert [r.id for r in rules] == ["my-rule"]


def test_id_and_cause_come_from_the_path(tmp_path: Path) -> None:
    body = GOOD.replace("id: my-rule\n", "").replace("cause: kv-cache-pressure\n", "")
    directory = _write(tmp_path, "kv-cache-pressure/kv-high.yaml", body)
    [item] = load_rules([directory], builtin=False)
    assert (item.id, item.rule.cause) == ("kv-high", "kv-cache-pressure")


def test_id_or_cause_that_disagrees_with_the_path_is_an_error(tmp_path: Path) -> None:
    directory = _write(tmp_path, "kv-cache-pressure/other-name.yaml", GOOD)
    _write(tmp_path, "spec-net-loss/my-rule.yaml", GOOD.replace("id: my-rule\n", ""))
    _write(tmp_path, "kv/my-rule.yaml", GOOD.replace("impact: 50", "impact: 500"))
    _write(tmp_path, "no-cause.yaml", GOOD.replace("id: my-rule\n", "").replace("cause: kv-cache-pressure\n", ""))
    with pytest.raises(RuleError) as info:
        load_rules([directory], builtin=False)
    message = str(info.value)
    assert "other-name.yaml:1:5: id: 'my-rule' differs from the file name other-name.yaml" in message
    assert (
        "spec-net-loss/my-rule.yaml:1:8: cause: 'kv-cache-pressure' differs from the folder spec-net-loss/" in message
    )
    assert "kv/my-rule.yaml:1:1: rule: the folder 'kv' is not a cause" in message
    assert "kv/my-rule.yaml:7:9: impact:" in message  # and the rest of the file is still checked
    assert "no-cause.yaml:1:1: rule: no cause folder: write `cause:`" in message


def test_a_pack_rule_may_not_reuse_a_builtin_id(tmp_path: Path) -> None:
    body = GOOD.replace("id: my-rule\n", "")
    directory = _write(tmp_path, "kv-cache-pressure/kv-saturated.yaml", body)
    with pytest.raises(
        RuleError, match=r"kv-saturated.yaml:1:1: duplicate rule id 'kv-saturated' \(also in the built-in set"
    ):
        load_rules([directory])
    assert [r.id for r in load_rules([directory], builtin=False)] == ["kv-saturated"]


def test_unknown_fact_points_at_file_line_and_column(tmp_path: Path) -> None:
    directory = _write(
        tmp_path, "my-rule.yaml", GOOD.replace('when: "max(kv.usage) > 0.9"', 'when: "max(kv.usag) > 0.9"')
    )
    with pytest.raises(RuleError) as info:
        load_rules([directory], builtin=False)
    message = str(info.value)
    assert "my-rule.yaml:6:12: when: unknown fact 'kv.usag' (did you mean 'kv.usage'?)" in message


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("impact: 50", "impactt: 50", "my-rule.yaml:7:1: impactt: unknown key (did you mean 'impact'?)"),
        ("title: t", "titel: t", "my-rule.yaml:3:1: titel: unknown key (did you mean 'title'?)"),
        ('"max(kv.usage) > 0.9"', '"max(kv.usage) <== 0.9"', "my-rule.yaml:6:22: when: unknown operator '<=='"),
        ('"max(kv.usage) > 0.9"', '"maxx(kv.usage) > 0.9"', "my-rule.yaml:6:8: when: unknown function 'maxx'"),
        ("100:.0f}", "100:.0zz}", "my-rule.yaml:8:37: explain: format spec ':.0zz' is not one of"),
        ("* 100:.0f}", "* :.0f}", "my-rule.yaml:8:33: explain: cannot parse: it ends where a value is expected"),
    ],
)
def test_rule_mistakes_name_their_line_column_and_what_was_meant(
    tmp_path: Path, old: str, new: str, expected: str
) -> None:
    directory = _write(tmp_path, "my-rule.yaml", GOOD.replace(old, new))
    with pytest.raises(RuleError) as info:
        load_rules([directory], builtin=False)
    message = str(info.value)
    assert expected in message
    assert "Field required" not in message  # a misspelt key is said once, as the key it meant
    assert "Expected end of text" not in message


def test_every_error_of_a_rule_set_is_reported(tmp_path: Path) -> None:
    _write(tmp_path, "my-rule.yaml", GOOD.replace("cause: kv-cache-pressure", "cause: kv-pressure"))
    directory = _write(tmp_path, "other.yaml", GOOD.replace("impact: 50", "impact: 500").replace("my-rule", "other"))
    _write(
        tmp_path, "third.yaml", GOOD.replace("requires: [kv.usage]", "requires: [kv.usag]").replace("my-rule", "third")
    )
    with pytest.raises(RuleError) as info:
        load_rules([directory], builtin=False)
    message = str(info.value)
    assert "my-rule.yaml:2:8: cause: unknown cause 'kv-pressure'" in message
    assert "see docs/causes.md" in message
    assert "other.yaml:7:9: impact:" in message
    assert "third.yaml:5:12: requires.0: unknown fact 'kv.usag'" in message


def test_engines_and_fix_keys_are_registered_engine_names(tmp_path: Path) -> None:
    body = GOOD.replace("engines: [vllm]", "engines: [vllm, trtllm]") + "fix: {vlm: [x]}\n"
    directory = _write(tmp_path, "my-rule.yaml", body)
    with pytest.raises(RuleError) as info:
        load_rules([directory], builtin=False)
    message = str(info.value)
    assert "my-rule.yaml:4:17: engines.1: unknown engine 'trtllm'" in message
    assert (
        "my-rule.yaml:9:7: fix.vlm: unknown engine 'vlm' (did you mean 'vllm'?); known engines: vllm, sglang, nccl"
        in message
    )


def test_fix_for_an_unknown_engine_lists_every_engine_in_registry_order() -> None:
    fix = Fix.model_validate({"sglang": ["b"], "vllm": ["a"]})
    assert fix.for_engine("sglang") == ["b"]
    assert fix.for_engine("nccl") == []
    assert fix.for_engine("unknown") == ["a", "b"]


def test_duplicate_ids_and_unknown_keys(tmp_path: Path) -> None:
    directory = _write(tmp_path, "my-rule.yaml", GOOD + "severity: high\n")
    with pytest.raises(RuleError) as info:
        load_rules([directory], builtin=False)
    assert "my-rule.yaml:9:1: severity: unknown key (docs/rules.md lists the keys)" in str(info.value)
    directory2 = _write(tmp_path / "x", "my-rule.yaml", GOOD)
    _write(tmp_path / "x", "kv-cache-pressure/my-rule.yaml", GOOD)
    with pytest.raises(RuleError, match="duplicate rule id 'my-rule'"):
        load_rules([directory2], builtin=False)


def test_strength_curve_is_continuous_and_passes_its_anchors() -> None:
    lower_is_worse = ScoreCurve(metric="x", info=2.5, warn=1.3)
    assert strength(2.5, lower_is_worse) == pytest.approx(0.25)
    assert strength(1.3, lower_is_worse) == pytest.approx(0.75)
    values = [strength(x / 10, lower_is_worse) for x in range(5, 40)]
    assert values == sorted(values, reverse=True)
    assert min(values) > 0 and max(values) < 1
    higher_is_worse = ScoreCurve(metric="x", info=0.1, warn=0.5)
    assert strength(0.9, higher_is_worse) > strength(0.5, higher_is_worse) > strength(0.1, higher_is_worse)


def test_a_registered_engine_is_a_rule_engine(tmp_path: Path) -> None:
    from logdoctor.parse.pipeline import EventStream
    from logdoctor.registry import REGISTRY, EngineSpec

    REGISTRY.register(EngineSpec(name="trt", label="TensorRT-LLM", kind="serving"))
    try:
        body = (
            GOOD.replace("engines: [vllm]", "engines: [vllm, trt]")
            + "fix: {trt: [--kv-cache-free-gpu-mem-fraction 0.9]}\n"
        )
        [item] = load_rules([_write(tmp_path, "my-rule.yaml", body)], builtin=False)
        assert item.rule.fix.for_engine("trt") == ["--kv-cache-free-gpu-mem-fraction 0.9"]
        assert item.rule.fix.for_engine("unknown") == ["--kv-cache-free-gpu-mem-fraction 0.9"]
    finally:
        REGISTRY.unregister("trt")
        list(EventStream("warm", [(1, "x")]))  # rebuild the caches the change dropped: other tests time a first call
    assert "trt" not in rule_engines()


def test_no_fix_text_prints_a_placeholder_literally() -> None:
    """A `{...}` in a shipped fix text that names a fact is a placeholder: it must be one the fix grammar reads,
    or the user is shown `--max-num-seqs {2 * sched.max_num_seqs}` where the value is known."""
    import yaml

    from logdoctor.engine.rules import _FIX_PLACEHOLDER_RE
    from logdoctor.facts import FACTS

    names = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)+")
    literal: list[str] = []
    for path in sorted(builtin_rules_dir().rglob("*.yaml")):
        fixes = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("fix") or {}
        for options in fixes.values():
            for option in options:
                text = option["text"] if isinstance(option, dict) else option
                for m in re.finditer(r"\{([^{}]+)\}", text):
                    if _FIX_PLACEHOLDER_RE.fullmatch(m.group(0)) is None and any(
                        n in FACTS for n in names.findall(m.group(1))
                    ):
                        literal.append(f"{path.name}: {m.group(0)}")
    assert literal == []


def test_an_unknown_placeholder_reads_as_unknown_and_alone_in_parentheses_names_itself() -> None:
    profile = ProfileBuilder().profile()
    text = "with {spec.num_tokens} speculative tokens ({spec.method}) at a batch of {median(sched.running)}"
    assert render_template(_compile_template(text), profile) == (
        f"with {UNKNOWN} speculative tokens (method unknown) at a batch of {UNKNOWN}"
    )
