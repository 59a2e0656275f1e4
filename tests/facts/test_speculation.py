"""The drafter's cost, the one k sweep, and typical acceptance (logdoctor/facts/speculation.py), on worked numbers;
and that the facts (no GPU) and the roofline (a GPU) run the same sweep."""

from __future__ import annotations

from dataclasses import replace

import pytest

from logdoctor.facts import speculation
from logdoctor.facts.combiners.derived import step_cost
from logdoctor.perf import effects
from logdoctor.perf.hardware import HardwareTable, load_hardware
from logdoctor.perf.model import Deployment, SpecConfig, draft_cost, expected, step_time

STORY_RATES = (0.21, 0.05, 0.02, 0.01, 0.004) + (0.0,) * 10  # the story's per-position acceptance, k=15


@pytest.fixture(scope="module")
def table() -> HardwareTable:
    return load_hardware()


def test_drafter_cost_from_layers_and_lm_head() -> None:
    # 64 target layers, 26 GB a target step reads with a 1.27 GB LM head: an MTP pass is one layer plus the head
    c = speculation.drafter_cost(
        "mtp", target_read_bytes=26e9, target_layers=64, lm_head_bytes=1.27e9, drafter_in_load=False
    )
    w_layer = (26e9 - 1.27e9) / 64
    assert c.ratio == pytest.approx((w_layer + 1.27e9) / 26e9)
    assert not c.assumed  # MTP is one layer by construction
    dflash = speculation.drafter_cost(
        "dflash", target_read_bytes=26e9, target_layers=64, lm_head_bytes=1.27e9, drafter_in_load=False
    )
    assert dflash.ratio == pytest.approx((5 * w_layer + 1.27e9) / 26e9)
    assert dflash.assumed  # 5 layers is z-lab's convention, not this drafter's config
    own = speculation.drafter_cost(
        "dflash",
        target_read_bytes=26e9,
        target_layers=64,
        lm_head_bytes=1.27e9,
        drafter_layers=2,
        drafter_in_load=False,
    )
    assert own.ratio < dflash.ratio and not own.assumed


def test_drafter_counted_in_the_load_is_taken_out_of_the_layer_size() -> None:
    inside = speculation.drafter_cost("mtp", target_read_bytes=26e9, target_layers=64, drafter_in_load=True)
    assert inside.ratio == pytest.approx(26e9 / 65 / 26e9)


def test_drafter_cost_falls_back_to_the_assumed_default() -> None:
    c = speculation.drafter_cost("eagle3", target_read_bytes=16e9, target_layers=None)
    assert c.assumed and c.ratio == speculation.DEFAULT_DRAFT_COST["eagle3"]
    assert speculation.drafter_cost("ngram", target_read_bytes=16e9, target_layers=32).ratio == 0.0
    assert speculation.default_draft_cost("my-method") == speculation.UNKNOWN_DRAFT_COST


def test_passes_by_kind() -> None:
    assert speculation.passes("sequential", 4) == 4
    assert speculation.passes("block", 15) == 1
    assert speculation.passes("lookup", 4) == 0
    assert speculation.passes("sequential", 0) == 0


def test_sweep_and_best_k() -> None:
    # sequential, c = 0.1 a token, memory-bound: S(k) = tau(k) / (1 + 0.1 k)
    points = speculation.sweep((0.8, 0.6, 0.3, 0.1), speculation.hardware_free_cost("sequential", 0.1, 1))
    assert [p.k for p in points] == [0, 1, 2, 3, 4]
    assert points[2].speedup == pytest.approx(2.4 / 1.2)
    assert speculation.best(points).k == 3  # 2.7/1.3 = 2.08 beats 2.4/1.2 = 2.0 and 2.8/1.4 = 2.0
    # a block drafter's cost does not grow with k: more k pays while any rate is above 0; ties keep the smaller k
    block = speculation.sweep(STORY_RATES, speculation.hardware_free_cost("block", 0.05, 1))
    assert speculation.best(block).k == 5


def test_large_batch_makes_no_speculation_best() -> None:
    # n-gram at 600 running requests and k=4: verification is compute-bound, rejected drafts cost FLOPs
    points = speculation.sweep((0.5, 0.3, 0.2, 0.1), speculation.hardware_free_cost("lookup", 0.0, 600))
    assert speculation.best(points).k == 0


