"""Expected performance in the diagnosis (logdoctor/perf/assess.py): the bound, measured / expected, effects on
findings, ranking and the gap attributed, on the story fixtures and a real healthy run."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest

from logdoctor.engine.evaluate import evaluate
from logdoctor.engine.result import Diagnosis, Finding
from logdoctor.engine.rules import LoadedRule, load_rules
from logdoctor.errors import ConfigError
from logdoctor.perf.assess import assess, effect_score, rank
from logdoctor.perf.fixes import ENABLE_P2P
from logdoctor.perf.mtp import DEEPSEEK_MTP, QWEN_MTP, mtp_acceptance, mtp_head
from logdoctor.perf.nogpu import SPEC_UNKNOWN
from logdoctor.perf.options import PerfOptions, gpu_from_facts, perf_options
from logdoctor.pipeline.run import LineSource, Parsed, diagnose_parsed, parse_sources, profile_of

ROOT = Path(__file__).resolve().parents[2]
STORY = ROOT / "fixtures" / "logs" / "story" / "vllm-dflash-tp2-a6000.log"
SGLANG_STORY = ROOT / "fixtures" / "logs" / "story" / "sglang-mtp-tp2-a6000.log"
# a real healthy run: Qwen3-Coder-30B-A3B on one A100 80GB (its label's `hardware:`), not used to write the model
HEALTHY_A100 = ROOT / "fixtures" / "logs" / "realworld" / "vllm-rh10.log"


def _parsed(path: Path) -> Parsed:
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return parse_sources([LineSource(path.name, list(enumerate(lines, 1)))])


@pytest.fixture(scope="module")
def rules() -> list[LoadedRule]:
    return load_rules([], builtin=True)


def _diagnose(path: Path, rules: list[LoadedRule], gpu: str | None) -> Diagnosis:
    return diagnose_parsed(_parsed(path), rules, perf=perf_options(gpu))[0]


@pytest.fixture(scope="module")
def story(rules: list[LoadedRule]) -> Diagnosis:
    return _diagnose(STORY, rules, "RTX A6000")


def _by_rule(d: Diagnosis) -> dict[str, Finding]:
    return {f.rule: f for f in d.findings}


def test_story_bound_ratio_and_summary(story: Diagnosis) -> None:
    p = story.performance
    assert p is not None and p.known
    assert p.gpu == "RTX A6000" and p.gpus == 2 and p.tp == 2 and p.batch == 1
    # 768 GB/s x 0.88 over ~28 GB a step, x 1.29 tokens a step (the measured acceptance), with the all-reduces,
    # the drafting and vLLM's 0.85 ms a drafted token x 15
    assert p.expected_per_request_tok_s is not None and 18 < p.expected_per_request_tok_s < 25
    assert p.measured_per_request_tok_s == pytest.approx(18.2, abs=0.3)
    # the run is near its own bound as deployed; speculation as deployed is slower than plain decode by the model
    assert p.ratio_as_deployed is not None and 0.7 < p.ratio_as_deployed < 0.95
    assert p.expected_no_spec_tok_s is not None and p.expected_per_request_tok_s < p.expected_no_spec_tok_s
    # the headline is the best of this deployment's own choices (as deployed, no speculation, another k for this
    # drafter): never DFlash's acceptance published for another drafter on another GPU
    assert p.typical_acceptance == 6.3 and p.expected_typical_spec_tok_s is not None
    assert p.expected_hardware_tok_s is not None and p.expected_hardware_tok_s < p.expected_typical_spec_tok_s
    assert p.best_k == 2 and p.expected_hardware_tok_s > p.expected_no_spec_tok_s
    assert p.measured_per_request_tok_s is not None
    assert p.ratio == pytest.approx(p.measured_per_request_tok_s / p.expected_hardware_tok_s, rel=1e-2)
    assert re.fullmatch(
        r"18\.\d tok/s per request, expected <= \d+ on 2x RTX A6000 \(\d+%, at k=2 for this drafter; as deployed "
        r"<= \d+, \d+%\)",
        p.summary,
    )
    assert p.summary in story.verdict.summary
    assert p.working and any("memory time per step" in w for w in p.working)
    # every line of the working says what it computes: the weights a step reads are not called unread
    assert not any("does not read" in w for w in p.working)
    # the weights a step reads come from the model's parameter counts (models: entry), not the loaded figure, which
    # holds the vision tower and the drafter that a text decode step does not read
    assert any("25.62e9 read parameters" in d and "of 29.43 GB loaded" in d for d in p.derived)
    reads = next(w for w in p.working if w.startswith("weights a decode step reads per GPU"))
    assert "25.62 GB" in reads and not any(w.startswith("weights loaded per GPU") for w in p.working)
    assert not any(x.startswith("multimodal architecture") for x in p.derived)


def test_mtp_story_bound_counts_each_draft_pass_and_the_text_model_only(rules: list[LoadedRule]) -> None:
    # SGLang's MTP: 3 draft passes a step (2 in the draft, 1 extending after verification), each reading the MTP
    # layer and the shared LM head (1.27 GB per GPU at TP=2); the target reads the text model's 25.62e9 parameters,
    # not the 28.8 GB loaded with the vision tower
    d = _diagnose(SGLANG_STORY, rules, "RTX A6000")
    p = d.performance
    assert p is not None and p.expected_per_request_tok_s is not None
    assert any("25.62e9 read parameters" in x for x in p.derived)
    assert 62 < p.expected_per_request_tok_s < 66
    draft = next(w for w in p.working if w.startswith("drafting time per step"))
    assert re.search(r"^drafting time per step: 7\.\d+ ms", draft)


def test_story_gap_is_the_product_of_the_problems_effects(story: Diagnosis) -> None:
    p = story.performance
    assert p is not None and p.explained is not None and p.gap is not None
    # one share a problem: speculation (its recommended action) and the TP link (custom all-reduce and P2P)
    assert {s.problem for s in p.shares} == {"speculation", "tp-link"}
    assert p.explained == pytest.approx(math.prod(s.speedup for s in p.shares), rel=1e-3)
    assert p.gap == pytest.approx(p.explained / (p.ratio_as_deployed or 1), rel=1e-2)
    # each share is the effect its problem carries: the same number in the box, the finding and the JSON
    by_id = {pr.id: pr for pr in story.problems}
    for share in p.shares:
        effect = by_id[share.problem].effect
        assert effect is not None and effect.speedup == share.speedup


def test_story_problems_group_the_rules(story: Diagnosis) -> None:
    ids = [pr.id for pr in story.problems]
    assert ids[0] == "speculation" and "tp-link" in ids and len(ids) == len(set(ids))
    spec, link = story.problems[0], next(pr for pr in story.problems if pr.id == "tp-link")
    assert {"below-break-even", "low-acceptance"} <= set(spec.rules)  # and vLLM 0.20.1's known DFlash issue
    assert set(link.rules) == {"custom-allreduce-off", "tp-over-pcie"}
    assert all(f.problem for f in story.findings)  # every rule's finding is kept, naming its problem
    assert "1 likely problem(s); top: speculation" in story.verdict.summary


def test_story_one_recommended_action_with_alternatives(story: Diagnosis) -> None:
    """The model's own MTP head (the architecture line says Qwen3_5ForConditionalGeneration ships one) at the
    published MTP acceptance first, then k=2 for this drafter, then no speculation: each with its expected tok/s
    on 2x RTX A6000, none slower than as deployed, none the value already set."""
    spec = story.problems[0]
    assert spec.effect is not None and spec.actions
    first = spec.actions[0]
    # Qwen's own MTP head at a Qwen figure, never DeepSeek's
    assert '"method": "mtp"' in first.text and first.source and "club-3090/issues/105" in first.source
    assert "sglang/pull/3582" not in first.source
    assert "Qwen3_5ForConditionalGeneration" in first.note and "Qwen3.x MTP heads" in first.note
    modelled = [a for a in spec.actions if a.expected_tok_s is not None]
    assert [a.expected_tok_s for a in modelled] == sorted((a.expected_tok_s or 0 for a in modelled), reverse=True)
    assert all((a.speedup or 0) > 1 for a in modelled)
    assert spec.effect.speedup == pytest.approx(first.speedup or 0, rel=1e-3)
    texts = [a.text for a in spec.actions]
    assert any('"dflash", "num_speculative_tokens": 2}' in t for t in texts)
    assert "drop --speculative-config" in texts
    assert not any('"num_speculative_tokens": 15}' in t for t in texts)  # never the k already set
    # a loss reads as a loss
    assert "speculation as deployed runs at 0." in spec.effect.statement


def test_firm_effect_replaces_the_score_and_uncertain_one_only_raises(
    story: Diagnosis, rules: list[LoadedRule]
) -> None:
    found = _by_rule(story)
    allreduce = found["custom-allreduce-off"]
    assert allreduce.effect is not None and allreduce.effect.firm and allreduce.effect.kind == "custom-allreduce"
    # two GPUs without P2P: 128 all-reduces x (11.3 - 4.0) us on a ~45 ms step is about 2%
    assert allreduce.effect.speedup == pytest.approx(1.022, abs=0.01)
    assert allreduce.effect.rule_score == 60 and allreduce.score == effect_score(allreduce.effect.speedup) < 50
    spec = found["below-break-even"]
    assert spec.effect is not None and not spec.effect.firm  # the drafter's cost and the MTP acceptance are assumed
    assert spec.score == max(spec.effect.rule_score, effect_score(spec.effect.speedup))
    assert [f.rule for f in story.findings[:2]] == ["low-acceptance", "below-break-even"]  # the root first
    assert [f.score for f in story.findings] == sorted((f.score for f in story.findings), reverse=True)
    # no finding is dropped by the model
    plain = diagnose_parsed(_parsed(STORY), rules)[0]
    assert {f.rule for f in plain.findings} == set(found)


def test_unknown_gpu_says_so_and_keeps_every_score(rules: list[LoadedRule]) -> None:
    d = _diagnose(STORY, rules, None)
    p = d.performance
    assert p is not None and not p.known
    gpu = next(u for u in p.unknown if u.what == "GPU")
    assert "--gpu NAME" in gpu.how and "logdoctor gpus" in gpu.how and "2 GPU(s)" in gpu.how
    parsed = _parsed(STORY)
    findings, _, _ = evaluate(rules, profile_of(parsed), parsed.lookup)
    ranked = {f.rule: f.score for f in d.findings if f.kind == "rule"}  # known issues of the release aside
    # every rule's own score, but the speculation problem's root, which takes its consequence's (root_first)
    assert ranked == {f.rule: f.score for f in findings} | {"low-acceptance": ranked["below-break-even"]}
    assert all(f.effect is None for f in d.findings)
    assert "expected <=" not in d.verdict.summary
    # no figure the model would contradict once the GPU is given: the speculation effect is said as unknown, and
    # the choices carry no hardware-free speedup
    spec = [f for f in d.findings if f.rule in ("below-break-even", "low-acceptance")]
    assert spec and all(f.estimate == SPEC_UNKNOWN for f in spec)
    assert not any("plain decode (" in (f.estimate or "") for f in d.findings)
    fixes = [step for f in spec for step in f.fix]
    assert not any("per-position acceptance gives" in step for step in fixes)
    assert any(step.startswith("drop --speculative-config, or fewer speculative tokens") for step in fixes)


def test_story_tp_link_has_a_modelled_action(story: Diagnosis) -> None:
    """Custom all-reduce off for want of P2P on two GPUs: enabling P2P, with its expected tok/s, is the problem's
    recommended action, and the rule's line saying the same is not repeated beside it."""
    link = next(pr for pr in story.problems if pr.id == "tp-link")
    assert link.effect is not None and link.actions
    first = link.actions[0]
    assert first.text == ENABLE_P2P and first.expected_tok_s is not None
    assert first.speedup is not None and first.speedup > 1
    assert first.speedup == pytest.approx(link.effect.speedup, rel=1e-3)
    assert not any(a.text.startswith("enable PCIe P2P") for a in link.actions)
    # replicas in place of TP=2 need one RTX A6000 (48 GB) to hold 2 x 25.6 GB of weights: not offered
    assert not any("--data-parallel-size 2 instead of" in a.text for a in link.actions)
    # its effect is on plain decode steps, and says so beside a speculative deployment's figures
    assert "plain decode steps" in link.effect.statement


