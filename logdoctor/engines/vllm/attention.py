"""vLLM line types: §6 attention backend (catalogue/vllm.md)."""

from __future__ import annotations

import re

from logdoctor.engines.vllm.common import Events, _base, _grammar, _msg, _names, _table_warning
from logdoctor.events import (
    AttentionBackend,
    EngineFailure,
    PerfWarning,
    WarningTopic,
)
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext

# The English names of V0 (0.6 - 0.10) and early V1 (0.7 - 0.11.0) lines, as the enum (0.11.1+) names them.
_BACKEND_ENGLISH: dict[str, str] = {
    "Flash Attention": "FLASH_ATTN",
    "FlashAttention": "FLASH_ATTN",
    "XFormers": "XFORMERS",
    "Flashinfer": "FLASHINFER",
    "FlashInfer": "FLASHINFER",
    "Torch SDPA": "TORCH_SDPA",
    "ROCmFlashAttention": "ROCM_FLASH",
    "Pallas": "PALLAS",
    "IPEX attention": "IPEX",
    "OpenVINO Attention": "OPENVINO",
    "HPUAttention": "HPU_ATTN",
    "BlocksparseFlashAttention": "BLOCK_SPARSE_FLASH_ATTN",
    "DualChunkFlashAttention": "DUAL_CHUNK_FLASH_ATTN",
    "DifferentialFlashAttention": "DIFFERENTIAL_FLASH_ATTN",
    "Triton MLA": "TRITON_MLA",
    "FlashMLA": "FLASHMLA",
    "Triton": "TRITON_ATTN",
    "FlexAttention": "FLEX_ATTENTION",
    "Tree Attention": "TREE_ATTN",
    "Cutlass MLA": "CUTLASS_MLA",
    "FlashAttention MLA": "FLASH_ATTN_MLA",
    "FlashInfer MLA": "FLASHINFER_MLA",
}
_ENGLISH_BACKEND_RE = re.compile(
    r"Using (?P<name>"
    + "|".join(re.escape(n) for n in sorted(_BACKEND_ENGLISH, key=len, reverse=True))
    + r") backend(?P<rest>(?: with [^.]*?)?(?: for (?P<for>\S+))?(?P<v1> on V1 engine)?[^.]*)\."
)
_POTENTIAL_BACKENDS_RE = re.compile(
    r"Using (?P<backend>[\w.]+) (?:attention )?backend out of potential backends: (?P<cands>[\[(][^\])]*[\])])"
)
_FORCED_BACKEND_RE = re.compile(
    r"Using (?:AttentionBackendEnum\.|_Backend\.)?(?P<backend>[A-Z0-9_]+) backend(?P<how> \(selected via --attention-backend\))?\.\s*$"
)
_ENCODER_BACKEND_RE = re.compile(
    r"Using (?:backend )?(?P<backend>(?:AttentionBackendEnum\.|_Backend\.)?[A-Z0-9_]+) for "
    r"(?:vit attention|MMEncoderAttention)"
)
_MLA_PREFILL_RE = re.compile(r"Using (?P<backend>\S+) MLA prefill backend|Using (?P<fa>FlashAttention) prefill for MLA")
_FA_VERSION_RE = re.compile(r"Using FlashAttention version (?P<ver>\d+)")
_FA_UPGRADE_RE = re.compile(r"upgrading FlashAttention (?P<old>\d) -> (?P<new>\d)")
_FA_DOWNGRADE_RE = re.compile(
    r"Cannot use FA version (?P<old>\d) (?P<why>on Blackwell platform|with ALiBi|with batch invariance),? "
    r"defaulting to FA version (?P<new>\d)(?P<maybe> if supported)?"
)
_CANNOT_USE_FA_RE = re.compile(r"Cannot use FlashAttention(?:-2)? backend (?P<why>.*?)\.?\s*$")
_FA_REASONS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"Volta and Turing"), "unsupported-gpu"),
    (re.compile(r"dtype"), "dtype"),
    (re.compile(r"FP8 KV cache"), "fp8-kv-cache"),
    (re.compile(r"head size"), "head-size"),
    (re.compile(r"block size"), "block-size"),
    (re.compile(r"sliding window"), "sliding-window"),
    (re.compile(r"package is not found|not found|not installed"), "package-missing"),
)
_BLOCK_SIZE_PRECLUDED_RE = re.compile(
    r"--block-size (?P<size>\d+) precluded higher-priority backend\(s\) (?P<precluded>.+?)\. "
    r"Using (?P<backend>[\w.]+) instead"
)
_NO_VALID_BACKEND_RE = re.compile(r"No valid attention backend found for (?P<device>\S+)")
_BACKEND_NOT_VALID_RE = re.compile(
    r"Selected backend (?:AttentionBackendEnum\.)?(?P<backend>[A-Z0-9_]+) is not valid for this configuration"
)
_FLASHINFER_MISSING_RE = re.compile(r"FlashInfer failed to import for V1 engine on Blackwell")
_PLEASE_USE_FLASHINFER_RE = re.compile(r"Please use FlashInfer backend with FP8 KV Cache for better performance")
_GEMMA4_FORCED_RE = re.compile(r"Forcing (?P<backend>[A-Z0-9_]+) backend to prevent mixed-backend")
_UNKNOWN_ENV_RE = re.compile(r"Unknown vLLM environment variable detected: (?P<name>\w+)")
_ATTENTION_ENV_DEPRECATED_RE = re.compile(r"Using (?P<name>VLLM_\w+) environment variable is deprecated")
_V1_SUFFIX_RE = re.compile(r"The suffix '_VLLM_V1' in the environment variable VLLM_ATTENTION_BACKEND")


