"""vLLM line types: §4 periodic stats, preemption, iteration details (catalogue/vllm.md)."""

from __future__ import annotations

import re

from logdoctor.engines.vllm.common import Events, _base, _grammar, _i, _msg, _pct
from logdoctor.events import (
    PerfWarning,
    Preemption,
    SchedulerStats,
)
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext

_STATS_HEAD_RE = re.compile(
    r"(?:Engine (?P<eng>\d{3}): |(?P<n_eng>\d+) Engines Aggregated: )?"
    r"Avg prompt throughput: (?P<pp>[\d.]+) tokens/s, Avg generation throughput: (?P<gen>[\d.]+) tokens/s, "
    r"Running: (?P<run>\d+) reqs, (?:Swapped: (?P<swap>\d+) reqs, Pending|Waiting): (?P<wait>\d+) reqs"
)
# The optional parts after Waiting/Pending, in any order (0.11.1+ joins whichever apply with ", ").
_STATS_PART_RE = re.compile(
    r"(?P<key>Deferred|Preemptions|Corrupted|(?P<dev>[A-Za-z]+(?: \+ host)?) KV cache usage|"
    r"External prefix cache hit rate|MM cache hit rate|Prefix cache hit rate): (?P<val>[\d.]+|nan)(?: reqs|%)?"
)
_KV_FETCH_RE = re.compile(
    r"KV fetch: (?P<waiting>\d+) waiting to start, (?P<running>\d+) in progress, (?P<done>\d+) completed waiting"
)
_V0_PREFIX_HIT_RE = re.compile(r"Prefix cache hit rate: GPU: (?P<gpu>[\d.]+|nan)%, CPU: (?P<cpu>[\d.]+|nan)%")
_PREEMPTION_RE = re.compile(
    r"Sequence group (?P<group>\S+) is preempted (?:by|in) PreemptionMode\.(?P<mode>\w+) mode"
    r"(?:.*?total_num_cumulative_preemption=(?P<total>\d+))?"
)
_FAILING_REQUEST_RE = re.compile(r"Failing the request \S+ because there's not enough kv cache blocks")
_ITERATION_RE = re.compile(
    r"(?:Engine (?P<eng>\d{3}): )?Iteration\((?P<it>\d+)\): (?P<ctx_reqs>\d+) context requests, "
    r"(?P<ctx_tok>\d+) context tokens, (?P<gen_reqs>\d+) generation requests, (?P<gen_tok>\d+) generation tokens, "
    r"iteration elapsed time: (?P<ms>[\d.]+) ms(?P<dummy> \(dummy\))?(?:, (?P<dev>\w+) KV cache usage: (?P<kv>[\d.]+)%)?"
)
_MFU_RE = re.compile(r"(?:Engine (?P<eng>\d{3}): )?MFU: (?P<tf>[\d.]+) TF/s/device (?P<gb>[\d.]+) GB/s/device")
_STATS_DISABLED_RE = re.compile(r"AsyncLLM created with api_server_count more than 1; disabling stats logging")


