"""vLLM line types: §9 CUDA graphs and torch.compile (catalogue/vllm.md)."""

from __future__ import annotations

import re
from typing import Literal

from logdoctor.engines.vllm.common import _CAPTURE_BARS, Events, _base, _clock_seconds, _f, _grammar, _msg, _names
from logdoctor.events import (
    CompileKind,
    CompileTime,
    CudaGraph,
    Offload,
    PerfWarning,
)
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext

_CAPTURE_BAR_RE = re.compile(
    r"Capturing (?:(?P<what>[\w-]+(?: [\w-]+)?) )?CUDA graph(?:s| shapes)"
    r"(?: \((?P<batch>[^,()]+), (?P<mode>[A-Z_]+)\))?:\s*(?P<pct>\d+)%"
    r"(?:.*?(?P<n>\d+)/(?P<total>\d+)(?: \[(?P<elapsed>[\d:]+)<)?)?"
)
_CAPTURE_STARTED_RE = re.compile(r"Capturing the model for CUDA graphs|Capturing cudagraphs for decoding")
_CAPTURE_DRAFTER_RE = re.compile(r"Capturing model for (?P<what>.*?) ?speculator\.\.\.")
_CAPTURE_FINISHED_RE = re.compile(
    r"(?P<encoder>Encoder g|G)raph capturing finished in (?P<s>[\d.]+) secs?(?:, took (?P<gib>[-\d.]+) GiB)?"
)
_CAPTURE_SKIPPED_RE = re.compile(r"Skipping (?P<what>encoder and decoder )?CUDA graph capture")
_EAGER_RES: tuple[re.Pattern[str], ...] = (
    re.compile(r"Cudagraph is disabled under eager mode"),
    re.compile(r"CUDA graph is not supported (?:on|for) .*? yet, fallback to (?:the )?eager mode"),
    re.compile(r"Forcing enforce[ _]eager (?:to be True|== True)"),
    re.compile(r"(?:Disabling CUDA Graphs|disabling cudagraphs) since (?:DP with )?DeepEP"),
    re.compile(r"To see benefits of async output processing, enable CUDA graph"),
)
_ENFORCE_EAGER_RE = re.compile(r"Enforce eager set, disabling torch\.compile")
_MODE_SPEC_RE = re.compile(
    r"CUDAGraphMode\.(?P<from>\w+) is not supported with (?P<rest>.*?)(?:; setting cudagraph_mode=(?P<to>[A-Z_]+)|;|…|$)"
)
_MODE_COMPILATION_RE = re.compile(
    r"Cudagraph mode (?:CUDAGraphMode\.)?(?P<from>\w+) is not compatible with compilation mode "
    r"(?:CompilationMode\.)?(?P<cm>\w+)\. ?Overriding to (?:CUDAGraphMode\.)?(?P<to>[A-Z_]+)"
)
_MODE_OVERRIDE_RE = re.compile(
    r"[Oo]verriding cudagraph_mode (?:from )?(?:(?:CUDAGraphMode\.)?(?P<from>[A-Z_]+) )?to (?:CUDAGraphMode\.)?(?P<to>[A-Z_]+)"
)
_MODE_SET_NONE_RE = re.compile(r"Setting cudagraph_mode to (?P<to>[A-Z_]+)")
_MODE_FROM_SUPPORT_RE = re.compile(r"do not support (?P<from>[A-Z_]+)\.")
_CAPTURE_SIZES_RES: tuple[re.Pattern[str], ...] = (
    re.compile(r"Truncating max_cudagraph_capture_size to (?P<n>\d+)"),
    re.compile(r"Overriding max cuda graph capture size to (?P<n>\d+)"),
    re.compile(
        r"cudagraph_capture_sizes specified in compilation_config .*? is overridden by config (?P<sizes>\[[^\]]*\])"
    ),
)
_CUDAGRAPH_MEMORY_RE = re.compile(
    r"Estimated CUDA graph memory: (?P<est>[\d.]+) GiB total"
    r"|CUDA graph pool memory: (?P<actual>[\d.]+) GiB \(actual\)"
    r"|CUDA graph memory profiling is (?:enabled|disabled)"
    r"|Profiling CUDA graph memory"
)
_CASCADE_EAGER_RE = re.compile(r"No piecewise cudagraph for executing cascade attention")

