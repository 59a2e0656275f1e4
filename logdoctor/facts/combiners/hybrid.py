"""Mamba / linear-attention hybrid models: block-size alignment, page padding, cache mode, capped graphs.

HybridModel(kind="mamba-page-padding", padding_percent=12.5)  -> hybrid.mamba_padding = 12.5
"""

from __future__ import annotations

from logdoctor.events import EventBase, HybridModel
from logdoctor.facts.combiner import Combiner


class Hybrid(Combiner):
    reads = (HybridModel,)
    produces = (
        "hybrid.is_hybrid",
        "hybrid.attention_block_size",
        "hybrid.mamba_padding",
        "hybrid.padding_waste",
        "hybrid.mamba_cache_mode",
        "hybrid.prefix_caching_disabled",
        "hybrid.cudagraph_capped",
        "sched.prefix_caching",
    )

    def add(self, ev: EventBase) -> None:
        if not isinstance(ev, HybridModel):
            return
        b = self.b
        b.set("hybrid.is_hybrid", True, ev, ev.message, keep_first=True)
        if ev.attention_block_size is not None:
            b.set("hybrid.attention_block_size", float(ev.attention_block_size), ev, ev.message)
        if ev.kind == "mamba-page-padding" and ev.padding_percent is not None:
            b.set("hybrid.mamba_padding", ev.padding_percent, ev, ev.message)
        if ev.kind == "padding-layers" and ev.padding_percent is not None:
            b.set("hybrid.padding_waste", ev.padding_percent, ev, ev.message)
        if ev.mamba_cache_mode:
            b.set("hybrid.mamba_cache_mode", ev.mamba_cache_mode, ev, ev.message)
        if ev.prefix_caching is False:
            b.set("hybrid.prefix_caching_disabled", True, ev, ev.message)
            b.set("sched.prefix_caching", False, ev, ev.message)
        if ev.kind == "cudagraph-cap":
            b.set("hybrid.cudagraph_capped", True, ev, ev.message)
