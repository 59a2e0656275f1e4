"""The environment a dump describes (collect_env, check_env, nvidia-smi -q): GPU memory and PCIe link, persistence
mode, driver, CUDA, library versions and the environment variables set.

`nvidia-smi -q` with `FB Memory Usage / Total : 143771 MiB`      -> gpu.memory_gib = 140.4
`[pip3] nvidia-nccl-cu12==2.21.5`                                -> host.nccl = "2.21.5"
`NCCL_P2P_DISABLE=1` in collect_env's Environment Variables      -> host.env = ["NCCL_P2P_DISABLE=1"]
(and an NcclEnv event, which the communication combiner turns into nccl.p2p_disabled_env)
"""

from __future__ import annotations

import re

from logdoctor.events import EventBase, GpuInfo, HostInfo
from logdoctor.facts.combiner import Combiner
from logdoctor.facts.profile import ProfileBuilder

_NCCL_PACKAGE_RE = re.compile(r"^(?:nvidia-nccl-cu\d+|nccl)$")
# (HostInfo kind, name) -> fact; a version line wins over a package line of the same library
_VERSIONS: dict[tuple[str, str], str] = {
    ("driver", "nvidia"): "host.driver",
    ("driver", "cuda"): "host.cuda",
    ("version", "cuda-runtime"): "host.cuda_runtime",
    ("version", "torch"): "host.torch",
    ("version", "vllm"): "host.vllm",
    ("version", "sglang"): "host.sglang",
}
_PACKAGES: dict[str, str] = {"torch": "host.torch", "vllm": "host.vllm", "sglang": "host.sglang"}


class Environment(Combiner):
    reads = (GpuInfo, HostInfo)
    produces = (
        "gpu.memory_gib",
        "gpu.pcie_generation",
        "gpu.pcie_width",
        "gpu.pcie_width_max",
        "gpu.persistence_mode",
        "host.driver",
        "host.cuda",
        "host.cuda_runtime",
        "host.torch",
        "host.nccl",
        "host.vllm",
        "host.sglang",
        "host.env",
    )

    def __init__(self, b: ProfileBuilder) -> None:
        super().__init__(b)
        self.gpus: list[GpuInfo] = []

    def add(self, ev: EventBase) -> None:
        b = self.b
        if isinstance(ev, GpuInfo):
            self.gpus.append(ev)
        elif isinstance(ev, HostInfo):
            fact = _VERSIONS.get((ev.kind, ev.name))
            if fact is not None:
                b.set(fact, ev.value, ev, f"{ev.name} {ev.value}")
            elif ev.kind == "package" and _NCCL_PACKAGE_RE.match(ev.name):
                b.set("host.nccl", ev.value, ev, f"package {ev.name}=={ev.value}", keep_first=True)
            elif ev.kind == "package" and ev.name in _PACKAGES:
                b.set(_PACKAGES[ev.name], ev.value, ev, f"package {ev.name}=={ev.value}", keep_first=True)
            elif ev.kind == "env":
                b.append("host.env", f"{ev.name}={ev.value}", ev, "environment dump")

    def finish(self) -> None:
        b, gpus = self.b, self.gpus
        memory = [g for g in gpus if g.memory_mib]
        if memory:
            first = memory[0]
            b.set("gpu.memory_gib", round(float(first.memory_mib or 0) / 1024, 1), first, "nvidia-smi memory total")
        # The slowest link bounds a collective: the lowest generation and width over the GPUs. The generation's
        # maximum is used because an idle GPU drops its link to a lower one to save power.
        gens = [
            (g.pcie_generation_max or g.pcie_generation, g) for g in gpus if g.pcie_generation_max or g.pcie_generation
        ]
        if gens:
            gen, ev = min(gens, key=lambda x: x[0] or 0)
            b.set("gpu.pcie_generation", float(gen or 0), ev, "nvidia-smi -q PCIe Generation Max")
        widths = [(g.pcie_width, g) for g in gpus if g.pcie_width]
        if widths:
            width, ev = min(widths, key=lambda x: x[0] or 0)
            b.set("gpu.pcie_width", float(width or 0), ev, "nvidia-smi -q Link Width Current")
        widest = [(g.pcie_width_max, g) for g in gpus if g.pcie_width_max]
        if widest:
            width, ev = min(widest, key=lambda x: x[0] or 0)
            b.set("gpu.pcie_width_max", float(width or 0), ev, "nvidia-smi -q Link Width Max")
        modes = [g for g in gpus if g.persistence_mode is not None]
        if modes:
            off = [g for g in modes if g.persistence_mode is False]
            ev = off[0] if off else modes[0]
            b.set("gpu.persistence_mode", not off, ev, "nvidia-smi -q Persistence Mode")
