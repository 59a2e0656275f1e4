"""vLLM line types: §9 CUDA graphs and torch.compile (catalogue/vllm.md)."""

from __future__ import annotations

import re
from typing import Literal

from logdoctor.engines.vllm.common import (
    _CAPTURE_BARS,
    Events,
    NoticeBuild,
    _base,
    _clock_seconds,
    _event,
    _f,
    _grammar,
    _msg,
    _names,
    _notices,
)
from logdoctor.events import CompileKind, CompileTime, CudaGraph, Offload, PerfWarning
from logdoctor.parse.envelope import LogLine
from logdoctor.parse.grammar import Grammar, ParseContext, case

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
# --enforce-eager as config/vllm.py words it: `Enforce eager set, overriding optimization level to -O0` (0.12 to
# 0.19; -O0 is no compilation and no CUDA graphs), `Enforce eager set, disabling torch.compile and CUDAGraphs` after.
_ENFORCE_EAGER_RE = re.compile(r"Enforce eager set, (?:disabling torch\.compile|overriding optimization level to -O0)")
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
# vLLM 0.33 (config/compilation.py): a model with neither a compiled submodule nor breakable graphs.
_MODE_PIECEWISE_RE = re.compile(
    r"Cudagraph mode (?:CUDAGraphMode\.)?(?P<from>\w+) requires piecewise capture\b.*?"
    r"Overriding to (?:CUDAGraphMode\.)?(?P<to>[A-Z_]+)"
)
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
    # the per-graph DEBUG line of the same load (backends.py CompilerManager.load): one line a piecewise graph
    r"|Directly load the \d+-th graph for (?:dynamic shape|shape \S+) from \w+ via handle"
)
# triton-ascend prints this each time it JIT-compiles a Triton kernel launched with num_warps / num_stages (which
# it manages itself): on vllm-ascend, kernels being built in the worker as it runs.
_TRITON_ASCEND_BUILD_RE = re.compile(r"Please DO NOT tune args \[[^\]]*\]!")
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
    m = _MODE_OVERRIDE_RE.search(text) or _MODE_SET_NONE_RE.search(text) or _MODE_PIECEWISE_RE.search(text)
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


# vLLM 0.33 (utils/jit_monitor.py): a kernel compiled or autotuned while serving, a latency spike each time.
_JIT_DURING_INFERENCE_RE = re.compile(
    r"(?<!\w)(?P<backend>\w+) (?P<event>[\w -]+?) during inference: (?P<fn>\S+?)[ .(]"
)
_JIT_PHRASE = " during inference: "
_JIT_REACH = 256  # characters of the kernel and its event before the phrase, and of the function after it
_JIT_FUNCTION_RE = re.compile(r"\S+?[ .(]")
_WORD_THEN_SPACE_RE = re.compile(r"\w ")
_EVENT_CHARS_RE = re.compile(r"[\w -]*")


def _jit_during_inference(text: str) -> bool:
    """What `_JIT_DURING_INFERENCE_RE.search` says, in time linear in the text: run over a long run of words, the regex
    reads from each word to the run's end. Read from each ` during inference: ` instead: a function follows it, and
    the run of event characters before it holds a word and a space with something after them (the backend's word,
    then the event)."""
    start, at = 0, text.find(_JIT_PHRASE)
    while at >= 0:
        after = at + len(_JIT_PHRASE)
        if _JIT_FUNCTION_RE.match(text, after, after + _JIT_REACH):
            before = text[max(start, at - _JIT_REACH) : at]
            event = _EVENT_CHARS_RE.match(before[::-1])
            if event is not None and _WORD_THEN_SPACE_RE.search(text, at - event.end(), at - 1):
                return True
        start, at = after, text.find(_JIT_PHRASE, after)
    return False


def parse_compile(line: LogLine, ctx: ParseContext) -> Events | None:
    text = line.message
    base = _base(line, ctx)
    if _jit_during_inference(text):
        return [PerfWarning(**base, topic="jit-during-inference", message=_msg(line))]
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
    if _TRITON_ASCEND_BUILD_RE.search(text):
        return [CompileTime(**base, kind="kernel_build", message=_msg(line))]
    if _COMPILE_CACHE_DISABLED_RE.search(text):
        return [CompileTime(**base, kind="cache_disabled", cache_hit=False, message=_msg(line))]
    if any(p.search(text) for p in _COMPILE_OFF_RES):
        events: Events = [CompileTime(**base, kind="compile_disabled", message=_msg(line))]
        if "CPU offload" in text:
            events.append(Offload(**base, kind="weights", message=_msg(line)))
        return events
    return None


