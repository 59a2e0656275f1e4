"""A saved `/metrics` scrape of vLLM or SGLang -> the events the engine's log lines give.

    vllm:num_requests_running{engine="0",model_name="Qwen/Qwen3-8B"} 4.0 1764590400000
    vllm:generation_tokens_total{engine="0",model_name="Qwen/Qwen3-8B"} 48212.0 1764590400000
    ... (the next scrape: the same series again, 15 s later)
    vllm:generation_tokens_total{engine="0",model_name="Qwen/Qwen3-8B"} 49412.0 1764590415000
                                          -> SchedulerStats(generation_throughput=80.0, running=4, ...)

Samples are collected into a snapshot (one scrape); a series seen again, or a `# HELP`/`# TYPE` line seen again,
starts the next one. Gauges (running, waiting, KV usage) are read from each snapshot; counters (tokens,
preemptions, drafts and accepted tokens) are differenced between consecutive snapshots, and become rates when
both carry sample timestamps. A file with one snapshot gives the averages since the server started. Each
snapshot's events are emitted once the next one starts (or the source ends), with the line of the sample each
number came from.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from logdoctor.events import (
    EngineVersion,
    EventBase,
    KVCache,
    ModelInfo,
    Preemption,
    SchedulerConfig,
    SchedulerStats,
    SpecDecodeStats,
)
from logdoctor.inputs.metrics import exposition
from logdoctor.inputs.metrics.names import BY_ENGINE, REPLICA_LABELS, SGLANG, VLLM, Names
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

_STATE = "metrics.reader"
_HISTOGRAM_PARTS = ("_sum", "_count")


def _read_keys(names: Names) -> frozenset[str]:
    histograms = {*names.ttft, *names.itl, *names.tpot, *names.e2e, *names.iteration_tokens}
    keys: set[str] = set()
    for name in names.all():
        if name in histograms:
            keys.update(name + part for part in _HISTOGRAM_PARTS)
        else:
            keys.add(name)
    return frozenset(keys)


_READ = {engine: _read_keys(names) for engine, names in BY_ENGINE.items()}


@dataclass
class _Snapshot:
    """One scrape: every read value by series key and replica, and the line it came from."""

    engine: str
    first_line: int
    values: dict[str, dict[str, float]] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    timestamp_ms: int | None = None
    model: str | None = None
    info: dict[str, str] | None = None
    info_line: int | None = None
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = field(default_factory=set)
    metas: set[tuple[str, str]] = field(default_factory=set)

    def first(self, names: tuple[str, ...], suffix: str = "") -> str | None:
        return next((n + suffix for n in names if n + suffix in self.values), None)

    def total(self, names: tuple[str, ...], suffix: str = "") -> float | None:
        key = self.first(names, suffix)
        return sum(self.values[key].values()) if key else None

    def mean(self, names: tuple[str, ...]) -> float | None:
        key = self.first(names)
        if key is None:
            return None
        replicas = self.values[key]
        return sum(replicas.values()) / len(replicas)

    def line(self, names: tuple[str, ...], suffix: str = "") -> int | None:
        key = self.first(names, suffix)
        return self.lines.get(key) if key else None

    def positions(self, names: tuple[str, ...]) -> list[float]:
        """Per-position counters (`..._per_pos_total{position="0"}`), by position."""
        out: dict[int, float] = {}
        for name in names:
            for key, replicas in self.values.items():
                base, _, position = key.partition("#")
                if base == name and position.isdigit():
                    out[int(position)] = sum(replicas.values())
            if out:
                break
        return [out.get(i, 0.0) for i in range(max(out) + 1)] if out else []


@dataclass
class _Reader:
    """The snapshot being read, the one before it, and how many have been closed in this source."""

    current: _Snapshot | None = None
    previous: _Snapshot | None = None
    closed: int = 0
    identified: bool = False


def _reader(ctx: ParseContext) -> _Reader:
    reader = ctx.state.get(_STATE)
    if reader is None:
        reader = ctx.state[_STATE] = _Reader()
    assert isinstance(reader, _Reader)
    return reader


def _engine_of(name: str) -> str:
    return name.split(":", 1)[0]


def _series_key(sample: exposition.Sample) -> str | None:
    name = sample.name
    if name.endswith(("_bucket", "_created")):
        return None
    if name.endswith("_per_pos_total"):
        return f"{name}#{sample.label('position') or ''}"
    return name


# --- events ---------------------------------------------------------------------------------------


def _base(ctx: ParseContext, snap: _Snapshot, line: int | None) -> dict[str, Any]:
    timestamp = None
    if snap.timestamp_ms is not None:
        timestamp = datetime.fromtimestamp(snap.timestamp_ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")
    return {
        "source": ctx.source,
        "line": line or snap.first_line,
        "timestamp": timestamp,
        "engine": snap.engine,
    }


def _delta(cur: _Snapshot, prev: _Snapshot | None, names: tuple[str, ...], suffix: str = "") -> float | None:
    """A counter's increase since the previous snapshot; None when either lacks it or it was reset (restart)."""
    now = cur.total(names, suffix)
    if prev is None:
        return now
    before = prev.total(names, suffix)
    if now is None or before is None or now < before:
        return None
    return now - before


