"""The engine's configuration dump -> facts: the plain settings of the vocabulary, then the engine's own rules.

    StartupConfig(engine="sglang", config={"tp_size": 2, ...})  -> parallel.tp = 2

Each engine package says under which dump keys it prints each setting (`EngineSpec.flags`, read by
`apply_settings`) and reads what no plain key says (`EngineSpec.apply_config`: a speculative config,
a CUDA-graph mode).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from logdoctor.events import EventBase, StartupConfig
from logdoctor.facts.combiner import Combiner
from logdoctor.facts.declarations import FACTS
from logdoctor.facts.profile import ProfileBuilder
from logdoctor.facts.values import as_number, is_none_like
from logdoctor.registry import REGISTRY, Spelling
from logdoctor.vocabulary import SETTINGS


def apply_settings(
    b: ProfileBuilder, cfg: dict[str, Any], event: StartupConfig, spellings: Mapping[str, Spelling]
) -> None:
    """The plain settings, read under this engine's dump keys (a later key of one setting wins)."""
    for name, spelling in spellings.items():
        if not spelling.config_keys:
            continue
        setting = SETTINGS[name]
        kind = FACTS[setting.fact].kind
        for key in spelling.config_keys:
            value = cfg.get(key)
            if is_none_like(value):
                continue
            if setting.unlimited is not None and value == setting.unlimited:
                continue  # no limit set: nothing to report
            b.set(setting.fact, as_number(value) if kind == "number" else str(value), event, event.origin)


class Config(Combiner):
    reads = (StartupConfig,)

    def __init__(self, b: ProfileBuilder) -> None:
        super().__init__(b)
        self.produces = config_facts()

    def add(self, ev: EventBase) -> None:
        if not isinstance(ev, StartupConfig):
            return
        spec = REGISTRY.get(ev.engine)
        if spec is None:
            return
        apply_settings(self.b, ev.config, ev, spec.flags)
        if spec.apply_config is not None:
            spec.apply_config(self.b, ev.config, ev)


def config_facts() -> tuple[str, ...]:
    """Every fact a configuration dump may set, on any registered engine."""
    return REGISTRY.config_facts()
