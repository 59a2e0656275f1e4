"""Grammars for SGLang server lines (catalogue/sglang-nccl.md §1-§9), SGLang 0.3.6 to 0.5.23.

SGLang prints no level name, so severity comes from what a line says, not from its header:

    [2026-07-21 15:00:13 TP0 EP0] Decode batch, #running-req: 24, #token: 233600, token usage: 0.66, accept len: 3.05, ...
    [2025-06-12 22:41:35 TP0] Custom allreduce is disabled because it's not supported on more than two PCIe-only GPUs. ...
    [2025-01-23 19:34:55] server_args=ServerArgs(model_path='meta-llama/Meta-Llama-3.1-8B-Instruct', tp_size=1, ...)

Memory sizes SGLang prints as `GB` are bytes / 2**30, so they are GiB already.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from logdoctor.events import (
    AllReduceReason,
    AttentionBackend,
    CompileTime,
    CudaGraph,
    CustomAllReduce,
    Engine,
    EngineFailure,
    EngineVersion,
    EventBase,
    FailureKind,
    HybridKind,
    HybridModel,
    KVCache,
    ModelInfo,
    NcclVersion,
    P2PCheck,
    PerfWarning,
    Preemption,
    Quantization,
    SchedulerConfig,
    SchedulerConfigKind,
    SchedulerStats,
    SpecDecodeStats,
    StartupConfig,
    WarningTopic,
)
from logdoctor.parse import blocks
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext
from logdoctor.parse.pyrepr import parse_value

GraphKind = Literal["capture_failed", "eager_mode"]
GraphRole = Literal["target", "drafter"]
AttentionRole = Literal["target", "drafter", "encoder", "prefill", "decode"]
Build = Callable[[re.Match[str], dict[str, Any], str], list[EventBase]]


@dataclass(frozen=True)
class Rule:
    """One line format: a compiled regex (searched in the message) and what its match means."""

    regex: re.Pattern[str]
    build: Build


def _engine(line: LogLine) -> Engine:
    """vLLM prints some of the same texts (custom all-reduce, AWQ); keep the engine of the line's header."""
    return "vllm" if line.engine_hint == "vllm" else "sglang"


