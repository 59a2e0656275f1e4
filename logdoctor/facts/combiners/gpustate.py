"""The GPUs' state on the host: clocks and what holds them back, the PCIe link against its maximum, hardware
faults, and the other processes on the serving GPUs.

`nvidia-smi -q` of a busy GPU: `SW Power Cap: Active`, `Current Power Limit : 450.00 W`, `Default ... : 700.00 W`
    -> gpu.busy = True, gpu.clock_events = ["power-cap"], gpu.power_limit_ratio = 0.64
`Link Width Current 8x / Max 16x`                 -> gpu.pcie_link_degraded = True, gpu.pcie_link_ratio = 0.5
`NVRM: Xid (PCI:0000:3b:00): 79, ... GPU has fallen off the bus.`  -> gpu.hardware_errors = ["Xid 79 ..."]
two compute processes of 1 GiB or more on one GPU -> gpu.other_processes = 1

A busy GPU is one whose utilisation reading is at least half (a serving engine under load keeps its GPUs near
100%, an idle one at 0%), or, without a utilisation reading, one drawing 80% of its power limit or more. The PCIe generation of an idle GPU is not read as degraded: NVIDIA GPUs train their link
down to a lower generation at idle to save power and back up under load (the width stays).
"""

from __future__ import annotations

import re
from collections import defaultdict

from logdoctor.events import EngineFailure, EventBase, GpuDiag, GpuInfo, GpuProcess, GpuXid, HostInfo
from logdoctor.facts.combiner import Combiner
from logdoctor.facts.profile import ProfileBuilder

BUSY_UTILIZATION = 50  # %: at or above, the GPU was working when the snapshot was taken
AT_LIMIT = 0.8  # power draw / limit at or above which a GPU without a utilisation reading counts as busy
CAPPED = 0.95  # a busy GPU drawing this share of its limit is held there by the power controller (SW Power Cap)
# A compute process holding this much is more than a CUDA context (about 0.3-0.6 GiB with PyTorch loaded):
# it has data of its own on the GPU.
PROCESS_MIB = 1024
# vLLM's `Free memory on device (7.1/23.56 GiB) on startup is less than desired GPU memory utilization`
_FREE_ON_STARTUP_RE = re.compile(r"Free memory on device \((?P<free>[\d.]+)/(?P<total>[\d.]+) GiB\) on startup")
# NVIDIA's Xid catalogue: the codes that report a fault of the GPU, its memory or its links (not an application's
# bad access, as 13, 31 and 43 usually are): 48 double-bit ECC, 61/62 internal micro-controller, 63/64 page
# retirement or row remapping recorded / failed, 74 NVLink, 79 fallen off the bus, 92 high single-bit ECC rate,
# 94/95 contained / uncontained ECC, 119/120 GSP, 140 unrecovered ECC, 154 recovery action changed
HARDWARE_XIDS: frozenset[int] = frozenset({48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120, 140, 154})
# dcgmi diag's software and deployment checks: a failure there is the host's setup, not its hardware
DIAG_SOFTWARE_TESTS = frozenset(
    {
        "denylist",
        "nvml library",
        "cuda main library",
        "cuda toolkit libraries",
        "cuda toolkit library",
        "permissions and os blocks",
        "persistence mode",
        "environment variables",
        "graphics processes",
        "software",
        "fabric manager",
    }
)
# per-lane PCIe bandwidth by generation, GB/s (after line coding)
PCIE_LANE_GBPS: dict[int, float] = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}


def _label(gpu: GpuInfo) -> str:
    return f"GPU {gpu.index if gpu.index is not None else gpu.bus_id or '?'}"


def _busy(gpu: GpuInfo) -> bool | None:
    if gpu.utilization_pct is not None:
        return gpu.utilization_pct >= BUSY_UTILIZATION
    if gpu.power_draw_w is not None and gpu.power_limit_w:
        # no utilisation reading (a rig report, `-q -d POWER`): a GPU drawing near its limit is working; an idle one
        # draws a fraction of it. Below that the load is not known.
        return True if gpu.power_draw_w >= AT_LIMIT * gpu.power_limit_w else None
    return None


def link_bandwidth(generation: int | None, width: int | None) -> float | None:
    """One direction of a PCIe link, GB/s; None where the generation is unknown."""
    if generation is None or width is None or generation not in PCIE_LANE_GBPS:
        return None
    return PCIE_LANE_GBPS[generation] * width


