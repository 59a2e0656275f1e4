"""The typed events every stage shares: what one (or a few) log lines mean.

A parser turns `(Worker_TP0 pid=118) INFO 05-04 01:04:19 [monitor.py:53] torch.compile took 82.29 s in total`
into `CompileTime(kind="torch_compile", seconds=82.29, ...)`. Events are frozen records (`Record`, below) with a
`type` discriminator, so `--format jsonl` and golden files are `model_dump(mode="json")` of them.

Units are normalised here, once: rates are fractions 0..1 (never percent), memory is GiB, times are
seconds, throughput is tokens per second. `mean_acceptance_length` always counts the bonus token.

This module imports nothing of logdoctor's own but the records (logdoctor.records) its events are made of.
"""

from __future__ import annotations

from typing import Any, Literal

from logdoctor.records import Record, field

# The name of a registered engine or input kind (logdoctor.registry), or "unknown".
Engine = str

# --- vocabularies ------------------------------------------------------------------------------
# Each lists exactly the values the grammars (logdoctor/engines/**, logdoctor/inputs/**) emit, so mypy
# rejects a consumer that tests for a value nothing produces. A grammar that adds a value adds it here.

# "sglang": accept rate before 0.5.11 (length / draft slots); "sglang-per-draft": 0.5.11+ (accepted / drafted)
# "metrics": read from a Prometheus scrape (logdoctor/inputs/metrics), either engine; rates are accepted / drafted
SpecDecodeFormat = Literal[
    "vllm-v1-0.11", "vllm-v1-0.9", "vllm-v1-0.8.5", "vllm-v1-0.8.3", "vllm-v0", "sglang", "sglang-per-draft", "metrics"
]
StatsFormat = Literal[
    "vllm-v0",
    "vllm-v1",
    "vllm-v0-prefix-cache",
    "vllm-iteration",
    "vllm-mfu",
    "sglang-decode",
    "sglang-prefill",
    "metrics",
]
AllReduceReason = Literal["no-p2p", "pcie-more-than-two", "world-size", "spans-nodes", "library", "user"]
NcclInfoKind = Literal[
    "network",
    "p2p-disabled",
    "comm-init",
    "channels",
    "nvls",
    "connected",
    "p2p-type",
    "warn",
    "distributed-init",
    "rank-assignment",
    "library",
    "library-load-failed",
    "test-start",
    "test-done",
    "test-row",
    "test-sizes",
    "test-rank",
    "allreduce-backend",
    "all2all",
]
HybridKind = Literal[
    "block-size-alignment",
    "mamba-page-padding",
    "mamba-cache-mode",
    "prefix-caching",
    "padding-layers",
    "spec-decode",
    "cudagraph-cap",
    "mamba-pool",
    "hybrid-detected",
    "gdn-kernel",
    "gdn-kernel-fallback",
    "linear-attention-backend",
    "mamba-cache-dtype",
    "mamba-ssu-kernel",
]
CompileKind = Literal[
    "torch_compile",
    "dynamo",
    "graph_compile",
    "compile_and_warmup",
    "warmup",
    "cache_load",
    "cache_save",
    "cache_dir",
    "cache_disabled",
    "compile_disabled",
    "kernel_build",  # a kernel JIT-compiled (and tuned) as the process runs, not timed
    "compilation",
    "init_engine",
    "memory_profiling",
    "weights_load",
    "draft_weights_load",
    "model_load",
    "distributed_init",
    "server_ready",
]
FailureKind = Literal[
    "engine-dead",
    "startup-failed",
    "cuda-oom",
    "cuda-error",
    "nccl-timeout",
    "nccl-error",
    "worker-died",
    "shm-broadcast-wait",
    "rpc-timeout",
    "watchdog",
    "stalled",  # the engine's own stats say no iteration ran in an interval while requests were running
    "exception",
    "kv-cache-insufficient",
    "gpu-memory-insufficient",
    "memory-leak",
    "kv-transfer",
    "wrong-results",  # a collective test's check found values out of bounds (nccl-tests' `#wrong`)
    "reported-hang",  # the paste's prose says the run hangs (logdoctor/parse/symptoms.py): the reporter's words
    "request-error",  # an exception the serving API server answered as one request's error and served on
    "shutdown",  # a stop began (SIGTERM, `Shutting down`, `shutdown triggered`): not a failure, the marker after
    # which failure lines are teardown (facts: failure.shutdown_only)
]
# Where the run was when a failure was read: before the engine served, while it served, or once a stop began (the
# teardown of a stopped server, not a failure of it).
FailurePhase = Literal["startup", "serving", "shutdown"]
SchedulerConfigKind = Literal[
    "chunked-prefill",
    "async-scheduling",
    "spec-token-budget",
    "max-num-seqs",
    "prefix-caching",
    "max-num-batched-tokens",
    "mixed-chunk",
    "prefill-interval",
]
OffloadKind = Literal["weights", "kv", "swap", "experts"]  # experts: MoE experts computed on the CPU
# "container": the SSH collector records `container: lxc (...)`, and facts reads HostInfo(kind="container")
# into host.container, but no host grammar parses those lines yet.
HostInfoKind = Literal["driver", "hypervisor", "container", "version", "package", "env", "cpu"]
WarningTopic = Literal[
    "async-scheduling",
    "attention-backend",
    "cudagraph-cascade",
    "env-deprecated",
    "env-unknown",
    "kv-cache-request-failed",
    "model-support",
    "spec-drafter-weights",
    "spec-synthetic-rejection",
    "stats-disabled",
    "tp-spans-nodes",
    "transformers-backend",
    "v0-fallback",
    "spec-config",
    "allreduce-fusion",
    "cpu-threads",
    "env-override",
    "flashinfer-allreduce",
    "fp8-block-config",
    "generation-config",
    "hybrid-kv-cache-manager",
    "int8-block-config",
    "kernel-warmup",
    "mamba-ssu-config",
    "max-model-len",
    "memory-imbalance",
    "model-runner",
    "moe-config",
    "mscclpp",
    "nccl-cumem",
    "nccl-symm-mem",
    "pp-partition",
    "prefill-cuda-graph",
    "sparse-mla",
    "spec-decode",
    "spec-drafter",
    "spec-mtp-multistep",
    "spec-scorer-batch-expansion",
    "spec-scorer-mqa",
    "symm-mem",
    "tokenizer",
    "trace-function",
    "jit-during-inference",
    "kv-transfer",
    "no-nvlink",
    "gemm-allreduce-fusion",
    "aot-compile-unavailable",
    "jit-compilation",
    "memory-profiling",
    "fp8-kv-scale",
    "fp8-kv",
    "moe-parallel",
    "mixed-gpus",
    "pin-memory",
]


