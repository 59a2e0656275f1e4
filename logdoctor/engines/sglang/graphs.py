"""SGLang line types: CUDA graphs."""

from __future__ import annotations

import re
from typing import Any

from logdoctor.engines.sglang.common import Build, GraphKind, GraphRole, Rule, _apply, _ev, _grammar, _int_list, _perf
from logdoctor.engines.sglang.memory import _JOINED_LIMITS_RE, _limits
from logdoctor.events import (
    CudaGraph,
    EventBase,
)
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

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


GRAMMARS: list[Grammar] = [
    _grammar(
        "cuda_graph",
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
]