def _apply(rules: list[Rule], line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    message = line.message
    for rule in rules:
        m = rule.regex.search(message)
        if m:
            return rule.build(m, ctx.base(line, _engine(line)), message.strip())
    return None


def _f(value: str | None) -> float | None:
    return None if value is None else float(value)


def _i(value: str | None) -> int | None:
    return None if value is None else int(value)


_BACKEND_SEPARATOR_RE = re.compile(r"[\s-]+")
_NON_WORD_RE = re.compile(r"[^a-z0-9]+")


def _backend(name: str) -> str:
    """`flashinfer` -> FLASHINFER, `flashinfer mla` -> FLASHINFER_MLA, `'fa3'` -> FA3."""
    return _BACKEND_SEPARATOR_RE.sub("_", name.strip().strip("'\"`").rstrip(".")).upper()


def _int_list(text: str) -> list[int] | None:
    parsed = parse_value(text).value
    if isinstance(parsed, list) and all(isinstance(x, int) for x in parsed):
        return [int(x) for x in parsed]
    return None


# --- version ---------------------------------------------------------------------------------------

_PIN_VERSION_RE = re.compile(r"\bsglang(?:\[[\w,\s-]+\])?==(?P<ver>\d+\.\d+[\w.]*)")
_CHECK_ENV_VERSION_RE = re.compile(r"^\s*sglang\s*:\s*v?(?P<ver>\d+\.\d+[\w.+]*)\s*$")
_IMAGE_VERSION_RE = re.compile(r"lmsysorg/sglang:v?(?P<ver>\d+\.\d+\.\d+(?:\.post\d+|rc\d+)?)")


def parse_version(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    for regex, origin in (
        (_CHECK_ENV_VERSION_RE, "check_env"),
        (_PIN_VERSION_RE, "package pin"),
        (_IMAGE_VERSION_RE, "docker image"),
    ):
        m = regex.search(line.message)
        if m:
            return [EngineVersion(**ctx.base(line, "sglang"), version=m.group("ver"), origin=origin)]
    return None


_NCCL_VERSION_RE = re.compile(r"sglang is using nccl==(?P<ver>\d+\.\d+\.\d*)")


def parse_nccl_version(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _NCCL_VERSION_RE.search(line.message)
    if not m:
        return None
    version = m.group("ver")
    if version.endswith("."):  # SGLang renders patch 0 as nothing: 22700 -> "2.27."
        version += "0"
    return [NcclVersion(**ctx.base(line, "sglang"), version=version)]


# --- the server_args dump --------------------------------------------------------------------------

_SERVER_ARGS_RE = re.compile(r"\bserver_args=(?P<dump>(?:ServerArgs\(|\{).*)$")
# `device='cuda', … mem_fraction_static=0.88`: an elision someone typed between two kwargs, without a comma.
_ELISION_BEFORE_KWARG_RE = re.compile(r"(?<=,)\s*(?:…|\.\.\.)\s+(?=[A-Za-z_]\w*=)")
_MAX_DUMP_LINES = 2000
_MAX_DUMP_CHARS = 4 * 1024 * 1024


def _open_brackets(text: str) -> int:
    """Bracket depth at the end of `text`, ignoring quoted strings (negative if over-closed)."""
    depth = 0
    quote: str | None = None
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        i += 1
    return depth


def _server_args_event(line: LogLine, ctx: ParseContext, dump: str, end: int | None) -> list[EventBase]:
    dump = _ELISION_BEFORE_KWARG_RE.sub(" ", dump.strip())
    parsed = parse_value(dump)
    config = parsed.value if isinstance(parsed.value, dict) else {}
    if config.get("__class__") == "ServerArgs":
        config = {k: v for k, v in config.items() if k != "__class__"}
    base = ctx.base(line, "sglang")
    if end is not None:
        base["end_line"] = end
    return [StartupConfig(**base, origin="server_args", config=config, truncated=parsed.truncated)]


def parse_server_args(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _SERVER_ARGS_RE.search(line.message)
    if not m:
        return None
    dump = m.group("dump").rstrip()
    if _open_brackets(dump) <= 0 or dump.endswith(("…", "...")):
        return _server_args_event(line, ctx, dump, None)
    # Unbalanced and not visibly cut: a terminal or a log shipper wrapped it; read the continuation lines.
    parts = [dump]
    state = {"lines": 0, "chars": len(dump), "end": line.number}

    def continuation(nxt: LogLine, ctx: ParseContext) -> list[EventBase] | None:
        text = nxt.text.rstrip()
        if blocks.is_blank(nxt) or nxt.header is not None or nxt.process is not None:
            ctx.block = None
            events = _server_args_event(line, ctx, "".join(parts), state["end"] if state["lines"] else None)
            if blocks.is_blank(nxt):
                return events
            blocks.stash(ctx, events)
            return None
        parts.append(text)
        state["lines"] += 1
        state["chars"] += len(text)
        state["end"] = nxt.number
        joined = "".join(parts)
        if _open_brackets(joined) <= 0 or state["lines"] >= _MAX_DUMP_LINES or state["chars"] >= _MAX_DUMP_CHARS:
            ctx.block = None
            return _server_args_event(line, ctx, joined, state["end"])
        return []

    ctx.block = continuation
    return []


# --- Prefill batch / Decode batch ------------------------------------------------------------------

_BATCH_RE = re.compile(r"\b(?P<kind>Prefill|Decode) batch(?: \[(?P<iter>\d+)\])?[.,]\s+(?P<body>#.*)$")
_GRAPH_KEY_RE = re.compile(r"^(?P<device>cuda|cpu|npu|xpu|musa|hpu) graph$")


def _batch_value(raw: str) -> float | int | str | bool:
    """`24` -> 24, `0.66` -> 0.66, `True` -> True, `91.20%` -> 0.912; anything else stays text."""
    raw = raw.strip()
    if raw == "True" or raw == "False":
        return raw == "True"
    percent = raw.endswith("%")
    text = raw[:-1].rstrip() if percent else raw
    try:
        number: float | int = float(text) if ("." in text or "e" in text or "E" in text) else int(text)
    except ValueError:
        return raw
    if number != number or number in (float("inf"), float("-inf")):
        return raw
    return round(float(number) / 100, 6) if percent else number


@functools.lru_cache(maxsize=1024)  # a batch line repeats the same few keys thousands of times
def _extra_key(key: str) -> str:
    return _NON_WORD_RE.sub("_", key.lower().lstrip("#")).strip("_")


# SGLang key -> SchedulerStats field. Hybrid pools report the full-attention pool as the KV usage.
_BATCH_FIELDS = {
    "#running-req": "running",
    "#token": "num_tokens",
    "#full token": "num_tokens",
    "#gpu token": "num_tokens",
    "token usage": "kv_cache_usage",
    "full token usage": "kv_cache_usage",
    "gpu token usage": "kv_cache_usage",
    "cpu token usage": "cpu_kv_cache_usage",
    "gen throughput (token/s)": "generation_throughput",
    "input throughput (token/s)": "prompt_throughput",
    "#queue-req": "queue",
    "#new-token": "new_tokens",
    "#cached-token": "cached_tokens",
    "cache hit rate": "prefix_cache_hit_rate",
}
_INT_FIELDS = {"running", "num_tokens", "queue", "new_tokens", "cached_tokens"}


def parse_batch(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _BATCH_RE.search(line.message)
    if not m:
        return None
    fields: dict[str, Any] = {}
    extra: dict[str, float | int | str] = {}
    accept_len: float | None = None
    accept_rate: float | None = None
    for item in m.group("body").split(","):
        key, sep, raw = item.partition(":")
        key = key.strip()
        if not sep or not key:
            continue
        value = _batch_value(raw)
        target = _BATCH_FIELDS.get(key)
        graph = _GRAPH_KEY_RE.match(key) if key.endswith(" graph") else None
        if graph and isinstance(value, bool):
            # A prefill batch normally runs without a graph: only the decode flag means eager decoding.
            if m.group("kind") == "Decode":
                fields["cuda_graph"] = value
            else:
                extra["cuda_graph"] = str(value)
            if graph.group("device") != "cuda":
                extra["graph_device"] = graph.group("device")
        elif key == "accept len" and isinstance(value, int | float):
            accept_len = float(value)
        elif key == "accept rate" and isinstance(value, int | float):
            accept_rate = float(value)
        elif target is not None and target not in fields and isinstance(value, int | float):
            fields[target] = int(value) if target in _INT_FIELDS else float(value)
        elif not isinstance(value, bool):
            extra[_extra_key(key)] = value
        else:
            extra[_extra_key(key)] = str(value)
    if "running" not in fields and "new_tokens" not in fields:
        return None
    if m.group("iter"):
        extra["forward_iter"] = int(m.group("iter"))
    base = ctx.base(line, "sglang")
    events: list[EventBase] = [
        SchedulerStats(
            **base,
            format="sglang-decode" if m.group("kind") == "Decode" else "sglang-prefill",
            extra=extra,
            **fields,
        )
    ]
    if accept_len is not None or accept_rate is not None:
        events.append(
            SpecDecodeStats(
                **base,
                format="sglang",
                interval=True,
                mean_acceptance_length=accept_len,
                acceptance_rate=accept_rate,
            )
        )
    return events


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


def _hybrid(kind: HybridKind) -> Build:
    def build(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
        return [HybridModel(**base, kind=kind, message=message)]

    return build


def _failure(kind: FailureKind) -> Build:
    def build(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
        return [EngineFailure(**base, kind=kind, message=message)]

    return build


def _perf(topic: WarningTopic) -> Build:
    def build(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
        return [PerfWarning(**base, topic=topic, message=message)]

    return build


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
    Rule(
        re.compile(
            r"^\s*max_total_num_tokens=(?P<tokens>\d+)(?:, chunked_prefill_size=(?P<chunk>-?\d+))?"
            r"(?:, max_prefill_tokens=\d+)?(?:, max_running_requests=(?P<running>\d+))?"
            r"(?:, context_len=(?P<context>\d+))?(?:, available_(?:gpu|cpu)_mem=(?P<avail>[\d.]+) GB)?"
        ),
        _limits,
    ),
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
]


def parse_memory(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    return _apply(_MEMORY_RULES, line, ctx)


# --- CUDA graphs -----------------------------------------------------------------------------------

_CAPTURE_RE = re.compile(
    r"Capture (?:(?P<name>[\w\- ]+?) )?(?P<graph>cuda|cpu|npu|xpu|musa|CUDA|CPU|NPU|XPU|MUSA) graph "
    r"(?P<phase>begin|end)\b(?P<rest>.*)$"
)
_ELAPSED_RE = re.compile(r"(?:Time elapsed: |elapsed=)(?P<s>[\d.]+) s")
_MEM_USAGE_RE = re.compile(r"mem usage=(?P<gib>-?[\d.]+) GB")
_BS_LIST_RE = re.compile(r"\bbs=(?P<bs>\[[^\]]*\])")


def _capture(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    """0.5.14+ lines name the graph (`target decode`, `target verify`, `draft extend`, `target prefill`, ...)
    and may list the captured batch sizes (`bs=[1, 2]`): batches above the largest run eagerly."""
    name = (m.group("name") or "").lower()
    rest = m.group("rest")
    elapsed = _ELAPSED_RE.search(rest)
    usage = _MEM_USAGE_RE.search(rest)
    bs = _BS_LIST_RE.search(rest)
    sizes = _int_list(bs.group("bs")) if bs else None
    end = m.group("phase") == "end"
    role: GraphRole = "drafter" if "draft" in name else "target"
    events: list[EventBase] = [
        CudaGraph(
            **base,
            kind="capture_finished" if end else "capture_started",
            role=role,
            seconds=float(elapsed.group("s")) if elapsed and end else None,
            memory_gib=float(usage.group("gib")) if usage and end else None,
            batch_sizes=sizes,
            max_batch_size=max(sizes) if sizes else None,
            message=message,
        )
    ]
    if sizes:
        events.append(
            CudaGraph(
                **base, kind="capture_sizes", role=role, batch_sizes=sizes, max_batch_size=max(sizes), message=message
            )
        )
    return events


def _capture_sizes(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    sizes = _int_list(m.group("bs"))
    return [
        CudaGraph(
            **base,
            kind="capture_sizes",
            role="target",
            batch_sizes=sizes,
            max_batch_size=max(sizes) if sizes else None,
            message=message,
        )
    ]


def _graph(kind: GraphKind, role: GraphRole = "target") -> Build:
    def build(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
        return [CudaGraph(**base, kind=kind, role=role, message=message)]

    return build


_GRAPH_RULES = [
    Rule(re.compile(r"Capture (?:cuda|CUDA) graph failed"), _graph("capture_failed")),
    Rule(_CAPTURE_RE, _capture),
    Rule(re.compile(r"Capture cuda graph bs (?P<bs>\[.*\])"), _capture_sizes),
    # PD prefill servers and piecewise prefill graphs: decode graphs are not concerned, so no CudaGraph event.
    Rule(
        re.compile(
            r"Cuda graph is disabled for prefill server|Disable piecewise CUDA graph"
            r"|Disabling auto-selected prefill CUDA graph"
        ),
        _perf("prefill-cuda-graph"),
    ),
    Rule(
        re.compile(r"Cuda graph is disabled because|CUDA graph is disabled because|CUDA Graph is DISABLED"),
        _graph("eager_mode"),
    ),
]


def parse_cuda_graph(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    return _apply(_GRAPH_RULES, line, ctx)


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
]


def parse_attention(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    return _apply(_ATTENTION_RULES, line, ctx)


# --- speculative decoding setup and acceptance -----------------------------------------------------


def _sched(kind: SchedulerConfigKind, enabled: bool | None) -> Build:
    def build(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
        value = m.groupdict().get("value")
        return [SchedulerConfig(**base, kind=kind, enabled=enabled, value=_i(value), message=message)]

    return build


def _eagle_disables_all(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    return [
        SchedulerConfig(**base, kind=kind, enabled=False, message=message)
        for kind in ("prefix-caching", "chunked-prefill", "async-scheduling")
    ]


def _avg_accept(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    """`avg_spec_accept_length=` is the cumulative average since the server started."""
    return [SpecDecodeStats(**base, format="sglang", interval=False, mean_acceptance_length=float(m.group("value")))]


# The overlap scheduler overlaps CPU scheduling with GPU work: vLLM calls the same idea async scheduling.
_SPEC_RULES = [
    Rule(
        re.compile(r"Max running requests is reset to (?P<value>\d+) for speculative decoding"),
        _sched("max-num-seqs", None),
    ),
    Rule(
        re.compile(r"The radix cache, chunked prefill, and overlap scheduler are disabled because"),
        _eagle_disables_all,
    ),
    Rule(
        re.compile(
            r"Overlap scheduler (?:is|are) disabled|Disabling overlap schedule since|Spec v1 is used for"
            r"|Non-overlap \(synchronous\) spec v2 is used"
        ),
        _sched("async-scheduling", False),
    ),
    Rule(
        re.compile(r"overlap schedule is turned on|Spec v2 is enabled|Overlap spec v2 is enabled"),
        _sched("async-scheduling", True),
    ),
    Rule(
        re.compile(r"[Mm]ixed chunked prefill (?:is|are) disabled|mixed chunked prefill are disabled"),
        _sched("mixed-chunk", False),
    ),
    Rule(re.compile(r"Disabling radix cache since speculative decoding"), _sched("prefix-caching", False)),
    Rule(
        re.compile(
            r"DP attention is enabled\.(?: The)? chunked prefill size is adjusted (?:from -?\d+ )?to (?P<value>-?\d+)"
        ),
        _sched("chunked-prefill", True),
    ),
    Rule(re.compile(r"\bavg_spec_accept_length=(?P<value>[\d.]+)"), _avg_accept),
    Rule(
        re.compile(
            r"speculative_num_draft_tokens is adjusted|speculative_eagle_topk is adjusted"
            r"|Speculative token map specified|exceeds the checkpoint's num_draft_slots"
            r"|only supports speculative_num_steps|Rejection sampling is enabled for speculative decoding"
            r"|promoting --speculative-algorithm|does not require setting speculative_draft_model_path"
        ),
        _perf("spec-config"),
    ),
]


def parse_spec(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    return _apply(_SPEC_RULES, line, ctx)


# --- custom all-reduce and P2P ---------------------------------------------------------------------

_CA_REASONS: tuple[tuple[str, AllReduceReason], ...] = (
    ("spans across nodes", "spans-nodes"),
    ("unsupported world size", "world-size"),
    ("more than two PCIe-only GPUs", "pcie-more-than-two"),
    ("lacks GPU P2P capability", "no-p2p"),
)


def _ca_disabled(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    reason = next((code for text, code in _CA_REASONS if text in message), None)
    return [CustomAllReduce(**base, enabled=False, reason=reason, message=message)]


def _ca(enabled: bool, reason: AllReduceReason | None) -> Build:
    def build(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
        return [CustomAllReduce(**base, enabled=enabled, reason=reason, message=message)]

    return build


def _p2p(supported: bool | None) -> Build:
    def build(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
        return [P2PCheck(**base, supported=supported, message=message)]

    return build


_ALLREDUCE_RULES = [
    Rule(re.compile(r"(?:Custom allreduce|CustomAllreduce|CustomAllReduceV2) is disabled "), _ca_disabled),
    Rule(re.compile(r"Setup (?:Custom allreduce|FlashInfer PCIe-IPC allreduce) failed with"), _ca(False, "library")),
    # Deterministic inference is the user's choice; it pins NCCL's tree all-reduce.
    Rule(
        re.compile(r"custom (?:and symmetric-memory )?all reduce (?:is|are) disabled for deterministic"),
        _ca(False, "user"),
    ),
    Rule(re.compile(r"Disabling SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2 because nnodes="), _ca(False, "spans-nodes")),
    Rule(re.compile(r"\[AR\] All-reduce call path: NCCL \(custom AR disabled\)"), _ca(False, None)),
    Rule(re.compile(r"\[AR\] Using \w*Custom\w*"), _ca(True, None)),
    Rule(re.compile(r"FlashInfer PCIe-IPC all-reduce enabled"), _ca(True, None)),
    Rule(re.compile(r"PyMscclpp is disabled"), _perf("mscclpp")),
    Rule(re.compile(r"Two processes do not agree on the P2P access status"), _p2p(False)),
    Rule(re.compile(r"peer access is not supported between these two devices"), _p2p(False)),
    Rule(re.compile(r"(?:generating|reading) GPU P2P access cache|Skipping P2P check"), _p2p(None)),
]


def parse_allreduce(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    return _apply(_ALLREDUCE_RULES, line, ctx)


# --- retraction, crashes, warnings, readiness ------------------------------------------------------


def _retract(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    return [Preemption(**base, mode="retract", count=int(m.group("n")), message=message)]


def _retract_abort(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    return [Preemption(**base, mode="retract-abort", count=1, message=message)]


def _quant_slow(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    return [Quantization(**base, method=m.group("method"), fallback=True, message=message)]


def _cast(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    return [ModelInfo(**base, dtype=m.group("to"))]


def _ready(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
    return [CompileTime(**base, kind="server_ready", message=message)]


_RUNTIME_RULES = [
    Rule(
        re.compile(
            r"(?:KV cache pool is full\. Retract requests\.|Decode out of memory happened\.) #retracted_reqs: (?P<n>\d+)"
        ),
        _retract,
    ),
    Rule(re.compile(r"retract_decode: aborted last request"), _retract_abort),
    Rule(re.compile(r"Failed to retract any request"), _failure("exception")),
    Rule(re.compile(r"[Ww]atchdog timeout \("), _failure("watchdog")),
    Rule(re.compile(r"Scheduler hit an exception"), _failure("exception")),
    Rule(re.compile(r"Received sigquit from a child"), _failure("worker-died")),
    Rule(re.compile(r"memory leak detected!"), _failure("memory-leak")),
    Rule(re.compile(r"(?P<method>[\w-]+) quantization is not fully optimized yet"), _quant_slow),
    Rule(re.compile(r"Casting (?P<from>torch\.\w+) to (?P<to>torch\.\w+)\."), _cast),
    Rule(re.compile(r"The server is fired up and ready to roll!"), _ready),
]


def parse_runtime(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    return _apply(_RUNTIME_RULES, line, ctx)


GRAMMARS: list[Grammar] = [
    Grammar(
        "sglang.batch",
        "sglang",
        ("Decode batch", "Prefill batch"),
        parse_batch,
        (
            "[2026-07-21 15:00:13 TP0 EP0] Decode batch, #running-req: 24, #token: 233600, token usage: 0.66, "
            "accept len: 3.05, accept rate: 0.68, npu graph: True, gen throughput (token/s): 239.06, #queue-req: 2",
            "[2025-01-07 20:16:02 TP0] Prefill batch. #new-seq: 1, #new-token: 75, #cached-token: 0, cache hit rate: "
            "0.00%, token usage: 0.01, #running-req: 1, #queue-req: 62",
            "[2026-10-06 11:01:01 TP0 EP0] Decode batch, #running-req: 13, #full token: 8704, full token usage: 0.00, "
            "#swa token: 3712, swa token usage: 0.01, accept len: 3.19, accept rate: 0.31, cuda graph: True, "
            "gen throughput (token/s): 0.50, #queue-req: 2",
        ),
    ),
    Grammar(
        "sglang.server_args",
        "sglang",
        ("server_args=",),
        parse_server_args,
        (
            "[2026-09-24 01:50:02] server_args={'model_path': '/models/x', 'tp_size': 2, 'quantization': "
            "'auto-round', 'kv_cache_dtype': 'fp8_e4m3', 'speculative_algorithm': 'DFLASH'}",
            "[2025-01-23 19:34:55] server_args=ServerArgs(model_path='meta-llama/Meta-Llama-3.1-8B-Instruct', "
            "tp_size=1, disable_cuda_graph=False, cuda_graph_max_bs=160)",
        ),
    ),
    Grammar(
        "sglang.version",
        "sglang",
        ("sglang==", "sglang[all]==", "sglang: ", "lmsysorg/sglang:"),
        parse_version,
        ("sglang: 0.5.6.post2", "pip install sglang==0.4.6.post5"),
    ),
    Grammar(
        "sglang.nccl_version",
        "sglang",
        ("sglang is using nccl==",),
        parse_nccl_version,
        ("[2025-03-04 00:36:46 TP0] sglang is using nccl==2.21.5",),
    ),
    Grammar(
        "sglang.memory",
        "sglang",
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
        ),
        parse_memory,
        (
            "[2025-01-23 19:35:20 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.72 GB",
            "[2026-09-12 00:22:48 TP0] KV Cache is allocated. dtype: torch.float8_e4m3fn, #tokens: 454112, "
            "K size: 3.46 GB, V size: 3.46 GB",
            "[2025-09-11 10:26:01 TP0] max_total_num_tokens=903439, chunked_prefill_size=8192, max_prefill_tokens=16384, "
            "max_running_requests=3529, context_len=131072, available_gpu_mem=10.26 GB",
            "[2026-10-10 11:59:39] Mamba Cache is allocated. max_mamba_cache_size: 117, conv_state size: 0.28GB, "
            "ssm_state size: 8.07GB ",
        ),
    ),
    Grammar(
        "sglang.cuda_graph",
        "sglang",
        (
            " graph begin",
            " graph end",
            " graph failed",
            "Capture cuda graph bs",
            "Cuda graph is disabled",
            "CUDA graph is disabled",
            "CUDA Graph is DISABLED",
            "Disable piecewise CUDA graph",
            "Disabling auto-selected prefill CUDA graph",
        ),
        parse_cuda_graph,
        (
            "[2025-09-11 10:26:00 TP0] Capture cuda graph end. Time elapsed: 17.13 s. mem usage=0.89 GB. "
            "avail mem=10.26 GB.",
            "[2026-02-01 00:05:03 TP0] Capture cuda graph bs [1, 2, 4, 8]",
            "[2026-08-28 21:34:50] Capture target verify CUDA graph begin. backend=full, num_tokens_per_req=4, "
            "bs=[1, 2], avail mem=26.27 GB",
        ),
    ),
    Grammar(
        "sglang.attention",
        "sglang",
        (
            "Attention backend not",
            "MLA optimization is turned on",
            "Using hybrid attention backend",
            "as attention backend",
            "draft attention backend to",
            "Setting attention backend to",
            "Multimodal attention backend not set",
        ),
        parse_attention,
        (
            "[2025-08-01 10:01:12 TP0] Attention backend not explicitly specified. Use fa3 backend by default.",
            "[2025-03-31 04:29:49 TP0] MLA optimization is turned on. Use triton backend.",
        ),
    ),
    Grammar(
        "sglang.spec",
        "sglang",
        (
            "Max running requests is reset to",
            "Overlap scheduler",
            "overlap schedule",
            "Spec v2 is enabled",
            "Spec v1 is used",
            "spec v2 is used",
            "ixed chunked prefill",
            "Disabling radix cache since",
            "DP attention is enabled.",
            "avg_spec_accept_length=",
            "speculative_num_draft_tokens is adjusted",
            "speculative_eagle_topk is adjusted",
            "Speculative token map specified",
            "num_draft_slots",
            "only supports speculative_num_steps",
            "Rejection sampling is enabled",
            "promoting --speculative-algorithm",
            "does not require setting speculative_draft_model_path",
        ),
        parse_spec,
        (
            "[2026-01-20 10:01:12] Max running requests is reset to 48 for speculative decoding. You can override this "
            "by explicitly setting --max-running-requests.",
            "[2025-06-20 10:01:12] Overlap scheduler is disabled because of using eagle speculative decoding.",
        ),
    ),
    Grammar(
        "sglang.allreduce",
        "sglang",
        (
            # vLLM prints the first texts too; the pipeline finds one keyword per stretch of text, so share vLLM's.
            "Custom allreduce is disabled",
            "allreduce is disabled",
            "Allreduce is disabled",
            "AllReduceV2 is disabled",
            "allreduce failed with",
            "all reduce is disabled for deterministic",
            "all reduce are disabled for deterministic",
            "SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2 because",
            "[AR] All-reduce call path",
            "[AR] Using ",
            "PCIe-IPC all-reduce enabled",
            "PyMscclpp is disabled",
            "Two processes do not agree on the P2P",
            "peer access is not supported",
            "GPU P2P access cache",
            "Skipping P2P check",
        ),
        parse_allreduce,
        (
            "[2025-06-12 22:41:35 TP0] Custom allreduce is disabled because it's not supported on more than two "
            "PCIe-only GPUs. To silence this warning, specify disable_custom_all_reduce=True explicitly.",
        ),
    ),
    Grammar(
        "sglang.runtime",
        "sglang",
        (
            "Retract requests.",
            "Decode out of memory happened",
            "retract_decode: aborted",
            "Failed to retract any request",
            "atchdog timeout (",
            "Scheduler hit an exception",
            "Received sigquit from a child",
            "memory leak detected!",
            "quantization is not fully optimized yet",
            "Casting torch.",
            "The server is fired up and ready to roll!",
        ),
        parse_runtime,
        (
            "[2026-05-24 03:51:47 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 2, "
            "#new_tokens_gained: 65536, #new_token_ratio: 0.4213 -> 0.7000",
            "[2025-01-23 19:35:33] The server is fired up and ready to roll!",
            "[2025-03-31 04:29:49 TP0] awq quantization is not fully optimized yet. The speed can be slower than "
            "non-quantized models.",
        ),
    ),
]
