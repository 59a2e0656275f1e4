"""SGLang line types: the attention backend."""

from __future__ import annotations

import re
from typing import Any

from logdoctor.engines.sglang.common import AttentionRole, Build, Rule, _apply, _backend, _ev, _grammar
from logdoctor.events import (
    AttentionBackend,
    EventBase,
)
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

# --- attention backend -----------------------------------------------------------------------------


def _attention(role: AttentionRole = "target", fallback: str | None = None) -> Build:
    def build(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
        return [
            AttentionBackend(
                **base,
                backend=_backend(m.group("b")),
                role=role,
                fallback_reason=fallback,
                message=message,
            )
        ]

    return build


def _mla(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    role: AttentionRole = "decode" if m.group("what") == "decode" else "target"
    return [AttentionBackend(**base, backend=_backend(m.group("b")), role=role, message=message)]


def _hybrid_attention(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    return [
        AttentionBackend(**base, backend=_backend(m.group("decode")), role="decode", message=message),
        AttentionBackend(**base, backend=_backend(m.group("prefill")), role="prefill", message=message),
    ]


_ATTENTION_RULES = [
    Rule(
        re.compile(r"Attention backend not specified\. Falling back to '(?P<b>[^']+)' for deterministic inference"),
        _attention(fallback="deterministic inference"),
    ),
    Rule(
        re.compile(r"Attention backend not (?:set|explicitly specified|specified)\. Use (?P<b>\S+) backend by default"),
        _attention(),
    ),
    Rule(re.compile(r"MLA optimization is turned on\. Use (?P<b>.+?) (?P<what>backend|decode)\."), _mla),
    Rule(
        re.compile(
            r"Using hybrid attention backend for decode and prefill: decode_backend=(?P<decode>[^,\s]+), "
            r"prefill_backend=(?P<prefill>[\w-]+)"
        ),
        _hybrid_attention,
    ),
    Rule(re.compile(r"Overriding draft attention backend to (?P<b>[\w-]+)"), _attention(role="drafter")),
    Rule(
        re.compile(r"FlashAttention3 only supports fp8_e4m3 if using FP8; Setting attention backend to (?P<b>\w+)"),
        _attention(fallback="FlashAttention3 does not support this FP8 KV-cache dtype"),
    ),
    Rule(re.compile(r"Multimodal attention backend not set\. Use (?P<b>\w+)"), _attention(role="encoder")),
    Rule(re.compile(r"\bUsing (?P<b>[\w-]+) as attention backend for "), _attention()),
    Rule(re.compile(r"\bUse (?P<b>[\w-]+) as attention backend (?:on \S+ )?for "), _attention()),
    Rule(
        re.compile("Attention backend is set to (?P<backend>\\w+) because of enabling cuda graph in diffusion LLM"),
        _ev(AttentionBackend),
    ),
    Rule(
        re.compile("draft worker does not support attention_backend '[^']*' on \\w+\\. Falling back to"),
        _ev(AttentionBackend, role="drafter", fallback_reason="unsupported-by-drafter"),
    ),
    Rule(re.compile("Auto-select (?P<backend>\\w+) attention backend for \\w+ on"), _ev(AttentionBackend)),
]


def parse_attention(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    return _apply(_ATTENTION_RULES, line, ctx)


GRAMMARS: list[Grammar] = [
    _grammar(
        "attention",
        (
            "Attention backend not",
            "MLA optimization is turned on",
            "Using hybrid attention backend",
            "as attention backend",
            "draft attention backend to",
            "Setting attention backend to",
            "Multimodal attention backend not set",
            "Attention backend is set to flashinfer because of enabling cuda graph in diffusion",
            "draft worker does not support attention_backend",
            "Auto-select ",
        ),
        parse_attention,
        (
            case(
                "sample-1",
                "[2025-08-01 10:01:12 TP0] Attention backend not explicitly specified. Use fa3 backend by default.",
                ("attention_backend", {}),
            ),
            case(
                "sample-2",
                "[2025-03-31 04:29:49 TP0] MLA optimization is turned on. Use triton backend.",
                ("attention_backend", {}),
            ),
            case(
                "row-1",
                "WARNING:sglang.srt.server_args:Attention backend not explicitly specified. Use flashinfer backend by default.",
                ("attention_backend", {"backend": "FLASHINFER", "role": "target", "level": "WARNING"}),
                exact=True,
            ),
            case(
                "row-2",
                "[2025-06-20 10:01:12 TP0] Attention backend not set. Use flashinfer backend by default.",
                ("attention_backend", {"backend": "FLASHINFER"}),
                exact=True,
            ),
            case(
                "row-3",
                "[2025-08-01 10:01:12 TP0] Attention backend not explicitly specified. Use fa3 backend by default.",
                ("attention_backend", {"backend": "FA3"}),
                exact=True,
            ),
            case(
                "row-4",
                "[2026-01-20 10:01:12] Attention backend not specified. Use trtllm_mha backend by default.",
                ("attention_backend", {"backend": "TRTLLM_MHA"}),
                exact=True,
            ),
            case(
                "row-5",
                "[2025-03-31 04:29:49 TP0] MLA optimization is turned on. Use triton backend.",
                ("attention_backend", {"backend": "TRITON", "role": "target"}),
                exact=True,
            ),
            case(
                "row-6",
                "[2025-03-01 10:00:00 TP0] MLA optimization is turned on. Use flashinfer mla backend.",
                ("attention_backend", {"backend": "FLASHINFER_MLA"}),
                exact=True,
            ),
            case(
                "row-7",
                "[2025-04-01 10:00:00 TP0] MLA optimization is turned on. Use flashmla decode.",
                ("attention_backend", {"backend": "FLASHMLA", "role": "decode"}),
                exact=True,
            ),
            case(
                "row-8",
                "[2025-08-01 10:00:00 TP0] Using hybrid attention backend for decode and prefill: decode_backend=flashinfer, "
                "prefill_backend=fa3.",
                ("attention_backend", {"backend": "FLASHINFER", "role": "decode"}),
                ("attention_backend", {"backend": "FA3", "role": "prefill"}),
                exact=True,
            ),
            case(
                "row-9",
                "[2025-10-01 10:00:00] Use trtllm_mla as attention backend on sm100 for DeepseekV3ForCausalLM",
                ("attention_backend", {"backend": "TRTLLM_MLA"}),
                exact=True,
            ),
            case(
                "row-10",
                "[2026-03-01 10:00:00] Using triton as attention backend for Qwen3NextForCausalLM.",
                ("attention_backend", {"backend": "TRITON"}),
                exact=True,
            ),
            case(
                "row-11",
                "[2026-01-01 10:00:00] Overriding draft attention backend to triton.",
                ("attention_backend", {"backend": "TRITON", "role": "drafter"}),
                exact=True,
            ),
            case(
                "row-12",
                "[2025-05-01 10:00:00] FlashAttention3 only supports fp8_e4m3 if using FP8; Setting attention backend to triton.",
                (
                    "attention_backend",
                    {
                        "backend": "TRITON",
                        "fallback_reason": "FlashAttention3 does not support this FP8 KV-cache dtype",
                    },
                ),
                exact=True,
            ),
            case(
                "row-13",
                "[2025-12-01 10:00:00] Attention backend not specified. Falling back to 'triton' for deterministic inference. "
                "You can explicitly set --attention-backend to one of ['fa3', 'flashinfer', 'triton'].",
                ("attention_backend", {"backend": "TRITON", "fallback_reason": "deterministic inference"}),
                exact=True,
            ),
            case(
                "row-14",
                "[2025-09-01 10:00:00 TP0] Multimodal attention backend not set. Use sdpa.",
                ("attention_backend", {"backend": "SDPA", "role": "encoder"}),
                exact=True,
            ),
            case(
                "v0.5.23-attention-backend-is-set-to-flashinfer-b",
                "[2025-11-30 10:00:00 TP0] Attention backend is set to flashinfer because of enabling cuda graph in diffusion LLM inference",
                ("attention_backend", {"backend": "FLASHINFER"}),
            ),
            case(
                "v0.5.23-draft-worker-does-not-support-attention-",
                "[2025-11-30 10:00:00 TP0] DFLASH draft worker does not support attention_backend 'fa4' on CudaPlatform. Falling back to 'fallback_backend'.",
                ("attention_backend", {"role": "drafter"}),
            ),
            case(
                "v0.5.23-auto-select",
                "[2025-11-30 10:00:00 TP0] Auto-select fa4 attention backend for Step3p7 on Blackwell.",
                ("attention_backend", {"backend": "FA4"}),
            ),
        ),
    ),
]
