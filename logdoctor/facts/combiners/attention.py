"""The attention backend of the target and the drafter, whether the user forced it, and why a faster one lost.

AttentionBackend(role="target", backend="TRITON_ATTN", fallback_reason="block-size")
    -> attention.backend = TRITON_ATTN, attention.fallback_reason = block-size
"""

from __future__ import annotations

from logdoctor.events import AttentionBackend, EventBase
from logdoctor.facts.combiner import Combiner

_TARGET_ROLES = ("target", "unknown", "decode")


class Attention(Combiner):
    reads = (AttentionBackend,)
    produces = (
        "attention.backend",
        "attention.drafter_backend",
        "attention.fallback_reason",
        "attention.forced",
        "attention.stale_env",
    )

    def add(self, ev: EventBase) -> None:
        if not isinstance(ev, AttentionBackend):
            return
        b = self.b
        if ev.role == "drafter" and ev.backend:
            b.set("attention.drafter_backend", ev.backend, ev, ev.message or "")
        elif ev.role in _TARGET_ROLES and ev.backend:
            # The first selection for the target model is authoritative; later lines are per-rank repeats.
            if b.value("attention.backend") is None or ev.forced:
                b.set("attention.backend", ev.backend, ev, ev.message or "")
            else:
                b.add_ref("attention.backend", ev)
        if ev.forced:
            b.set("attention.forced", True, ev, ev.message or "")
        if ev.fallback_reason == "env-var-ignored":
            b.set("attention.stale_env", True, ev, ev.message or "")
        elif ev.fallback_reason and ev.role in _TARGET_ROLES:
            b.set("attention.fallback_reason", ev.fallback_reason, ev, ev.message or ev.fallback_reason)