# One-message notices of vLLM 0.33 (rendered from its wheel by the drift check, docs/drift.md): one row a
# message, first match wins; the line type's cases hold one line of each.
_NOTICES: tuple[tuple[re.Pattern[str], NoticeBuild], ...] = (
    (
        re.compile("Disabling CUDA Graphs since the MoonEP integration is currently eager-only"),
        _event(CudaGraph, kind="eager_mode"),
    ),
    (
        re.compile(
            "fuse_attn_quant is incompatible with piecewise cudagraph.*?cudagraph_mode will be set to (?P<mode_to>[A-Z_]+)"
        ),
        _event(CudaGraph, kind="mode_downgrade"),
    ),
    (re.compile("Using piecewise cudagraph with empty splitting_ops"), _event(CudaGraph, kind="mode_downgrade")),
    (
        re.compile("XPU Graph is not supported in the current PyTorch version, disabling cudagraph_mode"),
        _event(CudaGraph, kind="eager_mode"),
    ),
    (
        re.compile("MTP: captured \\w+ CUDA graphs for sizes"),
        _event(CudaGraph, kind="capture_finished", role="drafter"),
    ),
    (
        re.compile("Compiling model again due to a load failure from \\S+, reason:"),
        _event(CompileTime, kind="cache_load", cache_hit=False),
    ),
    (
        re.compile("Online quantization as part of model loading took (?P<seconds>[\\d.]+) seconds"),
        _event(CompileTime, kind="model_load"),
    ),
    (
        re.compile("FlashInfer's precompiled kernels are missing or do not match"),
        _event(PerfWarning, topic="jit-compilation"),
    ),
    (
        re.compile("GDN prefill is JIT-compiled; first run may take a while"),
        _event(PerfWarning, topic="jit-compilation"),
    ),
    (
        re.compile("VLLM_USE_MEGA_AOT_ARTIFACT is enabled but PyTorch version does not support 'aot'"),
        _event(CompileTime, kind="cache_load", cache_hit=False),
    ),
    (
        re.compile("enable_aot_compile is not available\\. AOT compile is disabled"),
        _event(PerfWarning, topic="aot-compile-unavailable"),
    ),
)


def parse_graphs_notices(line: LogLine, ctx: ParseContext) -> Events | None:
    return _notices(_NOTICES, line, ctx)


