"""Grammars for vLLM server lines (catalogue/vllm.md), v0.6 to v0.33.

(APIServer pid=1) INFO 05-08 16:25:09 [metrics.py:101] SpecDecoding metrics: Mean acceptance length: 2.87, ...
(APIServer pid=1) INFO 05-08 16:25:09 [loggers.py:271] Engine 000: Avg prompt throughput: 2.5 tokens/s, ...
"""

from __future__ import annotations

import re

from logdoctor.events import EngineVersion, EventBase, SchedulerStats, SpecDecodeStats, StartupConfig
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.pyrepr import parse_kwargs, parse_value
from logdoctor.parse.registry import Grammar, ParseContext

_FLOAT = r"(?:[\d.]+|nan)"


def _f(value: str | None) -> float | None:
    if value is None or value == "nan":
        return None
    return float(value)


def _pct(value: str | None) -> float | None:
    """`95.9` (percent as printed) -> 0.959."""
    return None if value is None or value == "nan" else round(float(value) / 100, 6)


def _i(value: str | None) -> int | None:
    return None if value is None else int(value.replace(",", ""))


# --- version -------------------------------------------------------------------------------------

_VERSION_RE = re.compile(r"vLLM (?:API |gRPC )?server version (?P<ver>\S+?)(?:, serving model (?P<model>\S+))?\s*$")
_LOGO_VERSION_RE = re.compile(r"█.*\bversion\s+(?P<ver>\S+)\s*$")
_LOGO_MODEL_RE = re.compile(r"█.*\bmodel\s+(?P<model>\S+)\s*$")


