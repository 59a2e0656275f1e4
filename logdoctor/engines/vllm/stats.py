"""vLLM line types: §4 periodic stats, preemption, iteration details (catalogue/vllm.md)."""

from __future__ import annotations

import dataclasses
import re

from logdoctor.engines.vllm.common import Events, _base, _grammar, _i, _labelled_values, _msg, _pct
from logdoctor.events import EngineFailure, EventBase, PerfWarning, Platform, Preemption, SchedulerStats
from logdoctor.parse.envelope import LogLine, vllm_process
from logdoctor.parse.grammar import Grammar, ParseContext, WholeLine, case

_STATS_HEAD_RE = re.compile(
    r"(?:Engine (?P<eng>\d{3}): |(?P<n_eng>\d+) Engines Aggregated: )?"
    r"Avg prompt throughput: (?P<pp>[\d.]+) tokens/s, Avg generation throughput: (?P<gen>[\d.]+) tokens/s, "
    r"Running: (?P<run>\d+) reqs, (?:Swapped: (?P<swap>\d+) reqs, Pending|Waiting): (?P<wait>\d+) reqs"
)
# The optional parts after Waiting/Pending, in any order (0.11.1+ joins whichever apply with ", ").
# `\b` and the bounded device word keep a long run of letters linear: without them every position of the run
# starts a `[A-Za-z]+` that reads to its end and backs off (quadratic on a 65,536-character line).
_STATS_PART_RE = re.compile(
    r"\b(?P<key>Deferred|Preemptions|Corrupted|(?P<dev>[A-Za-z]{1,24}(?: \+ host)?) KV cache usage|"
    r"External prefix cache hit rate|MM cache hit rate|Prefix cache hit rate): (?P<val>[\d.]+|nan)(?: reqs|%)?"
)
# Stats lines in a row with requests running and not a token processed, by process (absent at 0): at STALL_INTERVALS
# (30 s at the default 10 s interval) the engine is stuck, not slow; one or two can be a single long step (a huge
# prefill, a compile on first use).
_IDLE = "vllm.idle_intervals"
STALL_INTERVALS = 3
_KV_DEVICE_SEEN = "vllm.kv_device_platform"  # a Platform event was given for the stats lines' KV device
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


# Tolerance: a stats line whose head the exact pattern refuses (a reworded, reordered or new
# field) is read as `Label: number unit` pairs by normalised label; labels neither the head nor the known tail
# parts name are kept in `extra`.
_STATS_HEAD_LABELS = {
    "engine": "eng",
    "avg_prompt_throughput": "pp",
    "avg_generation_throughput": "gen",
    "running": "run",
    "waiting": "wait",
    "pending": "wait",
    "swapped": "swap",
}
_COMPLETE_TAIL_RE = re.compile(r"(?:\d|%|reqs|tokens/s)\.?\s*$")
_ENGINE_PREFIX_RE = re.compile(r"\s*Engine (?P<eng>\d{3}): ")
_STATS_TAIL_LABELS = frozenset(
    {"deferred", "preemptions", "corrupted", "prefix_cache_hit_rate", "external_prefix_cache_hit_rate"}
    | {"mm_cache_hit_rate", "kv_fetch"}
)


def _idle_streak(line: LogLine, ctx: ParseContext, idle: bool) -> int:
    """The process's stats lines in a row, this one included, with requests running and no token processed."""
    key = line.process.pid if line.process is not None else None
    streaks: dict[int | None, int] = ctx.state.get(_IDLE) or {}
    if not idle:
        if key in streaks:
            del streaks[key]
            if not streaks:
                ctx.state.pop(_IDLE, None)
        return 0
    streaks[key] = streaks.get(key, 0) + 1
    ctx.state[_IDLE] = streaks
    return streaks[key]


