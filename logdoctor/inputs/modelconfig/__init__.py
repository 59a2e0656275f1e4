"""A model's Hugging Face `config.json` (or its drafter's) given beside a log: the shape the expected-performance
model needs and logs do not print (layers, hidden size, vocabulary, experts, the parameters a decode step reads).

    logdoctor diagnose server.log config.json                 # the target's shape
    logdoctor diagnose server.log config.json draft/config.json   # and the drafter's (DFlash, EAGLE-3)

The line type is in grammars.py, the shape in shape.py; `apply_config` turns the shape into facts
(docs/expected-performance.md, "Model shapes"): `model.layers`, `model.read_params`, ... for a model,
`spec.draft_layers`, `spec.draft_params` for a drafter (its architecture names one: DFlashDraftModel,
LlamaForCausalLMEagle3).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from logdoctor.inputs.modelconfig.grammars import GRAMMARS
from logdoctor.registry import EngineSpec

if TYPE_CHECKING:
    from logdoctor.events import StartupConfig
    from logdoctor.facts.profile import ProfileBuilder

# shape key -> fact, for a model's config; the drafter's go to spec.* (below)
_MODEL_FACTS = {
    "layers": "model.layers",
    "hidden_size": "model.hidden_size",
    "vocab_size": "model.vocab_size",
    "tied_embeddings": "model.tied_embeddings",
    "kv_heads": "model.kv_heads",
    "head_dim": "model.head_dim",
    "experts": "model.experts",
    "experts_active": "model.experts_active",
    "mtp_layers": "model.mtp_layers",
    "vision": "model.vision_tower",
    "params": "model.params",
    "read_params": "model.read_params",
    "architecture": "model.config_architecture",
}
_DRAFTER_FACTS = {
    "layers": "spec.draft_layers",
    "drafter_block_size": "spec.draft_block_size",
    "architecture": "spec.draft_config_architecture",
}
FACTS = (*_MODEL_FACTS.values(), *_DRAFTER_FACTS.values(), "spec.draft_params", "model.config_source")


def _number(value: Any) -> Any:
    """Facts hold numbers as floats; booleans and strings stay."""
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def apply_config(b: ProfileBuilder, config: dict[str, Any], event: StartupConfig) -> None:
    """The shape of a config.json -> facts; only a `model config` dump (the engines' dumps are not shapes)."""
    if event.origin != "model config":
        return
    where = f"config.json {event.source}:{event.line}"
    if config.get("drafter"):
        for key, fact in _DRAFTER_FACTS.items():
            if key in config:
                b.set(fact, _number(config[key]), event, where)
        read, embedding = config.get("read_params"), config.get("embedding_params")
        if isinstance(read, int | float):
            # its layers only: the embedding and LM head are the target's (shared by MTP, EAGLE, DFlash drafters)
            own = float(read) - float(embedding or 0.0)
            b.set("spec.draft_params", own, event, where)
        return
    for key, fact in _MODEL_FACTS.items():
        value = config.get(key)
        if value is None:
            continue
        b.set(fact, _number(value), event, where)
    b.set("model.config_source", where, event, where)


SPEC = EngineSpec(
    name="modelconfig",
    label="model config.json",
    kind="input",
    grammars=tuple(GRAMMARS),
    apply_config=apply_config,
    config_facts=FACTS,
)
