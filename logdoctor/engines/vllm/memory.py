"""vLLM line types: §7 KV cache, memory, model loading (catalogue/vllm.md)."""

from __future__ import annotations

import re
from typing import Any

from logdoctor.engines.vllm.common import (
    _CAPTURE_BARS,
    _NUM,
    Events,
    NoticeBuild,
    _base,
    _clock_seconds,
    _event,
    _f,
    _generic_base,
    _gib,
    _grammar,
    _i,
    _is_traceback_code,
    _labelled_values,
    _msg,
    _notices,
)
from logdoctor.events import CompileTime, EngineFailure, HybridModel, KVCache, ModelInfo, PerfWarning
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

_KV_BLOCKS_RE = re.compile(r"# (?P<dev>\w+) blocks: (?P<blocks>\d+)(?:, # CPU blocks: (?P<cpu>\d+))?")
_KV_SIZE_RE = re.compile(
    r"(?<!\w)(?P<dev>\w+(?: \+ host)?) KV cache size: (?P<tokens>[\d,]+) tokens"
    r"(?:, Maximum concurrency for (?P<len>[\d,]+) tokens per request: (?P<conc>[\d.]+)x)?"
)
_MAX_CONCURRENCY_RE = re.compile(r"Maximum concurrency for (?P<len>[\d,]+) tokens per request: (?P<conc>[\d.]+)x")
_AVAILABLE_KV_RE = re.compile(r"Available KV cache memory: (?P<gib>[-\d.]+) GiB")
_PROFILE_RESULTS_RE = re.compile(r"Memory profiling results: .*?kv_cache_size=(?P<kv>[-\d.]+)GiB")
_PROFILE_REST_RE = re.compile(r"the rest of the memory reserved for KV Cache is (?P<kv>[-\d.]+) ?GiB")
_PROFILE_TAKES_RE = re.compile(r"Memory profiling takes (?P<s>[\d.]+) seconds")
_BLOCKS_OVERRIDE_RE = re.compile(r"Overriding num_gpu_blocks=(?P<old>\d+) with num_gpu_blocks_override=(?P<new>\d+)")
_CACHE_CONFIG_INFO_RE = re.compile(r"cache_config_info with initialization after num_gpu_blocks is: (?P<blocks>\d+)")
# a number and its unit are printed with or without a space between them, by release (`18.20GiB` in 0.10)
_KV_RESERVED_RE = re.compile(
    r"Initial free memory (?P<free>[\d.]+) ?GiB, reserved (?P<kv>[\d.]+) ?GiB memory for KV Cache"
)
_KV_BLOCK_SIZE_RE = re.compile(r"(?:Setting|Forcing) kv cache block size to (?P<size>\d+) for (?P<backend>\S+) backend")
_AUTO_FIT_RE = re.compile(
    r"Auto-fit max_model_len: (?:reduced from (?P<old>\d+) to (?P<new>\d+) to fit in available "
    r"(?:GPU|KV cache) memory \((?:(?P<gib>[\d.]+) GiB available for KV cache)?|full model context length "
    r"(?P<full>\d+) fits)"
)
# vLLM 0.33 (v1/core/kv_cache_planning.py): `... KV cache memory (12.5 GiB GPU)`, the limiting worker's KV memory.
_AUTO_FIT_MEMORY_RE = re.compile(r"available KV cache memory \((?P<gib>[\d.]+) GiB\b")
_PADDING_LAYERS_RE = re.compile(r"Add (?P<n>\d+) padding layers, may waste at most (?P<pct>[\d.]+)% KV cache memory")
# OOM-ish startup errors (raised ValueError / RuntimeError, seen inside `EngineCore failed to start` tracebacks).
_KV_NO_MEMORY_RE = re.compile(r"No available memory for the cache blocks")
_KV_TOO_SMALL_RE = re.compile(
    r"To serve at least one request with the models?'s max seq len \((?P<len>\d+)\), \((?P<need>" + _NUM + r") "
    r"Gi?B KV cache is needed, which is larger than the available KV cache memory \((?P<avail>" + _NUM + r") Gi?B\)"
    r"(?:\. Based on the available memory, the estimated maximum model length is (?P<est>\d+))?"
)
_V0_MAX_SEQ_RE = re.compile(
    r"The model's max seq len \((?P<len>\d+)\) is larger than the maximum number of tokens that can be stored "
    r"in KV cache \((?P<tokens>\d+)\)"
)
_FREE_MEMORY_RE = re.compile(r"Free memory on device .*? on startup is less than desired GPU memory utilization")
_WEIGHTS_TIME_RE = re.compile(r"Loading weights took (?P<s>[\d.]+) seconds")
_WEIGHTS_MEMORY_RE = re.compile(r"Loading model weights took (?P<mem>[\d.]+) (?P<unit>Gi?B)")
_MODEL_LOADING_RE = re.compile(
    r"Model loading took (?P<mem>[-\d.]+) (?P<unit>Gi?B)(?: memory)? and (?P<s>[\d.]+) seconds"
)
_SHARDS_BAR_RE = re.compile(
    r"Loading (?P<what>\w+) checkpoint shards:\s*(?P<pct>\d+)% Completed \| (?P<n>\d+)/(?P<total>\d+) "
    r"\[(?P<elapsed>[\d:]+)<"
)
_INIT_ENGINE_RE = re.compile(
    r"init engine \(profile, create kv cache, warmup model\) took (?P<s>[\d.]+) s(?:econds)?"
    r"(?: \(compilation: (?P<comp>[\d.]+) s(?: . language_model: (?P<lm>[\d.]+) s, encoder: (?P<enc>[\d.]+) s)?\))?"
)