def _seconds(cur: _Snapshot, prev: _Snapshot | None) -> float | None:
    if prev is None or cur.timestamp_ms is None or prev.timestamp_ms is None:
        return None
    seconds = (cur.timestamp_ms - prev.timestamp_ms) / 1000
    return seconds if seconds > 0 else None


def _ratio(top: float | None, bottom: float | None) -> float | None:
    if top is None or bottom is None or bottom <= 0:
        return None
    return top / bottom


def _int(value: float | None) -> int | None:
    return None if value is None else round(value)


def _identity(ctx: ParseContext, snap: _Snapshot) -> list[EventBase]:
    names = BY_ENGINE[snap.engine]
    events: list[EventBase] = [
        EngineVersion(**_base(ctx, snap, snap.first_line), version=None, model=snap.model, origin="metrics")
    ]
    if snap.model:
        events.append(ModelInfo(**_base(ctx, snap, snap.first_line), model=snap.model))
    info = snap.info or {}
    blocks = _number(info.get("num_gpu_blocks"))
    block_size = _number(info.get("block_size")) or snap.total(names.page_size)
    kv_tokens = snap.total(names.kv_tokens) or (blocks * block_size if blocks and block_size else None)
    if blocks or kv_tokens:
        line = snap.info_line if info else snap.line(names.kv_tokens)
        events.append(
            KVCache(
                **_base(ctx, snap, line),
                gpu_blocks=_int(blocks),
                cpu_blocks=_int(_number(info.get("num_cpu_blocks"))),
                kv_tokens=_int(kv_tokens),
                block_size=_int(block_size),
                message=f"{snap.first(names.cache_config) or snap.first(names.kv_tokens)}",
            )
        )
    caching = info.get("enable_prefix_caching")
    if caching in ("True", "False"):
        events.append(
            SchedulerConfig(
                **_base(ctx, snap, snap.info_line),
                kind="prefix-caching",
                enabled=caching == "True",
                message=f"vllm:cache_config_info enable_prefix_caching={caching}",
            )
        )
    max_running = snap.total(names.max_running)
    if max_running:
        events.append(
            SchedulerConfig(
                **_base(ctx, snap, snap.line(names.max_running)),
                kind="max-num-seqs",
                value=round(max_running),
                message=f"{snap.first(names.max_running)} {max_running:g}",
            )
        )
    return events


def _number(text: str | None) -> float | None:
    try:
        value = float(text) if text is not None else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) else None