def test_story_link_finding_names_the_gpu_given(story: Diagnosis) -> None:
    # the rule reads gpu.name, which the log lacks; --gpu named it, so the finding does not say it is unknown
    link = _by_rule(story)["tp-over-pcie"]
    assert "GPU RTX A6000 (--gpu)" in link.explanation and "GPU unknown" not in link.explanation


def test_story_effect_says_the_break_even_on_this_hardware(story: Diagnosis) -> None:
    spec = story.problems[0]
    assert spec.effect is not None
    m = re.search(r"a step with k=15 costs ([0-9.]+) plain decode steps here", spec.effect.statement)
    assert m and 1.0 < float(m.group(1)) < 2.0
    # the model's break-even replaces the rules' assumed one (0.2 plain steps a drafted token) in the finding's own
    # text, which every renderer prints: one number, never two
    cost = m.group(1)
    finding = _by_rule(story)["below-break-even"]
    assert f"break-even is about {cost} on 2x RTX A6000" in finding.explanation
    assert "4.0" not in finding.explanation and "assumes 0.2" not in spec.effect.statement
    # --explain's score line says the rules' figure it scored against as the rules', beside the model's
    assert f"the rules' 0.2 plain steps a drafted token; {cost} on 2x RTX A6000 by the model" in finding.working
    assert (
        f"break-even is about {cost}" in story.verdict.summary or "break-even is about 4" not in story.verdict.summary
    )


