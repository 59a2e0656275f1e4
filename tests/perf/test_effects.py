"""Effects of fixing a cause, computed from the model: each on worked numbers."""

from __future__ import annotations

from dataclasses import replace

import pytest

from logdoctor.perf.effects import (
    cuda_graphs,
    cuda_graphs_by_batch,
    custom_allreduce,
    kv_bound_speedup,
    kv_concurrency,
    p2p_off,
    spec_best_k,
    speedup_if_fixed,
)
from logdoctor.perf.hardware import HardwareTable, load_hardware
from logdoctor.perf.model import Deployment, SpecConfig


@pytest.fixture(scope="module")
def table() -> HardwareTable:
    return load_hardware()


def _dep(table: HardwareTable, gpu: str, **kw: object) -> Deployment:
    spec = table.lookup(gpu).gpu
    assert spec is not None
    return Deployment(gpu=spec, **kw)  # type: ignore[arg-type]


def test_custom_allreduce_on_four_pcie_gpus(table: HardwareTable) -> None:
    dep = _dep(table, "RTX 4090", tp=4, weights_bytes_per_gpu=4e9, layers=32, link="pcie", custom_allreduce=False)
    e = custom_allreduce(dep, table)
    t_mem = 4e9 / (1008e9 * 0.88)
    now = t_mem + 64 * 19.4e-6
    fixed = t_mem + 64 * 4.0e-6
    assert e.speedup == pytest.approx(now / fixed, rel=1e-6)
    assert e.tok_s_recovered == pytest.approx(1 / fixed - 1 / now, rel=1e-6)
    assert any(s.what.startswith("as deployed: ") for s in e.working)
    assert any(s.what.startswith("fixed: ") for s in e.working)


def test_custom_allreduce_costs_less_on_nvlink_than_on_pcie(table: HardwareTable) -> None:
    # the same cause costs little on H100 NVLink and much more on consumer GPUs over PCIe.
    common = {"tp": 4, "weights_bytes_per_gpu": 4e9, "layers": 32, "custom_allreduce": False}
    nvlink = custom_allreduce(_dep(table, "H100 SXM", link="nvlink", **common), table).speedup
    pcie = custom_allreduce(_dep(table, "RTX 4090", link="pcie", **common), table).speedup
    assert 1.0 < nvlink < pcie


def test_p2p_off_to_p2p(table: HardwareTable) -> None:
    dep = _dep(
        table, "RTX A6000", tp=2, weights_bytes_per_gpu=29.4e9, layers=64, link="p2p-off", custom_allreduce=False
    )
    e = p2p_off(dep, table)
    t_mem = 29.4e9 / (768e9 * 0.88)
    assert e.speedup == pytest.approx((t_mem + 128 * 11.3e-6) / (t_mem + 128 * 4.0e-6), rel=1e-6)
    four = p2p_off(replace(dep, tp=4, weights_bytes_per_gpu=14.7e9), table)
    assert "NCCL over P2P" in four.note  # the engines keep custom all-reduce off above two PCIe GPUs
    assert speedup_if_fixed("nccl-no-p2p", dep, table) == e


def test_cuda_graphs_effect_shrinks_with_batch(table: HardwareTable) -> None:
    """A launch-bound eager step (a 3 GB model on an H200: 0.7 ms of reads per token of context, 3.6 ms of
    launches) gains L x 112 us / GPU time from graphs; as the batch's KV reads grow the GPU time overtakes the
    launches and the gain falls to nothing."""
    dep = _dep(
        table, "H200", weights_bytes_per_gpu=3e9, layers=32, kv_bytes_per_token_per_gpu=131072, context_tokens=2048
    )
    at_one = cuda_graphs(dep, table, 1)
    t = 3e9 / (4800e9 * 0.88) + 2048 * 131072 / (4800e9 * 0.88)
    assert at_one.speedup == pytest.approx((32 * 112e-6) / t, rel=1e-6)
    by_batch = cuda_graphs_by_batch(dep, table, [1, 2, 8, 64])
    values = list(by_batch.values())
    assert values == sorted(values, reverse=True) and values[0] > 1.0
    assert values[-1] == pytest.approx(1.0)  # 64 x 2048 tokens of KV: 4.8 ms of reads against 3.6 ms of launches


def test_best_k_from_per_position_acceptance(table: HardwareTable) -> None:
    spec = SpecConfig(
        k=7, method="eagle3", position_acceptance=(0.8, 0.6, 0.45, 0.3, 0.2, 0.1, 0.05), draft_cost_ratio=0.05
    )
    dep = _dep(table, "H100 SXM", weights_bytes_per_gpu=16.06e9, spec=spec)
    plan = spec_best_k(dep, table)
    assert [c.k for c in plan.choices] == list(range(8))
    assert plan.choices[3].tokens_per_step == pytest.approx(1 + 0.8 + 0.6 + 0.45)
    # at batch 1 verification is free and each draft costs 5% of a step: a draft pays while r_i > 0.05 x speed
    assert 3 <= plan.best.k <= 6
    assert plan.current.k == 7
    assert plan.effect.speedup == pytest.approx(plan.best.tok_s_per_request / plan.current.tok_s_per_request)
    assert plan.effect.speedup >= 1.0