def _stats(ctx: ParseContext, cur: _Snapshot, prev: _Snapshot | None, since_start: bool) -> SchedulerStats:
    """The gauges of this snapshot; counters as rates over the interval since `prev` (or since the start)."""
    names = BY_ENGINE[cur.engine]
    seconds = _seconds(cur, prev)
    interval = prev is not None or since_start
    generated = _delta(cur, prev, names.generation_tokens) if interval else None
    idle = prev is not None and generated == 0
    throughput = _ratio(generated, seconds) if prev is not None else None
    if throughput is None and not idle:
        throughput = cur.total(names.generation_throughput)  # the engine's own figure (SGLang, vLLM V0)
    prompt = _ratio(_delta(cur, prev, names.prompt_tokens), seconds) if prev is not None else None
    if prompt is None and not idle:
        prompt = cur.total(names.prompt_throughput)
    hit_rate = None
    if interval:
        hit_rate = _ratio(_delta(cur, prev, names.prefix_hits), _delta(cur, prev, names.prefix_queries))
    if hit_rate is None:
        hit_rate = cur.mean(names.prefix_hit_rate)
    if hit_rate is not None and not 0.0 <= hit_rate <= 1.0:
        hit_rate = None  # vLLM V0 reports -1 when prefix caching is off (NaiveBlockAllocator): no rate, not -100%
    extra: dict[str, float | int | str] = {}
    if interval:
        for label, family in (
            ("ttft_s", names.ttft),
            ("itl_s", names.itl),
            ("tpot_s", names.tpot),
            ("e2e_s", names.e2e),
            ("tokens_per_step", names.iteration_tokens),
        ):
            mean = _ratio(_delta(cur, prev, family, "_sum"), _delta(cur, prev, family, "_count"))
            if mean is not None:
                extra[label] = round(mean, 6)
        if since_start:
            extra["window"] = "since the server started"
        elif seconds is not None:
            extra["interval_s"] = seconds
    preempted = _delta(cur, prev, names.preemptions) if prev is not None else None
    running = cur.total(names.running)
    return SchedulerStats(
        **_base(ctx, cur, cur.line(names.running) or cur.line(names.generation_tokens)),
        format="metrics",
        running=_int(running),
        waiting=_int(cur.total(names.waiting)),
        swapped=_int(cur.total(names.swapped)),
        kv_cache_usage=cur.mean(names.kv_usage),
        cpu_kv_cache_usage=cur.mean(names.cpu_kv_usage),
        generation_throughput=None if throughput is None else round(throughput, 3),
        prompt_throughput=None if prompt is None else round(prompt, 3),
        preemptions=_int(preempted),
        prefix_cache_hit_rate=hit_rate,
        extra=extra,
    )


def _spec(ctx: ParseContext, cur: _Snapshot, prev: _Snapshot | None, since_start: bool) -> SpecDecodeStats | None:
    names = BY_ENGINE[cur.engine]
    extra: dict[str, float | int | str] = {"window": "since the server started"} if since_start else {}
    if cur.first(names.spec_drafts):  # vLLM V1 counters
        drafts = _delta(cur, prev, names.spec_drafts)
        drafted = _delta(cur, prev, names.spec_draft_tokens)
        accepted = _delta(cur, prev, names.spec_accepted)
        if not drafts or accepted is None:
            return None
        positions = cur.positions(names.spec_accepted_per_position)
        if prev is not None and positions:
            before = prev.positions(names.spec_accepted_per_position)
            positions = [p - (before[i] if i < len(before) else 0.0) for i, p in enumerate(positions)]
        k = len(positions) or (round(drafted / drafts) if drafted else None)
        seconds = _seconds(cur, prev)
        return SpecDecodeStats(
            **_base(ctx, cur, cur.line(names.spec_accepted)),
            format="metrics",
            # Totals since the start are cumulative counters (as vLLM V0 printed them): facts difference two
            # such events, so two files of one scrape each still give the acceptance between them.
            interval=not since_start,
            mean_acceptance_length=round(1 + accepted / drafts, 4),
            acceptance_rate=_ratio(accepted, drafted),
            per_position_acceptance=[round(p / drafts, 4) for p in positions] or None,
            num_speculative_tokens=k,
            accepted_tokens=round(accepted),
            drafted_tokens=_int(drafted),
            num_drafts=round(drafts),
            accepted_throughput=_ratio(accepted, seconds),
            drafted_throughput=_ratio(drafted, seconds),
            extra=extra,
        )
    length = cur.mean(names.spec_acceptance_length)
    rate = cur.mean(names.spec_acceptance_rate)
    if not length and rate is None:
        return None
    if prev is not None and _delta(cur, prev, names.generation_tokens) == 0:
        return None  # SGLang's gauges keep the last batch's value while the server is idle (sglang#4244)
    slots = cur.total(names.spec_draft_slots)
    steps = cur.total(names.spec_steps)
    k = round(slots - 1) if slots and slots > 1 else _int(steps) or None
    return SpecDecodeStats(
        **_base(ctx, cur, cur.line(names.spec_acceptance_length) or cur.line(names.spec_acceptance_rate)),
        format="metrics",
        mean_acceptance_length=length or None,
        acceptance_rate=rate,
        num_speculative_tokens=k,
        extra=extra,
    )