class ProcessInfo(Record):
    """Who printed the line: `(Worker_TP1 pid=17705)`, `[2025-05-09 11:14:36 DP0 TP1]`, NCCL `host:pid:tid [dev]`."""

    role: str  # APIServer, EngineCore, Worker, RayWorker, Scheduler (SGLang TP process), NCCL, ...
    name: str | None = None  # the raw name as printed: `Worker_TP0_EP0`, `VllmWorker rank=0`
    pid: int | None = None
    host: str | None = None
    tp_rank: int | None = None
    pp_rank: int | None = None
    dp_rank: int | None = None
    ep_rank: int | None = None
    device: int | None = None  # NCCL's `[dev]`

    def label(self) -> str:
        parts = [self.role]
        for prefix, value in (("DP", self.dp_rank), ("PP", self.pp_rank), ("TP", self.tp_rank)):
            if value is not None:
                parts.append(f"{prefix}{value}")
        return " ".join(parts)


class EventBase(Record):
    """Where an event came from. `line` is 1-based in the source; `end_line` is set when it spans lines."""

    type: str  # the discriminator, fixed by each subclass
    source: str
    line: int
    end_line: int | None = None
    timestamp: str | None = None  # as printed, normalised: `MM-DD HH:MM:SS` (vLLM) or `YYYY-MM-DD HH:MM:SS`
    level: str | None = None  # INFO, WARNING, ERROR, ...
    process: ProcessInfo | None = None
    engine: Engine = "unknown"


