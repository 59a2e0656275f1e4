"""SGLang line types: custom all-reduce and P2P."""

from __future__ import annotations

import re
from typing import Any

from logdoctor.engines.sglang.common import Build, Rule, _apply, _ev, _grammar, _perf
from logdoctor.events import (
    AllReduceReason,
    CustomAllReduce,
    EventBase,
    NcclEnv,
    P2PCheck,
    PerfWarning,
)
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

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


GRAMMARS: list[Grammar] = [
    _grammar(
        "allreduce",
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
]
