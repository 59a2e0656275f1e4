"""vLLM line types: §10 scheduling: chunked prefill, batch limits, async scheduling, prefix caching (catalogue/vllm.md)."""

from __future__ import annotations

import re

from logdoctor.engines.vllm.common import Events, NoticeBuild, _base, _event, _grammar, _msg, _notices
from logdoctor.events import PerfWarning, SchedulerConfig, SchedulerConfigKind
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

_CHUNKED_PREFILL_RE = re.compile(r"Chunked prefill is enabled with max_num_batched_tokens=(?P<n>\d+)")
_CHUNKED_PREFILL_32K_RE = re.compile(r"Chunked prefill is enabled by default for models with max_model_len > 32K")
_BY_DEFAULT_RE = re.compile(r"\(?(?P<how>Enabling|Disabling)\)? (?P<what>chunked prefill|prefix caching) by default")
_BATCH_LIMIT_RE = re.compile(
    r"(?:Setting|Defaulting) (?P<what>max_num_batched_tokens|max_num_seqs) to (?P<n>\d+) for \S+ usage context"
)
_BATCHED_EXCEEDS_RE = re.compile(r"max_num_batched_tokens \((?P<n>\d+)\) exceeds max_num_seqs \* max_model_len")
_ASYNC_STATE_RE = re.compile(r"Asynchronous scheduling is (?P<state>enabled|disabled)")
_ASYNC_OFF_RE = re.compile(
    r"Async scheduling (?:is not yet supported|will be disabled|not supported|is not compatible|is disabled)"
)
_ASYNC_ON_RE = re.compile(
    r"(?:Using|Defaulting to) mp-based distributed executor backend for async scheduling"
    r"|Disabling NCCL for DP synchronization when using async scheduling"
)
_CUSTOM_SCHEDULER_RE = re.compile(r"degraded performance due to async scheduling being disabled")
# (regex, {kind: enabled}): lines that switch chunked prefill / prefix caching.
_SCHEDULER_SWITCHES: tuple[tuple[re.Pattern[str], dict[SchedulerConfigKind, bool]], ...] = (
    (re.compile(r"Automatic prefix caching is enabled"), {"prefix-caching": True}),
    (re.compile(r"Disabling chunked prefill for model without KVCache"), {"chunked-prefill": False}),
    (re.compile(r"Disabling chunked prefill: model has non-causal attention"), {"chunked-prefill": False}),
    (re.compile(r"Disabling prefix caching: model has non-causal attention"), {"prefix-caching": False}),
    (
        re.compile(r"do not support chunked prefill nor prefix caching; disabling both"),
        {"chunked-prefill": False, "prefix-caching": False},
    ),
    (
        re.compile(r"forcing chunked prefill and prefix caching to be disabled"),
        {"chunked-prefill": False, "prefix-caching": False},
    ),
    (re.compile(r"Prefix caching is not supported for .*?; disabling it"), {"prefix-caching": False}),
    (re.compile(r"KV cache events are on, but prefix caching is not enabled"), {"prefix-caching": False}),
    (re.compile(r"Prefix caching has been disabled"), {"prefix-caching": False}),
    (re.compile(r"Disabling prefix caching for \S+ with batch invariance"), {"prefix-caching": False}),
)
_MODEL_SUPPORT_RE = re.compile(
    r"This model does not officially support (?:disabling )?(?:chunked prefill|prefix caching)"
)


