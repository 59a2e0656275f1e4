"""The GPU as the host runs it: the table's peaks at the clocks and the PCIe link nvidia-smi measured.

    H200 busy at SM 1440 of 1980 MHz, link gen5 x8   ->  tensor peaks x 0.727, PCIe gen5 x8

The vendor's tensor peaks are at the maximum boost clock and scale with the SM clock; memory bandwidth has its own
clock, which power capping does not touch, so it is left as it is. Only a busy GPU's clock is read (an idle GPU
rests at its lowest clock), and a measured value only lowers the table's: a snapshot never raises a bound.
"""

from __future__ import annotations

from logdoctor.perf.hardware import GpuSpec, PcieLink


def as_measured(
    gpu: GpuSpec,
    *,
    sm_clock_ratio: float | None = None,
    pcie_generation: float | None = None,
    pcie_lanes: float | None = None,
) -> tuple[GpuSpec, list[str]]:
    """`gpu` with its tensor peaks scaled by the busy SM clock / maximum and its PCIe link cut to the measured
    generation and width; the notes say what changed (empty when nothing did)."""
    update: dict[str, object] = {}
    notes: list[str] = []
    if sm_clock_ratio is not None and 0 < sm_clock_ratio < 1:
        for name in ("bf16_tflops", "fp16_tflops", "fp8_tflops"):
            peak = getattr(gpu, name)
            if peak is not None:
                update[name] = round(peak * sm_clock_ratio, 1)
        notes.append(f"tensor peaks x {sm_clock_ratio:.3g}: the busy SM clock measured at that share of its maximum")
    generation = min(gpu.pcie.generation, int(pcie_generation)) if pcie_generation else gpu.pcie.generation
    lanes = min(gpu.pcie.lanes, int(pcie_lanes)) if pcie_lanes else gpu.pcie.lanes
    if (generation, lanes) != (gpu.pcie.generation, gpu.pcie.lanes):
        update["pcie"] = PcieLink(generation=generation, lanes=lanes)
        notes.append(
            f"PCIe gen{generation} x{lanes} as measured (the table's gen{gpu.pcie.generation} x{gpu.pcie.lanes})"
        )
    if not update:
        return gpu, notes
    update["source"] = f"{gpu.source}; measured on the host: " + "; ".join(notes)
    return gpu.model_copy(update=update), notes
