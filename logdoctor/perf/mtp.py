"""The model's own MTP head: whether the log says the checkpoint ships one, and the acceptance such a head is
published to reach for that model family, with its source.

    head = mtp_head(profile)            # "its architecture Qwen3_5ForConditionalGeneration ships an MTP head"
    typical = mtp_acceptance(profile)   # Qwen3.x: 2.52 at k=3 (vLLM 0.20.1, Qwen3.6-27B)

Never from the model's name: a log renamed to another model keeps its architecture line, and a name says nothing
of whether the checkpoint kept its MTP layers.
"""

from __future__ import annotations

from logdoctor.facts import speculation
from logdoctor.perf.adapter import FactSource

# Architectures whose checkpoints ship their own MTP head (vLLM's SpeculativeConfig maps their model types to an
# MTP drafter: qwen3_next_mtp, qwen3_5_mtp, mimo_mtp, glm4_moe_mtp, ernie_mtp). DeepseekV3ForCausalLM is left to the
# config.json (`num_nextn_predict_layers`): checkpoints of that architecture without MTP layers exist.
MTP_ARCHITECTURES = frozenset(
    {
        "Qwen3NextForCausalLM",
        "Qwen3_5ForConditionalGeneration",
        "Qwen3_5MoeForConditionalGeneration",
        "Qwen3_5ForCausalLM",
        "Qwen3_5MoeForCausalLM",
        "MiMoForCausalLM",
        "Glm4MoeForCausalLM",
        "Ernie4_5_MoeForCausalLM",
    }
)

# What a model family's own MTP head reaches (docs/expected-performance.md, "Typical acceptance"): the one table the
# acceptance rule reads too (logdoctor/facts/speculation.py ACCEPTANCE_BY_MTP_FAMILY).
QWEN_MTP = speculation.ACCEPTANCE_BY_MTP_FAMILY["Qwen3.x"]
DEEPSEEK_MTP = speculation.TYPICAL_ACCEPTANCE["mtp"]


def mtp_head(profile: FactSource) -> str | None:
    """Where the log says the model ships its own MTP head (its config.json's MTP layers, or an architecture whose
    checkpoints carry one), or None."""
    layers = profile.value("model.mtp_layers")
    if isinstance(layers, int | float) and not isinstance(layers, bool):
        return f"its config.json has {int(layers)} MTP layer(s)" if layers >= 1 else None
    arch = str(profile.value("model.architecture") or "")
    if arch in MTP_ARCHITECTURES:
        return f"its architecture {arch} ships an MTP head"
    return None


def mtp_acceptance(profile: FactSource) -> tuple[speculation.TypicalAcceptance, str]:
    """The published acceptance of this model family's MTP head and the family it is of: Qwen3.x (Qwen3-Next,
    Qwen3.5, Qwen3.6) from Qwen's own head, DeepSeek's for DeepSeek and, where no figure of the family is published
    (MiMo, GLM, ERNIE), DeepSeek's, said as another family's."""
    arch = str(profile.value("model.architecture") or "")
    if arch.startswith("Qwen3"):
        return QWEN_MTP, "Qwen3.x MTP heads"
    if arch.lower().startswith("deepseek") or not arch:
        return DEEPSEEK_MTP, "DeepSeek's MTP head" + ("" if arch else " (the architecture is not in the log)")
    return DEEPSEEK_MTP, f"DeepSeek's MTP head (no published figure for {arch})"


def is_mtp(method: str) -> bool:
    return "mtp" in method.lower() or method.lower() in ("nextn", "deepseek_mtp")


__all__ = ["DEEPSEEK_MTP", "MTP_ARCHITECTURES", "QWEN_MTP", "is_mtp", "mtp_acceptance", "mtp_head"]