_DYNAMO_RE = re.compile(r"Dynamo bytecode transform time: (?P<s>[\d.]+) s")
_GRAPH_COMPILE_RE = re.compile(
    r"Compiling a graph for (?:general shape|dynamic shape|shape \S+|compile range \([^)]*\)) takes (?P<s>[\d.]+) s"
)
_GRAPH_CACHE_SAVE_RE = re.compile(
    r"Cache the graph (?:of shape \S+|for dynamic shape|of compile range \([^)]*\)) for later use"
)
_GRAPH_CACHE_LOAD_RE = re.compile(
    r"Directly load the compiled graph(?:\(s\))? for .*? from the cache(?:, took (?P<s>[\d.]+) s)?"
)
_AOT_RE = re.compile(r"(?P<load>Directly load AOT compilation from path)|saved AOT compiled function to")
_COMPILE_AND_WARMUP_RE = re.compile(r"torch\.compile and initial profiling/warmup run together took (?P<s>[\d.]+) s")
_TORCH_COMPILE_TOTAL_RE = re.compile(r"torch\.compile (?:takes|took) (?P<s>[\d.]+) s in total")
_WARMUP_RE = re.compile(r"Initial profiling/warmup run took (?P<s>[\d.]+) s")
_COMPILE_CACHE_DIR_RE = re.compile(r"Using cache directory: (?P<dir>\S+) for vLLM's torch\.compile")
_COMPILE_CACHE_DISABLED_RE = re.compile(r"vLLM's torch\.compile cache is disabled")
_COMPILE_OFF_RES: tuple[re.Pattern[str], ...] = (
    re.compile(r"`torch\.compile` is turned on, but the model \S+ does not support it"),
    re.compile(r"Inductor compilation was disabled by user settings"),
    re.compile(r"TORCH_COMPILE_DISABLE is set, disabling torch\.compile"),
    re.compile(r"CPU offload is not supported with `torch\.compile`"),
)


def parse_capture_bar(line: LogLine, ctx: ParseContext) -> Events | None:
    """tqdm bars (no vLLM header): report a bar when first seen and when it completes, not every redraw."""
    m = _CAPTURE_BAR_RE.search(line.message)
    if not m:
        return None
    what = (m.group("what") or "").lower()
    role: Literal["target", "drafter"] = (
        "drafter" if any(w in what for w in ("eagle", "dflash", "dspark", "draft", "mtp", "specul")) else "target"
    )
    desc = line.message[m.start() : m.start("pct")].rstrip(": ").strip()
    done = m.group("pct") == "100"
    seen: set[tuple[int | None, str, bool]] = ctx.state.setdefault(_CAPTURE_BARS, set())
    pid = line.process.pid if line.process else None
    key = (pid, desc, done)
    if key in seen or (not done and (pid, desc, True) in seen):
        return []
    seen.add(key)
    seconds = _clock_seconds(m.group("elapsed")) if done and m.group("elapsed") else None
    return [
        CudaGraph(
            **_base(line, ctx),
            kind="capture_progress",
            role=role,
            mode=m.group("mode"),
            seconds=seconds,
            message=desc + f": {m.group('pct')}%",
        )
    ]


