"""Warnings no line type understood, as the warning vocabulary read them (docs/warnings.md).

`EngineWarning(cause="cuda-graphs-disabled", message="Falling back to eager mode ...")`
    -> warned.cuda_graphs = 'vLLM warned: "Falling back to eager mode ..."', warned.cuda_graphs.strength = 1.0
`EngineWarning(cause=None, message="Served model name differs ...")`
    -> warnings.not_understood += ['line 12: vLLM WARNING: Served model name differs ...']
"""

from __future__ import annotations

from logdoctor.events import EngineWarning, EventBase
from logdoctor.facts.combiner import Combiner
from logdoctor.facts.declarations import WARNED_FACTS
from logdoctor.registry import REGISTRY

NOT_UNDERSTOOD_LIMIT = 20  # warnings listed; the count of all of them is in the verdict's not-understood lines


def _engine_label(name: str) -> str | None:
    """How reports write an engine (`vLLM`); None for a name that is not a serving or collective engine."""
    spec = REGISTRY.get(name)
    return spec.label if spec is not None and spec.kind != "input" else None


class Warned(Combiner):
    reads = (EngineWarning,)
    produces = (
        *(f"warned.{name}" for name in WARNED_FACTS.values()),
        *(f"warned.{name}.strength" for name in WARNED_FACTS.values()),
        "warnings.not_understood",
    )

    def add(self, ev: EventBase) -> None:
        if not isinstance(ev, EngineWarning):
            return
        b = self.b
        engine = _engine_label(ev.engine) or _engine_label(str(b.value("engine"))) or "the engine"
        name = WARNED_FACTS.get(ev.cause) if ev.cause is not None else None
        if name is None:
            listed = b.value("warnings.not_understood")
            if listed is None or len(listed) < NOT_UNDERSTOOD_LIMIT:
                b.append("warnings.not_understood", f"line {ev.line}: {engine} {ev.level}: {ev.message}", ev)
            return
        fact = f"warned.{name}"
        strongest = b.value(f"{fact}.strength")
        if strongest is None or ev.strength > strongest:  # the plainest warning speaks for the cause
            b.set(fact, f'{engine} warned: "{ev.message}"', ev, f"{ev.level} line ({ev.logger or 'no logger file'})")
            b.set(f"{fact}.strength", ev.strength, ev, "warning vocabulary")
        else:
            b.add_ref(fact, ev)
