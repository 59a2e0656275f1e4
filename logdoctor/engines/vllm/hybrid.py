"""vLLM line types: §8 mamba / hybrid models (catalogue/vllm.md)."""

from __future__ import annotations

import re

from logdoctor.engines.vllm.common import (
    Events,
    NoticeBuild,
    _base,
    _event,
    _grammar,
    _is_traceback_code,
    _msg,
    _notices,
    _table_warning,
)
from logdoctor.events import CudaGraph, EngineFailure, HybridKind, HybridModel, SchedulerConfig, WarningTopic
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

_ATTN_BLOCK_SIZE_RE = re.compile(r"Setting attention block size to (?P<size>\d+) tokens")
_MAMBA_PADDING_RE = re.compile(r"Padding mamba page size by (?P<pct>[\d.]+)%")
_XPU_MAMBA_SCALED_RE = re.compile(r"Scaled mamba_page_size_padded from (?P<old>\d+) to (?P<new>\d+) bytes")
_XPU_MAMBA_PADDED_RE = re.compile(
    r"set mamba_page_size_padded to (?P<new>\d+) bytes accordingly, before was (?P<old>\d+) bytes"
)
_MAMBA_CACHE_MODE_RE = re.compile(
    r"Mamba cache mode is set to '(?P<mode>\w+)'(?: for (?P<arch>\S+))?(?: by default)? when prefix caching "
    r"(?P<state>is enabled|and speculative decoding are enabled|is disabled)"
)
_MAMBA_ALL_FALLBACK_RE = re.compile(
    r"Hybrid or mamba-based model detected without support for prefix caching with Mamba cache 'all' mode: "
    r"falling back to '(?P<mode>\w+)' mode"
)
_HYBRID_PREFIX_OFF_RE = re.compile(
    r"Hybrid or mamba-based model detected(?::| without support for prefix caching:) disabling"
    r"(?: prefix caching)?"
)
_HYBRID_PREFIX_ON_RE = re.compile(
    r"Warning: Prefix caching (?:in Mamba cache '(?P<mode>\w+)' mode )?is currently enabled\. Its support for Mamba"
)
_HYBRID_CUDAGRAPH_RE = re.compile(r"Hybrid or mamba-based model detected: setting cudagraph mode to (?P<mode>\w+)")
_HYBRID_NOTICES: tuple[tuple[re.Pattern[str], HybridKind], ...] = (
    (re.compile(r"Disabling cascade attention since it is not supported for hybrid models"), "hybrid-detected"),
    (
        re.compile(r"Hybrid model with EAGLE speculative decoding: defaulting prefix_cache_retention_interval"),
        "spec-decode",
    ),
    (re.compile(r"DS conv state layout does not yet support speculative decoding"), "spec-decode"),
    (re.compile(r"--mamba-cache-mode is deprecated"), "mamba-cache-mode"),
    (
        re.compile(
            r"Using FlashInfer GDN prefill kernel|Using Triton/FLA GDN prefill kernel|Using \S+ GDN prefill kernel"
        ),
        "gdn-kernel",
    ),
    (re.compile(r"GDN (?:spec )?decode kernel: "), "gdn-kernel"),
    (re.compile(r"GDN prefill kernel is JIT-compiled"), "gdn-kernel"),
    (re.compile(r"GDN prefill backend '\S+' is selected but cannot use this kernel"), "gdn-kernel-fallback"),
    (re.compile(r"Falling back to the Triton GDN (?:spec )?decode path"), "gdn-kernel-fallback"),
    (re.compile(r"Using \S+ Mamba SSU backend|Using FlashInfer Mamba SSU algorithm"), "mamba-ssu-kernel"),
    (re.compile(r"Updating mamba_ssm_cache_dtype to"), "mamba-cache-dtype"),
    (re.compile(r"specifies mamba_ssm_dtype='\S+' in its config, but --mamba-ssm-cache-dtype"), "mamba-cache-dtype"),
)
_HYBRID_ERRORS_RE = re.compile(
    r"Mamba with speculative decoding is not supported yet"
    r"|currently does not support 'all' prefix caching, please use '--mamba-cache-mode=align'"
)
_MAMBA_CAP_RE = re.compile(
    r"Capping cudagraph capture sizes from max (?P<old>\d+) to (?P<new>\d+) to fit Mamba cache blocks "
    r"\((?P<blocks>\d+) blocks available\)"
)
_MAMBA_CAP_NONE_RE = re.compile(r"No valid cudagraph capture sizes remain after capping to Mamba cache blocks")
_HYBRID_WARNINGS: tuple[tuple[re.Pattern[str], WarningTopic], ...] = (
    (re.compile(r"Hybrid KV cache manager is disabled for this hybrid model"), "hybrid-kv-cache-manager"),
    (re.compile(r"Turning off hybrid kv cache manager because"), "hybrid-kv-cache-manager"),
    (re.compile(r"Using default Mamba SSU config"), "mamba-ssu-config"),
    (re.compile(r"(?:GDN prefill kernel|Mamba2 SSD kernel) warmup .*?failed"), "kernel-warmup"),
)