def _close(ctx: ParseContext, reader: _Reader, *, at_end: bool) -> list[EventBase]:
    """The events of the snapshot being read, now that it is complete."""
    cur = reader.current
    reader.current = None
    if cur is None or (not cur.values and cur.info is None):
        return []
    prev = reader.previous if reader.previous is not None and reader.previous.engine == cur.engine else None
    reader.previous = cur
    reader.closed += 1
    events: list[EventBase] = []
    if prev is None:
        # The first snapshot waits: with a second one its counters are differenced, alone they are averages
        # since the start, and only the end of the source says which.
        if not at_end:
            return []
        events.extend(_identity(ctx, cur))
        reader.identified = True
        events.append(_stats(ctx, cur, None, since_start=True))
        spec = _spec(ctx, cur, None, since_start=True)
        if spec is not None:
            events.append(spec)
        names = BY_ENGINE[cur.engine]
        preempted = cur.total(names.preemptions)
        if preempted:
            events.append(
                Preemption(
                    **_base(ctx, cur, cur.line(names.preemptions)),
                    mode="retract" if cur.engine == "sglang" else None,
                    cumulative=round(preempted),
                    message=f"{cur.first(names.preemptions)} {preempted:g} since the server started",
                )
            )
        return events
    if not reader.identified:
        events.extend(_identity(ctx, prev))
        events.append(_stats(ctx, prev, None, since_start=False))
        reader.identified = True
    events.append(_stats(ctx, cur, prev, since_start=False))
    spec = _spec(ctx, cur, prev, since_start=False)
    if spec is not None:
        events.append(spec)
    return events


def finish(ctx: ParseContext) -> list[EventBase]:
    reader = ctx.state.get(_STATE)
    if not isinstance(reader, _Reader) or reader.current is None:
        return []
    return _close(ctx, reader, at_end=reader.previous is None)


# --- line types -------------------------------------------------------------------------------------