def parse_cuda_graphs(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    m = _CAPTURE_FINISHED_RE.search(text)
    if m:
        return [
            CudaGraph(
                **base,
                kind="capture_finished",
                role="encoder" if m.group("encoder") == "Encoder g" else "target",
                seconds=float(m.group("s")),
                memory_gib=_f(m.group("gib")),
                message=_msg(line),
            )
        ]
    m = _CAPTURE_DRAFTER_RE.search(text)
    if m:
        return [CudaGraph(**base, kind="capture_started", role="drafter", message=_msg(line))]
    if _CAPTURE_STARTED_RE.search(text):
        return [CudaGraph(**base, kind="capture_started", role="target", message=_msg(line))]
    m = _CAPTURE_SKIPPED_RE.search(text)
    if m:
        return [CudaGraph(**base, kind="capture_skipped", role="target", message=_msg(line))]
    if _ENFORCE_EAGER_RE.search(text):
        return [
            CudaGraph(**base, kind="eager_mode", role="target", mode_to="NONE", message=_msg(line)),
            CompileTime(**base, kind="compile_disabled", message=_msg(line)),
        ]
    if any(p.search(text) for p in _EAGER_RES):
        return [CudaGraph(**base, kind="eager_mode", role="target", message=_msg(line))]
    m = _MODE_SPEC_RE.search(text) or _MODE_COMPILATION_RE.search(text)
    if m:
        return [
            CudaGraph(
                **base,
                kind="mode_downgrade",
                role="target",
                mode_from=m.group("from"),
                mode_to=m.group("to"),
                message=_msg(line),
            )
        ]
    m = _MODE_OVERRIDE_RE.search(text) or _MODE_SET_NONE_RE.search(text)
    if m:
        mode_from = m.groupdict().get("from")
        if mode_from is None:
            support = _MODE_FROM_SUPPORT_RE.search(text)
            mode_from = support.group("from") if support else None
        return [
            CudaGraph(
                **base,
                kind="mode_downgrade",
                role="target",
                mode_from=mode_from,
                mode_to=m.group("to"),
                message=_msg(line),
            )
        ]
    for pattern in _CAPTURE_SIZES_RES:
        m = pattern.search(text)
        if m:
            sizes = [int(s) for s in _names(m.groupdict().get("sizes")) if s.isdigit()] or None
            size = m.groupdict().get("n")
            return [
                CudaGraph(
                    **base,
                    kind="capture_sizes",
                    role="target",
                    max_batch_size=int(size) if size else (max(sizes) if sizes else None),
                    batch_sizes=sizes,
                    message=_msg(line),
                )
            ]
    m = _CUDAGRAPH_MEMORY_RE.search(text)
    if m:
        gib = _f(m.group("est") or m.group("actual"))
        return [CudaGraph(**base, kind="memory_profile", role="target", memory_gib=gib, message=_msg(line))]
    if _CASCADE_EAGER_RE.search(text):
        return [PerfWarning(**base, topic="cudagraph-cascade", message=_msg(line))]
    return None


def parse_compile(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    durations: tuple[tuple[CompileKind, re.Pattern[str]], ...] = (
        ("dynamo", _DYNAMO_RE),
        ("graph_compile", _GRAPH_COMPILE_RE),
        ("compile_and_warmup", _COMPILE_AND_WARMUP_RE),
        ("torch_compile", _TORCH_COMPILE_TOTAL_RE),
        ("warmup", _WARMUP_RE),
    )
    for kind, pattern in durations:
        m = pattern.search(text)
        if m:
            return [CompileTime(**base, kind=kind, seconds=float(m.group("s")), message=_msg(line))]
    if _GRAPH_CACHE_SAVE_RE.search(text):
        # Compiled now and saved: the compile cache missed.
        return [CompileTime(**base, kind="cache_save", cache_hit=False, message=_msg(line))]
    m = _GRAPH_CACHE_LOAD_RE.search(text)
    if m:
        return [CompileTime(**base, kind="cache_load", cache_hit=True, seconds=_f(m.group("s")), message=_msg(line))]
    m = _AOT_RE.search(text)
    if m:
        hit = m.group("load") is not None
        return [CompileTime(**base, kind="cache_load" if hit else "cache_save", cache_hit=hit, message=_msg(line))]
    if _COMPILE_CACHE_DIR_RE.search(text):
        return [CompileTime(**base, kind="cache_dir", message=_msg(line))]
    if _COMPILE_CACHE_DISABLED_RE.search(text):
        return [CompileTime(**base, kind="cache_disabled", cache_hit=False, message=_msg(line))]
    if any(p.search(text) for p in _COMPILE_OFF_RES):
        events: Events = [CompileTime(**base, kind="compile_disabled", message=_msg(line))]
        if "CPU offload" in text:
            events.append(Offload(**base, kind="weights", message=_msg(line)))
        return events
    return None


GRAMMARS: list[Grammar] = [
    _grammar(
        "capture_bar",
        ("Capturing CUDA graph", "CUDA graphs:"),
        parse_capture_bar,
        (
            "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|██████████| 67/67 [00:03<00:00, 18.59it/s]",
            "(EngineCore_DP0 pid=9) Capturing CUDA graphs (decode, FULL): 100%|██████████| 35/35 [00:02<00:00, "
            "16.81it/s]",
        ),
    ),
    _grammar(
        "cuda_graphs",
        (
            "raph capturing finished in",
            "Capturing model for",
            "Capturing the model for CUDA graphs",
            "Capturing cudagraphs for decoding",
            "CUDA graph capture",
            "Cudagraph is disabled under eager mode",
            "Enforce eager set",
            "fallback to the eager mode",
            "fallback to eager mode",
            "Forcing enforce eager",
            "Forcing enforce_eager",
            "Disabling CUDA Graphs since",
            "disabling cudagraphs since",
            "enable CUDA graph. Since",
            "CUDAGraphMode.",
            "is not compatible with compilation mode",
            "Overriding cudagraph_mode",
            "Setting cudagraph_mode to",
            "max_cudagraph_capture_size to",
            "max cuda graph capture size",
            "is overridden by config",
            "CUDA graph memory",
            "CUDA graph pool memory",
            "cascade attention. Will fall back",
        ),
        parse_cuda_graphs,
        (
            "(VllmWorker rank=0 pid=2445155) INFO 05-10 16:00:15 [gpu_model_runner.py:1686] Graph capturing finished "
            "in 112 secs, took 0.95 GiB",
            "(EngineCore pid=1762577) INFO 04-20 14:42:51 [vllm.py:1081] Cudagraph is disabled under eager mode",
            "(Worker_TP0 pid=169) WARNING 06-25 05:45:32 [compilation.py:1407] CUDAGraphMode.FULL_AND_PIECEWISE is "
            "not supported with spec-decode for attention…",
            "(Worker_TP1 pid=148) INFO 05-14 00:04:16 [gpu_model_runner.py:6143] Estimated CUDA graph memory: 0.17 "
            "GiB total",
        ),
    ),
    _grammar(
        "compile",
        (
            "Dynamo bytecode transform time",
            "Compiling a graph for",
            "Cache the graph",
            "Directly load the compiled graph",
            "AOT compilation from path",
            "saved AOT compiled function",
            "torch.compile takes",
            "torch.compile took",
            "torch.compile and initial profiling",
            "Initial profiling/warmup run took",
            "Using cache directory:",
            "torch.compile cache is disabled",
            "`torch.compile` is turned on",
            "Inductor compilation was disabled",
            "TORCH_COMPILE_DISABLE is set",
            "CPU offload is not supported with `torch.compile`",
        ),
        parse_compile,
        (
            "(Worker_TP0 pid=118) INFO 05-04 01:03:11 [backends.py:1128] Dynamo bytecode transform time: 14.14 s",
            "(Worker_TP0 pid=118) INFO 05-04 01:03:57 [backends.py:391] Compiling a graph for compile range (1, 8192) "
            "takes 44.99 s",
            "(Worker_TP0 pid=118) INFO 05-04 01:04:19 [monitor.py:53] torch.compile took 82.29 s in total",
            "(Worker_TP0 pid=119) INFO 05-15 16:02:37 [backends.py:292] Directly load the compiled graph(s) for "
            "compile range (1, 8192) from the cache, took 5.958 s",
            "INFO 01-30 03:19:13 monitor.py:31] torch.compile takes 54.73 s in total",
        ),
    ),
]
