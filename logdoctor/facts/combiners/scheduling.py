"""Batching and scheduling: token budget, request limit, async scheduling, prefix caching, preemptions.

SchedulerConfig(kind="chunked-prefill", value=8192)  -> sched.max_batched_tokens = 8192
Preemption(...) x 3, or stats lines' preemption counts -> sched.preemptions = 3
"""

from __future__ import annotations

import re

from logdoctor.events import EventBase, Preemption, SchedulerConfig, SchedulerStats
from logdoctor.facts.combiner import Combiner
from logdoctor.facts.profile import ProfileBuilder

_HYBRID_WORDS = re.compile(r"mamba|hybrid|linear.attention|NemotronH|Qwen3Next|Qwen3_5|Jamba|FalconH1|GDN", re.I)


class Scheduling(Combiner):
    reads = (SchedulerConfig, SchedulerStats, Preemption)
    produces = (
        "sched.max_batched_tokens",
        "sched.max_num_seqs",
        "sched.spec_token_budget_warning",
        "sched.prefix_caching",
        "sched.preemptions",
        "async_scheduling.enabled",
        "hybrid.is_hybrid",
        "hybrid.prefix_caching_disabled",
    )

    def __init__(self, b: ProfileBuilder) -> None:
        super().__init__(b)
        self.preemptions = 0

    def add(self, ev: EventBase) -> None:
        b = self.b
        if isinstance(ev, SchedulerStats):
            if ev.preemptions:
                self.preemptions += ev.preemptions
                b.set("sched.preemptions", float(self.preemptions), ev, "stats lines")
        elif isinstance(ev, SchedulerConfig):
            self._config(ev)
        elif isinstance(ev, Preemption):
            self.preemptions += ev.count or 1
            b.set("sched.preemptions", float(self.preemptions), ev, ev.message)
            if ev.cumulative:
                self.preemptions = max(self.preemptions, ev.cumulative)
                b.replace("sched.preemptions", float(self.preemptions))

    def _config(self, ev: SchedulerConfig) -> None:
        b = self.b
        if ev.kind == "chunked-prefill" and ev.value is not None:
            b.set("sched.max_batched_tokens", float(ev.value), ev, ev.message)
        elif ev.kind == "max-num-seqs" and ev.value is not None:
            b.set("sched.max_num_seqs", float(ev.value), ev, ev.message)
        elif ev.kind == "spec-token-budget":
            b.set("sched.spec_token_budget_warning", True, ev, ev.message)
        elif ev.kind == "async-scheduling" and ev.enabled is not None:
            b.set("async_scheduling.enabled", ev.enabled, ev, ev.message)
        elif ev.kind == "prefix-caching" and ev.enabled is not None:
            b.set("sched.prefix_caching", ev.enabled, ev, ev.message)
            if ev.enabled is False and _HYBRID_WORDS.search(ev.message):
                b.set("hybrid.is_hybrid", True, ev, ev.message, keep_first=True)
                b.set("hybrid.prefix_caching_disabled", True, ev, ev.message)
