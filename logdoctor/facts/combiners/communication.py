"""Communication between GPUs: custom all-reduce, NCCL transports and channels, P2P in the environment, nodes.

CustomAllReduce(enabled=False, reason="no-p2p")   -> allreduce.custom = False, allreduce.reason = no-p2p
NCCL `Channel 00/0 : 0[0] -> 1[1] via SHM/direct`  -> nccl.transport = SHM (the slowest one seen)
`Distributed backend nccl is not available; falling back to gloo.`  -> comm.backend = gloo
"""

from __future__ import annotations

from logdoctor.events import (
    AllReduceBackends,
    CustomAllReduce,
    EventBase,
    NcclEnv,
    NcclInfo,
    NcclTransport,
    PerfWarning,
)
from logdoctor.facts.combiner import Combiner
from logdoctor.facts.profile import ProfileBuilder

_SLOW_ORDER = {"P2P": 0, "NVLS": 0, "COLLNET": 1, "SHM": 2, "NET": 3}
_CHANNEL_FACTS = {"P2P": "nccl.p2p_channels", "SHM": "nccl.shm_channels", "NET": "nccl.net_channels"}


def _tensor_parallel_group(group: str | None) -> bool:
    """Whether a `for group '...'` all-reduce list speaks for the TP all-reduce. vLLM's CudaCommunicator turns
    custom all-reduce (and torch symm-mem) off for every group whose unique name lacks "tp" (`ep:0`, `dp:0`,
    `pp:0`, `dcp:0`): those groups never use it, so their `Using ['PYNCCL'] ...` line says nothing about it."""
    return group is None or "tp" in group.lower()


class Communication(Combiner):
    reads = (CustomAllReduce, AllReduceBackends, NcclTransport, NcclEnv, NcclInfo, PerfWarning)
    produces = (
        "allreduce.custom",
        "allreduce.reason",
        "nccl.transport",
        "nccl.p2p_channels",
        "nccl.shm_channels",
        "nccl.net_channels",
        "nccl.p2p_disabled_env",
        "nccl.hosts",
        "topology.spans_nodes",
        "comm.backend",
    )

    def __init__(self, b: ProfileBuilder) -> None:
        super().__init__(b)
        self.transports: dict[str, int] = {}
        self.hosts: set[str] = set()

    def add(self, ev: EventBase) -> None:
        b = self.b
        if isinstance(ev, NcclTransport):
            self._transport(ev)
        elif isinstance(ev, CustomAllReduce):
            if ev.enabled:
                b.set("allreduce.custom", True, ev, "custom all-reduce in use", keep_first=True)
            else:
                b.set("allreduce.custom", False, ev, ev.message or "custom all-reduce disabled")
                if ev.reason:
                    b.set("allreduce.reason", ev.reason, ev, "custom all-reduce warning")
        elif isinstance(ev, AllReduceBackends) and _tensor_parallel_group(ev.group):
            uses_custom = any(x.upper() == "CUSTOM" for x in ev.backends)
            b.set("allreduce.custom", uses_custom, ev, "all-reduce backend list")
        elif isinstance(ev, NcclEnv):
            if (ev.name == "NCCL_P2P_DISABLE" and ev.value.strip() not in ("0", "")) or (
                ev.name == "NCCL_P2P_LEVEL" and ev.value.strip().upper() in ("LOC", "0")
            ):
                b.set("nccl.p2p_disabled_env", True, ev, f"{ev.name}={ev.value}")
        elif isinstance(ev, NcclInfo):
            if ev.process is not None and ev.process.host:
                self.hosts.add(ev.process.host)
            if ev.kind == "p2p-disabled":
                b.set("nccl.p2p_disabled_env", True, ev, ev.message, keep_first=True)
            elif ev.kind == "distributed-init" and ev.values.get("requested_backend") == "nccl":
                backend = ev.values.get("backend")
                if isinstance(backend, str) and backend != "nccl":
                    b.set("comm.backend", backend, ev, ev.message or "distributed backend fallback")
        elif isinstance(ev, PerfWarning) and ev.topic == "tp-spans-nodes":
            b.set("topology.spans_nodes", True, ev, ev.message)

    def _transport(self, ev: NcclTransport) -> None:
        b, transports = self.b, self.transports
        transports[ev.transport] = transports.get(ev.transport, 0) + 1
        if ev.process is not None and ev.process.host:
            self.hosts.add(ev.process.host)
        fact = _CHANNEL_FACTS.get(ev.transport)
        if fact:
            b.set(fact, float(transports[ev.transport]), ev, "NCCL channel lines", keep_first=True)
            b.replace(fact, float(transports[ev.transport]))
            b.add_ref(fact, ev)
        current = b.value("nccl.transport")
        if current is None or _SLOW_ORDER.get(ev.transport, 1) > _SLOW_ORDER.get(current, 1):
            b.set("nccl.transport", ev.transport, ev, ev.detail)

    def finish(self) -> None:
        hosts = self.hosts
        if hosts:
            self.b.set("nccl.hosts", float(len(hosts)), None, "NCCL line hosts")
            if len(hosts) > 1:
                self.b.set("topology.spans_nodes", True, None, f"NCCL lines from {len(hosts)} hosts")