def _stats_head_labelled(text: str) -> tuple[dict[str, str | None], dict[str, float | int | str]] | None:
    if not _COMPLETE_TAIL_RE.search(text):
        return None  # cut mid-field (a terminal-wrapped line): the pipeline joins it with the next one
    head: dict[str, str | None] = dict.fromkeys(("eng", "n_eng", "pp", "gen", "run", "swap", "wait"))
    extra: dict[str, float | int | str] = {}
    for label, value in _labelled_values(text).items():
        key = _STATS_HEAD_LABELS.get(label)
        if key is not None:
            head[key] = str(value)
        elif label not in _STATS_TAIL_LABELS and not label.endswith("kv_cache_usage"):
            extra[label] = value
    if head["pp"] is None or head["gen"] is None or head["run"] is None or head["wait"] is None:
        return None
    engine = _ENGINE_PREFIX_RE.match(text)
    if engine:
        head["eng"] = engine.group("eng")
    return head, extra


def parse_stats(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    m = _STATS_HEAD_RE.search(text)
    extra: dict[str, float | int | str] = {}
    if m:
        head: dict[str, str | None] = m.groupdict()  # one call, not one `m.group` a field: every few seconds
        tail = m.end()
    else:
        labelled = _stats_head_labelled(text)
        if labelled is None:
            return None
        head, extra = labelled
        tail = 0
    v0 = head["swap"] is not None
    values: dict[str, float | None] = {}
    kv_usage: float | None = None
    cpu_kv_usage: float | None = None
    for part in _STATS_PART_RE.finditer(text, tail):
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
    fetch = _KV_FETCH_RE.search(text, tail)
    if fetch:
        extra.update(
            kv_fetch_waiting=int(fetch.group("waiting")),
            kv_fetch_in_progress=int(fetch.group("running")),
            kv_fetch_completed_waiting=int(fetch.group("done")),
        )
    if head["n_eng"]:
        extra["engines_aggregated"] = int(head["n_eng"])
    deferred, preemptions = values.get("Deferred"), values.get("Preemptions")
    platform: list[EventBase] = []
    device = extra.get("kv_cache_device")
    if isinstance(device, str) and device.split()[0] != "GPU" and not ctx.state.get(_KV_DEVICE_SEEN):
        # V1 names the KV cache by the platform's device type (loggers.py: "GPU" for cuda, else the type upper-cased).
        ctx.state[_KV_DEVICE_SEEN] = True
        platform.append(
            Platform(**_base(line, ctx), platform=device.split()[0].lower(), message=f"{device} KV cache usage")
        )
    running = int(head["run"] or 0)
    stalled: list[EventBase] = []
    idle = bool(running) and not float(head["pp"] or 0) and not float(head["gen"] or 0)
    if idle and extra.get("max_iteration_time") == 0:
        # The stats lines that time the engine's iterations ("Max iteration time: 0.0 ms") say no step finished
        # in the whole interval while requests were running: the engine loop is stuck, not slow.
        stalled.append(EngineFailure(**_base(line, ctx), kind="stalled", phase="serving", message=_msg(line)))
    elif _idle_streak(line, ctx, idle) == STALL_INTERVALS:
        message = f"{STALL_INTERVALS} stats intervals in a row with requests running and no token processed: " + _msg(
            line
        )
        stalled.append(EngineFailure(**_base(line, ctx), kind="stalled", phase="serving", message=message))
    return [
        *platform,
        *stalled,
        SchedulerStats(
            **_base(line, ctx),
            format="vllm-v0" if v0 else "vllm-v1",
            engine_index=_i(head["eng"]),
            prompt_throughput=float(head["pp"] or 0),
            generation_throughput=float(head["gen"] or 0),
            running=running,
            waiting=_i(head["wait"]),
            swapped=_i(head["swap"]),
            deferred=int(deferred) if deferred is not None else None,
            preemptions=int(preemptions) if preemptions is not None else None,
            kv_cache_usage=kv_usage,
            cpu_kv_cache_usage=cpu_kv_usage,
            prefix_cache_hit_rate=values.get("Prefix cache hit rate"),
            extra=extra,
        ),
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


# The V1 stats line a serving vLLM prints every few seconds, whole: `(APIServer pid=1) INFO 05-08 16:20:11
# [loggers.py:271] Engine 000: Avg prompt throughput: 12.3 tokens/s, Avg generation throughput: 45.6 tokens/s, Running:
# 3 reqs, Waiting: 0 reqs, GPU KV cache usage: 12.3%, Prefix cache hit rate: 45.6%`. The envelope reads such a line as
# a `vllm` header after the process prefix, and `parse_stats` reads its message as `_whole_stats_line` does; any other
# line takes the general path (tests/parse/test_whole_line.py compares the two).
_FLOAT = r"(\d{1,15}(?:\.\d{1,15})?)"
_STATS_LINE_RE = re.compile(
    r"\((APIServer|EngineCore(?:_DP\d{1,4})?) pid=(\d{1,9})\) INFO (\d\d-\d\d \d\d:\d\d:\d\d) \[(loggers\.py):\d{1,6}\] "
    rf"Engine (\d{{3}}): Avg prompt throughput: {_FLOAT} tokens/s, Avg generation throughput: {_FLOAT} tokens/s, "
    rf"Running: (\d{{1,9}}) reqs, Waiting: (\d{{1,9}}) reqs, GPU KV cache usage: {_FLOAT}%, "
    rf"Prefix cache hit rate: {_FLOAT}%(?=\n*\Z)"
)


def _whole_stats_line(
    m: re.Match[str], source: str, number: int, ctx: ParseContext
) -> tuple[LogLine, list[EventBase]] | None:
    if ctx.forced_engine not in (None, "vllm"):
        return None  # `_claims`: the general path leaves the line alone
    name, pid, stamp, file, engine, prompt, gen, running, waiting, usage, hit = m.groups()
    if _IDLE in ctx.state or (running != "0" and not float(prompt) and not float(gen)):
        return None  # an idle interval, or the one after it: the general path keeps the streak (`_idle_streak`)
    text = m.group(0)  # without the newlines the pattern looks past
    process = vllm_process(name, int(pid), None)  # what the envelope makes of the prefix
    message = text[m.start(5) - 7 :]  # from `Engine `
    line = LogLine(source, number, text, message, header="vllm", level="INFO", timestamp=stamp, file=file)
    line.process = process
    stats = SchedulerStats(
        **_base(line, ctx),
        format="vllm-v1",
        engine_index=int(engine),
        prompt_throughput=float(prompt),
        generation_throughput=float(gen),
        running=int(running),
        waiting=int(waiting),
        swapped=None,
        deferred=None,
        preemptions=None,
        kv_cache_usage=_pct(usage),
        cpu_kv_cache_usage=None,
        prefix_cache_hit_rate=_pct(hit),
        extra={},
    )
    return line, [stats]


GRAMMARS: list[Grammar] = [
    _grammar(
        "stats",
        ("Avg prompt throughput:",),
        parse_stats,
        (
            case(
                "constructed-reordered-new-field",
                # Constructed: Running moved first, a field no release prints yet.
                "(APIServer pid=1) INFO 11-30 10:00:00 [loggers.py:271] Engine 000: Running: 12 reqs, Avg prompt "
                "throughput: 1520.3 tokens/s, Avg generation throughput: 410.7 tokens/s, Waiting: 3 reqs, GPU KV cache "
                "usage: 87.5%, Prefix cache hit rate: 42.0%, Avg batch size: 11.5",
                (
                    "scheduler_stats",
                    {
                        "format": "vllm-v1",
                        "engine_index": 0,
                        "prompt_throughput": 1520.3,
                        "generation_throughput": 410.7,
                        "running": 12,
                        "waiting": 3,
                        "kv_cache_usage": 0.875,
                        "prefix_cache_hit_rate": 0.42,
                        "extra": {"avg_batch_size": 11.5},
                    },
                ),
                exact=True,
            ),
            case(
                "stall-three-idle-intervals",
                # Constructed: the V1 stats line three times with a request running and no token processed.
                "(APIServer pid=7) INFO 06-22 17:39:49 [loggers.py:273] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
                "Avg generation throughput: 0.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.1%, "
                "Prefix cache hit rate: 0.0%\n" * 3,
                ("engine_failure", {"kind": "stalled", "phase": "serving"}),
            ),
            case(
                "v0-2024-iteration-timer-stalled",
                "INFO 02-01 06:36:20 llm_engine.py:921] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: "
                "0.0 tokens/s, Max iteration time: 0.0 ms, Avg time/tok:0.0 ms, Running: 35 reqs, Swapped: 0 reqs, "
                "Pending: 116 reqs, GPU KV cache usage: 99.0%, CPU KV cache usage: 0.0%",
                ("engine_failure", {"kind": "stalled", "phase": "serving"}),
                ("scheduler_stats", {"format": "vllm-v0", "running": 35, "waiting": 116, "kv_cache_usage": 0.99}),
                exact=True,
            ),
            case(
                "constructed-v0-2024-iteration-timer-serving",
                # Constructed: the same line shape with iterations timed, a server that is serving.
                "INFO 02-01 06:36:25 llm_engine.py:921] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: "
                "612.4 tokens/s, Max iteration time: 41.2 ms, Avg time/tok:1.6 ms, Running: 35 reqs, Swapped: 0 reqs, "
                "Pending: 116 reqs, GPU KV cache usage: 99.0%, CPU KV cache usage: 0.0%",
                ("scheduler_stats", {"format": "vllm-v0", "running": 35, "generation_throughput": 612.4}),
                exact=True,
            ),
            case(
                "sample-1",
                "INFO 05-25 06:50:29 [metrics.py:486] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: "
                "15.5 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.0%, CPU KV "
                "cache usage: 0.1%.",
                ("scheduler_stats", {}),
            ),
            case(
                "stats-v1-0.20-saturated",
                "(APIServer pid=3646) INFO 05-19 10:13:11 [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
                "Avg generation throughput: 1055.3 tokens/s, Running: 18 reqs, Waiting: 43 reqs, GPU KV cache usage: 95.9%, "
                "Prefix cache hit rate: 0.0%",
                (
                    "scheduler_stats",
                    {
                        "format": "vllm-v1",
                        "engine_index": 0,
                        "prompt_throughput": 0.0,
                        "generation_throughput": 1055.3,
                        "running": 18,
                        "waiting": 43,
                        "kv_cache_usage": 0.959,
                        "prefix_cache_hit_rate": 0.0,
                        "swapped": None,
                    },
                ),
            ),
            case(
                "stats-v1-0.20-prefill",
                "(APIServer pid=3646) INFO 05-19 10:13:31 [loggers.py:271] Engine 000: Avg prompt throughput: 12068.8 tokens/s, "
                "Avg generation throughput: 734.9 tokens/s, Running: 18 reqs, Waiting: 33 reqs, GPU KV cache usage: 87.7%, "
                "Prefix cache hit rate: 0.0%",
                ("scheduler_stats", {"prompt_throughput": 12068.8, "waiting": 33, "kv_cache_usage": 0.877}),
            ),
            case(
                "stats-v1-0.10-no-prefix",
                "INFO 07-28 06:40:59 [loggers.py:118] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation "
                "throughput: 239.2 tokens/s, Running: 8 reqs, Waiting: 0 reqs, GPU KV cache usage: 91.2%, Prefix cache hit "
                "rate: 0.0%",
                ("scheduler_stats", {"running": 8, "generation_throughput": 239.2, "kv_cache_usage": 0.912}),
            ),
            case(
                "stats-v1-0.13",
                "(APIServer pid=324144) INFO 12-25 13:39:40 [loggers.py:248] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
                "Avg generation throughput: 149.8 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 3.3%, "
                "Prefix cache hit rate: 18.8%",
                ("scheduler_stats", {"prefix_cache_hit_rate": 0.188, "kv_cache_usage": 0.033}),
            ),
            case(
                "stats-v1-0.21-all-optional",
                "(APIServer pid=1) INFO 05-20 12:00:10 [loggers.py:271] Engine 000: Avg prompt throughput: 812.4 tokens/s, Avg "
                "generation throughput: 301.7 tokens/s, Running: 24 reqs, Waiting: 9 reqs, Deferred: 3 reqs, Preemptions: 5, "
                "GPU KV cache usage: 99.1%, Prefix cache hit rate: 42.0%, MM cache hit rate: 10.3%",
                (
                    "scheduler_stats",
                    {
                        "waiting": 9,
                        "deferred": 3,
                        "preemptions": 5,
                        "kv_cache_usage": 0.991,
                        "prefix_cache_hit_rate": 0.42,
                        "extra": {"mm_cache_hit_rate": 0.103},
                    },
                ),
            ),
            case(
                "stats-v1-0.33",
                "(APIServer pid=1) INFO 11-29 10:00:10 [loggers.py:318] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg "
                "generation throughput: 73.2 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 4.1%, Prefix "
                "cache hit rate: 0.0%",
                ("scheduler_stats", {"generation_throughput": 73.2, "kv_cache_usage": 0.041}),
            ),
            case(
                "stats-v1-engines-aggregated",
                "(APIServer pid=1) INFO 11-29 10:00:10 [loggers.py:318] 2 Engines Aggregated: Avg prompt throughput: 10.0 "
                "tokens/s, Avg generation throughput: 20.0 tokens/s, Running: 2 reqs, Waiting: 0 reqs, GPU KV cache usage: "
                "1.0%, Prefix cache hit rate: 0.0%",
                ("scheduler_stats", {"engine_index": None, "running": 2, "extra": {"engines_aggregated": 2}}),
            ),
            case(
                "stats-v1-0.33-xpu-kv-fetch",
                "(APIServer pid=1) INFO 11-29 10:00:10 [loggers.py:318] Engine 001: Avg prompt throughput: 0.0 tokens/s, Avg "
                "generation throughput: 50.0 tokens/s, Running: 2 reqs, Waiting: 1 reqs, KV fetch: 1 waiting to start, 2 in "
                "progress, 0 completed waiting, XPU KV cache usage: 12.5%",
                (
                    "scheduler_stats",
                    {
                        "engine_index": 1,
                        "kv_cache_usage": 0.125,
                        "extra": {"kv_cache_device": "XPU", "kv_fetch_waiting": 1, "kv_fetch_in_progress": 2},
                    },
                ),
            ),
            case(
                "stats-v1-external-prefix-corrupted",
                "(APIServer pid=1) INFO 11-29 10:00:10 [loggers.py:271] Engine 000: Avg prompt throughput: 5.0 tokens/s, Avg "
                "generation throughput: 50.0 tokens/s, Running: 2 reqs, Waiting: 0 reqs, GPU KV cache usage: 12.5%, Prefix "
                "cache hit rate: 50.0%, Corrupted: 1 reqs, External prefix cache hit rate: 25.0%",
                (
                    "scheduler_stats",
                    {
                        "prefix_cache_hit_rate": 0.5,
                        "extra": {"external_prefix_cache_hit_rate": 0.25, "corrupted_requests": 1},
                    },
                ),
            ),
            case(
                "stats-v0-0.5-docker-timestamp",
                "[2024-07-08 15:17:34] INFO 07-08 07:17:34 metrics.py:334] Avg prompt throughput: 6501.4 tokens/s, Avg "
                "generation throughput: 69.1 tokens/s, Running: 4 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: "
                "15.6%, CPU KV cache usage: 0.0%",
                (
                    "scheduler_stats",
                    {
                        "format": "vllm-v0",
                        "prompt_throughput": 6501.4,
                        "running": 4,
                        "swapped": 0,
                        "waiting": 0,
                        "kv_cache_usage": 0.156,
                        "cpu_kv_cache_usage": 0.0,
                    },
                ),
            ),
            case(
                "stats-v0-0.8-bracketed-with-prefix-line",
                "INFO 05-25 06:50:29 [metrics.py:486] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 15.5 "
                "tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 0.0%, CPU KV cache usage: "
                "0.1%.\n"
                "INFO 05-25 06:50:29 [metrics.py:502] Prefix cache hit rate: GPU: 0.00%, CPU: 90.00%",
                ("scheduler_stats", {"format": "vllm-v0", "cpu_kv_cache_usage": 0.001, "generation_throughput": 15.5}),
                (
                    "scheduler_stats",
                    {
                        "format": "vllm-v0-prefix-cache",
                        "prefix_cache_hit_rate": 0.0,
                        "extra": {"cpu_prefix_cache_hit_rate": 0.9},
                    },
                ),
            ),
            case(
                "stats-v0-wrapped-by-terminal",
                "INFO 07-03 23:23:42 [metrics.py:536] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 616.1 "
                "tokens/s, Running: 32 r\n"
                "eqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 17.6%, CPU KV cache usage: 0.0%.",
                ("scheduler_stats", {"running": 32, "kv_cache_usage": 0.176, "line": 1, "end_line": 2}),
            ),
            case(
                "stats-v1-cpu-platform",  # vLLM 0.33 on the CPU platform: loggers.py names the KV cache by device type
                "(APIServer pid=100) INFO 11-20 10:01:00 [loggers.py:259] Engine 000: Avg prompt throughput: 20.0 tokens/s, Avg "
                "generation throughput: 3.1 tokens/s, Running: 1 reqs, Waiting: 0 reqs, CPU KV cache usage: 1.2%, Prefix cache "
                "hit rate: 0.0%",
                ("platform", {"platform": "cpu", "message": "CPU KV cache usage"}),
                ("scheduler_stats", {"kv_cache_usage": 0.012, "extra": {"kv_cache_device": "CPU"}}),
                exact=True,
            ),
        ),
    ),
    _grammar(
        "stats_extras",
        ("Prefix cache hit rate: GPU:", "context requests,", "TF/s/device", "api_server_count more than 1"),
        parse_stats_extras,
        (
            case(
                "sample-1",
                "INFO 05-25 06:50:29 [metrics.py:502] Prefix cache hit rate: GPU: 0.00%, CPU: 90.00%",
                ("scheduler_stats", {}),
            ),
            case(
                "iteration-0.14",
                "(EngineCore pid=52) INFO 06-01 10:00:00 [core.py:401] Iteration(1234): 0 context requests, 0 context tokens, "
                "1 generation requests, 4 generation tokens, iteration elapsed time: 13.72 ms",
                (
                    "scheduler_stats",
                    {
                        "format": "vllm-iteration",
                        "running": 1,
                        "num_tokens": 4,
                        "extra": {"iteration": 1234, "generation_tokens": 4, "iteration_seconds": 0.01372},
                    },
                ),
            ),
            case(
                "iteration-0.29",
                "(APIServer pid=1) INFO 09-15 10:00:00 [loggers.py:330] Engine 000: Iteration(77): 2 context requests, 4096 "
                "context tokens, 6 generation requests, 6 generation tokens, iteration elapsed time: 80.50 ms, GPU KV cache "
                "usage: 12.5%",
                (
                    "scheduler_stats",
                    {"format": "vllm-iteration", "engine_index": 0, "kv_cache_usage": 0.125, "num_tokens": 4102},
                ),
            ),
            case(
                "stats-disabled-api-server-count",
                "(APIServer pid=1) WARNING 09-15 10:00:00 [async_llm.py:150] AsyncLLM created with api_server_count more than "
                "1; disabling stats logging to avoid incomplete stats.",
                ("perf_warning", {"topic": "stats-disabled"}),
            ),
        ),
    ),
    _grammar(
        "preemption",
        ("PreemptionMode.", "not enough kv cache blocks"),
        parse_preemption,
        (
            case(
                "preemption-v0",
                "WARNING 08-20 10:18:39 scheduler.py:1141] Sequence group 147 is preempted by PreemptionMode.RECOMPUTE mode "
                "because there is not enough KV cache space. This can affect the end-to-end performance. Increase "
                "gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. "
                "total_num_cumulative_preemption=1",
                ("preemption", {"mode": "RECOMPUTE", "cumulative": 1}),
            ),
            case(
                "preemption-v0-0.6.1-wording",
                "WARNING 09-05 10:00:00 scheduler.py:1089] Sequence group 12 is preempted in PreemptionMode.SWAP mode because "
                "there is not enough KV cache space. This can impact the end-to-end performance. Increase "
                "gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. "
                "total_num_cumulative_preemption=51",
                ("preemption", {"mode": "SWAP", "cumulative": 51}),
            ),
        ),
    ),
]
# The stats line type with its fast path (see `_STATS_LINE_RE`).
GRAMMARS[0] = dataclasses.replace(GRAMMARS[0], whole_line=WholeLine(_STATS_LINE_RE, _whole_stats_line))