class GpuState(Combiner):
    reads = (GpuInfo, GpuXid, GpuDiag, GpuProcess, EngineFailure, HostInfo)
    produces = (
        "gpu.busy",
        "gpu.utilization",
        "gpu.sm_clock_ratio",
        "gpu.sm_clock",
        "gpu.clock_events",
        "gpu.power_limit_ratio",
        "gpu.power_limit",
        "gpu.power_at_limit",
        "gpu.temperature",
        "gpu.slowdown_s",
        "gpu.pcie_link_degraded",
        "gpu.pcie_link",
        "gpu.pcie_link_ratio",
        "gpu.pcie_link_generation",
        "gpu.pcie_link_width",
        "gpu.pcie_idle_downtrained",
        "gpu.pcie_link_checked",
        "gpu.hardware_errors",
        "gpu.hardware_error_count",
        "gpu.other_processes",
        "gpu.processes",
        "gpu.memory_held_gib",
        "host.cpu_governor",
        "host.server_placement",
    )

    def __init__(self, b: ProfileBuilder) -> None:
        super().__init__(b)
        self.gpus: list[GpuInfo] = []
        self.processes: dict[str, list[GpuProcess]] = defaultdict(list)
        self.errors = 0
        self.health_read = False

    def add(self, ev: EventBase) -> None:
        b = self.b
        if isinstance(ev, GpuInfo):
            self.gpus.append(ev)
            self._health(ev)
        elif isinstance(ev, GpuXid):
            if ev.code is None or ev.code in HARDWARE_XIDS:
                what = f"Xid {ev.code}" if ev.code is not None else "fallen off the bus"
                b.append("gpu.hardware_errors", f"{what} (PCI {ev.bus_id}): {ev.message}", ev, "kernel log NVRM line")
                self.errors += 1
        elif isinstance(ev, GpuDiag):
            if ev.test.lower() not in DIAG_SOFTWARE_TESTS:
                gpus = ", ".join(f"GPU {g}" for g in ev.gpus) or "a GPU"
                detail = f": {ev.message}" if ev.message else ""
                b.append("gpu.hardware_errors", f"dcgmi diag {ev.test} failed on {gpus}{detail}", ev, "dcgmi diag")
                self.errors += 1
        elif isinstance(ev, GpuProcess):
            self.processes[ev.bus_id or "?"].append(ev)
        elif isinstance(ev, HostInfo) and ev.kind == "cpu":
            if ev.name == "governor":
                b.append("host.cpu_governor", ev.value, ev, "cpufreq scaling_governor")
            elif ev.name == "placement":
                b.append("host.server_placement", ev.value, ev, "/proc/PID/status")
        elif isinstance(ev, EngineFailure) and ev.kind == "gpu-memory-insufficient":
            m = _FREE_ON_STARTUP_RE.search(ev.message)
            if m:
                held = float(m.group("total")) - float(m.group("free"))
                b.set("gpu.memory_held_gib", round(held, 2), ev, "free memory on device at startup")

    def _health(self, gpu: GpuInfo) -> None:
        b, label = self.b, _label(gpu)
        found: list[str] = []
        if gpu.ecc_uncorrected:
            found.append(f"{label}: {gpu.ecc_uncorrected} uncorrectable ECC error(s) since the driver loaded")
        if gpu.remap_failed:
            found.append(f"{label}: a row remapping failed (the memory cannot be repaired)")
        if gpu.remap_pending:
            found.append(f"{label}: a row remap / page retirement is pending (needs a GPU reset)")
        if gpu.recovery_action:
            found.append(f"{label}: the driver asks for recovery action '{gpu.recovery_action}'")
        for text in found:
            b.append("gpu.hardware_errors", text, gpu, "nvidia-smi ECC / remapping")
        self.errors += len(found)
        if gpu.ecc_uncorrected is not None or gpu.remap_pending is not None or gpu.remap_failed is not None:
            self.health_read = True

    def finish(self) -> None:
        self._load()
        self._link()
        self._shared()
        if self.errors or self.health_read:
            self.b.set("gpu.hardware_error_count", float(self.errors), None, "nvidia-smi health / kernel log")

    def _load(self) -> None:
        self._power()
        b = self.b
        read = [g for g in self.gpus if _busy(g) is not None]
        if not read:
            return
        utilized = [g for g in read if g.utilization_pct is not None]
        if utilized:
            busiest = max(utilized, key=lambda g: g.utilization_pct or 0)
            b.set("gpu.utilization", float(busiest.utilization_pct or 0), busiest, "nvidia-smi utilization")
        busy = [g for g in read if _busy(g)]
        b.set("gpu.busy", bool(busy), busy[0] if busy else read[0], "nvidia-smi utilization or power draw at the limit")
        drawing = [g for g in busy if g.power_draw_w is not None and g.power_limit_w]
        if drawing:
            top = max(drawing, key=lambda g: (g.power_draw_w or 0) / (g.power_limit_w or 1))
            at_limit = (top.power_draw_w or 0) >= CAPPED * (top.power_limit_w or 1)
            b.set("gpu.power_at_limit", at_limit, top, "nvidia-smi power draw / limit")
        events = sorted({e for g in busy for e in g.clock_events or []})
        if any(g.clock_events is not None for g in busy):
            b.set("gpu.clock_events", events, busy[0], "nvidia-smi clock event reasons")
        clocked = [g for g in busy if g.sm_clock_mhz and g.sm_clock_max_mhz]
        if clocked:
            slow = min(clocked, key=lambda g: (g.sm_clock_mhz or 0) / (g.sm_clock_max_mhz or 1))
            ratio = (slow.sm_clock_mhz or 0) / (slow.sm_clock_max_mhz or 1)
            b.set("gpu.sm_clock_ratio", round(ratio, 3), slow, "nvidia-smi SM clock / max")
            b.set("gpu.sm_clock", f"{_label(slow)} {slow.sm_clock_mhz} of {slow.sm_clock_max_mhz} MHz", slow)

    def _power(self) -> None:
        """What holds for idle GPUs too: the power limit, the temperature, the slowdown counters."""
        b = self.b
        slowed = [g for g in self.gpus if g.slowdown_s is not None]
        if slowed:
            g = max(slowed, key=lambda g: g.slowdown_s or 0)
            b.set("gpu.slowdown_s", g.slowdown_s, g, "nvidia-smi clock event reason counters")
        hot = [g for g in self.gpus if g.temperature_c is not None]
        if hot:
            g = max(hot, key=lambda g: g.temperature_c or 0)
            b.set("gpu.temperature", float(g.temperature_c or 0), g, "nvidia-smi temperature")
        limited = [g for g in self.gpus if g.power_limit_w and (g.power_default_limit_w or g.power_max_limit_w)]
        if limited:
            g = min(
                limited, key=lambda g: (g.power_limit_w or 0) / (g.power_default_limit_w or g.power_max_limit_w or 1)
            )
            reference = g.power_default_limit_w or g.power_max_limit_w or 1
            b.set("gpu.power_limit_ratio", round((g.power_limit_w or 0) / reference, 3), g, "nvidia-smi power limit")
            draw = f", drawing {g.power_draw_w:.0f} W" if g.power_draw_w is not None else ""
            b.set("gpu.power_limit", f"{_label(g)} limit {g.power_limit_w:.0f} W of default {reference:.0f} W{draw}", g)

    def _link(self) -> None:
        b = self.b
        worst: tuple[float, GpuInfo, str, int | None] | None = None
        downtrained: GpuInfo | None = None
        linked = [g for g in self.gpus if g.pcie_width and g.pcie_width_max]
        for g in linked:
            busy = _busy(g)
            generation = g.pcie_generation or g.pcie_generation_max
            if busy is not True and g.pcie_generation and g.pcie_generation_max:
                if g.pcie_generation < g.pcie_generation_max:
                    downtrained = g
                generation = g.pcie_generation_max  # an idle link trains down its generation, not its width
            now = link_bandwidth(generation, g.pcie_width)
            best = link_bandwidth(g.pcie_generation_max or generation, g.pcie_width_max)
            if now is None or best is None or best <= 0:
                continue
            ratio = min(1.0, now / best)
            state = "busy" if busy else "idle" if busy is False else "load unknown"
            if g.pcie_generation:
                link = (
                    f"gen{g.pcie_generation} x{g.pcie_width} of gen{g.pcie_generation_max or '?'} x{g.pcie_width_max}"
                )
            else:  # a rig report gives the width and the maximum generation only
                link = f"x{g.pcie_width} of x{g.pcie_width_max} (gen{g.pcie_generation_max or '?'} at most)"
            text = f"{_label(g)}: {link} ({state})"
            if worst is None or ratio < worst[0]:
                worst = (ratio, g, text, generation)
        if worst is not None:
            ratio, g, text, generation = worst
            b.set("gpu.pcie_link_generation", None if generation is None else float(generation), g, "nvidia-smi PCIe")
            b.set("gpu.pcie_link_width", float(g.pcie_width or 0), g, "nvidia-smi PCIe link width")
            b.set("gpu.pcie_link_ratio", round(ratio, 3), g, "nvidia-smi PCIe link current / max")
            b.set("gpu.pcie_link_degraded", ratio < 1.0, g, "nvidia-smi PCIe link current / max")
            b.set("gpu.pcie_link", text, g, "nvidia-smi PCIe link")
        if downtrained is not None:
            b.set("gpu.pcie_idle_downtrained", True, downtrained, "nvidia-smi PCIe generation at idle")
        elif worst is not None:
            # every link was read where it shows its maximum (busy, or idle and not trained down): absent otherwise,
            # so the rule says what to take to decide rather than calling the link fine
            b.set("gpu.pcie_link_checked", True, worst[1], "nvidia-smi PCIe link")

    def _shared(self) -> None:
        b = self.b
        if not self.processes:
            return
        most = 0
        listed: list[str] = []
        first: GpuProcess | None = None
        for bus, procs in self.processes.items():
            unique = {p.pid if p.pid is not None else id(p): p for p in procs}.values()  # -q and the CSV both list it
            holding = [p for p in unique if p.memory_mib is not None and p.memory_mib >= PROCESS_MIB]
            most = max(most, len(holding) - 1)
            for p in unique:
                first = first or p
                memory = f" {p.memory_mib} MiB" if p.memory_mib is not None else ""
                listed.append(f"GPU {bus}: pid {p.pid} {p.name}{memory}")
        if first is not None:
            b.set("gpu.other_processes", float(most), first, "nvidia-smi compute processes")
            for text in listed[:8]:
                b.append("gpu.processes", text, first, "nvidia-smi compute processes")