def parse_hybrid(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _ATTN_BLOCK_SIZE_RE.search(text)
    if m:
        return [
            HybridModel(
                **base, kind="block-size-alignment", attention_block_size=int(m.group("size")), message=_msg(line)
            )
        ]
    m = _MAMBA_PADDING_RE.search(text)
    if m:
        return [
            HybridModel(**base, kind="mamba-page-padding", padding_percent=float(m.group("pct")), message=_msg(line))
        ]
    m = _XPU_MAMBA_SCALED_RE.search(text) or _XPU_MAMBA_PADDED_RE.search(text)
    if m:
        old, new = int(m.group("old")), int(m.group("new"))
        percent = round((new - old) / old * 100, 4) if old else None
        return [HybridModel(**base, kind="mamba-page-padding", padding_percent=percent, message=_msg(line))]
    m = _MAMBA_CACHE_MODE_RE.search(text)
    if m:
        enabled = m.group("state") != "is disabled"
        return [
            HybridModel(
                **base,
                kind="mamba-cache-mode",
                mamba_cache_mode=m.group("mode"),
                prefix_caching=enabled,
                message=_msg(line),
            )
        ]
    m = _MAMBA_ALL_FALLBACK_RE.search(text)
    if m:
        return [HybridModel(**base, kind="mamba-cache-mode", mamba_cache_mode=m.group("mode"), message=_msg(line))]
    m = _HYBRID_CUDAGRAPH_RE.search(text)
    if m:
        return [HybridModel(**base, kind="hybrid-detected", message=_msg(line))]
    if _HYBRID_PREFIX_OFF_RE.search(text):
        return [
            HybridModel(**base, kind="prefix-caching", prefix_caching=False, message=_msg(line)),
            SchedulerConfig(**base, kind="prefix-caching", enabled=False, message=_msg(line)),
        ]
    m = _HYBRID_PREFIX_ON_RE.search(text)
    if m:
        return [
            HybridModel(
                **base, kind="prefix-caching", prefix_caching=True, mamba_cache_mode=m.group("mode"), message=_msg(line)
            )
        ]
    m = _MAMBA_CAP_RE.search(text)
    if m:
        return [
            CudaGraph(
                **base, kind="capture_capped", role="target", max_batch_size=int(m.group("new")), message=_msg(line)
            ),
            HybridModel(**base, kind="cudagraph-cap", message=_msg(line)),
        ]
    if _MAMBA_CAP_NONE_RE.search(text):
        # Every capture size exceeded the Mamba blocks: CUDA graphs are silently off.
        return [
            CudaGraph(
                **base, kind="capture_capped", role="target", max_batch_size=0, mode_to="NONE", message=_msg(line)
            ),
            HybridModel(**base, kind="cudagraph-cap", message=_msg(line)),
        ]
    if _HYBRID_ERRORS_RE.search(text):
        if _is_traceback_code(text):
            return []
        return [
            HybridModel(
                **base, kind="spec-decode" if "speculative" in text else "mamba-cache-mode", message=_msg(line)
            ),
            EngineFailure(**base, kind="startup-failed", message=_msg(line)),
        ]
    for pattern, kind in _HYBRID_NOTICES:
        if pattern.search(text):
            return [HybridModel(**base, kind=kind, message=_msg(line))]
    warning = _table_warning(_HYBRID_WARNINGS, text, base, line)
    if warning is not None:
        return warning
    return None


# One-message notices of vLLM 0.33 (rendered from its wheel by the drift check, docs/drift.md): one row a
# message, first match wins; the line type's cases hold one line of each.
_NOTICES: tuple[tuple[re.Pattern[str], NoticeBuild], ...] = (
    (
        re.compile("KV cache page sizes cannot be unified; treating sliding-window layers as full attention"),
        _event(HybridModel, kind="block-size-alignment"),
    ),
    (
        re.compile("latency regression when using chunked local attention with the hybrid KV cache manager"),
        _event(HybridModel, kind="hybrid-detected"),
    ),
    (
        re.compile("GDN prefill backend '[^']*' was requested but FlashInfer prefill needs SM\\d+\\. Falling back to"),
        _event(HybridModel, kind="linear-attention-backend"),
    ),
    (
        re.compile("Reset SSM cache type to (?P<mamba_cache_mode>\\w+) for accelerated GDN mamba backend"),
        _event(HybridModel, kind="mamba-cache-mode"),
    ),
    (
        re.compile(
            "Using block size (?P<attention_block_size>\\d+) for hidden-state cache layer \\S+; page alignment wastes \\d+ bytes \\((?P<padding_percent>[\\d.]+)%\\) per block"
        ),
        _event(HybridModel, kind="mamba-page-padding"),
    ),
)


def parse_hybrid_notices(line: LogLine, ctx: ParseContext) -> Events | None:
    return _notices(_NOTICES, line, ctx)


GRAMMARS: list[Grammar] = [
    _grammar(
        "hybrid",
        (
            "Setting attention block size to",
            "Padding mamba page size by",
            "mamba_page_size_padded",
            "Mamba cache mode is set to",
            "Hybrid or mamba-based model detected",
            "Its support for Mamba layers",
            "Disabling cascade attention since",
            "Hybrid model with EAGLE",
            "DS conv state layout",
            "--mamba-cache-mode is deprecated",
            "GDN prefill kernel",
            "GDN decode kernel",
            "GDN spec decode kernel",
            "GDN prefill backend",
            "Triton GDN",
            "Mamba SSU",
            "mamba_ssm_cache_dtype",
            "--mamba-ssm-cache-dtype",
            "Mamba with speculative decoding",
            "'all' prefix caching",
            "to fit Mamba cache blocks",
            "after capping to Mamba cache blocks",
            "Hybrid KV cache manager is disabled",
            "hybrid kv cache manager",
            "Mamba2 SSD kernel warmup",
        ),
        parse_hybrid,
        (
            case(
                "sample-1",
                "(EngineCore pid=227331) INFO 09-15 12:31:29 [interface.py:928] Setting attention block size to 480 "
                "tokens to ensure that attention page size is >= mamba page size.",
                ("hybrid_model", {}),
            ),
            case(
                "sample-2",
                "(EngineCore pid=227331) INFO 09-15 12:31:29 [interface.py:952] Padding mamba page size by 1.27% to "
                "ensure that mamba page size and attention page size are exactly equal.",
                ("hybrid_model", {}),
            ),
            case(
                "hybrid-dflash-0.28",
                "(EngineCore pid=227331) INFO 09-15 12:31:29 [interface.py:928] Setting attention block size to 480 tokens to "
                "ensure that attention page size is >= mamba page size.\n"
                "(EngineCore pid=227331) INFO 09-15 12:31:29 [interface.py:952] Padding mamba page size by 1.27% to ensure that "
                "mamba page size and attention page size are exactly equal.",
                ("hybrid_model", {"kind": "block-size-alignment", "attention_block_size": 480}),
                ("hybrid_model", {"kind": "mamba-page-padding", "padding_percent": 1.27}),
            ),
            case(
                "hybrid-0.18-xpu",
                "INFO 03-30 07:05:40 [config.py:228] Setting attention block size to 528 tokens to ensure that attention page "
                "size is >= mamba page size.\n"
                "INFO 03-30 07:05:40 [config.py:259] Padding mamba page size by 0.76% to ensure that mamba page size and "
                "attention page size are exactly equal.",
                ("hybrid_model", {"attention_block_size": 528}),
                ("hybrid_model", {"padding_percent": 0.76}),
            ),
            case(
                "hybrid-0.20-tp2",
                "(Worker_TP1 pid=47) INFO 05-09 04:43:30 [interface.py:633] Padding mamba page size by 0.25% to ensure that "
                "mamba page size and attention page size are exactly equal.",
                ("hybrid_model", {"kind": "mamba-page-padding", "padding_percent": 0.25}),
            ),
            case(
                "hybrid-pasted-without-timestamp",
                "INFO [config.py:281] Setting attention block size to 528 tokens to ensure that attention page size is >= "
                "mamba page size.",
                ("hybrid_model", {"attention_block_size": 528}),
            ),
            case(
                "hybrid-xpu-0.33-scaled",
                "(Worker pid=7) INFO 11-02 10:00:00 [xpu.py:300] [XPU]Scaled mamba_page_size_padded from 1000 to 1010 bytes "
                "accordingly.",
                ("hybrid_model", {"kind": "mamba-page-padding", "padding_percent": 1.0}),
            ),
            case(
                "hybrid-mamba-cache-mode-align",
                "Mamba cache mode is set to 'align' for Qwen3_5ForConditionalGeneration by default when prefix caching is "
                "enabled",
                ("hybrid_model", {"kind": "mamba-cache-mode", "mamba_cache_mode": "align", "prefix_caching": True}),
            ),
            case(
                "hybrid-mamba-cache-mode-none",
                "(EngineCore pid=7) WARNING 03-01 10:00:00 [vllm.py:700] Mamba cache mode is set to 'none' when prefix caching "
                "is disabled",
                ("hybrid_model", {"mamba_cache_mode": "none", "prefix_caching": False}),
            ),
            case(
                "hybrid-prefix-caching-disabled-0.10",
                "INFO 09-20 10:00:00 [config.py:400] Hybrid or mamba-based model detected: disabling prefix caching since it is "
                "not yet supported.",
                ("hybrid_model", {"kind": "prefix-caching", "prefix_caching": False}),
                ("scheduler_config", {"kind": "prefix-caching", "enabled": False}),
            ),
            case(
                "hybrid-cudagraph-full-and-piecewise",
                "INFO 09-20 10:00:00 [config.py:410] Hybrid or mamba-based model detected: setting cudagraph mode to "
                "FULL_AND_PIECEWISE in order to optimize performance.",
                ("hybrid_model", {"kind": "hybrid-detected"}),
            ),
            case(
                "hybrid-prefix-caching-experimental",
                "INFO 02-01 10:00:00 [config.py:300] Warning: Prefix caching in Mamba cache 'align' mode is currently enabled. "
                "Its support for Mamba layers is experimental. Please report any issues you may observe.",
                ("hybrid_model", {"kind": "prefix-caching", "prefix_caching": True, "mamba_cache_mode": "align"}),
            ),
            case(
                "hybrid-cudagraph-capped",
                "(Worker_TP0 pid=7) WARNING 03-25 10:00:00 [gpu_model_runner.py:4500] Capping cudagraph capture sizes from max "
                "512 to 64 to fit Mamba cache blocks (66 blocks available). This limits the maximum batch size that can use "
                "CUDA graphs. To increase this limit, reduce max_num_seqs or increase available GPU memory.",
                ("cuda_graph", {"kind": "capture_capped", "max_batch_size": 64}),
                ("hybrid_model", {"kind": "cudagraph-cap"}),
            ),
            case(
                "hybrid-cudagraph-capture-disabled",
                "(Worker_TP0 pid=7) WARNING 03-25 10:00:00 [gpu_model_runner.py:4510] No valid cudagraph capture sizes remain "
                "after capping to Mamba cache blocks (3). The smallest capture size was 4. Disabling cudagraph capture. "
                "Consider reducing max_num_seqs or increasing available GPU memory.",
                ("cuda_graph", {"kind": "capture_capped", "max_batch_size": 0, "mode_to": "NONE"}),
            ),
            case(
                "hybrid-gdn-fallback",
                "(Worker_TP0 pid=7) WARNING 03-20 10:00:00 [qwen_next.py:300] GDN prefill backend 'flashinfer' is selected but "
                "cannot use this kernel on the current platform. Falling back to Triton/FLA.",
                ("hybrid_model", {"kind": "gdn-kernel-fallback"}),
            ),
            case(
                "hybrid-spec-not-supported",
                "(EngineCore_DP0 pid=7) NotImplementedError: Mamba with speculative decoding is not supported yet.",
                ("hybrid_model", {"kind": "spec-decode"}),
                ("engine_failure", {"kind": "startup-failed"}),
            ),
        ),
    ),
    _grammar(
        "hybrid_notices",
        (
            "KV cache page sizes cannot be unified",
            "chunked local attention with the hybrid KV cache manager",
            "was requested but FlashInfer prefill needs",
            "Reset SSM cache type to",
            "page alignment wastes",
        ),
        parse_hybrid_notices,
        (
            case(
                "v0.33-kv-cache-page-sizes-cannot-be-unified",
                "(EngineCore pid=180) WARNING 11-30 10:00:00 [kv_cache_planning.py:845] KV cache page sizes cannot be unified; treating sliding-window layers as full attention for cache allocation. Sliding-window attention compute is unchanged.",
                ("hybrid_model", {"kind": "block-size-alignment"}),
            ),
            case(
                "v0.33-chunked-local-attention-with-the-hybrid-",
                "(APIServer pid=1) WARNING 11-30 10:00:00 [vllm.py:2247] There is a latency regression when using chunked local attention with the hybrid KV cache manager. Disabling it, by default. To enable it, set the environment VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=1.",
                ("hybrid_model", {"kind": "hybrid-detected"}),
            ),
            case(
                "v0.33-was-requested-but-flashinfer-prefill-nee",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [qwen_gdn_linear_attn.py:217] GDN prefill backend 'aiter_flydsl' was requested but FlashInfer prefill needs SM90. Falling back to Triton/FLA.",
                ("hybrid_model", {"kind": "linear-attention-backend"}),
            ),
            case(
                "v0.33-reset-ssm-cache-type-to",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [cpu.py:334] Reset SSM cache type to float32 for accelerated GDN mamba backend 'cpu_gdn'.",
                ("hybrid_model", {"kind": "mamba-cache-mode"}),
            ),
            case(
                "v0.33-page-alignment-wastes",
                "(EngineCore pid=180) INFO 11-30 10:00:00 [kv_cache_planning.py:1189] Using block size 64 for hidden-state cache layer model.layers.0.hidden_cache; page alignment wastes 2048 bytes (3.12%) per block",
                ("hybrid_model", {"kind": "mamba-page-padding", "padding_percent": 3.12}),
            ),
        ),
    ),
]
