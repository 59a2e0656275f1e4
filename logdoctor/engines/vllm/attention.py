"""vLLM line types: §6 attention backend (catalogue/vllm.md)."""

from __future__ import annotations

import re

from logdoctor.engines.vllm.common import (
    Events,
    NoticeBuild,
    _base,
    _event,
    _grammar,
    _msg,
    _names,
    _notices,
    _table_warning,
)
from logdoctor.events import AttentionBackend, EngineFailure, PerfWarning, WarningTopic
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

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
# vLLM 0.33 (v1/attention/backends/fa_utils.py, flash_attn.py): FA4 kernels on Blackwell that cannot run a shape.
_FA4_DOWNGRADE_RE = re.compile(
    r"FA4(?:'s Blackwell head_size=256 kernel| on Blackwell) does not support .*?defaulting to FA version (?P<new>\d)"
)
# fa_utils.py (0.6-0.10): `Cannot use FA version %d is not supported due to %s`, the reason from the flash-attn
# build: "FA2 is only supported on devices with compute capability >= 8" (Volta/Turing: the GPU has no FA at all,
# so what vLLM picks next is the only backend it has) or "FA3 ... >= 9" (vLLM then uses FA2).
_FA_UNSUPPORTED_RE = re.compile(r"Cannot use FA version (?P<old>\d) is not supported due to (?P<why>.+)")
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
    m = _FA4_DOWNGRADE_RE.search(text)
    if m:
        return [
            AttentionBackend(
                **base,
                backend="FLASH_ATTN",
                version=m.group("new"),
                fallback_reason="fa4-blackwell",
                message=_msg(line),
            )
        ]
    m = _FA_UNSUPPORTED_RE.search(text)
    if m:
        reason = "compute-capability" if "compute capability" in m.group("why") else "other"
        return [AttentionBackend(**base, fallback_reason=reason, message=_msg(line))]
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


# One-message notices of vLLM 0.33 (rendered from its wheel by the drift check, docs/drift.md): one row a
# message, first match wins; the line type's cases hold one line of each.
_NOTICES: tuple[tuple[re.Pattern[str], NoticeBuild], ...] = (
    (
        re.compile(
            "is not yet compatible with FlashAttention >= 3\\. Overriding flash_attn_version to (?P<version>\\d+)"
        ),
        _event(AttentionBackend, backend="FLASH_ATTN", fallback_reason="incompatible"),
    ),
    (
        re.compile(
            "VLLM_BATCH_INVARIANT is enabled and no attention backend was specified; defaulting to (?P<backend>[A-Z_]+)"
        ),
        _event(AttentionBackend),
    ),
    (
        re.compile(
            "FlashInfer XQA decode does not support .*?; reverting this KV-cache group to native FlashInfer decode"
        ),
        _event(AttentionBackend, backend="FLASHINFER", fallback_reason="unsupported-head-dim"),
    ),
    (
        re.compile("has heterogeneous head dimensions .*?FA4 not available, forcing (?P<backend>[A-Z_]+) backend"),
        _event(AttentionBackend, fallback_reason="heterogeneous-head-dim"),
    ),
    (
        re.compile("attention backend not specified; defaulting to (?P<backend>[A-Z_]+) \\(validated backend"),
        _event(AttentionBackend),
    ),
    (re.compile("Cannot use (?P<backend>[A-Z_]+) backend on CPU\\."), _event(AttentionBackend, fallback_reason="cpu")),
    (
        re.compile("FlashAttnMLA on XPU is not valid for this configuration .*?falling back to Triton MLA backend"),
        _event(AttentionBackend, backend="TRITON_MLA", fallback_reason="unsupported-config"),
    ),
    (
        re.compile("flash_attn is not available, the model may not yield the exactly same result"),
        _event(AttentionBackend, role="encoder", fallback_reason="flash-attn-missing"),
    ),
)