# --- identity and configuration ---------------------------------------------------------------


class EngineVersion(EventBase):
    """`vLLM API server version 0.7.3`, the 0.15+ logo, `Initializing a V1 LLM engine (v0.20.1)`, SGLang/NCCL versions."""

    type: Literal["engine_version"] = "engine_version"
    version: str | None = None
    engine_generation: str | None = None  # "V0" / "V1" for vLLM
    model: str | None = None
    origin: str  # "version line", "logo", "engine init", "nccl version", "inferred from header shape"


class StartupConfig(EventBase):
    """A configuration dump parsed into a dict: vLLM `non-default args: {...}`, the engine-init
    `key=value` dump, `args: Namespace(...)`, SGLang `server_args=ServerArgs(...)`, or a command line.

    Values are Python values; enum reprs become `{"__enum__": "CUDAGraphMode.FULL", "value": 2}`, constructor
    calls `{"__class__": "SpeculativeConfig", ...fields}`. `truncated` is set when the dump was cut off
    mid-value (only the keys before the cut are present)."""

    type: Literal["startup_config"] = "startup_config"
    origin: Literal[
        "non-default args", "engine init", "namespace", "server_args", "command line", "env", "model config"
    ]
    config: dict[str, Any]
    truncated: bool = False


class ModelInfo(EventBase):
    """Model architecture, max model len, dtype and similar identity lines."""

    type: Literal["model_info"] = "model_info"
    model: str | None = None
    architecture: str | None = None
    max_model_len: int | None = None
    dtype: str | None = None
    is_hybrid: bool | None = None


class Platform(EventBase):
    """`Automatically detected platform cuda.` / `cpu`, GPU name and compute capability where printed."""

    type: Literal["platform"] = "platform"
    platform: str | None = None  # cuda, rocm, cpu, tpu, xpu, ...
    gpu_name: str | None = None
    compute_capability: str | None = None
    message: str | None = None


# --- speculative decoding and throughput ----------------------------------------------------------


class SpecDecodeStats(EventBase):
    """One speculative-decoding report, normalised across vLLM V0/V1 formats and SGLang `accept len`.

    `interval` is True for per-interval counters (vLLM V1, SGLang), False for cumulative ones (vLLM V0)."""

    type: Literal["spec_decode_stats"] = "spec_decode_stats"
    format: SpecDecodeFormat
    interval: bool = True
    mean_acceptance_length: float | None = None  # includes the bonus token
    acceptance_rate: float | None = None  # 0..1: accepted / drafted
    per_position_acceptance: list[float] | None = None
    num_speculative_tokens: int | None = None
    accepted_tokens: int | None = None
    drafted_tokens: int | None = None
    emitted_tokens: int | None = None
    num_drafts: int | None = None
    accepted_throughput: float | None = None
    drafted_throughput: float | None = None
    system_efficiency: float | None = None
    extra: dict[str, float | int | str] = field(default_factory=dict)  # fields of a reworded line no label maps


class SchedulerStats(EventBase):
    """A periodic throughput/scheduler line: vLLM V0/V1 stats, SGLang `Decode batch` / `Prefill batch`."""

    type: Literal["scheduler_stats"] = "scheduler_stats"
    format: StatsFormat
    engine_index: int | None = None
    prompt_throughput: float | None = None
    generation_throughput: float | None = None
    running: int | None = None
    waiting: int | None = None
    swapped: int | None = None
    deferred: int | None = None
    preemptions: int | None = None
    kv_cache_usage: float | None = None  # 0..1
    cpu_kv_cache_usage: float | None = None  # 0..1
    prefix_cache_hit_rate: float | None = None  # 0..1
    cuda_graph: bool | None = None  # SGLang decode lines
    num_tokens: int | None = None  # SGLang `#token`
    new_tokens: int | None = None  # SGLang prefill `#new-token`
    cached_tokens: int | None = None  # SGLang prefill `#cached-token`
    queue: int | None = None  # SGLang `#queue-req`
    extra: dict[str, float | int | str] = field(default_factory=dict)


