"""SGLang line types: memory, weights, the KV pool and the mamba pool."""

from __future__ import annotations

import re
from typing import Any

from logdoctor.engines.sglang.common import Rule, _apply, _ev, _f, _failure, _grammar, _hybrid, _i, _perf
from logdoctor.events import (
    CompileTime,
    CudaGraph,
    EventBase,
    HybridModel,
    KVCache,
    ModelInfo,
    Offload,
    Quantization,
    SchedulerConfig,
)
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

# --- memory, weights, KV pool, mamba pool ---------------------------------------------------------

_DRAFT_CLASS_RE = re.compile(r"(?:NextN|MTP|Eagle3?)$|^Eagle3")


def _weights_end(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    if m.group("committed"):
        return [CompileTime(**base, kind="weights_load", seconds=float(m.group("committed")), message=message)]
    arch = m.group("type")
    draft = bool(_DRAFT_CLASS_RE.search(arch))
    events: list[EventBase] = [
        CompileTime(
            **base,
            kind="draft_weights_load" if draft else "weights_load",
            seconds=_f(m.group("elapsed")),
            memory_gib=_f(m.group("usage")),
            message=message,
        )
    ]
    if not draft:
        events.append(ModelInfo(**base, architecture=arch, dtype=m.group("dtype")))
    if m.group("quant"):
        events.append(Quantization(**base, method=m.group("quant"), message=message))
    return events


def _dist_init(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    return [
        CompileTime(
            **base,
            kind="distributed_init",
            seconds=_f(m.group("elapsed")),
            memory_gib=_f(m.group("usage")),
            message=message,
        )
    ]


def _kv_allocated(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    if m.group("kv") is not None:
        size = float(m.group("kv"))
    elif m.group("k") is not None:
        size = round(float(m.group("k")) + float(m.group("v")), 4)
    else:
        size = None
    return [KVCache(**base, kv_tokens=_i(m.group("tokens")), kv_cache_memory_gib=size, message=message)]


# The scheduler's limits line (scheduler.py, 0.2 to 0.5.23 at least): its own line, or, in a paste whose line breaks
# Markdown joined with a space, the tail of the line SGLang prints just before it (the decode graph capture's end).
_LIMITS = (
    r"max_total_num_tokens=(?P<tokens>\d+)(?:, chunked_prefill_size=(?P<chunk>-?\d+))?"
    r"(?:, max_prefill_tokens=\d+)?(?:, max_running_requests=(?P<running>\d+))?"
    r"(?:, context_len=(?P<context>\d+))?(?:, available_(?:gpu|cpu)_mem=(?P<avail>[\d.]+) GB)?"
)
_JOINED_LIMITS_RE = re.compile(r"\s" + _LIMITS + r"\s*$")


def _limits(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    events: list[EventBase] = [
        KVCache(
            **base,
            kv_tokens=int(m.group("tokens")),
            free_memory_gib=_f(m.group("avail")),
            message=message,
        )
    ]
    if m.group("running") is not None:
        events.append(SchedulerConfig(**base, kind="max-num-seqs", value=int(m.group("running")), message=message))
    if m.group("chunk") is not None:
        chunk = int(m.group("chunk"))  # -1: chunked prefill disabled
        events.append(
            SchedulerConfig(
                **base, kind="chunked-prefill", enabled=chunk > 0, value=chunk if chunk > 0 else None, message=message
            )
        )
    if m.group("context") is not None:
        events.append(ModelInfo(**base, max_model_len=int(m.group("context"))))
    return events


def _kv_tokens(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    return [
        KVCache(
            **base, kv_tokens=int(m.group("tokens")), free_memory_gib=_f(m.groupdict().get("free")), message=message
        )
    ]


def _max_running(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    return [SchedulerConfig(**base, kind="max-num-seqs", value=int(m.group("value")), message=message)]


def _graph_headroom(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    return [CudaGraph(**base, kind="capture_capped", role="target", max_batch_size=int(m.group("bs")), message=message)]


def _mamba_pool(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    return [HybridModel(**base, kind="mamba-pool", message=message)]


def _mamba_cap(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    return [
        HybridModel(**base, kind="mamba-pool", message=message),
        SchedulerConfig(**base, kind="max-num-seqs", value=int(m.group("value")), message=message),
    ]


_MEMORY_RULES = [
    Rule(
        re.compile(
            r"Load weight end\. (?:Committed real weights after CUDA graph capture in (?P<committed>[\d.]+) s"
            r"|(?:elapsed=(?P<elapsed>[\d.]+) s, )?type=(?P<type>\w+), (?:dtype=(?P<dtype>[\w.]+), )?"
            r"(?:quant=(?P<quant>[\w.-]+)(?:, (?:bits|quant_algo|fmt)=[^,]+)*, )?"
            r"avail mem=[\d.]+ GB(?:, mem usage=(?P<usage>-?[\d.]+) GB)?)"
        ),
        _weights_end,
    ),
    Rule(
        re.compile(
            r"Init (?:torch distributed|parallel) ends\.(?: elapsed=(?P<elapsed>[\d.]+) s,?)?"
            r"(?: mem usage=(?P<usage>-?[\d.]+) GB)?"
        ),
        _dist_init,
    ),
    Rule(
        re.compile(
            r"KV Cache is allocated\. (?:dtype: [\w.]+, )?(?:#tokens: (?P<tokens>\d+), )?"
            r"(?:K size: (?P<k>[\d.]+) GB, V size: (?P<v>[\d.]+) GB|KV size: (?P<kv>[\d.]+) GB)?"
        ),
        _kv_allocated,
    ),
    Rule(re.compile(r"^\s*" + _LIMITS), _limits),
    Rule(
        re.compile(r"Post-capture KV sizing: max_total_num_tokens=(?P<tokens>\d+), free memory=(?P<free>[\d.]+) GB"),
        _kv_tokens,
    ),
    Rule(re.compile(r"Post-capture KV sizing: max_running_requests \d+ -> (?P<value>\d+)"), _max_running),
    Rule(
        re.compile(r"Post-capture KV sizing: decode CUDA graph max_bs=(?P<bs>\d+) < max_running_requests=\d+"),
        _graph_headroom,
    ),
    Rule(re.compile(r"Post-capture KV sizing: full_layer_tokens=(?P<tokens>\d+), swa_layer_tokens=\d+"), _kv_tokens),
    Rule(re.compile(r"\[unified-memory-pool\]\s+total_bytes=\d+, max_total_num_tokens=(?P<tokens>\d+)"), _kv_tokens),
    Rule(re.compile(r"Use [Ss]liding window memory pool\. full_layer_tokens=(?P<tokens>\d+)"), _kv_tokens),
    Rule(re.compile(r"Use sliding window memory pool \(all SWA\)\. swa_layer_tokens=(?P<tokens>\d+)"), _kv_tokens),
    Rule(re.compile(r"Mamba Cache is allocated\."), _mamba_pool),
    Rule(re.compile(r"max_running_requests is capped to (?P<value>\d+) by the mamba state cache"), _mamba_cap),
    Rule(re.compile(r"Using hybrid linear attention backend for hybrid GDN models"), _hybrid("hybrid-detected")),
    Rule(re.compile(r"Linear attention kernel backend: "), _hybrid("linear-attention-backend")),
    Rule(
        re.compile(r"Not enough GPU memory for hybrid \(mamba/linear-attention\) state cache|state cache is too small"),
        _failure("startup-failed"),
    ),
    Rule(
        re.compile(
            r"Not enough memory\. Please try to increase --mem-fraction-static"
            r"|alloc_req_slots runs out of memory|leave no GPU memory for the KV cache"
        ),
        _failure("startup-failed"),
    ),
    Rule(re.compile(r"The memory capacity is unbalanced\."), _perf("memory-imbalance")),
    Rule(re.compile("Memory pool end\\. avail mem=(?P<free_memory_gib>[\\d.]+) GB"), _ev(KVCache)),
    Rule(
        re.compile(
            "max_running_requests was reduced from the requested \\d+ to (?P<value>\\d+) .*?due to the available KV cache capacity"
        ),
        _ev(SchedulerConfig, kind="max-num-seqs"),
    ),
    Rule(
        re.compile(
            "Post-capture KV sizing: KV cache allocated\\. (?:dtype: [\\w.]+, )?#tokens: (?P<kv_tokens>\\d+), KV size: (?P<kv_cache_memory_gib>[\\d.]+) GB(?:, avail mem=(?P<free_memory_gib>[\\d.]+) GB)?"
        ),
        _ev(KVCache),
    ),
    Rule(
        re.compile(
            "Post-capture KV sizing: draft KV cache allocated\\. (?:dtype: [\\w.]+, )?#tokens: (?P<kv_tokens>\\d+), KV size: (?P<kv_cache_memory_gib>[\\d.]+) GB"
        ),
        _ev(KVCache),
    ),
    Rule(
        re.compile(
            "Mamba radix extra-buffer is enabled with chunked_prefill_size=\\d+ smaller than mamba_cache_chunk_size="
        ),
        _ev(HybridModel, kind="prefix-caching"),
    ),
    Rule(
        re.compile("Disabling hybrid SWA memory for \\w+ as it is not yet supported"),
        _ev(HybridModel, kind="hybrid-detected"),
    ),
    Rule(
        re.compile("(?<!\\w)\\w+ mamba checkpoint pool: [\\d.]+ slots, [\\d.]+GB"), _ev(HybridModel, kind="mamba-pool")
    ),
    Rule(re.compile("Not enough host memory for request \\S+"), _ev(Offload, kind="kv")),
    Rule(re.compile("Enable offload kv cache for decode side"), _ev(Offload, kind="kv")),
    # kt-kernel (KTransformers), which SGLang's --kt-weight-path loads, prints this (printf, no header) as it
    # builds each MoE layer's CPU operator, one per NUMA node: the layer's routed experts beyond
    # --kt-num-gpu-experts live in host memory and run on the CPU's AMX units.
    Rule(re.compile("Creating AMX_MOE_TP \\d+ at numa \\d+"), _ev(Offload, kind="experts")),
    Rule(
        re.compile("Allocating (?P<gib__gb>[\\d.]+) GB host memory for V4 paged pool '(?:kv)'"), _ev(Offload, kind="kv")
    ),
    Rule(re.compile("Hierarchical cache storage backend is not enabled"), _ev(Offload, kind="kv")),
    Rule(
        re.compile("NIXL KVManager initialized with backend: (?P<transfer_backend>\\w+)"),
        _ev(KVCache, connector="nixl"),
    ),
]


def parse_memory(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    return _apply(_MEMORY_RULES, line, ctx)


GRAMMARS: list[Grammar] = [
    _grammar(
        "memory",
        (
            "Load weight end.",
            "Init torch distributed ends.",
            "Init parallel ends.",
            "KV Cache is allocated.",
            "max_total_num_tokens=",
            "Post-capture KV sizing:",
            "liding window memory pool",
            "Mamba Cache is allocated",
            "by the mamba state cache",
            "hybrid linear attention backend",
            "Linear attention kernel backend:",
            "mamba/linear-attention) state cache",
            "Not enough memory. Please try to increase",
            "alloc_req_slots runs out of memory",
            "leave no GPU memory for the KV cache",
            "The memory capacity is unbalanced",
            "Memory pool end. avail mem=",
            "max_running_requests was reduced from the requested",
            "Post-capture KV sizing: KV cache allocated.",
            "Post-capture KV sizing: draft KV cache allocated.",
            "Mamba radix extra-buffer is enabled with chunked_prefill_size=",
            "Disabling hybrid SWA memory for",
            "mamba checkpoint pool:",
            "Not enough host memory for request",
            "Enable offload kv cache for decode side",
            "Creating AMX_MOE_TP",
            "host memory for V4 paged pool",
            "Hierarchical cache storage backend is not enabled",
            "NIXL KVManager initialized with backend:",
        ),
        parse_memory,
        (
            case(
                "sample-1",
                "[2025-01-23 19:35:20 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.72 GB",
                ("compile_time", {}),
                ("model_info", {}),
            ),
            case(
                "sample-2",
                "[2026-09-12 00:22:48 TP0] KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 454112, "
                "K size: 3.46 GB, V size: 3.46 GB",
                ("kv_cache", {}),
            ),
            case(
                "sample-3",
                "[2025-09-11 10:26:01 TP0] max_total_num_tokens=903439, chunked_prefill_size=8192, max_prefill_tokens=16384, "
                "max_running_requests=3529, context_len=131072, available_gpu_mem=10.26 GB",
                ("kv_cache", {}),
                ("scheduler_config", {}),
                ("model_info", {}),
            ),
            case(
                "sample-4",
                "[2026-10-10 11:59:39] Mamba Cache is allocated. max_mamba_cache_size: 117, conv_state size: 0.28GB, "
                "ssm_state size: 8.07GB ",
                ("hybrid_model", {}),
            ),
            case(
                "row-1",
                "[2025-10-16 09:06:09 TP0] Init torch distributed ends. mem usage=1.96 GB",
                ("compile_time", {"kind": "distributed_init", "seconds": None, "memory_gib": 1.96}),
                exact=True,
            ),
            case(
                "row-2",
                "[2026-09-11 23:34:12 TP0 EP0] Init torch distributed ends. elapsed=1.33 s, mem usage=0.61 GB",
                ("compile_time", {"kind": "distributed_init", "seconds": 1.33, "memory_gib": 0.61}),
                exact=True,
            ),
            case(
                "row-3",
                "[2026-10-20 10:00:00 TP0] Init parallel ends. elapsed=2.10 s",
                ("compile_time", {"kind": "distributed_init", "seconds": 2.1}),
                exact=True,
            ),
            case(
                "row-4",
                "[2025-01-23 19:35:20 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.72 GB",
                ("compile_time", {"kind": "weights_load", "seconds": None, "memory_gib": None}),
                ("model_info", {"architecture": "LlamaForCausalLM", "dtype": "torch.bfloat16"}),
                exact=True,
            ),
            case(
                "row-5",
                "[2026-08-28 21:32:38] Load weight end. elapsed=787.55 s, type=Qwen4ExpForConditionalGeneration, "
                "quant=modelopt_fp4, quant_algo=NVFP4, avail mem=29.01 GB, mem usage=82.97 GB.",
                ("compile_time", {"kind": "weights_load", "seconds": 787.55, "memory_gib": 82.97}),
                ("model_info", {"architecture": "Qwen4ExpForConditionalGeneration", "dtype": None}),
                ("quantization", {"method": "modelopt_fp4", "fallback": False}),
                exact=True,
            ),
            case(
                "row-6",
                "[2026-08-28 21:34:13] Load weight end. elapsed=94.49 s, type=Qwen4ExpForCausalLMMTP, quant=modelopt_fp4, "
                "quant_algo=NVFP4, avail mem=30.67 GB, mem usage=-1.86 GB.",
                ("compile_time", {"kind": "draft_weights_load", "seconds": 94.49, "memory_gib": -1.86}),
                ("quantization", {"method": "modelopt_fp4"}),
                exact=True,
            ),
            case(
                "row-7",
                "[2026-10-10 11:59:36] Load weight end. elapsed=329.53 s, type=BailingMoeV3ForCausalLM, quant=fp8, fmt=e4m3, "
                "avail mem=29.67 GB, mem usage=80.31 GB.",
                ("compile_time", {"kind": "weights_load", "seconds": 329.53, "memory_gib": 80.31}),
                ("model_info", {"architecture": "BailingMoeV3ForCausalLM"}),
                ("quantization", {"method": "fp8"}),
                exact=True,
            ),
            case(
                "row-8",
                "[2025-04-01 10:00:00 TP0] Load weight end. type=DeepseekV3ForCausalLMNextN, dtype=torch.bfloat16, avail "
                "mem=20.10 GB, mem usage=1.20 GB.",
                ("compile_time", {"kind": "draft_weights_load", "memory_gib": 1.2}),
                exact=True,
            ),
            case(
                "row-9",
                "[2026-09-01 10:00:00 TP0] Load weight end. Committed real weights after CUDA graph capture in 12.50 s "
                "(capture overlap window 8.00 s, startup overlap total 20.00 s)",
                ("compile_time", {"kind": "weights_load", "seconds": 12.5}),
                exact=True,
            ),
            case(
                "row-10",
                "[2026-09-12 00:22:48 TP0] KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 454112, K size: "
                "3.46 GB, V size: 3.46 GB",
                ("kv_cache", {"kv_tokens": 454112, "kv_cache_memory_gib": 6.92}),
                exact=True,
            ),
            case(
                "row-11",
                "[2026-09-12 00:22:48 TP0] KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 454112, K size: "
                "1.08 GB, V size: 1.08 GB",
                ("kv_cache", {"kv_tokens": 454112, "kv_cache_memory_gib": 2.16}),
                exact=True,
            ),
            case(
                "row-12",
                "[2026-10-10 11:59:41] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1226984, KV size: 9.21 GB",
                ("kv_cache", {"kv_tokens": 1226984, "kv_cache_memory_gib": 9.21}),
                exact=True,
            ),
            case(
                "row-13",
                "[2025-01-23 19:35:20 TP0] KV Cache is allocated. K size: 27.13 GB, V size: 27.13 GB.",
                ("kv_cache", {"kv_tokens": None, "kv_cache_memory_gib": 54.26}),
                exact=True,
            ),
            case(
                "row-14",
                "[2025-03-06 06:15:00 TP0] KV Cache is allocated. #tokens: 444500, K size: 27.13 GB, V size: 27.13 GB",
                ("kv_cache", {"kv_tokens": 444500, "kv_cache_memory_gib": 54.26}),
                exact=True,
            ),
            case(
                "row-15",
                "[2026-08-10 10:00:00 TP0] MiniMax MSA-v1 main NVFP4 KV Cache is allocated. dtype: torch.uint8, #tokens: "
                "800000, KV size: 4.50 GB",
                ("kv_cache", {"kv_tokens": 800000, "kv_cache_memory_gib": 4.5}),
                exact=True,
            ),
            case(
                "row-16",
                "[2026-07-25 10:00:00 TP0] Post-capture KV sizing: max_total_num_tokens=523264, free memory=6.20 GB",
                ("kv_cache", {"kv_tokens": 523264, "free_memory_gib": 6.2}),
                exact=True,
            ),
            case(
                "row-17",
                "[2026-07-25 10:00:00 TP0] Post-capture KV sizing: max_running_requests 512 -> 256",
                ("scheduler_config", {"kind": "max-num-seqs", "value": 256}),
                exact=True,
            ),
            case(
                "row-18",
                "[2026-07-25 10:00:00 TP0] Post-capture KV sizing: decode CUDA graph max_bs=64 < max_running_requests=256; "
                "reserving activation headroom",
                ("cuda_graph", {"kind": "capture_capped", "role": "target", "max_batch_size": 64}),
                exact=True,
            ),
            case(
                "row-19",
                "[2025-12-01 10:00:00 TP0] Use sliding window memory pool. full_layer_tokens=1048576, swa_layer_tokens=262144",
                ("kv_cache", {"kv_tokens": 1048576}),
                exact=True,
            ),
            case(
                "row-20",
                "[2026-07-01 10:00:00 TP0] [unified-memory-pool]   total_bytes=85899345920, max_total_num_tokens=2000000, "
                "max_mamba_cache_size=256, max_num_reqs=256, speculative_num_draft_tokens=4",
                ("kv_cache", {"kv_tokens": 2000000}),
                exact=True,
            ),
            case(
                "row-21",
                "[2025-08-11 17:17:03] max_total_num_tokens=665690, chunked_prefill_size=8192, max_prefill_tokens=16384, "
                "max_running_requests=4096, context_len=65536, available_gpu_mem=13.50 GB",
                ("kv_cache", {"kv_tokens": 665690, "free_memory_gib": 13.5}),
                ("scheduler_config", {"kind": "max-num-seqs", "value": 4096}),
                ("scheduler_config", {"kind": "chunked-prefill", "enabled": True, "value": 8192}),
                ("model_info", {"max_model_len": 65536}),
                exact=True,
            ),
            case(
                "row-22",
                "[2025-09-11 10:26:01 TP0] max_total_num_tokens=903439, chunked_prefill_size=8192, max_prefill_tokens=16384, "
                "max_running_requests=3529, context_len=131072, available_gpu_mem=10.26 GB",
                ("kv_cache", {"kv_tokens": 903439, "free_memory_gib": 10.26}),
                ("scheduler_config", {"kind": "max-num-seqs", "value": 3529}),
                ("scheduler_config", {"kind": "chunked-prefill", "value": 8192}),
                ("model_info", {"max_model_len": 131072}),
                exact=True,
            ),
            case(
                "row-23",
                "[2025-01-23 19:35:27 TP0] max_total_num_tokens=444500, max_prefill_tokens=16384, max_running_requests=2049, "
                "context_len=131072",
                ("kv_cache", {"kv_tokens": 444500, "free_memory_gib": None}),
                ("scheduler_config", {"kind": "max-num-seqs", "value": 2049}),
                ("model_info", {"max_model_len": 131072}),
                exact=True,
            ),
            case(
                "row-24",
                "[2025-05-01 10:00:00 TP0] max_total_num_tokens=100000, chunked_prefill_size=-1, max_prefill_tokens=16384, "
                "max_running_requests=64, context_len=8192, available_gpu_mem=5.00 GB",
                ("kv_cache", {"kv_tokens": 100000}),
                ("scheduler_config", {"kind": "max-num-seqs", "value": 64}),
                ("scheduler_config", {"kind": "chunked-prefill", "enabled": False, "value": None}),
                ("model_info", {"max_model_len": 8192}),
                exact=True,
            ),
            case("row-25", "max_total_num_tokens=425344", ("kv_cache", {"kv_tokens": 425344}), exact=True),
            case(
                "row-26",
                "[2026-10-10 11:59:39] Mamba Cache is allocated. max_mamba_cache_size: 117, conv_state size: 0.28GB, "
                "ssm_state size: 8.07GB ",
                ("hybrid_model", {"kind": "mamba-pool"}),
                exact=True,
            ),
            case(
                "row-27",
                "[2026-01-01 00:01:01] Mamba Cache is allocated. max_mamba_cache_size: 22, conv_state size: 0.06GB, ssm_state "
                "size: 3.23GB intermediate_ssm_state_cache size: 2.25GB intermediate_conv_window_cache size: 0.02GB",
                ("hybrid_model", {"kind": "mamba-pool"}),
                exact=True,
            ),
            case(
                "row-28",
                "[2026-08-08 10:00:00 TP0] max_running_requests is capped to 21 by the mamba state cache "
                "(max_mamba_cache_size=117, 5 state slots per request). To raise it: increase --mamba-full-memory-ratio or "
                "--max-mamba-cache-size, or halve the state size with --mamba-ssm-dtype bfloat16.",
                ("hybrid_model", {"kind": "mamba-pool"}),
                ("scheduler_config", {"kind": "max-num-seqs", "value": 21}),
                exact=True,
            ),
            case(
                "row-29",
                "[2025-10-16 10:00:00 TP0] Using hybrid linear attention backend for hybrid GDN models.",
                ("hybrid_model", {"kind": "hybrid-detected"}),
                exact=True,
            ),
            case(
                "row-30",
                "[2026-04-08 10:00:00 TP0] Linear attention kernel backend: decode=triton, prefill=triton",
                ("hybrid_model", {"kind": "linear-attention-backend"}),
                exact=True,
            ),
            case(
                "row-31",
                "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. Current value: "
                "self.server_args.mem_fraction_static=0.8",
                ("engine_failure", {"kind": "startup-failed"}),
                exact=True,
            ),
            case(
                "row-32",
                "ValueError: Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.88.",
                ("engine_failure", {"kind": "startup-failed"}),
                exact=True,
            ),
            case(
                "row-33",
                "[2025-04-01 10:00:00 TP1] The memory capacity is unbalanced. Some GPUs may be occupied by other processes. "
                "min_per_gpu_memory=70.1, local_gpu_memory=78.2, local_gpu_memory * 0.9=70.38",
                ("perf_warning", {"topic": "memory-imbalance"}),
                exact=True,
            ),
            case(
                "v0.5.23-memory-pool-end-avail-mem",
                "[2025-11-30 10:00:00 TP0] Memory pool end. avail mem=5.12 GB",
                ("kv_cache", {"free_memory_gib": 5.12}),
            ),
            case(
                "v0.5.23-max-running-requests-was-reduced-from-th",
                "[2025-11-30 10:00:00 TP0] max_running_requests was reduced from the requested 256 to 32 (per dp worker) due to the available KV cache capacity.",
                ("scheduler_config", {"kind": "max-num-seqs", "value": 32}),
            ),
            case(
                "v0.5.23-post-capture-kv-sizing-kv-cache-allocate",
                "[2025-11-30 10:00:00 TP0] Post-capture KV sizing: KV cache allocated. dtype: torch.bfloat16, #tokens: 412000, KV size: 18.10 GB, avail mem=5.12 GB",
                ("kv_cache", {"kv_tokens": 412000, "kv_cache_memory_gib": 18.1, "free_memory_gib": 5.12}),
            ),
            case(
                "v0.5.23-post-capture-kv-sizing-draft-kv-cache-al",
                "[2025-11-30 10:00:00 TP0] Post-capture KV sizing: draft KV cache allocated. dtype: torch.bfloat16, #tokens: 412000, KV size: 1.20 GB",
                ("kv_cache", {"kv_tokens": 412000, "kv_cache_memory_gib": 1.2}),
            ),
            case(
                "v0.5.23-mamba-radix-extra-buffer-is-enabled-with",
                "[2025-11-30 10:00:00 TP0] Mamba radix extra-buffer is enabled with chunked_prefill_size=2048 smaller than mamba_cache_chunk_size=8. This can make mamba_track_mask false for unfinished chunked-prefill handoff and skip Mamba state checkpoints.",
                ("hybrid_model", {"kind": "prefix-caching"}),
            ),
            case(
                "v0.5.23-disabling-hybrid-swa-memory-for",
                "[2025-11-30 10:00:00 TP0] Disabling hybrid SWA memory for ExaoneForCausalLM as it is not yet supported.",
                ("hybrid_model", {"kind": "hybrid-detected"}),
            ),
            case(
                "v0.5.23-mamba-checkpoint-pool",
                "[2025-11-30 10:00:00 TP0] int8 mamba checkpoint pool: 1.5 slots, 1.50GB (qdata 1.50 + scale 1.50 + conv 1.50); active mamba pool 8 slots; free HBM 1.50GB",
                ("hybrid_model", {"kind": "mamba-pool"}),
            ),
            case(
                "v0.5.23-not-enough-host-memory-for-request",
                "[2025-11-30 10:00:00 TP0] Not enough host memory for request r-1",
                ("offload", {"kind": "kv"}),
            ),
            case(
                "kt-kernel-amx-moe-operator",
                "Creating AMX_MOE_TP 1 at numa 1",
                ("offload", {"kind": "experts"}),
                exact=True,
            ),
            case(
                "v0.5.23-enable-offload-kv-cache-for-decode-side",
                "[2025-11-30 10:00:00 TP0] Enable offload kv cache for decode side",
                ("offload", {"kind": "kv"}),
            ),
            case(
                "v0.5.23-host-memory-for-v4-paged-pool",
                "[2025-11-30 10:00:00 TP0] Allocating 40.00 GB host memory for V4 paged pool 'kv' (layers=61, pages=1024, item_bytes=4, layout=self_layout).",
                ("offload", {"kind": "kv", "gib": 37.25}),
            ),
            case(
                "v0.5.23-hierarchical-cache-storage-backend-is-no",
                "[2025-11-30 10:00:00 TP0] Hierarchical cache storage backend is not enabled.",
                ("offload", {"kind": "kv"}),
            ),
            case(
                "v0.5.23-nixl-kvmanager-initialized-with-backend",
                "[2025-11-30 10:00:00 TP0] NIXL KVManager initialized with backend: UCX",
                ("kv_cache", {"connector": "nixl", "transfer_backend": "UCX"}),
            ),
        ),
    ),
]
