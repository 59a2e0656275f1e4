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
    NcclEnv,
    NcclVersion,
    Offload,
    P2PCheck,
    PerfWarning,
    Platform,
    Preemption,
    Quantization,
    SchedulerConfig,
    SchedulerConfigKind,
    SchedulerStats,
    SpecDecodeStats,
    StartupConfig,
    WarningTopic,
)
from logdoctor.parse import blocks, cmdline
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case
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
            ctx.state.setdefault(_VERSION, _version_tuple(m.group("ver")))
            return [EngineVersion(**ctx.base(line, "sglang"), version=m.group("ver"), origin=origin)]
    return None


# ctx.state keys this module owns.
_VERSION = "sglang.version"  # tuple[int, ...] of the first version the log printed
_DRAFT_TOKENS = "sglang.speculative_num_draft_tokens"  # from server_args: k + 1

# What `accept rate` on a Decode batch line means (see `_spec_stats`). Before 0.5.11 it was accept_len divided by
# the draft slots per step (speculative_num_draft_tokens = k + 1); from 0.5.11 it is correct drafts / drafted
# tokens (scheduler_components/metrics_reporter.py: num_correct_drafts / (forward_ct * (num_draft_tokens - 1))).
ACCEPT_RATE_PER_DRAFT_SINCE = (0, 5, 11)


def _whole_within(numerator: float, rate: float, half_step: float = 0.005) -> bool:
    """Is numerator / rate a whole number >= 1 for some values that print as these two (`{x:.2f}`)?"""
    low = max(numerator - half_step, 0.0) / (rate + half_step)
    high = (numerator + half_step) / max(rate - half_step, 1e-9)
    return high >= 1 and int(high) >= max(low, 1.0)


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text.split("+")[0])[:3])


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
    draft_tokens = config.get("speculative_num_draft_tokens")
    if isinstance(draft_tokens, int) and not isinstance(draft_tokens, bool) and draft_tokens >= 2:
        ctx.state[_DRAFT_TOKENS] = draft_tokens
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
    return _batch_events(line, ctx, m.group("kind"), m.group("body"), m.group("iter"), fragment=False)


# A Decode batch line without its head: `accept len: 1.55, accept rate: 0.05, cuda graph: True, gen through` (a
# `grep -o 'accept len.*'`, a terminal that cut the line, a paste that kept only the tail). It starts at a key only
# decode lines print, so a Prefill batch tail is never taken for one.
_BATCH_FRAGMENT_RE = re.compile(r"^\s*(?P<body>(?:accept len|gen throughput \(token/s\)): .*)$")


