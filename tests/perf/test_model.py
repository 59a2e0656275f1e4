"""The roofline model on worked numbers: each formula checked against a hand computation."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from logdoctor.perf.hardware import HardwareTable, load_hardware
from logdoctor.perf.model import (
    GIB,
    Deployment,
    ModelError,
    SpecConfig,
    allreduce_latency_us,
    expected,
    iid_positions,
    step_time,
    tokens_per_step,
)


@pytest.fixture(scope="module")
def table() -> HardwareTable:
    return load_hardware()


def _gpu(table: HardwareTable, name: str):  # type: ignore[no-untyped-def]
    gpu = table.lookup(name).gpu
    assert gpu is not None
    return gpu


def test_worked_example_half_of_27_gb_on_an_a6000(table: HardwareTable, tmp_path: Path) -> None:
    # The brief's example: ~27 GB of weights split over TP=2 -> 13.5 GB a GPU at 768 GB/s.
    dep = Deployment(gpu=_gpu(table, "RTX A6000"), tp=2, weights_bytes_per_gpu=13.5e9)
    at_f = expected(dep, table).per_request_tok_s
    assert at_f == pytest.approx(768e9 * 0.88 / 13.5e9, rel=1e-3)  # 50.1 tok/s
    full = tmp_path / "f1.yaml"
    full.write_text("constants:\n  bandwidth_fraction: {value: 1.0, source: peak}\n", encoding="utf-8")
    at_peak = expected(dep, load_hardware([full])).per_request_tok_s
    assert at_peak == pytest.approx(56.9, abs=0.1)
    assert 50 <= at_f < at_peak <= 57


def test_story_weights_as_logged_bound_the_story_at_about_22_tok_s(table: HardwareTable) -> None:
    # The story log's own number: `Model loading took 27.41 GiB` on each of the two workers (Qwen3.6-27B bf16 is
    # ~54 GB in all), so a GPU reads 29.4 GB a step: 768 GB/s x 0.88 / 29.4 GB = 23.0 tok/s before all-reduce.
    dep = Deployment(gpu=_gpu(table, "RTX A6000"), tp=2, weights_bytes_per_gpu=27.41 * GIB)
    assert expected(dep, table).per_request_tok_s == pytest.approx(22.96, abs=0.05)
    with_ar = replace(dep, layers=64, link="p2p-off", custom_allreduce=False)
    e = expected(with_ar, table, measured_per_request=18.1)
    # 2 x 64 all-reduces at 11.3 us through host memory = 1.45 ms on a 43.5 ms step
    assert e.step_seconds == pytest.approx(27.41 * GIB / (768e9 * 0.88) + 128 * 11.3e-6, rel=1e-6)
    assert e.ratio is not None
    assert e.ratio == pytest.approx(18.1 / e.per_request_tok_s)
    assert 0.75 < e.ratio < 0.85
    assert any("TP all-reduce" in s.what for s in e.working)


def test_kv_read_counts_per_sequence(table: HardwareTable) -> None:
    # Llama-3-8B: 131 kB of KV a token; at B=16 and 8k context the KV read (17 GB) exceeds the weights (16 GB).
    gpu = _gpu(table, "H100 SXM")
    base = Deployment(gpu=gpu, weights_bytes_per_gpu=16.06e9, batch=16)
    kv = replace(base, kv_bytes_per_token_per_gpu=131072, context_tokens=8192)
    t0 = step_time(base, table).memory
    t1 = step_time(kv, table).memory
    assert t1 - t0 == pytest.approx(16 * 8192 * 131072 / (3350e9 * 0.88), rel=1e-6)
    assert t1 > 2 * t0
    assert "KV cache read" in expected(base, table).unknown[0]


def test_compute_bound_beyond_the_knee(table: HardwareTable) -> None:
    gpu = _gpu(table, "H100 SXM")
    dep = Deployment(gpu=gpu, weights_bytes_per_gpu=16e9)
    assert step_time(dep, table).bound == "memory"
    # knee: B* = peak / (BW * f) * bytes-per-weight / 2 ... = 989e12 / (3350e9 * 0.88) = 335 tokens for bf16
    assert step_time(replace(dep, batch=256), table).bound == "memory"
    big = step_time(replace(dep, batch=512), table)
    assert big.bound == "compute"
    assert big.total == pytest.approx(2 * 8e9 * 512 / 989e12, rel=1e-6)
    # fp8 weights: half the bytes and twice the peak move the knee nowhere, but halve the time
    fp8 = step_time(replace(dep, weights_bytes_per_gpu=8e9, dtype_bytes=1.0, batch=512), table)
    assert fp8.total == pytest.approx(big.total / 2, rel=1e-3)  # 1979 vs 2 x 989 TFLOP/s


def test_allreduce_latency_by_link(table: HardwareTable) -> None:
    a6000 = _gpu(table, "RTX A6000")
    dep = Deployment(gpu=a6000, tp=2, weights_bytes_per_gpu=1e9, layers=10)
    assert allreduce_latency_us(dep, table, link="pcie", custom=True)[0] == 4.0
    assert allreduce_latency_us(dep, table, link="nvlink", custom=True)[0] == 3.7
    assert allreduce_latency_us(dep, table, link="p2p-off", custom=False)[0] == 11.3
    eight = replace(dep, tp=8)
    assert allreduce_latency_us(eight, table, link="p2p-off", custom=False)[0] == 40.0
    assert allreduce_latency_us(replace(dep, tp=4), table, link="pcie", custom=False)[0] == 19.4
    # P2P is never slower than the host path at the same rank count
    for n in (2, 4, 8):
        d = replace(dep, tp=n)
        p2p = allreduce_latency_us(d, table, link="pcie", custom=False)[0]
        host = allreduce_latency_us(d, table, link="p2p-off", custom=False)[0]
        assert p2p < host
    t = step_time(replace(dep, link="pcie", custom_allreduce=False), table).comm
    assert t == pytest.approx(2 * 10 * allreduce_latency_us(dep, table, link="pcie", custom=False)[0] * 1e-6)


def test_allreduce_bandwidth_term(table: HardwareTable) -> None:
    h100 = _gpu(table, "H100 SXM")
    dep = Deployment(gpu=h100, tp=8, weights_bytes_per_gpu=1e9, layers=80, hidden_size=8192, link="nvlink", batch=256)
    comm = step_time(dep, table).comm
    latency_only = 2 * 80 * 3.7e-6
    bw = 2 * 80 * (2 * 7 / 8) * 256 * 8192 * 2 / (450e9)
    assert comm == pytest.approx(latency_only + bw, rel=1e-6)


def test_pipeline_and_moe(table: HardwareTable) -> None:
    gpu = _gpu(table, "A100 SXM 80GB")
    dep = Deployment(gpu=gpu, weights_bytes_per_gpu=10e9)
    one = step_time(dep, table).total
    assert step_time(replace(dep, pp=2), table).total == pytest.approx(2 * one)
    moe = step_time(replace(dep, active_fraction=0.1), table).total
    assert moe == pytest.approx(one / 10)


def test_params_when_the_log_has_no_weight_size(table: HardwareTable) -> None:
    gpu = _gpu(table, "L40S")
    dep = Deployment(gpu=gpu, params=8e9, dtype_bytes=2, tp=2)
    e = expected(dep, table)
    assert e.per_request_tok_s == pytest.approx(864e9 * 0.88 / 8e9, rel=1e-6)
    with pytest.raises(ModelError):
        expected(Deployment(gpu=gpu), table)


def test_eager_bound_is_the_longer_of_gpu_and_launch_time(table: HardwareTable) -> None:
    """An eager step takes at least its GPU time and at least its launches (the CPU launches while the GPU runs)."""
    gpu = _gpu(table, "H200")
    dep = Deployment(gpu=gpu, weights_bytes_per_gpu=15.01e9, layers=32)
    graph = step_time(dep, table).total
    eager = step_time(replace(dep, cuda_graphs=False), table).total
    assert eager == pytest.approx(max(graph, 32 * 112e-6))
    # a small model is launch-bound eager: 1 GB on an H200 reads in 0.24 ms, 32 layers launch in 3.58 ms
    small = replace(dep, weights_bytes_per_gpu=1e9, cuda_graphs=False)
    assert step_time(small, table).total == pytest.approx(32 * 112e-6)
    assert step_time(small, table).bound == "launch"


def test_tokens_per_step_from_positions() -> None:
    assert tokens_per_step([0.9, 0.5, 0.1], 3) == pytest.approx(2.5)
    assert tokens_per_step([0.9, 0.5, 0.1], 1) == pytest.approx(1.9)
    # i.i.d. alpha=0.8, k=4: (1 - 0.8^5) / (1 - 0.8) = 3.36 (the research table)
    positions = iid_positions(3.3616, 4)
    assert positions[0] == pytest.approx(0.8, abs=1e-3)
    assert tokens_per_step(positions, 4) == pytest.approx(3.3616, abs=1e-6)


def test_speculation_in_the_bound(table: HardwareTable) -> None:
    gpu = _gpu(table, "H100 SXM")
    plain = Deployment(gpu=gpu, weights_bytes_per_gpu=16.06e9)
    spec = replace(plain, spec=SpecConfig(k=2, method="eagle", position_acceptance=(0.8, 0.6), draft_cost_ratio=0.05))
    e0 = expected(plain, table)
    e1 = expected(spec, table)
    assert e1.tokens_per_step == pytest.approx(2.4)
    # verify 3 tokens (still memory-bound) + 2 x 0.05 of a step drafting
    t_verify = step_time(spec, table, 3).total
    # plus the engine's per-step overhead of the 2 drafted tokens (the default: the least measured)
    overhead = 2 * spec.spec.overhead_s_per_token if spec.spec else 0.0
    assert e1.step_seconds == pytest.approx(t_verify + 2 * 0.05 * e0.step_seconds + overhead)
    assert e1.per_request_tok_s == pytest.approx(2.4 / e1.step_seconds)
    assert "draft cost" not in " ".join(e1.unknown)
    no_ratio = SpecConfig(k=2, method="eagle", position_acceptance=(0.8, 0.6))
    assumed = expected(replace(plain, spec=no_ratio), table)
    assert any("drafter's size" in u for u in assumed.unknown)


def test_render_lists_every_step(table: HardwareTable) -> None:
    dep = Deployment(gpu=_gpu(table, "RTX A6000"), tp=2, weights_bytes_per_gpu=13.5e9, layers=64)
    text = expected(dep, table, measured_per_request=18.0).render()
    assert "measured / expected = 0." in text
    assert "unknown (left out" in text  # the link was not given
    assert "https://" in text