def parse_kv_cache(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _KV_SIZE_RE.search(text)
    if m:
        return [
            KVCache(
                **base,
                kv_tokens=_i(m.group("tokens")),
                tokens_per_request=_i(m.group("len")),
                max_concurrency=_f(m.group("conc")),
                message=_msg(line),
            )
        ]
    m = _MAX_CONCURRENCY_RE.search(text)
    if m:
        return [
            KVCache(
                **base,
                tokens_per_request=_i(m.group("len")),
                max_concurrency=float(m.group("conc")),
                message=_msg(line),
            )
        ]
    m = _AVAILABLE_KV_RE.search(text)
    if m:
        return [KVCache(**base, available_memory_gib=float(m.group("gib")), message=_msg(line))]
    m = _KV_BLOCKS_RE.search(text)
    if m:
        # `# GPU blocks` (V0 <= 0.6.6, V1 0.6.6 - 0.7), `# CUDA blocks` (0.7), `# cuda blocks` / `# cpu blocks`
        # (0.8 - 0.11.0: the device's own blocks first, then the CPU swap blocks).
        return [KVCache(**base, gpu_blocks=int(m.group("blocks")), cpu_blocks=_i(m.group("cpu")), message=_msg(line))]
    m = _CACHE_CONFIG_INFO_RE.search(text)
    if m:
        return [KVCache(**base, gpu_blocks=int(m.group("blocks")), message=_msg(line))]
    m = _BLOCKS_OVERRIDE_RE.search(text)
    if m:
        return [KVCache(**base, gpu_blocks=int(m.group("new")), message=_msg(line))]
    m = _PROFILE_RESULTS_RE.search(text) or _PROFILE_REST_RE.search(text)
    if m:
        return [KVCache(**base, kv_cache_memory_gib=float(m.group("kv")), message=_msg(line))]
    m = _KV_RESERVED_RE.search(text)
    if m:
        return [KVCache(**base, kv_cache_memory_gib=float(m.group("kv")), message=_msg(line))]
    m = _KV_BLOCK_SIZE_RE.search(text)
    if m:
        return [KVCache(**base, block_size=int(m.group("size")), message=_msg(line))]
    m = _AUTO_FIT_RE.search(text)
    if m:
        events: Events = [ModelInfo(**base, max_model_len=int(m.group("new") or m.group("full")))]
        memory = _AUTO_FIT_MEMORY_RE.search(text)
        gib = m.group("gib") or (memory.group("gib") if memory else None)
        if gib:
            events.append(KVCache(**base, available_memory_gib=float(gib), message=_msg(line)))
        return events
    m = _PADDING_LAYERS_RE.search(text)
    if m:
        return [HybridModel(**base, kind="padding-layers", padding_percent=float(m.group("pct")), message=_msg(line))]
    m = _PROFILE_TAKES_RE.search(text)
    if m:
        return [CompileTime(**base, kind="memory_profiling", seconds=float(m.group("s")), message=_msg(line))]
    return None


def parse_kv_errors(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    if _is_traceback_code(text):
        return []
    base = _generic_base(line, ctx)
    m = _KV_TOO_SMALL_RE.search(text)
    if m:
        return [
            EngineFailure(**base, kind="kv-cache-insufficient", message=_msg(line)),
            KVCache(
                **base,
                tokens_per_request=int(m.group("len")),
                available_memory_gib=float(m.group("avail")),
                message=_msg(line),
            ),
        ]
    m = _V0_MAX_SEQ_RE.search(text)
    if m:
        return [
            EngineFailure(**base, kind="kv-cache-insufficient", message=_msg(line)),
            KVCache(
                **base, kv_tokens=int(m.group("tokens")), tokens_per_request=int(m.group("len")), message=_msg(line)
            ),
        ]
    if _KV_NO_MEMORY_RE.search(text):
        return [EngineFailure(**base, kind="kv-cache-insufficient", message=_msg(line))]
    if _FREE_MEMORY_RE.search(text):
        return [EngineFailure(**base, kind="gpu-memory-insufficient", message=_msg(line))]
    return None


def parse_model_load(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _MODEL_LOADING_RE.search(text)
    if m:
        return [
            CompileTime(
                **base,
                kind="model_load",
                seconds=float(m.group("s")),
                memory_gib=_gib(m.group("mem"), m.group("unit")),
                message=_msg(line),
            )
        ]
    m = _WEIGHTS_TIME_RE.search(text)
    if m:
        return [CompileTime(**base, kind="weights_load", seconds=float(m.group("s")), message=_msg(line))]
    m = _WEIGHTS_MEMORY_RE.search(text)
    if m:
        return [
            CompileTime(**base, kind="model_load", memory_gib=_gib(m.group("mem"), m.group("unit")), message=_msg(line))
        ]
    m = _SHARDS_BAR_RE.search(text)
    if m:
        if m.group("n") != m.group("total"):
            return []  # a tqdm redraw before the end: nothing to report yet
        # tqdm repaints the finished bar (often twice); report it once per process.
        seen: set[tuple[int | None, str, bool]] = ctx.state.setdefault(_CAPTURE_BARS, set())
        key = (line.process.pid if line.process else None, f"{m.group('what')} checkpoint shards", True)
        if key in seen:
            return []
        seen.add(key)
        return [
            CompileTime(**base, kind="weights_load", seconds=_clock_seconds(m.group("elapsed")), message=_msg(line))
        ]
    m = _INIT_ENGINE_RE.search(text)
    if m:
        events: Events = [CompileTime(**base, kind="init_engine", seconds=float(m.group("s")), message=_msg(line))]
        if m.group("comp"):
            events.append(CompileTime(**base, kind="compilation", seconds=float(m.group("comp")), message=_msg(line)))
        return events
    return None


def _kv_transfer_metrics(m: re.Match[str], base: dict[str, Any], message: str) -> Events:
    """`KV Transfer metrics: Num successful transfers=12, Avg xfer time (ms)=38.2, ...` (NIXL connector stats)."""
    return [KVCache(**base, transfer=_labelled_values(m.group("transfer")), message=message)]


# One-message notices of vLLM 0.33 (rendered from its wheel by the drift check, docs/drift.md): one row a
# message, first match wins; the line type's cases hold one line of each.
_NOTICES: tuple[tuple[re.Pattern[str], NoticeBuild], ...] = (
    (re.compile("Free memory grew by [\\d.]+ GiB during profiling"), _event(PerfWarning, topic="memory-profiling")),
    (
        re.compile(
            "Free memory on device \\((?P<free_memory_gib>[\\d.]+)/[\\d.]+ GiB\\) on startup\\. Desired GPU memory utilization"
        ),
        _event(KVCache),
    ),
    (re.compile("Using \\w+ data type to store kv cache"), _event(KVCache)),
    (
        # the advice after the first sentence is reworded between releases (0.5: `This may cause accuracy issues`)
        re.compile("Using KV cache scaling factor [\\d.]+ for \\w+\\."),
        _event(PerfWarning, topic="fp8-kv-scale"),
    ),
    (
        re.compile("FP8 KV cache is enabled but prefill queries are not quantized to FP8"),
        _event(PerfWarning, topic="fp8-kv"),
    ),
    (re.compile("Auto set \\((?P<kv_cache_memory_gib>[\\d.]+)/[\\d.]+\\) GiB for KV cache on node"), _event(KVCache)),
    (
        re.compile("Releasing expired KV blocks for request \\S+ which were retrieved by \\d+ remote worker"),
        _event(PerfWarning, topic="kv-transfer"),
    ),
    (re.compile("Got kv_transfer_params, but no KVConnector found"), _event(PerfWarning, topic="kv-transfer")),
    (re.compile("NixlConnector setting KV cache layout to \\w+"), _event(KVCache, connector="nixl")),
    (re.compile("Initializing NIXL Scheduler"), _event(KVCache, connector="nixl")),
    (re.compile("KV Transfer metrics: (?P<transfer>.+)$"), _kv_transfer_metrics),
)


def parse_memory_notices(line: LogLine, ctx: ParseContext) -> Events | None:
    return _notices(_NOTICES, line, ctx)


GRAMMARS: list[Grammar] = [
    _grammar(
        "kv_cache",
        (
            "KV cache size:",
            "Maximum concurrency for",
            "Available KV cache memory:",
            "# GPU blocks:",
            "# CUDA blocks:",
            "# cuda blocks:",
            "# cpu blocks:",
            "# xpu blocks:",
            "# hpu blocks:",
            "# tpu blocks:",
            "num_gpu_blocks is",
            "num_gpu_blocks_override=",
            "Memory profiling results:",
            "reserved for KV Cache is",
            "Memory profiling takes",
            "memory for KV Cache as specified",
            "kv cache block size to",
            "Auto-fit max_model_len:",
            "padding layers, may waste",
        ),
        parse_kv_cache,
        (
            case(
                "sample-1",
                "(EngineCore_DP0 pid=1133552) INFO 10-03 16:22:17 [gpu_worker.py:298] Available KV cache memory: 6.51 GiB",
                ("kv_cache", {}),
            ),
            case(
                "sample-2",
                "(EngineCore_DP0 pid=1133552) INFO 10-03 16:22:17 [kv_cache_utils.py:864] GPU KV cache size: 42,656 tokens",
                ("kv_cache", {}),
            ),
            case(
                "v0.10-kv-cache-memory-bytes",
                "(EngineCore_DP0 pid=71) INFO 09-20 10:00:00 [gpu_worker.py:251] Initial free memory 44.12 GiB, reserved "
                "18.20GiB memory for KV Cache as specified by kv_cache_memory_bytes config and skipped memory profiling.",
                ("kv_cache", {"kv_cache_memory_gib": 18.2}),
                exact=True,
            ),
            case(
                "sample-3",
                "(EngineCore_DP0 pid=1133552) INFO 10-03 16:22:17 [kv_cache_utils.py:868] Maximum concurrency for 32,768 "
                "tokens per request: 1.30x",
                ("kv_cache", {}),
            ),
            case("sample-4", "INFO 01-30 03:19:14 kv_cache_utils.py:395] # GPU blocks: 1381", ("kv_cache", {})),
            case(
                "sample-5",
                "INFO 05-11 12:04:07 [executor_base.py:112] # cpu blocks: 1170, # CPU blocks: 0",
                ("kv_cache", {}),
            ),
            case(
                "kv-v1-0.11",
                "(EngineCore_DP0 pid=1133552) INFO 10-03 16:22:17 [gpu_worker.py:298] Available KV cache memory: 6.51 GiB\n"
                "(EngineCore_DP0 pid=1133552) INFO 10-03 16:22:17 [kv_cache_utils.py:864] GPU KV cache size: 42,656 tokens\n"
                "(EngineCore_DP0 pid=1133552) INFO 10-03 16:22:17 [kv_cache_utils.py:868] Maximum concurrency for 32,768 "
                "tokens per request: 1.30x",
                ("kv_cache", {"available_memory_gib": 6.51}),
                ("kv_cache", {"kv_tokens": 42656}),
                ("kv_cache", {"tokens_per_request": 32768, "max_concurrency": 1.3}),
            ),
            case(
                "kv-v0-0.8-cpu",
                "INFO 05-11 12:04:07 [executor_base.py:112] # cpu blocks: 1170, # CPU blocks: 0\n"
                "INFO 05-11 12:04:07 [executor_base.py:117] Maximum concurrency for 32768 tokens per request: 4.57x\n"
                "INFO 05-11 12:04:07 [llm_engine.py:435] init engine (profile, create kv cache, warmup model) took 0.15 seconds",
                ("kv_cache", {"gpu_blocks": 1170, "cpu_blocks": 0}),
                ("kv_cache", {"max_concurrency": 4.57, "tokens_per_request": 32768}),
                ("compile_time", {"kind": "init_engine", "seconds": 0.15}),
            ),
            case(
                "kv-v1-0.8.0-thousands",
                "INFO 02-19 23:56:55 kv_cache_utils.py:524] GPU KV cache size: 2,042,016 tokens\n"
                "INFO 02-19 23:56:55 kv_cache_utils.py:527] Maximum concurrency for 2,048 tokens per request: 997.08x",
                ("kv_cache", {"kv_tokens": 2042016}),
                ("kv_cache", {"tokens_per_request": 2048, "max_concurrency": 997.08}),
            ),
            case(
                "kv-merged-0.29",
                "(EngineCore pid=43) INFO 09-15 12:00:00 [kv_cache_utils.py:1300] GPU KV cache size: 123,456 tokens, Maximum "
                "concurrency for 32,768 tokens per request: 3.77x",
                ("kv_cache", {"kv_tokens": 123456, "tokens_per_request": 32768, "max_concurrency": 3.77}),
            ),
            case(
                "kv-merged-0.33-host",
                "(EngineCore pid=43) INFO 11-02 12:00:00 [kv_cache_utils.py:1300] GPU + host KV cache size: 500,000 tokens, "
                "Maximum concurrency for 32,768 tokens per request: 15.26x",
                ("kv_cache", {"kv_tokens": 500000, "max_concurrency": 15.26}),
            ),
            case(
                "kv-padding-layers",
                "(EngineCore pid=43) WARNING 05-07 02:17:00 [kv_cache_utils.py:900] Add 2 padding layers, may waste at most "
                "6.25% KV cache memory",
                ("hybrid_model", {"kind": "padding-layers", "padding_percent": 6.25}),
            ),
            case(
                "memory-profiling-v0-three-lines",
                "INFO 12-27 10:00:00 worker.py:265] Memory profiling takes 5.21 seconds\n"
                "INFO 12-27 10:00:00 worker.py:265] the current vLLM instance can use total_gpu_memory (23.58GiB) x "
                "gpu_memory_utilization (0.90) = 21.22GiB\n"
                "INFO 12-27 10:00:00 worker.py:265] model weights take 14.99GiB; non_torch_memory takes 0.12GiB; PyTorch "
                "activation peak memory takes 1.20GiB; the rest of the memory reserved for KV Cache is 4.91GiB.",
                ("compile_time", {"kind": "memory_profiling", "seconds": 5.21}),
                ("kv_cache", {"kv_cache_memory_gib": 4.91}),
            ),
            case(
                "kv-cache-config-info-wrapped",
                "(APIServer pid=2739) INFO 09-04 01:29:30 [loggers.py:142] Engine 000: vllm cache_config_info with "
                "initialization after num_gpu_blocks is\n"
                ": 29053",
                ("kv_cache", {"gpu_blocks": 29053}),
            ),
            case(
                "kv-auto-fit",
                "(EngineCore pid=43) INFO 01-20 10:00:00 [kv_cache_utils.py:1100] Auto-fit max_model_len: reduced from 262144 to "
                "50512 to fit in available GPU memory (6.94 GiB available for KV cache)",
                ("model_info", {"max_model_len": 50512}),
                ("kv_cache", {"available_memory_gib": 6.94}),
            ),
            case(
                "kv-block-size-forced-mla",
                "(Worker_TP0 pid=7) INFO 06-01 10:00:00 [cuda.py:150] Forcing kv cache block size to 64 for FlashMLA backend.",
                ("kv_cache", {"block_size": 64}),
            ),
            case(
                "auto-fit-reduced-0.33",
                "(EngineCore pid=7) INFO 11-30 10:00:00 [kv_cache_planning.py:1404] Auto-fit max_model_len: reduced from "
                "262144 to 98304 to fit in available KV cache memory (12.5 GiB GPU)",
                ("model_info", {"max_model_len": 98304}),
                ("kv_cache", {"available_memory_gib": 12.5}),
            ),
            case(
                "auto-fit-fits-0.33",
                "(EngineCore pid=7) INFO 11-30 10:00:00 [kv_cache_planning.py:1395] Auto-fit max_model_len: full model context "
                "length 40960 fits in available KV cache memory (30.2 GiB GPU)",
                ("model_info", {"max_model_len": 40960}),
                ("kv_cache", {"available_memory_gib": 30.2}),
            ),
        ),
    ),
    _grammar(
        "kv_errors",
        (
            "No available memory for the cache blocks",
            "KV cache is needed, which is larger than",
            "that can be stored in KV cache",
            "on startup is less than desired GPU memory utilization",
        ),
        parse_kv_errors,
        (
            case(
                "sample-1",
                "The model's max seq len (29000) is larger than the maximum number of tokens that can be stored in KV "
                "cache (23648). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing "
                "the engine.",
                ("engine_failure", {}),
                ("kv_cache", {}),
            ),
            case(
                "kv-error-0.14-too-small",
                "(EngineCore_DP0 pid=494) ValueError: To serve at least one request with the models's max seq len (262144), "
                "(36.0 GiB KV cache is needed, which is larger than the available KV cache memory (6.94 GiB). Based on the "
                "available memory, the estimated maximum model length is 50512. Try increasing `gpu_memory_utilization` or "
                "decreasing `max_model_len` when initializing the engine. See "
                "https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.",
                ("engine_failure", {"kind": "kv-cache-insufficient", "engine": "vllm"}),
                ("kv_cache", {"available_memory_gib": 6.94, "tokens_per_request": 262144}),
            ),
            case(
                "kv-error-0.8.5-significant-digits",
                "ERROR 05-01 10:00:00 [core.py:390] ValueError: To serve at least one request with the models's max seq len "
                "(131072), (3.6e+01 GiB KV cache is needed, which is larger than the available KV cache memory (5.5 GiB). "
                "Based on the available memory, the estimated maximum model length is 20000. Try increasing "
                "`gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
                ("kv_cache", {"available_memory_gib": 5.5, "tokens_per_request": 131072}),
            ),
            case(
                "kv-error-no-memory",
                "(EngineCore_DP0 pid=494) ValueError: No available memory for the cache blocks. Try increasing "
                "`gpu_memory_utilization` when initializing the engine.",
                ("engine_failure", {"kind": "kv-cache-insufficient"}),
            ),
            case(
                "kv-error-free-memory",
                "(EngineCore_DP0 pid=494) ValueError: Free memory on device (7.1/23.56 GiB) on startup is less than desired GPU "
                "memory utilization (0.9, 21.2 GiB). Decrease GPU memory utilization or reduce GPU memory used by other "
                "processes.",
                ("engine_failure", {"kind": "gpu-memory-insufficient"}),
            ),
        ),
    ),
    _grammar(
        "model_load",
        (
            "Loading weights took",
            "Loading model weights took",
            "Model loading took",
            "checkpoint shards:",
            "init engine (profile, create kv cache, warmup model)",
        ),
        parse_model_load,
        (
            case(
                "sample-1",
                "(Worker_TP0 pid=34322) INFO 05-06 20:59:57 [default_loader.py:384] Loading weights took 24.84 seconds",
                ("compile_time", {}),
            ),
            case(
                "sample-2",
                "(Worker_TP0 pid=34322) INFO 05-06 20:59:59 [gpu_model_runner.py:4879] Model loading took 12.66 GiB "
                "memory and 31.657031 seconds",
                ("compile_time", {}),
            ),
            case(
                "sample-3",
                "INFO 05-11 12:04:07 [llm_engine.py:435] init engine (profile, create kv cache, warmup model) took 0.15 "
                "seconds",
                ("compile_time", {}),
            ),
            case(
                "kv-v0-0.6.4-stripped-prefixes",
                "Loading model weights took 14.9888 GB\n"
                "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB peak_torch_memory=17.98GiB "
                "memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=2.89GiB "
                "gpu_memory_utilization=0.90\n"
                "# GPU blocks: 1478, # CPU blocks: 2048\n"
                "Maximum concurrency for 29000 tokens per request: 0.82x\n"
                "The model's max seq len (29000) is larger than the maximum number of tokens that can be stored in KV cache "
                "(23648). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
                ("compile_time", {"kind": "model_load", "memory_gib": 14.9888}),
                ("kv_cache", {"kv_cache_memory_gib": 2.89}),
                ("kv_cache", {"gpu_blocks": 1478, "cpu_blocks": 2048}),
                ("kv_cache", {"tokens_per_request": 29000, "max_concurrency": 0.82}),
                ("engine_failure", {"kind": "kv-cache-insufficient"}),
                ("kv_cache", {"kv_tokens": 23648, "tokens_per_request": 29000}),
            ),
            case(
                "model-loading-0.19-tp2",
                "(Worker_TP0 pid=34322) INFO 05-06 20:59:57 [default_loader.py:384] Loading weights took 24.84 seconds\n"
                "(Worker_TP0 pid=34322) INFO 05-06 20:59:59 [gpu_model_runner.py:4879] Model loading took 12.66 GiB memory and "
                "31.657031 seconds",
                ("compile_time", {"kind": "weights_load", "seconds": 24.84}),
                ("compile_time", {"kind": "model_load", "memory_gib": 12.66, "seconds": 31.657031}),
            ),
            case(
                "kv-v1-0.7.1",
                "INFO 01-30 03:18:12 gpu_model_runner.py:848] Loading model weights took 67.7229 GB\n"
                "INFO 01-30 03:19:14 kv_cache_utils.py:395] # GPU blocks: 1381\n"
                "INFO 01-30 03:19:14 kv_cache_utils.py:398] Maximum concurrency for 2048 tokens per request: 10.79x",
                ("compile_time", {"kind": "model_load", "memory_gib": 67.7229}),
                ("kv_cache", {"gpu_blocks": 1381, "cpu_blocks": None}),
                ("kv_cache", {"max_concurrency": 10.79, "tokens_per_request": 2048}),
            ),
            case(
                "init-engine-0.20-compilation",
                "(EngineCore pid=43) INFO 05-07 02:18:01 [core.py:312] init engine (profile, create kv cache, warmup model) took "
                "182.37 s (compilation: 96.10 s)",
                ("compile_time", {"kind": "init_engine", "seconds": 182.37}),
                ("compile_time", {"kind": "compilation", "seconds": 96.1}),
            ),
            case(
                "startup-failed-0.20",
                "(EngineCore pid=74) INFO 05-07 06:12:45 [default_loader.py:391] Loading weights took 62.80 seconds\n"
                "(EngineCore pid=74) ERROR 05-07 06:12:45 [core.py:1136] EngineCore failed to start.\n"
                "(EngineCore pid=74) ERROR 05-07 06:12:45 [core.py:1136] Traceback (most recent call last):\n"
                '(EngineCore pid=74) ERROR 05-07 06:12:45 [core.py:1136]   File "/usr/local/lib/python3.12/dist-packages/vllm/'
                'v1/engine/core.py", line 1110, in run_engine_core',
                ("compile_time", {"kind": "weights_load", "seconds": 62.8}),
                ("engine_failure", {"kind": "startup-failed", "engine": "vllm", "level": "ERROR"}),
            ),
        ),
    ),
    _grammar(
        "memory_notices",
        (
            "Free memory grew by",
            "on startup. Desired GPU memory utilization is",
            "data type to store kv cache",
            "Using KV cache scaling factor",
            "FP8 KV cache is enabled but prefill queries are not quantized",
            "GiB for KV cache on node",
            "Releasing expired KV blocks for request",
            "but no KVConnector found",
            "NixlConnector setting KV cache layout to",
            "Initializing NIXL Scheduler",
            "KV Transfer metrics:",
        ),
        parse_memory_notices,
        (
            case(
                "v0.33-free-memory-grew-by",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [gpu_worker.py:146] Free memory grew by 1.20 GiB during profiling (initial 20.10 GiB, current 21.30 GiB). Sizing the KV cache from the 8 GiB torch reserved instead of the profiling difference.",
                ("perf_warning", {"topic": "memory-profiling"}),
            ),
            case(
                "v0.33-on-startup-desired-gpu-memory-utilizatio",
                "(Worker_TP0 pid=226) INFO 11-30 10:00:00 [gpu_worker.py:1066] Free memory on device (44.12/47.54 GiB) on startup. Desired GPU memory utilization is (8, 8 GiB). Actual usage is 8 GiB for consumed memory (weights + non-torch), 8 GiB for peak activation, and 8 GiB for CUDAGraph memory. Replace gpu_memory_utilization config with `--kv-cache-memory=8` (8 GiB) to fit into requested memory, or `--kv-cache-memory=8` (8 GiB) to fully utilize gpu memory. Current kv cache memory in use is 8 GiB.",
                ("kv_cache", {"free_memory_gib": 44.12}),
            ),
            case(
                "v0.33-data-type-to-store-kv-cache",
                "(APIServer pid=1) INFO 11-30 10:00:00 [cache.py:484] Using fp8_e4m3 data type to store kv cache. It reduces the GPU memory footprint and boosts the performance. Meanwhile, it may cause accuracy drop without a proper scaling factor",
                ("kv_cache", {}),
            ),
            case(
                "v0.33-using-kv-cache-scaling-factor",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [kv_cache.py:165] Using KV cache scaling factor 1.0 for fp8_e4m3. If this is unintended, verify that k/v_scale scaling factors are properly set in the checkpoint.",
                ("perf_warning", {"topic": "fp8-kv-scale"}),
            ),
            case(
                "v0.5-using-kv-cache-scaling-factor",
                "WARNING 08-05 10:00:00 kv_cache.py:70] Using KV cache scaling factor 1.0 for fp8_e4m3. This may cause "
                "accuracy issues. Please make sure k/v_scale scaling factors are available in the fp8 checkpoint.",
                ("perf_warning", {"topic": "fp8-kv-scale"}),
            ),
            case(
                "v0.33-fp8-kv-cache-is-enabled-but-prefill-quer",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [mla_attention.py:2387] FP8 KV cache is enabled but prefill queries are not quantized to FP8. For long-context workloads (ISL >= 4K), enabling FP8 prefill attention can significantly optimize prefill latency. To enable, add: --attention-config '{\"use_prefill_query_quantization\": true}'",
                ("perf_warning", {"topic": "fp8-kv"}),
            ),
            case(
                "v0.33-gib-for-kv-cache-on-node",
                "(Worker_TP0 pid=226) INFO 11-30 10:00:00 [cpu_worker.py:261] Auto set (32.00/251.50) GiB for KV cache on node 0, with 8.00 GiB requested memory for the worker. 8 GiB memory was consumed by non-kv usages.",
                ("kv_cache", {"kv_cache_memory_gib": 32.0}),
            ),
            case(
                "v0.33-releasing-expired-kv-blocks-for-request",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [base_worker.py:3370] Releasing expired KV blocks for request cmpl-3 which were retrieved by 4 remote worker(s) before lease expired.",
                ("perf_warning", {"topic": "kv-transfer"}),
            ),
            case(
                "v0.33-but-no-kvconnector-found",
                "(EngineCore pid=180) WARNING 11-30 10:00:00 [core.py:544] Got kv_transfer_params, but no KVConnector found. Disabling KVTransfer for this request.",
                ("perf_warning", {"topic": "kv-transfer"}),
            ),
            case(
                "v0.33-nixlconnector-setting-kv-cache-layout-to",
                "(Worker_TP0 pid=226) INFO 11-30 10:00:00 [connector.py:162] NixlConnector setting KV cache layout to LBHNC for better xfer performance.",
                ("kv_cache", {"connector": "nixl"}),
            ),
            case(
                "v0.33-initializing-nixl-scheduler",
                "(Worker_TP0 pid=226) INFO 11-30 10:00:00 [base_scheduler.py:109] Initializing NIXL Scheduler 7a3f",
                ("kv_cache", {"connector": "nixl"}),
            ),
            case(
                "v0.33-kv-transfer-metrics",
                "(Worker_TP0 pid=226) INFO 11-30 10:00:00 [metrics.py:108] KV Transfer metrics: Num successful transfers=12, Avg xfer time (ms)=38.2, P90 xfer time (ms)=61.0, Avg post time (ms)=1.1, Avg MB per transfer=24.0, Throughput (MB/s)=628.3",
                (
                    "kv_cache",
                    {"transfer": {"num_successful_transfers": 12, "avg_xfer_time_ms": 38.2, "throughput_mb_s": 628.3}},
                ),
            ),
        ),
    ),
]
