"""vLLM line types: §8 mamba / hybrid models (catalogue/vllm.md)."""

from __future__ import annotations

import re

from logdoctor.engines.vllm.common import Events, _base, _grammar, _is_traceback_code, _msg, _table_warning
from logdoctor.events import (
    CudaGraph,
    EngineFailure,
    HybridKind,
    HybridModel,
    SchedulerConfig,
    WarningTopic,
)
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext

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
            "(EngineCore pid=227331) INFO 09-15 12:31:29 [interface.py:928] Setting attention block size to 480 "
            "tokens to ensure that attention page size is >= mamba page size.",
            "(EngineCore pid=227331) INFO 09-15 12:31:29 [interface.py:952] Padding mamba page size by 1.27% to "
            "ensure that mamba page size and attention page size are exactly equal.",
            "Mamba cache mode is set to 'align' for Qwen3_5ForConditionalGeneration by default when prefix caching is "
            "enabled",
        ),
    ),
]