def parse_scheduling(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _CHUNKED_PREFILL_RE.search(text)
    if m:
        return [
            SchedulerConfig(**base, kind="chunked-prefill", enabled=True, value=int(m.group("n")), message=_msg(line))
        ]
    if _CHUNKED_PREFILL_32K_RE.search(text):
        return [SchedulerConfig(**base, kind="chunked-prefill", enabled=True, message=_msg(line))]
    m = _BY_DEFAULT_RE.search(text)
    if m:
        kind: SchedulerConfigKind = "chunked-prefill" if m.group("what") == "chunked prefill" else "prefix-caching"
        return [SchedulerConfig(**base, kind=kind, enabled=m.group("how") == "Enabling", message=_msg(line))]
    m = _BATCH_LIMIT_RE.search(text) or _BATCHED_EXCEEDS_RE.search(text)
    if m:
        what = m.groupdict().get("what") or "max_num_batched_tokens"
        limit: SchedulerConfigKind = "max-num-seqs" if what == "max_num_seqs" else "max-num-batched-tokens"
        return [SchedulerConfig(**base, kind=limit, value=int(m.group("n")), message=_msg(line))]
    m = _ASYNC_STATE_RE.search(text)
    if m:
        return [
            SchedulerConfig(**base, kind="async-scheduling", enabled=m.group("state") == "enabled", message=_msg(line))
        ]
    if _ASYNC_OFF_RE.search(text):
        return [SchedulerConfig(**base, kind="async-scheduling", enabled=False, message=_msg(line))]
    if _ASYNC_ON_RE.search(text):
        return [SchedulerConfig(**base, kind="async-scheduling", enabled=True, message=_msg(line))]
    if _CUSTOM_SCHEDULER_RE.search(text):
        return [PerfWarning(**base, topic="async-scheduling", message=_msg(line))]
    for pattern, switches in _SCHEDULER_SWITCHES:
        if pattern.search(text):
            return [
                SchedulerConfig(**base, kind=kind, enabled=enabled, message=_msg(line))
                for kind, enabled in switches.items()
            ]
    if _MODEL_SUPPORT_RE.search(text):
        return [PerfWarning(**base, topic="model-support", message=_msg(line))]
    return None


# One-message notices of vLLM 0.33 (rendered from its wheel by the drift check, docs/drift.md): one row a
# message, first match wins; the line type's cases hold one line of each.
_NOTICES: tuple[tuple[re.Pattern[str], NoticeBuild], ...] = (
    (
        re.compile(
            "draft pass needs \\d+ query tokens per request within max_num_batched_tokens=\\d+\\. Overriding max_num_active_seqs from \\d+ to (?P<value>\\d+)"
        ),
        _event(SchedulerConfig, kind="max-num-seqs"),
    ),
    (
        re.compile("Disabling prefix caching: this instance runs the multi-modal encoder only"),
        _event(SchedulerConfig, kind="prefix-caching", enabled=False),
    ),
    (
        re.compile("Chunked prefill is not supported for ?\\S+ CPUs; disabling it"),
        _event(SchedulerConfig, kind="chunked-prefill", enabled=False),
    ),
    (
        re.compile("Raising max_num_batched_tokens from \\d+ to (?P<value>\\d+) to accommodate"),
        _event(SchedulerConfig, kind="max-num-batched-tokens"),
    ),
    (
        re.compile(
            "Disabling fine-grained prefix-cache hits because these KV cache managers require block-aligned lookups"
        ),
        _event(SchedulerConfig, kind="prefix-caching"),
    ),
    (
        re.compile(
            "Detected DP deployment with no --enable-expert-parallel\\. Falling back to AllGather\\+ReduceScatter"
        ),
        _event(PerfWarning, topic="moe-parallel"),
    ),
    (
        re.compile("Prefill cadence: applying prefill_schedule_interval=(?P<value>\\d+)"),
        _event(SchedulerConfig, kind="prefill-interval"),
    ),
)


def parse_scheduling_notices(line: LogLine, ctx: ParseContext) -> Events | None:
    return _notices(_NOTICES, line, ctx)


GRAMMARS: list[Grammar] = [
    _grammar(
        "scheduling",
        (
            "Chunked prefill is enabled",
            "chunked prefill by default",
            "prefix caching by default",
            "usage context",
            "exceeds max_num_seqs * max_model_len",
            "Asynchronous scheduling is",
            "Async scheduling ",
            "for async scheduling",
            "when using async scheduling",
            "async scheduling being disabled",
            "Automatic prefix caching is enabled",
            "Disabling chunked prefill",
            "Disabling prefix caching",
            "nor prefix caching",
            "forcing chunked prefill and prefix caching",
            "Prefix caching is not supported for",
            "but prefix caching is not enabled",
            "Prefix caching has been disabled",
            "does not officially support",
        ),
        parse_scheduling,
        (
            case(
                "sample-1",
                "INFO 07-28 09:35:08 [scheduler.py:242] Chunked prefill is enabled with max_num_batched_tokens=2048.",
                ("scheduler_config", {}),
            ),
            case(
                "sample-2",
                "INFO 07-28 09:35:08 [vllm.py:1118] Asynchronous scheduling is enabled.",
                ("scheduler_config", {}),
            ),
            case(
                "chunked-prefill-and-async-0.26",
                "INFO 07-28 09:35:08 [scheduler.py:242] Chunked prefill is enabled with max_num_batched_tokens=2048.\n"
                "INFO 07-28 09:35:08 [vllm.py:1118] Asynchronous scheduling is enabled.",
                ("scheduler_config", {"kind": "chunked-prefill", "enabled": True, "value": 2048}),
                ("scheduler_config", {"kind": "async-scheduling", "enabled": True}),
            ),
            case(
                "async-disabled",
                "(APIServer pid=1) INFO 02-01 10:00:00 [vllm.py:1118] Asynchronous scheduling is disabled.",
                ("scheduler_config", {"kind": "async-scheduling", "enabled": False}),
            ),
            case(
                "async-disabled-ngram",
                "(APIServer pid=1) WARNING 02-01 10:00:00 [vllm.py:700] Async scheduling not supported with ngram-based "
                "speculative decoding and will be disabled.",
                ("scheduler_config", {"kind": "async-scheduling", "enabled": False}),
            ),
            case(
                "async-disabled-executor",
                "(APIServer pid=1) WARNING 02-01 10:00:00 [vllm.py:710] Async scheduling will be disabled because it is not "
                "supported with the `ray` distributed executor backend (only `mp`, `uni`, and `external_launcher` are "
                "supported).",
                ("scheduler_config", {"kind": "async-scheduling", "enabled": False}),
            ),
            case(
                "async-disabled-spec-0.11",
                "(APIServer pid=1) WARNING 11-20 10:00:00 [vllm.py:710] Async scheduling is not yet supported with speculative "
                "decoding  or pipeline_parallel_size > 1 and will be disabled.",
                ("scheduler_config", {"kind": "async-scheduling", "enabled": False}),
            ),
            case(
                "chunked-prefill-non-causal",
                "(EngineCore pid=7) INFO 07-20 10:00:00 [core.py:150] Disabling chunked prefill: model has non-causal attention "
                "layers.",
                ("scheduler_config", {"kind": "chunked-prefill", "enabled": False}),
            ),
            case(
                "encoder-decoder-disables-both",
                "(APIServer pid=1) INFO 11-20 10:00:00 [scheduler.py:200] Encoder-decoder models do not support chunked prefill "
                "nor prefix caching; disabling both.",
                ("scheduler_config", {"kind": "chunked-prefill", "enabled": False}),
                ("scheduler_config", {"kind": "prefix-caching", "enabled": False}),
            ),
            case(
                "max-num-seqs-usage-context",
                "WARNING 03-20 10:00:00 [arg_utils.py:1500] Setting max_num_seqs to 256 for OPENAI_API_SERVER usage context.",
                ("scheduler_config", {"kind": "max-num-seqs", "value": 256}),
            ),
            case(
                "chunked-prefill-by-default",
                "INFO 07-08 10:00:00 [arg_utils.py:1600] (Enabling) chunked prefill by default\n"
                "INFO 07-08 10:00:00 [arg_utils.py:1610] (Disabling) prefix caching by default",
                ("scheduler_config", {"kind": "chunked-prefill", "enabled": True}),
                ("scheduler_config", {"kind": "prefix-caching", "enabled": False}),
            ),
        ),
    ),
    _grammar(
        "scheduling_notices",
        (
            "draft pass needs",
            "this instance runs the multi-modal encoder only",
            "Chunked prefill is not supported for",
            "Raising max_num_batched_tokens from",
            "Disabling fine-grained prefix-cache hits",
            "Detected DP deployment with no --enable-expert-parallel",
            "Prefill cadence: applying prefill_schedule_interval=",
        ),
        parse_scheduling_notices,
        (
            case(
                "v0.33-draft-pass-needs",
                "(APIServer pid=1) WARNING 11-30 10:00:00 [vllm.py:2386] The eagle3 draft pass needs 4 query tokens per request within max_num_batched_tokens=512. Overriding max_num_active_seqs from 256 to 128.",
                ("scheduler_config", {"kind": "max-num-seqs", "value": 128}),
            ),
            case(
                "v0.33-this-instance-runs-the-multi-modal-encod",
                "(APIServer pid=1) INFO 11-30 10:00:00 [vllm.py:1530] Disabling prefix caching: this instance runs the multi-modal encoder only.",
                ("scheduler_config", {"kind": "prefix-caching", "enabled": False}),
            ),
            case(
                "v0.33-chunked-prefill-is-not-supported-for",
                "(APIServer pid=1) INFO 11-30 10:00:00 [arg_utils.py:3098] Chunked prefill is not supported forRISC-V CPUs; disabling it for V1 backend.",
                ("scheduler_config", {"kind": "chunked-prefill", "enabled": False}),
            ),
            case(
                "v0.33-raising-max-num-batched-tokens-from",
                "(APIServer pid=1) INFO 11-30 10:00:00 [arg_utils.py:3208] Raising max_num_batched_tokens from 8192 to 16384 to accommodate 'image' input for prefix-LM model model_config_model.",
                ("scheduler_config", {"kind": "max-num-batched-tokens", "value": 16384}),
            ),
            case(
                "v0.33-disabling-fine-grained-prefix-cache-hits",
                "(EngineCore pid=180) WARNING 11-30 10:00:00 [kv_cache_utils.py:795] Disabling fine-grained prefix-cache hits because these KV cache managers require block-aligned lookups: MambaManager.",
                ("scheduler_config", {"kind": "prefix-caching"}),
            ),
            case(
                "v0.33-detected-dp-deployment-with-no-enable-ex",
                "(Worker_TP0 pid=226) INFO 11-30 10:00:00 [all2all_utils.py:219] Detected DP deployment with no --enable-expert-parallel. Falling back to AllGather+ReduceScatter dispatch/combine.",
                ("perf_warning", {"topic": "moe-parallel"}),
            ),
            case(
                "v0.33-prefill-cadence-applying-prefill-schedul",
                "(EngineCore pid=180) INFO 11-30 10:00:00 [scheduler.py:412] Prefill cadence: applying prefill_schedule_interval=4 locally (this engine is not DP-coordinated); prefill is held until 4 executed steps have passed since the last prefill-carrying step.",
                ("scheduler_config", {"kind": "prefill-interval", "value": 4}),
            ),
        ),
    ),
]