def test_mtp_acceptance_is_the_model_familys() -> None:
    qwen, family = mtp_acceptance(_Facts({"model.architecture": "Qwen3NextForCausalLM"}))
    assert qwen is QWEN_MTP and "Qwen" in family and "club-3090" in qwen.source
    deepseek, family = mtp_acceptance(_Facts({"model.architecture": "DeepseekV3ForCausalLM", "model.mtp_layers": 1}))
    assert deepseek is DEEPSEEK_MTP and "sglang/pull/3582" in deepseek.source
    other, family = mtp_acceptance(_Facts({"model.architecture": "MiMoForCausalLM"}))
    assert other is DEEPSEEK_MTP and "no published figure for MiMoForCausalLM" in family
    assert mtp_head(_Facts({"model": "Qwen3.6-27B"})) is None  # never from the name


def test_healthy_real_run_lands_in_the_band(rules: list[LoadedRule]) -> None:
    d = _diagnose(HEALTHY_A100, rules, "A100 SXM 80GB")
    p = d.performance
    assert p is not None and p.known and p.band == "healthy"
    assert p.ratio is not None and 0.5 <= p.ratio <= 0.9
    assert d.verdict.kind == "healthy" and "expected <=" in d.verdict.summary


def test_above_the_bound_is_reported_not_hidden(rules: list[LoadedRule]) -> None:
    # the SGLang MTP story measures 73.5 tok/s, above what the model allows (docs/expected-performance.md)
    d = _diagnose(SGLANG_STORY, rules, "RTX A6000")
    assert d.performance is not None and d.performance.band == "above-bound"
    assert d.performance.ratio is not None and d.performance.ratio > 1