def test_facts_and_roofline_run_the_same_sweep(table: HardwareTable) -> None:
    """With the drafter's cost and a memory-bound verification the same, the facts' step cost and the roofline's
    agree on the best k: both call speculation.sweep."""
    gpu = table.require("H100 SXM")
    dep = Deployment(
        gpu=gpu,
        weights_bytes_per_gpu=16e9,
        spec=SpecConfig(k=4, method="mtp", position_acceptance=(0.8, 0.6, 0.3, 0.1), draft_cost_ratio=0.05),
    )
    plan = effects.spec_best_k(dep, table, overhead=False)
    facts_points = speculation.sweep((0.8, 0.6, 0.3, 0.1), lambda k: step_cost(k, 1, "mtp"))
    assert plan.best.k == speculation.best(facts_points).k
    for roof, fact in zip(plan.choices, facts_points, strict=True):
        # the roofline's verification of k+1 tokens is ~free at batch 1 (memory-bound): within a few percent
        assert roof.speedup_vs_no_spec == pytest.approx(fact.speedup, rel=0.03)
    # and with the per-step overhead: the facts' share of a plain step a drafted token (0.2 with the MTP pass's
    # 0.05 in it) is the roofline's time when that time is the same share of this deployment's plain step
    per_token = speculation.overhead_plain_steps("sequential", 0.05)
    assert per_token == pytest.approx(0.15)
    plain = effects.spec_best_k(dep, table, overhead=False).choices[0].step_seconds
    assert dep.spec is not None
    timed = replace(dep, spec=replace(dep.spec, overhead_s_per_token=per_token * plain))
    with_o = effects.spec_best_k(timed, table)
    facts_o = speculation.sweep(
        (0.8, 0.6, 0.3, 0.1), speculation.with_overhead(lambda k: step_cost(k, 1, "mtp"), per_token)
    )
    assert with_o.best.k == speculation.best(facts_o).k
    for roof, fact in zip(with_o.choices, facts_o, strict=True):
        assert roof.speedup_vs_no_spec == pytest.approx(fact.speedup, rel=0.03)


def test_block_drafter_time_in_the_roofline(table: HardwareTable) -> None:
    gpu = table.require("RTX A6000")
    dep = Deployment(
        gpu=gpu,
        tp=2,
        weights_bytes_per_gpu=26e9,
        layers=64,
        hidden_size=5120,
        lm_head_bytes_per_gpu=1.27e9,
        link="pcie",
        spec=SpecConfig(k=15, method="dflash", position_acceptance=STORY_RATES),
    )
    c = draft_cost(dep)
    assert c.assumed and c.ratio == pytest.approx((5 * (26e9 - 1.27e9) / 64 + 1.27e9) / 26e9)
    e = expected(dep, table)
    verify = step_time(dep, table, 16).total
    # the verify step, the drafter's bytes, and the engine's overhead for each drafted token
    assert dep.spec is not None
    overhead = dep.spec.overhead_s_per_token * dep.spec.k
    assert overhead > 0
    assert e.step_seconds == pytest.approx(verify * (1 + c.ratio) + overhead)
    assert any("drafter's size" in u for u in e.unknown)


def test_typical_acceptance_is_cited() -> None:
    for t in speculation.TYPICAL_ACCEPTANCE.values():
        assert t.tau > 1 and t.k >= 1 and "https://" in t.source
    rates = speculation.iid_positions(6.3, 15)
    assert speculation.tokens_per_step(rates, 15) == pytest.approx(6.3, rel=1e-6)


def test_fixed_k_keeps_the_drafter(table: HardwareTable) -> None:
    gpu = table.require("RTX A6000")
    spec = SpecConfig(k=3, method="mtp", position_acceptance=(0.8, 0.6, 0.4))
    dep = Deployment(gpu=gpu, weights_bytes_per_gpu=26e9, layers=64, lm_head_bytes_per_gpu=1.27e9, spec=spec)
    slower = replace(dep, spec=replace(spec, drafter_layers=8))
    assert expected(slower, table).per_request_tok_s < expected(dep, table).per_request_tok_s