# --- communication ----------------------------------------------------------------------------


class CustomAllReduce(EventBase):
    """vLLM/SGLang custom all-reduce status: disabled and why, or positive evidence it is in use."""

    type: Literal["custom_allreduce"] = "custom_allreduce"
    enabled: bool
    reason: AllReduceReason | None = None
    message: str | None = None


class AllReduceBackends(EventBase):
    """vLLM 0.25+: `Using ['CUSTOM', 'PYNCCL'] all-reduce backends (in dispatch order) for group 'tp:0' ...`."""

    type: Literal["allreduce_backends"] = "allreduce_backends"
    backends: list[str]
    group: str | None = None
    candidates: list[str] = field(default_factory=list)


class P2PCheck(EventBase):
    """P2P capability checks: vLLM's P2P cache, `Two processes do not agree`, `nvidia-smi topo -p2p` results."""

    type: Literal["p2p_check"] = "p2p_check"
    supported: bool | None = None
    message: str


class NcclVersion(EventBase):
    type: Literal["nccl_version"] = "nccl_version"
    version: str
    cuda: str | None = None


class NcclTransport(EventBase):
    """`Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM` (and `via SHM/direct/direct`, `via NET/Socket/0`, ...)."""

    type: Literal["nccl_transport"] = "nccl_transport"
    channel: int | None = None
    src_rank: int | None = None
    dst_rank: int | None = None
    src_device: int | None = None
    dst_device: int | None = None
    transport: str  # "P2P", "SHM", "NET", "NVLS", "COLLNET", ...
    detail: str  # the full transport text: "P2P/CUMEM/read", "SHM/direct/direct", "NET/IB/0/GDRDMA"


class NcclEnv(EventBase):
    """`NCCL_P2P_DISABLE set by environment to 1`, and similar environment echoes."""

    type: Literal["nccl_env"] = "nccl_env"
    name: str
    value: str


class NcclInfo(EventBase):
    """Other NCCL facts worth keeping: `Using network Socket`, `P2P is disabled`, comm init summary, WARNs."""

    type: Literal["nccl_info"] = "nccl_info"
    kind: NcclInfoKind
    message: str
    values: dict[str, str | int | float | bool] = field(default_factory=dict)


# --- backends, memory, graphs, kernels --------------------------------------------------------


class AttentionBackend(EventBase):
    """The attention backend chosen (`Using FLASH_ATTN attention backend out of ...`), or a fallback reason."""

    type: Literal["attention_backend"] = "attention_backend"
    backend: str | None = None  # normalised upper-case name: FLASH_ATTN, FLASHINFER, TRITON_ATTN, XFORMERS, ...
    role: Literal["target", "drafter", "encoder", "prefill", "decode", "unknown"] = "unknown"
    candidates: list[str] = field(default_factory=list)
    forced: bool = False  # the user chose it (env var / --attention-backend)
    fallback_reason: str | None = None  # set when this line explains why a faster backend was not used
    version: str | None = None  # FlashAttention version where printed: "2", "3", "4"
    message: str | None = None


class KVCache(EventBase):
    """KV-cache capacity lines: `GPU KV cache size: 123,456 tokens`, `# GPU blocks: N`, `Maximum concurrency ...`,
    `Available KV cache memory: X GiB`, SGLang `max_total_num_tokens=N`, `KV Cache is allocated. #tokens: N`."""

    type: Literal["kv_cache"] = "kv_cache"
    gpu_blocks: int | None = None
    cpu_blocks: int | None = None
    kv_tokens: int | None = None
    max_concurrency: float | None = None
    tokens_per_request: int | None = None
    available_memory_gib: float | None = None
    kv_cache_memory_gib: float | None = None
    block_size: int | None = None
    free_memory_gib: float | None = None  # GPU memory left free once the pool is sized (SGLang available_gpu_mem)
    connector: str | None = None  # disaggregated prefill: the KV-transfer connector in use ("nixl", "mooncake", ...)
    transfer_backend: str | None = None  # the connector's transport where printed (NIXL's "UCX")
    # KV-transfer metrics (vLLM `KV Transfer metrics: Label=value, ...`), by normalised label:
    # `Avg xfer time (ms)` -> avg_xfer_time_ms; units as printed in the label.
    transfer: dict[str, float | int | str] = field(default_factory=dict)
    message: str | None = None