def parse_stats(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    m = _STATS_HEAD_RE.search(text)
    if not m:
        return None
    head = m.groupdict()  # one call instead of one `m.group` a field: a stats line comes every few seconds
    v0 = head["swap"] is not None
    values: dict[str, float | None] = {}
    extra: dict[str, float | int | str] = {}
    kv_usage: float | None = None
    cpu_kv_usage: float | None = None
    for part in _STATS_PART_RE.finditer(text, m.end()):
        key, device, value = part.group("key", "dev", "val")
        if device:
            if device == "CPU" and v0:
                cpu_kv_usage = _pct(value)  # V0: the swap space in host memory
            else:
                kv_usage = _pct(value)
                if device != "GPU":
                    extra["kv_cache_device"] = device
        elif key in ("Deferred", "Preemptions", "Corrupted"):
            values[key] = float(value)
        else:
            values[key] = _pct(value)
    if values.get("Corrupted") is not None:
        extra["corrupted_requests"] = int(values["Corrupted"] or 0)
    for key, name in (
        ("External prefix cache hit rate", "external_prefix_cache_hit_rate"),
        ("MM cache hit rate", "mm_cache_hit_rate"),
    ):
        if values.get(key) is not None:
            extra[name] = values[key] or 0.0
    fetch = _KV_FETCH_RE.search(text, m.end())
    if fetch:
        extra.update(
            kv_fetch_waiting=int(fetch.group("waiting")),
            kv_fetch_in_progress=int(fetch.group("running")),
            kv_fetch_completed_waiting=int(fetch.group("done")),
        )
    if head["n_eng"]:
        extra["engines_aggregated"] = int(head["n_eng"])
    deferred, preemptions = values.get("Deferred"), values.get("Preemptions")
    return [
        SchedulerStats(
            **_base(line, ctx),
            format="vllm-v0" if v0 else "vllm-v1",
            engine_index=_i(head["eng"]),
            prompt_throughput=float(head["pp"]),
            generation_throughput=float(head["gen"]),
            running=int(head["run"]),
            waiting=int(head["wait"]),
            swapped=_i(head["swap"]),
            deferred=int(deferred) if deferred is not None else None,
            preemptions=int(preemptions) if preemptions is not None else None,
            kv_cache_usage=kv_usage,
            cpu_kv_cache_usage=cpu_kv_usage,
            prefix_cache_hit_rate=values.get("Prefix cache hit rate"),
            extra=extra,
        )
    ]


def parse_stats_extras(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _V0_PREFIX_HIT_RE.search(text)
    if m:
        # V0 prints the prefix-cache hit rates on their own line right after the stats line.
        return [
            SchedulerStats(
                **base,
                format="vllm-v0-prefix-cache",
                prefix_cache_hit_rate=_pct(m.group("gpu")),
                extra={"cpu_prefix_cache_hit_rate": _pct(m.group("cpu")) or 0.0},
            )
        ]
    m = _ITERATION_RE.search(text)
    if m:
        ctx_tok, gen_tok = int(m.group("ctx_tok")), int(m.group("gen_tok"))
        extra: dict[str, float | int | str] = {
            "iteration": int(m.group("it")),
            "context_requests": int(m.group("ctx_reqs")),
            "context_tokens": ctx_tok,
            "generation_requests": int(m.group("gen_reqs")),
            "generation_tokens": gen_tok,
            "iteration_seconds": float(m.group("ms")) / 1000,
        }
        if m.group("dummy"):
            extra["dummy"] = 1
        return [
            SchedulerStats(
                **base,
                format="vllm-iteration",
                engine_index=_i(m.group("eng")),
                running=int(m.group("ctx_reqs")) + int(m.group("gen_reqs")),
                num_tokens=ctx_tok + gen_tok,
                kv_cache_usage=_pct(m.group("kv")),
                extra=extra,
            )
        ]
    m = _MFU_RE.search(text)
    if m:
        return [
            SchedulerStats(
                **base,
                format="vllm-mfu",
                engine_index=_i(m.group("eng")),
                extra={"tflops_per_device": float(m.group("tf")), "gb_per_s_per_device": float(m.group("gb"))},
            )
        ]
    if _STATS_DISABLED_RE.search(text):
        return [PerfWarning(**base, topic="stats-disabled", message=_msg(line))]
    return None


def parse_preemption(line: LogLine, ctx: ParseContext) -> Events | None:
    m = _PREEMPTION_RE.search(line.message)
    if m:
        return [
            Preemption(**_base(line, ctx), mode=m.group("mode"), cumulative=_i(m.group("total")), message=_msg(line))
        ]
    if _FAILING_REQUEST_RE.search(line.message):
        return [PerfWarning(**_base(line, ctx), topic="kv-cache-request-failed", message=_msg(line))]
    return None


GRAMMARS: list[Grammar] = [
    _grammar(
        "stats",
        ("Avg prompt throughput:",),
        parse_stats,
        (
            "(APIServer pid=3646) INFO 05-19 10:13:11 [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 "
            "tokens/s, Avg generation throughput: 1055.3 tokens/s, Running: 18 reqs, Waiting: 43 reqs, GPU KV cache "
            "usage: 95.9%, Prefix cache hit rate: 0.0%",
            "INFO 05-25 06:50:29 [metrics.py:486] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: "
            "15.5 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.0%, CPU KV "
            "cache usage: 0.1%.",
        ),
    ),
    _grammar(
        "stats_extras",
        ("Prefix cache hit rate: GPU:", "context requests,", "TF/s/device", "api_server_count more than 1"),
        parse_stats_extras,
        (
            "INFO 05-25 06:50:29 [metrics.py:502] Prefix cache hit rate: GPU: 0.00%, CPU: 90.00%",
            "(EngineCore pid=52) INFO 06-01 10:00:00 [core.py:401] Iteration(1234): 0 context requests, 0 context "
            "tokens, 1 generation requests, 4 generation tokens, iteration elapsed time: 13.72 ms",
        ),
    ),
    _grammar(
        "preemption",
        ("PreemptionMode.", "not enough kv cache blocks"),
        parse_preemption,
        (
            "WARNING 08-20 10:18:39 scheduler.py:1141] Sequence group 147 is preempted by PreemptionMode.RECOMPUTE "
            "mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase "
            "gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. "
            "total_num_cumulative_preemption=1",
        ),
    ),
]
