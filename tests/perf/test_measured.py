"""The expected-performance bound at the clocks and PCIe link nvidia-smi measured on the host."""

from __future__ import annotations

from pathlib import Path

import pytest

from logdoctor.facts import Profile
from logdoctor.perf.adapter import deployment_from_profile
from logdoctor.perf.hardware import load_hardware
from logdoctor.perf.measured import as_measured
from logdoctor.perf.model import expected
from logdoctor.pipeline.run import LineSource, parse_sources, profile_of

ROOT = Path(__file__).resolve().parents[2]
# a vLLM 0.33 server with 12 GiB of weights offloaded to host memory: every step reads them over PCIe
OFFLOAD = ROOT / "fixtures" / "logs" / "constructed" / "cpu-offload-vllm033-uva-12gib.log"
# constructed `nvidia-smi --query-gpu` snapshots of that server's RTX 4090 under load (the H200 capture's columns)
HEADER = (
    "index, name, utilization.gpu [%], clocks.current.sm [MHz], clocks.max.sm [MHz], clocks_event_reasons.active, "
    "pcie.link.gen.current, pcie.link.gen.max, pcie.link.width.current, pcie.link.width.max"
)
FULL = "0, NVIDIA GeForce RTX 4090, 100 %, 2520 MHz, 2520 MHz, 0x0000000000000000, 4, 4, 16, 16"
X4_SLOW = "0, NVIDIA GeForce RTX 4090, 100 %, 1260 MHz, 2520 MHz, 0x0000000000000040, 4, 4, 4, 16"


def _profile(*extra: str) -> Profile:
    lines = OFFLOAD.read_text(encoding="utf-8").splitlines()
    sources = [LineSource(OFFLOAD.name, list(enumerate(lines, 1)))]
    if extra:
        sources.append(LineSource("nvidia-smi.csv", list(enumerate(extra, 1))))
    return profile_of(parse_sources(sources))


def test_as_measured_scales_the_peaks_and_cuts_the_link() -> None:
    h200 = load_hardware().lookup("H200").gpu
    assert h200 is not None and h200.bf16_tflops is not None
    same, notes = as_measured(h200)
    assert same is h200 and notes == []
    slow, notes = as_measured(h200, sm_clock_ratio=1440 / 1980, pcie_generation=5, pcie_lanes=8)
    assert slow.bf16_tflops == pytest.approx(h200.bf16_tflops * 1440 / 1980, abs=0.1)
    assert slow.memory_bandwidth_gb_s == h200.memory_bandwidth_gb_s  # its own clock: power capping leaves it
    assert (slow.pcie.generation, slow.pcie.lanes) == (5, 8)
    assert len(notes) == 2 and "measured on the host" in slow.source
    # a measurement never raises the table's figures
    higher, _ = as_measured(h200, sm_clock_ratio=1.2, pcie_generation=6, pcie_lanes=32)
    assert higher is h200


def test_the_bound_follows_the_measured_link_and_clock() -> None:
    table = load_hardware()
    nominal = deployment_from_profile(_profile(HEADER, FULL), gpu="RTX 4090")
    degraded = deployment_from_profile(_profile(HEADER, X4_SLOW), gpu="RTX 4090")
    assert nominal.deployment is not None and degraded.deployment is not None
    assert (nominal.deployment.gpu.pcie.lanes, degraded.deployment.gpu.pcie.lanes) == (16, 4)
    peak = nominal.deployment.gpu.bf16_tflops
    assert peak is not None and degraded.deployment.gpu.bf16_tflops == pytest.approx(peak / 2, abs=0.1)
    assert any("PCIe gen4 x4 as measured" in d for d in degraded.derived)
    fast = expected(nominal.deployment, table)
    slow = expected(degraded.deployment, table)
    # the offloaded weights cross a quarter of the link: the step is ~4x longer, the bound ~4x lower
    assert slow.per_request_tok_s < fast.per_request_tok_s / 3
