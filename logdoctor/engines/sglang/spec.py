"""SGLang line types: speculative decoding setup and acceptance."""

from __future__ import annotations

import re
from typing import Any

from logdoctor.engines.sglang.common import Build, Rule, _apply, _ev, _grammar, _i, _perf
from logdoctor.events import (
    EventBase,
    PerfWarning,
    SchedulerConfig,
    SchedulerConfigKind,
    SpecDecodeStats,
)
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

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


GRAMMARS: list[Grammar] = [
    _grammar(
        "spec",
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
]