def parse_sample(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    sample = exposition.parse_sample(line.text)
    if sample is None:
        return None
    engine = _engine_of(sample.name)
    key = _series_key(sample)
    if key is None or key.partition("#")[0] not in _READ[engine]:
        return []  # a series this input kind does not read (buckets, `_created`, other families)
    reader = _reader(ctx)
    events: list[EventBase] = []
    series = (sample.name, sample.labels)
    cur = reader.current
    if cur is not None and cur.engine != engine:  # another engine's scrape: this engine's series ends here
        alone = reader.previous is None or reader.previous.engine != cur.engine
        events = _close(ctx, reader, at_end=alone)
        reader.previous, reader.identified, cur = None, False, None
    elif cur is not None and series in cur.seen:
        events = _close(ctx, reader, at_end=False)
        cur = None
    if cur is None:
        cur = reader.current = _Snapshot(engine=engine, first_line=line.number)
    cur.seen.add(series)
    if sample.timestamp_ms is not None:
        cur.timestamp_ms = max(cur.timestamp_ms or 0, sample.timestamp_ms)
    cur.model = cur.model or sample.label("model_name") or sample.label("name")
    if sample.name in VLLM.cache_config:
        cur.info = {k: v for k, v in sample.labels if k != "engine"}
        cur.info_line = line.number
        return events
    if math.isnan(sample.value):
        return events
    replica = next((v for k in REPLICA_LABELS if (v := sample.label(k)) is not None), "")
    replicas = cur.values.setdefault(key, {})
    replicas[replica] = max(replicas.get(replica, -math.inf), sample.value)  # TP ranks of a replica repeat it
    cur.lines.setdefault(key, line.number)
    return events


def parse_meta(line: LogLine, ctx: ParseContext) -> list[EventBase] | None:
    """`# HELP` / `# TYPE`: recognised; one already seen in this snapshot means the next scrape began."""
    meta = exposition.parse_meta(line.text)
    if meta is None:
        return None
    reader = _reader(ctx)
    cur = reader.current
    if cur is None:
        return []
    if (meta.kind, meta.name) in cur.metas:
        return _close(ctx, reader, at_end=False)
    cur.metas.add((meta.kind, meta.name))
    return []


_VLLM_SCRAPE = "\n".join(
    (
        # vllm-project/production-stack#318: the `curl /metrics` of a vLLM V1 server (Qwen2.5-Coder-32B), its first
        # three engine families byte for byte; the case's second scrape (values 0.5) is constructed
        "# HELP vllm:num_requests_running Number of requests in model execution batches.",
        "# TYPE vllm:num_requests_running gauge",
        'vllm:num_requests_running{model_name="Qwen/Qwen2.5-Coder-32B-Instruct"} 0.0',
        "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.",
        "# TYPE vllm:num_requests_waiting gauge",
        'vllm:num_requests_waiting{model_name="Qwen/Qwen2.5-Coder-32B-Instruct"} 0.0',
        "# HELP vllm:gpu_cache_usage_perc GPU KV-cache usage. 1 means 100 percent usage.",
        "# TYPE vllm:gpu_cache_usage_perc gauge",
        'vllm:gpu_cache_usage_perc{model_name="Qwen/Qwen2.5-Coder-32B-Instruct"} 0.0',
    )
)


def _scrape(ts: int, running: int, tokens: int, accepted: int, drafts: int, preempted: int) -> str:
    labels = 'engine="0",model_name="Qwen/Qwen3-8B"'
    return "\n".join(
        (
            f"vllm:num_requests_running{{{labels}}} {running}.0 {ts}",
            f"vllm:num_requests_waiting{{{labels}}} 0.0 {ts}",
            f"vllm:kv_cache_usage_perc{{{labels}}} 0.25 {ts}",
            f"vllm:num_preemptions_total{{{labels}}} {preempted}.0 {ts}",
            f"vllm:generation_tokens_total{{{labels}}} {tokens}.0 {ts}",
            f"vllm:prompt_tokens_total{{{labels}}} {tokens // 4}.0 {ts}",
            f"vllm:spec_decode_num_drafts_total{{{labels}}} {drafts}.0 {ts}",
            f"vllm:spec_decode_num_draft_tokens_total{{{labels}}} {drafts * 3}.0 {ts}",
            f"vllm:spec_decode_num_accepted_tokens_total{{{labels}}} {accepted}.0 {ts}",
            *(
                f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{{labels},position="{p}"}} '
                f"{accepted * share // 100}.0 {ts}"
                for p, share in enumerate((60, 30, 10))
            ),
            f"vllm:prefix_cache_queries_total{{{labels}}} {tokens}.0 {ts}",
            f"vllm:prefix_cache_hits_total{{{labels}}} {tokens // 2}.0 {ts}",
            f"vllm:time_to_first_token_seconds_sum{{{labels}}} {running * 10}.0 {ts}",
            f"vllm:time_to_first_token_seconds_count{{{labels}}} {running * 100}.0 {ts}",
            f'vllm:time_to_first_token_seconds_bucket{{{labels},le="+Inf"}} {running * 100}.0 {ts}',
            f"vllm:inter_token_latency_seconds_sum{{{labels}}} {tokens // 50}.0 {ts}",
            f"vllm:inter_token_latency_seconds_count{{{labels}}} {tokens}.0 {ts}",
            f"vllm:request_time_per_output_token_seconds_sum{{{labels}}} 1.0 {ts}",
            f"vllm:request_time_per_output_token_seconds_count{{{labels}}} 50.0 {ts}",
            f"vllm:e2e_request_latency_seconds_sum{{{labels}}} 100.0 {ts}",
            f"vllm:e2e_request_latency_seconds_count{{{labels}}} 10.0 {ts}",
            f"vllm:iteration_tokens_total_sum{{{labels}}} {tokens}.0 {ts}",
            f"vllm:iteration_tokens_total_count{{{labels}}} {tokens // 8}.0 {ts}",
        )
    )


_PR4444 = 'engine_type="unified",model_name="/shared/public/models/Meta-Llama-3-8B-Instruct"'
_PR1853 = 'name="/shared/public/elr-models/meta-llama/Llama-3.2-3B/5cc0ffe09ee49f7be6ca7c794ee6bd7245e84e60/"'

_CACHE_INFO = (
    'vllm:cache_config_info{block_size="16",cache_dtype="auto",enable_prefix_caching="True",engine="0",'
    'gpu_memory_utilization="0.9",num_cpu_blocks="None",num_gpu_blocks="27000"} 1.0'
)