class _Facts:
    def __init__(self, facts: dict[str, Any]) -> None:
        self.facts = facts

    def value(self, name: str) -> Any:
        return self.facts.get(name)

    def has(self, name: str) -> bool:
        return name in self.facts


def test_gpu_name_from_any_gpu_name_fact() -> None:
    assert gpu_from_facts(_Facts({"gpu.name": "NVIDIA H100 80GB HBM3"})) == ("NVIDIA H100 80GB HBM3", "gpu.name")
    facts = _Facts({"env.collect.gpu_name": ["", "NVIDIA RTX A6000"]})
    assert gpu_from_facts(facts, list(facts.facts)) == ("NVIDIA RTX A6000", "env.collect.gpu_name")
    assert gpu_from_facts(_Facts({"model": "x"}), ["model"]) is None


def test_gpu_from_host_facts_runs_the_model(rules: list[LoadedRule]) -> None:
    facts = _Facts(
        {
            "host.gpu_name": "NVIDIA RTX A6000",
            "model.weights_gib": 13.5,
            "throughput.per_request": [40.0, 41.0, 39.0],
            "throughput.generation": [40.0, 41.0, 39.0],
            "sched.running": [1.0, 1.0, 1.0],
        }
    )
    _, p = assess([], facts, rules, PerfOptions())
    assert p.known and p.gpu == "RTX A6000"
    assert any("(host.gpu_name)" in d for d in p.derived)
    # 768 GB/s x 0.88 / 14.5 GB
    assert p.expected_per_request_tok_s == pytest.approx(768e9 * 0.88 / (13.5 * 2**30), rel=1e-3)


def _finding(rule: str, score: int) -> Finding:
    return Finding(
        cause="engine-failure", rule=rule, title=rule, score=score, severity="medium", explanation="", working=""
    )


def test_effect_score_scale() -> None:
    assert effect_score(1.0) == 1
    assert effect_score(1 / 0.9) == 50  # a tenth of decode time recovered
    assert effect_score(1.022) < 20 < effect_score(1.05) < 50 < effect_score(1.43) < effect_score(4.0) <= 100


def test_rank_interleaves_by_score_and_drops_nothing() -> None:
    findings = [_finding("a", 10), _finding("b", 60), _finding("c", 30)]
    assert [f.rule for f in rank(findings)] == ["b", "c", "a"]