def parse_batch_fragment(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    if _BATCH_RE.search(line.message):
        return None
    m = _BATCH_FRAGMENT_RE.match(line.message)
    if not m:
        return None
    return _batch_events(line, ctx, "Decode", m.group("body"), None, fragment=True)


def _batch_events(
    line: LogLine, ctx: ParseContext, kind: str, body: str, forward_iter: str | None, *, fragment: bool
) -> list[EventBase] | None:
    """The events of a batch line's `key: value, ...` body. A fragment (no head) gives the speculation numbers it
    holds, and the stats only when it still names the running requests."""
    fields: dict[str, Any] = {}
    extra: dict[str, float | int | str] = {}
    accept_len: float | None = None
    accept_rate: float | None = None
    for item in body.split(","):
        key, sep, raw = item.partition(":")
        key = key.strip()
        if not sep or not key:
            continue
        value = _batch_value(raw)
        target = _BATCH_FIELDS.get(key)
        graph = _GRAPH_KEY_RE.match(key) if key.endswith(" graph") else None
        if graph and isinstance(value, bool):
            # A prefill batch normally runs without a graph: only the decode flag means eager decoding.
            if kind == "Decode":
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
    base = ctx.base(line, "sglang")
    events: list[EventBase] = []
    if "running" in fields or "new_tokens" in fields:
        if forward_iter:
            extra["forward_iter"] = int(forward_iter)
        events.append(
            SchedulerStats(
                **base,
                format="sglang-decode" if kind == "Decode" else "sglang-prefill",
                extra=extra,
                **fields,
            )
        )
    elif not fragment or (accept_len is None and accept_rate is None):
        return None
    if accept_len is not None or accept_rate is not None:
        events.append(_spec_stats(base, accept_len, accept_rate, ctx))
    return events


def _spec_stats(base: dict[str, Any], length: float | None, rate: float | None, ctx: ParseContext) -> SpecDecodeStats:
    """`accept len` / `accept rate` of a Decode batch line, with the rate's definition decided.

    format "sglang": the rate before 0.5.11, length / draft slots (k + 1), converted by the facts;
    "sglang-per-draft": the 0.5.11+ rate, already accepted / drafted, with k = round((length - 1) / rate).
    The version printed earlier decides; without one, the draft-token count from server_args; without that, the
    definition under which the implied draft count is a whole number within the rounding of the printed values
    (`{x:.2f}`), and where both are, the 0.5.11+ one (today's releases)."""
    per_draft: bool | None = None
    version = ctx.state.get(_VERSION)
    if version:
        per_draft = version >= ACCEPT_RATE_PER_DRAFT_SINCE
    elif length is not None and rate:
        slots = ctx.state.get(_DRAFT_TOKENS)
        if isinstance(slots, int):
            old_k, new_k = length / rate - 1, (length - 1) / rate
            per_draft = abs(new_k - (slots - 1)) < abs(old_k - (slots - 1))
        else:
            per_draft = _whole_within(length - 1, rate) or not _whole_within(length, rate)
    if per_draft and length is not None and rate:
        return SpecDecodeStats(
            **base,
            format="sglang-per-draft",
            interval=True,
            mean_acceptance_length=length,
            acceptance_rate=rate,
            num_speculative_tokens=max(1, round((length - 1) / rate)),
        )
    return SpecDecodeStats(**base, format="sglang", interval=True, mean_acceptance_length=length, acceptance_rate=rate)


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


def _ev(cls: type[EventBase], **constants: Any) -> Build:
    """One event of `cls` with these constant fields; the regex's named groups fill the fields of the same name
    (pydantic converts the text; `backend` is normalised like every SGLang backend name), and a group named
    `<field>__gb` is decimal GB (`bytes / 1e9`) converted to GiB. SGLang's own `GB` elsewhere is GiB (bytes / 2**30)."""

    def build(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
        values: dict[str, Any] = dict(constants)
        for name, text in m.groupdict().items():
            if text is None:
                continue
            if name.endswith("__gb"):
                values[name[: -len("__gb")]] = round(float(text) * 1e9 / 2**30, 2)
            elif name == "backend":
                values[name] = _backend(text)
            else:
                values[name] = text
        if "message" in cls.model_fields:
            values.setdefault("message", message)
        return [cls(**base, **values)]

    return build


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
    Rule(re.compile("\\w+ mamba checkpoint pool: [\\d.]+ slots, [\\d.]+GB"), _ev(HybridModel, kind="mamba-pool")),
    Rule(re.compile("Not enough host memory for request \\S+"), _ev(Offload, kind="kv")),
    Rule(re.compile("Enable offload kv cache for decode side"), _ev(Offload, kind="kv")),
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
    joined = _JOINED_LIMITS_RE.search(rest) if end else None
    if joined:  # the limits line joined on by a Markdown paste
        events.extend(_limits(joined, base, message))
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
    Rule(re.compile("Disable prefill CUDA graph(?: capture)? because "), _ev(CudaGraph, kind="capture_skipped")),
    Rule(
        re.compile("Cuda graph and server warmup are disabled because of using tensor dump mode"),
        _ev(CudaGraph, kind="eager_mode"),
    ),
    Rule(re.compile("When msProbe is enabled, cuda graph is disabled"), _ev(CudaGraph, kind="eager_mode")),
    Rule(
        re.compile("Debug mode for CUDA graph is enabled via breakable CUDA graph\\. All operations will run eagerly"),
        _ev(CudaGraph, kind="eager_mode"),
    ),
    Rule(re.compile("CUDA graph and shared-experts fusion are disabled"), _ev(CudaGraph, kind="eager_mode")),
    Rule(re.compile("Cuda graph is disabled for diffusion LLM inference"), _ev(CudaGraph, kind="eager_mode")),
    Rule(
        re.compile(
            "(?:Breakable|Full prefill) CUDA graph is incompatible with --enable-dp-attention; disabling prefill CUDA graph"
        ),
        _ev(CudaGraph, kind="capture_skipped"),
    ),
    Rule(
        re.compile(
            "Expanding \\w+ decode CUDA graph max_bs from \\d+ to max_running_requests=(?P<max_batch_size>\\d+)"
        ),
        _ev(CudaGraph, kind="capture_capped"),
    ),
    Rule(
        re.compile("PCG capture stream is not set\\..*?falling back to eager execution"),
        _ev(CudaGraph, kind="capture_failed"),
    ),
    Rule(re.compile("Decode CUDA graph capture on role switch failed"), _ev(CudaGraph, kind="capture_failed")),
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
    Rule(
        re.compile("speculative_adaptive disabled: .*?Falling back to static speculative params"),
        _ev(PerfWarning, topic="spec-config"),
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
    Rule(
        re.compile("Aiter custom all-reduce not available; falling back to sglang CustomAllreduce"),
        _ev(CustomAllReduce, enabled=True, reason="library"),
    ),
    Rule(re.compile("(?P<name>NCCL_GRAPH_REGISTER)=(?P<value>\\S+) was set explicitly"), _ev(NcclEnv)),
    Rule(
        re.compile("FlashInfer PCIe-IPC all-reduce serves bf16 only; \\S+ reductions stay on NCCL"),
        _ev(CustomAllReduce, enabled=False),
    ),
    Rule(
        re.compile("NVLink detection failed\\. This is normal if your machine has no NVLink"),
        _ev(PerfWarning, topic="no-nvlink"),
    ),
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
    Rule(
        re.compile("reports it is not torch\\.compile compatible.*?Disabling torch\\.compile"),
        _ev(CompileTime, kind="compile_disabled"),
    ),
    Rule(re.compile("NCCL/RCCL/HCCL warmup completed in (?P<seconds>[\\d.]+)s"), _ev(CompileTime, kind="warmup")),
    Rule(
        re.compile("Chunked prefill is disabled for multimodal models with the Transformers backend"),
        _ev(SchedulerConfig, kind="chunked-prefill", enabled=False),
    ),
    Rule(
        re.compile("Chunked prefill is disabled because --enable-mis is set"),
        _ev(SchedulerConfig, kind="chunked-prefill", enabled=False),
    ),
    Rule(
        re.compile("Radix cache is disabled because --enable-mis is set"),
        _ev(SchedulerConfig, kind="prefix-caching", enabled=False),
    ),
    Rule(
        re.compile("Setting max_running_requests to (?P<value>\\d+) for \\w+"),
        _ev(SchedulerConfig, kind="max-num-seqs"),
    ),
    Rule(
        re.compile("Overlap schedule is not implemented for speculative decoding on CPU"), _ev(Platform, platform="cpu")
    ),
    Rule(
        re.compile("init_cpu_threads_env and shared memory based AllReduce is disabled"), _ev(Platform, platform="cpu")
    ),
    Rule(re.compile("--enable-symm-mem is not supported on non CUDA/HIP devices"), _ev(Platform)),
    Rule(re.compile("pre_warm_nccl is only applicable for CUDA or HIP hardware"), _ev(Platform)),
    Rule(re.compile("Some requests timed out when bootstrapping"), _ev(EngineFailure, kind="kv-transfer")),
    Rule(
        re.compile("Some requests fail to receive KV Cache transfer done signal"),
        _ev(EngineFailure, kind="kv-transfer"),
    ),
    Rule(
        re.compile(
            "Lost connection with prefill instance \\(bootstrap_addr: \\S+\\), (?P<requests>\\d+) requests affected"
        ),
        _ev(EngineFailure, kind="kv-transfer"),
    ),
    Rule(re.compile("Prefill instance failed to register to bootstrap server"), _ev(EngineFailure, kind="kv-transfer")),
    Rule(re.compile("Decode (?:transfer|handshake) failed for request"), _ev(EngineFailure, kind="kv-transfer")),
    Rule(re.compile("Prefill (?:transfer|bootstrap) failed for request"), _ev(EngineFailure, kind="kv-transfer")),
    Rule(re.compile("bootstrap_thread died on engine_rank=\\d+"), _ev(EngineFailure, kind="kv-transfer")),
    Rule(re.compile("^\\s*Session \\S+ failed\\.\\s*$"), _ev(EngineFailure, kind="kv-transfer")),
    Rule(re.compile("Deferred KV release for room \\S+ timed out"), _ev(EngineFailure, kind="kv-transfer")),
    Rule(
        re.compile("Disaggregated request received without bootstrap room id"), _ev(EngineFailure, kind="kv-transfer")
    ),
]


def parse_runtime(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    return _apply(_RUNTIME_RULES, line, ctx)


# --- quantization kernels and their tuned configs ---------------------------------------------------------------
# SGLang carries vLLM's quantization layers (the Marlin FP8 fallback wording is vLLM's) and its own Triton MoE /
# block-FP8 kernels, which fall back to a default config when no tuned file exists for this GPU and shape.


def _quant(method: str | None, kernel: str | None, fallback: bool) -> Build:
    def build(m: re.Match[str], base: dict[str, Any], message: str) -> list[EventBase]:
        groups = m.groupdict()
        found = groups.get("method")
        return [
            Quantization(
                **base,
                method=(found.lower() if found else method),
                kernel=groups.get("kernel") or kernel,
                fallback=fallback,
                message=message,
            )
        ]

    return build


_QUANTIZATION_RULES = [
    Rule(re.compile(r"Using default MoE kernel config\. Performance might be sub-optimal"), _perf("moe-config")),
    Rule(re.compile(r"Using default W8A8 Block FP8 kernel config"), _perf("fp8-block-config")),
    Rule(re.compile(r"Using default W8A8 Block INT8 kernel config"), _perf("int8-block-config")),
    Rule(
        re.compile(r"however you specified quantization=(?P<method>awq|gptq) explicitly, so forcing (?:awq|gptq)"),
        _quant(None, None, True),
    ),
    Rule(
        re.compile(r"Your GPU does not have native support for (?P<method>FP8|FP4) computation but \S+ quantization"),
        _quant(None, "Marlin", True),
    ),
    Rule(
        re.compile(r"The model is convertible to (?P<method>\w+) during runtime\. Using (?P<kernel>\w+) kernel"),
        _quant(None, None, False),
    ),
    Rule(
        re.compile("is not supported by AWQMarlin\\. Falling back to unoptimized AWQ kernels"),
        _ev(Quantization, method="awq", fallback=True),
    ),
    Rule(
        re.compile("is not supported by AWQMoeMarlin\\. Falling back to Moe WNA16 kernels"),
        _ev(Quantization, method="awq", kernel="MoeWNA16", fallback=True),
    ),
    Rule(
        re.compile(
            "--fp8-gemm-backend=\\S+ cannot serve \\[\\d+, \\d+\\] block FP8 weights on this setup; using Triton"
        ),
        _ev(Quantization, method="fp8", kernel="Triton", fallback=True),
    ),
    Rule(
        re.compile("Block-fp8 layer stays on the Triton kernel"),
        _ev(Quantization, method="fp8", kernel="Triton", fallback=True),
    ),
    Rule(
        re.compile("Fp8MoEMethod has no \\w+ path; using triton for its fp8 experts"),
        _ev(Quantization, method="fp8", kernel="Triton", fallback=True),
    ),
    Rule(re.compile("Detected fp8 checkpoint\\."), _ev(Quantization, method="fp8")),
    Rule(
        re.compile(
            "NVFP4 w4a4 (?:MoE )?requires compute capability >= [\\d.]+; serving this checkpoint weight-only via FP4 Marlin"
        ),
        _ev(Quantization, method="nvfp4", kernel="Marlin", fallback=True),
    ),
    Rule(
        re.compile("Using CompressedTensorsWNA16MarlinMoEMethod"),
        _ev(Quantization, method="compressed-tensors", kernel="Marlin"),
    ),
    Rule(re.compile("You are running Marlin kernel with bf16 on GPUs before SM90"), _ev(Quantization, kernel="Marlin")),
    Rule(re.compile("Detected ModelOpt FP8 checkpoint"), _ev(Quantization, method="modelopt")),
    Rule(re.compile("Dequantized FP4 MoE expert weights to FP8"), _ev(Quantization, method="fp8", fallback=True)),
    Rule(re.compile("on SM\\d+: moe_runner_backend=marlin"), _ev(Quantization, kernel="Marlin")),
]


def parse_quantization(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    return _apply(_QUANTIZATION_RULES, line, ctx)


# --- the command line pasted with the log ----------------------------------------------------------
# `python -m sglang.launch_server --model-path M --tp 2 --disable-cuda-graph` (also `sglang serve`, and the
# same with `\` continuations): the options as the ServerArgs field names the server_args dump prints. The offline
# benchmarks (`bench_one_batch`, formerly `bench_latency`, `bench_offline_throughput`, `bench_one_batch_server`)
# take the same ServerArgs flags beside their own.
_COMMAND_RE = re.compile(
    r"(?:^|(?<=[\s$>:`\"'(]))(?:python\d?(?:\.\d+)? -m sglang\.(?:launch_server|bench_latency|bench_one_batch(?:_server)?"
    r"|bench_offline_throughput)|sglang serve)(?=\s|$)(?P<args>.*)$"
)
# Spellings sglang/srt/server_args.py accepts besides `--field-name` (add_cli_args).
_COMMAND_ALIASES = {
    "--model": "model_path",
    "--tp": "tp_size",
    "--tensor-parallel-size": "tp_size",
    "--pp": "pp_size",
    "--pipeline-parallel-size": "pp_size",
    "--dp": "dp_size",
    "--data-parallel-size": "dp_size",
    "--ep": "ep_size",
    "--expert-parallel-size": "ep_size",
    "--speculative-algo": "speculative_algorithm",
    "--speculative-draft": "speculative_draft_model_path",
    "--speculative-draft-model": "speculative_draft_model_path",
    "--mem-frac": "mem_fraction_static",
}


def _command_event(line: LogLine, ctx: ParseContext, parts: list[str], end: int | None) -> list[EventBase]:
    joined = " ".join(p.rstrip().removesuffix("\\") for p in parts)
    options = cmdline.options(cmdline.tokens(joined), _COMMAND_ALIASES)
    if not options:
        return []
    draft_tokens = options.get("speculative_num_draft_tokens")
    if isinstance(draft_tokens, int) and not isinstance(draft_tokens, bool) and draft_tokens >= 2:
        ctx.state.setdefault(_DRAFT_TOKENS, draft_tokens)
    base = ctx.base(line, "sglang")
    if end is not None:
        base["end_line"] = end
    return [StartupConfig(**base, origin="command line", config=options)]


def parse_command(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _COMMAND_RE.search(line.message)
    if not m:
        return None
    # NCCL settings before the program (`docker run -e NCCL_P2P_DISABLE=1 ...`, `NCCL_P2P_LEVEL=LOC vllm serve`)
    env = cmdline.nccl_env_events(line, ctx, line.message[: m.start()])
    return env + cmdline.read_command(line, ctx, m.group("args").rstrip(), _command_event)


GRAMMARS: list[Grammar] = [
    Grammar(
        "sglang.command_line",
        "sglang",
        ("-m sglang.launch_server", "sglang serve", "-m sglang.bench_"),
        parse_command,
        (
            case(
                "launch-server-pr-12343",
                "CUDA_VISIBLE_DEVICES=0,1,2,3 python3 -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B-FP8 "
                "--tp-size 4 --ep 4",
                (
                    "startup_config",
                    {
                        "origin": "command line",
                        "engine": "sglang",
                        "config": {"model_path": "Qwen/Qwen3-30B-A3B-FP8", "tp_size": 4, "ep_size": 4},
                    },
                ),
                exact=True,
            ),
            case(
                "bench-latency",
                "python3 -m sglang.bench_latency --model-path meta-llama/Meta-Llama-3-8B --batch-size 1 --input 128 "
                "--output 8 --disable-cuda-graph",
                (
                    "startup_config",
                    {
                        "origin": "command line",
                        "config": {"model_path": "meta-llama/Meta-Llama-3-8B", "disable_cuda_graph": True},
                    },
                ),
                exact=True,
            ),
            case(
                "bench-one-batch-server-is-not-bench-one-batch",
                "python -m sglang.bench_one_batch_server --model-path Qwen/Qwen3-8B --batch-size 16 --tp 2",
                ("startup_config", {"config": {"model_path": "Qwen/Qwen3-8B", "tp_size": 2, "batch_size": 16}}),
                exact=True,
            ),
            case(
                "sglang-serve",
                "sglang serve --model-path Qwen/Qwen3-8B --disable-radix-cache --mem-frac 0.8",
                (
                    "startup_config",
                    {
                        "config": {
                            "model_path": "Qwen/Qwen3-8B",
                            "disable_radix_cache": True,
                            "mem_fraction_static": 0.8,
                        }
                    },
                ),
                exact=True,
            ),
            case(
                "continued-lines-eagle3-specforge-310",
                "python -m sglang.launch_server \\\n"
                "    --model-path /ch/pretrained_models/Qwen2.5-VL-7B-Instruct \\\n"
                "    --speculative-algorithm EAGLE3 \\\n"
                "    --speculative-num-draft-tokens 24 \\\n"
                "    --cuda-graph-max-bs 1 \\\n"
                "    --disable-cuda-graph",
                (
                    "startup_config",
                    {
                        "config": {
                            "model_path": "/ch/pretrained_models/Qwen2.5-VL-7B-Instruct",
                            "speculative_algorithm": "EAGLE3",
                            "speculative_num_draft_tokens": 24,
                            "cuda_graph_max_bs": 1,
                            "disable_cuda_graph": True,
                        }
                    },
                ),
                exact=True,
            ),
        ),
    ),
    Grammar(
        "sglang.batch_fragment",
        "sglang",
        ("accept len: ", "gen throughput (token/s): "),
        parse_batch_fragment,
        (
            case(
                "grep-o-accept-tail-0.5.12",
                "accept len: 1.55, accept rate: 0.05, cuda graph: True, gen through",
                ("spec_decode_stats", {"mean_acceptance_length": 1.55, "acceptance_rate": 0.05, "engine": "sglang"}),
                exact=True,
            ),
            case(
                "tail-with-running",
                "gen throughput (token/s): 81.97, #queue-req: 0, #running-req: 3",
                ("scheduler_stats", {"format": "sglang-decode", "generation_throughput": 81.97, "running": 3}),
                exact=True,
            ),
            case(
                "tail-without-numbers-is-nothing",
                "gen throughput (token/s): n/a, #queue-req: 0",
            ),
            case(
                "whole-line-is-the-batch-grammars",
                "[2025-09-03 18:33:19 TP0] Decode batch. #running-req: 1, #token: 177, token usage: 0.00, cuda graph: "
                "True, gen throughput (token/s): 84.20, #queue-req: 0,",
                ("scheduler_stats", {"running": 1}),
            ),
        ),
    ),
    Grammar(
        "sglang.batch",
        "sglang",
        ("Decode batch", "Prefill batch"),
        parse_batch,
        (
            case(
                "sample-1",
                "[2026-07-21 15:00:13 TP0 EP0] Decode batch, #running-req: 24, #token: 233600, token usage: 0.66, "
                "accept len: 3.05, accept rate: 0.68, npu graph: True, gen throughput (token/s): 239.06, #queue-req: 2",
                ("scheduler_stats", {}),
                ("spec_decode_stats", {}),
            ),
            case(
                "sample-2",
                "[2025-01-07 20:16:02 TP0] Prefill batch. #new-seq: 1, #new-token: 75, #cached-token: 0, cache hit rate: "
                "0.00%, token usage: 0.01, #running-req: 1, #queue-req: 62",
                ("scheduler_stats", {}),
            ),
            case(
                "sample-3",
                "[2026-10-06 11:01:01 TP0 EP0] Decode batch, #running-req: 13, #full token: 8704, full token usage: 0.00, "
                "#swa token: 3712, swa token usage: 0.01, accept len: 3.19, accept rate: 0.31, cuda graph: True, "
                "gen throughput (token/s): 0.50, #queue-req: 2",
                ("scheduler_stats", {}),
                ("spec_decode_stats", {}),
            ),
            case(
                "row-1",
                "[2026-04-08 14:05:21 TP0] Decode batch, #running-req: 5, #token: 20800, token usage: 0.29, cuda graph: True, "
                "gen throughput (token/s): 144.95, #queue-req: 0",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 5,
                        "num_tokens": 20800,
                        "kv_cache_usage": 0.29,
                        "cuda_graph": True,
                        "generation_throughput": 144.95,
                        "queue": 0,
                    },
                ),
                exact=True,
            ),
            case(
                "row-2",
                "[2026-07-21 15:00:13 TP0 EP0] Decode batch, #running-req: 24, #token: 233600, token usage: 0.66, accept len: "
                "3.05, accept rate: 0.68, npu graph: True, gen throughput (token/s): 239.06, #queue-req: 2",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 24,
                        "num_tokens": 233600,
                        "kv_cache_usage": 0.66,
                        "cuda_graph": True,
                        "generation_throughput": 239.06,
                        "queue": 2,
                        "extra": {"graph_device": "npu"},
                    },
                ),
                (
                    "spec_decode_stats",
                    {
                        "format": "sglang-per-draft",
                        "interval": True,
                        "mean_acceptance_length": 3.05,
                        "acceptance_rate": 0.68,
                        "num_speculative_tokens": 3,
                    },
                ),
                exact=True,
            ),
            case(
                "row-3",
                "[2025-11-11 04:06:27] Decode batch, #running-req: 46, #token: 34901, token usage: 0.19, cuda graph: False, "
                "gen throughput (token/s): 1447.08, #queue-req: 0, ",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 46,
                        "num_tokens": 34901,
                        "kv_cache_usage": 0.19,
                        "cuda_graph": False,
                        "generation_throughput": 1447.08,
                    },
                ),
                exact=True,
            ),
            case(
                "row-4",
                "1. Country:[2025-01-23 19:35:34 TP0] Decode batch. #running-req: 1, #token: 57, token usage: 0.00, "
                "gen throughput (token/s): 5.91, #queue-req: 0",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 1,
                        "num_tokens": 57,
                        "kv_cache_usage": 0.0,
                        "cuda_graph": None,
                        "generation_throughput": 5.91,
                    },
                ),
                exact=True,
            ),
            case(
                "row-5",
                "[2025-01-23 19:35:34 TP0] Decode batch. #running-req: 1, #token: 60, token usage: 0.00, gen throughput "
                "(token/s): 5.91, #queue-req: 0",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 1,
                        "num_tokens": 60,
                        "generation_throughput": 5.91,
                        "queue": 0,
                    },
                ),
                exact=True,
            ),
            case(
                "row-6",
                "[2025-12-12 08:43:59 TP0] Decode batch, #running-req: 6, #token: 1920, token usage: 0.94, cuda graph: True, "
                "gen throughput (token/s): 446.45, #queue-req: 5,",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 6,
                        "num_tokens": 1920,
                        "kv_cache_usage": 0.94,
                        "cuda_graph": True,
                        "queue": 5,
                    },
                ),
                exact=True,
            ),
            case(
                "row-7",
                "[2026-04-05 20:02:51] Decode batch, #running-req: 32, #token: 11179, token usage: 0.08, cuda graph: True, "
                "gen throughput (token/s): 1635.11, #queue-req: 0",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 32,
                        "num_tokens": 11179,
                        "kv_cache_usage": 0.08,
                        "generation_throughput": 1635.11,
                    },
                ),
                exact=True,
            ),
            case(
                "row-8",
                "\x1b[36m(CommandActor pid=105447)\x1b[0m [2026-10-06 11:01:01 TP0 EP0] Decode batch, #running-req: 13, "
                "#full token: 8704, full token usage: 0.00, #swa token: 3712, swa token usage: 0.01, accept len: 3.19, "
                "accept rate: 0.31, cuda graph: True, gen throughput (token/s): 0.50, #queue-req: 2",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 13,
                        "num_tokens": 8704,
                        "kv_cache_usage": 0.0,
                        "cuda_graph": True,
                        "generation_throughput": 0.5,
                        "queue": 2,
                        "extra": {"swa_token": 3712, "swa_token_usage": 0.01},
                    },
                ),
                (
                    "spec_decode_stats",
                    {
                        "format": "sglang-per-draft",
                        "interval": True,
                        "mean_acceptance_length": 3.19,
                        "acceptance_rate": 0.31,
                        "num_speculative_tokens": 7,
                    },
                ),
                exact=True,
            ),
            case(
                "row-9",
                "[2026-09-30 08:30:35] Decode batch, #running-req: 9, #full token: 11584, full token usage: 0.01, mamba num: "
                "36, mamba usage: 0.60, accept len: 3.04, accept rate: 0.68, cuda graph: True, gen throughput (token/s): "
                "22.40, #queue-req: 1",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 9,
                        "num_tokens": 11584,
                        "kv_cache_usage": 0.01,
                        "generation_throughput": 22.4,
                        "queue": 1,
                        "extra": {"mamba_num": 36, "mamba_usage": 0.6},
                    },
                ),
                (
                    "spec_decode_stats",
                    {
                        "format": "sglang-per-draft",
                        "interval": True,
                        "mean_acceptance_length": 3.04,
                        "acceptance_rate": 0.68,
                        "num_speculative_tokens": 3,
                    },
                ),
                exact=True,
            ),
            case(
                "row-10",
                "[03:51:54] Decode batch, #running-req: 6, #full token: 2435072, full token usage: 0.92, swa token usage: "
                "0.09, gen throughput (token/s): 24.33",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 6,
                        "num_tokens": 2435072,
                        "kv_cache_usage": 0.92,
                        "cuda_graph": None,
                        "queue": None,
                        "generation_throughput": 24.33,
                        "extra": {"swa_token_usage": 0.09},
                    },
                ),
                exact=True,
            ),
            case(
                "row-11",
                "Decode batch. #running-req: 233, #token: 370959, token usage: 0.82, cuda graph: True, gen throughput "
                "(token/s): 4594.01, #queue-req: 317",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 233,
                        "num_tokens": 370959,
                        "kv_cache_usage": 0.82,
                        "queue": 317,
                        "generation_throughput": 4594.01,
                    },
                ),
                exact=True,
            ),
            case(
                "row-12",
                "[2024-12-01 10:00:00 TP0] Decode batch. #running-req: 4, #token: 12840, token usage: 0.06, "
                "gen throughput (token/s): 294.51, #queue-req: 0",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 4,
                        "num_tokens": 12840,
                        "kv_cache_usage": 0.06,
                        "generation_throughput": 294.51,
                        "queue": 0,
                    },
                ),
                exact=True,
            ),
            case(
                "row-13",
                "[2025-01-10 10:00:00 TP0] Decode batch. #running-req: 4, #token: 12840, token usage: 0.06, accept len: 3.12, "
                "gen throughput (token/s): 294.51, #queue-req: 0",
                ("scheduler_stats", {"format": "sglang-decode", "running": 4, "generation_throughput": 294.51}),
                (
                    "spec_decode_stats",
                    {"format": "sglang", "interval": True, "mean_acceptance_length": 3.12, "acceptance_rate": None},
                ),
                exact=True,
            ),
            case(
                "row-14",
                "[2025-03-01 10:00:00 TP0] Decode batch. #running-req: 4, #token: 12840, token usage: 0.06, accept len: 3.12, "
                "gen throughput (token/s): 294.51, largest-len: 0, #queue-req: 0, ",
                ("scheduler_stats", {"format": "sglang-decode", "running": 4, "queue": 0, "extra": {"largest_len": 0}}),
                (
                    "spec_decode_stats",
                    {"format": "sglang", "interval": True, "mean_acceptance_length": 3.12, "acceptance_rate": None},
                ),
                exact=True,
            ),
            case(
                "row-15",
                "[2025-04-01 10:00:00 TP0] Decode batch. #running-req: 4, #token: 12840, token usage: 0.06, accept len: 3.12, "
                "cuda graph: True, gen throughput (token/s): 294.51, #queue-req: 0",
                ("scheduler_stats", {"format": "sglang-decode", "running": 4, "cuda_graph": True}),
                (
                    "spec_decode_stats",
                    {"format": "sglang", "interval": True, "mean_acceptance_length": 3.12, "acceptance_rate": None},
                ),
                exact=True,
            ),
            case(
                "row-16",
                "[2025-10-01 10:00:00 TP0] Decode batch, #running-req: 4, #token: 12840, token usage: 0.06, accept len: 3.12, "
                "accept rate: 0.71, cuda graph: True, gen throughput (token/s): 294.51, #queue-req: 0, ",
                (
                    "scheduler_stats",
                    {"format": "sglang-decode", "running": 4, "kv_cache_usage": 0.06, "cuda_graph": True, "queue": 0},
                ),
                (
                    "spec_decode_stats",
                    {
                        "format": "sglang-per-draft",
                        "interval": True,
                        "mean_acceptance_length": 3.12,
                        "acceptance_rate": 0.71,
                        "num_speculative_tokens": 3,
                    },
                ),
                exact=True,
            ),
            case(
                "row-17",
                "[2026-10-01 10:00:00 TP0] Decode batch [1234], #running-req: 4, #token: 12840, token usage: 0.06, "
                "cuda graph: True, gen throughput (token/s): 294.51, #queue-req: 0, est. decode TFLOPS/s (per GPU): 12.5, "
                "est. read BW (GB/s per GPU): 1800.2, est. write BW (GB/s per GPU): 20.1, fwd occupancy: 91.20%, "
                "fwd+idle occupancy: 95.00%",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 4,
                        "queue": 0,
                        "extra": {
                            "forward_iter": 1234,
                            "est_decode_tflops_s_per_gpu": 12.5,
                            "est_read_bw_gb_s_per_gpu": 1800.2,
                            "est_write_bw_gb_s_per_gpu": 20.1,
                            "fwd_occupancy": 0.912,
                            "fwd_idle_occupancy": 0.95,
                        },
                    },
                ),
                exact=True,
            ),
            case(
                "row-18",
                "[2026-06-01 10:00:00 TP0] Decode batch, #running-req: 4, #gpu token: 4096, gpu token usage: 0.50, "
                "#cpu token: 65536, cpu token usage: 0.25, cuda graph: True, gen throughput (token/s): 100.00, #queue-req: 0",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "num_tokens": 4096,
                        "kv_cache_usage": 0.5,
                        "cpu_kv_cache_usage": 0.25,
                        "extra": {"cpu_token": 65536},
                    },
                ),
                exact=True,
            ),
            case(
                "row-19",
                "[2025-11-01 10:00:00 TP0] Decode batch, #running-req: 8, #token: 4000, token usage: 0.10, pre-allocated "
                "usage: 0.05, #prealloc-req: 1, #transfer-req: 2, #retracted-req: 3, cuda graph: True, gen throughput "
                "(token/s): 500.00, #queue-req: 0, ",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-decode",
                        "running": 8,
                        "extra": {
                            "pre_allocated_usage": 0.05,
                            "prealloc_req": 1,
                            "transfer_req": 2,
                            "retracted_req": 3,
                        },
                    },
                ),
                exact=True,
            ),
            case(
                "row-20",
                "[2025-01-07 20:16:02 TP0] Prefill batch. #new-seq: 1, #new-token: 75, #cached-token: 0, cache hit rate: 0.00%, "
                "token usage: 0.01, #running-req: 1, #queue-req: 62",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-prefill",
                        "new_tokens": 75,
                        "cached_tokens": 0,
                        "prefix_cache_hit_rate": 0.0,
                        "kv_cache_usage": 0.01,
                        "running": 1,
                        "queue": 62,
                        "extra": {"new_seq": 1},
                    },
                ),
                exact=True,
            ),
            case(
                "row-21",
                "[2026-05-15 12:50:14] Prefill batch, #new-seq: 1, #new-token: 2048, #cached-token: 0, full token usage: 0.01, "
                "swa token usage: 0.02, #running-req: 0, #queue-req: 0, input throughput (token/s): 46.36, cuda graph: False",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-prefill",
                        "new_tokens": 2048,
                        "kv_cache_usage": 0.01,
                        "prompt_throughput": 46.36,
                        "cuda_graph": None,
                        "extra": {"new_seq": 1, "swa_token_usage": 0.02, "cuda_graph": "False"},
                    },
                ),
                exact=True,
            ),
            case(
                "row-22",
                "[2026-04-05 20:02:51] Prefill batch, #new-seq: 1, #new-token: 158, #cached-token: 0, token usage: 0.08, "
                "#running-req: 31, #queue-req: 0, cuda graph: True, input throughput (token/s): 559.53",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-prefill",
                        "new_tokens": 158,
                        "running": 31,
                        "queue": 0,
                        "prompt_throughput": 559.53,
                    },
                ),
                exact=True,
            ),
            case(
                "row-23",
                "[2026-07-21 15:00:13 TP0 EP0] Prefill batch, #new-seq: 8, #new-token: 54400, #cached-token: 482304, token "
                "usage: 0.66, #running-req: 16, #queue-req: 2, #pending-token: 0, npu graph: False, input throughput "
                "(token/s): 2793.64",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-prefill",
                        "new_tokens": 54400,
                        "cached_tokens": 482304,
                        "kv_cache_usage": 0.66,
                        "running": 16,
                        "queue": 2,
                        "prompt_throughput": 2793.64,
                        "extra": {"new_seq": 8, "pending_token": 0, "cuda_graph": "False", "graph_device": "npu"},
                    },
                ),
                exact=True,
            ),
            case(
                "row-24",
                "[2026-09-30 08:30:15] Prefill batch, #new-seq: 1, #new-token: 64, #cached-token: 128, full token usage: 0.00, "
                "mamba usage: 0.05, #running-req: 0, #queue-req: 0, #pending-token: 0, cuda graph: False, input throughput "
                "(token/s): 7.34",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-prefill",
                        "new_tokens": 64,
                        "cached_tokens": 128,
                        "kv_cache_usage": 0.0,
                        "prompt_throughput": 7.34,
                    },
                ),
                exact=True,
            ),
            case(
                "row-25",
                "[2025-10-01 10:00:00 TP0] Prefill batch, #new-seq: 1, #new-token: 512, #cached-token: 0, token usage: 0.01, "
                "#running-req: 3, #queue-req: 0, ",
                ("scheduler_stats", {"format": "sglang-prefill", "new_tokens": 512, "running": 3, "queue": 0}),
                exact=True,
            ),
            case(
                "row-26",
                "[2025-07-01 10:00:00 TP0] Prefill batch. #new-seq: 1, #new-token: 512, #cached-token: 0, token usage: 0.01, "
                "#unbootstrapped-req: 0, #queue-req: 0, #transferring-req: 1, input throughput (token/s): 1024.55, ",
                (
                    "scheduler_stats",
                    {
                        "format": "sglang-prefill",
                        "running": None,
                        "new_tokens": 512,
                        "prompt_throughput": 1024.55,
                        "extra": {"new_seq": 1, "unbootstrapped_req": 0, "transferring_req": 1},
                    },
                ),
                exact=True,
            ),
            case(
                "accept-rate-per-draft-from-server-args",
                "[2026-03-01 10:00:00] server_args=ServerArgs(model_path='Qwen/Qwen3-8B', tp_size=1, "
                "speculative_algorithm='EAGLE', speculative_num_steps=3, speculative_num_draft_tokens=4)\n"
                "[2026-03-01 10:01:00 TP0] Decode batch, #running-req: 1, #token: 900, token usage: 0.01, accept len: 1.42, "
                "accept rate: 0.14, cuda graph: True, gen throughput (token/s): 80.00, #queue-req: 0",
                (
                    "spec_decode_stats",
                    {"format": "sglang-per-draft", "acceptance_rate": 0.14, "num_speculative_tokens": 3},
                ),
            ),
            case(
                "accept-rate-per-slot-before-0.5.11",
                "sglang: 0.5.10\n"
                "[2026-03-01 10:01:00 TP0] Decode batch, #running-req: 1, #token: 900, token usage: 0.01, accept len: 3.12, "
                "accept rate: 0.78, cuda graph: True, gen throughput (token/s): 80.00, #queue-req: 0",
                ("spec_decode_stats", {"format": "sglang", "mean_acceptance_length": 3.12, "acceptance_rate": 0.78}),
            ),
            case(
                "accept-rate-per-draft-from-0.5.11",
                "sglang: 0.5.11\n"
                "[2026-03-01 10:01:00 TP0] Decode batch, #running-req: 1, #token: 900, token usage: 0.01, accept len: 3.12, "
                "accept rate: 0.78, cuda graph: True, gen throughput (token/s): 80.00, #queue-req: 0",
                (
                    "spec_decode_stats",
                    {"format": "sglang-per-draft", "acceptance_rate": 0.78, "num_speculative_tokens": 3},
                ),
            ),
        ),
    ),
    Grammar(
        "sglang.server_args",
        "sglang",
        ("server_args=",),
        parse_server_args,
        (
            case(
                "sample-1",
                "[2026-09-24 01:50:02] server_args={'model_path': '/models/x', 'tp_size': 2, 'quantization': "
                "'auto-round', 'kv_cache_dtype': 'fp8_e4m3', 'speculative_algorithm': 'DFLASH'}",
                ("startup_config", {}),
            ),
            case(
                "sample-2",
                "[2025-01-23 19:34:55] server_args=ServerArgs(model_path='meta-llama/Meta-Llama-3.1-8B-Instruct', "
                "tp_size=1, disable_cuda_graph=False, cuda_graph_max_bs=160)",
                ("startup_config", {}),
            ),
        ),
    ),
    Grammar(
        "sglang.version",
        "sglang",
        ("sglang==", "sglang[all]==", "sglang: ", "lmsysorg/sglang:"),
        parse_version,
        (
            case("sample-1", "sglang: 0.5.6.post2", ("engine_version", {})),
            case("sample-2", "pip install sglang==0.4.6.post5", ("engine_version", {})),
            case(
                "row-1",
                "sglang: 0.5.6.post2",
                ("engine_version", {"version": "0.5.6.post2", "origin": "check_env", "engine": "sglang"}),
                exact=True,
            ),
            case(
                "row-2",
                "pip install sglang[all]==0.4.6.post5",
                ("engine_version", {"version": "0.4.6.post5", "origin": "package pin"}),
                exact=True,
            ),
            case(
                "row-3",
                "docker run --gpus all lmsysorg/sglang:v0.5.20-cu129 python3 -m sglang.launch_server",
                ("engine_version", {"version": "0.5.20", "origin": "docker image"}),
                exact=True,
            ),
        ),
    ),
    Grammar(
        "sglang.nccl_version",
        "sglang",
        ("sglang is using nccl==",),
        parse_nccl_version,
        (
            case("sample-1", "[2025-03-04 00:36:46 TP0] sglang is using nccl==2.21.5", ("nccl_version", {})),
            case(
                "row-1",
                "[2025-03-04 00:36:46 TP0] sglang is using nccl==2.21.5",
                ("nccl_version", {"version": "2.21.5", "engine": "sglang"}),
                exact=True,
            ),
            case(
                "row-2",
                "[2025-02-24 14:09:34 TP12] sglang is using nccl==2.21.5",
                ("nccl_version", {"version": "2.21.5"}),
                exact=True,
            ),
            case(
                "row-3",
                "[2026-01-01 10:00:00 TP0] sglang is using nccl==2.27.",
                ("nccl_version", {"version": "2.27.0"}),
                exact=True,
            ),
        ),
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
            "Memory pool end. avail mem=",
            "max_running_requests was reduced from the requested",
            "Post-capture KV sizing: KV cache allocated.",
            "Post-capture KV sizing: draft KV cache allocated.",
            "Mamba radix extra-buffer is enabled with chunked_prefill_size=",
            "Disabling hybrid SWA memory for",
            "mamba checkpoint pool:",
            "Not enough host memory for request",
            "Enable offload kv cache for decode side",
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
            "Disable prefill CUDA graph",
            "Cuda graph and server warmup are disabled because of using tensor dump mode",
            "When msProbe is enabled, cuda graph is disabled",
            "Debug mode for CUDA graph is enabled via breakable CUDA graph",
            "CUDA graph and shared-experts fusion are disabled",
            "Cuda graph is disabled for diffusion LLM inference",
            "Breakable CUDA graph is incompatible with --enable-dp-attention; disabling prefill",
            "Full prefill CUDA graph is incompatible with --enable-dp-attention",
            "decode CUDA graph max_bs from",
            "PCG capture stream is not set",
            "Decode CUDA graph capture on role switch failed",
        ),
        parse_cuda_graph,
        (
            case(
                "sample-1",
                "[2025-09-11 10:26:00 TP0] Capture cuda graph end. Time elapsed: 17.13 s. mem usage=0.89 GB. "
                "avail mem=10.26 GB.",
                ("cuda_graph", {}),
            ),
            case("sample-2", "[2026-02-01 00:05:03 TP0] Capture cuda graph bs [1, 2, 4, 8]", ("cuda_graph", {})),
            case(
                "joined-limits",
                # realworld/sglang-r003 (sglang#33483): two lines a Markdown paste joined with a space
                "Capture target decode CUDA graph end. elapsed=0.89 s, mem usage=0.15 GB, avail mem=6.95 GB "
                "max_total_num_tokens=2980168, chunked_prefill_size=4096, max_prefill_tokens=16384, "
                "max_running_requests=4096, context_len=32768, available_gpu_mem=6.95 GB",
                ("cuda_graph", {"kind": "capture_finished", "seconds": 0.89}),
                ("kv_cache", {"kv_tokens": 2980168}),
                ("scheduler_config", {"kind": "max-num-seqs", "value": 4096}),
                ("scheduler_config", {"kind": "chunked-prefill", "value": 4096}),
                ("model_info", {"max_model_len": 32768}),
            ),
            case(
                "sample-3",
                "[2026-08-28 21:34:50] Capture target verify CUDA graph begin. backend=full, num_tokens_per_req=4, "
                "bs=[1, 2], avail mem=26.27 GB",
                ("cuda_graph", {}),
            ),
            case(
                "row-1",
                "[2025-01-23 19:35:27 TP0] Capture cuda graph end. Time elapsed: 6.57 s",
                ("cuda_graph", {"kind": "capture_finished", "role": "target", "seconds": 6.57, "memory_gib": None}),
                exact=True,
            ),
            case(
                "row-2",
                "[2025-09-11 10:26:00 TP0] Capture cuda graph end. Time elapsed: 17.13 s. mem usage=0.89 GB. avail mem=10.26 GB.",
                ("cuda_graph", {"kind": "capture_finished", "role": "target", "seconds": 17.13, "memory_gib": 0.89}),
                exact=True,
            ),
            case(
                "row-3",
                "[2026-02-01 00:05:03 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=2.98 GB",
                ("cuda_graph", {"kind": "capture_started", "role": "target", "seconds": None}),
                exact=True,
            ),
            case(
                "row-4",
                "[2026-02-01 00:05:03 TP0] Capture cuda graph bs [1, 2, 4, 8]",
                (
                    "cuda_graph",
                    {"kind": "capture_sizes", "role": "target", "batch_sizes": [1, 2, 4, 8], "max_batch_size": 8},
                ),
                exact=True,
            ),
            case(
                "row-5",
                "[2025-06-01 10:00:00 TP0] Capture cuda graph bs [1, 2, 4, 8, 12, 16, 24, 32, …, 256]",
                ("cuda_graph", {"kind": "capture_sizes", "max_batch_size": 256}),
                exact=True,
            ),
            case(
                "row-6",
                "[2026-08-28 21:34:50] Capture target verify CUDA graph begin. backend=full, num_tokens_per_req=4, bs=[1, 2], "
                "avail mem=26.27 GB",
                (
                    "cuda_graph",
                    {"kind": "capture_started", "role": "target", "batch_sizes": [1, 2], "max_batch_size": 2},
                ),
                ("cuda_graph", {"kind": "capture_sizes", "role": "target", "batch_sizes": [1, 2], "max_batch_size": 2}),
                exact=True,
            ),
            case(
                "row-7",
                "[2026-08-28 21:34:51] Capture target verify CUDA graph end. elapsed=1.61 s, mem usage=0.11 GB, avail mem=26.15 GB.",
                ("cuda_graph", {"kind": "capture_finished", "role": "target", "seconds": 1.61, "memory_gib": 0.11}),
                exact=True,
            ),
            case(
                "row-8",
                "[2026-10-20 10:00:00] Capture target decode CUDA graph end. bs=[1, 2, 4], elapsed=3.00 s, mem usage=0.50 GB, "
                "avail mem=20.00 GB.",
                ("cuda_graph", {"kind": "capture_finished", "seconds": 3.0, "max_batch_size": 4}),
                ("cuda_graph", {"kind": "capture_sizes", "max_batch_size": 4}),
                exact=True,
            ),
            case(
                "row-9",
                "[2025-07-01 10:00:00 TP0] Capture draft cuda graph end. Time elapsed: 2.50 s. mem usage=0.20 GB. avail mem="
                "30.00 GB.",
                ("cuda_graph", {"kind": "capture_finished", "role": "drafter", "seconds": 2.5, "memory_gib": 0.2}),
                exact=True,
            ),
            case(
                "row-10",
                "[2026-01-01 10:00:00 TP0] Capture draft extend cuda graph begin (step 1). This can take up to several "
                "minutes. avail mem=30.00 GB",
                ("cuda_graph", {"kind": "capture_started", "role": "drafter"}),
                exact=True,
            ),
            case(
                "row-11",
                "[2026-07-01 10:00:00 TP0] Capture draft decode CUDA graph begin. backend=full, num_tokens_per_req=1, "
                "bs=[1, 2, 4], avail mem=30.00 GB",
                ("cuda_graph", {"kind": "capture_started", "role": "drafter"}),
                ("cuda_graph", {"kind": "capture_sizes", "role": "drafter"}),
                exact=True,
            ),
            case(
                "row-12",
                "[2026-05-16 10:00:00 TP0] Capture Frozen-KV MTP draft cuda graph begin.",
                ("cuda_graph", {"kind": "capture_started", "role": "drafter"}),
                exact=True,
            ),
            case(
                "row-13",
                "[2026-01-01 10:00:00 TP0] Capture piecewise CUDA graph end. Time elapsed: 4.00 s. mem usage=0.30 GB. avail "
                "mem=20.00 GB.",
                ("cuda_graph", {"kind": "capture_finished", "role": "target", "seconds": 4.0}),
                exact=True,
            ),
            case(
                "row-14",
                "Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 2.00 GiB",
                ("cuda_graph", {"kind": "capture_failed", "role": "target"}),
                exact=True,
            ),
            case(
                "row-15",
                "[2025-02-01 10:00:00 TP0] Cuda graph is disabled because of using torch native attention backend",
                ("cuda_graph", {"kind": "eager_mode", "role": "target"}),
                exact=True,
            ),
            case(
                "row-16",
                "[2025-10-01 10:00:00] Cuda graph is disabled because of using torch Flex Attention backend",
                ("cuda_graph", {"kind": "eager_mode"}),
                exact=True,
            ),
            case(
                "row-17",
                "[2025-06-01 10:00:00] Cuda graph is disabled because deepep_mode=`normal`",
                ("cuda_graph", {"kind": "eager_mode"}),
                exact=True,
            ),
            case(
                "row-18",
                "[2026-05-07 10:00:00] CUDA graph is disabled because --enable-mis is set.",
                ("cuda_graph", {"kind": "eager_mode"}),
                exact=True,
            ),
            case(
                "row-19",
                "[2025-12-01 10:00:00] Cuda graph is disabled for prefill server when piecewise cuda graph is not enabled.",
                ("perf_warning", {"topic": "prefill-cuda-graph"}),
                exact=True,
            ),
            case(
                "row-20",
                "[2026-02-01 10:00:00] Disable piecewise CUDA graph because --disable-piecewise-cuda-graph is set",
                ("perf_warning", {"topic": "prefill-cuda-graph"}),
                exact=True,
            ),
            case(
                "v0.5.23-disable-prefill-cuda-graph-1",
                "[2025-11-30 10:00:00 TP0] Disable prefill CUDA graph because the capture size is not set",
                ("cuda_graph", {"kind": "capture_skipped"}),
            ),
            case(
                "v0.5.23-disable-prefill-cuda-graph-2",
                "[2025-11-30 10:00:00 TP0] Disable prefill CUDA graph because the current LoRA configuration does not support it (unsupported LoRA backend, MoE LoRA without full or breakable capture, or DP attention).",
                ("cuda_graph", {"kind": "capture_skipped"}),
            ),
            case(
                "v0.5.23-disable-prefill-cuda-graph-3",
                "[2025-11-30 10:00:00 TP0] Disable prefill CUDA graph because cuda_graph_config resolved prefill.backend='disabled' (e.g. via --cuda-graph-backend-prefill=disabled or auto-disable rules).",
                ("cuda_graph", {"kind": "capture_skipped"}),
            ),
            case(
                "v0.5.23-disable-prefill-cuda-graph-4",
                "[2025-11-30 10:00:00 TP0] Disable prefill CUDA graph capture because no configured capture size fits backend=breakable with max_capture_tokens=8192 (max_capture_requests=48, context_length=32768, request-pool size=49).",
                ("cuda_graph", {"kind": "capture_skipped"}),
            ),
            case(
                "v0.5.23-cuda-graph-and-server-warmup-are-disable",
                "[2025-11-30 10:00:00 TP0] Cuda graph and server warmup are disabled because of using tensor dump mode",
                ("cuda_graph", {"kind": "eager_mode"}),
            ),
            case(
                "v0.5.23-when-msprobe-is-enabled-cuda-graph-is-di",
                "[2025-11-30 10:00:00 TP0] When msProbe is enabled, cuda graph is disabled because msProbe only supports dump in eager mode, warmup is disabled(skip_server_warmup=True) because there is no need to dump data for this stage.",
                ("cuda_graph", {"kind": "eager_mode"}),
            ),
            case(
                "v0.5.23-debug-mode-for-cuda-graph-is-enabled-via",
                "[2025-11-30 10:00:00 TP0] Debug mode for CUDA graph is enabled via breakable CUDA graph. All operations will run eagerly through the graph capture/replay path.",
                ("cuda_graph", {"kind": "eager_mode"}),
            ),
            case(
                "v0.5.23-cuda-graph-and-shared-experts-fusion-are",
                "[2025-11-30 10:00:00 TP0] expert_pack selected: CUDA graph and shared-experts fusion are disabled for correctness.",
                ("cuda_graph", {"kind": "eager_mode"}),
            ),
            case(
                "v0.5.23-cuda-graph-is-disabled-for-diffusion-llm",
                "[2025-11-30 10:00:00 TP0] Cuda graph is disabled for diffusion LLM inference on AMD GPUs",
                ("cuda_graph", {"kind": "eager_mode"}),
            ),
            case(
                "v0.5.23-breakable-cuda-graph-is-incompatible-wit",
                "[2025-11-30 10:00:00 TP0] Breakable CUDA graph is incompatible with --enable-dp-attention; disabling prefill CUDA graph.",
                ("cuda_graph", {"kind": "capture_skipped"}),
            ),
            case(
                "v0.5.23-full-prefill-cuda-graph-is-incompatible-",
                "[2025-11-30 10:00:00 TP0] Full prefill CUDA graph is incompatible with --enable-dp-attention; disabling prefill CUDA graph.",
                ("cuda_graph", {"kind": "capture_skipped"}),
            ),
            case(
                "v0.5.23-decode-cuda-graph-max-bs-from",
                "[2025-11-30 10:00:00 TP0] Expanding multimodal decode CUDA graph max_bs from 32 to max_running_requests=64.",
                ("cuda_graph", {"kind": "capture_capped", "max_batch_size": 64}),
            ),
            case(
                "v0.5.23-pcg-capture-stream-is-not-set",
                "[2025-11-30 10:00:00 TP0] PCG capture stream is not set. This can be a Dynamo runtime recompilation or an optional VLM branch pre-warmed outside CUDA graph capture; falling back to eager execution for this subgraph.",
                ("cuda_graph", {"kind": "capture_failed"}),
            ),
            case(
                "v0.5.23-decode-cuda-graph-capture-on-role-switch",
                "[2025-11-30 10:00:00 TP0] Decode CUDA graph capture on role switch failed",
                ("cuda_graph", {"kind": "capture_failed"}),
            ),
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
            "speculative_adaptive disabled:",
        ),
        parse_spec,
        (
            case(
                "sample-1",
                "[2026-01-20 10:01:12] Max running requests is reset to 48 for speculative decoding. You can override this "
                "by explicitly setting --max-running-requests.",
                ("scheduler_config", {}),
            ),
            case(
                "sample-2",
                "[2025-06-20 10:01:12] Overlap scheduler is disabled because of using eagle speculative decoding.",
                ("scheduler_config", {}),
            ),
            case(
                "row-1",
                "[2026-01-20 10:01:12] Max running requests is reset to 48 for speculative decoding. You can override this by "
                "explicitly setting --max-running-requests.",
                ("scheduler_config", {"kind": "max-num-seqs", "value": 48}),
                exact=True,
            ),
            case(
                "row-2",
                "[2025-01-10 10:00:00] The radix cache, chunked prefill, and overlap scheduler are disabled because of using "
                "eagle speculative decoding.",
                ("scheduler_config", {"kind": "prefix-caching", "enabled": False}),
                ("scheduler_config", {"kind": "chunked-prefill", "enabled": False}),
                ("scheduler_config", {"kind": "async-scheduling", "enabled": False}),
                exact=True,
            ),
            case(
                "row-3",
                "[2025-03-01 10:00:00] Overlap scheduler are disabled because of using eagle speculative decoding.",
                ("scheduler_config", {"kind": "async-scheduling", "enabled": False}),
                exact=True,
            ),
            case(
                "row-4",
                "[2025-06-20 10:01:12] Overlap scheduler is disabled because of using eagle speculative decoding.",
                ("scheduler_config", {"kind": "async-scheduling", "enabled": False}),
                exact=True,
            ),
            case(
                "row-5",
                "[2026-01-01 10:00:00] Overlap scheduler is disabled when spec v2 is off or using unsupported speculative "
                "algorithm. You can set env SGLANG_ENABLE_SPEC_V2=True to enable the experimental overlap scheduler. ",
                ("scheduler_config", {"kind": "async-scheduling", "enabled": False}),
                exact=True,
            ),
            case(
                "row-6",
                "[2026-01-01 10:00:00] Spec v2 is enabled for eagle/eagle3 speculative decoding and overlap schedule is "
                "turned on.",
                ("scheduler_config", {"kind": "async-scheduling", "enabled": True}),
                exact=True,
            ),
            case(
                "row-7",
                "[2026-05-07 10:00:00] Spec v1 is used for eagle/eagle3/standalone speculative decoding because overlap "
                "schedule is disabled.",
                ("scheduler_config", {"kind": "async-scheduling", "enabled": False}),
                exact=True,
            ),
            case(
                "row-8",
                "[2026-06-15 10:00:00] Non-overlap (synchronous) spec v2 is used for eagle/eagle3/standalone speculative "
                "decoding.",
                ("scheduler_config", {"kind": "async-scheduling", "enabled": False}),
                exact=True,
            ),
            case(
                "row-9",
                "[2025-11-17 10:00:00] Disabling overlap schedule since MambaRadixCache is not compatible with overlap "
                "schedule currently, try to use --disable-radix-cache if overlap schedule is necessary",
                ("scheduler_config", {"kind": "async-scheduling", "enabled": False}),
                exact=True,
            ),
            case(
                "row-10",
                "[2025-08-01 10:00:00] Mixed chunked prefill is disabled because of using eagle speculative decoding.",
                ("scheduler_config", {"kind": "mixed-chunk", "enabled": False}),
                exact=True,
            ),
            case(
                "row-11",
                "[2026-01-23 10:00:00] Disabling radix cache since speculative decoding for NemotronHForCausalLM is not "
                "supported with radix cache yet.",
                ("scheduler_config", {"kind": "prefix-caching", "enabled": False}),
                exact=True,
            ),
            case(
                "row-12",
                "[2025-08-01 10:00:00] DP attention is enabled. The chunked prefill size is adjusted to 4096 to avoid MoE "
                "kernel issues.",
                ("scheduler_config", {"kind": "chunked-prefill", "value": 4096}),
                exact=True,
            ),
            case(
                "row-13",
                "[2026-07-25 10:00:00] DP attention is enabled. chunked prefill size is adjusted from 16384 to 2048.",
                ("scheduler_config", {"kind": "chunked-prefill", "value": 2048}),
                exact=True,
            ),
            case(
                "row-14",
                "[2025-06-01 10:00:00] speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when "
                "speculative_eagle_topk == 1",
                ("perf_warning", {"topic": "spec-config"}),
                exact=True,
            ),
            case(
                "row-15",
                "[2026-05-16 10:00:00 TP0] MTP depth 4 exceeds the checkpoint's num_draft_slots=3.",
                ("perf_warning", {"topic": "spec-config"}),
                exact=True,
            ),
            case(
                "row-16",
                "[2026-10-30 10:00:00 TP0] avg_spec_accept_length=3.04512345",
                ("spec_decode_stats", {"format": "sglang", "interval": False, "mean_acceptance_length": 3.04512345}),
                exact=True,
            ),
            case(
                "v0.5.23-speculative-adaptive-disabled",
                "[2025-11-30 10:00:00 TP0] speculative_adaptive disabled: no profile. Falling back to static speculative params.",
                ("perf_warning", {"topic": "spec-config"}),
            ),
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
            "Aiter custom all-reduce not available; falling back to sglang CustomAllreduce",
            "NCCL_GRAPH_REGISTER=0 was set explicitly",
            "all-reduce serves bf16 only",
            "NVLink detection failed.",
        ),
        parse_allreduce,
        (
            case(
                "sample-1",
                "[2025-06-12 22:41:35 TP0] Custom allreduce is disabled because it's not supported on more than two "
                "PCIe-only GPUs. To silence this warning, specify disable_custom_all_reduce=True explicitly.",
                ("custom_allreduce", {}),
            ),
            case(
                "row-1",
                "[2025-06-12 22:41:35 TP0] Custom allreduce is disabled because it's not supported on more than two PCIe-only "
                "GPUs. To silence this warning, specify disable_custom_all_reduce=True explicitly.",
                ("custom_allreduce", {"enabled": False, "reason": "pcie-more-than-two", "engine": "sglang"}),
                exact=True,
            ),
            case(
                "row-2",
                "[2025-04-01 10:00:00 TP1] Custom allreduce is disabled because your platform lacks GPU P2P capability or P2P "
                "test failed. To silence this warning, specify disable_custom_all_reduce=True explicitly.",
                ("custom_allreduce", {"enabled": False, "reason": "no-p2p"}),
                exact=True,
            ),
            case(
                "row-3",
                "[2025-04-01 10:00:00 TP0] Custom allreduce is disabled due to an unsupported world size: 3. Supported world "
                "sizes: [2, 4, 6, 8]. To silence this warning, specify disable_custom_all_reduce=True explicitly.",
                ("custom_allreduce", {"enabled": False, "reason": "world-size"}),
                exact=True,
            ),
            case(
                "row-4",
                "[2025-04-01 10:00:00 TP8] Custom allreduce is disabled because this process group spans across nodes.",
                ("custom_allreduce", {"enabled": False, "reason": "spans-nodes"}),
                exact=True,
            ),
            case(
                "row-5",
                "[2026-04-08 10:00:00 TP0] CustomAllReduceV2 is disabled because your platform lacks GPU P2P capability or P2P "
                "test failed. To silence this warning, specify disable_custom_all_reduce=True explicitly.",
                ("custom_allreduce", {"enabled": False, "reason": "no-p2p"}),
                exact=True,
            ),
            case(
                "row-6",
                "[2025-04-01 10:00:00 TP0] Setup Custom allreduce failed with CUDA error: invalid argument. To silence this "
                "warning, specify --disable-custom-all-reduce explicitly.",
                ("custom_allreduce", {"enabled": False, "reason": "library"}),
                exact=True,
            ),
            case(
                "row-7",
                "[2025-10-01 10:00:00] NCCL_ALGO is set to 'allreduce:tree' and custom all reduce is disabled for "
                "deterministic inference when TP size > 1.",
                ("custom_allreduce", {"enabled": False, "reason": "user"}),
                exact=True,
            ),
            case(
                "row-8",
                "[2026-05-16 10:00:00] Disabling SGLANG_OPT_USE_CUSTOM_ALL_REDUCE_V2 because nnodes=2 (custom all-reduce v2 is "
                "intra-node only).",
                ("custom_allreduce", {"enabled": False, "reason": "spans-nodes"}),
                exact=True,
            ),
            case(
                "row-9",
                "[2026-01-01 10:00:00 TP0] [AR] All-reduce call path: NCCL (custom AR disabled)",
                ("custom_allreduce", {"enabled": False}),
                exact=True,
            ),
            case(
                "row-10",
                "[2026-04-08 10:00:00 TP0] [AR] Using CustomAllReduceV2 (JIT-compiled)",
                ("custom_allreduce", {"enabled": True}),
                exact=True,
            ),
            case(
                "row-11",
                "[2025-04-01 10:00:00 TP0] reading GPU P2P access cache from /root/.cache/sglang/gpu_p2p_access_cache_for_0,1.json",
                ("p2p_check", {"supported": None}),
                exact=True,
            ),
            case(
                "row-12",
                "[2025-04-01 10:00:00 TP1] Two processes do not agree on the P2P access status on 0 -> 1, treat as disabled.",
                ("p2p_check", {"supported": False}),
                exact=True,
            ),
            case(
                "row-13",
                "RuntimeError: CUDART error: peer access is not supported between these two devices",
                ("p2p_check", {"supported": False}),
                exact=True,
            ),
            case(
                "v0.5.23-aiter-custom-all-reduce-not-available-fa",
                "[2025-11-30 10:00:00 TP0] [AR] Aiter custom all-reduce not available; falling back to sglang CustomAllreduce. Details: ImportError",
                ("custom_allreduce", {"enabled": True}),
            ),
            case(
                "v0.5.23-nccl-graph-register-0-was-set-explicitly",
                "[2025-11-30 10:00:00 TP0] NCCL_GRAPH_REGISTER=0 was set explicitly; keeping it.",
                ("nccl_env", {"name": "NCCL_GRAPH_REGISTER", "value": "0"}),
            ),
            case(
                "v0.5.23-all-reduce-serves-bf16-only",
                "[2025-11-30 10:00:00 TP0] FlashInfer PCIe-IPC all-reduce serves bf16 only; torch.float16 reductions stay on NCCL.",
                ("custom_allreduce", {"enabled": False}),
            ),
            case(
                "v0.5.23-nvlink-detection-failed",
                "[2025-11-30 10:00:00 TP0] NVLink detection failed. This is normal if your machine has no NVLink equipped.",
                ("perf_warning", {"topic": "no-nvlink"}),
            ),
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
            "is not torch.compile compatible",
            "warmup completed in",
            "Chunked prefill is disabled for multimodal models with the Transformers backend",
            "Chunked prefill is disabled because --enable-mis is set",
            "Radix cache is disabled because --enable-mis is set",
            "Setting max_running_requests to",
            "Overlap schedule is not implemented for speculative decoding on CPU",
            "init_cpu_threads_env and shared memory based AllReduce is disabled",
            "is not supported on non CUDA/HIP devices",
            "pre_warm_nccl is only applicable for CUDA or HIP hardware",
            "Some requests timed out when bootstrapping",
            "Some requests fail to receive KV Cache transfer done signal",
            "Lost connection with prefill instance",
            "failed to register to bootstrap server",
            "Decode transfer failed for request",
            "Decode handshake failed for request",
            "Prefill transfer failed for request",
            "Prefill bootstrap failed for request",
            "bootstrap_thread died on engine_rank=",
            "Session ",
            "Deferred KV release for room",
            "Disaggregated request received without bootstrap room id",
        ),
        parse_runtime,
        (
            case(
                "sample-1",
                "[2026-05-24 03:51:47 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 2, "
                "#new_tokens_gained: 65536, #new_token_ratio: 0.4213 -> 0.7000",
                ("preemption", {}),
            ),
            case("sample-2", "[2025-01-23 19:35:33] The server is fired up and ready to roll!", ("compile_time", {})),
            case(
                "sample-3",
                "[2025-03-31 04:29:49 TP0] awq quantization is not fully optimized yet. The speed can be slower than "
                "non-quantized models.",
                ("quantization", {}),
            ),
            case(
                "row-1",
                "KV cache pool is full. Retract requests. #retracted_reqs: 1, #new_token_ratio: 0.9998 -> 1.0000",
                ("preemption", {"mode": "retract", "count": 1}),
                exact=True,
            ),
            case(
                "row-2",
                "[2026-05-24 03:51:47 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 2, #new_tokens_gained: "
                "65536, #new_token_ratio: 0.4213 -> 0.7000",
                ("preemption", {"mode": "retract", "count": 2}),
                exact=True,
            ),
            case(
                "row-3",
                "[2024-12-01 10:00:00 TP0] Decode out of memory happened. #retracted_reqs: 3, #new_token_ratio: 0.5000 -> 0.8000",
                ("preemption", {"mode": "retract", "count": 3}),
                exact=True,
            ),
            case(
                "row-4",
                "[2026-04-08 10:00:00 TP0] retract_decode: aborted last request 5f2c due to OOM",
                ("preemption", {"mode": "retract-abort", "count": 1}),
                exact=True,
            ),
            case(
                "row-5",
                "[2025-02-09 21:23:00] Received sigquit from a child proces. It usually means the child failed.",
                ("engine_failure", {"kind": "worker-died"}),
                exact=True,
            ),
            case(
                "row-6",
                "[2025-02-09 21:23:00 TP2] Scheduler hit an exception: Traceback (most recent call last):",
                ("engine_failure", {"kind": "exception"}),
                exact=True,
            ),
            case(
                "row-7",
                "[2025-05-01 10:00:00 TP0] Watchdog timeout (self.watchdog_timeout=300)",
                ("engine_failure", {"kind": "watchdog"}),
                exact=True,
            ),
            case(
                "row-8",
                "[2026-01-01 10:00:00 TP0] Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)",
                ("engine_failure", {"kind": "watchdog"}),
                exact=True,
            ),
            case(
                "row-9",
                "[2025-09-01 10:00:00 TP0] token_to_kv_pool_allocator memory leak detected! available_size=10, protected=0",
                ("engine_failure", {"kind": "memory-leak"}),
                exact=True,
            ),
            case(
                "row-10",
                "[2025-03-31 04:29:49 TP0] awq quantization is not fully optimized yet. The speed can be slower than "
                "non-quantized models.",
                ("quantization", {"method": "awq", "fallback": True}),
                exact=True,
            ),
            case(
                "row-11",
                "[2025-03-31 04:29:49 TP0] Casting torch.bfloat16 to torch.float16.",
                ("model_info", {"dtype": "torch.float16"}),
                exact=True,
            ),
            case(
                "row-12",
                "[2025-01-23 19:35:33] The server is fired up and ready to roll!",
                ("compile_time", {"kind": "server_ready"}),
                exact=True,
            ),
            case(
                "v0.5.23-is-not-torch-compile-compatible",
                "[2025-11-30 10:00:00 TP0] Transformers backend model reports it is not torch.compile compatible (e.g. dynamic rope scaling). Disabling torch.compile.",
                ("compile_time", {"kind": "compile_disabled"}),
            ),
            case(
                "v0.5.23-warmup-completed-in",
                "[2025-11-30 10:00:00 TP0] NCCL/RCCL/HCCL warmup completed in 1.234s (tp_size=2, pp_size=1, ep_size=1)",
                ("compile_time", {"kind": "warmup", "seconds": 1.234}),
            ),
            case(
                "v0.5.23-chunked-prefill-is-disabled-for-multimod",
                "[2025-11-30 10:00:00 TP0] Chunked prefill is disabled for multimodal models with the Transformers backend to avoid partial multimodal chunk mismatches.",
                ("scheduler_config", {"kind": "chunked-prefill", "enabled": False}),
            ),
            case(
                "v0.5.23-chunked-prefill-is-disabled-because-enab",
                "[2025-11-30 10:00:00 TP0] Chunked prefill is disabled because --enable-mis is set.",
                ("scheduler_config", {"kind": "chunked-prefill", "enabled": False}),
            ),
            case(
                "v0.5.23-radix-cache-is-disabled-because-enable-m",
                "[2025-11-30 10:00:00 TP0] Radix cache is disabled because --enable-mis is set.",
                ("scheduler_config", {"kind": "prefix-caching", "enabled": False}),
            ),
            case(
                "v0.5.23-setting-max-running-requests-to",
                "[2025-11-30 10:00:00 TP0] Setting max_running_requests to 256 for DeepseekV4ForCausalLM.",
                ("scheduler_config", {"kind": "max-num-seqs", "value": 256}),
            ),
            case(
                "v0.5.23-overlap-schedule-is-not-implemented-for-",
                "[2025-11-30 10:00:00 TP0] Overlap schedule is not implemented for speculative decoding on CPU.",
                ("platform", {"platform": "cpu"}),
            ),
            case(
                "v0.5.23-init-cpu-threads-env-and-shared-memory-b",
                "[2025-11-30 10:00:00 TP0] init_cpu_threads_env and shared memory based AllReduce is disabled, only intel amx backend and arm64 are supported",
                ("platform", {"platform": "cpu"}),
            ),
            case(
                "v0.5.23-is-not-supported-on-non-cuda-hip-devices",
                "[2025-11-30 10:00:00 TP0] --enable-symm-mem is not supported on non CUDA/HIP devices (NCCL symmetric memory is unavailable). Disabling symmetric memory.",
                ("platform", {}),
            ),
            case(
                "v0.5.23-pre-warm-nccl-is-only-applicable-for-cud",
                "[2025-11-30 10:00:00 TP0] pre_warm_nccl is only applicable for CUDA or HIP hardware or NPU hardware. Ignoring pre_warm_nccl setting on current hardware.",
                ("platform", {}),
            ),
            case(
                "v0.5.23-some-requests-timed-out-when-bootstrappi",
                "[2025-11-30 10:00:00 TP0] Some requests timed out when bootstrapping, which means prefill instances fail to receive the KV indices from the decode instance of this request. If a greater mean TTFT is acceptable, you can 'export SGLANG_DISAGGREGATION_BOOTSTRAP_TIMEOUT=600' (10 minutes) to relax the timeout condition.",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
            case(
                "v0.5.23-some-requests-fail-to-receive-kv-cache-t",
                "[2025-11-30 10:00:00 TP0] Some requests fail to receive KV Cache transfer done signal after bootstrapping. If a greater mean TTFT is acceptable, you can 'export SGLANG_DISAGGREGATION_WAITING_TIMEOUT=600' (10 minutes) to relax the timeout condition.",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
            case(
                "v0.5.23-lost-connection-with-prefill-instance",
                "[2025-11-30 10:00:00 TP0] Lost connection with prefill instance (bootstrap_addr: 10.0.0.2:8998), 4 requests affected",
                ("engine_failure", {"kind": "kv-transfer", "requests": 4}),
            ),
            case(
                "v0.5.23-failed-to-register-to-bootstrap-server",
                "[2025-11-30 10:00:00 TP0] Prefill instance failed to register to bootstrap server after 5 retries",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
            case(
                "v0.5.23-decode-transfer-failed-for-request",
                "[2025-11-30 10:00:00 TP0] Decode transfer failed for request rank=self_tp_rank decode_req.req.rid='decode_req_req_rid' decode_req.req.bootstrap_room='room' with exception e (HiCache local restore failed on this rank)",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
            case(
                "v0.5.23-decode-handshake-failed-for-request",
                "[2025-11-30 10:00:00 TP0] Decode handshake failed for request rank=self_tp_rank decode_req.req.rid='decode_req_req_rid' decode_req.req.bootstrap_room='room' with exception e",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
            case(
                "v0.5.23-prefill-transfer-failed-for-request",
                "[2025-11-30 10:00:00 TP0] Prefill transfer failed for request rank=get_parallel_tp_rank req.rid='req_rid' req.bootstrap_room='req_bootstrap_room' with exception e",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
            case(
                "v0.5.23-prefill-bootstrap-failed-for-request",
                "[2025-11-30 10:00:00 TP0] Prefill bootstrap failed for request rank=get_parallel_tp_rank req.rid='req_rid' req.bootstrap_room='req_bootstrap_room' with exception e",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
            case(
                "v0.5.23-bootstrap-thread-died-on-engine-rank",
                "[2025-11-30 10:00:00 TP0] prefill bootstrap_thread died on engine_rank=0; requests to this rank will time out in KVPoll.Bootstrapping",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
            case(
                "v0.5.23-session",
                "[2025-11-30 10:00:00 TP0] Session 10.0.0.2:17001 failed.",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
            case(
                "v0.5.23-deferred-kv-release-for-room",
                "[2025-11-30 10:00:00 TP0] Deferred KV release for room 42 timed out after 30s without a full drain ack from prefill; releasing anyway.",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
            case(
                "v0.5.23-disaggregated-request-received-without-b",
                "[2025-11-30 10:00:00 TP0] Invalid request: Disaggregated request received without bootstrap room id. req.rid=\"'r-7'\"",
                ("engine_failure", {"kind": "kv-transfer"}),
            ),
        ),
    ),
    Grammar(
        "sglang.quantization",
        "sglang",
        (
            "Using default MoE kernel config",
            "Using default W8A8 Block",
            "explicitly, so forcing",
            "does not have native support for",
            "during runtime. Using",
            "is not supported by AWQMarlin. Falling back to unoptimized AWQ kernels",
            "is not supported by AWQMoeMarlin. Falling back to Moe WNA16 kernels",
            "block FP8 weights on this setup; using Triton",
            "Block-fp8 layer stays on the Triton kernel",
            "for its fp8 experts",
            "Detected fp8 checkpoint.",
            "NVFP4 w4a4 requires compute capability",
            "NVFP4 w4a4 MoE requires compute capability",
            "Using CompressedTensorsWNA16MarlinMoEMethod",
            "You are running Marlin kernel with bf16 on GPUs before SM90",
            "Detected ModelOpt FP8 checkpoint",
            "Dequantized FP4 MoE expert weights to FP8",
            "moe_runner_backend=marlin",
        ),
        parse_quantization,
        (
            case(
                "default-moe-config",
                "[2025-05-09 11:14:36 TP0] Using default MoE kernel config. Performance might be sub-optimal! Config "
                "file not found at /sgl/configs/E=64,N=1408,device_name=NVIDIA_A100-SXM4-80GB.json, you can create them "
                "with https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton",
                ("perf_warning", {"topic": "moe-config"}),
                exact=True,
            ),
            case(
                "default-block-fp8-config",
                "[2025-05-09 11:14:36 TP0] Using default W8A8 Block FP8 kernel config. Performance might be "
                "sub-optimal! Config file not found at /sgl/configs/N=4096,K=7168,device_name=NVIDIA_H20.json",
                ("perf_warning", {"topic": "fp8-block-config"}),
                exact=True,
            ),
            case(
                "awq-forced",
                "[2025-05-09 11:14:36 TP0] Detected that the model can run with awq_marlin, however you specified "
                "quantization=awq explicitly, so forcing awq. Use quantization=awq_marlin for faster inference",
                ("quantization", {"method": "awq", "fallback": True}),
                exact=True,
            ),
            case(
                "marlin-fp8-fallback",
                "[2025-05-09 11:14:36 TP0] Your GPU does not have native support for FP8 computation but FP8 "
                "quantization is being used. Weight-only FP8 compression will be used leveraging the Marlin kernel. "
                "This may degrade performance for compute-heavy workloads.",
                ("quantization", {"method": "fp8", "kernel": "Marlin", "fallback": True}),
                exact=True,
            ),
            case(
                "awq-marlin-convertible",
                "[2025-05-09 11:14:36 TP0] The model is convertible to awq_marlin during runtime. Using awq_marlin kernel.",
                ("quantization", {"method": "awq_marlin", "kernel": "awq_marlin", "fallback": False}),
                exact=True,
            ),
            case(
                "v0.5.23-is-not-supported-by-awqmarlin-falling-ba",
                "[2025-11-30 10:00:00 TP0] Layer 'model.layers.0.self_attn.qkv_proj' is not supported by AWQMarlin. Falling back to unoptimized AWQ kernels.",
                ("quantization", {"method": "awq", "fallback": True}),
            ),
            case(
                "v0.5.23-is-not-supported-by-awqmoemarlin-falling",
                "[2025-11-30 10:00:00 TP0] Layer 'model.layers.3.mlp.experts' is not supported by AWQMoeMarlin. Falling back to Moe WNA16 kernels.",
                ("quantization", {"method": "awq", "fallback": True}),
            ),
            case(
                "v0.5.23-block-fp8-weights-on-this-setup-using-tr",
                "[2025-11-30 10:00:00 TP0] --fp8-gemm-backend=deep_gemm cannot serve [128, 128] block FP8 weights on this setup; using Triton. DeepGEMM takes [32, 32] blocks on SM90, and on SM100 with UE8M0 scales.",
                ("quantization", {"method": "fp8", "kernel": "Triton", "fallback": True}),
            ),
            case(
                "v0.5.23-block-fp8-layer-stays-on-the-triton-kern",
                "[2025-11-30 10:00:00 TP0] Block-fp8 layer stays on the Triton kernel: shape not supported",
                ("quantization", {"method": "fp8", "kernel": "Triton", "fallback": True}),
            ),
            case(
                "v0.5.23-for-its-fp8-experts",
                "[2025-11-30 10:00:00 TP0] Fp8MoEMethod has no FLASHINFER_CUTLASS path; using triton for its fp8 experts.",
                ("quantization", {"method": "fp8", "kernel": "Triton", "fallback": True}),
            ),
            case(
                "v0.5.23-detected-fp8-checkpoint",
                "[2025-11-30 10:00:00 TP0] Detected fp8 checkpoint.",
                ("quantization", {"method": "fp8"}),
            ),
            case(
                "v0.5.23-nvfp4-w4a4-requires-compute-capability",
                "[2025-11-30 10:00:00 TP0] NVFP4 w4a4 requires compute capability >= 10.0; serving this checkpoint weight-only via FP4 Marlin instead. Activation quantization is ignored.",
                ("quantization", {"method": "nvfp4", "fallback": True}),
            ),
            case(
                "v0.5.23-nvfp4-w4a4-moe-requires-compute-capabili",
                "[2025-11-30 10:00:00 TP0] NVFP4 w4a4 MoE requires compute capability >= 10.0; serving this checkpoint weight-only via FP4 Marlin instead. Activation quantization is ignored.",
                ("quantization", {"method": "nvfp4", "fallback": True}),
            ),
            case(
                "v0.5.23-using-compressedtensorswna16marlinmoemet",
                "[2025-11-30 10:00:00 TP0] Using CompressedTensorsWNA16MarlinMoEMethod",
                ("quantization", {"method": "compressed-tensors", "kernel": "Marlin"}),
            ),
            case(
                "v0.5.23-you-are-running-marlin-kernel-with-bf16-",
                "[2025-11-30 10:00:00 TP0] You are running Marlin kernel with bf16 on GPUs before SM90. You can consider change to fp16 to achieve better performance if possible.",
                ("quantization", {"kernel": "Marlin"}),
            ),
            case(
                "v0.5.23-detected-modelopt-fp8-checkpoint",
                "[2025-11-30 10:00:00 TP0] Detected ModelOpt FP8 checkpoint. The format is experimental and subject to change.",
                ("quantization", {"method": "modelopt"}),
            ),
            case(
                "v0.5.23-dequantized-fp4-moe-expert-weights-to-fp",
                "[2025-11-30 10:00:00 TP0] Dequantized FP4 MoE expert weights to FP8.",
                ("quantization", {"method": "fp8", "fallback": True}),
            ),
            case(
                "v0.5.23-moe-runner-backend-marlin",
                "[2025-11-30 10:00:00 TP0] MiMoV2 on SM90: moe_runner_backend=marlin.",
                ("quantization", {"kernel": "Marlin"}),
            ),
        ),
    ),
]
