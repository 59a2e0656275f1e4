"""KV-cache capacity, and weights or KV cache kept in host memory.

`GPU KV cache size: 262,144 tokens`  -> kv.tokens = 262144
`cpu_offload_gb=8`                   -> offload.cpu_gb = 8
`Creating AMX_MOE_TP 0 at numa 0`     -> offload.cpu_experts = True
"""

from __future__ import annotations

from logdoctor.events import EventBase, KVCache, Offload
from logdoctor.facts.combiner import Combiner


class Memory(Combiner):
    reads = (KVCache, Offload)
    produces = (
        "kv.tokens",
        "kv.max_concurrency",
        "kv.memory_gib",
        "offload.cpu_gb",
        "offload.swap_gb",
        "offload.kv",
        "offload.cpu_experts",
    )

    def add(self, ev: EventBase) -> None:
        b = self.b
        if isinstance(ev, KVCache):
            if ev.kv_tokens:
                b.set("kv.tokens", float(ev.kv_tokens), ev, "KV cache size line", keep_first=True)
            if ev.max_concurrency is not None:
                b.set("kv.max_concurrency", ev.max_concurrency, ev, "maximum concurrency line", keep_first=True)
            kv_gib = ev.available_memory_gib if ev.available_memory_gib is not None else ev.kv_cache_memory_gib
            if kv_gib:
                b.set("kv.memory_gib", kv_gib, ev, "KV cache memory line", keep_first=True)
        elif isinstance(ev, Offload):
            if ev.kind == "weights" and ev.gib:
                b.set("offload.cpu_gb", ev.gib, ev, ev.message)
            elif ev.kind == "swap" and ev.gib:
                b.set("offload.swap_gb", ev.gib, ev, ev.message)
            elif ev.kind == "kv":
                b.set("offload.kv", True, ev, ev.message)
            elif ev.kind == "experts":
                b.set("offload.cpu_experts", True, ev, ev.message, keep_first=True)
