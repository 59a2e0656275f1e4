"""A Hugging Face `config.json` -> the model's shape: what a decode step reads, layer by layer.

    shape_of({"architectures": ["Qwen3MoeForCausalLM"], "num_hidden_layers": 48, "hidden_size": 2048,
              "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768, ...})
    -> Shape(layers=48, hidden_size=2048, experts=128, experts_active=8, params=30.5e9, read_params=3.0e9, ...)

The parameter counts follow each architecture's modelling code in transformers (the weight matrices of one
decoder layer; norms and biases are under 0.1% and left out):

* attention (GQA): q = h x H x d, k and v = h x KV x d each, o = H x d x h (`LlamaAttention`, `Qwen3Attention`);
  a gated attention output (Qwen3-Next / Qwen3.5 `attn_output_gate`) doubles q;
* MLA (DeepSeek-V2/V3 `DeepseekV3Attention`): q_a = h x q_lora, q_b = q_lora x H x (nope + rope), kv_a = h x
  (kv_lora + rope), kv_b = kv_lora x H x (nope + v), o = H x v x h (q = h x H x (nope + rope) without q_lora);
* linear attention (Qwen3-Next / Qwen3.5 `GatedDeltaNet`): in_proj_qkvz = h x (2 x Kh x Kd + 2 x Vh x Vd),
  in_proj_ba = h x 2 x Vh, out_proj = Vh x Vd x h;
* MLP: 3 x h x I (gate, up, down); MoE: each expert 3 x h x I_moe, a router h x E, shared experts 3 x h x I_shared
  (`shared_expert_intermediate_size`, or `n_shared_experts` x I_moe); a token reads its top-k experts and the
  shared ones; DeepSeek's first `first_k_dense_replace` layers are dense;
* embedding and LM head: vocab x h each, one matrix when `tie_word_embeddings`.

`read_params` is what one decode step reads for one token: every layer's attention and the active share of its
MLP, plus the LM head; not the input embedding (a step gathers B rows of it), not a vision tower
(`vision_config`), not the MTP layers a checkpoint ships for speculation (`num_nextn_predict_layers`,
`mtp_num_hidden_layers`): those are loaded, and counted in the engine's `Model loading took` figure, but a target
decode step does not read them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# Architecture words that name a drafter rather than a model to serve (DFlashDraftModel, LlamaForCausalLMEagle3,
# Eagle3LlamaForCausalLM, EagleLlamaForCausalLM, MedusaModel, Qwen3_5MTP / DeepSeekMTPModel).
_DRAFTER_WORDS = (("dflash", "dflash"), ("eagle3", "eagle3"), ("eagle", "eagle"), ("medusa", "medusa"), ("mtp", "mtp"))


def _int(cfg: Mapping[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = cfg.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int) and value > 0:
            return value
        if isinstance(value, float) and value.is_integer() and value > 0:
            return int(value)
    return None


@dataclass(frozen=True)
class Shape:
    """The shape of one model (or drafter) as its config.json gives it; None where the config does not say."""

    architecture: str
    model_type: str | None
    layers: int
    hidden_size: int
    vocab_size: int | None
    tied_embeddings: bool
    heads: int | None
    kv_heads: int | None
    head_dim: int | None
    intermediate_size: int | None
    experts: int | None  # routed experts per MoE layer
    experts_active: int | None  # routed experts a token reads
    full_attention_layers: int | None  # hybrids: layers with a KV cache
    linear_attention_layers: int | None
    mtp_layers: int | None  # MTP modules shipped with the checkpoint (speculation)
    vision: bool  # a vision tower (`vision_config`)
    dtype: str | None
    quant_method: str | None
    drafter: str | None  # the method, when the architecture names a drafter
    drafter_block_size: int | None  # DFlash: tokens drafted in one pass
    target_layers: int | None  # a drafter's `num_target_layers`
    params: float | None  # total parameters of the text model (embedding and LM head included)
    read_params: float | None  # what one decode step reads for one token (see the module docstring)
    embedding_params: float | None  # vocab x h (the input embedding; the LM head is as large)

    @property
    def active_fraction(self) -> float | None:
        if self.params and self.read_params:
            return self.read_params / self.params
        return None


def text_config(cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    """The language model's own keys: a multimodal config nests them under `text_config` (Qwen3.5, Llama 4,
    Gemma 3), a speculators drafter under `transformer_layer_config`; the top level wins for keys both have only
    where the nested one lacks them."""
    for key in ("text_config", "transformer_layer_config"):
        nested = cfg.get(key)
        if isinstance(nested, Mapping) and _int(nested, "num_hidden_layers", "hidden_size"):
            return {**{k: v for k, v in cfg.items() if k != key}, **nested}
    return cfg


def drafter_method(architecture: str, cfg: Mapping[str, Any]) -> str | None:
    low = architecture.lower()
    for word, method in _DRAFTER_WORDS:
        if word in low:
            return method
    if "dflash_config" in cfg or cfg.get("speculators_model_type") == "dflash":
        return "dflash"
    return None


def is_model_config(cfg: Mapping[str, Any]) -> bool:
    """A config.json of a model or a drafter: an `architectures` list and a layer count with a hidden size."""
    arch = cfg.get("architectures")
    if not isinstance(arch, list) or not arch or not all(isinstance(a, str) for a in arch):
        return False
    text = text_config(cfg)
    return (
        _int(text, "num_hidden_layers", "n_layer", "num_layers") is not None and _int(text, "hidden_size") is not None
    )


def _attention_params(t: Mapping[str, Any], h: int) -> float | None:
    heads = _int(t, "num_attention_heads")
    if heads is None:
        return None
    kv_lora = _int(t, "kv_lora_rank")
    if kv_lora is not None:  # MLA
        nope = _int(t, "qk_nope_head_dim") or 0
        rope = _int(t, "qk_rope_head_dim") or 0
        v = _int(t, "v_head_dim") or nope
        q_lora = _int(t, "q_lora_rank")
        q = h * q_lora + q_lora * heads * (nope + rope) if q_lora else h * heads * (nope + rope)
        return float(q + h * (kv_lora + rope) + kv_lora * heads * (nope + v) + heads * v * h)
    kv = _int(t, "num_key_value_heads") or heads
    d = _int(t, "head_dim") or h // heads
    gate = 2 if t.get("attn_output_gate") is True or t.get("model_type") in ("qwen3_next", "qwen3_5_text") else 1
    return float(h * heads * d * gate + 2 * h * kv * d + heads * d * h)


def _linear_attention_params(t: Mapping[str, Any], h: int) -> float | None:
    kh, kd = _int(t, "linear_num_key_heads"), _int(t, "linear_key_head_dim")
    vh, vd = _int(t, "linear_num_value_heads"), _int(t, "linear_value_head_dim")
    if None in (kh, kd, vh, vd):
        return None
    assert kh and kd and vh and vd
    return float(h * (2 * kh * kd + 2 * vh * vd) + h * 2 * vh + vh * vd * h)


def _layer_kinds(t: Mapping[str, Any], layers: int) -> tuple[int | None, int | None]:
    """(full-attention layers, linear-attention layers) of a hybrid; (None, None) for a plain transformer."""
    kinds = t.get("layer_types")
    if isinstance(kinds, list) and len(kinds) == layers and all(isinstance(k, str) for k in kinds):
        linear = sum(1 for k in kinds if "linear" in k)
        if linear:
            return layers - linear, linear
        return None, None
    interval = _int(t, "full_attention_interval")
    if interval and _int(t, "linear_num_value_heads"):
        full = layers // interval
        return full, layers - full
    return None, None


def shape_of(cfg: Mapping[str, Any]) -> Shape | None:
    """The shape a config.json describes; None when it is not a model's config (`is_model_config`)."""
    if not is_model_config(cfg):
        return None
    architecture = str(cfg["architectures"][0])
    t = text_config(cfg)
    layers = _int(t, "num_hidden_layers", "n_layer", "num_layers")
    h = _int(t, "hidden_size")
    assert layers is not None and h is not None
    vocab = _int(t, "vocab_size") or _int(cfg, "vocab_size")
    tied_value = cfg.get("tie_word_embeddings", t.get("tie_word_embeddings"))
    tied = tied_value is True
    heads = _int(t, "num_attention_heads")
    kv_heads = _int(t, "num_key_value_heads") or heads
    head_dim = _int(t, "head_dim") or (h // heads if heads else None)
    inter = _int(t, "intermediate_size")
    experts = _int(t, "num_experts", "n_routed_experts", "num_local_experts")
    top_k = _int(t, "num_experts_per_tok", "moe_topk", "num_experts_per_token") if experts else None
    moe_inter = _int(t, "moe_intermediate_size") or inter
    shared_inter = _int(t, "shared_expert_intermediate_size")
    if shared_inter is None and experts and moe_inter:
        shared_inter = (_int(t, "n_shared_experts") or 0) * moe_inter
    dense_first = _int(t, "first_k_dense_replace") or 0
    full, linear = _layer_kinds(t, layers)
    mtp = _int(t, "num_nextn_predict_layers", "mtp_num_hidden_layers")
    drafter = drafter_method(architecture, cfg)
    dflash = cfg.get("dflash_config")
    block = _int(cfg, "block_size") or (_int(dflash, "block_size") if isinstance(dflash, Mapping) else None)
    quant = cfg.get("quantization_config")
    quant_method = str(quant.get("quant_method")) if isinstance(quant, Mapping) and quant.get("quant_method") else None
    dtype = cfg.get("torch_dtype", cfg.get("dtype", t.get("torch_dtype", t.get("dtype"))))

    params: float | None = None
    read: float | None = None
    embedding = float(vocab * h) if vocab else None
    attn = _attention_params(t, h)
    lin = _linear_attention_params(t, h) if linear else None
    if attn is not None and inter is not None and (not linear or lin is not None):
        mixers = attn * (full if full is not None else layers) + (lin or 0.0) * (linear or 0)
        dense_mlp = 3.0 * h * inter
        if experts and moe_inter:
            expert = 3.0 * h * moe_inter
            shared = 3.0 * h * (shared_inter or 0)
            moe_layers = layers - dense_first
            total_mlp = dense_first * dense_mlp + moe_layers * (experts * expert + shared + h * experts)
            active_mlp = dense_first * dense_mlp + moe_layers * ((top_k or experts) * expert + shared + h * experts)
        else:
            total_mlp = active_mlp = layers * dense_mlp
        head = embedding or 0.0
        params = mixers + total_mlp + head * (1 if tied else 2)
        read = mixers + active_mlp + head  # the LM head (tied or not); the input embedding is gathered
    return Shape(
        architecture=architecture,
        model_type=str(t.get("model_type")) if t.get("model_type") else None,
        layers=layers,
        hidden_size=h,
        vocab_size=vocab,
        tied_embeddings=tied,
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate_size=inter,
        experts=experts,
        experts_active=top_k,
        full_attention_layers=full,
        linear_attention_layers=linear,
        mtp_layers=mtp,
        vision=isinstance(cfg.get("vision_config"), Mapping),
        dtype=str(dtype) if isinstance(dtype, str) else None,
        quant_method=quant_method,
        drafter=drafter,
        drafter_block_size=block if drafter == "dflash" else None,
        target_layers=_int(cfg, "num_target_layers"),
        params=params,
        read_params=read,
        embedding_params=embedding,
    )


def drafter_params(shape: Shape) -> float | None:
    """A drafter's own weights, without the embedding and LM head it shares with the target (vLLM and SGLang share
    them for MTP, EAGLE and DFlash drafters: `Sharing target model lm_head weights`): its layers only."""
    if shape.read_params is None:
        return None
    return shape.read_params - (shape.embedding_params or 0.0)