def test_best_k_falls_at_large_batch(table: HardwareTable) -> None:
    # n-gram speculation at 600 running requests: verifying 600 x (k+1) tokens is compute-bound,
    # rejected drafts cost FLOPs, and no speculation is best.
    spec = SpecConfig(k=4, method="ngram", position_acceptance=(0.3, 0.1, 0.03, 0.01))
    small = _dep(table, "H100 SXM", weights_bytes_per_gpu=16.06e9, spec=spec, batch=1)
    large = replace(small, batch=600)
    best_small = spec_best_k(small, table).best.k
    best_large = spec_best_k(large, table)
    assert best_small >= 1
    assert best_large.best.k == 0
    assert best_large.current.speedup_vs_no_spec < 1.0  # k=4 there is a net loss
    assert best_large.effect.note == "best is no speculation"


def test_best_k_from_mean_acceptance_only(table: HardwareTable) -> None:
    # A sequential drafter pays for every drafted token: with tau=1.29 at k=15 (alpha ~0.23) only the first
    # one or two drafts earn their 5% of a step.
    spec = SpecConfig(k=15, method="eagle", mean_acceptance_length=1.29)
    dep = _dep(table, "RTX A6000", tp=2, weights_bytes_per_gpu=29.4e9, spec=spec)
    plan = spec_best_k(dep, table)
    assert plan.positions_from.startswith("per-position rates alpha")
    assert plan.choices[15].tokens_per_step == pytest.approx(1.29, abs=1e-6)
    assert 1 <= plan.best.k <= 2
    assert plan.current.speedup_vs_no_spec < 1.0  # k=15 of a sequential drafter at this acceptance loses
    # A block drafter (DFlash) drafts all k in one pass: at batch 1, memory-bound, more k costs no bytes ...
    block_spec = replace(spec, method="dflash")
    block = spec_best_k(replace(dep, spec=block_spec), table, overhead=False)
    speeds = [c.tok_s_per_request for c in block.choices]
    assert speeds == sorted(speeds)
    # ... but each drafted token costs its per-step overhead (vLLM: 0.85 ms), so the best k is not the largest
    with_overhead = spec_best_k(replace(dep, spec=replace(block_spec, overhead_s_per_token=0.85e-3)), table)
    assert with_overhead.best.k < 15
    assert with_overhead.choices[15].speedup_vs_no_spec < block.choices[15].speedup_vs_no_spec
    # the drafter kind can be given instead of read from the method
    forced = spec_best_k(
        replace(dep, spec=replace(spec, method="my-drafter", drafter_kind="block", draft_cost_ratio=0.05)),
        table,
        overhead=False,
    )
    assert [c.tok_s_per_request for c in forced.choices] == pytest.approx(speeds)


def test_spec_without_acceptance_has_no_effect(table: HardwareTable) -> None:
    dep = _dep(table, "H200", weights_bytes_per_gpu=15e9, spec=SpecConfig(k=3, method="mtp"))
    with pytest.raises(ValueError, match="no acceptance"):
        spec_best_k(dep, table)
    assert speedup_if_fixed("spec-net-loss", dep, table) is None
    assert speedup_if_fixed("attention-backend-fallback", dep, table) is None


def test_kv_bound_concurrency() -> None:
    c = kv_concurrency(41472, 954, spec_k=15)
    assert c.max_requests == pytest.approx(41472 / 969)
    assert "KV_tokens / (S + k)" in c.working[0].formula


def test_kv_bound_speedup(table: HardwareTable) -> None:
    dep = _dep(table, "A100 SXM 80GB", weights_bytes_per_gpu=16e9, kv_bytes_per_token_per_gpu=131072)
    e = kv_bound_speedup(dep, table, kv_tokens=100_000, context_tokens=10_000, wanted=40)
    assert e.note == "10 of 40 requests fit"
    assert 1.0 < e.speedup < 4.0  # four times the requests, each step reading more KV


def test_cpu_offload_crosses_pcie_every_step() -> None:
    """vLLM --cpu-offload-gb: the offloaded weights are read over PCIe in every forward pass."""
    from logdoctor.perf.effects import cpu_offload
    from logdoctor.perf.hardware import load_hardware
    from logdoctor.perf.model import Deployment, step_time

    table = load_hardware()
    gpu = table.require("RTX 4090")
    dep = Deployment(gpu=gpu, weights_bytes_per_gpu=16e9, host_bytes_per_gpu=8e9)
    pcie = table.pcie_gb_s(gpu.pcie)
    assert pcie is not None
    on_gpu = 16e9 / (gpu.memory_bandwidth_gb_s * 1e9 * table.constant("bandwidth_fraction").value)
    assert step_time(dep, table).total == pytest.approx(on_gpu + 8e9 / (pcie * 1e9), rel=1e-9)
    eff = cpu_offload(dep, table)
    fixed = 24e9 / (gpu.memory_bandwidth_gb_s * 1e9 * table.constant("bandwidth_fraction").value)
    assert eff.speedup == pytest.approx((on_gpu + 8e9 / (pcie * 1e9)) / fixed, rel=1e-9)
    assert eff.speedup > 5  # 8 GB over ~32 GB/s costs far more than 8 GB over ~1 TB/s
    assert any("over PCIe" in s.what for s in eff.working)