class HybridModel(EventBase):
    """Mamba / linear-attention hybrid layout notices (block-size alignment, page padding, cache mode)."""

    type: Literal["hybrid_model"] = "hybrid_model"
    kind: HybridKind
    attention_block_size: int | None = None
    padding_percent: float | None = None
    mamba_cache_mode: str | None = None
    prefix_caching: bool | None = None
    message: str


class CudaGraph(EventBase):
    """CUDA-graph capture and eager-mode evidence for the target or the drafter."""

    type: Literal["cuda_graph"] = "cuda_graph"
    kind: Literal[
        "capture_started",
        "capture_finished",
        "capture_progress",
        "eager_mode",
        "mode_downgrade",
        "capture_skipped",
        "capture_capped",
        "drafter_eager",
        "capture_failed",
        "capture_sizes",
        "memory_profile",  # vLLM 0.18+ CUDA-graph memory estimate / profiling notices
    ]
    role: Literal["target", "drafter", "encoder", "unknown"] = "unknown"
    seconds: float | None = None
    memory_gib: float | None = None
    mode_from: str | None = None
    mode_to: str | None = None
    mode: str | None = None  # the runtime mode a capture bar names: `Capturing CUDA graphs (decode, FULL)` -> FULL
    max_batch_size: int | None = None
    batch_sizes: list[int] | None = None
    message: str


class CompileTime(EventBase):
    """torch.compile / Dynamo / engine-init durations and compile-cache hits."""

    type: Literal["compile_time"] = "compile_time"
    kind: CompileKind
    seconds: float | None = None
    memory_gib: float | None = None
    cache_hit: bool | None = None
    message: str


class Quantization(EventBase):
    """Quantization method and the GEMM/MoE kernel chosen, and fallbacks to slower kernels."""

    type: Literal["quantization"] = "quantization"
    method: str | None = None  # fp8, awq, awq_marlin, gptq, gptq_marlin, compressed-tensors, ...
    kernel: str | None = None  # Marlin, Machete, CUTLASS, ...
    fallback: bool = False
    message: str


class Preemption(EventBase):
    """A preemption or retraction: vLLM V0 `Sequence group N is preempted by PreemptionMode.RECOMPUTE ...`,
    SGLang `KV cache pool is full. Retract requests.`"""

    type: Literal["preemption"] = "preemption"
    mode: str | None = None  # RECOMPUTE, SWAP, retract
    cumulative: int | None = None
    count: int | None = None
    message: str


class EngineFailure(EventBase):
    """The engine crashed, hung or lost a worker."""

    type: Literal["engine_failure"] = "engine_failure"
    kind: FailureKind
    connector: str | None = None  # kv-transfer: the KV connector, "nixl", "mooncake", "moriio", ... where known
    requests: int | None = None  # requests the failure affected, where printed
    exception: str | None = None  # the exception's type as printed (`torch.OutOfMemoryError`), for an exception
    phase: FailurePhase | None = None  # where the run was (logdoctor.parse.failures), where read
    message: str


class SchedulerConfig(EventBase):
    """Runtime notices about batching: chunked prefill size, async scheduling, max_num_scheduled_tokens."""

    type: Literal["scheduler_config"] = "scheduler_config"
    kind: SchedulerConfigKind
    enabled: bool | None = None
    value: int | None = None
    message: str


class Offload(EventBase):
    """Weights or KV cache in host memory: `cpu_offload_gb`, swap space, CPU KV cache, MoE experts on the CPU."""

    type: Literal["offload"] = "offload"
    kind: OffloadKind
    gib: float | None = None
    message: str


class PerfWarning(EventBase):
    """A performance warning the engine printed that has no more specific event (kept with its text)."""

    type: Literal["perf_warning"] = "perf_warning"
    topic: WarningTopic
    message: str


