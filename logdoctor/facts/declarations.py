"""Every fact a rule may read: its kind, what it means, and how to get the lines it needs when it is missing.

    "parallel.tp": FactSpec("number", "tensor-parallel size", _CONFIG_HINT)

The rule loader rejects a name that is not declared here, and a test checks that some combiner
(logdoctor/facts/combiners/) produces each one. `baseline.<name>` reads the baseline deployment's fact
in `logdoctor diff` (see `with_baseline`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

FactKind = Literal["number", "bool", "str", "series", "list"]


@dataclass(frozen=True)
class FactSpec:
    kind: FactKind
    description: str
    hint: str = ""  # how to get the lines this fact needs, shown for insufficient data


_STATS_HINT = (
    "vLLM prints its throughput/KV line every 10 s unless started with --disable-log-stats; "
    "SGLang prints `Decode batch` lines every --decode-log-interval decode steps"
)
_SPEC_HINT = (
    "vLLM prints `SpecDecoding metrics` with the stats line (not with --disable-log-stats); "
    "SGLang prints `accept len` on Decode batch lines"
)
_CONFIG_HINT = (
    "include the startup block of the log (vLLM `non-default args` / engine-init line, SGLang `server_args=`)"
)
_MODEL_CONFIG_HINT = "give the model's config.json beside the log: logdoctor diagnose server.log config.json"
_NCCL_HINT = "run with NCCL_DEBUG=INFO and include the NCCL init lines (Channel ... via ...)"
_NCCL_TESTS_HINT = "include the nccl-tests results table (its rows of 32 MiB and more)"
_TOPO_HINT = "include `nvidia-smi topo -m` output (logdoctor diagnose HOST collects it)"
_ENV_HINT = "include `vllm collect-env` (or `python -m sglang.check_env`) output beside the log"
_SMI_HINT = "include `nvidia-smi -q` output beside the log"
_STATE_HINT = (
    "include `nvidia-smi -q` (or `nvidia-smi --query-gpu=index,name,utilization.gpu,clocks.sm,clocks.max.sm,"
    "clocks_event_reasons.active,power.draw,power.limit,power.default_limit,pcie.link.gen.current,pcie.link.gen.max,"
    "pcie.link.width.current,pcie.link.width.max --format=csv`) taken while the server is under load; "
    "logdoctor diagnose HOST collects it"
)
_XID_HINT = "include the kernel log's NVRM lines (`journalctl -k | grep NVRM`, or `dmesg`) and `nvidia-smi -q`"
_APPS_HINT = (
    "include `nvidia-smi --query-compute-apps=pid,process_name,gpu_bus_id,used_gpu_memory --format=csv` "
    "taken while the server runs"
)

# The model's shape from its config.json given beside the log (logdoctor/inputs/modelconfig).
_MODEL_SHAPE_FACTS: tuple[tuple[str, FactKind, str], ...] = (
    ("model.layers", "number", "decoder layers (num_hidden_layers)"),
    ("model.hidden_size", "number", "hidden size"),
    ("model.vocab_size", "number", "vocabulary size"),
    ("model.tied_embeddings", "bool", "input embedding and LM head are one matrix (tie_word_embeddings)"),
    ("model.kv_heads", "number", "key/value heads (num_key_value_heads)"),
    ("model.head_dim", "number", "attention head dimension"),
    ("model.experts", "number", "routed experts per MoE layer"),
    ("model.experts_active", "number", "routed experts a token reads (num_experts_per_tok)"),
    ("model.mtp_layers", "number", "MTP modules the checkpoint ships (num_nextn_predict_layers)"),
    ("model.vision_tower", "bool", "the config has a vision tower (vision_config)"),
    ("model.params", "number", "parameters of the text model, from the config's shape"),
    ("model.read_params", "number", "parameters one decode step reads for one token (active experts, LM head)"),
    ("model.config_architecture", "str", "architecture class named by the config.json"),
    ("model.config_source", "str", "where the model's config.json was read"),
    ("spec.draft_layers", "number", "the drafter's decoder layers (its config.json)"),
    ("spec.draft_params", "number", "the drafter's own parameters, without the target's embedding and LM head"),
    ("spec.draft_block_size", "number", "DFlash: tokens the drafter drafts in one pass (block_size)"),
    ("spec.draft_config_architecture", "str", "architecture class named by the drafter's config.json"),
)

FACTS: dict[str, FactSpec] = {
    # identity
    "engine": FactSpec("str", "serving engine: vllm, sglang, or nccl for a bare NCCL log"),
    "engine.version": FactSpec("str", "engine version as printed, or a range inferred from the header shape"),
    "model": FactSpec("str", "served model", _CONFIG_HINT),
    "nccl.version": FactSpec("str", "NCCL version the processes loaded (`NCCL version 2.21.5+cuda12.4`)", _NCCL_HINT),
    "model.weights_gib": FactSpec(
        "number", "weights in GPU memory per GPU, GiB (`Model loading took X GiB`, SGLang `mem usage=X GB`)"
    ),
    "model.architecture": FactSpec(
        "str", "the target's architecture class (vLLM `Resolved architecture: Qwen3_5ForConditionalGeneration`)"
    ),
    "spec.draft_architecture": FactSpec(
        "str",
        "the drafter's architecture class (a second `Resolved architecture`: Qwen3_5MTP, DFlashLagunaForCausalLM)",
    ),
    "model.dtype": FactSpec("str", "model weights dtype: bfloat16, float16, ...", _CONFIG_HINT),
    "model.runner": FactSpec(
        "str",
        "what the server runs the model for: generate (decode steps) or pooling (embeddings, classification, reward "
        "scores: one forward pass a request, no decode steps); vLLM `runner`/`task`, SGLang `is_embedding`",
        _CONFIG_HINT,
    ),
    # the model's shape from its config.json given beside the log (logdoctor/inputs/modelconfig)
    **{name: FactSpec(kind, what, _MODEL_CONFIG_HINT) for name, kind, what in _MODEL_SHAPE_FACTS},
    "model.max_len": FactSpec("number", "maximum model length (context) in tokens", _CONFIG_HINT),
    "parallel.tp": FactSpec("number", "tensor-parallel size", _CONFIG_HINT),
    "parallel.pp": FactSpec("number", "pipeline-parallel size", _CONFIG_HINT),
    "parallel.dp": FactSpec("number", "data-parallel size", _CONFIG_HINT),
    "parallel.nodes": FactSpec("number", "number of nodes the deployment spans", _CONFIG_HINT),
    "platform": FactSpec("str", "device platform the engine detected: cuda, rocm, cpu, ..."),
    "gpu.name": FactSpec("str", "GPU model", _TOPO_HINT),
    "gpu.count": FactSpec("number", "GPUs listed on the host", _TOPO_HINT),
    "host.container": FactSpec("str", "container the engine runs in: lxc, docker, none"),
    "gpu.memory_gib": FactSpec("number", "memory of the first GPU listed, GiB (nvidia-smi total)", _SMI_HINT),
    "gpu.pcie_generation": FactSpec("number", "PCIe generation of the slowest GPU link (its maximum)", _SMI_HINT),
    "gpu.pcie_width": FactSpec("number", "PCIe lanes of the narrowest GPU link now (nvidia-smi -q)", _SMI_HINT),
    "gpu.pcie_width_max": FactSpec("number", "PCIe lanes the narrowest GPU link can train to", _SMI_HINT),
    "gpu.persistence_mode": FactSpec("bool", "persistence mode is on for every GPU listed", _SMI_HINT),
    # the GPUs' state when the snapshot was taken (logdoctor/facts/combiners/gpustate.py)
    "gpu.busy": FactSpec(
        "bool",
        "a GPU listed was busy in the snapshot (utilisation 50% or more; without one, drawing 80% of its power limit)",
        _STATE_HINT,
    ),
    "gpu.utilization": FactSpec("number", "highest GPU utilisation in the snapshot, %", _STATE_HINT),
    "gpu.sm_clock_ratio": FactSpec("number", "lowest SM clock / maximum SM clock over the busy GPUs", _STATE_HINT),
    "gpu.sm_clock": FactSpec("str", "that GPU's SM clock against its maximum, as text", _STATE_HINT),
    "gpu.clock_events": FactSpec(
        "list",
        "clock event (throttle) reasons active on the busy GPUs: power-cap, hw-slowdown, hw-thermal, sw-thermal, "
        "power-brake, sync-boost, app-clocks, display",
        _STATE_HINT,
    ),
    "gpu.power_limit_ratio": FactSpec(
        "number", "lowest power limit / default power limit over the GPUs (1 at the default)", _STATE_HINT
    ),
    "gpu.power_at_limit": FactSpec(
        "bool", "a busy GPU draws 95% of its power limit or more: the power controller holds it there", _STATE_HINT
    ),
    "gpu.power_limit": FactSpec("str", "that GPU's power limit, default and draw, as text", _STATE_HINT),
    "gpu.temperature": FactSpec("number", "highest GPU temperature, C", _STATE_HINT),
    "gpu.slowdown_s": FactSpec(
        "number",
        "most time one GPU spent in thermal slowdown or power braking since the driver loaded, s "
        "(nvidia-smi -q Clocks Event Reasons Counters)",
        _SMI_HINT,
    ),
    "gpu.pcie_link_degraded": FactSpec(
        "bool",
        "a GPU's PCIe link runs below its maximum width, or below its maximum generation while busy",
        _STATE_HINT,
    ),
    "gpu.pcie_link": FactSpec("str", "the slowest GPU link against its maximum, as text", _STATE_HINT),
    "gpu.pcie_link_ratio": FactSpec(
        "number", "the slowest GPU link's bandwidth / its maximum (an idle link counted at its maximum generation)"
    ),
    "gpu.pcie_link_generation": FactSpec(
        "number", "the slowest GPU link's generation as measured (its maximum when the GPU was idle)", _STATE_HINT
    ),
    "gpu.pcie_link_width": FactSpec("number", "the slowest GPU link's lanes as measured", _STATE_HINT),
    "gpu.pcie_link_checked": FactSpec(
        "bool",
        "every GPU link was read where it shows its maximum (busy, or idle and not trained down)",
        "an idle GPU trains its PCIe link down to save power: take `nvidia-smi -q` (or the --query-gpu CSV with "
        "pcie.link.gen.current) while the server is under load",
    ),
    "gpu.pcie_idle_downtrained": FactSpec(
        "bool", "an idle GPU's link runs below its maximum generation (normal power saving)", _STATE_HINT
    ),
    "gpu.hardware_errors": FactSpec(
        "list", "hardware faults: Xid lines, uncorrectable ECC, pending or failed remaps, recovery actions", _XID_HINT
    ),
    "gpu.hardware_error_count": FactSpec(
        "number", "hardware faults found (0 when a health reading was read)", _XID_HINT
    ),
    "gpu.other_processes": FactSpec(
        "number",
        "compute processes holding 1 GiB or more on one GPU, beyond the first (the most on any GPU)",
        _APPS_HINT,
    ),
    "gpu.processes": FactSpec("list", "compute processes on the GPUs, as text", _APPS_HINT),
    "host.cpu_governor": FactSpec(
        "list", "the CPU frequency governors in use, each with its CPU count (cpufreq; none in most VMs)"
    ),
    "host.server_placement": FactSpec(
        "list", "each server process's allowed CPUs and NUMA memory nodes (/proc/PID/status), from the collector"
    ),
    "gpu.memory_held_gib": FactSpec(
        "number", "GPU memory already in use when the engine started (vLLM's free-memory check), GiB"
    ),
    "host.driver": FactSpec("str", "NVIDIA driver version", _ENV_HINT),
    "host.cuda": FactSpec("str", "CUDA version the driver supports (nvidia-smi)", _SMI_HINT),
    "host.cuda_runtime": FactSpec("str", "CUDA runtime / toolkit version (collect_env, nvcc)", _ENV_HINT),
    "host.torch": FactSpec("str", "PyTorch version installed", _ENV_HINT),
    "host.nccl": FactSpec("str", "NCCL version installed (the nvidia-nccl package)", _ENV_HINT),
    "host.vllm": FactSpec("str", "vLLM version installed (an environment dump, not the log)", _ENV_HINT),
    "host.sglang": FactSpec("str", "SGLang version installed (an environment dump, not the log)", _ENV_HINT),
    "host.env": FactSpec("list", "NAME=value of each environment variable an environment dump lists", _ENV_HINT),
    # speculative decoding
    "spec.enabled": FactSpec("bool", "speculative decoding configured or observed", _CONFIG_HINT),
    "spec.method": FactSpec(
        "str", "speculative method: mtp, eagle, eagle3, dflash, ngram, draft_model, ...", _CONFIG_HINT
    ),
    "spec.num_tokens": FactSpec("number", "speculative tokens per step (k)", _CONFIG_HINT),
    "spec.draft_model": FactSpec("str", "draft model path", _CONFIG_HINT),
    "spec.acceptance_length": FactSpec(
        "series", "mean acceptance length per interval, counting the bonus token", _SPEC_HINT
    ),
    "spec.acceptance_rate": FactSpec("series", "draft acceptance rate per interval, 0..1", _SPEC_HINT),
    "spec.position_acceptance": FactSpec(
        "list", "acceptance rate per draft position (mean over intervals)", _SPEC_HINT
    ),
    "spec.draft_weights_missing": FactSpec("bool", "the drafter's weights were not loaded (DFlash buffer skipped)"),
    "spec.synthetic_acceptance": FactSpec("bool", "rejection_sample_method='synthetic': acceptance numbers are fake"),
    "spec.v0_fallback": FactSpec("bool", "vLLM fell back to the V0 engine for speculative decoding"),
    # CUDA graphs
    "cuda_graphs.enabled": FactSpec("bool", "target decode replays CUDA graphs", _CONFIG_HINT),
    "cuda_graphs.mode": FactSpec("str", "cudagraph mode: FULL_AND_PIECEWISE, PIECEWISE, NONE, ..."),
    "cuda_graphs.max_batch": FactSpec("number", "largest captured batch size"),
    "cuda_graphs.drafter": FactSpec("bool", "the drafter replays CUDA graphs (False: runs eagerly)"),
    "cuda_graphs.eager_share": FactSpec(
        "number", "share of decode batches that ran without CUDA graphs (SGLang)", _STATS_HINT
    ),
    "cuda_graphs.downgraded": FactSpec("bool", "the engine downgraded the cudagraph mode at startup"),
    # attention
    "attention.backend": FactSpec("str", "attention backend of the target model"),
    "attention.drafter_backend": FactSpec("str", "attention backend of the drafter"),
    "attention.fallback_reason": FactSpec("str", "why a faster attention backend was not used"),
    "attention.forced": FactSpec("bool", "the user forced the attention backend"),
    "attention.stale_env": FactSpec("bool", "VLLM_ATTENTION_BACKEND is set but ignored by this version"),
    # communication
    "allreduce.custom": FactSpec("bool", "the engine's custom all-reduce kernel is in use"),
    "allreduce.reason": FactSpec("str", "why custom all-reduce is off: no-p2p, pcie-more-than-two, user, ..."),
    "nccl.transport": FactSpec("str", "slowest NCCL transport between GPUs of one host: P2P, SHM or NET", _NCCL_HINT),
    "nccl.p2p_channels": FactSpec("number", "NCCL channels connected via P2P", _NCCL_HINT),
    "nccl.shm_channels": FactSpec("number", "NCCL channels connected via SHM", _NCCL_HINT),
    "nccl.net_channels": FactSpec("number", "NCCL channels connected via NET", _NCCL_HINT),
    "nccl.p2p_disabled_env": FactSpec("bool", "NCCL_P2P_DISABLE=1 (or NCCL_P2P_LEVEL=LOC) in the environment"),
    "nccl.hosts": FactSpec("number", "distinct hosts in the NCCL lines", _NCCL_HINT),
    "nccl.test_busbw": FactSpec(
        "number", "nccl-tests: the slowest run's best bus bandwidth at 32 MiB or more, GB/s", _NCCL_TESTS_HINT
    ),
    "nccl.test_busbw_ratio": FactSpec(
        "number", "nccl-tests: the slowest run's large-message bus bandwidth / the fastest run's", _NCCL_TESTS_HINT
    ),
    "nccl.test_slow_run_p2p_off": FactSpec(
        "bool", "nccl-tests: the slowest run was started with P2P off (setting, SHM transport), the fastest was not"
    ),
    "nccl.test_rows_complete": FactSpec(
        "bool", "nccl-tests: the last run's last row is the last size its parameters (-b/-e/-f) sweep"
    ),
    "nccl.test_hosts": FactSpec("number", "nccl-tests: distinct hosts in the runs' rank lines"),
    "topology.pcie_only": FactSpec("bool", "GPUs are linked only through PCIe (no NVLink)", _TOPO_HINT),
    "topology.p2p_supported": FactSpec("bool", "nvidia-smi reports P2P between every GPU pair", _TOPO_HINT),
    "topology.nvlink_links": FactSpec(
        "number", "the fewest NVLinks between two GPUs of the topology (NV# of nvidia-smi topo -m)", _TOPO_HINT
    ),
    "comm.backend": FactSpec(
        "str", "the collective backend the engine fell back to when NCCL was not available (gloo)"
    ),
    "disagg.connector": FactSpec("str", "the KV connector of disaggregated prefill (nixl, mooncake, lmcache, ...)"),
    "disagg.transfer_failures": FactSpec("number", "KV transfers between prefill and decode instances that failed"),
    "disagg.failed_requests": FactSpec("number", "requests failed because their KV could not be loaded"),
    "disagg.transfer_retries": FactSpec("number", "KV loads recovered by rescheduling, and bootstrap queries retried"),
    "topology.spans_nodes": FactSpec("bool", "tensor-parallel workers run on more than one node"),
    # KV cache and scheduler
    "kv.tokens": FactSpec("number", "KV cache capacity in tokens"),
    "kv.max_concurrency": FactSpec("number", "requests of max_model_len that fit in the KV cache"),
    "kv.memory_gib": FactSpec("number", "KV cache memory per GPU, GiB (`Available KV cache memory: X GiB`)"),
    "kv.usage": FactSpec("series", "KV cache usage per interval, 0..1", _STATS_HINT),
    "kv.cpu_usage": FactSpec("series", "CPU (swap) KV cache usage per interval, 0..1", _STATS_HINT),
    "sched.running": FactSpec("series", "running requests per interval", _STATS_HINT),
    "sched.waiting": FactSpec("series", "waiting (queued) requests per interval", _STATS_HINT),
    "sched.swapped": FactSpec("series", "swapped requests per interval (vLLM V0)", _STATS_HINT),
    "sched.preemptions": FactSpec("number", "preemptions and retractions counted in the log"),
    "sched.waiting_at_cap_share": FactSpec(
        "number",
        "share of stats intervals in which requests wait while the running count is at the scheduler's cap "
        "(sched.max_num_seqs): the intervals the cap, not memory or load, held requests back",
    ),
    "sched.queue_share": FactSpec(
        "number",
        "in stats intervals with requests waiting: waiting / (running + waiting), the median; the most that admitting "
        "the queue could add to the running batch",
        _STATS_HINT,
    ),
    "sched.queue_draining": FactSpec(
        "bool",
        "in every stats interval with requests waiting prompt throughput exceeds generation throughput, and the queue"
        " falls while the running batch grows from one such interval to the next: a burst admitted at the prefill rate",
        _STATS_HINT,
    ),
    "spec.typical_acceptance": FactSpec(
        "number",
        "the mean acceptance length a working drafter of this method reaches at this k (published figures, "
        "logdoctor/facts/speculation.py)",
    ),
    "sched.max_num_seqs": FactSpec(
        "number", "max concurrent requests (max_num_seqs / max_running_requests)", _CONFIG_HINT
    ),
    "sched.max_batched_tokens": FactSpec(
        "number", "token budget per step (max_num_batched_tokens / chunked_prefill_size)", _CONFIG_HINT
    ),
    "sched.spec_token_budget_warning": FactSpec("bool", "vLLM capped max_num_scheduled_tokens for draft slots"),
    "sched.prefix_caching": FactSpec("bool", "prefix caching enabled"),
    "memory.fraction": FactSpec("number", "gpu_memory_utilization / mem_fraction_static", _CONFIG_HINT),
    # throughput
    "throughput.generation": FactSpec("series", "generation tok/s per interval, warm-up excluded", _STATS_HINT),
    "throughput.batch": FactSpec(
        "series", "running requests of each interval of throughput.generation, in its order (0: none left)", _STATS_HINT
    ),
    "throughput.per_request": FactSpec(
        "series", "decode tok/s per request in intervals with one running request", _STATS_HINT
    ),
    "throughput.with_spec": FactSpec(
        "series", "generation tok/s of processes that ran speculative decoding", _STATS_HINT
    ),
    "throughput.without_spec": FactSpec(
        "series", "generation tok/s of processes in the same input that ran without speculation"
    ),
    "throughput.intervals": FactSpec("number", "stats intervals seen (before warm-up exclusion)", _STATS_HINT),
    "throughput.prompt_ratio": FactSpec(
        "number", "prompt tokens prefilled per generated token over the stats intervals (vLLM)", _STATS_HINT
    ),
    "throughput.first_interval_ratio": FactSpec(
        "number", "first interval's generation tok/s divided by the steady-state median", _STATS_HINT
    ),
    "bench.per_request": FactSpec("series", "per-request decode tok/s from pasted benchmark results"),
    "bench.output_throughput": FactSpec("series", "aggregate output tok/s from pasted benchmark results"),
    "bench.concurrency": FactSpec("series", "concurrency of each pasted benchmark row"),
    "bench.failed_share": FactSpec(
        "number",
        "the largest share of a pasted benchmark's requests that failed, where the client printed both its successful "
        "and its failed requests (`vllm bench serve`'s `Failed requests:`, a table's Ok / Fail columns)",
    ),
    "bench.ttft_tail": FactSpec(
        "number", "a pasted serving benchmark's P99 time to first token over its median (the longest such tail)"
    ),
    "bench.ttft_tail_share": FactSpec(
        "number",
        "the share of that benchmark's requests its TTFT tail holds, (mean - median) / (P99 - median), over the share "
        "one wave of its concurrency is (concurrency / requests): at most about 1 when only the first wave was slow",
    ),
    "bench.warmup_slowdown": FactSpec(
        "number",
        "a benchmark's warm-up pass against its measured pass: the warm-up's first decode step over the measured "
        "median step (sglang.bench_one_batch, whose `Benchmark ...` line ends the warm-up)",
    ),
    # hybrid models
    "hybrid.is_hybrid": FactSpec("bool", "mamba / linear-attention hybrid model"),
    "hybrid.attention_block_size": FactSpec("number", "attention block size forced by mamba page alignment"),
    "hybrid.mamba_padding": FactSpec("number", "percent the mamba page was padded"),
    "hybrid.mamba_cache_mode": FactSpec("str", "mamba cache mode: none, align, all"),
    "hybrid.prefix_caching_disabled": FactSpec("bool", "prefix caching was disabled because of the hybrid layout"),
    "hybrid.padding_waste": FactSpec("number", "percent of KV memory padding layers may waste"),
    "hybrid.cudagraph_capped": FactSpec("bool", "CUDA-graph capture sizes capped to fit mamba cache blocks"),
    # compile / warm-up
    "compile.torch_seconds": FactSpec("number", "torch.compile time"),
    "compile.init_seconds": FactSpec("number", "engine init time (profile, KV cache, warm-up)"),
    "compile.graph_capture_seconds": FactSpec("number", "CUDA-graph capture time"),
    "compile.disabled": FactSpec("bool", "torch.compile turned off (eager or TORCH_COMPILE_DISABLE)"),
    "compile.cache_hit": FactSpec("bool", "compiled graphs loaded from cache"),
    "compile.kernel_builds": FactSpec(
        "number", "kernels JIT-compiled as the process ran (triton-ascend's `Please DO NOT tune args` lines)"
    ),
    "compile.shm_waits": FactSpec("number", "`No available shared memory broadcast block` waits"),
    "compile.startup_wait_seconds": FactSpec(
        "number", "seconds the engine core waited on its workers before serving (shared-memory broadcast waits)"
    ),
    "stall.serving_waits": FactSpec(
        "number",
        "`No available shared memory broadcast block` waits after serving started, or in an excerpt that shows no"
        " start (a stuck worker)",
        _STATS_HINT,
    ),
    "compile.phase_seconds": FactSpec("number", "wall-clock time between the first and last compile/warm-up line"),
    "compile.startup_seconds": FactSpec(
        "number",
        "longest of torch.compile, engine init, graph capture, the compile phase's wall-clock time and the start-up waits",
    ),
    # quantization
    "quant.method": FactSpec("str", "quantization method"),
    "quant.kernel": FactSpec("str", "GEMM / MoE kernel chosen"),
    "quant.fallback": FactSpec("bool", "a slower quantization kernel was chosen"),
    "quant.fallback_reason": FactSpec("str", "the engine's words on the slower kernel"),
    "model.moe": FactSpec("bool", "the engine chose kernels for routed experts (a MoE backend line): a MoE model"),
    "quant.default_kernel_config": FactSpec("bool", "default (untuned) MoE or block-FP8 kernel config used"),
    # offload
    "offload.cpu_gb": FactSpec("number", "weights offloaded to CPU memory, GiB"),
    "offload.swap_gb": FactSpec("number", "KV swap space, GiB (vLLM V0)"),
    "offload.kv": FactSpec("bool", "KV cache offloaded to host memory"),
    "offload.cpu_experts": FactSpec(
        "bool", "MoE experts held in host memory and computed on the CPU (SGLang's KTransformers / kt-kernel experts)"
    ),
    # failures and warnings
    "failure.kinds": FactSpec("list", "engine failures seen: engine-dead, cuda-oom, nccl-timeout, ..."),
    "failure.count": FactSpec("number", "engine failure events"),
    "failure.reported_hang": FactSpec("bool", "the paste's prose says the run hangs (no failure line shows it)"),
    "warnings.topics": FactSpec("list", "performance warnings the engine printed, by topic"),
    "async_scheduling.enabled": FactSpec("bool", "vLLM async scheduling on"),
    # --- derived facts (logdoctor/facts/combiners/derived.py) ---
    "failure.shutdown_only": FactSpec(
        "bool", "every failure line is the teardown of a stopped engine (after a shutdown began, or no root cause)"
    ),
    "failure.core_exit_unexplained": FactSpec(
        "bool",
        "an engine core process exited after serving with no error of its own logged (vLLM's client: `Engine core "
        "proc ... died unexpectedly`, no root cause before it)",
    ),
    "failure.shutdown_stalled": FactSpec(
        "bool", "the log ends on uvicorn waiting, during a stop, for in-flight requests that never finished"
    ),
    "attention.model_required": FactSpec(
        "bool", "the attention backend is the one the model or GPU needs (only candidate, or chosen for the model)"
    ),
    "kv.free_request_slots": FactSpec(
        "number", "while requests wait: how many more average running requests the free KV cache holds", _STATS_HINT
    ),
    "startup.incomplete": FactSpec("bool", "the log ends during startup: no ready, serving or failure line"),
    "nccl.test_unfinished": FactSpec(
        "bool",
        "an nccl-tests run started (its parameter line) and no summary, failure line or row of its last size follows",
    ),
    "platform.gpu_signals": FactSpec(
        "number", "on a CPU/undetected platform: kinds of line showing a GPU was meant (GPU listing, NCCL, ...)"
    ),
    "cuda_graphs.suggested_max_batch": FactSpec(
        "number", "SGLang: the largest running batch seen, rounded up to the graph capture step of 8", _STATS_HINT
    ),
    "spec.best_k": FactSpec(
        "number", "speculative tokens with the best tokens/step over step cost (0: none)", _SPEC_HINT
    ),
    "spec.best_k_speedup": FactSpec("number", "decode speed-up over plain decode at spec.best_k", _SPEC_HINT),
    "spec.step_cost": FactSpec(
        "number",
        "one speculative step at the configured k in plain decode steps: verification plus the drafter's passes "
        "(logdoctor/facts/speculation.py, without hardware)",
        _SPEC_HINT,
    ),
    "spec.break_even": FactSpec(
        "number",
        "the acceptance length at which speculation at the configured k is as fast as plain decode: spec.step_cost "
        "plus the per-step overhead of the drafted tokens (logdoctor/facts/speculation.py, break_even)",
        _SPEC_HINT,
    ),
    "spec.verify_cost": FactSpec(
        "number", "cost of verifying k+1 tokens a request over 1 at the median batch (1 below the ridge point)"
    ),
    "spec.acceptance_is_root": FactSpec(
        "bool",
        "whether the low acceptance is what makes speculation lose: a drafter at the method's published acceptance "
        "would break even at this k (spec.typical_acceptance >= spec.break_even), or almost no drafted token is "
        "accepted (under 15% of the first drafted token where per-position acceptance is known, else of all); false "
        "where a working drafter would still lose here",
        _SPEC_HINT,
    ),
}


# The warning vocabulary's causes (logdoctor/parse/warning_vocabulary.py, docs/warnings.md): a warning no line type
# understood whose words name a performance problem and a subsystem. `warned.<name>` is the strongest such warning
# in the engine's words; each cause's `engine-warned` rule reads it.
WARNED_FACTS: dict[str, str] = {
    "cuda-graphs-disabled": "cuda_graphs",
    "custom-allreduce-disabled": "custom_allreduce",
    "nccl-no-p2p": "p2p",
    "mamba-hybrid-issue": "hybrid",
    "spec-net-loss": "spec",
    "cpu-offload-or-swap": "offload",
    "kv-cache-pressure": "kv",
    "torch-compile-or-warmup": "compile",
    "quantization-kernel-fallback": "quant",
    "attention-backend-fallback": "attention",
    "chunked-prefill-or-batching-config": "batching",
    "tp-over-slow-link": "link",
    "no-gpu-backend": "platform",
}
_WARNED_HINT = "the engine's WARNING lines (keep the log from the server's start, at the default log level)"
for _cause, _name in WARNED_FACTS.items():
    FACTS[f"warned.{_name}"] = FactSpec(
        "str", f"an engine warning no line type understood, about {_cause} ('vLLM warned: ...')", _WARNED_HINT
    )
    FACTS[f"warned.{_name}.strength"] = FactSpec(
        "number",
        "how plainly that warning says so: 1 for a strong performance word and the subsystem in the message, "
        "0.75 or 0.5 for a weaker word or the subsystem only in the logger's file name",
        _WARNED_HINT,
    )
FACTS["warnings.not_understood"] = FactSpec(
    "list", "WARNING / ERROR lines that no line type and no word of the warning vocabulary understood"
)

# `baseline.spec.acceptance_length` in a rule reads the baseline deployment's `spec.acceptance_length`.
BASELINE_PREFIX = "baseline."


def fact_spec(name: str) -> FactSpec | None:
    """The declaration of a fact name, `baseline.`-prefixed names included."""
    return FACTS.get(name.removeprefix(BASELINE_PREFIX))