def parse_version(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _VERSION_RE.search(line.message)
    if m:
        return [
            EngineVersion(
                **ctx.base(line, "vllm"),
                version=m.group("ver"),
                model=m.group("model"),
                origin="version line",
            )
        ]
    m = _LOGO_VERSION_RE.search(line.message)
    if m:
        return [EngineVersion(**ctx.base(line, "vllm"), version=m.group("ver"), origin="logo")]
    m = _LOGO_MODEL_RE.search(line.message)
    if m:
        return [EngineVersion(**ctx.base(line, "vllm"), model=m.group("model"), origin="logo")]
    return None


# --- configuration dumps -------------------------------------------------------------------------

_ENGINE_INIT_RE = re.compile(
    r"Initializing an? (?:(?P<gen>V[01]) )?LLM engine \(v(?P<ver>[^)]+)\) with config: (?P<cfg>.*)"
)


def parse_non_default_args(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    _, sep, rest = line.message.partition("non-default args: ")
    if not sep:
        return None
    parsed = parse_value(rest)
    config = parsed.value if isinstance(parsed.value, dict) else {}
    return [
        StartupConfig(**ctx.base(line, "vllm"), origin="non-default args", config=config, truncated=parsed.truncated)
    ]


def parse_engine_init(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _ENGINE_INIT_RE.search(line.message)
    if not m:
        return None
    parsed = parse_kwargs(m.group("cfg"))
    base = ctx.base(line, "vllm")
    return [
        EngineVersion(**base, version=m.group("ver"), engine_generation=m.group("gen"), origin="engine init"),
        StartupConfig(**base, origin="engine init", config=parsed.value, truncated=parsed.truncated),
    ]


# --- speculative decoding ------------------------------------------------------------------------

_SPEC_V1_RE = re.compile(
    rf"SpecDecoding metrics: (?:Draft acceptance rate: (?P<rate_old>{_FLOAT})%, )?"
    rf"(?:Mean acceptance length: (?P<mal>{_FLOAT}), )?"
    rf"(?:Accepted throughput: (?P<acc_tps>{_FLOAT}) tokens/s, Drafted throughput: (?P<dr_tps>{_FLOAT}) tokens/s, )?"
    r"Accepted: (?P<acc>\d+) tokens, Drafted: (?P<dr>\d+) tokens"
    r"(?:, Per-position acceptance rate: (?P<pos>[\d., nan]+?))?"
    rf"(?:, Avg Draft acceptance rate: (?P<rate>{_FLOAT})%)?\s*$"
)


def parse_spec_decode_v1(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _SPEC_V1_RE.search(line.message)
    if not m:
        return None
    positions = (
        [float(p) for p in m.group("pos").split(",") if p.strip() not in ("", "nan")] if m.group("pos") else None
    )
    accepted, drafted = int(m.group("acc")), int(m.group("dr"))
    rate_pct = _f(m.group("rate")) if m.group("rate") is not None else _f(m.group("rate_old"))
    mal = _f(m.group("mal"))
    k = len(positions) if positions else None
    if m.group("acc_tps") is not None:
        fmt = "vllm-v1-0.11"
    elif mal is not None:
        fmt = "vllm-v1-0.9"
    else:
        fmt = "vllm-v1-0.8.3"
    num_drafts = round(drafted / k) if k and drafted else None
    if mal is None and num_drafts:
        mal = 1 + accepted / num_drafts
    return [
        SpecDecodeStats(
            **ctx.base(line, "vllm"),
            format=fmt,
            interval=True,
            mean_acceptance_length=mal,
            acceptance_rate=rate_pct / 100 if rate_pct is not None else (accepted / drafted if drafted else None),
            per_position_acceptance=positions,
            num_speculative_tokens=k,
            accepted_tokens=accepted,
            drafted_tokens=drafted,
            num_drafts=num_drafts,
            accepted_throughput=_f(m.group("acc_tps")),
            drafted_throughput=_f(m.group("dr_tps")),
        )
    ]


# --- periodic stats ------------------------------------------------------------------------------

_STATS_RE = re.compile(
    r"(?:Engine (?P<eng>\d{3}): |(?P<n_eng>\d+) Engines Aggregated: )?"
    r"Avg prompt throughput: (?P<pp>[\d.]+) tokens/s, Avg generation throughput: (?P<gen>[\d.]+) tokens/s, "
    r"Running: (?P<run>\d+) reqs, (?:Swapped: (?P<swap>\d+) reqs, Pending|Waiting): (?P<wait>\d+) reqs"
    r"(?:, Deferred: (?P<deferred>\d+) reqs)?(?:, KV fetch: \d+ waiting to start, \d+ in progress, \d+ completed waiting)?"
    r"(?:, Preemptions: (?P<preempt>\d+))?"
    r"(?:, (?:Corrupted: \d+ reqs, )?(?P<dev>GPU|[A-Z]+) KV cache usage: (?P<kv>[\d.]+)%)?"
    r"(?:, CPU KV cache usage: (?P<cpu_kv>[\d.]+)%)?"
    r"(?:, Prefix cache hit rate: (?P<pc>[\d.]+)%)?"
)


def parse_stats(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    m = _STATS_RE.search(line.message)
    if not m:
        return None
    return [
        SchedulerStats(
            **ctx.base(line, "vllm"),
            format="vllm-v0" if m.group("swap") is not None else "vllm-v1",
            engine_index=_i(m.group("eng")),
            prompt_throughput=float(m.group("pp")),
            generation_throughput=float(m.group("gen")),
            running=int(m.group("run")),
            waiting=int(m.group("wait")),
            swapped=_i(m.group("swap")),
            deferred=_i(m.group("deferred")),
            preemptions=_i(m.group("preempt")),
            kv_cache_usage=_pct(m.group("kv")),
            cpu_kv_cache_usage=_pct(m.group("cpu_kv")),
            prefix_cache_hit_rate=_pct(m.group("pc")),
        )
    ]


GRAMMARS: list[Grammar] = [
    Grammar(
        "vllm.version",
        "vllm",
        ("server version", "█  version", "█  model"),
        parse_version,
        ("INFO 07-08 11:49:48 api_server.py:206] vLLM API server version 0.5.1",),
    ),
    Grammar(
        "vllm.non_default_args",
        "vllm",
        ("non-default args:",),
        parse_non_default_args,
        (
            "(APIServer pid=1) INFO 05-08 16:20:01 [utils.py:233] non-default args: {'model_tag': 'Qwen/Qwen3.6-27B', "
            "'tensor_parallel_size': 2}",
        ),
    ),
    Grammar(
        "vllm.engine_init",
        "vllm",
        ("LLM engine (v",),
        parse_engine_init,
        (
            "INFO 02-02 17:59:18 llm_engine.py:232] Initializing a V0 LLM engine (v0.7.1) with config: "
            "model='/m', speculative_config=None, tensor_parallel_size=2, enforce_eager=True",
        ),
    ),
    Grammar(
        "vllm.spec_decode_v1",
        "vllm",
        ("SpecDecoding metrics:",),
        parse_spec_decode_v1,
        (
            "(APIServer pid=13026) INFO 05-08 16:25:09 [metrics.py:101] SpecDecoding metrics: Mean acceptance length:"
            " 2.87, Accepted throughput: 48.90 tokens/s, Drafted throughput: 157.19 tokens/s, Accepted: 489 tokens, "
            "Drafted: 1572 tokens, Per-position acceptance rate: 0.740, 0.473, 0.309, 0.187, 0.099, 0.057, Avg Draft "
            "acceptance rate: 31.1%",
        ),
    ),
    Grammar(
        "vllm.stats",
        "vllm",
        ("Avg prompt throughput:",),
        parse_stats,
        (
            "(APIServer pid=3646) INFO 05-19 10:13:11 [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 "
            "tokens/s, Avg generation throughput: 1055.3 tokens/s, Running: 18 reqs, Waiting: 43 reqs, GPU KV cache "
            "usage: 95.9%, Prefix cache hit rate: 0.0%",
        ),
    ),
]
