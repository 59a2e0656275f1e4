"""Warnings no line type understood, as the warning vocabulary read them (docs/warnings.md).

`EngineWarning(cause="cuda-graphs-disabled", message="Falling back to eager mode ...")`
    -> warned.cuda_graphs = 'vLLM warned: "Falling back to eager mode ..."', warned.cuda_graphs.strength = 1.0
`EngineWarning(cause=None, message="Served model name differs ...")`
    -> warnings.not_understood += ['line 12: vLLM WARNING: Served model name differs ...']
`PerfWarning(topic="jit-during-inference", message="Triton kernel JIT compilation during inference: ...")`
    -> warned.compile = 'vLLM warned: "Triton kernel JIT compilation during inference: ..."', strength 0.75
"""

from __future__ import annotations

from logdoctor.events import EngineWarning, EventBase, PerfWarning, WarningTopic
from logdoctor.facts.combiner import Combiner
from logdoctor.facts.declarations import WARNED_FACTS
from logdoctor.registry import REGISTRY

NOT_UNDERSTOOD_LIMIT = 20  # warnings listed; the count of all of them is in the verdict's not-understood lines

# Performance warnings a line type knows whose topic no rule reads otherwise: each speaks for its cause the way a
# warning of the vocabulary does, with the strength its words would get there (docs/warnings.md, *Known
# warnings*). A topic left out is read by a rule of its own or names no cause.
TOPIC_CAUSES: dict[WarningTopic, tuple[str, float]] = {
    # "Triton kernel JIT compilation during inference: ... This causes a latency spike"
    "jit-during-inference": ("torch-compile-or-warmup", 0.75),
    # "GDN prefill is JIT-compiled; first run may take a while", FlashInfer's precompiled kernels missing
    "jit-compilation": ("torch-compile-or-warmup", 0.75),
    # "enable_aot_compile is not available. AOT compile is disabled"
    "aot-compile-unavailable": ("torch-compile-or-warmup", 0.5),
    # "No piecewise cudagraph for executing cascade attention": those steps run eagerly
    "cudagraph-cascade": ("cuda-graphs-disabled", 0.75),
    # "Please use FlashInfer backend with FP8 KV Cache for better performance"
    "attention-backend": ("attention-backend-fallback", 0.75),
    # "Failing the request ... because there's not enough kv cache blocks"
    "kv-cache-request-failed": ("kv-cache-pressure", 1.0),
    # "GDN prefill kernel warmup ... failed", "Mamba2 SSD kernel warmup ... failed"
    "kernel-warmup": ("mamba-hybrid-issue", 0.75),
}


def _engine_label(name: str) -> str | None:
    """How reports write an engine (`vLLM`); None for a name that is not a serving or collective engine."""
    spec = REGISTRY.get(name)
    return spec.label if spec is not None and spec.kind != "input" else None


class Warned(Combiner):
    reads = (EngineWarning, PerfWarning)
    produces = (
        *(f"warned.{name}" for name in WARNED_FACTS.values()),
        *(f"warned.{name}.strength" for name in WARNED_FACTS.values()),
        "warnings.not_understood",
    )

    def add(self, ev: EventBase) -> None:
        if isinstance(ev, PerfWarning):
            known = TOPIC_CAUSES.get(ev.topic)
            if known is not None:
                cause, strength = known
                self._warned(
                    ev, WARNED_FACTS[cause], ev.message, strength, f"{ev.level or 'warning'} line ({ev.topic})"
                )
            return
        if not isinstance(ev, EngineWarning):
            return
        name = WARNED_FACTS.get(ev.cause) if ev.cause is not None else None
        if name is None:
            listed = self.b.value("warnings.not_understood")
            if listed is None or len(listed) < NOT_UNDERSTOOD_LIMIT:
                line = f"line {ev.line}: {self._engine(ev)} {ev.level}: {ev.message}"
                self.b.append("warnings.not_understood", line, ev)
            return
        self._warned(ev, name, ev.message, ev.strength, f"{ev.level} line ({ev.logger or 'no logger file'})")

    def _engine(self, ev: EventBase) -> str:
        return _engine_label(ev.engine) or _engine_label(str(self.b.value("engine"))) or "the engine"

    def _warned(self, ev: EventBase, name: str, message: str, strength: float, how: str) -> None:
        b = self.b
        fact = f"warned.{name}"
        strongest = b.value(f"{fact}.strength")
        if strongest is None or strength > strongest:  # the plainest warning speaks for the cause
            b.set(fact, f'{self._engine(ev)} warned: "{message}"', ev, how)
            b.set(f"{fact}.strength", strength, ev, "warning vocabulary")
        else:
            b.add_ref(fact, ev)