GRAMMARS: list[Grammar] = [
    Grammar(
        "metrics.preamble",
        "metrics",
        ("# HELP vllm:", "# TYPE vllm:", "# HELP sglang:", "# TYPE sglang:"),
        parse_meta,
        (
            case(
                "vllm-two-scrapes",
                # the preamble repeating starts the second scrape
                f"{_VLLM_SCRAPE}\n{_VLLM_SCRAPE.replace('} 0.0', '} 0.5')}",
                ("scheduler_stats", {"running": 0, "kv_cache_usage": 0.0}),
                ("scheduler_stats", {"running": 0, "kv_cache_usage": 0.5}),
            ),
            case(
                "sglang-0.4-pr4444",  # sgl-project/sglang#4444, the PR's `curl /metrics` output, its first lines
                "\n".join(
                    (
                        "# HELP sglang:num_running_reqs The number of running requests.",
                        "# TYPE sglang:num_running_reqs gauge",
                        f"sglang:num_running_reqs{{{_PR4444}}} 0.0",
                        "# HELP sglang:num_used_tokens The number of used tokens.",
                        "# TYPE sglang:num_used_tokens gauge",
                        f"sglang:num_used_tokens{{{_PR4444}}} 0.0",
                        "# HELP sglang:token_usage The token usage.",
                        "# TYPE sglang:token_usage gauge",
                        f"sglang:token_usage{{{_PR4444}}} 0.0",
                    )
                ),
                ("scheduler_stats", {"running": 0, "kv_cache_usage": 0.0, "engine": "sglang"}),
            ),
        ),
    ),
    Grammar(
        "metrics.vllm",
        "metrics",
        VLLM.all(),
        parse_sample,
        (
            case(
                "vllm-0.33-two-scrapes",
                _scrape(1764590400000, 4, 48000, 9000, 6000, 2)
                + "\n"
                + _scrape(1764590415000, 4, 49200, 9600, 6400, 3),
                ("scheduler_stats", {"running": 4, "generation_throughput": None}),
                (
                    "scheduler_stats",
                    {
                        "running": 4,
                        "generation_throughput": 80.0,
                        "prompt_throughput": 20.0,
                        "preemptions": 1,
                        "prefix_cache_hit_rate": 0.5,
                        "kv_cache_usage": 0.25,
                    },
                ),
                (
                    "spec_decode_stats",
                    {
                        "mean_acceptance_length": 2.5,
                        "acceptance_rate": 0.5,
                        "num_speculative_tokens": 3,
                        "per_position_acceptance": [0.9, 0.45, 0.15],
                        "accepted_tokens": 600,
                        "num_drafts": 400,
                    },
                ),
                exact=False,
            ),
            case(
                "vllm-0.33-one-scrape",
                _scrape(1764590400000, 4, 48000, 9000, 6000, 2) + "\n" + _CACHE_INFO,
                ("engine_version", {"engine": "vllm", "model": "Qwen/Qwen3-8B"}),
                ("kv_cache", {"gpu_blocks": 27000, "block_size": 16, "kv_tokens": 432000}),
                ("scheduler_config", {"kind": "prefix-caching", "enabled": True}),
                ("scheduler_stats", {"running": 4, "extra": {"window": "since the server started"}}),
                ("spec_decode_stats", {"mean_acceptance_length": 2.5, "num_speculative_tokens": 3}),
                ("preemption", {"cumulative": 2}),
            ),
            case(
                "vllm-v0-gauges",
                # vLLM V0 names (docs.vllm.ai v0.2.7 "Production Metrics"), constructed values
                'vllm:avg_generation_throughput_toks_per_s{model_name="m"} 512.5\n'
                'vllm:avg_prompt_throughput_toks_per_s{model_name="m"} 100.0\n'
                'vllm:num_requests_swapped{model_name="m"} 1.0\n'
                'vllm:gpu_cache_usage_perc{model_name="m"} 0.7\n'
                'vllm:cpu_cache_usage_perc{model_name="m"} 0.1\n'
                'vllm:gpu_prefix_cache_hit_rate{model_name="m"} 0.3\n'
                'vllm:spec_decode_draft_acceptance_rate{model_name="m"} 0.6\n'
                'vllm:gpu_prefix_cache_queries_total{model_name="m"} 10.0\n'
                'vllm:gpu_prefix_cache_hits_total{model_name="m"} 5.0\n'
                'vllm:time_per_output_token_seconds_sum{model_name="m"} 2.0\n'
                'vllm:time_per_output_token_seconds_count{model_name="m"} 100.0',
                (
                    "scheduler_stats",
                    {
                        "generation_throughput": 512.5,
                        "swapped": 1,
                        "kv_cache_usage": 0.7,
                        "cpu_kv_cache_usage": 0.1,
                        "prefix_cache_hit_rate": 0.5,
                        "extra": {"itl_s": 0.02, "window": "since the server started"},
                    },
                ),
                ("spec_decode_stats", {"acceptance_rate": 0.6}),
            ),
            case(
                "vllm-docs-iteration-tokens",  # docs.vllm.ai "Production Metrics" example output
                'vllm:iteration_tokens_total_sum{model_name="unsloth/Llama-3.2-1B-Instruct"} 0.0\n'
                'vllm:iteration_tokens_total_bucket{le="1.0",model_name="unsloth/Llama-3.2-1B-Instruct"} 3.0',
                ("scheduler_stats", {"extra": {"window": "since the server started"}}),
            ),
            case("not-a-sample", "vllm:num_requests_running is missing in v0.18 (vllm#40605)"),
        ),
    ),
    Grammar(
        "metrics.sglang",
        "metrics",
        SGLANG.all(),
        parse_sample,
        (
            case(
                "sglang-0.3-pr1853",  # sgl-project/sglang#1853, the review's `curl -X POST .../metrics`, byte for byte
                "\n".join(
                    (
                        "# HELP sglang:max_total_num_tokens Maximum total number of tokens",
                        "# TYPE sglang:max_total_num_tokens gauge",
                        f"sglang:max_total_num_tokens{{{_PR1853}}} 570979.0",
                        "# HELP sglang:max_prefill_tokens Maximum prefill tokens",
                        "# TYPE sglang:max_prefill_tokens gauge",
                        f"sglang:max_prefill_tokens{{{_PR1853}}} 16384.0",
                        "# HELP sglang:max_running_requests Maximum running requests",
                        "# TYPE sglang:max_running_requests gauge",
                        f"sglang:max_running_requests{{{_PR1853}}} 2231.0",
                        "# HELP sglang:context_len Context length",
                        "# TYPE sglang:context_len gauge",
                        f"sglang:context_len{{{_PR1853}}} 131072.0",
                        "# HELP sglang:prompt_tokens_total Number of prefill tokens processed.",
                        "# TYPE sglang:prompt_tokens_total counter",
                        f"sglang:prompt_tokens_total{{{_PR1853}}} 230794.0",
                    )
                ),
                ("kv_cache", {"kv_tokens": 570979}),
                ("scheduler_config", {"kind": "max-num-seqs", "value": 2231}),
            ),
            case(
                "sglang-0.5.23-two-scrapes",  # SGLang 0.5.23 names, constructed values
                "\n".join(
                    f'sglang:{name}{{engine_type="unified",model_name="Qwen/Qwen3-8B",tp_rank="{rank}"}} {value} {ts}'
                    for ts, tokens, length in ((1764590400000, 1000, 3.1), (1764590410000, 1600, 1.4))
                    for rank in (0, 1)
                    for name, value in (
                        ("num_running_reqs", 2.0),
                        ("num_queue_reqs", 1.0),
                        ("token_usage", 0.5),
                        ("gen_throughput", 61.0),
                        ("cache_hit_rate", 0.2),
                        ("generation_tokens_total", float(tokens)),
                        ("prompt_tokens_total", 10.0),
                        ("num_retracted_requests_total", 0.0),
                        ("spec_accept_length", length),
                        ("spec_accept_rate", round((length - 1) / 3, 3)),
                        ("spec_num_steps", 3.0),
                        ("spec_num_draft_tokens", 4.0),
                        ("page_size", 1.0),
                        ("time_to_first_token_seconds_sum", 1.0),
                        ("time_to_first_token_seconds_count", 4.0),
                        ("inter_token_latency_seconds_sum", tokens / 50),
                        ("inter_token_latency_seconds_count", float(tokens)),
                        ("request_time_per_output_token_seconds_sum", 1.0),
                        ("request_time_per_output_token_seconds_count", 50.0),
                        ("time_per_output_token_seconds_sum", 1.0),
                        ("e2e_request_latency_seconds_sum", 10.0),
                        ("e2e_request_latency_seconds_count", 2.0),
                    )
                ),
                ("scheduler_stats", {"running": 2, "waiting": 1, "generation_throughput": 61.0}),
                ("scheduler_stats", {"running": 2, "generation_throughput": 60.0, "preemptions": 0}),
                ("spec_decode_stats", {"mean_acceptance_length": 1.4, "num_speculative_tokens": 3}),
            ),
        ),
    ),
]
