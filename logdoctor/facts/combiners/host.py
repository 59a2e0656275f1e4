"""The host: GPUs, how they are linked, whether P2P works between them, and the container the engine runs in.

`nvidia-smi topo -m` with only PHB / SYS links  -> topology.pcie_only = True
`nvidia-smi topo -p2p r` with NS between 0-1     -> topology.p2p_supported = False
`nvidia-smi topo -m` with NV18 between every pair -> topology.nvlink_links = 18
"""

from __future__ import annotations

import re

from logdoctor.events import EventBase, GpuInfo, GpuP2P, GpuTopology, HostInfo, P2PCheck, Platform
from logdoctor.facts.combiner import Combiner
from logdoctor.facts.profile import ProfileBuilder

_NVLINKS = re.compile(r"^NV(\d+)$", re.I)  # `NV18`: a bonded set of 18 NVLinks between the two GPUs


class Host(Combiner):
    reads = (Platform, GpuInfo, GpuTopology, GpuP2P, P2PCheck, HostInfo)
    produces = (
        "gpu.name",
        "gpu.count",
        "topology.pcie_only",
        "topology.p2p_supported",
        "topology.nvlink_links",
        "host.container",
    )

    def __init__(self, b: ProfileBuilder) -> None:
        super().__init__(b)
        self.gpu_names: list[str] = []  # from GPU listings and the engines' platform lines, in order
        self.listed: set[tuple[str, int]] = set()  # GPUs listed, by source and index: two dumps of one host count once

    def add(self, ev: EventBase) -> None:
        b = self.b
        if isinstance(ev, Platform):
            if ev.gpu_name:
                self.gpu_names.append(ev.gpu_name)
        elif isinstance(ev, GpuInfo):
            if ev.name:  # `nvidia-smi -q -d ...` names no product
                self.gpu_names.append(ev.name)
            self.listed.add(("", ev.index) if ev.index is not None else (ev.source, len(self.listed)))
            b.set("gpu.count", float(len(self.listed)), ev, "GPU listing")
        elif isinstance(ev, GpuTopology):
            links = list(ev.links.values())
            if links:
                pcie_only = not any(link.upper().startswith("NV") for link in links)
                b.set("topology.pcie_only", pcie_only, ev, "nvidia-smi topo -m: " + ", ".join(sorted(set(links))))
                counts = [_NVLINKS.match(link) for link in links]
                if all(counts):
                    fewest = min(int(m.group(1)) for m in counts if m)
                    b.set("topology.nvlink_links", float(fewest), ev, "nvidia-smi topo -m: NV" + str(fewest))
        elif isinstance(ev, GpuP2P):
            statuses = list(ev.status.values())
            if statuses:
                b.set("topology.p2p_supported", all(s.upper() == "OK" for s in statuses), ev, "nvidia-smi topo -p2p")
        elif isinstance(ev, P2PCheck):
            if ev.supported is False:
                b.set("topology.p2p_supported", False, ev, ev.message)
        elif isinstance(ev, HostInfo) and ev.kind == "container":
            b.set("host.container", ev.value, ev, f"{ev.name}: {ev.value}")

    def finish(self) -> None:
        if self.gpu_names:
            self.b.set("gpu.name", self.gpu_names[0], None, "GPU listing")