def test_bad_gpu_and_bad_hardware_file_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"--gpu: unknown GPU: RTX Z9 \(nearest known: .*`logdoctor gpus`"):
        perf_options("RTX Z9")
    bad = tmp_path / "hw.yaml"
    bad.write_text("models:\n  Foo-7B:\n    layerz: 3\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"hw.yaml:3: models.Foo-7B.layerz: Extra inputs"):
        perf_options(None, [bad])


def test_user_models_entry_gives_the_shape(tmp_path: Path, rules: list[LoadedRule]) -> None:
    hw = tmp_path / "hw.yaml"
    hw.write_text(
        "models:\n  Qwen3.6-27B:\n    layers: 8\n    hidden_size: 5120\n    source: my config.json\n", encoding="utf-8"
    )
    options = perf_options("RTX A6000", [hw])
    d = diagnose_parsed(_parsed(STORY), rules, perf=options)[0]
    assert d.performance is not None
    assert any("(8 layers, h=5120)" in line for line in d.performance.derived)


def test_kv_bound_effect_is_aggregate_and_only_raises(rules: list[LoadedRule]) -> None:
    # a real healthy run on an L4 with a queue while the KV cache was full (label: healthy)
    d = _diagnose(ROOT / "fixtures" / "logs" / "realworld" / "vllm-rh04.log", rules, "L4")
    kv = _by_rule(d)["kv-saturated"]
    assert kv.effect is not None and kv.effect.kind == "kv-concurrency" and kv.effect.basis == "aggregate"
    assert not kv.effect.firm and kv.score == max(kv.effect.rule_score, effect_score(kv.effect.speedup))
    assert 1.0 < kv.effect.speedup < 1.5
    assert d.performance is not None and d.performance.basis == "aggregate" and d.performance.band == "healthy"
    assert d.verdict.kind == "healthy"


CONSTRUCTED = ROOT / "fixtures" / "logs" / "constructed"


def test_kv_pressure_action_from_the_logs_memory_numbers(rules: list[LoadedRule]) -> None:
    # SGLang at --mem-fraction-static 0.7 with requests queued behind a full pool: the fraction the log's numbers
    # allow, the tokens it adds and the aggregate tok/s at the batch they hold, in place of the rule's fixed 0.9
    d = _diagnose(CONSTRUCTED / "preemptions-sglang054-retract.log", rules, "H100 SXM")
    kv = next(pr for pr in d.problems if pr.id == "kv-cache-pressure")
    first = kv.actions[0]
    assert first.text == "--mem-fraction-static 0.95 (now 0.7)" and first.basis == "aggregate"
    assert first.expected_tok_s is not None and first.speedup is not None and first.speedup > 1
    assert kv.effect is not None and first.speedup == pytest.approx(kv.effect.speedup, rel=1e-3)
    assert "193,024 -> " in first.note
    assert "--mem-fraction-static 0.9" not in [a.text for a in kv.actions]


def test_cpu_offload_action_where_the_gpu_holds_the_weights(rules: list[LoadedRule]) -> None:
    d = _diagnose(CONSTRUCTED / "cpu-offload-vllm033-uva-12gib.log", rules, "H100 SXM")
    offload = next(pr for pr in d.problems if pr.id == "cpu-offload-or-swap")
    first = offload.actions[0]
    assert first.text == "drop --cpu-offload-gb 12" and first.expected_tok_s is not None
    assert "read over PCIe every step" in first.note
    assert [a.text for a in offload.actions].count("drop --cpu-offload-gb") == 0
    # on a GPU that cannot hold the whole model no action is modelled: the rule's more GPUs stand
    small = _diagnose(CONSTRUCTED / "cpu-offload-vllm033-uva-12gib.log", rules, "L4")
    pr = next(p for p in small.problems if p.id == "cpu-offload-or-swap")
    assert not any(a.text.startswith("drop --cpu-offload-gb 12") for a in pr.actions)


def test_kv_pressure_effect_unknown_says_what_the_log_lacks(rules: list[LoadedRule]) -> None:
    # the log prints the KV cache's GiB but not its size in tokens: no concurrency to compute, said so
    d = _diagnose(CONSTRUCTED / "kv-cache-pressure-vllm033-auto-fit.log", rules, "H100 SXM")
    kv = next(f for f in d.findings if f.cause == "kv-cache-pressure")
    assert kv.effect is None and kv.estimate is not None
    assert "unknown by the model on H100 SXM: the log gives no KV cache size in tokens" in kv.estimate