def _normalise_backend(name: str) -> str:
    """`AttentionBackendEnum.FLASHINFER`, `_Backend.FLASH_ATTN`, `flash_attn`, `FlashInfer` -> the enum name."""
    name = name.strip().strip("'\"")
    if name in _BACKEND_ENGLISH:
        return _BACKEND_ENGLISH[name]
    name = name.rsplit(".", 1)[-1]
    name = name.removesuffix("_VLLM_V1")
    return name.upper()


def parse_attention(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _POTENTIAL_BACKENDS_RE.search(text)
    if m:
        return [
            AttentionBackend(
                **base,
                backend=_normalise_backend(m.group("backend")),
                role="target",
                candidates=[_normalise_backend(c) for c in _names(m.group("cands"))],
                message=_msg(line),
            )
        ]
    m = _ENCODER_BACKEND_RE.search(text)
    if m:
        return [
            AttentionBackend(**base, backend=_normalise_backend(m.group("backend")), role="encoder", message=_msg(line))
        ]
    m = _FORCED_BACKEND_RE.search(text)
    if m and (m.group("how") or "BackendEnum." in text or "_Backend." in text):
        # `Using AttentionBackendEnum.X backend.`: printed only when the user chose the backend (0.11.1+).
        return [
            AttentionBackend(**base, backend=_normalise_backend(m.group("backend")), forced=True, message=_msg(line))
        ]
    m = _ENGLISH_BACKEND_RE.search(text)
    if m:
        return [AttentionBackend(**base, backend=_BACKEND_ENGLISH[m.group("name")], message=_msg(line))]
    m = _FA_VERSION_RE.search(text)
    if m:
        return [AttentionBackend(**base, backend="FLASH_ATTN", version=m.group("ver"), message=_msg(line))]
    m = _FA_UPGRADE_RE.search(text)
    if m:
        return [AttentionBackend(**base, backend="FLASH_ATTN", version=m.group("new"), message=_msg(line))]
    m = _FA_DOWNGRADE_RE.search(text)
    if m:
        why = {
            "on Blackwell platform": "fa3-blackwell",
            "with ALiBi": "alibi",
            "with batch invariance": "batch-invariance",
        }
        return [
            AttentionBackend(
                **base,
                backend="FLASH_ATTN",
                version=None if m.group("maybe") else m.group("new"),
                fallback_reason=why[m.group("why")],
                message=_msg(line),
            )
        ]
    m = _CANNOT_USE_FA_RE.search(text)
    if m:
        reason = next((code for pattern, code in _FA_REASONS if pattern.search(m.group("why"))), "other")
        return [AttentionBackend(**base, fallback_reason=reason, message=_msg(line))]
    m = _BLOCK_SIZE_PRECLUDED_RE.search(text)
    if m:
        chosen = _normalise_backend(m.group("backend"))
        precluded = [_normalise_backend(b) for b in _names(m.group("precluded"))]
        return [
            AttentionBackend(
                **base,
                backend=chosen,
                candidates=[*precluded, chosen],
                fallback_reason="block-size",
                message=_msg(line),
            )
        ]
    m = _MLA_PREFILL_RE.search(text)
    if m:
        backend = _normalise_backend(m.group("backend") or m.group("fa"))
        return [AttentionBackend(**base, backend=backend, role="prefill", message=_msg(line))]
    m = _BACKEND_NOT_VALID_RE.search(text)
    if m:
        return [
            AttentionBackend(**base, backend=m.group("backend"), fallback_reason="not-valid", message=_msg(line)),
            EngineFailure(**base, kind="startup-failed", message=_msg(line)),
        ]
    if _NO_VALID_BACKEND_RE.search(text):
        return [
            AttentionBackend(**base, fallback_reason="no-valid-backend", message=_msg(line)),
            EngineFailure(**base, kind="startup-failed", message=_msg(line)),
        ]
    if _FLASHINFER_MISSING_RE.search(text):
        return [AttentionBackend(**base, fallback_reason="flashinfer-missing", message=_msg(line))]
    m = _GEMMA4_FORCED_RE.search(text)
    if m:
        return [
            AttentionBackend(
                **base, backend=m.group("backend"), fallback_reason="heterogeneous-head-dim", message=_msg(line)
            )
        ]
    if _PLEASE_USE_FLASHINFER_RE.search(text):
        return [PerfWarning(**base, topic="attention-backend", message=_msg(line))]
    return None


_ENV_WARNINGS: tuple[tuple[re.Pattern[str], WarningTopic], ...] = (
    (re.compile(r"Overwriting environment variable \S+ from"), "env-override"),
    (re.compile(r"VLLM_TRACE_FUNCTION is enabled"), "trace-function"),
    (re.compile(r"OMP_NUM_THREADS=\S+ is set; leaving Torch threads"), "cpu-threads"),
)


def parse_env_warnings(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _UNKNOWN_ENV_RE.search(text)
    if m:
        events: Events = [PerfWarning(**base, topic="env-unknown", message=_msg(line))]
        if m.group("name") == "VLLM_ATTENTION_BACKEND":
            # 0.15+ ignores the variable: whatever backend the user meant to force is not in effect.
            events.append(AttentionBackend(**base, fallback_reason="env-var-ignored", message=_msg(line)))
        return events
    if _ATTENTION_ENV_DEPRECATED_RE.search(text) or _V1_SUFFIX_RE.search(text):
        return [PerfWarning(**base, topic="env-deprecated", message=_msg(line))]
    warning = _table_warning(_ENV_WARNINGS, text, base, line)
    if warning is not None:
        return warning
    return None


GRAMMARS: list[Grammar] = [
    _grammar(
        "attention",
        (
            "backend out of potential backends",
            "Using AttentionBackendEnum.",
            "for vit attention",
            "for MMEncoderAttention",
            "backend (selected via --attention-backend)",
            *(f"Using {name} backend" for name in _BACKEND_ENGLISH),
            "Using FlashAttention version",
            "upgrading FlashAttention",
            "Cannot use FA version",
            "Cannot use FlashAttention",
            "precluded higher-priority backend",
            "MLA prefill backend",
            "Using FlashAttention prefill for MLA",
            "No valid attention backend found",
            "is not valid for this configuration",
            "FlashInfer failed to import",
            "Please use FlashInfer backend with FP8 KV Cache",
            "backend to prevent mixed-backend",
        ),
        parse_attention,
        (
            "INFO 02-19 19:18:30 cuda.py:230] Using Flash Attention backend.",
            "INFO 06-04 13:12:34 [cuda.py:217] Using Flash Attention backend on V1 engine.",
            "(Worker_TP0 pid=117124) INFO 01-04 14:48:25 [cuda.py:351] Using FLASH_ATTN attention backend out of "
            "potential backends: ('FLASH_ATTN', 'FLASHINFER', 'TRITON_ATTN', 'FLEX_ATTENTION')",
            "(Worker_TP1 pid=3261) INFO 04-27 12:49:29 [cuda.py:337] Using AttentionBackendEnum.FLASH_ATTN_V100 "
            "backend.",
            "INFO 08-07 16:06:47 selector.py:189] Cannot use FlashAttention-2 backend because the vllm_flash_attn "
            "package is not found. `pip install vllm-flash-attn` for better performance.",
            "(EngineCore pid=144178) INFO 07-28 09:43:02 [flash_attn.py:789] Using FlashAttention version 2",
        ),
    ),
    _grammar(
        "env",
        (
            "Unknown vLLM environment variable detected",
            "environment variable is deprecated",
            "The suffix '_VLLM_V1'",
            "Overwriting environment variable",
            "VLLM_TRACE_FUNCTION is enabled",
            "leaving Torch threads",
        ),
        parse_env_warnings,
        (
            "(APIServer pid=1) WARNING 02-26 10:00:00 [envs.py:1650] Unknown vLLM environment variable detected: "
            "VLLM_ATTENTION_BACKEND",
        ),
    ),
]