class EngineWarning(EventBase):
    """A WARNING / ERROR line that no line type understood, read by the warning vocabulary
    (logdoctor/parse/warning_vocabulary.py, docs/warnings.md): the cause its words point to, or none."""

    type: Literal["engine_warning"] = "engine_warning"
    cause: str | None = None  # a cause id (CAUSES.md), or None: not understood
    performance: str | None = None  # the performance word, as the engine wrote it ("falling back")
    subsystem: str | None = None  # the subsystem word ("cuda graph", from the message or the logger's file)
    subsystem_from: Literal["message", "logger"] | None = None
    strength: float = 0.0  # 0.5 .. 1.0 when a cause fits
    logger: str | None = None  # the file of the logger call (`fused_moe.py`)
    message: str


# --- user-pasted benchmark results and host facts ---------------------------------------------


class BenchmarkResult(EventBase):
    """One result a user pasted beside the log: a row of the story's concurrency table
    (`C | Agg tok/s | Per-req tok/s | TTFT(s) | Tokens | Wall(s) | Ok | Fail`), or a `vllm bench serve` /
    `sglang.bench_serving` result block."""

    type: Literal["benchmark_result"] = "benchmark_result"
    tool: str  # "concurrency-table", "vllm-bench-serve", "sglang-bench-serving", "sglang-bench-one-batch"
    concurrency: float | None = None
    output_throughput: float | None = None  # aggregate generated tok/s
    per_request_throughput: float | None = None  # decode tok/s per request
    total_throughput: float | None = None
    request_throughput: float | None = None
    mean_ttft_ms: float | None = None
    median_ttft_ms: float | None = None
    mean_tpot_ms: float | None = None
    median_tpot_ms: float | None = None
    mean_itl_ms: float | None = None
    mean_e2e_ms: float | None = None
    completed: int | None = None
    failed: int | None = None
    acceptance_length: float | None = None
    request_rate: float | None = None  # requests/s the client offered; None for `inf` (all at once) or unknown
    model: str | None = None  # the model the benchmark asked for (`model_id`, SGLang's `server_info.model_path`)
    backend: str | None = None  # the client backend: "vllm", "openai-chat", "sglang", ...
    values: dict[str, float | int | str] = field(default_factory=dict)


class GpuInfo(EventBase):
    """A GPU as `nvidia-smi --query-gpu` (or another listing) reports it."""

    type: Literal["gpu_info"] = "gpu_info"
    index: int | None = None
    name: str
    memory_mib: int | None = None
    driver: str | None = None
    bus_id: str | None = None
    # `nvidia-smi -q`: the PCIe link (the current generation drops at idle, so the maximum is kept too),
    # persistence mode and the SM clock (current and maximum, MHz)
    pcie_generation: int | None = None
    pcie_generation_max: int | None = None
    pcie_width: int | None = None
    pcie_width_max: int | None = None
    persistence_mode: bool | None = None
    sm_clock_mhz: int | None = None
    sm_clock_max_mhz: int | None = None
    # the GPU's state when the snapshot was taken (`nvidia-smi -q` or `--query-gpu` CSV): how busy it was, its
    # power limit against the default, the clock event (throttle) reasons active (`power-cap`, `hw-slowdown`,
    # `hw-thermal`, `sw-thermal`, `power-brake`, `idle`, `app-clocks`, `sync-boost`, `display`) and its health
    pstate: str | None = None
    utilization_pct: int | None = None
    memory_used_mib: int | None = None
    temperature_c: int | None = None
    power_draw_w: float | None = None
    power_limit_w: float | None = None
    power_default_limit_w: float | None = None
    power_max_limit_w: float | None = None
    clock_events: list[str] | None = None
    # `Clocks Event Reasons Counters` (driver 535+): time spent in thermal slowdown or power braking since the
    # driver loaded, seconds (SW Thermal Slowdown + HW Thermal Slowdown + HW Power Braking)
    slowdown_s: float | None = None
    ecc_uncorrected: int | None = None  # volatile (since the driver loaded) uncorrectable ECC errors
    remap_pending: bool | None = None  # a row remap or page retirement waits for a GPU reset
    remap_failed: bool | None = None
    recovery_action: str | None = None  # `GPU Recovery Action` other than None: Reset, Reboot, Drain ...