GRAMMARS: list[Grammar] = [
    _grammar(
        "capture_bar",
        ("Capturing CUDA graph", "CUDA graphs:"),
        parse_capture_bar,
        (
            case(
                "sample-1",
                "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|██████████| 67/67 [00:03<00:00, 18.59it/s]",
                ("cuda_graph", {}),
            ),
            case(
                "spec-dflash-capture-bar",
                "Capturing dflash CUDA graphs: 100%|██████████| 35/35 [00:04<00:00,  8.10it/s]",
                ("cuda_graph", {"kind": "capture_progress", "role": "drafter", "seconds": 4.0}),
            ),
            case(
                "capture-bar-tqdm-redraws",
                "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE):   0%|          | 0/67 [00:00<?, ?it/s]\r"
                "Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|██████████| 67/67 [00:03<00:00, 18.59it/s]",
                ("cuda_graph", {"kind": "capture_progress", "mode": "PIECEWISE", "seconds": 3.0, "role": "target"}),
            ),
            case(
                "capture-bar-decode-full-prefixed",
                "(EngineCore_DP0 pid=9) Capturing CUDA graphs (decode, FULL): 100%|██████████| 35/35 [00:02<00:00, 16.81it/s]",
                ("cuda_graph", {"kind": "capture_progress", "mode": "FULL", "seconds": 2.0}),
            ),
            case(
                "capture-bar-0.10-shapes",
                "Capturing CUDA graph shapes: 100%|██████████| 67/67 [00:25<00:00,  2.63it/s]",
                ("cuda_graph", {"kind": "capture_progress", "mode": None, "seconds": 25.0}),
            ),
            case(
                "capture-bar-mojibake",
                "Capturing CUDA graphs (decode, FULL): 100%|â–ˆâ–ˆâ–ˆ| 35/35 [00:02<00:00, 16.81it/s]",
                ("cuda_graph", {"kind": "capture_progress", "mode": "FULL"}),
            ),
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
            "requires piecewise capture",
        ),
        parse_cuda_graphs,
        (
            case(
                "sample-1",
                "(Worker_TP1 pid=148) INFO 05-14 00:04:16 [gpu_model_runner.py:6143] Estimated CUDA graph memory: 0.17 "
                "GiB total",
                ("cuda_graph", {}),
            ),
            case(
                "spec-dflash-capture-model",
                "(Worker_TP0 pid=147) INFO 07-20 10:00:00 [speculator.py:180] Capturing model for DFlash speculator...",
                ("cuda_graph", {"kind": "capture_started", "role": "drafter"}),
            ),
            case(
                "kv-cuda-graph-profiling-0.21",
                "(Worker_TP1 pid=148) INFO 05-14 00:04:16 [gpu_model_runner.py:6143] Estimated CUDA graph memory: 0.17 GiB "
                "total\n"
                "(Worker_TP0 pid=147) INFO 05-14 00:04:17 [gpu_worker.py:460] Available KV cache memory: 15.72 GiB\n"
                "(Worker_TP0 pid=147) INFO 05-14 00:04:17 [gpu_worker.py:475] CUDA graph memory profiling is enabled (default "
                "since v0.21.0). The current --gpu-memory-utilization=0.9200 is equivalent to --gpu-memory-utilization=0.9129 "
                "without CUDA graph memory profiling. To maintain the same effective KV cache size as before, increase "
                "--gpu-memory-utilization to 0.9271. To disable, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0.",
                ("cuda_graph", {"kind": "memory_profile", "memory_gib": 0.17}),
                ("kv_cache", {"available_memory_gib": 15.72}),
                ("cuda_graph", {"kind": "memory_profile", "memory_gib": None}),
            ),
            case(
                "capture-finished-0.8",
                "(VllmWorker rank=0 pid=2445155) INFO 05-10 16:00:15 [gpu_model_runner.py:1686] Graph capturing finished in 112 "
                "secs, took 0.95 GiB",
                ("cuda_graph", {"kind": "capture_finished", "seconds": 112.0, "memory_gib": 0.95, "role": "target"}),
            ),
            case(
                "capture-finished-0.21",
                "(Worker_TP0 pid=147) INFO 05-14 00:05:02 [gpu_model_runner.py:6398] Graph capturing finished in 19 secs, took "
                "1.07 GiB",
                ("cuda_graph", {"kind": "capture_finished", "seconds": 19.0, "memory_gib": 1.07}),
            ),
            case(
                "capture-finished-encoder",
                "(Worker_TP0 pid=147) INFO 11-02 10:00:00 [mm_encoder_model_runner.py:300] Encoder graph capturing finished in "
                "4 secs, took 0.21 GiB (12 graphs)",
                ("cuda_graph", {"kind": "capture_finished", "role": "encoder", "memory_gib": 0.21}),
            ),
            case(
                "capture-started-v0",
                "INFO 12-27 10:00:00 model_runner.py:1400] Capturing cudagraphs for decoding. This may lead to unexpected "
                "consequences if the model is not static. To run the model in eager mode, set 'enforce_eager=True' or use "
                "'--enforce-eager' in the CLI.",
                ("cuda_graph", {"kind": "capture_started"}),
            ),
            case(
                "eager-cudagraph-disabled",
                "(EngineCore pid=1762577) INFO 04-20 14:42:51 [vllm.py:1081] Cudagraph is disabled under eager mode",
                ("cuda_graph", {"kind": "eager_mode"}),
            ),
            case(
                "eager-enforce-eager-set",
                "(APIServer pid=1) WARNING 02-26 10:00:00 [vllm.py:900] Enforce eager set, disabling torch.compile and "
                "CUDAGraphs. This is equivalent to setting -cc.mode=none -cc.cudagraph_mode=none",
                ("cuda_graph", {"kind": "eager_mode", "mode_to": "NONE"}),
                ("compile_time", {"kind": "compile_disabled"}),
            ),
            case(
                "eager-enforce-eager-o0-0.12",
                "(APIServer pid=523647) WARNING 04-27 15:04:49 [vllm.py:601] Enforce eager set, overriding optimization "
                "level to -O0",
                ("cuda_graph", {"kind": "eager_mode", "mode_to": "NONE"}),
                ("compile_time", {"kind": "compile_disabled"}),
            ),
            case(
                "eager-dp-0.8",
                "INFO 03-20 10:00:00 [config.py:3500] Data Parallel: Forcing enforce eager to be True since DP is currently not "
                "supported with CUDA Graphs.",
                ("cuda_graph", {"kind": "eager_mode"}),
            ),
            case(
                "eager-deepep",
                "INFO 01-20 10:00:00 [config.py:500] DeepEP: Disabling CUDA Graphs since DeepEP high-throughput kernels are "
                "optimized for prefill and are incompatible with CUDA Graphs.",
                ("cuda_graph", {"kind": "eager_mode"}),
            ),
            case(
                "mode-downgrade-spec-truncated",
                "(Worker_TP0 pid=169) WARNING 06-25 05:45:32 [compilation.py:1407] CUDAGraphMode.FULL_AND_PIECEWISE is not "
                "supported with spec-decode for attention…",
                ("cuda_graph", {"kind": "mode_downgrade", "mode_from": "FULL_AND_PIECEWISE", "mode_to": None}),
            ),
            case(
                "mode-downgrade-spec-full",
                "(Worker_TP0 pid=169) WARNING 06-25 05:45:32 [compilation.py:1407] CUDAGraphMode.FULL_AND_PIECEWISE is not "
                "supported with spec-decode for attention backend FlashInferBackend (support: "
                "AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE); setting cudagraph_mode=PIECEWISE",
                ("cuda_graph", {"kind": "mode_downgrade", "mode_from": "FULL_AND_PIECEWISE", "mode_to": "PIECEWISE"}),
            ),
            case(
                "mode-downgrade-backend",
                "(Worker_TP0 pid=169) WARNING 10-05 10:00:00 [compilation.py:900] CUDAGraphMode.FULL is not supported with "
                "TRITON_ATTN backend (support: AttentionCGSupport.NEVER); setting cudagraph_mode=PIECEWISE because attention is "
                "compiled piecewise",
                ("cuda_graph", {"kind": "mode_downgrade", "mode_from": "FULL", "mode_to": "PIECEWISE"}),
            ),
            case(
                "mode-downgrade-compilation-mode",
                "(APIServer pid=1) INFO 12-05 10:00:00 [vllm.py:500] Cudagraph mode FULL_AND_PIECEWISE is not compatible with "
                "compilation mode NONE.Overriding to NONE.",
                ("cuda_graph", {"kind": "mode_downgrade", "mode_from": "FULL_AND_PIECEWISE", "mode_to": "NONE"}),
            ),
            case(
                "mode-downgrade-kv-connector",
                "(APIServer pid=1) WARNING 03-10 10:00:00 [vllm.py:600] KV connector LMCacheConnectorV1 requires PIECEWISE CUDA "
                "graph mode due to layerwise async operations that cannot be captured in CUDA graphs. Overriding cudagraph_mode "
                "from FULL_AND_PIECEWISE to PIECEWISE.",
                ("cuda_graph", {"kind": "mode_downgrade", "mode_from": "FULL_AND_PIECEWISE", "mode_to": "PIECEWISE"}),
            ),
            case(
                "mode-downgrade-encoder-decoder",
                "(APIServer pid=1) WARNING 03-10 10:00:00 [vllm.py:610] Encoder-decoder models do not support "
                "FULL_AND_PIECEWISE. Overriding cudagraph_mode to FULL_DECODE_ONLY.",
                (
                    "cuda_graph",
                    {"kind": "mode_downgrade", "mode_from": "FULL_AND_PIECEWISE", "mode_to": "FULL_DECODE_ONLY"},
                ),
            ),
            case(
                "capture-skipped",
                "(Worker_TP0 pid=7) WARNING 10-05 10:00:00 [gpu_model_runner.py:3000] Skipping CUDA graph capture. To turn on "
                "CUDA graph capture, ensure `cudagraph_mode` was not manually set to `NONE`",
                ("cuda_graph", {"kind": "capture_skipped"}),
            ),
            case(
                "capture-size-override",
                "(APIServer pid=1009) INFO 09-10 23:26:32 [config.py:273] Overriding max cuda graph capture size to 1024 for "
                "performance.",
                ("cuda_graph", {"kind": "capture_sizes", "max_batch_size": 1024}),
            ),
            case(
                "piecewise-override-0.33",
                "(EngineCore pid=7) WARNING 11-30 10:00:00 [compilation.py:1473] Cudagraph mode FULL_AND_PIECEWISE requires "
                "piecewise capture, but the loaded model provides neither a compiled submodule nor breakable CUDA graphs. "
                "Overriding to FULL_DECODE_ONLY.",
                (
                    "cuda_graph",
                    {"kind": "mode_downgrade", "mode_from": "FULL_AND_PIECEWISE", "mode_to": "FULL_DECODE_ONLY"},
                ),
            ),
        ),
    ),
    _grammar(
        "compile",
        (
            "Dynamo bytecode transform time",
            "Compiling a graph for",
            "Cache the graph",
            "Directly load the compiled graph",
            "-th graph for ",
            "Please DO NOT tune args",
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
            "during inference: ",
        ),
        parse_compile,
        (
            case(
                "sample-1",
                "(Worker_TP0 pid=118) INFO 05-04 01:03:11 [backends.py:1128] Dynamo bytecode transform time: 14.14 s",
                ("compile_time", {}),
            ),
            case(
                "sample-2",
                "(Worker_TP0 pid=118) INFO 05-04 01:03:57 [backends.py:391] Compiling a graph for compile range (1, 8192) "
                "takes 44.99 s",
                ("compile_time", {}),
            ),
            case(
                "sample-3",
                "(Worker_TP0 pid=118) INFO 05-04 01:04:19 [monitor.py:53] torch.compile took 82.29 s in total",
                ("compile_time", {}),
            ),
            case(
                "sample-4",
                "(Worker_TP0 pid=119) INFO 05-15 16:02:37 [backends.py:292] Directly load the compiled graph(s) for "
                "compile range (1, 8192) from the cache, took 5.958 s",
                ("compile_time", {}),
            ),
            case(
                "v1-0.9-per-graph-cache-load",
                "DEBUG 07-01 21:20:33 [backends.py:123] Directly load the 28-th graph for shape 1 from inductor via "
                "handle ('fhu67rrnvc35buqntqu3cckyijpmigkuhnw2f4czeby4womoyu74', '/root/.cache/vllm/torch_compile_cache/"
                "250015fb60/rank_0_0/inductor_cache/cd/ccdqxkqebrqnhlnyzlmblhaolao245amjndrrhp2akftnnmo6nki.py')",
                ("compile_time", {"kind": "cache_load", "cache_hit": True}),
                exact=True,
            ),
            case(
                "ascend-triton-kernel-build",
                "(Worker_TP0_EP0 pid=370) [WARNING] Please DO NOT tune args ['num_warps', 'num_stages']!",
                ("compile_time", {"kind": "kernel_build"}),
                exact=True,
            ),
            case(
                "sample-5",
                "INFO 01-30 03:19:13 monitor.py:31] torch.compile takes 54.73 s in total",
                ("compile_time", {}),
            ),
            case(
                "compile-cold-0.21",
                "(Worker_TP0 pid=118) INFO 05-04 01:03:11 [backends.py:1128] Dynamo bytecode transform time: 14.14 s\n"
                "(Worker_TP0 pid=118) INFO 05-04 01:03:16 [backends.py:376] Cache the graph of compile range (1, 8192) for "
                "later use\n"
                "(Worker_TP0 pid=118) INFO 05-04 01:03:57 [backends.py:391] Compiling a graph for compile range (1, 8192) takes "
                "44.99 s\n"
                "(EngineCore pid=109) INFO 05-04 01:03:58 [shm_broadcast.py:681] No available shared memory broadcast block "
                "found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work "
                "(e.g. compilation, weight/kv cache quantization).\n"
                "(Worker_TP0 pid=118) INFO 05-04 01:04:19 [monitor.py:53] torch.compile took 82.29 s in total\n"
                "(Worker_TP0 pid=118) INFO 05-04 01:05:36 [monitor.py:81] Initial profiling/warmup run took 76.71 s",
                ("compile_time", {"kind": "dynamo", "seconds": 14.14}),
                ("compile_time", {"kind": "cache_save", "cache_hit": False}),
                ("compile_time", {"kind": "graph_compile", "seconds": 44.99}),
                ("engine_failure", {"kind": "shm-broadcast-wait"}),
                ("compile_time", {"kind": "torch_compile", "seconds": 82.29}),
                ("compile_time", {"kind": "warmup", "seconds": 76.71}),
            ),
            case(
                "compile-warm-cache",
                "(Worker_TP0 pid=119) INFO 05-15 16:02:37 [backends.py:292] Directly load the compiled graph(s) for compile "
                "range (1, 8192) from the cache, took 5.958 s\n"
                "(Worker_TP0 pid=119) INFO 05-15 16:02:37 [monitor.py:53] torch.compile took 9.61 s in total",
                ("compile_time", {"kind": "cache_load", "cache_hit": True, "seconds": 5.958}),
                ("compile_time", {"kind": "torch_compile", "seconds": 9.61}),
            ),
            case(
                "compile-0.7.1",
                "INFO 01-30 03:19:07 backends.py:321] Compiling a graph for general shape takes 41.86 s\n"
                "INFO 01-30 03:19:13 monitor.py:31] torch.compile takes 54.73 s in total",
                ("compile_time", {"kind": "graph_compile", "seconds": 41.86}),
                ("compile_time", {"kind": "torch_compile", "seconds": 54.73}),
            ),
            case(
                "compile-docker-prefixed",
                "[2025-10-16T06:09:23Z] (EngineCore_DP0 pid=23579) INFO 10-15 23:09:23 [backends.py:274] Compiling a graph for "
                "dynamic shape takes 41.40 s",
                ("compile_time", {"kind": "graph_compile", "seconds": 41.4}),
            ),
            case(
                "compile-cache-dir-and-together",
                "(EngineCore_0 pid=2881) INFO 09-04 01:29:15 [backends.py:548] Using cache directory: "
                "/home/cdsw/.cache/vllm/torch_compile_cache/23ca404a2f/rank_0_0/backbone for vLLM's torch.compile\n"
                "(Worker_TP0 pid=118) INFO 05-04 01:05:36 [monitor.py:90] torch.compile and initial profiling/warmup run "
                "together took 158.00 s in total\n"
                "(Worker_TP0 pid=118) INFO 05-04 01:05:36 [backends.py:500] vLLM's torch.compile cache is disabled.",
                ("compile_time", {"kind": "cache_dir"}),
                ("compile_time", {"kind": "compile_and_warmup", "seconds": 158.0}),
                ("compile_time", {"kind": "cache_disabled", "cache_hit": False}),
            ),
            case(
                "jit-monitor-0.33",
                "(Worker_TP0 pid=9) WARNING 11-30 10:00:00 [jit_monitor.py:137] Triton JIT compilation during inference: "
                "_fwd_kernel (BLOCK_M=64). This causes a latency spike; consider extending warmup to cover this shape/config.",
                ("perf_warning", {"topic": "jit-during-inference"}),
            ),
        ),
    ),
    _grammar(
        "graphs_notices",
        (
            "Disabling CUDA Graphs since the MoonEP",
            "fuse_attn_quant is incompatible with piecewise",
            "Using piecewise cudagraph with empty splitting_ops",
            "XPU Graph is not supported in the current PyTorch",
            "captured centroids CUDA graphs for sizes",
            "Compiling model again due to a load failure",
            "Online quantization as part of model loading took",
            "FlashInfer's precompiled kernels are missing",
            "prefill is JIT-compiled; first run may take a while",
            "VLLM_USE_MEGA_AOT_ARTIFACT is enabled but PyTorch",
            "enable_aot_compile is not available. AOT compile is disabled",
        ),
        parse_graphs_notices,
        (
            case(
                "v0.33-disabling-cuda-graphs-since-the-moonep",
                "(APIServer pid=1) INFO 11-30 10:00:00 [vllm.py:2149] MoonEP: Disabling CUDA Graphs since the MoonEP integration is currently eager-only.",
                ("cuda_graph", {"kind": "eager_mode"}),
            ),
            case(
                "v0.33-fuse-attn-quant-is-incompatible-with-pie",
                "(APIServer pid=1) WARNING 11-30 10:00:00 [compilation.py:1265] fuse_attn_quant is incompatible with piecewise cudagraph when use_inductor_graph_partition is off. In this case, splitting_ops will be set to empty list, and cudagraph_mode will be set to FULL. Please ensure you are using attention backends that support cudagraph or set cudagraph_mode to NONE explicitly if encountering any problems.",
                ("cuda_graph", {"kind": "mode_downgrade", "mode_to": "FULL"}),
            ),
            case(
                "v0.33-using-piecewise-cudagraph-with-empty-spl",
                "(APIServer pid=1) WARNING 11-30 10:00:00 [compilation.py:1220] Using piecewise cudagraph with empty splitting_ops",
                ("cuda_graph", {"kind": "mode_downgrade"}),
            ),
            case(
                "v0.33-xpu-graph-is-not-supported-in-the-curren",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [xpu.py:387] XPU Graph is not supported in the current PyTorch version, disabling cudagraph_mode.",
                ("cuda_graph", {"kind": "eager_mode"}),
            ),
            case(
                "v0.33-captured-centroids-cuda-graphs-for-sizes",
                "(Worker_TP0 pid=226) INFO 11-30 10:00:00 [gemma4.py:145] Gemma4 MTP: captured centroids CUDA graphs for sizes [1, 2, 4, 8].",
                ("cuda_graph", {"kind": "capture_finished", "role": "drafter"}),
            ),
            case(
                "v0.33-compiling-model-again-due-to-a-load-fail",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [decorators.py:340] Compiling model again due to a load failure from /root/.cache/vllm/torch_aot_compile/abc/model, reason: version mismatch",
                ("compile_time", {"kind": "cache_load", "cache_hit": False}),
            ),
            case(
                "v0.33-online-quantization-as-part-of-model-loa",
                "(Worker_TP0 pid=226) INFO 11-30 10:00:00 [base_loader.py:164] Online quantization as part of model loading took 18.20 seconds",
                ("compile_time", {"kind": "model_load", "seconds": 18.2}),
            ),
            case(
                "v0.33-flashinfer-s-precompiled-kernels-are-mis",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [flashinfer.py:143] FlashInfer's precompiled kernels are missing or do not match flashinfer-python flashinfer_version (8). FlashInfer then downloads and compiles kernels at startup, which can take several minutes, or fails to import mismatched ones. Run `vllm download-kernels` in this Python environment to install them.",
                ("perf_warning", {"topic": "jit-compilation"}),
            ),
            case(
                "v0.33-prefill-is-jit-compiled-first-run-may-ta",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [qwen_gdn_linear_attn.py:307] FlashInfer GDN prefill is JIT-compiled; first run may take a while. Set --gdn-prefill-backend triton to skip JIT.",
                ("perf_warning", {"topic": "jit-compilation"}),
            ),
            case(
                "v0.33-vllm-use-mega-aot-artifact-is-enabled-bu",
                "(Worker_TP0 pid=226) ERROR 11-30 10:00:00 [compiler_interface.py:326] CRITICAL: VLLM_USE_MEGA_AOT_ARTIFACT is enabled but PyTorch version does not support 'aot' parameter in standalone_compile. This requires PyTorch 2.10.0+. Falling back to non-AOT mode.",
                ("compile_time", {"kind": "cache_load", "cache_hit": False}),
            ),
            case(
                "v0.33-enable-aot-compile-is-not-available-aot-",
                "(Worker_TP0 pid=226) WARNING 11-30 10:00:00 [wrapper.py:166] torch._dynamo.config.enable_aot_compile is not available. AOT compile is disabled and please upgrade PyTorch version to use AOT compile.",
                ("perf_warning", {"topic": "aot-compile-unavailable"}),
            ),
        ),
    ),
]