def parse_attention_notices(line: LogLine, ctx: ParseContext) -> Events | None:
    return _notices(_NOTICES, line, ctx)


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
            "defaulting to FA version",
        ),
        parse_attention,
        (
            case(
                "sample-1",
                "INFO 08-07 16:06:47 selector.py:189] Cannot use FlashAttention-2 backend because the vllm_flash_attn "
                "package is not found. `pip install vllm-flash-attn` for better performance.",
                ("attention_backend", {}),
            ),
            case(
                "sample-2",
                "(EngineCore pid=144178) INFO 07-28 09:43:02 [flash_attn.py:789] Using FlashAttention version 2",
                ("attention_backend", {}),
            ),
            case(
                "attn-v0-flash",
                "INFO 02-19 19:18:30 cuda.py:230] Using Flash Attention backend.",
                ("attention_backend", {"backend": "FLASH_ATTN", "forced": False}),
            ),
            case(
                "attn-v0-xformers-after-fa-missing",
                "INFO 08-07 16:06:47 selector.py:189] Cannot use FlashAttention-2 backend because the vllm_flash_attn package "
                "is not found. `pip install vllm-flash-attn` for better performance.\n"
                "INFO 08-07 16:06:47 selector.py:54] Using XFormers backend.",
                ("attention_backend", {"backend": None, "fallback_reason": "package-missing"}),
                ("attention_backend", {"backend": "XFORMERS"}),
            ),
            case(
                "attn-no-header-pasted",
                " Cannot use FlashAttention-2 backend because the flash_attn package is not found. Please install it for "
                "better performance.\n Using XFormers backend.",
                ("attention_backend", {"fallback_reason": "package-missing"}),
                ("attention_backend", {"backend": "XFORMERS"}),
            ),
            case(
                "attn-v0-flashinfer-0.6",
                "INFO 10-01 10:00:00 selector.py:141] Using Flashinfer backend.",
                ("attention_backend", {"backend": "FLASHINFER"}),
            ),
            case(
                "attn-v0-sdpa",
                "INFO 10-01 10:00:00 cpu.py:30] Using Torch SDPA backend.",
                ("attention_backend", {"backend": "TORCH_SDPA"}),
            ),
            case(
                "attn-v0-rocm",
                "INFO 10-01 10:00:00 rocm.py:110] Using ROCmFlashAttention backend.",
                ("attention_backend", {"backend": "ROCM_FLASH"}),
            ),
            case(
                "attn-v1-0.9-flash",
                "INFO 06-04 13:12:34 [cuda.py:217] Using Flash Attention backend on V1 engine.",
                ("attention_backend", {"backend": "FLASH_ATTN"}),
            ),
            case(
                "attn-v1-triton-ray",
                "(EngineCore_0 pid=1159) (RayWorkerWrapper pid=345, ip=10.42.9.225) INFO 09-10 23:27:30 [cuda.py:323] Using "
                "Triton backend on V1 engine. [repeated 3x across cluster]",
                ("attention_backend", {"backend": "TRITON_ATTN"}),
            ),
            case(
                "attn-v1-flex-for",
                "INFO 08-01 10:00:00 [cuda.py:250] Using FlexAttention backend for head_size=72 on V1 engine.",
                ("attention_backend", {"backend": "FLEX_ATTENTION"}),
            ),
            case(
                "attn-v1-blackwell-hnd",
                "INFO 08-01 10:00:00 [cuda.py:230] Using FlashInfer backend with HND KV cache layout on V1 engine by default for "
                "Blackwell (SM 10.0) GPUs.",
                ("attention_backend", {"backend": "FLASHINFER"}),
            ),
            case(
                "attn-0.14-tuple",
                "(Worker_TP0 pid=117124) INFO 01-04 14:48:25 [cuda.py:351] Using FLASH_ATTN attention backend out of potential "
                "backends: ('FLASH_ATTN', 'FLASHINFER', 'TRITON_ATTN', 'FLEX_ATTENTION')",
                (
                    "attention_backend",
                    {
                        "backend": "FLASH_ATTN",
                        "role": "target",
                        "candidates": ["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION"],
                    },
                ),
            ),
            case(
                "attn-0.12-list-triton",
                "(Worker_TP0 pid=7) INFO 12-05 10:00:00 [cuda.py:340] Using TRITON_ATTN attention backend out of potential "
                "backends: ['TRITON_ATTN', 'FLEX_ATTENTION']",
                ("attention_backend", {"backend": "TRITON_ATTN", "candidates": ["TRITON_ATTN", "FLEX_ATTENTION"]}),
            ),
            case(
                "attn-forced-enum",
                "(Worker_TP1 pid=3261) INFO 04-27 12:49:29 [cuda.py:337] Using AttentionBackendEnum.FLASH_ATTN_V100 backend.",
                ("attention_backend", {"backend": "FLASH_ATTN_V100", "forced": True}),
            ),
            case(
                "attn-encoder-mm",
                "(Worker_TP0 pid=3259) INFO 04-27 12:49:29 [mm_encoder_attention.py:77] Using AttentionBackendEnum.TORCH_SDPA for "
                "MMEncoderAttention.",
                ("attention_backend", {"backend": "TORCH_SDPA", "role": "encoder", "forced": False}),
            ),
            case(
                "attn-encoder-vit",
                "(Worker_TP0 pid=7) INFO 01-20 10:00:00 [vision.py:90] Using backend AttentionBackendEnum.FLASH_ATTN for vit "
                "attention",
                ("attention_backend", {"backend": "FLASH_ATTN", "role": "encoder"}),
            ),
            case(
                "attn-rocm-forced",
                "(Worker_TP0 pid=7) INFO 04-10 10:00:00 [rocm.py:300] Using ROCM_AITER_FA backend (selected via "
                "--attention-backend).",
                ("attention_backend", {"backend": "ROCM_AITER_FA", "forced": True}),
            ),
            case(
                "attn-cannot-fa2-volta",
                "INFO 10-01 10:00:00 selector.py:120] Cannot use FlashAttention-2 backend for Volta and Turing GPUs.",
                ("attention_backend", {"fallback_reason": "unsupported-gpu"}),
            ),
            case(
                "attn-cannot-fa2-dtype",
                "INFO 10-01 10:00:00 selector.py:120] Cannot use FlashAttention-2 backend for dtype other than torch.float16 or "
                "torch.bfloat16.",
                ("attention_backend", {"fallback_reason": "dtype"}),
            ),
            case(
                "attn-cannot-fa-fp8-kv",
                "INFO 05-01 10:00:00 [cuda.py:200] Cannot use FlashAttention backend for FP8 KV cache.",
                ("attention_backend", {"fallback_reason": "fp8-kv-cache"}),
            ),
            case(
                "attn-cannot-fa2-head-size",
                "INFO 10-01 10:00:00 selector.py:120] Cannot use FlashAttention-2 backend for head size 72.",
                ("attention_backend", {"fallback_reason": "head-size"}),
            ),
            case(
                "attn-cannot-fa2-sliding-window",
                "INFO 09-01 10:00:00 selector.py:120] Cannot use FlashAttention-2 backend due to sliding window.",
                ("attention_backend", {"fallback_reason": "sliding-window"}),
            ),
            case(
                "attn-block-size-precluded",
                "(Worker_TP0 pid=7) WARNING 03-20 10:00:00 [cuda.py:400] --block-size 32 precluded higher-priority backend(s) "
                "['FLASH_ATTN', 'FLASHINFER']. Using TRITON_ATTN instead, which may result in reduced performance. Consider "
                "removing --block-size to auto-select the optimal block size.",
                (
                    "attention_backend",
                    {
                        "backend": "TRITON_ATTN",
                        "fallback_reason": "block-size",
                        "candidates": ["FLASH_ATTN", "FLASHINFER", "TRITON_ATTN"],
                    },
                ),
            ),
            case(
                "fa2-compute-capability-t4-0.10",
                "(EngineCore_DP0 pid=114700) ERROR 07-31 15:52:18 [fa_utils.py:57] Cannot use FA version 2 is not "
                "supported due to FA2 is only supported on devices with compute capability >= 8",
                ("attention_backend", {"backend": None, "fallback_reason": "compute-capability"}),
            ),
            case(
                "fa3-compute-capability-ampere",
                "WARNING 03-01 10:00:00 [fa_utils.py:57] Cannot use FA version 3 is not supported due to FA3 is only "
                "supported on devices with compute capability >= 9",
                ("attention_backend", {"fallback_reason": "compute-capability"}),
            ),
            case(
                "attn-fa3-blackwell",
                "(Worker_TP0 pid=7) WARNING 06-01 10:00:00 [fa_utils.py:60] Cannot use FA version 3 on Blackwell platform "
                "defaulting to FA version 2.",
                ("attention_backend", {"backend": "FLASH_ATTN", "version": "2", "fallback_reason": "fa3-blackwell"}),
            ),
            case(
                "attn-fa4-alibi",
                "(Worker_TP0 pid=7) WARNING 06-01 10:00:00 [fa_utils.py:70] Cannot use FA version 4 with ALiBi, defaulting to "
                "FA version 2.",
                ("attention_backend", {"version": "2", "fallback_reason": "alibi"}),
            ),
            case(
                "attn-no-valid-backend",
                "(Worker_TP4_EP4 pid=2532) ERROR 12-29 15:21:11 [multiproc_executor.py:751] ValueError: No valid attention "
                "backend found for cuda with AttentionSelectorConfig(head_size=576, dtype=torch.bfloat16, kv_cache_dtype=auto, "
                "block_size=None, use_mla=True, has_sink=False, use_sparse=True, use_mm_prefix=False, attn_type=decoder). "
                "Reasons: {FLASH_ATTN_MLA: [sparse not supported, compute capability not supported, FlashAttention MLA not "
                "supported on this device], FLASHMLA: [...], FLASHINFER_MLA: [...], TRITON_MLA: [sparse not supported], "
                "FLASHMLA_SPARSE: [compute capability not supported]}.",
                ("attention_backend", {"fallback_reason": "no-valid-backend"}),
                ("engine_failure", {"kind": "startup-failed"}),
            ),
            case(
                "attn-selected-not-valid-drafter",
                "(EngineCore pid=7) ValueError: Selected backend AttentionBackendEnum.TRITON_ATTN is not valid for this "
                "configuration. Reason: ['non-causal attention not supported']",
                ("attention_backend", {"backend": "TRITON_ATTN", "fallback_reason": "not-valid"}),
                ("engine_failure", {"kind": "startup-failed"}),
            ),
            case(
                "attn-mla-prefill",
                "(Worker_TP0 pid=7) INFO 05-20 10:00:00 [selector.py:80] Using FLASHINFER MLA prefill backend.",
                ("attention_backend", {"backend": "FLASHINFER", "role": "prefill"}),
            ),
            case(
                "fa4-head-size-0.33",
                "(Worker_TP0 pid=9) WARNING 11-30 10:00:00 [fa_utils.py:204] FA4 on Blackwell does not support head_size=512 "
                "due to TMEM capacity limits, defaulting to FA version 2.",
                ("attention_backend", {"backend": "FLASH_ATTN", "version": "2", "fallback_reason": "fa4-blackwell"}),
            ),
            case(
                "fa4-hd256-0.33",
                "(Worker_TP0 pid=9) WARNING 11-30 10:00:00 [fa_utils.py:186] FA4's Blackwell head_size=256 kernel does not "
                "support softcap, defaulting to FA version 2.",
                ("attention_backend", {"version": "2", "fallback_reason": "fa4-blackwell"}),
            ),
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
            case(
                "attn-env-unknown",
                "(APIServer pid=1) WARNING 02-26 10:00:00 [envs.py:1650] Unknown vLLM environment variable detected: "
                "VLLM_ATTENTION_BACKEND",
                ("perf_warning", {"topic": "env-unknown"}),
                ("attention_backend", {"fallback_reason": "env-var-ignored"}),
            ),
            case(
                "attn-env-deprecated-0.13",
                "(APIServer pid=1) WARNING 12-20 10:00:00 [envs.py:100] Using VLLM_ATTENTION_BACKEND environment variable is "
                "deprecated and will be removed in v0.14.0 or v1.0.0, whichever is soonest. Please use "
                "--attention-config.backend command line argument or AttentionConfig(backend=...) config field instead.",
                ("perf_warning", {"topic": "env-deprecated"}),
            ),
            case(
                "env-trace-function",
                "WARNING 10-01 10:00:00 logger.py:200] VLLM_TRACE_FUNCTION is enabled. It will record every function executed "
                "by Python. This will slow down the code.",
                ("perf_warning", {"topic": "trace-function"}),
            ),
        ),
    ),
    _grammar(
        "attention_notices",
        (
            "Overriding flash_attn_version to",
            "VLLM_BATCH_INVARIANT is enabled and no attention backend was specified",
            "FlashInfer XQA decode does not support",
            "FA4 not available, forcing",
            "attention backend not specified; defaulting to",
            "backend on CPU.",
            "falling back to Triton MLA backend",
            "flash_attn is not available, the model may not yield",
        ),
        parse_attention_notices,
        (
            case(
                "v0.33-overriding-flash-attn-version-to",
                "(APIServer pid=1) WARNING 11-30 10:00:00 [arg_utils.py:2759] TurboQuant is not yet compatible with FlashAttention >= 3. Overriding flash_attn_version to 2. To silence this warning, pass --attention-config.flash_attn_version=2",
                ("attention_backend", {"backend": "FLASH_ATTN", "version": "2"}),
            ),
            case(
                "v0.33-vllm-batch-invariant-is-enabled-and-no-a",
                "(APIServer pid=1) INFO 11-30 10:00:00 [arg_utils.py:2747] VLLM_BATCH_INVARIANT is enabled and no attention backend was specified; defaulting to TRITON_ATTN.",
                ("attention_backend", {"backend": "TRITON_ATTN"}),
            ),
            case(
                "v0.33-flashinfer-xqa-decode-does-not-support",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [flashinfer.py:1022] FlashInfer XQA decode does not support head_dim=96; reverting this KV-cache group to native FlashInfer decode.",
                ("attention_backend", {"backend": "FLASHINFER"}),
            ),
            case(
                "v0.33-fa4-not-available-forcing",
                "(Worker_TP0 pid=226) INFO 11-30 10:00:00 [config.py:364] Gemma4 model has heterogeneous head dimensions [256, 512]. FA4 not available, forcing TRITON_ATTN backend.",
                ("attention_backend", {"backend": "TRITON_ATTN"}),
            ),
            case(
                "v0.33-attention-backend-not-specified-defaulti",
                "(Worker_TP0 pid=226) INFO 11-30 10:00:00 [config.py:380] EmbeddingGemma2: attention backend not specified; defaulting to TRITON_ATTN (validated backend for heterogeneous head dimensions).",
                ("attention_backend", {"backend": "TRITON_ATTN"}),
            ),
            case(
                "v0.33-backend-on-cpu",
                "(Worker_TP0 pid=226) INFO 11-30 10:00:00 [cpu.py:173] Cannot use FLASH_ATTN backend on CPU.",
                ("attention_backend", {"backend": "FLASH_ATTN"}),
            ),
            case(
                "v0.33-falling-back-to-triton-mla-backend",
                "(Worker_TP0 pid=226) INFO 11-30 10:00:00 [xpu.py:183] FlashAttnMLA on XPU is not valid for this configuration (('head_dim',)); falling back to Triton MLA backend.",
                ("attention_backend", {"backend": "TRITON_MLA"}),
            ),
            case(
                "v0.33-flash-attn-is-not-available-the-model-ma",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [qwen2_5_omni_thinker.py:1162] flash_attn is not available, the model may not yield the exactly same result as the transformers implementation in the audio tower part.",
                ("attention_backend", {"role": "encoder"}),
            ),
        ),
    ),
]