class GpuXid(EventBase):
    """A kernel log's `NVRM: Xid (PCI:0000:3b:00): 79, pid=..., GPU has fallen off the bus.` line."""

    type: Literal["gpu_xid"] = "gpu_xid"
    code: int | None = None  # None for `GPU has fallen off the bus` printed without an Xid
    bus_id: str | None = None
    message: str


class GpuDiag(EventBase):
    """A failed test of `dcgmi diag` (DCGM's diagnostics table: `| PCIe | Fail - GPU: 3 |`)."""

    type: Literal["gpu_diag"] = "gpu_diag"
    test: str
    result: str  # "Fail"
    gpus: list[int] = field(default_factory=list)
    message: str


class GpuProcess(EventBase):
    """A compute process on a GPU (`nvidia-smi --query-compute-apps`, the Processes table of `nvidia-smi -q`)."""

    type: Literal["gpu_process"] = "gpu_process"
    pid: int | None = None
    name: str
    bus_id: str | None = None  # the GPU's PCI bus id, or its index as a string when only that is known
    memory_mib: int | None = None


class GpuTopology(EventBase):
    """`nvidia-smi topo -m`: the link between each pair of GPUs (NV#, PIX, PXB, PHB, NODE, SYS)."""

    type: Literal["gpu_topology"] = "gpu_topology"
    links: dict[str, str]  # "0-1" -> "NV18"
    gpus: int


class GpuP2P(EventBase):
    """`nvidia-smi topo -p2p r`: P2P read capability between each pair (OK, CNS, GNS, TNS, NS, U)."""

    type: Literal["gpu_p2p"] = "gpu_p2p"
    mode: str  # "r", "w", "rw", "n", "a"
    status: dict[str, str]  # "0-1" -> "OK"


class HostInfo(EventBase):
    """Other host facts a collector or an environment dump records: container kind, driver, versions
    (`kind="version"`: torch, vllm, sglang, cuda-runtime ...), installed packages (`kind="package"`, from
    `[pip3] nvidia-nccl-cu12==2.21.5`), environment variables (`kind="env"`, `NCCL_P2P_DISABLE=1`)."""

    type: Literal["host_info"] = "host_info"
    kind: HostInfoKind
    name: str
    value: str


Event = (
    EngineVersion
    | StartupConfig
    | ModelInfo
    | Platform
    | SpecDecodeStats
    | SchedulerStats
    | CustomAllReduce
    | AllReduceBackends
    | P2PCheck
    | NcclVersion
    | NcclTransport
    | NcclEnv
    | NcclInfo
    | AttentionBackend
    | KVCache
    | HybridModel
    | CudaGraph
    | CompileTime
    | Quantization
    | Preemption
    | EngineFailure
    | SchedulerConfig
    | Offload
    | PerfWarning
    | EngineWarning
    | BenchmarkResult
    | GpuInfo
    | GpuXid
    | GpuDiag
    | GpuProcess
    | GpuTopology
    | GpuP2P
    | HostInfo
)

EVENT_TYPES: tuple[type[EventBase], ...] = (
    EngineVersion,
    StartupConfig,
    ModelInfo,
    Platform,
    SpecDecodeStats,
    SchedulerStats,
    CustomAllReduce,
    AllReduceBackends,
    P2PCheck,
    NcclVersion,
    NcclTransport,
    NcclEnv,
    NcclInfo,
    AttentionBackend,
    KVCache,
    HybridModel,
    CudaGraph,
    CompileTime,
    Quantization,
    Preemption,
    EngineFailure,
    SchedulerConfig,
    Offload,
    PerfWarning,
    EngineWarning,
    BenchmarkResult,
    GpuInfo,
    GpuXid,
    GpuDiag,
    GpuProcess,
    GpuTopology,
    GpuP2P,
    HostInfo,
)
